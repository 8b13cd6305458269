"""The fast engine's whitespace after a token (``states.blanks``): taken only where pygments'
own tokens over it are dropped runs, so the tokens stay exactly pygments'."""

from __future__ import annotations

import re
import sys
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer
from pygments.lexers import GoLexer
from pygments.token import Name, Punctuation, Text, Whitespace

from minhashdup.source.fastlex import FastLexer
from minhashdup.source.patterns import SPACES, may_start, one_char_run, parser
from minhashdup.source.significant import significant_tokens


class _SpacesThenOther(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """Runs of spaces and tabs and single line ends are dropped; other whitespace is kept."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"\n", Whitespace), (r"[ \t]+", Whitespace), (r"\s", Name), (r"\w+", Name), (r".", Punctuation)]
    }


class _WideFirst(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """``\\s+`` drops every whitespace, but a rule before it keeps U+00A0: a run that reaches
    one must not be cut there."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [("\u00a0", Name), (r"\s+", Whitespace), (r"\w+", Name), (r".", Punctuation)]
    }


class _LineEndsMove(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A line end changes state: no whitespace may be taken past a token."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"\n", Text, "line"), (r"\s+", Whitespace), (r"\w+", Name), (r".", Punctuation)],
        "line": [(r"\s+", Whitespace), (r"\w+", Name.Label, "#pop"), (r".", Punctuation, "#pop")],
    }


class _TextRun(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A ``Text`` run of whitespace is dropped like ``Whitespace``; ``\\s*`` (which can match
    empty) is not a run."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"[^\S\n]+", Text), (r"\n", Text), (r"\s*;", Punctuation), (r"\w+", Name), (r".", Punctuation)]
    }


def _root(cls: type[RegexLexer]):  # type: ignore[no-untyped-def]
    return FastLexer(cls(stripnl=False, ensurenl=True)).states["root"]


def test_spaces_are_every_whitespace_character() -> None:
    assert tuple(c for c in range(sys.maxunicode + 1) if chr(c).isspace()) == SPACES


@pytest.mark.parametrize(
    ("pattern", "code", "flags", "may"),
    [
        (r"\n", 0xA0, 0, False),
        (r"\s+", 0xA0, 0, True),
        (r"[^\W\d]\w*", 0xA0, 0, False),
        (r"[^\W\d]\w*", 0xE9, 0, True),
        (r"x|\S", 0x2028, 0, False),
        (r"x|[^\S\n]", 0x2028, 0, True),
        (r"(?=\s)\u00a0", 0xA0, 0, True),
        (r"\u00a0", 0x2028, 0, False),
        (r"\u00a0", 0x2028, re.IGNORECASE, True),  # case folding: not reasoned about
        (r"\s*x", 0xA0, 0, True),  # may match empty first
        (r"(?:ab)?x", 0xA0, 0, False),
        (r"(?:ab)?x", ord("a"), 0, True),
        (r"[^a]", 0xA0, 0, True),
        (r"\s", 0xA0, re.ASCII, False),
        (r".", 0xA0, 0, True),
        (r"$", 0xA0, 0, True),  # can match empty
    ],
)
def test_may_start(pattern: str, code: int, flags: int, may: bool) -> None:
    assert may_start(parser.parse(pattern, flags), code, flags) is may


@pytest.mark.parametrize(
    ("pattern", "run"),
    [
        (r"\n", True),
        (r"\s+", True),
        (r"[ \t]+?", True),
        (r"\s*", False),
        (r"\s{2,}", False),
        (r"\s+$", False),
        ("ab", False),
    ],
)
def test_one_char_run(pattern: str, run: bool) -> None:
    assert one_char_run(parser.parse(pattern)) is run


def test_go_takes_every_whitespace_after_a_token() -> None:
    state = FastLexer(GoLexer(stripnl=False, ensurenl=True)).states["root"]
    ascii_spaces = "".join(f"\\x{c:02x}" for c in SPACES if c < 128)
    assert state.tail == f"[{ascii_spaces}]*"
    assert state.wide == frozenset(c for c in SPACES if c >= 128)


@pytest.mark.parametrize(
    ("cls", "tail"),
    [
        (_SpacesThenOther, r"[\x09\x0a\x20]*"),  # \x0b and friends are kept by "\s": not taken
        (_WideFirst, ""),  # \s+ holds U+00A0, which a rule before it keeps
        (_LineEndsMove, ""),  # \n changes state, and \s+ holds it
        (_TextRun, r"[\x09\x0a\x0b\x0c\x0d\x1c\x1d\x1e\x1f\x20]*"),
    ],
)
def test_which_whitespace_a_state_takes_after_a_token(cls: type[RegexLexer], tail: str) -> None:
    assert _root(cls).tail == tail


_PIECES = [
    "a",
    "bc",
    "1",
    ";",
    ".",
    "\n",
    " ",
    "  ",
    "\t",
    "\x0b",
    "\x0c",
    "\x1c",
    "\r\n",
    "\xa0",
    "\u2028",
    "\u3000",
    "é",
]


@pytest.mark.parametrize("cls", [_SpacesThenOther, _WideFirst, _LineEndsMove, _TextRun, GoLexer])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_tokens_equal_pygments_whatever_the_whitespace(cls: type[RegexLexer], data: st.DataObject) -> None:
    lexer = cls(stripnl=False, ensurenl=True)
    fast = FastLexer(lexer)
    text = "".join(data.draw(st.lists(st.sampled_from(_PIECES), max_size=60)))
    # Once as written, and once after 64 of every character, when the narrowed patterns serve.
    warm = "".join(_PIECES) * 64
    assert fast.significant_tokens(text) == list(significant_tokens(lexer, text))
    assert fast.significant_tokens(warm + text) == list(significant_tokens(lexer, warm + text))
