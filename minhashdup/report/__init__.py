"""Renderers of a :class:`~minhashdup.result.Result`: each writes one format to a text stream."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from minhashdup.report.data import render_csv, render_json, render_jsonl
from minhashdup.report.table import render_table
from minhashdup.result import Result

Renderer = Callable[[Result, TextIO], None]

RENDERERS: dict[str, Renderer] = {
    "table": render_table,
    "json": render_json,
    "jsonl": render_jsonl,
    "csv": render_csv,
}

FORMATS = tuple(RENDERERS)


def render(result: Result, fmt: str, stream: TextIO) -> None:
    """Write ``result`` to ``stream`` in format ``fmt`` (one of :data:`FORMATS`)."""
    RENDERERS[fmt](result, stream)
