"""Which tokens count: the one rule both lexer engines apply, and pygments' own stream filtered by it.

Dropped: every ``Comment`` token except preprocessor directives (``Comment.Preproc``,
``Comment.PreprocFile``: ``#include`` and ``#define`` are code, even if pygments files them
under Comment), every ``Whitespace`` token, and ``Text`` or ``Comment.Preproc`` tokens made
only of whitespace (line ends of directives).
Every other token is kept with its exact text.

This module is the bottom of the lexing stack: the fast engine (:mod:`.fastlex`) decides
its drops with :func:`verdict`, and :mod:`.tokens` picks between the two engines.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from pygments.lexer import Lexer
from pygments.token import Comment, Text, Whitespace, _TokenType

_KEPT_COMMENTS = (Comment.Preproc, Comment.PreprocFile)

#: What happens to a token, by its type: see :func:`verdict`.
DROP, KEEP, KEEP_UNLESS_BLANK = range(3)


@functools.lru_cache(maxsize=4096)
def verdict(ttype: _TokenType) -> int:
    """The one rule for which tokens count, by type (both engines use it).

    ``DROP``: comments (not preprocessor directives) and whitespace. ``KEEP_UNLESS_BLANK``:
    ``Text`` and kept ``Comment.Preproc`` tokens, dropped when only whitespace (line ends of
    directives). ``KEEP``: everything else, with its exact text.

    Example:
        >>> from pygments.token import Comment, Name
        >>> [verdict(t) for t in (Comment.Single, Comment.Preproc, Name)] == [DROP, KEEP_UNLESS_BLANK, KEEP]
        True
    """
    if ttype in Comment and not any(ttype in kept for kept in _KEPT_COMMENTS):
        return DROP
    if ttype in Whitespace:
        return DROP
    if ttype in Text or ttype in Comment:
        return KEEP_UNLESS_BLANK
    return KEEP


def kept(ttype: _TokenType, value: str) -> bool:
    """Whether a token of this type and text is significant."""
    rule = verdict(ttype)
    return rule == KEEP or (rule == KEEP_UNLESS_BLANK and bool(value) and not value.isspace())


def significant_tokens(lexer: Lexer, text: str) -> Iterator[str]:
    """The texts of ``lexer``'s tokens over ``text``, without comments and whitespace.

    Example:
        >>> from pygments.lexers import GoLexer
        >>> list(significant_tokens(GoLexer(), "x := 1 // one"))
        ['x', ':=', '1']
    """
    return (value for ttype, value in lexer.get_tokens(text) if kept(ttype, value))


def significant_tokens_with_lines(lexer: Lexer, text: str) -> Iterator[tuple[str, int]]:
    """Like :func:`significant_tokens`, with the 1-based line each token starts on.

    Example:
        >>> from pygments.lexers import GoLexer
        >>> list(significant_tokens_with_lines(GoLexer(), "x := 1\\n// c\\ny"))
        [('x', 1), (':=', 1), ('1', 1), ('y', 3)]
    """
    return ((value, line) for _, value, line in significant_typed_tokens(lexer, text))


def significant_tokens_with_types(lexer: Lexer, text: str) -> tuple[list[str], list[_TokenType]]:
    """Like :func:`significant_tokens`, with each token's pygments type.

    Example:
        >>> from pygments.lexers import GoLexer
        >>> significant_tokens_with_types(GoLexer(), "x := 1")
        (['x', ':=', '1'], [Token.Name.Other, Token.Operator, Token.Literal.Number.Integer])
    """
    typed = list(significant_typed_tokens(lexer, text))
    return [value for _, value, _ in typed], [ttype for ttype, _, _ in typed]


def significant_typed_tokens(lexer: Lexer, text: str) -> Iterator[tuple[_TokenType, str, int]]:
    """Each significant token's type, text and 1-based line: what the other functions here give
    a part of."""
    line = 1
    for ttype, value in lexer.get_tokens(text):
        if kept(ttype, value):
            yield ttype, value, line
        line += value.count("\n")
