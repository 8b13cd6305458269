"""Renderers of a :class:`~minhashdup.result.Result`: each writes one format to a text stream.

A renderer only writes: it reads no file, runs no program and starts no process. What SARIF
and HTML show beyond the result (shared runs, file texts, where the project is) is computed
before, by :mod:`minhashdup.analysis.regions`, and passed in as options.

Renderer modules are imported when first used: the rich-based table costs import time that
a warm ``--format json`` run does not need to pay.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TextIO

from minhashdup.result import Result

Renderer = Callable[..., None]

_RENDERERS: dict[str, tuple[str, str]] = {
    "table": ("minhashdup.report.table", "render_table"),
    "json": ("minhashdup.report.data", "render_json"),
    "jsonl": ("minhashdup.report.data", "render_jsonl"),
    "csv": ("minhashdup.report.data", "render_csv"),
    "sarif": ("minhashdup.report.sarif", "render_sarif"),
    "html": ("minhashdup.report.html", "render_html"),
}

FORMATS = tuple(_RENDERERS)

#: Rows of the table by default: with a family's heading rows, the rules between families,
#: the title and the summary, about 70 lines, one or two screens.
TABLE_LIMIT = 40
#: With a limit, a family (:mod:`.families`) shows at most this share of it (``limit // 8``, at least
#: :data:`FAMILY_ROWS_MIN`): the first screen shows several families, not one family's 100 rows.
FAMILY_SHARE = 8
FAMILY_ROWS_MIN = 3


def renderer(fmt: str) -> Renderer:
    """The function that writes format ``fmt`` (one of :data:`FORMATS`)."""
    module, name = _RENDERERS[fmt]
    found: Renderer = getattr(importlib.import_module(module), name)
    return found


def render(result: Result, fmt: str, stream: TextIO, **options: Any) -> None:
    """Write ``result`` to ``stream`` in format ``fmt`` (one of :data:`FORMATS`); ``options``
    go to that format's renderer (e.g. ``per="cluster"`` for SARIF). No renderer changes
    ``result``."""
    renderer(fmt)(result, stream, **options)
