"""A version's tail taken from an earlier version's lex: the same tokens as lexing it afresh."""

from __future__ import annotations

import gc
import random
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer
from pygments.lexers import get_lexer_by_name
from pygments.token import Name, Text

from minhashdup.engine import workers
from minhashdup.source.fastlex import FastLexer, splice
from minhashdup.source.fastlex import versions as versions_module
from minhashdup.source.fastlex.scan import scan
from minhashdup.source.fastlex.splice import Lexed, Splice, lookbehind, shared_tail
from minhashdup.source.fastlex.versions import Versions, family
from minhashdup.source.normalise import VERBATIM, Normalisation
from minhashdup.source.patterns import parser as sre_parse
from minhashdup.source.walk import FileEntry
from tests.test_fastlex import FRAGMENTS, JUNK


def _fast(name: str) -> FastLexer:
    return FastLexer(get_lexer_by_name(name, stripnl=False, ensurenl=True))


@pytest.mark.parametrize("name", sorted(FRAGMENTS))
def test_the_main_languages_may_take_tails(name: str) -> None:
    # PHP's string interpolations call using(this, _startinline=True): a lexer of other options,
    # pygments' own loop, which the splice cannot follow. Java's and C#'s method rules have a
    # guard (.guard), whose signal a record cannot compare. Their texts are lexed whole.
    assert (_fast(name).behind is not None) is (name not in ("php", "java", "csharp"))


def _versions(data: st.DataObject, name: str) -> list[str]:
    """A text and two later versions of it, each an edit (a run of pieces replaced) of the one before."""
    pieces = st.sampled_from(FRAGMENTS[name] + JUNK)
    texts = ["".join(data.draw(st.lists(pieces, max_size=30), label="first"))]
    for n in range(2):
        before = texts[-1]
        start = data.draw(st.integers(0, len(before)), label=f"start {n}")
        end = data.draw(st.integers(start, len(before)), label=f"end {n}")
        middle = "".join(data.draw(st.lists(pieces, max_size=4), label=f"middle {n}"))
        texts.append(before[:start] + middle + before[end:])
    return texts


@pytest.mark.parametrize("name", sorted(FRAGMENTS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_tails_taken_from_earlier_versions_are_the_tokens_lexed_afresh(name: str, data: st.DataObject) -> None:
    fast = _fast(name)
    stride = splice.STRIDE
    splice.STRIDE = data.draw(st.integers(1, 6), label="stride")  # marks almost everywhere: every splice point tried
    try:
        base = typed = None
        for text in _versions(data, name):  # the third takes from the second, whose marks came partly from the first
            tokens, base = fast.significant_tokens_after(text, base, True)
            assert tokens == fast.significant_tokens(text)
            types: list[Any] = []
            with_types, typed = fast.significant_tokens_after(text, typed, True, types)
            assert (with_types, types) == fast.significant_tokens_with_types(text)  # the types taken too
    finally:
        splice.STRIDE = stride


def _lexed(fast: FastLexer, text: str, base: Lexed | None) -> tuple[list[str], Splice]:
    text = fast.lexer._preprocess_lexer_input(text)
    assert fast.behind is not None
    where = Splice(text, base, fast.behind, True)
    tokens = scan(fast.lexer, fast.states, text, None, splice=where)
    return tokens, where


GO = """package main

import "fmt"

func add(a, b int) int {
\treturn a + b
}

func main() {
\tfor i := 0; i < 10; i++ {
\t\tfmt.Println(add(i, i*2), "done")
\t}
}
"""


def test_an_edit_near_the_start_takes_the_rest_from_the_base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splice, "STRIDE", 8)
    fast = _fast("go")
    first, where = _lexed(fast, GO, None)
    assert where.taken == 0 and where.marks
    edited = GO.replace("a + b", "a - b + 1")
    second, where = _lexed(fast, edited, Lexed(fast.lexer._preprocess_lexer_input(GO), first, where.marks or {}))
    assert second == fast.significant_tokens(edited)
    assert where.taken > len(second) // 2  # most of main() came from the base


def test_recorded_lexes_leave_nothing_for_the_garbage_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    # A splice that held its own bound method was a cycle: it, its records and its base were
    # freed by the cyclic collector only, which walked them on every collection (a tenth of the
    # lexing time of four Go releases). Freed as soon as the lex is done, nothing is left.
    monkeypatch.setattr(splice, "STRIDE", 8)
    fast = _fast("go")
    versions = [GO, GO.replace("a + b", "a - b + 1"), GO.replace('"done"', '"ok"')]
    fast.significant_tokens_after(GO, None, True)  # tables and patterns made before counting
    gc.collect()
    gc.disable()
    try:
        base = None
        for text in versions:
            tokens, base = fast.significant_tokens_after(text, base, True)
            assert tokens == fast.significant_tokens(text)
        assert base is not None and base.taken > 0 and base.far
        del base
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_recorded_lex_stopped_midway_is_not_kept_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    # The lexing deadline raises inside the scan: the lex being recorded (and its base) must not
    # stay reachable from the lexer's Reach until the next recorded lex.
    fast = _fast("go")
    _, base = fast.significant_tokens_after(GO, None, True)

    def deadline(*args: Any) -> int:
        raise TimeoutError

    monkeypatch.setattr(Splice, "at", deadline)
    with pytest.raises(TimeoutError):
        fast.significant_tokens_after(GO.replace("a + b", "a - b"), base, True)
    assert fast.reach is not None and fast.reach.current is None


def test_a_lex_with_types_takes_a_tail_from_a_base_with_types_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splice, "STRIDE", 8)
    fast = _fast("go")
    edited = GO.replace("a + b", "a - b + 1")
    _, untyped = fast.significant_tokens_after(GO, None, True)
    _, typed = fast.significant_tokens_after(GO, None, True, [])
    assert untyped is not None and untyped.types is None and typed is not None and typed.types is not None
    types: list[Any] = []
    tokens, from_untyped = fast.significant_tokens_after(edited, untyped, True, types)
    assert from_untyped is not None and from_untyped.taken == 0  # no types to take: lexed afresh
    assert (tokens, types) == fast.significant_tokens_with_types(edited)
    types = []
    tokens, from_typed = fast.significant_tokens_after(edited, typed, True, types)
    assert from_typed is not None and from_typed.taken > len(tokens) // 2
    assert (tokens, types) == fast.significant_tokens_with_types(edited)


def test_a_tail_lexed_in_another_state_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    # An unclosed triple quote puts the whole tail in a string state: the base's marks there
    # hold the root stack, so none matches and the tail is lexed (one string token).
    monkeypatch.setattr(splice, "STRIDE", 1)
    fast = _fast("python")
    text = "def f(a):\n    return a + 1\n\nx = f(2)\ny = [x, x]\n"
    first, where = _lexed(fast, text, None)
    edited = '"""' + text
    base = Lexed(fast.lexer._preprocess_lexer_input(text), first, where.marks or {})
    second, where = _lexed(fast, edited, base)
    assert where.taken == 0
    assert second == fast.significant_tokens(edited)


@pytest.mark.parametrize(
    ("pattern", "flags", "behind"),
    [
        (r"abc", 0, 0),
        (r"abc$", re.M, 0),
        (r"\Aabc", 0, 0),
        (r"\bword\b", 0, 1),
        (r"^#", re.M, 1),
        (r"(?<=ab)c", 0, 2),
        (r"(?<!\.)name", 0, 1),
        (r"x(?=(?<=xyz))", 0, 3),
        (r"(?<=a(?<=bc))d", 0, 3),
        (r"(a|(?<=qq)b)+", 0, 2),
    ],
)
def test_lookbehind_is_how_far_a_pattern_reads_back(pattern: str, flags: int, behind: int) -> None:
    assert lookbehind(sre_parse.parse(pattern, flags)) == behind


class _Counting(RegexLexer):
    """A lexer with a callback that is code: it may read the text anywhere."""

    name = "counting"

    def _word(lexer: Any, match: Any) -> Any:
        yield match.start(), Name, match.group()

    tokens = {"root": [(r"\w+", _word), (r"\s+", Text), (r".", Text)]}  # noqa: RUF012 - pygments' form


def test_a_lexer_with_a_code_callback_never_takes_a_tail() -> None:
    fast = FastLexer(_Counting(stripnl=False))
    assert fast.behind is None
    tokens, lexed = fast.significant_tokens_after("a b c", None, True)
    assert tokens == ["a", "b", "c"] and lexed is None


@pytest.mark.parametrize(("a", "b", "tail"), [("", "", 0), ("abc", "xbc", 2), ("abc", "abc", 3), ("bc", "abc", 2)])
def test_shared_tail(a: str, b: str, tail: int) -> None:
    assert shared_tail(a, b) == tail


def _walked_as_read(paths: list[str]) -> Versions:
    return Versions([(p, p) for p in paths])


def test_versions_keep_a_base_while_one_of_its_family_is_left() -> None:
    versions = _walked_as_read(
        ["r1/net/http/server.go", "r2/net/http/server.go", "r3/net/http/server.go", "r1/os/file.go"]
    )
    assert family("r1/net/http/server.go") == "http/server.go"
    key, base, record = versions.take("r1/net/http/server.go", FastLexer)
    assert (key, base, record) == ("http/server.go", None, True)
    lexed = Lexed("text", ["text"], {})
    versions.keep(key, FastLexer, lexed)
    versions.passed("r1/net/http/server.go")
    assert versions.take("r2/net/http/server.go", object)[1:] == (None, True)  # another lexer: not its base
    versions.passed("r2/net/http/server.go")
    assert versions.take("r1/os/file.go", FastLexer)[1:] == (None, False)  # alone in its family: nothing kept
    versions.keep("os/file.go", FastLexer, lexed)
    assert versions.chars == 0


def test_a_family_s_base_goes_with_its_last_file_lexed_or_not() -> None:
    # The second is a copy (never lexed, never asks for a base), the third skipped: the first's
    # lex is kept until the third has passed, then given back.
    versions = _walked_as_read(["r1/p/a.go", "r2/p/a.go", "r3/p/a.go"])
    key, _, _ = versions.take("r1/p/a.go", FastLexer)
    versions.keep(key, FastLexer, Lexed("text", ["text"], {}))
    for path in ("r1/p/a.go", "r2/p/a.go"):
        versions.passed(path)
    assert versions.chars == 4
    versions.passed("r3/p/a.go")
    assert versions.chars == 0 and not versions.bases


def test_versions_find_a_file_s_family_by_the_path_it_was_walked_by() -> None:
    # Files reached through links are read by their targets' paths (a content store's names).
    versions = Versions([("r1/p/a.go", "/store/3f2a"), ("r2/p/a.go", "/store/9c41")])
    key, _, record = versions.take("/store/3f2a", FastLexer)
    assert (key, record) == ("p/a.go", True)
    versions.keep(key, FastLexer, Lexed("text", ["text"], {}))
    versions.passed("/store/3f2a")
    assert versions.take("/store/9c41", FastLexer)[1] is not None


def test_versions_keep_no_more_than_their_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions_module, "KEEP_CHARS", 10)
    versions = _walked_as_read([f"r{r}/p{p}/a.go" for r in range(2) for p in range(3)])
    for p in range(3):
        key, _, record = versions.take(f"r0/p{p}/a.go", FastLexer)
        assert record
        versions.keep(key, FastLexer, Lexed("four", [], {}))
        versions.passed(f"r0/p{p}/a.go")
    assert [versions.take(f"r1/p{p}/a.go", FastLexer)[1] is not None for p in range(3)] == [True, True, False]
    assert versions.chars == 0  # all given back


def test_batches_keep_versions_and_same_size_files_together_in_path_order() -> None:
    # Sizes all differ but for copies of a file between two versions (a size group within a
    # family). (Groups of one size across families join those families' batches: see _batches.)
    names = [f"r{r}/pkg{p}/f{f}.go" for r in range(3) for p in range(6) for f in range(4)]
    files = [FileEntry(n, n, 1000 + (i - 24 if i % 5 == 0 and i >= 48 else i)) for i, n in enumerate(names)]
    batches = workers._batches(files, workers.Recipe(5), 2)
    where = {item.number: (b, k) for b, (items, _, _) in enumerate(batches) for k, item in enumerate(items)}
    assert sorted(where) == list(range(len(files)))
    by_family: dict[str, list[int]] = {}
    for i, entry in enumerate(files):
        by_family.setdefault(family(entry.path), []).append(i)
    for members in by_family.values():
        assert len({where[i][0] for i in members}) == 1  # one batch
        order = sorted(members, key=lambda i: where[i][1])
        assert [files[i].path for i in order] == sorted(files[i].path for i in members)
    for group in workers.same_size(files):
        assert len({where[i][0] for i in group}) == 1
    totals = [sum({item.size for item in items}) for items, _, _ in batches]  # the bytes lexed: a copy's none
    assert totals == sorted(totals, reverse=True)


def test_copies_do_not_fill_a_batch() -> None:
    # A batch is filled by what it lexes: byte-identical copies (files of one size, kept in one
    # batch) cost a read and a digest each. Four releases of 640 files, all copies of the first:
    # as many batches as the first alone makes (each one a worker's round trip to the scan).
    alone = [FileEntry(f"r0/p{p}/a.go", f"r0/p{p}/a.go", 1000 + p) for p in range(640)]
    copies = [FileEntry(f"r{r}/p{p}/a.go", f"r{r}/p{p}/a.go", 1000 + p) for r in range(1, 4) for p in range(640)]
    batches = workers._batches([*alone, *copies], workers.Recipe(5), 2)
    assert len(batches) == len(workers._batches(alone, workers.Recipe(5), 2)) == 20
    assert sorted(item.number for items, _, _ in batches for item in items) == list(range(4 * 640))


def test_a_size_group_across_families_keeps_both_families_versions_with_it() -> None:
    # r1/x/a.go and r0/y/b.go have one size: they share a batch, and so must each one's other
    # versions (before: the group went with the first family only, and r1/y/b.go lost its base).
    sizes = {"r0/x/a.go": 100, "r1/x/a.go": 200, "r2/x/a.go": 300, "r0/y/b.go": 200, "r1/y/b.go": 400}
    fillers = {f"r{r}/z{k}/c.go": 1000 + 10 * k + r for k in range(40) for r in range(2)}
    files = [FileEntry(p, p, n) for p, n in {**sizes, **fillers}.items()]
    batches = workers._batches(files, workers.Recipe(5), 2)
    [batch] = [[item.path for item in items] for items, _, _ in batches if any(i.path in sizes for i in items)]
    assert [p for p in batch if p in sizes] == ["r0/x/a.go", "r1/x/a.go", "r2/x/a.go", "r0/y/b.go", "r1/y/b.go"]


def test_a_batch_holds_each_family_in_path_order_when_its_bound_cuts_one() -> None:
    # Many files of few sizes: size groups chain the families into parts larger than the bound,
    # which cuts a family in two; the part holding its later versions may come first, and a
    # batch that takes both must still lex them in path order (each takes from the one before).
    rng = random.Random(1)
    for _ in range(300):
        families = [f"p{k}/f{k}.go" for k in range(rng.randint(2, 6))]
        names = [f"r{i:03d}/{rng.choice(families)}" for i in range(rng.randint(16, 60))]
        files = [FileEntry(n, n, rng.randint(1, 12)) for n in names]
        batches = [[item.path for item in items] for items, _, _ in workers._batches(files, workers.Recipe(5), 1)]
        assert sorted(p for b in batches for p in b) == sorted(names)
        for batch in batches:
            for key in {family(p) for p in batch}:
                assert [p for p in batch if family(p) == key] == sorted(p for p in batch if family(p) == key)
        for group in workers.same_size(files):
            assert len({k for k, b in enumerate(batches) for i in group if files[i].path in b}) == 1


def test_parts_kept_together_stay_within_their_bound() -> None:
    # Families chained by sizes they share would join into one part of every file; the bound
    # stops the chain (a batch stays small enough to balance the workers), groups stay whole.
    files = [FileEntry(f"r{r}/p{p}/a.go", f"r{r}/p{p}/a.go", 100 + p + r) for p in range(50) for r in range(2)]
    parts = versions_module.kept_together([(f.path, f.size) for f in files], 8)
    assert sorted(i for part in parts for i in part) == list(range(len(files)))
    assert max(map(len, parts)) <= 8 and len(parts) < len(files) // 2
    for group in workers.same_size(files):
        assert len({k for k, part in enumerate(parts) for i in part if i in group}) == 1
    big = [FileEntry(f"c{k}.go", f"c{k}.go", 7) for k in range(20)]
    together = versions_module.kept_together([(f.path, f.size) for f in big], 8)
    assert together == [sorted(range(20), key=lambda k: big[k].path)]  # one part, in path order


PY = """import sys


def add(a, b):
    return a + b


def main():
    for i in range(10):
        print(add(i, i * 2), "done", file=sys.stdout)
"""


def _three_versions(tmp_path: Any, first: str = GO, name: str = "main.go") -> list[FileEntry]:
    bodies = [first, first.replace("a + b", "a + b*2"), first.replace("a + b", "a + b*2").replace('"done"', '"ok"')]
    files = []
    for r, body in enumerate(bodies):
        path = tmp_path / f"go-1.{r}" / "src" / name
        path.parent.mkdir(parents=True)
        path.write_text(body)
        files.append(FileEntry(str(path), str(path), len(body)))
    return files


@pytest.mark.parametrize(
    ("norm", "first", "name", "spliced"),
    [
        # Go's root is lexed in one call (.fastlex.bulk) where no types are asked for: every
        # version afresh (tokens.token_texts); with types, the loop, and the splice.
        (VERBATIM, GO, "main.go", False),
        (Normalisation(identifiers=True, literals=True), GO, "main.go", True),
        (VERBATIM, PY, "main.py", True),
    ],
)
def test_a_batch_of_versions_gives_what_each_file_lexed_alone_gives(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, norm: Normalisation, first: str, name: str, spliced: bool
) -> None:
    files = _three_versions(tmp_path, first, name)
    monkeypatch.setattr(splice, "STRIDE", 4)
    taken: list[int] = []
    real = Splice._take
    monkeypatch.setattr(Splice, "_take", lambda self, *a: (real(self, *a), taken.append(self.taken)))
    recipe = workers.Recipe(5, norm=norm)
    batch = (tuple(workers._item(files, i) for i in range(3)), recipe, ())
    together = workers._extract_batch(batch)
    assert len(taken) == (2 if spliced else 0) and all(taken)  # the second and third took their tails
    alone = [workers.extract_batch([entry], recipe)[0] for entry in files]
    assert [r.tokens for r in together] == [r.tokens for r in alone]
    assert all((r.shingles == a.shingles).all() for r, a in zip(together, alone, strict=True))
    verbatim = [(r.verbatim is None, r.verbatim and r.verbatim[0].tolist()) for r in together]
    assert verbatim == [(a.verbatim is None, a.verbatim and a.verbatim[0].tolist()) for a in alone]


def test_what_a_pattern_reads_behind_the_shared_tail_is_not_taken_for_granted(monkeypatch: pytest.MonkeyPatch) -> None:
    # C's `#if 0` block is a comment only at a line's start (^ reads the character before): the
    # two texts share the tail from `#` on, and lex it apart.
    monkeypatch.setattr(splice, "STRIDE", 1)
    fast = _fast("c")
    text = "int a;\n#if 0\nint hidden;\n#endif\nint b;\n"
    first, where = _lexed(fast, text, None)
    assert "hidden" not in first
    edited = text.replace(";\n#if", "; #if")
    base = Lexed(fast.lexer._preprocess_lexer_input(text), first, where.marks or {})
    second, where = _lexed(fast, edited, base)
    assert second == fast.significant_tokens(edited)
    assert "hidden" in second and where.taken > 0


def test_a_version_takes_its_base_s_token_hashes_where_it_took_its_tokens(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The taken tokens' hashes are copied from the base's (the same values: the test above);
    here the base's are spoilt, so that only a copy shows it. Python: Go's versions are each
    lexed in one call, with no splice."""
    files = _three_versions(tmp_path, PY, "main.py")
    monkeypatch.setattr(splice, "STRIDE", 4)
    batch = (tuple(workers._item(files, i) for i in range(3)), workers.Recipe(5), ())
    right = workers._extract_batch(batch)
    real = Versions.hashed
    monkeypatch.setattr(Versions, "hashed", lambda self, hashes: real(self, np.zeros_like(hashes)))
    wrong = workers._extract_batch(batch)
    assert np.array_equal(wrong[0].shingles, right[0].shingles)  # the first has no base
    assert not any(np.array_equal(w.shingles, r.shingles) for w, r in zip(wrong[1:], right[1:], strict=True))


def test_versions_give_a_file_only_its_own_base_s_hashes() -> None:
    versions = _walked_as_read(["r1/p/a.go", "r2/p/a.go"])
    key, _, _ = versions.take("r1/p/a.go", FastLexer)
    versions.keep(key, FastLexer, Lexed("text", ["text"], {}))
    versions.hashed(np.array([7], dtype=np.uint64))
    versions.passed("r1/p/a.go")
    _, base, _ = versions.take("r2/p/a.go", FastLexer)
    assert base is not None and versions.copies is not None
    versions.copies.append((0, 0, 1))  # as the lex tells it: its first token is the base's first
    assert versions.reuse("r1/p/a.go") is None  # asked for by another file
    reuse = versions.reuse("r2/p/a.go")
    assert reuse is not None and reuse[0].tolist() == [7] and reuse[1] == [(0, 0, 1)]
    versions.passed("r2/p/a.go")
    assert versions.reuse("r2/p/a.go") is None and not versions.hashes
