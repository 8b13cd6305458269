"""``minhashdup evaluate``: measured recall per similarity bin beside the S-curve."""

from __future__ import annotations

import json
from typing import TextIO

from rich.table import Table

from minhashdup.analysis.evaluate import Evaluation, repeat_seeds
from minhashdup.report.console import make_console, on_terminal


def render_evaluation_json(ev: Evaluation, stream: TextIO) -> None:
    """``{params, candidates, all_pairs, bins: [{low, high, pairs, found, recall, predicted}], seconds}``."""
    json.dump(ev.to_dict(), stream, indent=2)
    stream.write("\n")


def render_evaluation_table(ev: Evaluation, stream: TextIO) -> None:
    """One row per bin, then the sentence that sums it up."""
    console = make_console(stream, highlight=False, width=None if on_terminal(stream) else 120)
    p = ev.params
    setting = f"{p['bands']} x {p['rows']}" + ("" if p["bits"] == 64 else f" ({p['bits']}-bit)")
    table = Table(title=f"LSH {setting} against the exact all-pairs", title_justify="left")
    repeats = p.get("repeats", 1)
    if repeats > 1:
        names = ["similarity", "true pairs", f"found (seed {p['seed']})", f"recall ({repeats} seeds)"]
        names += [f"seed {p['seed']}", "min-max", "predicted P(s)", "difference"]
    else:
        names = ["similarity", "true pairs", "found", "recall", "predicted P(s)", "difference"]
    for name in names:
        table.add_column(name, justify="right")
    for b in ev.bins:
        predicted = "-" if b.predicted is None else f"{b.predicted:.3f}"
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
        table.add_row(*row, predicted, diff)
    console.print(table)
    pairs, found = ev.at_least(p["threshold"])
    console.print(
        f"{found} of the {pairs} pairs of similarity {p['threshold']:g} and up were found by {setting} "
        f"in {ev.candidates} candidates (of {ev.all_pairs} pairs of distinct files)."
    )
    if repeats > 1:
        last = repeat_seeds(p["seed"], repeats)[-1]
        wrapped = ", modulo 2**64" if last < p["seed"] else ""
        console.print(
            f"recall is the mean over seeds {p['seed']}..{last}{wrapped} (\u00b1 its standard error); "
            "one seed's recall strays further from P(s) because similar files win or lose together."
        )
    console.print(
        f"seconds, lexing excluded: LSH candidates + exact check {ev.seconds['lsh']:.2f}, "
        f"exact all-pairs from {p['low']:g} {ev.seconds['exact']:.2f}, other seeds {ev.seconds['repeats']:.2f}"
    )
