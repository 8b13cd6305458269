"""A state joined around a rule it cannot hold (:mod:`minhashdup.source.fastlex.apart`): C++'s
raw strings, and a lexer built for the rule orders."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer, bygroups
from pygments.lexers import CppLexer
from pygments.token import Keyword, Name, Punctuation, String, Whitespace

from minhashdup.source.fastlex import FastLexer
from minhashdup.source.fastlex.apart import apart_starts, ascii_start
from minhashdup.source.fastlex.bulk import of_root
from minhashdup.source.patterns import parser
from minhashdup.source.significant import significant_tokens, significant_tokens_with_types

RAW = r'((?:[LuU]|u8)?R)(")([^\\()\s]{,16})(\()([\s\S]*?)(\)\3)(")'


@pytest.mark.parametrize(
    ("pattern", "starts"),
    [
        (RAW, "LRUu"),
        (r"(a)b\1", "a"),
        (r"(?P<q>['\"]).*?(?P=q)", "\"'"),
        (r"\b(x|yy?)\1", "xy"),  # zero-width first: what follows decides
        (r"(\s*)(\w+)\1", None),  # may start with whitespace: where the blank-line tails go
        (r"(a?)\1", None),  # may match empty: at the text's end too
        (r"^(#)\1", None),  # anchored at a line's start: the blank-line guards' business
        (r"(é)\1", None),  # past ASCII: the joined pattern serves those
        (r"(?i)(k)\1", None),  # folded: K and the Kelvin sign
        (r"(.)\1", None),  # any character
        (r"(a)(?(1)b|c)", "a"),  # a conditional
    ],
)
def test_apart_starts(pattern: str, starts: str | None) -> None:
    found = apart_starts(parser.parse(pattern, 0))
    assert (None if found is None else "".join(sorted(map(chr, found)))) == starts


@pytest.mark.parametrize(
    ("pattern", "ascii"),
    [("a", True), ("é", False), ("a?b", True), ("a?é", False), ("a?", False), (r"\bx", True), ("(?:[ab]|cd)+", True)],
)
def test_ascii_start(pattern: str, ascii: bool) -> None:
    parsed = parser.parse(pattern, 0)
    assert ascii_start(list(parsed), parsed.state.flags) is ascii


class _Around(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A backreference rule between rules that may start with its characters: before it ``ab``
    (first, wins at ``ab``), after it any word (loses to it at ``a'..'``)."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [
            (r"ab", Keyword),
            (r"(a)(')(.*?)(')(\1)", bygroups(String.Affix, String, String, String, String.Affix)),
            (r"[a-z]+", Name),
            (r"\{", Punctuation, "inner"),
            (r"\s+", Whitespace),
            (r".", Punctuation),
        ],
        "inner": [
            (r"\}", Punctuation, "#pop"),
            (r"(b)(\d)\2", bygroups(Name, Name)),
            (r"\S", Name),
            (r"\s+", Whitespace),
        ],
    }


def test_a_state_is_joined_around_a_rule_it_cannot_hold() -> None:
    lexer = _Around(stripnl=False, ensurenl=True)
    engine = FastLexer(lexer)
    text = "ab a'x'a a'y'b abc {b11 b12 c} é"
    assert engine.significant_tokens(text) == list(significant_tokens(lexer, text))
    root, inner = engine.states["root"], engine.states["inner"]
    assert root.joined is not None and root.apart == {ord("a")}
    assert inner.joined is not None and inner.apart == {ord("b")}
    assert root.pattern_at(text, text.index("é")) is root.joined  # past ASCII: the joined pattern
    assert root.pattern_at(text, 0) is None  # where it may start: rule by rule
    assert of_root(engine.states) is None  # no one-call lex of a state holding such a rule


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "'", "ab", "a'", "'a", "x", "{", "}", "1", "11", " ", "\n", "é"]), max_size=30)
)
def test_around_a_rule_it_cannot_hold_the_tokens_are_pygments(pieces: list[str]) -> None:
    lexer = _Around(stripnl=False, ensurenl=True)
    text = "".join(pieces)
    engine = FastLexer(lexer)
    assert engine.significant_tokens(text) == list(significant_tokens(lexer, text))
    assert engine.significant_tokens_with_types(text) == significant_tokens_with_types(lexer, text)


def test_cpp_function_bodies_are_joined_and_take_their_blank_lines() -> None:
    # C++'s statement and function-body states hold the raw-string rule: they ran rule by rule,
    # and blank lines there were quadratic (^\s*# tried over all left at each line start).
    lexer = CppLexer(stripnl=False, ensurenl=True)
    engine = FastLexer(lexer)
    text = 'int f() {\n  auto s = u8R"d(x)" )d";\n  return 1;' + "\n" * 50 + '  x = LR"(a\n)";\n}\n'
    assert engine.significant_tokens(text) == list(significant_tokens(lexer, text))
    assert engine.significant_tokens_with_types(text) == significant_tokens_with_types(lexer, text)
    state = engine.states["function"]
    assert state.joined is not None and {chr(c) for c in state.apart} == set("LRUu")
    end = state.joined.match(text, text.index("1;") + 2).end()  # the line end after it: and the blank lines
    assert text[end:].startswith("  x = LR")


def test_only_these_ascii_letters_fold_past_ascii() -> None:
    # What ascii_start trusts under IGNORECASE, asked of this Python's regex engine.
    import re
    import sys

    from minhashdup.source.fastlex.apart import FOLDS_PAST_ASCII

    any_ascii = re.compile("(?i)[\\x00-\\x7f]").fullmatch
    folded = {c for c in range(0x80, sys.maxunicode + 1) if any_ascii(chr(c))}
    letters = {a for a in range(128) for c in folded if re.fullmatch("(?i)" + re.escape(chr(a)), chr(c))}
    assert letters == FOLDS_PAST_ASCII


@pytest.mark.parametrize(
    ("pattern", "ascii"),
    [("(?i)<", True), ("(?i)k", False), ("(?i)[a-h]", True), ("(?i)[a-j]", False), ("(?i)[a-z]", False)],
)
def test_ascii_start_under_ignorecase(pattern: str, ascii: bool) -> None:
    parsed = parser.parse(pattern, 0)
    assert ascii_start(list(parsed), parsed.state.flags) is ascii


def test_php_runs_on_the_fast_engine_from_its_start_stack() -> None:
    # PHP's loop starts from root (or from php on root with startinline) and retypes its builtin
    # functions from Name.Other to Name.Builtin: vetted, the fast engine gives its tokens and types.
    from pygments.lexers import PhpLexer

    from minhashdup.source.fastlex import supported

    assert supported(PhpLexer)
    for options, text in [({}, "<?php echo strlen($s); <<<A\nx\nA;\n"), ({"startinline": True}, "echo strlen($s);")]:
        lexer = PhpLexer(stripnl=False, ensurenl=True, **options)
        engine = FastLexer(lexer)
        assert engine.significant_tokens(text) == list(significant_tokens(lexer, text))
        texts, types = engine.significant_tokens_with_types(text)
        assert (texts, types) == significant_tokens_with_types(lexer, text)
        assert types[texts.index("strlen")] is Name.Builtin
    assert FastLexer(PhpLexer(startinline=True)).behind is None  # no splice from another stack
