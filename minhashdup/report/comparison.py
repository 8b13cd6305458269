"""``minhashdup compare``: the numbers, then the shared runs side by side, highlighted.

The files' texts are read before rendering (the renderer reads no file) and passed in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TextIO

from rich.columns import Columns
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from minhashdup.analysis.compare import Comparison, Run
from minhashdup.report.console import make_console, markup
from minhashdup.report.terminal import printable

SHOWN_RUNS = 3
CONTEXT_LINES = 2


def render_comparison_json(c: Comparison, stream: TextIO) -> None:
    """``{a, b, shingles_a, shingles_b, common, jaccard, estimate, stddev, runs, params}``."""
    json.dump(c.to_dict(), stream, indent=2, ensure_ascii=False)
    stream.write("\n")


def render_comparison_table(c: Comparison, stream: TextIO, texts: Mapping[str, str] | None = None) -> None:
    """Summary, the table of shared runs, and the longest runs side by side: those lines of
    ``texts[c.a]`` and ``texts[c.b]`` (read by the caller; without them, no side by side)."""
    console = make_console(stream, highlight=False)
    k = c.params["hashes"]
    console.print(f"[bold]{markup(c.a)}[/] ~ [bold]{markup(c.b)}[/]")
    console.print(
        f"shingles {c.shingles_a} / {c.shingles_b}, common {c.common}, exact Jaccard {c.jaccard:.3f}"
        + ("" if c.jaccard_verbatim is None else f" (verbatim {c.jaccard_verbatim:.3f})")
        + "; "
        f"MinHash estimate ({k} hashes) {c.estimate:.3f} (expected error +/- {c.stddev:.3f})"
    )
    if not c.runs:
        console.print("No shared run of tokens.")
        return
    table = Table(title="Shared token runs (longest first)", title_justify="left")
    table.add_column("tokens", justify="right")
    table.add_column("lines in a", justify="right")
    table.add_column("lines in b", justify="right")
    for run in c.runs:
        table.add_row(str(run.tokens), _span(run.a_lines), _span(run.b_lines))
    console.print(table)
    if not texts:
        return
    for run in c.runs[:SHOWN_RUNS]:
        panels = [_panel(c.a, texts[c.a], run.a_lines), _panel(c.b, texts[c.b], run.b_lines)]
        console.print(Columns(panels, equal=True, expand=True))


def _span(lines: tuple[int, int]) -> str:
    return f"{lines[0]}-{lines[1]}" if lines[0] != lines[1] else str(lines[0])


def _panel(path: str, source: str, lines: tuple[int, int]) -> Panel:
    text = printable(source, multiline=True)
    lexer = Syntax.guess_lexer(path, text)
    start, end = max(1, lines[0] - CONTEXT_LINES), lines[1] + CONTEXT_LINES
    syntax = Syntax(
        text,
        lexer,
        line_numbers=True,
        line_range=(start, end),
        highlight_lines=set(range(lines[0], lines[1] + 1)),
        word_wrap=True,
    )
    return Panel(syntax, title=f"{markup(path)}:{_span(lines)}", title_align="left")


__all__ = ["Run", "render_comparison_json", "render_comparison_table"]
