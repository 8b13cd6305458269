"""The table for people: verified pairs by family (rich), what the limit left out, and a summary of
the scan."""

from __future__ import annotations

import os
from typing import NamedTuple, TextIO

from rich.table import Table
from rich.text import Text

from minhashdup.report import TABLE_LIMIT
from minhashdup.report.console import make_console, markup, on_terminal
from minhashdup.report.families import Family, Listing, Row, Side, listing
from minhashdup.report.notices import partial_listing
from minhashdup.report.terminal import printable
from minhashdup.result import Result


def render_table(result: Result, stream: TextIO, limit: int = TABLE_LIMIT, relative_to: str | None = None) -> None:
    """The pairs by family (at most ``limit`` rows, 0: all), a line on what is left out, and the
    scan summary.

    Args:
        limit: rows of the table, see :func:`~minhashdup.report.families.listing`.
        relative_to: show paths relative to this folder (the one PATH scanned; ``"."`` the
            current folder); ``None`` shows them as the result has them.
    """
    found = listing(result, limit, relative_to)
    lines = _lines(found, bool(result.params.get("baseline")))
    where = "" if relative_to is None else "; paths relative to " + _folder(relative_to)
    title = Text(
        printable(f"Near-duplicate pairs (Jaccard >= {result.params['threshold']:g}) by family, largest first{where}"),
        style="bold",
    )
    console = make_console(stream, highlight=False, soft_wrap=False, width=_width(lines, stream))
    if result.pairs:
        console.print(title, soft_wrap=True)  # one line: a table's title wraps at the table's width
        console.print(_pairs_table(result, lines))
    else:
        console.print(f"No pairs at Jaccard >= {result.params['threshold']:g}.")
    if found.hidden_rows:
        console.print(_left_out(found), soft_wrap=True)
    console.print(_summary(result), soft_wrap=True)  # one line each, whatever the table's width


class _Line(NamedTuple):
    cells: list[Text]
    heading: bool  # a family's first line
    ruled: bool  # a rule below it


def _lines(found: Listing, baselined: bool) -> list[_Line]:
    """The table's lines: each family shown, a heading first when it has several rows, ruled
    off from its neighbours (a family of one row needs no heading and no rule)."""
    shown = [f for f in found.families if f.shown]
    out = []
    for number, family in enumerate(shown):
        headed = len(family.rows) > 1
        after = shown[number + 1] if number + 1 < len(shown) else None
        if headed:
            out.append(_Line([*_heading(family), *[Text()] * (2 + baselined)], True, False))
        for index, row in enumerate(family.rows[: family.shown]):
            last = index == family.shown - 1
            cells = [_jaccard(row), _cell(row.a), _cell(row.b), Text(str(row.common)), Text(row.shingles)]
            ruled = last and (headed or (after is not None and len(after.rows) > 1))
            out.append(_Line(cells + ([Text(_known(row))] if baselined else []), False, ruled))
    return out


#: The narrowest ``COLUMNS`` honoured off a terminal.
MIN_COLUMNS = 60


def _width(lines: list[_Line], stream: TextIO) -> int | None:
    """The terminal's width (or ``COLUMNS``) on a terminal; elsewhere ``COLUMNS`` when set,
    else wide enough that paths never wrap."""
    if on_terminal(stream):
        return None
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) >= MIN_COLUMNS:  # fewer leave no room for a path: ignored
        return int(columns)
    a = max((line.cells[1].cell_len for line in lines), default=30)
    b = max((line.cells[2].cell_len for line in lines), default=30)
    return max(100, a + b + 60)  # the other columns, padding and borders take up to 57


def _jaccard(row: Row) -> Text:
    """A row's Jaccard, and with names or literals normalised its verbatim Jaccard after it."""
    text = Text(f"{row.jaccard:.3f}")
    if row.verbatim is not None:
        low, high = row.verbatim
        text.append(f" / {low:.3f}" if low == high else f" / {low:.2f}-{high:.2f}", style="not bold")
    return text


def _pairs_table(result: Result, lines: list[_Line]) -> Table:
    table = Table()
    table.add_column("jaccard / verbatim" if result.normalised else "jaccard", justify="right", style="bold")
    table.add_column("file a", overflow="fold")
    table.add_column("file b", overflow="fold")
    table.add_column("common", justify="right")
    table.add_column("shingles a/b", justify="right")
    if result.params.get("baseline"):
        table.add_column("baseline")
    for line in lines:
        table.add_row(*line.cells, style="bold" if line.heading else None, end_section=line.ruled)
    return table


def _heading(family: Family) -> list[Text]:
    """A family's first line: its Jaccard range, its size, the rows shown, a glob of its files."""
    c = family.cluster
    rows = f" (top {family.shown} of {len(family.rows)} rows)" if family.shown < len(family.rows) else ""
    return [
        Text(f"{c.jaccard_min:.2f}-{c.jaccard_max:.2f}"),
        Text(f"family of {len(c.files)} files, {family.pairs:,} pairs{rows}"),
        Text(printable(family.summary)),
    ]


def _cell(side: Side) -> Text:
    """A side of a row, its vendored mark dimmed."""
    text = Text(printable(side.text))
    if side.vendored:
        text.append(f" ({side.vendored})", style="dim")
    return text


def _known(row: Row) -> str:
    if row.new == row.listed:
        return "new"
    return "known" if not row.new else f"{row.new} new"


def _folder(path: str) -> str:
    if os.path.normpath(path) == ".":
        return "the current folder"
    return path if path.endswith(os.sep) else path + os.sep


def _left_out(found: Listing) -> str:
    """What the limit left out, and how to see it."""
    untouched = found.hidden_families
    families = f"; {untouched:,} of the {len(found.families):,} families not at all" if untouched else ""
    return (
        f"{_count(found.hidden_rows, 'more row')} not shown ({_count(found.hidden_pairs, 'pair')}{families}):"
        " --limit 0 shows every row; --format json or --format html lists every pair"
    )


def _count(number: int, thing: str) -> str:
    return f"{number:,} {thing}" + ("" if number == 1 else "s")


def _summary(result: Result) -> str:
    s = result.stats
    params = result.params
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(s.skipped.items())) or "none"
    stages = ", ".join(f"{k} {v:.2f}" for k, v in s.seconds.items() if k != "total")
    lines = [
        f"files: {s.files_scanned} scanned, {s.files_compared} compared "
        f"({s.distinct_sets} distinct, {s.identical_groups} identical groups)",
        f"skipped: {markup(skipped)}",
        f"{_mode(params)}, candidates: {s.candidates}, verified pairs: {s.verified_pairs}, clusters: {s.clusters}"
        + (f"; --max-df {params['max_df']:g} left out {s.shingles_dropped} shingles" if params.get("max_df") else ""),
        _found_by(result),
        f"seconds: {stages} (total {s.seconds.get('total', 0.0):.2f})"
        + (f"; cache: {s.cache['hits']} files reused, {_afresh(s.cache)} read afresh" if s.cache else ""),
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
        return "mode: exact (prefix filter, no pair missed)" + _shaping(params)
    bits = "" if params.get("bits", 64) == 64 else f", {params['bits']}-bit values"
    return f"bands x rows: {params['bands']} x {params['rows']}{bits}{_shaping(params)}"


def _shaping(params: dict[str, object]) -> str:
    """The tokens' placeholders, when there were any (the summary line adds --max-df's count)."""
    ignored = [name for name in ("identifiers", "literals") if params.get(f"ignore_{name}")]
    return f", {' and '.join(ignored)} as placeholders" if ignored else ""


def _afresh(cache: dict[str, int]) -> int:
    """Files not taken from the cache: those lexed and their byte-identical copies (lexed once)."""
    return cache["lexed"] + cache.get("copies", 0)
