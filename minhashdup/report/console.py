"""The rich console that every table is drawn with, and text made safe for its markup."""

from __future__ import annotations

from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape

from minhashdup.report.terminal import printable


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # rich's own handler exits 1, the code of a failed gate; let the CLI decide instead.
        raise BrokenPipeError


def make_console(stream: TextIO, **options: Any) -> Console:
    """A rich ``Console`` writing to ``stream`` (``options`` as for ``Console``).

    A closed pipe (``| head``) raises ``BrokenPipeError`` to the caller, as any other
    write would, instead of rich's ``SystemExit(1)``.
    """
    return _Console(file=stream, **options)


def on_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal: tables then take its width, else a fixed one."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def markup(text: str) -> str:
    """:func:`printable`, then escaped for rich markup: ``[bold]x[/bold].go`` prints as is.

    Example:
        >>> markup("[bold]x[/bold]\\x1b.go")
        '\\\\[bold]x\\\\[/bold]\\\\x1b.go'
    """
    return escape(printable(text))
