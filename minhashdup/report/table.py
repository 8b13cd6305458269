"""The table for people: verified pairs (rich), then clusters and a summary of the scan."""

from __future__ import annotations

from typing import TextIO

from rich.table import Table

from minhashdup.report.console import make_console, markup, on_terminal
from minhashdup.report.notices import partial_listing
from minhashdup.report.terminal import printable
from minhashdup.result import Result


def render_table(result: Result, stream: TextIO) -> None:
    """Pairs sorted by similarity then path, the clusters, and the scan summary."""
    console = make_console(stream, highlight=False, soft_wrap=False, width=_width(result, stream))
    if result.pairs:
        console.print(_pairs_table(result))
    else:
        console.print(f"No pairs at Jaccard >= {result.params['threshold']:g}.")
    if result.clusters:
        console.print(_clusters_table(result))
    console.print(_summary(result), soft_wrap=True)  # one line each, whatever the table's width


def _width(result: Result, stream: TextIO) -> int | None:
    """Terminal width on a terminal; elsewhere wide enough that paths never wrap."""
    if on_terminal(stream):
        return None
    longest = max((len(printable(path)) for p in result.pairs for path in (p.a, p.b)), default=30)
    return max(100, 2 * longest + 70)  # the other columns, padding and borders take up to 63


def _pairs_table(result: Result) -> Table:
    table = Table(title=f"Near-duplicate pairs (Jaccard >= {result.params['threshold']:g})", title_justify="left")
    table.add_column("jaccard", justify="right", style="bold")
    table.add_column("estimate", justify="right")
    table.add_column("file a", overflow="fold")
    table.add_column("file b", overflow="fold")
    table.add_column("common", justify="right")
    table.add_column("shingles a/b", justify="right")
    baselined = bool(result.params.get("baseline"))
    if baselined:
        table.add_column("baseline")
    for p in result.pairs:
        row = [f"{p.jaccard:.3f}", f"{p.estimate:.3f}", markup(p.a), markup(p.b), str(p.common)]
        row.append(f"{p.shingles_a}/{p.shingles_b}")
        table.add_row(*row, *(["known" if p.known else "new"] if baselined else []))
    return table


def _clusters_table(result: Result) -> Table:
    table = Table(title="Clusters (families joined by pairs)", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("files", justify="right")
    table.add_column("jaccard", justify="right")
    table.add_column("members", overflow="fold")
    for number, c in enumerate(result.clusters, 1):
        shown = list(c.files[:5]) + ([f"... and {len(c.files) - 5} more"] if len(c.files) > 5 else [])
        table.add_row(
            str(number),
            str(len(c.files)),
            f"{c.jaccard_min:.2f}-{c.jaccard_max:.2f}",
            "\n".join(markup(f) for f in shown),
        )
    return table


def _summary(result: Result) -> str:
    s = result.stats
    params = result.params
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(s.skipped.items())) or "none"
    stages = ", ".join(f"{k} {v:.2f}" for k, v in s.seconds.items() if k != "total")
    lines = [
        f"files: {s.files_scanned} scanned, {s.files_compared} compared "
        f"({s.distinct_sets} distinct, {s.identical_groups} identical groups)",
        f"skipped: {markup(skipped)}",
        f"{_mode(params)}, candidates: {s.candidates}, verified pairs: {s.verified_pairs}, clusters: {s.clusters}",
        _found_by(result),
        f"seconds: {stages} (total {s.seconds.get('total', 0.0):.2f})"
        + (f"; cache: {s.cache['hits']} files reused, {s.cache['lexed']} read afresh" if s.cache else ""),
    ]
    partial = partial_listing(result)
    return "\n".join(lines + ([partial] if partial else []) + _review_lines(result))


def _found_by(result: Result) -> str:
    """Which stage found the verified pairs: identical sets, the candidates' exact check, and
    family completion (with the checks each cost)."""
    s = result.stats
    identical = s.verified_pairs - s.candidate_pairs - s.completion_pairs
    line = f"pairs found: {identical} identical, {s.candidate_pairs} from the {s.candidates} candidates"
    if not result.params.get("completion"):
        return line + ("" if result.params.get("exact") else "; family completion off")
    return (
        line + f", {s.completion_pairs} by family completion "
        f"({s.completion_checks} checks in {s.completion_rounds} rounds)"
    )


def _review_lines(result: Result) -> list[str]:
    """What --baseline and the changed-file options did, when given."""
    s, out = result.stats, []
    if s.changes:
        out.append(
            f"changed files: {s.changes['files']}; pairs not touching them: {s.changes['pairs_left_out']} left out"
        )
    if "recorded" in s.baseline:
        b = s.baseline
        out.append(
            f"baseline: {s.new_pairs} new, {b['known']} known; recorded pairs risen past the tolerance"
            f" {b['risen']}, gone {b['gone']}, dropped {b['dropped']}"
        )
    return out


def _mode(params: dict[str, object]) -> str:
    if params.get("exact"):
        return "mode: exact (prefix filter, no pair missed)"
    bits = "" if params.get("bits", 64) == 64 else f", {params['bits']}-bit values"
    return f"bands x rows: {params['bands']} x {params['rows']}{bits}"
