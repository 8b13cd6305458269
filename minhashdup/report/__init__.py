"""Renderers of a :class:`~minhashdup.result.Result`: each writes one format to a text stream.

Renderer modules are imported when first used: the rich-based table costs import time that
a warm ``--format json`` run does not need to pay.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TextIO

from minhashdup.result import Result

Renderer = Callable[[Result, TextIO], None]

_RENDERERS: dict[str, tuple[str, str]] = {
    "table": ("minhashdup.report.table", "render_table"),
    "json": ("minhashdup.report.data", "render_json"),
    "jsonl": ("minhashdup.report.data", "render_jsonl"),
    "csv": ("minhashdup.report.data", "render_csv"),
}

FORMATS = tuple(_RENDERERS)


def renderer(fmt: str) -> Renderer:
    """The function that writes format ``fmt`` (one of :data:`FORMATS`)."""
    module, name = _RENDERERS[fmt]
    found: Renderer = getattr(importlib.import_module(module), name)
    return found


def render(result: Result, fmt: str, stream: TextIO) -> None:
    """Write ``result`` to ``stream`` in format ``fmt`` (one of :data:`FORMATS`)."""
    renderer(fmt)(result, stream)
