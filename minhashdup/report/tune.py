"""``minhashdup tune``: the (bands, rows) table and the S-curve drawn in the terminal."""

from __future__ import annotations

import json
from typing import Any, TextIO

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from minhashdup.analysis.tuning import COMPLETION_NOTE, Tuning
from minhashdup.core.bands import TUNE_SIMILARITIES, Choice
from minhashdup.report.console import make_console, on_terminal

PLOT_WIDTH, PLOT_HEIGHT = 61, 16
DEFAULT = (12, 4)  # scan's --bands and --rows


def render_tune_json(found: Tuning, stream: TextIO) -> None:
    """:meth:`Tuning.to_dict`: ``{threshold, max_hashes, min_recall, bits, choices, recommended,
    most_selective, completion}``."""
    json.dump(found.to_dict(), stream, indent=2)
    stream.write("\n")


def render_tune_table(found: Tuning, stream: TextIO) -> None:
    """The settings table, the recommendation, and both curves on one plot."""
    console = make_console(stream, highlight=False, width=None if on_terminal(stream) else 150)
    best, selective, settings = found.recommended, found.most_selective, found.settings
    t = settings["threshold"]
    console.print(_settings_table(found.choices, best, selective, settings))
    console.print(
        "cand/true: expected candidates per true pair if similarities were spread evenly; "
        "`minhashdup evaluate` measures the real figure on a tree."
    )
    if best is None:
        console.print(
            f"No setting within {settings['max_hashes']} hashes reaches P({t:g}) >= "
            f"{settings['min_recall']:g}; raise --max-hashes or use scan --exact."
        )
        return
    console.print(
        f"Recommended (recall first, fewest hashes): --bands {best.bands} --rows {best.rows} "
        f"(P({t:g}) = {best.p(t):.3f}, {best.hashes} hashes)"
    )
    if selective and selective != best:
        console.print(
            f"Fewest candidates with that recall: --bands {selective.bands} --rows {selective.rows} "
            f"({selective.hashes} hashes, {selective.candidates_per_true_pair:.2f} candidates per true pair)"
        )
    curves = [(best, "●", "green")] + ([(selective, "○", "cyan")] if selective and selective != best else [])
    console.print(
        Panel(plot(curves, t), title="P(s): chance that a pair of similarity s becomes a candidate", expand=False)
    )
    console.print(COMPLETION_NOTE)


def _settings_table(
    choices: list[Choice], best: Choice | None, selective: Choice | None, settings: dict[str, Any]
) -> Table:
    """One row per setting: its figures at the threshold and at the other similarities, marked."""
    t = settings["threshold"]
    table = Table(
        title=f"LSH settings for threshold {t:g} (at most {settings['max_hashes']} hashes)", title_justify="left"
    )
    others = [s for s in TUNE_SIMILARITIES if abs(s - t) > 1e-9]
    for name in ("bands", "rows", "hashes", "knee", f"P({t:g})", "lost", "cand/true"):
        table.add_column(name, justify="right", no_wrap=True)
    for s in others:
        table.add_column(f"P({s:.1f})", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for c in choices:
        marks = {
            "recommended": c == best,
            "most selective": c == selective,
            "scan default": (c.bands, c.rows) == DEFAULT,
        }
        table.add_row(
            str(c.bands),
            str(c.rows),
            str(c.hashes),
            f"{c.knee:.3f}",
            f"{c.p(t):.3f}",
            f"{c.lost_at_threshold:.1%}",
            f"{c.candidates_per_true_pair:.2f}",
            *(f"{c.p(s):.3f}" for s in others),
            ", ".join(name for name, hit in marks.items() if hit),
            style="bold green" if c == best else ("cyan" if c == selective else None),
        )
    return table


def plot(curves: list[tuple[Choice, str, str]], threshold: float) -> Group:
    """S-curves on a character grid: x = similarity 0..1, y = P 0..1, the threshold marked."""
    grid = [[(" ", "")] * PLOT_WIDTH for _ in range(PLOT_HEIGHT)]
    col_t = round(threshold * (PLOT_WIDTH - 1))
    for row in range(PLOT_HEIGHT):
        grid[row][col_t] = ("│", "yellow")
    for choice, mark, style in curves:
        for col in range(PLOT_WIDTH):
            p = choice.p(col / (PLOT_WIDTH - 1))
            grid[PLOT_HEIGHT - 1 - round(p * (PLOT_HEIGHT - 1))][col] = (mark, style)
    lines = []
    for row, cells in enumerate(grid):
        label = {0: "1.0 ", PLOT_HEIGHT // 2: "0.5 ", PLOT_HEIGHT - 1: "0.0 "}.get(row, "    ")
        line = Text(label + "┤")
        for char, style in cells:
            line.append(char, style=style or None)
        lines.append(line)
    axis = "    └" + "─" * PLOT_WIDTH
    ticks = "     0" + " " * (PLOT_WIDTH // 2 - 3) + "0.5" + " " * (PLOT_WIDTH - PLOT_WIDTH // 2 - 3) + "1"
    legend = Text("     ")
    for choice, mark, style in curves:
        legend.append(f"{mark} {choice.bands} x {choice.rows}   ", style=style)
    legend.append(f"│ threshold {threshold:g}", style="yellow")
    return Group(*lines, Text(axis), Text(ticks), legend)
