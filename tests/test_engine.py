"""The engine seam: another engine is one module over the same per-file function and the same
core stages; signatures come from one function; the cache wraps extraction and the scan."""

from __future__ import annotations

import dataclasses
import itertools
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minhashdup import Config
from minhashdup.core import exact
from minhashdup.core.pairs import Corpus
from minhashdup.core.signature import Family
from minhashdup.engine import stages
from minhashdup.engine.base import Engine, Walked, corpus_of
from minhashdup.engine.codec import decode_result, encode_result
from minhashdup.engine.pipeline import find_pairs, scan, walk_files  # the engine's scan, below the library's
from minhashdup.engine.stages import LocalReps
from minhashdup.result import Stats
from minhashdup.source.extract import extract_file

from .conftest import TreeFactory, go_file, near_copy, render_go, result_doc


class SerialEngine:
    """What a second engine needs: extract_file on each file, then corpus_of (no pool, no cache)."""

    def collect(self, walked: Walked, config: Config) -> Corpus:
        family = Family(config.seed, config.num_hashes)
        items = [
            extract_file(i, f.real, config.shingle, family, config.lexer_engine, config.lex_timeout, config.max_size)
            for i, f in enumerate(walked.files)
        ]
        stats = Stats(files_walked=len(walked.files))
        stats.seconds = {"walk": walked.seconds, "lex": time.perf_counter() - walked.ended}
        return corpus_of(walked, items, list(walked.warnings), stats, family)


def _tree(make_tree: TreeFactory) -> Path:
    rng = random.Random(3)
    files: dict[str, str | bytes] = {}
    for n in range(4):
        blocks = go_file(rng, 10)
        files[f"p{n}/a.go"] = render_go(blocks)
        files[f"p{n}/b.go"] = render_go(near_copy(blocks, rng, n + 1))
    files["same.go"] = files["p0/a.go"]
    files["tiny.go"] = "package gen\n"
    files["data.bin"] = b"\0\1\2"
    return make_tree(files)


def test_a_second_engine_gives_the_same_result_through_the_same_core_stages(make_tree: TreeFactory) -> None:
    root = _tree(make_tree)
    config = Config(cache=False, jobs=1, threshold=0.3)
    engine: Engine = SerialEngine()
    result = find_pairs(engine.collect(walk_files([str(root)], config), config), config)
    local = scan([str(root)], config)
    assert local.pairs and local.skips
    assert result_doc(result) == result_doc(local)


@pytest.fixture
def signed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of sets signed by each call of Family.sign (in this process: use jobs=1)."""
    calls: list[int] = []
    real = Family.sign

    def counting(self: Family, sets: Any) -> Any:
        calls.append(len(sets))
        return real(self, sets)

    monkeypatch.setattr(Family, "sign", counting)
    return calls


def test_signatures_are_made_while_lexing_by_family_sign(make_tree: TreeFactory, signed: list[int]) -> None:
    root = _tree(make_tree)
    result = scan([str(root)], Config(cache=False, jobs=1, threshold=0.3))
    copies = result.stats.cache["copies"]
    assert copies == 1  # same.go: byte-identical to p0/a.go, which is lexed and signed for both
    assert sum(signed) == result.stats.files_scanned - copies  # each lexed file signed once, all by Family.sign


def test_a_cache_hit_of_another_family_is_signed_by_family_sign(make_tree: TreeFactory, signed: list[int]) -> None:
    root = _tree(make_tree)
    first = Config(cache=True, jobs=1, threshold=0.3, seed=1)
    other = dataclasses.replace(first, seed=2)
    scan([str(root)], first)
    signed.clear()
    warm = scan([str(root)], other)  # every file from the cache (data.bin, binary, is not kept)
    assert warm.stats.cache == {"hits": warm.stats.files_walked - 1, "lexed": 1, "copies": 0, "result": 0}
    assert signed == [warm.stats.files_scanned]  # the hits, signed in one call
    assert result_doc(warm) == result_doc(scan([str(root)], dataclasses.replace(other, cache=False)))
    signed.clear()
    again = scan([str(root)], dataclasses.replace(other, threshold=0.31))  # not a replay: a new option
    assert again.stats.cache["result"] == 0 and signed == []  # the signatures made above were stored


def test_a_stored_result_decodes_to_the_same_result(make_tree: TreeFactory) -> None:
    config = Config(cache=False, jobs=1, threshold=0.3)
    result = scan([str(_tree(make_tree))], config)
    assert result.groups and result.skips and result.pairs
    assert decode_result(encode_result(result), config.params()) == result


def test_full_signatures_are_kept_whatever_the_bits(make_tree: TreeFactory) -> None:
    root = _tree(make_tree)
    config = Config(cache=False, jobs=1, bits=8)
    corpus = SerialEngine().collect(walk_files([str(root)], config), config)
    family = Family(config.seed, config.num_hashes)
    assert np.array_equal(np.stack(corpus.signatures), family.sign(corpus.sets))
    assert int(np.stack(corpus.signatures).max()) >= 1 << 8  # cut to b bits only when compared


def test_the_exact_check_in_threads_keeps_what_one_thread_keeps(monkeypatch: pytest.MonkeyPatch) -> None:
    # Many candidate pairs are cut in parts, one thread each (LocalReps.verify): the pairs kept,
    # their common shingles and Jaccard come back as one thread gives them, in the input order.
    rng = np.random.default_rng(7)
    roots = [rng.integers(0, 1 << 40, 80) for _ in range(6)]
    mixed = [np.concatenate([roots[n % 6][: 40 + n % 40], rng.integers(0, 1 << 40, 8)]) for n in range(90)]
    sets = [np.unique(s).astype(np.uint64) for s in mixed]
    pairs = np.array(list(itertools.combinations(range(90), 2)), dtype=np.int64)  # 4,005
    want = exact.verify(pairs, sets, 0.5)
    assert 0 < len(want[0]) < len(pairs)  # some kept, some not
    parts: list[int] = []
    one = exact.verify

    def counted(part: np.ndarray, sets: list[np.ndarray], threshold: float) -> Any:
        parts.append(len(part))
        return one(part, sets, threshold)

    monkeypatch.setattr(exact, "verify", counted)
    monkeypatch.setattr(stages, "pool_size", lambda requested, tasks: min(requested, tasks))  # whatever the cores
    reps = LocalReps.of(sets, np.zeros((90, 1), dtype=np.uint64), Config(jobs=3))
    got = reps.verify(pairs, 0.5)
    assert sorted(parts) == [1335, 1335, 1335]
    for column, expected in zip(got, want, strict=True):
        assert column.dtype == expected.dtype
        assert column.tolist() == expected.tolist()
    parts.clear()
    alone = LocalReps.of(reps.sets, reps.sigs, None).verify(pairs, 0.5)  # no scan's config: one thread
    assert parts == [len(pairs)] and all(a.tolist() == b.tolist() for a, b in zip(alone, want, strict=True))
