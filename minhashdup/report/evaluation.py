"""``minhashdup evaluate``: measured recall per similarity bin beside the S-curve."""

from __future__ import annotations

import json
from typing import TextIO

from rich.console import Console
from rich.table import Table

from minhashdup.evaluate import Evaluation


def render_evaluation_json(ev: Evaluation, stream: TextIO) -> None:
    """``{params, candidates, all_pairs, bins: [{low, high, pairs, found, recall, predicted}], seconds}``."""
    json.dump(ev.to_dict(), stream, indent=2)
    stream.write("\n")


def render_evaluation_table(ev: Evaluation, stream: TextIO) -> None:
    """One row per bin, then the sentence that sums it up."""
    console = Console(file=stream, highlight=False, width=None if _isatty(stream) else 120)
    p = ev.params
    setting = f"{p['bands']} x {p['rows']}" + ("" if p["bits"] == 64 else f" ({p['bits']}-bit)")
    table = Table(title=f"LSH {setting} against the exact all-pairs", title_justify="left")
    repeats = p.get("repeats", 1)
    names = ["similarity", "true pairs", "found", "recall", "predicted P(s)", "difference"]
    if repeats > 1:
        names += [f"mean of {repeats} seeds", "min-max"]
    for name in names:
        table.add_column(name, justify="right")
    for b in ev.bins:
        recall = "-" if b.recall is None else f"{b.recall:.3f}"
        predicted = "-" if b.predicted is None else f"{b.predicted:.3f}"
        diff = "-" if b.recall is None or b.predicted is None else f"{100 * (b.recall - b.predicted):+.1f} pts"
        row = [f"{b.low:.1f}-{b.high:.1f}", str(b.pairs), str(b.found), recall, predicted, diff]
        if repeats > 1:
            every = (b.recall, *b.other_seeds) if b.recall is not None else ()
            row += [f"{b.recall_mean:.3f}", f"{min(every):.3f}-{max(every):.3f}"] if every else ["-", "-"]
        table.add_row(*row)
    console.print(table)
    pairs, found = ev.at_least(p["threshold"])
    console.print(
        f"{found} of the {pairs} pairs of similarity {p['threshold']:g} and up were found by {setting} "
        f"in {ev.candidates} candidates (of {ev.all_pairs} pairs of distinct files)."
    )
    console.print(
        f"seconds, lexing excluded: LSH candidates + exact check {ev.seconds['lsh']:.2f}, "
        f"exact all-pairs from {p['low']:g} {ev.seconds['exact']:.2f}"
    )


def _isatty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
