"""A cold scan with the cache reads each file once (issue 12, "Defects"): the bytes read to
digest a file the cache does not know are the bytes lexed, up to a budget of held bytes; past
it, a file is read again by the extractor."""

from __future__ import annotations

import dataclasses
import random
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from minhashdup import Config, scan
from minhashdup.core.digest import content_digest
from minhashdup.engine import cached, parallel
from minhashdup.engine import workers as workers_module
from minhashdup.result import Result, SkipReason
from minhashdup.source import extract as extract_module
from minhashdup.source.extract import extract_file

from .conftest import TreeFactory, go_file, near_copy, render_go

NAMES = ["f0.go", "f1.go", "f2.go", "f3.go", "f4.go"]
SIZE = 4000  # every file's size: a budget is then a number of files


def _tree(make_tree: TreeFactory) -> Path:
    """Five files of SIZE bytes; f0/f2 and f1/f3 are near copies (padding: blank lines)."""
    rng = random.Random(7)
    a, b = go_file(rng, 6), go_file(rng, 6)
    blocks = [a, b, near_copy(a, rng, 1), near_copy(b, rng, 1), go_file(rng, 6)]
    texts = [render_go(block) for block in blocks]
    assert all(len(text.encode()) < SIZE for text in texts)
    return make_tree({name: text + "\n" * (SIZE - len(text.encode())) for name, text in zip(NAMES, texts, strict=True)})


def _pairs(result: Result) -> list[tuple[str, str, float]]:
    return [(Path(p.a).name, Path(p.b).name, p.jaccard) for p in result.pairs]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each file's content is read, by name: where the cache reads a file to
    digest it and where the extractor reads it (in this process: use jobs=1)."""
    counts: Counter[str] = Counter()
    for module, name in ((cached, "read_regular_with_stat"), (extract_module, "read_regular")):
        real = getattr(module, name)

        def counting(path: str, *args: Any, real: Any = real, **kwargs: Any) -> Any:
            counts[Path(path).name] += 1
            return real(path, *args, **kwargs)

        monkeypatch.setattr(module, name, counting)
    return counts


def test_a_cold_scan_with_the_cache_reads_each_file_once(make_tree: TreeFactory, reads: Counter[str]) -> None:
    root = _tree(make_tree)
    config = Config(cache=True, jobs=1, threshold=0.3)
    expected = _pairs(scan([str(root)], dataclasses.replace(config, cache=False)))
    assert reads == Counter(NAMES)  # without the cache: the extractor's one read each
    reads.clear()
    result = scan([str(root)], config)
    assert result.stats.cache == {"hits": 0, "lexed": 5, "copies": 0, "result": 0}
    assert reads == Counter(NAMES)
    assert _pairs(result) == expected and len(expected) == 2 and result.warnings == []
    # What was stored is right: another threshold (no stored result) takes every file from it.
    other = dataclasses.replace(config, threshold=0.1)
    again = scan([str(root)], other)
    assert again.stats.cache == {"hits": 5, "lexed": 0, "copies": 0, "result": 0}
    assert _pairs(again) == _pairs(scan([str(root)], dataclasses.replace(other, cache=False)))


def test_past_the_budget_a_file_is_read_again(
    make_tree: TreeFactory, reads: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(make_tree)
    config = Config(cache=True, jobs=1, threshold=0.3)
    expected = _pairs(scan([str(root)], dataclasses.replace(config, cache=False)))
    reads.clear()
    monkeypatch.setattr(cached, "HELD_BYTES", 2 * SIZE + SIZE // 2)  # room for two files, in walk order
    result = scan([str(root)], config)
    assert reads == Counter({"f0.go": 1, "f1.go": 1, "f2.go": 2, "f3.go": 2, "f4.go": 2})
    assert _pairs(result) == expected and result.warnings == []


@pytest.mark.parametrize("held", [True, False], ids=["held", "read-again"])
def test_workers_are_given_the_bytes_read(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, held: bool) -> None:
    # Workers are other processes: that they do not read a held file is seen by deleting every
    # file once digested. Held, the scan is the same; read again, every file is unreadable.
    root = _tree(make_tree)
    config = Config(cache=True, jobs=2, threshold=0.3)
    expected = _pairs(scan([str(root)], dataclasses.replace(config, cache=False)))
    monkeypatch.setattr(workers_module, "_INLINE_BYTES", 0)  # a small tree, lexed by workers
    monkeypatch.setattr(parallel, "usable_cores", lambda: 2)  # the same on any machine
    pools: list[int] = []
    real_pool, real_digests = parallel.ProcessPoolExecutor, cached.file_keys

    def recording(max_workers: int, **kwargs: Any) -> Any:
        pools.append(max_workers)
        return real_pool(max_workers, **kwargs)

    def digest_then_delete(*args: Any) -> Any:
        digests = real_digests(*args)
        for name in NAMES:
            (root / name).unlink()
        return digests

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", recording)
    monkeypatch.setattr(cached, "file_keys", digest_then_delete)
    if not held:
        monkeypatch.setattr(cached, "HELD_BYTES", 0)
    result = scan([str(root)], config)
    assert pools == [1]  # five .go files of one size may be copies: one batch, in one worker process
    if held:
        assert _pairs(result) == expected and result.skips == []
    else:
        assert result.pairs == [] and [s.reason for s in result.skips] == [SkipReason.UNREADABLE] * 5


def test_extract_file_lexes_the_bytes_given_under_the_same_checks() -> None:
    path = "examples/go/reader.go"
    data = Path(path).read_bytes()
    read = extract_file(0, path, 5)
    given = extract_file(0, "/nonexistent/reader.go", 5, data=data)  # the path is never opened
    assert given.skip is None and given.lexer == read.lexer == "Go" and given.tokens == read.tokens
    assert given.shingles.tolist() == read.shingles.tolist() and given.digest == read.digest == content_digest(data)
    large = extract_file(0, path, 5, max_size=len(data) - 1, data=data)
    assert (large.skip, large.detail) == (SkipReason.TOO_LARGE, f"over --max-size ({len(data) - 1} bytes)")
    binary = extract_file(0, path, 5, data=data + b"\0")
    assert (binary.skip, binary.digest) == (SkipReason.BINARY, content_digest(data + b"\0"))


def _cached_clone(make_tree: TreeFactory, config: Config) -> Path:
    """A copy of a tree that ``config``'s cache has scanned (new stats, same bytes), its last
    file changed by a comment: four hits and one file to lex."""
    root = _tree(make_tree)
    scan([str(root)], config)
    clone = root.parent / "clone"
    shutil.copytree(root, clone)
    (clone / "f4.go").write_text((clone / "f4.go").read_text().replace("\n\n", "\n// x\n\n", 1))
    return clone


def test_only_the_bytes_of_files_to_lex_are_held(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fresh clone of a tree the cache knows (new stats, same bytes): every file is read for
    # its digest and found in the store; holding their bytes would only cost memory.
    config = Config(cache=True, jobs=1, threshold=0.3)
    clone = _cached_clone(make_tree, config)
    held: list[set[str]] = []
    real = cached.file_keys

    def spying(store: Any, files: Any, *args: Any) -> Any:
        digests, kept, paired = real(store, files, *args)
        held.append({Path(files[i].path).name for i in kept})
        return digests, kept, paired

    monkeypatch.setattr(cached, "file_keys", spying)
    monkeypatch.setattr(cached, "_CHECKED", 2)  # several lookups, a partial one last
    result = scan([str(clone)], dataclasses.replace(config, threshold=0.31))
    assert result.stats.cache == {"hits": 4, "lexed": 1, "copies": 0, "result": 0}
    assert held == [{"f4.go"}]  # the changed file, to be lexed; not the four the cache knows


@pytest.mark.parametrize("checked", [2, 256], ids=["full-lookups", "budget-full-first"])
def test_the_bytes_of_files_found_in_the_store_give_their_room_back(
    make_tree: TreeFactory, reads: Counter[str], monkeypatch: pytest.MonkeyPatch, checked: int
) -> None:
    # A fresh clone of a cached tree whose last file changed: the files read before it, all in
    # the store, fill the budget while they wait for their lookup; once found there, their
    # bytes are dropped and their room is free again for the file to lex. The lookup comes
    # when _CHECKED files wait, or when the budget is full before that (with larger files or
    # a larger --max-size, fewer than _CHECKED files fill it).
    config = Config(cache=True, jobs=1, threshold=0.3)
    clone = _cached_clone(make_tree, config)
    monkeypatch.setattr(cached, "HELD_BYTES", 2 * SIZE + SIZE // 2)  # two files wait, in walk order
    monkeypatch.setattr(cached, "_CHECKED", checked)
    reads.clear()
    result = scan([str(clone)], dataclasses.replace(config, threshold=0.31))
    assert result.stats.cache == {"hits": 4, "lexed": 1, "copies": 0, "result": 0} and result.warnings == []
    assert reads == Counter(NAMES)  # f4.go too: the bytes read for its digest are the bytes lexed
