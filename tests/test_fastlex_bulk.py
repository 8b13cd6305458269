"""A root state lexed in one regex call (``fastlex.bulk``): taken only where its tokens are
pygments' own, and the same tokens as the scan's loop, token by token, gives."""

from __future__ import annotations

import re
import sys
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer, bygroups
from pygments.lexers import GoLexer, PythonLexer
from pygments.token import Comment, Name, Number, Operator, Punctuation, Text, Whitespace

from minhashdup.source.fastlex import FastLexer
from minhashdup.source.fastlex.bulk import of_root
from minhashdup.source.significant import significant_tokens

_scan = sys.modules["minhashdup.source.fastlex.scan"]  # the package exports a function of that name


class _Flat(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """Every kind of rule the one call takes: drops before and after keeps, a ``bygroups`` whose
    second group is one character (kept, then dropped), a ``Text`` rule that is never blank,
    a rule of one character, and characters no rule takes (Error tokens)."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [
            (r"\n", Whitespace),
            (r"[ \t]+", Whitespace),
            (r"(print)(\()", bygroups(Name.Builtin, Punctuation)),
            (r"(\\)(\n)", bygroups(Text, Whitespace)),
            (r"#.*?$", Comment.Single),
            (r"[a-z_]\w*", Name),
            (r"\d+", Number),
            (r"@[a-z]+", Text),
            (r"(?:<=|<|=)", Operator),
            (r"(?:\.\.\.|[(),=.])", Punctuation),  # a choice: one character at "(", not at "."
        ]
    }


class _DropBehindKeep(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """``/`` is an operator before ``//`` starts a comment: the drop cannot go first."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"\s+", Whitespace), (r"/", Operator), (r"//.*?$", Comment.Single), (r"\w+", Name)]
    }


class _SecondGroupLexedOtherwise(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """After ``f``, ``(`` is the bygroups' own; at ``((`` the rules alone would take two."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"\s+", Whitespace), (r"(f)(\()", bygroups(Name, Punctuation)), (r"\(\(", Operator), (r".", Name)]
    }


class _MayBeBlank(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A ``Text`` rule that matches blank text too: pygments drops it there, by its text."""

    tokens: ClassVar[dict[str, list[Any]]] = {"root": [(r"[ a]+", Text), (r"\n", Whitespace), (r".", Name)]}


class _Moves(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r'"', Text, "string"), (r"\s+", Whitespace), (r"\w+", Name)],
        "string": [(r'"', Text, "#pop"), (r'[^"]+', Text)],
    }


class _InlineCase(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """``(?i)k`` also matches U+212A (Kelvin sign): not a rule that starts only with ASCII, so the
    drop of non-ASCII text may not go before it (found by a review's fuzzer)."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"(?i)kw", Name), (r"[\u0080-\uffff]+", Comment), (r"\s+", Whitespace), (r"\w+", Name)]
    }


class _FoldedFront(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A lexer-wide IGNORECASE: a first class of ``k`` would take ``K`` from the rule before it."""

    flags = re.IGNORECASE | re.MULTILINE
    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"[ \n]+", Whitespace), (r"(?-i:K)x", Name), (r"k", Name), (r"[a-z]", Name)]
    }


@pytest.mark.parametrize(
    ("cls", "text"),
    [(_InlineCase, "\u212aW"), (_InlineCase, "kw \u212aw x"), (_FoldedFront, "Kx"), (_FoldedFront, "kx K")],
)
def test_case_folding_past_ascii_keeps_rules_in_their_order(cls: type, text: str) -> None:
    lexer = cls(stripnl=False, ensurenl=True)
    assert _tokens(lexer, text, whole=True) == list(significant_tokens(lexer, text))


def _tokens(lexer: Any, text: str, whole: bool) -> list[str]:
    fast = FastLexer(lexer)
    if not whole:
        fast.states.whole = (None,)  # looked for, none: the loop, token by token
    return fast.significant_tokens(text)


def test_the_one_call_is_taken_where_the_root_never_leaves_itself() -> None:
    assert of_root(FastLexer(_Flat()).states) is not None
    assert of_root(FastLexer(GoLexer()).states) is not None  # Go's builtins, its line joins: bygroups


@pytest.mark.parametrize("cls", [_DropBehindKeep, _SecondGroupLexedOtherwise, _MayBeBlank, _Moves, PythonLexer])
def test_the_one_call_is_refused_where_it_could_differ(cls: type) -> None:
    assert of_root(FastLexer(cls()).states) is None


@pytest.mark.parametrize("cls", [_Flat, _DropBehindKeep, _SecondGroupLexedOtherwise, _MayBeBlank, GoLexer])
@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("print(\\\n \t#a_z09@<=,.)/f\u00a0\u2028é\x0b")), max_size=60))
def test_one_call_tokens_equal_the_loops_and_pygments(cls: type, text: str) -> None:
    lexer = cls(stripnl=False, ensurenl=True)
    expected = list(significant_tokens(lexer, text))
    assert _tokens(lexer, text, whole=True) == expected
    assert _tokens(lexer, text, whole=False) == expected


def test_one_call_on_go_keeps_what_the_loop_keeps() -> None:
    text = 'package p\n\nfunc f(s []int) int { // n\n\treturn len(s) + cap(s) \\\n\t* 2 /* c */ }\n"é" `r` 1.5e3 @\n'
    lexer = GoLexer(stripnl=False, ensurenl=True)
    assert (
        _tokens(lexer, text, whole=True) == _tokens(lexer, text, whole=False) == list(significant_tokens(lexer, text))
    )
    assert "len" in _tokens(lexer, text, whole=True)


def test_the_loop_runs_where_offsets_or_types_are_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = FastLexer(GoLexer())
    called: list[str] = []
    monkeypatch.setattr(_scan, "of_root", lambda states: called.append("asked") or None)
    texts, types = fast.significant_tokens_with_types("x := 1\n")
    assert texts == ["x", ":=", "1"] and len(types) == 3
    assert called == []  # types need the loop: the one call was not even looked for
    fast.significant_tokens("x := 1\n")
    assert called == ["asked"]
