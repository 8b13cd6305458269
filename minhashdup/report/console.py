"""Text made safe for rich markup, for the tables drawn with rich."""

from __future__ import annotations

from rich.markup import escape

from minhashdup.report.terminal import printable


def markup(text: str) -> str:
    """:func:`printable`, then escaped for rich markup: ``[bold]x[/bold].go`` prints as is.

    Example:
        >>> markup("[bold]x[/bold]\\x1b.go")
        '\\\\[bold]x\\\\[/bold]\\\\x1b.go'
    """
    return escape(printable(text))
