"""The fast engine's whitespace after a token (``fastlex.blanks``): taken only where pygments'
own tokens over it are dropped runs, so the tokens stay exactly pygments'."""

from __future__ import annotations

import re
import sys
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer, bygroups
from pygments.lexers import CLexer, GoLexer, JavaLexer, PythonLexer
from pygments.token import Comment, Name, Punctuation, String, Text, Whitespace

from minhashdup.source.fastlex import FastLexer
from minhashdup.source.patterns import SPACES, line_anchored, may_end_with, may_start, one_char_run, parser
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


class _Anchored(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A rule anchored at a line's start may start with a space: whitespace is taken within a
    line only, and not after a token that may end with a line end (the comment)."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [
            (r"^\s*#\w*", Comment.Preproc),
            (r"//[^\n]*\n", Comment.Single),
            (r"\n", Whitespace),
            (r"[^\S\n]+", Whitespace),
            (r"\w+", Name),
            (r".", Punctuation),
        ]
    }


class _Labels(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """Anchored rules before the run rules and after them, of both shapes (a run that may cross
    line ends, one that may not), as C and Java have them: at a line start holding a space,
    pygments tries only the first; at an empty line's start, all but the last."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [
            (r"^(\s*)(#\w*)", bygroups(Whitespace, Comment.Preproc)),
            (r"[^\S\n]+", Whitespace),
            (r"^(\s*)(\w+)(:)", bygroups(Whitespace, Name.Label, Punctuation)),
            (r"(^[ \t]*)(\w+)(;)", bygroups(Whitespace, Name.Label, Punctuation)),
            (r"\n", Whitespace),
            (r"(^[ \t]*)(\w+)(\.)", bygroups(Whitespace, Name.Label, Punctuation)),
            (r"\w+", Name),
            (r".", Punctuation),
        ]
    }


class _LineEndRuns(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """Line ends taken as runs (``\\n+``): a line start inside one is not where pygments starts a
    token, so no tail may stop there (it would lex ``\\n #x`` from the second line end)."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [
            (r"^[ \t]*@\w*", Name.Decorator),
            (r"[^\S\n]+", Whitespace),
            (r"^\s*#\w*", Comment.Preproc),
            (r"\n+", Whitespace),
            (r"\w+", Name),
            (r".", Punctuation),
        ]
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
        (r"\u00a0", 0x2028, re.IGNORECASE, False),
        (r"k", 0x212A, re.IGNORECASE, True),  # the Kelvin sign folds to k: the engine is asked
        (r"(?i:[^a])", 0xA0, 0, True),
        (r"(?i:[a-z])", 0xA0, 0, False),
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
    parsed = parser.parse(pattern, flags)
    assert may_start(parsed, code, parsed.state.flags) is may


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


@pytest.mark.parametrize(
    ("pattern", "flags", "may"),
    [
        (r"//.*?$", re.MULTILINE, False),
        (r"//.*\n", 0, True),
        (r"/\*(.|\n)*?\*/", 0, False),
        (r"a.", re.DOTALL, True),
        (r"a.", 0, False),
        (r"[^\S\n]+", 0, False),
        (r"\s+", 0, True),
        (r"x(?=\n)", 0, False),  # a lookahead takes nothing
        (r"x\n?", 0, True),
        (r"(?i)x\n", 0, True),
        (r"$", 0, True),  # can match empty
    ],
)
def test_may_end_with_a_line_end(pattern: str, flags: int, may: bool) -> None:
    parsed = parser.parse(pattern, flags)
    assert may_end_with(parsed, 10, parsed.state.flags) is may


@pytest.mark.parametrize(
    ("pattern", "anchored"),
    [
        (r"^\s*#", True),
        (r"\A#!", True),
        (r"(?:^a|^b)", True),
        (r"a|^b", False),
        (r"(?<=\n)x", False),
        (r"\s*^#", False),
    ],
)
def test_line_anchored(pattern: str, anchored: bool) -> None:
    assert line_anchored(parser.parse(pattern, re.MULTILINE)) is anchored


def test_go_takes_every_whitespace_after_a_token() -> None:
    state = FastLexer(GoLexer(stripnl=False, ensurenl=True)).states["root"]
    ascii_spaces = "".join(f"\\x{c:02x}" for c in SPACES if c < 128)
    assert state.taken.tail == f"[{ascii_spaces}]*"
    assert state.taken.wide == frozenset(c for c in SPACES if c >= 128)
    assert not state.taken.within_line


def test_python_takes_whitespace_within_a_line() -> None:
    # Its docstring rule, anchored at a line's start, may start with a space.
    state = FastLexer(PythonLexer(stripnl=False, ensurenl=True)).states["root"]
    assert state.taken.within_line
    assert state.taken.tail == "[" + "".join(f"\\x{c:02x}" for c in SPACES if c < 128 and c != 10) + "]*"
    assert state.taken.wide == frozenset(c for c in SPACES if c >= 128)


@pytest.mark.parametrize(
    ("cls", "tail"),
    [
        (_SpacesThenOther, r"[\x09\x0a\x20]*"),  # \x0b and friends are kept by "\s": not taken
        (_WideFirst, ""),  # \s+ holds U+00A0, which a rule before it keeps
        (_LineEndsMove, ""),  # \n changes state, and \s+ holds it
        (_TextRun, r"[\x09\x0a\x0b\x0c\x0d\x1c\x1d\x1e\x1f\x20]*"),
        (_Anchored, r"[\x09\x0b\x0c\x0d\x1c\x1d\x1e\x1f\x20]*"),  # within a line: no \n
    ],
)
def test_which_whitespace_a_state_takes_after_a_token(cls: type[RegexLexer], tail: str) -> None:
    assert _root(cls).taken.tail == tail


_PIECES = [
    "a",
    ":",
    "a:",
    "a;",
    "a.",
    "bc",
    "1",
    ";",
    ".",
    "#",
    "//",
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


@pytest.mark.parametrize(
    "cls",
    [
        _SpacesThenOther,
        _WideFirst,
        _LineEndsMove,
        _TextRun,
        _Anchored,
        _Labels,
        GoLexer,
        PythonLexer,
        CLexer,
        JavaLexer,
    ],
)
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


@pytest.mark.parametrize("text", ["x //c\n  #y\n", "x\n\u00a0#y\n", "x;\n\t #y z\n", "x \u00a0\n #y\n"])
def test_a_line_start_is_left_to_the_rules_anchored_there(text: str) -> None:
    lexer = _Anchored(stripnl=False, ensurenl=True)
    fast = FastLexer(lexer)
    expected = list(significant_tokens(lexer, text))
    assert any(t.endswith("#y") and t != "#y" for t in expected)  # the anchored rule took the line's start
    warm = "".join(_PIECES) * 64
    assert fast.significant_tokens(text) == expected
    assert fast.significant_tokens(warm + text) == list(significant_tokens(lexer, warm + text))


def _lexer(name: str, tokens: dict[str, list[Any]], flags: int = re.MULTILINE) -> RegexLexer:
    return type(name, (RegexLexer,), {"tokens": tokens, "flags": flags, "name": name})(stripnl=False, ensurenl=True)


# Each lexer needs one condition of blanks(): without it, the fast engine's tokens differ
# (found by a review's mutations of the analysis).
_NEEDS = {
    "the run holds the character": (
        _lexer("ICRun", {"root": [(r"[^\S\n]+", Whitespace), (r"\n", Punctuation), (r"\w+", Name)]}, re.I | re.M),
        "a \nb\n",
    ),
    "the run matches whitespace only": (
        _lexer("NotBlank", {"root": [(r"ab", Name), (r"[ a]+", Whitespace), (r"\w", Name)]}),
        "x ab\n",
    ),
    "the run is one set repeated": (
        _lexer("EndRun", {"root": [(r"[ ]+$", Whitespace), (r"[ ]", Name), (r"\n", Whitespace), (r"\w+", Name)]}),
        "x  y\n",
    ),
    "no tail after a state change": (
        _lexer(
            "PushStr",
            {
                "root": [(r"\s+", Whitespace), (r'"', String, "str"), (r"\w+", Name)],
                "str": [(r'[^"]+', String), (r'"', String, "#pop")],
            },
        ),
        'x " a"\n',
    ),
    "a rule that can match empty may start anywhere": (
        _lexer(
            "LookPush",
            {
                "root": [(r"(?=[ ])", Text, "ws"), (r"[ \n]+", Whitespace), (r"\w+", Name)],
                "ws": [(r"[ ]+", Name, "#pop")],
            },
        ),
        "x y\n",
    ),
    "an ASCII-only group inside a Unicode pattern": (
        _lexer("AsciiGroup", {"root": [(r"(?a:[^\s])+", Name), (r"\s+", Whitespace), (r".", Punctuation)]}),
        "ab\xa0c d",
    ),
}


@pytest.mark.parametrize("need", sorted(_NEEDS))
def test_each_condition_keeps_pygments_tokens(need: str) -> None:
    lexer, text = _NEEDS[need]
    expected = list(significant_tokens(lexer, text))
    assert FastLexer(lexer).significant_tokens(text) == expected
    warm = "".join(_PIECES) * 64
    assert FastLexer(lexer).significant_tokens(warm + text) == list(significant_tokens(lexer, warm + text))


def test_a_state_the_analysis_trips_on_runs_rule_by_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    import minhashdup.source.fastlex.states as states

    def trip(rules: Any, flags: int) -> Any:
        raise ValueError("an analysis bug")

    monkeypatch.setattr(states, "join", trip)
    lexer = GoLexer(stripnl=False, ensurenl=True)
    fast = FastLexer(lexer)
    text = "func f(x int) { return x // c\n}\n"
    assert fast.significant_tokens(text) == list(significant_tokens(lexer, text))
    assert fast.states["root"].joined is None


def test_wide_whitespace_within_a_line_is_decided_at_each_position() -> None:
    # The scan's table caches a character's pattern only where the position does not matter:
    # U+00A0 mid-line is skipped, at a line's start it is the anchored rule's.
    lexer = _Anchored(stripnl=False, ensurenl=True)
    text = "x \u00a0y\n\u00a0#y\n"
    expected = list(significant_tokens(lexer, text))
    assert "\u00a0#y" in expected
    assert FastLexer(lexer).significant_tokens(text) == expected


@pytest.mark.parametrize(
    ("cls", "state", "text", "rest"),
    [
        (CLexer, "root", "x;\n\n  \n\t\n  int y;\n", "  int y;\n"),  # the last line's indentation: from its start
        (CLexer, "root", "x;\n\n  \n\n#define A\n", "\n  \n\n#define A\n"),  # ^\s*# takes them all
        (JavaLexer, "root", "x;\n\n \n\n int y;\n", " int y;\n"),
        (JavaLexer, "root", "x;\n \n \n foo:\n", " foo:\n"),  # at a space, the label rule is never tried
        (JavaLexer, "root", "x;\n \n\n foo:\n", "\n foo:\n"),  # at an empty line's start it is, and matches
        (PythonLexer, "root", "x\n\n   \n\ny\n", "y\n"),
        (_Labels, "root", "a\n\n \n\nb\n", "b\n"),
        (_Labels, "root", "a\n \n \nb:\n", "b:\n"),
        (_Labels, "root", "a\n \n\nb:\n", "\nb:\n"),
        (_Labels, "root", "a\n\n\nb;\n", "b;\n"),  # its run cannot cross a line end: it fails on a blank line
    ],
)
def test_a_token_takes_the_blank_lines_after_it_in_one_call(
    cls: type[RegexLexer], state: str, text: str, rest: str
) -> None:
    # Where only anchored rules keep whitespace to a line, the anchored rules ran over every
    # blank line left at each line start (quadratic in the blank lines, as in pygments): now the
    # line end before them takes them, once those rules cannot match there.
    lexer = cls(stripnl=False, ensurenl=True)
    taken = FastLexer(lexer).states[state]
    assert taken.taken.within_line and taken.taken.across
    token = taken.joined.match(text, text.index("\n"))  # the first line end, dropped
    assert text[token.end() :] == rest
    assert FastLexer(lexer).significant_tokens(text) == list(significant_tokens(lexer, text))


@pytest.mark.parametrize("text", ["a\n \n\n #x\n", "a\n \n\n#x\n", "a\n\n\n #x\n"])
def test_no_tail_stops_inside_a_run_of_line_ends(text: str) -> None:
    # Found by a helper's fuzzing: with "\n+", pygments never starts a token at the second line
    # end of "\n\n", so "^\s*#" is never tried there; a tail that stopped there made it match.
    lexer = _LineEndRuns(stripnl=False, ensurenl=True)
    assert not _root(_LineEndRuns).taken.across
    assert FastLexer(lexer).significant_tokens(text) == list(significant_tokens(lexer, text))
