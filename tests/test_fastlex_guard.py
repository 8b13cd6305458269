"""Rules whose failing attempts read far (fastlex.guard): which rules get a guard, that a guard
never rules out a match, that the fast engine gives pygments' tokens on long runs of words, and
that a file of one word per line costs the guard a bounded number of reads, not one per word."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexers import get_lexer_by_name

from minhashdup.source.fastlex import FastLexer
from minhashdup.source.fastlex.guard import SIGNAL_RUN, Guard, guard_of
from minhashdup.source.patterns import parser
from minhashdup.source.significant import significant_tokens_with_types

DECLARATION = r"((?:[a-z]+\s+)+?)([a-z]+)(\s*)(\()"  # the shape of Java's method rule, smaller


def _guard(pattern: str) -> Guard | None:
    return guard_of(parser.parse(pattern), 0)


@pytest.mark.parametrize(
    ("pattern", "closer"),
    [
        (DECLARATION, "("),
        (r"^([ \t]*)((?:[a-z]+\s+)+?)([a-z]+)(\s*)(\()", "("),  # anchored, an optional indent first
        (r"(\w+\s+)+?\w+\s*;", ";"),
        (r"(super)(\s*)(\([\w\s,]+\))", None),  # a keyword first: attempts start at it only
        (r"[a-z]+\s*\(", None),  # no repeat takes words across spaces: an attempt ends at a space
        (r"(.+?\s+)+?\(", None),  # any character: no run to measure
        (r"((?:[a-z]+\s+)+?)[a-z]+\s*[(]", "("),  # a one-character set is read as its literal
        (r"((?:[a-z]+\s+)+?)[a-z]+\s*x", None),  # a word character closes nothing
        (r"(?:[a-z(]+\s+)+?[a-z]+\(", None),  # the run itself takes the closer
    ],
)
def test_which_rules_have_a_guard(pattern: str, closer: str | None) -> None:
    guard = _guard(pattern)
    assert (guard and guard.closer) == closer


def test_the_declaration_rules_of_java_and_csharp_have_a_guard_and_c_go_python_none() -> None:
    for name, expected in [("java", True), ("csharp", True), ("go", False), ("c", False), ("python", False)]:
        fast = FastLexer(get_lexer_by_name(name))
        guarded = any(source.guard for state in fast.lexer._tokens for source in fast.states[state].sources)
        assert guarded is expected, name


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab (;\n\t", max_size=120),
    positions=st.lists(st.integers(min_value=0, max_value=119), max_size=30),
)
def test_a_guard_never_rules_out_a_match(text: str, positions: list[int]) -> None:
    # Positions asked in any order, on two texts in turn (a callback's piece lexed in between):
    # where the guard says the rule cannot match, it does not.
    guard = _guard(DECLARATION)
    assert guard is not None
    pattern = re.compile(DECLARATION)
    other = text[::-1]
    for pos in positions:
        for t in (text, other):
            if pos <= len(t) and not guard.live(t, pos):
                assert pattern.match(t, pos) is None, (t, pos)


def _words(data: st.DataObject, closers: str) -> str:
    """A long run of words over lines and spaces (often longer than the signal's run), with
    now and then a character that closes or breaks it."""
    word = st.sampled_from(["int", "x", "$y", "a.b", "List<T>", "c[]", "_9", "record", "Foo", "main", "@A", "1"])
    space = st.sampled_from([" ", "\n", "  ", "\n    ", "\t"])
    other = st.sampled_from(list(closers))
    pieces = data.draw(st.lists(st.one_of(word, word, word, space, space, other), max_size=160))
    return " ".join(pieces) + "\n"


@pytest.mark.parametrize("name", ["java", "csharp"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_long_runs_of_words_lex_as_pygments_does(name: str, data: st.DataObject) -> None:
    lexer = get_lexer_by_name(name, stripnl=False, ensurenl=True)
    text = _words(data, "(;{}=)")
    assert FastLexer(lexer).significant_tokens_with_types(text) == significant_tokens_with_types(lexer, text)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        # The rule matches after a long run (its closer follows): the guard must say so. Taken
        # by the rule, `record` is a keyword and `Foo` a class name; by the rules after it, names.
        ("java", "y = record Foo " + "w " * 40 + "main (x)\n"),
        ("csharp", "  public static " + "w\n  " * 40 + "Main (x) {}\n"),
        # The run ends at a closer that does not close a declaration: the rule fails everywhere.
        ("java", "    w\n" * 40 + "1(\n"),
        ("csharp", "    w\n" * 40 + "a. (\n"),
    ],
)
def test_the_rule_after_a_long_run_is_pygments_own(name: str, text: str) -> None:
    lexer = get_lexer_by_name(name, stripnl=False, ensurenl=True)
    assert FastLexer(lexer).significant_tokens_with_types(text) == significant_tokens_with_types(lexer, text)


def test_a_guard_interrupted_while_measuring_remembers_nothing_of_that_text() -> None:
    # A --lex-timeout fires inside regex calls: the run measured for one text must never be
    # taken for another's.
    guard = _guard(DECLARATION)
    assert guard is not None
    measure = guard.run
    assert guard.live("a b\nc d;", 0) is False
    text = "int f (x)"

    def interrupted(text: str, pos: int) -> Any:
        raise TimeoutError

    guard.run = interrupted
    with pytest.raises(TimeoutError):
        guard.live(text, 0)
    guard.run = measure
    assert guard.live(text, 0) is True


@pytest.mark.parametrize("name", ["java", "csharp"])
def test_guards_let_go_of_the_texts_lexed_and_blank_lines_keep_their_tail(name: str) -> None:
    fast = FastLexer(get_lexer_by_name(name, stripnl=False, ensurenl=True))
    fast.significant_tokens("class A {\n" + "    int x\n" * 100 + "}\n")
    assert fast.states.guards and all(g.text is None and not g.others for g in fast.states.guards)
    # C#'s method rule is anchored: a blank-line tail asks its opening (.guard.opening), not
    # the rule, which would read a run of words to its end at each line start.
    assert fast.states["root"].taken.across


@pytest.mark.parametrize("name", ["java", "csharp"])
def test_one_word_per_line_costs_the_guard_few_reads(name: str) -> None:
    # 10,000 lines of one word, no '(' anywhere: unguarded, each word starts an attempt reading
    # to the end of the file (quadratic; 80 KB of C# took a whole lex timeout). The guard reads
    # the run once, for all of them; the rule is left out of the pattern tried at each word.
    fast = FastLexer(get_lexer_by_name(name, stripnl=False, ensurenl=True))
    guards = [source.guard for source in fast.states["root"].sources if source.guard is not None]
    assert guards, "no guarded rule in root"
    reads = 0
    for guard in guards:
        measure = guard.run

        def counted(text: str, pos: int, measure: Callable[..., Any] = measure) -> Any:
            nonlocal reads
            reads += 1
            return measure(text, pos)

        guard.run = counted
    text = "".join(f"    word{i}\n" for i in range(10_000))
    tokens, _ = fast.significant_tokens_with_types(text)
    assert tokens == [f"word{i}" for i in range(10_000)]
    assert 0 < reads <= 4, reads
    # And where the run is shorter than the signal's, the guard is not asked at all.
    reads = 0
    fast.significant_tokens_with_types("a b\n" * (SIGNAL_RUN // 8))
    assert reads == 0
