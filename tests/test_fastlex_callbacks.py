"""``using(this)`` callbacks run by the fast engine itself (``states._parts``): the same tokens,
types and lines as pygments' own loop over the text they get."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer, bygroups, this, using
from pygments.lexers import CLexer, CppLexer, WikitextLexer
from pygments.token import Comment, Keyword, Name, Number, Punctuation, String, Text, Whitespace

from minhashdup.source.fastlex import FastLexer
from minhashdup.source.fastlex.states import AGAIN, CALL, TYPED
from minhashdup.source.significant import (
    significant_tokens,
    significant_tokens_with_lines,
    significant_tokens_with_types,
    significant_typed_tokens,
)


def _shout(lexer: Any, match: Any, ctx: Any = None) -> Any:
    """A callable that is not ``using``: one Keyword token of the text, upper-cased types aside."""
    yield match.start(), Keyword, match.group()


class _Nested(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """``using(this)`` alone, in ``bygroups`` with a state, with another callable, and with options."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [
            (r"<([^>]*)>", using(this, state="inner")),  # a stack on top of root
            (r"\[([^\]]*)\]", bygroups(using(this))),
            (r"(@)(\w*)(\{[^}]*\})", bygroups(Punctuation, _shout, using(this, state=("root", "inner")))),
            (r"(%)(\w+)", bygroups(Punctuation, using(this, stripall=True))),  # options: pygments' loop
            (r"(\$)(\w*)(\[[^\]]*\])", bygroups(Punctuation, Name, using(this))),  # an empty typed group
            (r"\(", Punctuation, "inner"),
            (r"\d+", Number),
            (r"\w+", Name),
            (r"#[^\n]*", Comment),
            (r"\s+", Whitespace),
            (r"[^\w\s]", Punctuation),
        ],
        "inner": [
            (r"\)", Punctuation, "#pop"),
            (r"\w+", String),
            (r"\s+", Text),
            (r"[^\w\s)]", Punctuation),
        ],
    }


def test_callbacks_are_cut_into_pieces() -> None:
    plans = FastLexer(_Nested(stripnl=False, ensurenl=True)).states["root"].sequential
    assert plans[0].parts == ((AGAIN, 0, ("root", "inner")),)
    assert plans[1].parts == ((AGAIN, 1, ("root",)),)
    assert plans[2].parts == ((TYPED, 1, Punctuation), (CALL, 2, _shout), (AGAIN, 3, ("root", "inner")))
    assert plans[3].parts is None  # using with options: a new lexer instance, pygments' own loop
    assert plans[4].parts == ((TYPED, 1, Punctuation), (TYPED, 2, Name), (AGAIN, 3, ("root",)))


_PIECES = [
    "<a b)c>",
    "[x (y z) 1]",
    "[",
    "]",
    "@k{q (r) s}",
    "@{}",
    "%w",
    "$[a b]",
    "$x[(c)]",
    "(",
    ")",
    "<",
    ">",
    "12",
    "ab",
    "#c\n",
    " ",
    "\n",
    "\t",
    "é",
    "{",
    "}",
    "@",
]


@pytest.mark.parametrize("cls", [_Nested, CLexer, CppLexer])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_tokens_types_and_lines_equal_pygments(cls: type[RegexLexer], data: st.DataObject) -> None:
    lexer = cls(stripnl=False, ensurenl=True)
    fast = FastLexer(lexer)
    pieces = [*_PIECES, "static int f(void) {", "int *g(char c) { return c; }", "#define X 1\n", "struct s { int a; };"]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=40)))
    assert fast.significant_tokens(text) == list(significant_tokens(lexer, text))
    assert fast.significant_tokens_with_types(text) == significant_tokens_with_types(lexer, text)
    texts, lines = fast.significant_tokens_with_lines(text)
    assert list(zip(texts, lines, strict=True)) == list(significant_tokens_with_lines(lexer, text))


def test_a_piece_lexed_again_has_its_own_offsets() -> None:
    # The text a callback lexes again starts further on: its tokens' lines count from there.
    lexer = _Nested(stripnl=False, ensurenl=True)
    text = "a\nb <c\nd) e>\n[f\ng]\n"
    texts, lines = FastLexer(lexer).significant_tokens_with_lines(text)
    assert list(zip(texts, lines, strict=True)) == list(significant_tokens_with_lines(lexer, text))
    assert ("d", 3) in zip(texts, lines, strict=True) and ("g", 5) in zip(texts, lines, strict=True)


class _EmptyPieces(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """An optional piece lexed again (C's function rule has six), and a state where an empty
    text does give a token: its end pops with a kept, empty one."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [
            (r"(\s*)(!)", bygroups(using(this), Punctuation)),
            (r"(\s*)(\?)", bygroups(using(this, state="loud"), Punctuation)),
            (r"\w+", Name),
            (r"\s+", Whitespace),
        ],
        "loud": [(r"\w+", Name), (r"$", Keyword, "#pop")],
    }


def test_an_empty_piece_that_gave_nothing_is_not_lexed_again() -> None:
    lexer = _EmptyPieces(stripnl=False, ensurenl=True)
    engine = FastLexer(lexer)
    text = "a! b ! c!?d?"
    assert engine.significant_tokens(text) == list(significant_tokens(lexer, text))
    assert engine.significant_tokens(text) == list(significant_tokens(lexer, text))  # remembered now
    assert ("root",) in engine.states.silent
    assert ("root", "loud") not in engine.states.silent  # its empty text gives the empty Keyword


def _relative(lexer: Any, match: Any, ctx: Any = None) -> Any:
    # Offsets from the piece's start, not the text's: pygments' lines count the texts alone.
    yield 0, Keyword, match.group(1)
    yield len(match.group(1)), Whitespace, "\n"
    yield len(match.group(1)) + 1, Name, match.group(2)


class _Relative(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"(k)\n(\w+)", _relative), (r"\w+", Name), (r"\s+", Whitespace)],
    }


@pytest.mark.parametrize("lexer", [_Relative(stripnl=False), WikitextLexer(stripnl=False)])
def test_a_callbacks_tokens_are_on_the_lines_of_the_texts_before_them(lexer: Any) -> None:
    # Found by a helper's fuzzing: Wikitext's <source> blocks yield offsets within the block,
    # and the fast engine put their tokens on the block's first line.
    text = 'a\nb k\nc\n<source lang="c">\nx\n</source>\nk\nd'
    texts, lines, types = FastLexer(lexer).significant_tokens_with_lines_and_types(text)
    assert list(zip(types, texts, lines, strict=True)) == list(significant_typed_tokens(lexer, text))
