"""A text lexed in one call, lexed in pieces (``fastlex.pieces``): the same tokens whatever the
text holds across its cuts, each piece lexed once per batch, and lexers whose rules cannot be
told not cut at all."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer
from pygments.lexers import GoLexer, find_lexer_class_by_name, get_all_lexers
from pygments.token import Comment, Name, String, Whitespace

from minhashdup.core import signature
from minhashdup.core.shingles import token_hashes
from minhashdup.core.signature import Family
from minhashdup.engine.workers import Recipe, extract_batch
from minhashdup.source.extract import extract_file
from minhashdup.source.fastlex import FastLexer, of_root, supported
from minhashdup.source.fastlex.pieces import CUT, HEADS, INNER, Kept, _closed, lexed, seams_of
from minhashdup.source.fastlex.versions import Versions
from minhashdup.source.patterns import parser as sre_parse
from minhashdup.source.tokens import _fast, _instance, token_texts
from minhashdup.source.walk import FileEntry

GO = FastLexer(GoLexer(stripnl=False))


def _both(fast: FastLexer, text: str, kept: Kept | None = None) -> tuple[list[str], list[str]]:
    """The text's tokens in one call and in pieces."""
    return fast.significant_tokens(text), fast.significant_tokens_in_pieces(text, kept or Kept())


def _naive(fast: FastLexer, text: str, cut: re.Pattern[str] = CUT) -> list[str]:
    """Each piece's tokens lexed alone, joined without asking whether they are the text's."""
    whole = of_root(fast.states)
    assert whole is not None
    text = fast.lexer._preprocess_lexer_input(text)
    ends = [m.end() for m in cut.finditer(text)] + [len(text)]
    return [t for start, end in itertools.pairwise([0, *ends]) for t in whole(text[start:end])]


#: Go texts where a piece alone is not the text over it: what crosses a cut is found.
ACROSS = {
    "raw string": "x := `a\n\nfunc f() {}\n`\n\ny := 1\n",
    "block comment": "x := 1 /* a\n\nfunc f() { */\n\ny := 2\n",
    "string over lines": 'x := "a\n\nfunc f() {}"\n\ny := 1\n',
    "escaped quote": 'x := "a\\"\n\nb \\" c"\nz\n\nw := 2\n',
    "comment opened by an escaped line end": "x := 1 /\\\n* a\n\nb */ y\n\nz\n",
    "two raw strings": "a := `x`\n\nb := `y\n\nc` + `\n\nd`\n\ne\n",
}


#: Go texts cut inside a function (after a blank line and an indentation), crossed there.
INSIDE = {
    "raw string": "func f() {\n\tx := `a\n\n\ty` + `\n\n\tz`\n\n\treturn\n}\n",
    "block comment": "func f() {\n\tx := 1 /* a\n\n\tb */\n\n\ty := 2\n}\n",
    "string over lines": 'func f() {\n\tx := "a\n\n\tb"\n\n\ty := 1\n}\n',
    "comment after spaces": "func f() {\n  x := 1 /* a\n\n  */ y\n\n  z\n}\n",
}


@pytest.mark.parametrize(
    ("cut", "text"),
    [*((CUT, text) for text in ACROSS.values()), *((INNER, text) for text in INSIDE.values())],
    ids=[*ACROSS, *(f"inside: {name}" for name in INSIDE)],
)
def test_what_crosses_a_cut_keeps_the_text_s_tokens(cut: re.Pattern[str], text: str) -> None:
    one, pieces = _both(GO, text)
    assert GO.seams is not None and GO.seams.inner  # Go is cut inside functions too
    assert _naive(GO, text, cut) != one  # the case is real: the pieces alone are not the text
    assert pieces == one


def test_a_function_s_blocks_are_pieces_taken_by_a_version() -> None:
    body = "\tx := 1\n\ty := x + 2\n\n\tfor i := range y {\n\t\tprint(i)\n\t}\n\n\treturn y\n"
    base = "package p\n\nfunc a() int {\n" + body + "}\n"
    later = base.replace("x + 2", "x + 3")
    kept = Kept()
    assert GO.significant_tokens_in_pieces(base, kept) == GO.significant_tokens(base)
    assert "for i := range y {\n\t\tprint(i)\n\t}\n\n\t" in kept.pieces  # cut after its indentation
    before = set(kept.pieces)
    assert GO.significant_tokens_in_pieces(later, kept) == GO.significant_tokens(later)
    assert len(set(kept.pieces) - before) == 1  # the edited block alone lexed again


def test_pieces_that_end_clean_are_cut_and_lexed_once() -> None:
    base = "package p\n\nfunc a() int {\n\treturn 1\n}\n\nfunc b() string {\n\treturn `b`\n}\n\nfunc c() {}\n"
    later = base.replace("return 1", 'return 2 // "two"')
    kept = Kept()
    assert _both(GO, base, kept) == _both(GO, base)
    assert len(kept.pieces) == 4 and all(entry[1] in (True, None) for entry in kept.pieces.values())
    before = dict(kept.pieces)
    assert GO.significant_tokens_in_pieces(later, kept) == GO.significant_tokens(later)
    cuts = [0, *(m.end() for m in CUT.finditer(later)), len(later)]
    pieces = [later[a:b] for a, b in itertools.pairwise(cuts)]
    assert [p in before for p in pieces] == [True, False, True, True]  # lexed once, taken
    assert len(kept.pieces) == 5


def test_many_places_a_block_comment_may_start_fail_the_piece() -> None:
    piece = "".join(f"x{i} /* c{i} */\n" for i in range(HEADS + 1)) + "\n"
    seams = GO.seams
    assert seams is not None
    assert not seams.clean(piece, GO.significant_tokens(piece))
    assert seams.clean(piece.replace("/*", "//").replace("*/", ""), GO.significant_tokens(piece))
    text = piece + "y /* a\n\nb */\n\nz\n"
    assert _both(GO, text)[1] == GO.significant_tokens(text)


_FRAGMENTS = [
    "\n\n",
    "\n",
    " ",
    "\t",
    "`",
    '"',
    "'",
    "/*",
    "*/",
    "//",
    "/",
    "*",
    "\\",
    "x",
    "1",
    "é",
    "func f() {",
    "}",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=60), st.lists(st.sampled_from(_FRAGMENTS), max_size=12))
def test_any_go_text_in_pieces_is_its_one_call_lex(parts: list[str], edit: list[str]) -> None:
    text = "".join(parts)
    kept = Kept()
    assert _both(GO, text, kept) == _both(GO, text, Kept())
    again = "".join(edit) + text  # a version: its pieces taken from the first where they are the same
    assert GO.significant_tokens_in_pieces(again, kept) == GO.significant_tokens(again)


def _cut_lexers() -> list[type]:
    """Every lexer whose one-call lex is cut (:func:`seams_of`)."""
    out = []
    for _, aliases, _, _ in get_all_lexers():
        cls = find_lexer_class_by_name(aliases[0]) if aliases else None
        fast = _fast(_instance(cls)) if cls is not None and supported(cls) else None
        if fast is not None and fast.one_call and fast.seams is not None:
            out.append(cls)
    return sorted(set(out), key=lambda c: c.__name__)


CUT_LEXERS = _cut_lexers()


def test_several_lexers_are_cut() -> None:
    assert GoLexer in CUT_LEXERS and len(CUT_LEXERS) >= 10


@pytest.mark.parametrize("cls", CUT_LEXERS, ids=lambda c: c.__name__)
def test_every_cut_lexer_gives_its_one_call_lex(cls: type) -> None:
    fast = _fast(_instance(cls))
    assert fast is not None
    rng = random.Random(cls.__name__)
    alphabet = [
        *_FRAGMENTS,
        "#",
        ";",
        "(*",
        "*)",
        "{",
        "<<",
        ">>",
        "--",
        "--[[",
        "]]",
        "[",
        "]",
        "$",
        "@",
        "%",
        "0x1F",
        "a b",
    ]
    for _ in range(150):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        kept = Kept()
        assert _both(fast, text, kept)[1] == fast.significant_tokens(text), text
        assert fast.significant_tokens_in_pieces("x\n\n" + text, kept) == fast.significant_tokens("x\n\n" + text)


class _Bounded(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A kept rule of a bounded width that reads across a blank line (``a`` to ``b``)."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"\s+", Whitespace), (r"a\n\nb", Name), (r"\w+", Name), (r"\S", Name)]
    }


class _FarDrop(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A dropped rule that reads past anything (``<<`` to ``>>``), of no shape the module knows."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"\s+", Whitespace), (r"<<[\s\S]*?>>", Comment), (r"\w+", Name), (r"\S", Name)]
    }


class _Shared(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A string rule whose opener another rule starts with too (``"x`` a name): read where it may
    start, as the dropped rules are."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"\s+", Whitespace), (r'"x\w*', Name), (r'"[^"]*"', String), (r"\w+", Name), (r"\S", Name)]
    }


@pytest.mark.parametrize(
    ("cls", "text"),
    [
        (_Bounded, "x a\n\nb y\n"),
        (_FarDrop, "x << y\n\nz >> w\n\nv\n"),
        (_Shared, 'x "y\n\nz" w\n\nv\n'),
    ],
)
def test_rules_of_other_kinds_are_read_across_cuts(cls: type, text: str) -> None:
    fast = FastLexer(cls(stripnl=False))
    assert fast.one_call and fast.seams is not None
    one, pieces = _both(fast, text)
    assert _naive(fast, text) != one
    assert pieces == one


class _Behind(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    tokens: ClassVar[dict[str, list[Any]]] = {"root": [(r"\s+", Whitespace), (r"(?<=x)y", Name), (r"\w", Name)]}


class _Start(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    flags = 0  # no MULTILINE: ^ is the text's start only
    tokens: ClassVar[dict[str, list[Any]]] = {"root": [(r"\s+", Whitespace), (r"^#.*", Comment), (r"\S", Name)]}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["\n", "\n\n", " ", "\t", "\f", "\r", "\xa0", "x", "}", "\u3000"]), max_size=40))
def test_every_piece_but_the_last_is_followed_by_a_non_space(parts: list[str]) -> None:
    # What tells a piece clean once for every text it is cut from: the character after it.
    text = "".join(parts)
    for cut in (CUT, INNER):
        for m in cut.finditer(text):
            assert m.end() < len(text) and not text[m.end()].isspace()


def test_the_cuts_and_the_blank_rules_agree_on_what_a_space_is() -> None:
    # A blank rule is told by str.isspace (_spaces_only), a cut's next character by \S.
    assert all(chr(c).isspace() == (re.match(r"\S", chr(c)) is None) for c in range(0x110000))


class _IndentKept(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A kept rule that starts on an indentation and reads no line end."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"\n", Whitespace), (r" +", Whitespace), (r"\t\w+", Name), (r"\w+", Name), (r"\S", Name)]
    }


class _IndentEnd(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A dropped rule that starts on an indentation and asks for a line's end."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"\n", Whitespace), (r"[ \t]+$", Whitespace), (r"\w+", Name), (r"\S", Name)]
    }


class _LineStart(RegexLexer):  # type: ignore[misc]  # pygments is untyped
    """A rule that asks for a line's start (MULTILINE ``^``): an indentation before it is seen."""

    tokens: ClassVar[dict[str, list[Any]]] = {
        "root": [(r"\s+", Whitespace), (r"^\w+:", Name.Label), (r"\w+", Name), (r"\S", Name)]
    }


@pytest.mark.parametrize("cls", [_IndentKept, _IndentEnd, _LineStart])
def test_a_lexer_reading_an_indentation_or_a_line_start_is_not_cut_inside(cls: type) -> None:
    fast = FastLexer(cls(stripnl=False))
    text = "a\n\n\tb: c\n\nd\n"
    assert fast.one_call and fast.seams is not None  # cut after a line that starts with no space
    assert not fast.seams.inner
    assert _naive(fast, text, INNER) != fast.significant_tokens(text)  # what cuts inside would do
    assert fast.significant_tokens_in_pieces(text, Kept()) == fast.significant_tokens(text)


@pytest.mark.parametrize("cls", [_Behind, _Start])
def test_a_lexer_reading_before_a_cut_is_not_cut(cls: type) -> None:
    fast = FastLexer(cls(stripnl=False))
    assert fast.one_call
    assert fast.seams is None
    assert seams_of(fast.states["root"]) is None
    assert fast.significant_tokens_in_pieces("#a\n\n#b y\n", Kept()) == fast.significant_tokens("#a\n\n#b y\n")


def test_kept_pieces_stay_within_their_room() -> None:
    kept = Kept(most=20)
    text = "package p\n\nfunc a() {}\n\nfunc bbbbbbbbbbbbbbbbbbbbbbbbbbb() {}\n"
    assert GO.significant_tokens_in_pieces(text, kept) == GO.significant_tokens(text)
    assert sum(map(len, kept.pieces)) <= 20 and kept.room >= 0
    assert lexed(of_root(GO.states), GO.seams, text, Kept(most=0)) == GO.significant_tokens(text)  # type: ignore[arg-type]


def test_only_a_file_with_versions_in_its_batch_is_cut() -> None:
    files = [("v1/p/a.go", "v1/p/a.go", 10), ("v2/p/a.go", "v2/p/a.go", 12), ("v1/p/b.go", "v1/p/b.go", 10)]
    versions = Versions([*files, ("v1/q/c.go", "v1/q/c.go", 7), ("v2/q/c.go", "v2/q/c.go", 7)])
    assert versions.pieces_for("v1/p/a.go", GoLexer) is versions.pieces_for("v2/p/a.go", GoLexer)
    assert versions.pieces_for("v1/p/b.go", GoLexer) is None  # alone in its family
    assert versions.pieces_for("v1/q/c.go", GoLexer) is None  # one size: most often copies, lexed once
    text = "package p\n\nfunc a() {}\n"
    assert token_texts(_instance(GoLexer), text, "fast", versions, "v1/p/a.go") == GO.significant_tokens(text)
    assert versions.pieces[GoLexer].pieces  # lexed in pieces, kept for the other version


def test_a_scan_s_versions_lexed_in_pieces_give_what_each_alone_gives(tmp_path: Path) -> None:
    body = "".join(f"\nfunc f{i}(x int) int {{\n\treturn x*{i} + len(`s{i}`)\n}}\n" for i in range(30))
    texts = [
        "package p\n" + body,
        'package p\n\nimport "fmt"\n' + body.replace("x*7", "x*8") + "\nvar s = `\n\nfunc` \n",
    ]
    entries = []
    for n, text in enumerate(texts):
        path = tmp_path / f"v{n}" / "p" / "a.go"
        path.parent.mkdir(parents=True)
        path.write_text(text)
        entries.append(FileEntry(str(path), str(path), len(text)))
    functions = Family(1, 48)
    together = extract_batch(entries, Recipe(5, functions))
    for entry, got in zip(entries, together, strict=True):
        alone = extract_file(0, entry.real, 5, functions)
        assert got.shingles.tolist() == alone.shingles.tolist() and got.tokens == alone.tokens
        assert got.signature is not None and alone.signature is not None
        assert got.signature.tolist() == alone.signature.tolist()  # the second from the first's


def test_a_version_is_signed_from_the_one_before_and_the_last_lets_it_go(monkeypatch: pytest.MonkeyPatch) -> None:
    functions = Family(1, 48)
    taken: list[bool] = []  # each version: whether signature_after made its signature
    after = signature.signature_after
    monkeypatch.setattr(signature, "signature_after", lambda *a: taken.append(after(*a) is not None) or after(*a))
    sets = [np.arange(k, 400 + 3 * k, dtype=np.uint64) for k in range(3)]
    versions = Versions([(f"v{k}/p/a.go", f"v{k}/p/a.go", 100 + k) for k in range(3)])
    for k, shingles in enumerate(sets):
        got = versions.sign(f"v{k}/p/a.go", shingles, functions)
        assert got.tolist() == functions.sign([shingles])[0].tolist()
        assert ("p/a.go" in versions.signed) == (k < 2)  # kept for the next version only
        versions.passed(f"v{k}/p/a.go")
    assert not versions.signed
    assert taken == [True, True]  # the second and the third from the one before


def test_a_version_takes_the_hashes_of_the_pieces_it_shares() -> None:
    base = "package p\n\nfunc a() {}\n\nfunc b() {}\n\nvar c = 1\n"
    later = base.replace("func a() {}", "func a() { return }")
    versions = Versions([("v1/p/a.go", "v1/p/a.go", len(base)), ("v2/p/a.go", "v2/p/a.go", len(later))])
    lexer = _instance(GoLexer)
    for path, text in (("v1/p/a.go", base), ("v2/p/a.go", later)):
        tokens = token_texts(lexer, text, "fast", versions, path)
        reuse = versions.reuse(path)
        hashes = token_hashes(tokens, reuse)
        assert hashes.tolist() == token_hashes(tokens).tolist()
        versions.hashed(hashes)
        versions.passed(path)
        if path.startswith("v2"):  # the header, b and c taken: 3 runs, a's tokens looked up
            assert reuse is not None and [(at, n) for at, _, n in reuse[1]] == [(0, 2), (9, 6), (15, 4)]
        else:
            assert reuse is None


@pytest.mark.parametrize(
    ("pattern", "flags", "opener"),
    [
        (r'"(?:\\\\|\\[^\\]|[^"\\])*"', 0, '"'),  # Go's string: escapes of one character
        (r"`[^`]*`", 0, "`"),
        (r"'(?:[^'x]|x'')*'", 0, None),  # an alternative of three characters may take the quote
        (r"'(?:[^'\\]|\\.|\\\\\n)*'", 0, None),  # two escapes of different lengths
        (r"'(?:[^'\\]|'\\)*'", 0, None),  # an escape starting with the quote
        (r"'(?:[^\\]|\\.)*'", 0, None),  # a single character that may be the quote
        (r"'[^']*?'", 0, None),  # a lazy loop
        (r"'[^']*'", re.IGNORECASE, None),
    ],
)
def test_only_a_string_that_stops_at_its_first_free_quote_is_told_by_its_opener(
    pattern: str, flags: int, opener: str | None
) -> None:
    items = list(sre_parse.parse(pattern, flags | re.MULTILINE))
    flags = sre_parse.parse("", flags | re.MULTILINE).state.flags
    others = [list(sre_parse.parse(r"\w+", flags))]
    assert _closed(True, items, others, flags) == opener
    assert _closed(False, items, others, flags) is None  # dropped: its tokens cannot be looked at
    assert _closed(True, items, [*others, list(sre_parse.parse(pattern[0] + "x", flags))], flags) is None
