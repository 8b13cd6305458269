"""``minhashdup evaluate``: measured recall per similarity bin beside the S-curve."""

from __future__ import annotations

import json
from typing import Any, TextIO

from rich.table import Table

from minhashdup.analysis.evaluate import Bin, Evaluation, repeat_seeds
from minhashdup.report.console import make_console, on_terminal


def render_evaluation_json(ev: Evaluation, stream: TextIO) -> None:
    """``{params, candidates, completion_checks, all_pairs, bins: [{low, high, pairs, found, recall,
    predicted, completed, recall_completed, ...}], seconds}``."""
    json.dump(ev.to_dict(), stream, indent=2)
    stream.write("\n")


def render_evaluation_table(ev: Evaluation, stream: TextIO) -> None:
    """One row per bin, then the sentences that sum it up."""
    console = make_console(stream, highlight=False, width=None if on_terminal(stream) else 150)
    p = ev.params
    setting = f"{p['bands']} x {p['rows']}" + ("" if p["bits"] == 64 else f" ({p['bits']}-bit)")
    table = Table(title=f"LSH {setting} against the exact all-pairs", title_justify="left")
    repeats = p.get("repeats", 1)
    completing = ev.completes
    for name in _columns(p, repeats, completing):
        table.add_column(name, justify="right")
    for b in ev.bins:
        table.add_row(*_row(b, repeats, completing))
    console.print(table)
    for line in _summary(ev, setting, repeats):
        console.print(line)


def _columns(p: dict[str, Any], repeats: int, completing: bool) -> list[str]:
    if repeats > 1:
        names = ["similarity", "true pairs", f"found (seed {p['seed']})", f"recall ({repeats} seeds)"]
        names += [f"seed {p['seed']}", "min-max"]
    else:
        names = ["similarity", "true pairs", "found", "recall"]
    names += ["predicted P(s)", "difference"]
    if completing:  # recall of LSH and completion together: what a scan finds
        names += ["+ completion"] + ([f"+ completion, seed {p['seed']}"] if repeats > 1 else [])
    return names


def _row(b: Bin, repeats: int, completing: bool) -> list[str]:
    predicted = three_places(b.predicted)
    diff = "-" if b.recall is None or b.predicted is None else f"{100 * (b.recall - b.predicted):+.1f} pts"
    if b.recall is None:
        recall = "-"
    elif b.recall_se is None:
        recall = f"{b.recall:.3f}"
    else:
        recall = f"{b.recall:.3f} \u00b1 {b.recall_se:.3f}"
    row = [f"{b.low:.1f}-{b.high:.1f}", str(b.pairs), str(b.found), recall]
    if repeats > 1:
        r = b.recalls
        row += [f"{b.recall_seed:.3f}", f"{r.min():.3f}-{r.max():.3f}"] if len(r) else ["-", "-"]
    row += [predicted, diff]
    if completing:
        row.append(three_places(b.recall_completed))
        row += [three_places(b.recall_completed_seed)] if repeats > 1 else []
    return row


def three_places(x: float | None) -> str:
    """A share or similarity as the reports show it: three decimals, ``-`` for none."""
    return "-" if x is None else f"{x:.3f}"


def _summary(ev: Evaluation, setting: str, repeats: int) -> list[str]:
    p = ev.params
    pairs, found = ev.at_least(p["threshold"])
    lines = [
        f"{found} of the {pairs} pairs of similarity {p['threshold']:g} and up were found by {setting} "
        f"in {ev.candidates} candidates (of {ev.all_pairs} pairs of distinct files)."
    ]
    completed = ev.completed_at_least(p["threshold"])
    if completed is not None:
        lines.append(
            f"With family completion, {completed} were found, for {ev.completion_checks} more exact checks: "
            "LSH's misses sit in families whose other members it found (+ completion: recall of LSH and "
            "completion together; a scan reports those at or above the threshold)."
        )
    if repeats > 1:
        last = repeat_seeds(p["seed"], repeats)[-1]
        wrapped = ", modulo 2**64" if last < p["seed"] else ""
        lines.append(
            f"recall is the mean over seeds {p['seed']}..{last}{wrapped} (\u00b1 its standard error); "
            "one seed's recall strays further from P(s) because similar files win or lose together."
        )
    stages = "LSH candidates + exact check" + (" + completion" if completed is not None else "")
    lines.append(
        f"seconds, lexing excluded: {stages} {ev.seconds['lsh']:.2f}, "
        f"exact all-pairs from {ev.exact_from:g} {ev.seconds['exact']:.2f}, other seeds {ev.seconds['repeats']:.2f}"
    )
    return lines
