"""How far a rule's match attempts may read (fastlex.reach), and the stretches between two
versions' differences taken from the earlier one's lex (fastlex.splice): the same tokens as a
fresh lex, including where an attempt before a difference read past it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer, bygroups
from pygments.lexers import get_lexer_by_name
from pygments.token import Name, Punctuation, String, Text

from minhashdup.source.fastlex import FastLexer, splice
from minhashdup.source.fastlex.reach import Reach, Unsupported, prefixes
from minhashdup.source.fastlex.scan import scan
from minhashdup.source.fastlex.splice import Lexed, Splice
from minhashdup.source.patterns import compiler, parser
from tests.test_fastlex import FRAGMENTS


def _prefixes(pattern: str) -> re.Pattern[str]:
    parsed = parser.parse(pattern)
    sub = parser.SubPattern(parser.State(), prefixes(parsed.data, top=True))
    return compiler.compile(sub, 0)


@pytest.mark.parametrize(
    ("pattern", "inside", "outside"),
    [
        ("ab|cd", ["", "a", "ab", "c", "cd"], ["b", "abc", "ad"]),
        ("a(?=bc)", ["a", "ab", "abc"], ["abd", "b"]),  # a lookahead reads ahead of the match
        ("a+b", ["a", "aaa", "aab"], ["aabb", "ba"]),
        (r"\w+a", ["b", "bbbbb", "ba"], ["b a"]),  # a greedy run reads past where the match ends
        (r"/\*(.|\n)*?\*/", ["/", "/*", "/* a *", "/* a */", "/* * / b"], ["/* a */ b", "x"]),  # lazy: first exit
        (r"(a)\1", ["a", "ab", "a\nzz"], ["b"]),  # a backreference: anything
        (r"\bab$", ["", "a", "ab"], ["abc"]),  # anchors read no character of their own
    ],
)
def test_prefixes_are_what_an_attempt_may_have_read(pattern: str, inside: list[str], outside: list[str]) -> None:
    prefix = _prefixes(pattern)
    assert all(prefix.fullmatch(text) for text in inside)
    assert not any(prefix.fullmatch(text) for text in outside)


_ATOMS = ["a", "b", "\\n", '"', "[ab]", "[^a]", ".", "\\s", "\\w"]


def _pattern(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.sampled_from(["atom", "atom", "seq", "alt", "star", "lazy", "opt", "ahead", "not", "anchor"]))
    if depth > 2 or kind == "atom":
        return draw(st.sampled_from(_ATOMS))
    inner = _pattern(draw, depth + 1)
    if kind == "seq":
        return inner + _pattern(draw, depth + 1)
    if kind == "alt":
        return f"(?:{inner}|{_pattern(draw, depth + 1)})"
    if kind in ("star", "lazy", "opt"):
        return f"(?:{inner}){'*' if kind == 'star' else '*?' if kind == 'lazy' else '?'}" + _pattern(draw, depth + 1)
    if kind in ("ahead", "not"):
        return f"(?{'=' if kind == 'ahead' else '!'}{inner}){_pattern(draw, depth + 1)}"
    return draw(st.sampled_from(["\\b", "$", "^"])) + inner


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_an_attempt_never_reads_past_what_its_prefixes_allow(data: st.DataObject) -> None:
    """Where the text read so far stops being a prefix, what follows cannot change the match."""
    pattern = _pattern(data.draw)
    compiled = re.compile(pattern, re.MULTILINE)
    prefix = _prefixes(pattern)
    text = data.draw(st.text(alphabet='ab\n" ', max_size=12), label="text")
    stop = next((j for j in range(len(text) + 1) if prefix.fullmatch(text, 0, j) is None), None)
    if stop is None:
        return  # the whole text may be read: nothing to compare
    before = text[:stop]
    tails = data.draw(st.lists(st.text(alphabet='ab\n" x', max_size=6), min_size=2, max_size=4), label="tails")
    spans = {(m.span() if (m := compiled.match(before + tail)) else None) for tail in tails}
    assert len(spans) == 1, (pattern, before, tails)


def _fast(name: str) -> FastLexer:
    return FastLexer(get_lexer_by_name(name, stripnl=False, ensurenl=True))


def test_go_takes_stretches_between_differences() -> None:
    assert "go" in FRAGMENTS and _fast("go").reach is not None


@pytest.mark.parametrize("name", ["java", "csharp"])
def test_lexers_with_a_guarded_rule_are_not_spliced(name: str) -> None:
    # A signal's empty match (.guard) is not a token a record could compare: no splice at all.
    fast = _fast(name)
    assert fast.behind is None and fast.reach is None


@pytest.mark.parametrize("name", ["c", "python", "rust"])
def test_lexers_whose_rules_cannot_be_bounded_take_tails_only(name: str) -> None:
    fast = _fast(name)  # C and Python: a string rule may start on whitespace; Rust: a backreference
    assert fast.behind is not None and fast.reach is None


def test_a_rule_reading_anything_that_may_start_on_whitespace_is_refused() -> None:
    with pytest.raises(Unsupported):
        Reach([re.compile(r'\s"[^"]*"')])


def _lex(fast: FastLexer, text: str, base: Lexed | None) -> tuple[list[str], Splice, Lexed]:
    text = fast.lexer._preprocess_lexer_input(text)
    assert fast.behind is not None
    where = Splice(text, base, fast.behind, True, fast.reach)
    tokens = scan(fast.lexer, fast.states, text, None, splice=where)
    assert where.marks is not None
    return tokens, where, Lexed(text, tokens, where.marks, where.taken, None, where.far, fast.reach)


BODY = "".join(f"\tx{i} := f{i}(a, b) + {i} // step {i}\n" for i in range(60))
GO = f"package main\n\nfunc main() {{\n{BODY}}}\n\nfunc g() {{\n{BODY}}}\n"


def test_the_stretches_between_two_edits_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splice, "STRIDE", 16)
    fast = _fast("go")
    _, _, base = _lex(fast, GO, None)
    edited = GO.replace("x10 :=", "y10 :=").replace("x50 :=", "y50 := 2 *")  # two edits in main()
    tokens, where, _ = _lex(fast, edited, base)
    assert tokens == fast.significant_tokens(edited)
    tail = len(fast.significant_tokens(GO[GO.index("x50 :=") :]))
    assert where.taken > tail + len(tokens) // 3  # the head and the middle came from the base too


def test_only_matches_that_tried_a_rule_reading_anything_are_recorded() -> None:
    """The first alternative that matches is the match: a rule before every rule that may read
    anything tried none of them, and its match needs no record."""
    fast = _fast("go")
    text = 'package main\n// a line comment\nvar s = "x" / 2\n'
    _, where, _ = _lex(fast, text, None)
    assert where.far is not None
    at = [q for q, *_ in where.far]
    assert text.index('"x"') in at  # the string rule matched
    assert text.index("/ 2") in at  # the operator rule comes after the block comment's: that was tried
    assert text.index("//") not in at  # the line comment's rule comes before every such rule


# A string or a block comment left open in the base: the attempt there read to the text's end,
# past where the texts part; the edit closes it, so the lex from there on is another. What lies
# before it is taken; from it on, the text is lexed again.
LINES = "var b = two + three // four\n" * 8
OPEN = {
    "string": ('package main\n\nvar a = 1\nvar s = "one\n' + LINES + "var c = 2\n", "var c = 2", '"\nvar c = 2'),
    "comment": ("package main\n\nvar a = 1 /* one\n" + LINES + "var c = 2\n", "var c = 2", "*/\nvar c = 2"),
}


@pytest.mark.parametrize("name", sorted(OPEN))
def test_a_match_that_read_past_the_difference_is_lexed_again(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setattr(splice, "STRIDE", 4)
    fast = _fast("go")
    text, old, new = OPEN[name]
    _, _, base = _lex(fast, text, None)
    edited = text.replace(old, new)
    tokens, where, _ = _lex(fast, edited, base)
    assert tokens == fast.significant_tokens(edited)
    assert where.taken > 0  # "package main ... var a = 1" came from the base
    # without the record of where rules reading anything were tried, the base's tokens are taken
    blind = Lexed(base.text, base.tokens, base.marks, 0, None, [], fast.reach)
    wrong, _, _ = _lex(fast, edited, blind)
    assert wrong != tokens


def test_a_line_end_outside_multiline_is_refused() -> None:
    """``$`` without MULTILINE at ``j`` asks whether ``j + 1`` ends the text: further than it reads."""
    with pytest.raises(Unsupported):
        Reach([re.compile(r"#[^\n]*$")])
    assert Reach([re.compile(r"#[^\n]*$", re.MULTILINE)]).barriers == ["\n"]


class _Split(RegexLexer):
    """A string rule whose lookahead reads past its match, splitting it in two ways."""

    name = "split"
    tokens = {  # noqa: RUF012 - pygments' own way to declare a lexer
        "root": [
            (r'(")([^"]*)(")(?=..!)|(")([^"]*")', bygroups(String, String, String, String, String)),
            (r"[a-z]", Name),
            (r"[!?]", Punctuation),
            (r"\n", Text),
        ]
    }


def test_a_match_split_otherwise_past_the_difference_is_lexed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splice, "STRIDE", 1)
    fast = FastLexer(_Split(stripnl=False, ensurenl=True))
    assert fast.reach is not None and fast.reach.far
    head = "z" * 40 + "\n"
    _, base = fast.significant_tokens_after(head + '"abc"xy!\n', None, True)
    edited = head + '"abc"xy?\n'  # the same rule matches at the quote, to the same end, split otherwise
    tokens, lexed = fast.significant_tokens_after(edited, base, True)
    assert tokens == fast.significant_tokens(edited)
    assert lexed is not None and lexed.taken >= 40


def test_a_base_recorded_by_another_reach_passes_on_no_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records name patterns by their number in the Reach that made them; a tail taken from a
    base of another FastLexer (a cache evicted between two versions) must not carry them on,
    or a third version checks them against other patterns."""
    monkeypatch.setattr(splice, "STRIDE", 16)
    first, other = _fast("go"), _fast("go")
    warm = 'package a\nvar s = "x" / 2 /* c */ `r`\n'
    for _ in range(70):  # each numbers its patterns in the order it meets them: differently
        first.significant_tokens_after(warm, None, True)
    for _ in range(70):
        other.significant_tokens("a / b\n")
    other.significant_tokens_after(warm, None, True)
    body = "".join(f"\tx{i} := y{i} + {i}\n" for i in range(40))
    v1 = "package main\nfunc main() {\n" + body + '\ts := "open\n' + body + "}\n"  # a string never closed
    v2 = v1.replace("package main\n", "package main\n// two\n", 1)  # the tail is taken
    k = v2.rindex("x30 := y30")
    v3 = v2[:k] + 'x30 := "y30' + v2[k + len("x30 := y30") :]  # closes it
    _, l1 = first.significant_tokens_after(v1, None, True)
    t2, l2 = other.significant_tokens_after(v2, l1, True)
    assert l2 is not None and l2.taken > 0 and t2 == other.significant_tokens(v2)
    t3, _ = other.significant_tokens_after(v3, l2, True)
    assert t3 == other.significant_tokens(v3)


LINES = [f"\tx{i} := f{i}(a, b) + {i}\n" for i in range(1200)]


def _go(lines: list[str]) -> str:
    return "package main\n\nfunc main() {\n" + "".join(lines) + "}\n"


def test_many_edits_apart_keep_their_stretches_taken() -> None:
    """A mark found again counts the characters looked through up to it, not the whole window
    looked in: forty edits in a 30 KB text leave the stretches between them to take."""
    fast = _fast("go")
    text = _go(LINES)
    _, _, base = _lex(fast, text, None)
    edited = _go([line.replace(":=", "= 1 +") if i % 30 == 15 else line for i, line in enumerate(LINES)])
    tokens, where, _ = _lex(fast, edited, base)
    assert tokens == fast.significant_tokens(edited)
    assert where.taken > 0.5 * len(tokens)  # 16% when each find counted its whole window


def test_a_line_repeated_far_ahead_does_not_take_the_lex_past_the_marks_between() -> None:
    """Lines taken out of the middle, two of them also written near the end (before a last
    edit): the base's mark in them is found again far past where it was expected, not followed
    there by the base's next mark, so the stretch after the lines taken out is still taken (not
    lexed up to that copy)."""
    fast = _fast("go")
    lines = LINES[:400]
    cut = "".join(lines[100:140])
    head = _go(lines[:100])[:-2]  # without its closing brace: where lines[100] starts
    _, _, plain = _lex(fast, _go(lines), None)
    mark = min(p for p in plain.marks if len(head) <= p < len(head) + len(cut))
    at = next(i for i in range(100, 140) if len(_go(lines[: i + 1])) - 2 > mark)  # the line holding it
    text = _go(lines) + "\nfunc h() {\n" + lines[at] + lines[at + 1] + "\ty := 0\n}\n"
    _, _, base = _lex(fast, text, None)
    edited = text.replace(cut, "").replace("y := 0", "y := 1")
    tokens, where, _ = _lex(fast, edited, base)
    assert tokens == fast.significant_tokens(edited)
    assert where.taken > 0.9 * len(tokens)  # 25% when the copy was taken as the anchor


class _Searched(str):
    """A text that counts the characters its ``find`` calls look through."""

    looked = 0

    def find(self, sub: str, start: Any = 0, end: Any = None) -> int:  # type: ignore[override]
        end = len(self) if end is None else min(end, len(self))
        _Searched.looked += max(0, end - max(start, 0))
        return str.find(self, sub, start, end)


def test_looking_for_marks_stays_within_its_budget_past_a_token_longer_than_the_window() -> None:
    """A comment longer than the search window opened in the new version: the lex passes every
    mark inside it at once, and marks expected that far back are not looked for (their empty
    window counted as a negative length once, a credit that let later searches read 28 times the
    text)."""
    fast = _fast("go")
    a = [f"\tv{i} := g{i}(p, q) + {i}\n" for i in range(4000)]
    b = [f"\tw{i} = h{i}[{i}] * r\n" for i in range(4000)]
    _, _, base = _lex(fast, _go(a + a), None)
    edited = _go([*a[:40], "/*", *a[40:], "*/\n", *b])
    text = _Searched(fast.lexer._preprocess_lexer_input(edited))
    _Searched.looked = 0
    assert fast.behind is not None
    where = Splice(text, base, fast.behind, True, fast.reach)
    assert scan(fast.lexer, fast.states, text, None, splice=where) == fast.significant_tokens(edited)
    assert _Searched.looked <= (splice.BUDGET + 1) * len(text)
