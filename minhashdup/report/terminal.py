"""Text from a scanned tree made safe to show to a person: the one place that decides how.

A file name is chosen by whoever wrote the repository. Printed raw, ``\\x1b[2J`` clears the
reader's screen, ``\\x1b[31m`` recolours what follows, a right-to-left override (U+202E)
shows ``exe.go`` as ``og.exe``, and a newline forges a line of output. Every human-facing
text that may hold such a name (tables, notices, warnings, error messages) goes through
:func:`printable`. Machine formats (JSON, JSON Lines, SARIF, HTML) keep exact names and
rely on their own escaping; CSV keeps them too, but for the quote that disarms a formula
(:func:`minhashdup.report.data.csv_cell`).
"""

from __future__ import annotations

import functools
import re

# Characters that move the cursor, change the terminal's state, reorder or hide text:
# C0 and C1 controls with DEL, invisible formatting (soft hyphen, zero widths, joiners,
# word joiner, BOM, interlinear annotations), line and paragraph separators, every bidi
# mark, embedding, override and isolate, and lone surrogates (undecodable bytes of a name).
_UNSAFE = (
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff]"
)


@functools.cache
def _unsafe(multiline: bool) -> re.Pattern[str]:
    """The pattern of :data:`_UNSAFE`, with newlines and tabs left out when ``multiline``:
    compiled when first needed (a run that shows no path that needs it never pays for it)."""
    return re.compile(_UNSAFE.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f") if multiline else _UNSAFE)


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, multiline: bool = False) -> str:
    """``text`` with every control, invisible and bidi character shown as an escape.

    Escapes look like Python's (``\\x1b``, ``\\u202e``): visible and unambiguous about which
    character was there. Everything else (other scripts, symbols) is unchanged; a zero-width
    joiner inside an emoji sequence is escaped too.

    Args:
        text: a path, or a message that may contain one.
        multiline: keep newlines and tabs (for file contents shown as lines of code);
            ``\\r\\n`` line ends become ``\\n``.

    Returns:
        The text, safe to write to a terminal.

    Example:
        >>> printable("a\\x1b[2J\\u202eog.exe")
        'a\\\\x1b[2J\\\\u202eog.exe'
        >>> printable("line 1\\r\\n\\tline 2", multiline=True)
        'line 1\\n\\tline 2'
    """
    if multiline:
        return _unsafe(True).sub(_escaped, text.replace("\r\n", "\n"))
    if text.isascii() and text.isprintable():  # no control: the usual path, without the pattern
        return text
    return _unsafe(False).sub(_escaped, text)
