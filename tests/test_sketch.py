from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minhashdup
from minhashdup import Config, ConfigError, collect
from minhashdup.core import signature
from minhashdup.core.bands import band_keys, candidate_pairs, candidate_probability
from minhashdup.core.sketch import LSHIndex, MinHash

from .conftest import TreeFactory
from .test_pipeline import planted_tree

item_sets = st.lists(st.sets(st.sampled_from([f"t{i}" for i in range(12)]), min_size=1, max_size=10), max_size=10)


@given(item_sets)
def test_index_pairs_match_the_vectorised_banding(sets: list[set[str]]) -> None:
    index = LSHIndex(bands=8, rows=2)
    hashes = [MinHash(16, items=s) for s in sets]
    for i, mh in enumerate(hashes):
        index.insert(i, mh)
    sigs = np.stack([m.signature for m in hashes]) if hashes else np.empty((0, 16), dtype=np.uint64)
    want, _ = candidate_pairs(band_keys(sigs, 8, 2), max_bucket=10**6)
    assert index.candidate_pairs() == [tuple(p) for p in want.tolist()]
    for i, mh in enumerate(hashes):
        assert i in index.query(mh)
        assert {j for j in index.query(mh) if j != i} == {b if a == i else a for a, b in want.tolist() if i in (a, b)}


def test_minhash_estimate_and_add() -> None:
    a = MinHash(256, items=[f"x{i}" for i in range(100)])
    b = MinHash(256, items=[f"x{i}" for i in range(50, 150)])  # J = 50 / 150
    assert abs(a.jaccard(b) - 1 / 3) <= 4 * np.sqrt((1 / 3) * (2 / 3) / 256)
    c = MinHash(256)
    assert c.is_empty()
    for i in range(100):
        c.add(f"x{i}")
    assert c == a and a.jaccard(c) == 1.0
    assert MinHash(8, items=[b"raw", "raw"]).signature.shape == (8,)


def test_misuse_is_a_clear_value_error() -> None:
    with pytest.raises(ValueError, match="build both alike"):
        MinHash(16).jaccard(MinHash(32))
    with pytest.raises(ValueError, match="build both alike"):
        MinHash(16, seed=1).merge(MinHash(16, seed=2))
    index = LSHIndex(bands=4, rows=4)
    index.insert("a", MinHash(16, items=["x"]))
    with pytest.raises(ValueError, match="already in the index"):
        index.insert("a", MinHash(16, items=["y"]))
    with pytest.raises(ValueError, match="use num_hashes >= 16"):
        index.insert("b", MinHash(8, items=["y"]))
    with pytest.raises(ValueError):
        MinHash(0)


# Issue 12: b-bit MinHash objects, and an index that chooses its bands and rows for a threshold.


def test_a_b_bit_minhash_has_the_scans_b_bit_signature(make_tree: TreeFactory) -> None:
    root = planted_tree(make_tree)
    config = Config(bits=8)
    corpus = collect([str(root)], config)
    assert len(corpus.sets) >= 3
    for shingles, scanned in zip(corpus.sets[:3], corpus.signatures, strict=False):
        mh = MinHash(config.num_hashes, seed=config.seed, bits=8)
        mh.update_hashes(shingles)
        want = signature.truncate(scanned, 8)  # the signature the scan made while lexing, cut as it cuts it
        assert np.array_equal(mh.signature, want) and int(mh.signature.max()) < 256
        assert np.array_equal(mh.band_keys(config.bands, config.rows), band_keys(want[None, :], 12, 4)[0])


@pytest.mark.parametrize("bits", [1, 2, 4, 8])
def test_a_b_bit_estimate_removes_chance_agreement(bits: int) -> None:
    k = 2048
    a = MinHash(k, bits=bits, items=[f"x{i}" for i in range(300)])
    b = MinHash(k, bits=bits, items=[f"x{i}" for i in range(100, 400)])  # J = 200 / 400
    disjoint = MinHash(k, bits=bits, items=[f"y{i}" for i in range(300)])
    chance = 2.0**-bits
    # With b bits two different minima agree with probability 2**-b: rows agree with
    # probability p = J + (1 - J) 2**-b, and the estimate's spread grows by 1 / (1 - 2**-b).
    p = 0.5 + 0.5 * chance
    spread = 4 * np.sqrt(p * (1 - p) / k) / (1 - chance)
    assert abs(a.jaccard(b) - 0.5) <= spread
    raw = float(np.mean(a.signature == disjoint.signature))
    assert raw > chance / 2  # the low bits do agree by chance...
    assert a.jaccard(disjoint) <= 4 * np.sqrt(chance * (1 - chance) / k) / (1 - chance)  # ...and that is removed
    assert a.jaccard(a.copy()) == 1.0


@given(item_sets, st.sampled_from([1, 3, 16, 64]))
def test_b_bit_merge_is_the_union_and_families_do_not_mix(sets: list[set[str]], bits: int) -> None:
    union: set[str] = set().union(*sets)
    merged = MinHash(16, bits=bits)
    for items in sets:
        merged = merged.merge(MinHash(16, bits=bits, items=items))
    whole = MinHash(16, bits=bits, items=union)
    assert merged == whole and np.array_equal(merged.signature, whole.signature)
    other = 64 if bits != 64 else 8
    with pytest.raises(ValueError, match="build both alike"):
        whole.merge(MinHash(16, bits=other))
    index = LSHIndex(bands=8, rows=2)
    index.insert("a", MinHash(16, bits=bits, items=["x"]))
    with pytest.raises(ValueError, match="is not comparable with them"):
        index.insert("b", MinHash(16, bits=other, items=["x"]))


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7, 0.8, 0.95])
@pytest.mark.parametrize(("max_hashes", "min_recall", "bits"), [(128, 0.99, 64), (64, 0.9, 4)])
def test_an_index_for_a_threshold_takes_tunes_recommendation(
    threshold: float, max_hashes: int, min_recall: float, bits: int
) -> None:
    index = LSHIndex(threshold=threshold, max_hashes=max_hashes, min_recall=min_recall, bits=bits)
    best = minhashdup.tune(threshold, max_hashes=max_hashes, min_recall=min_recall, bits=bits).recommended
    assert best is not None and (index.bands, index.rows) == (best.bands, best.rows)
    assert index.num_hashes <= max_hashes
    assert float(candidate_probability(threshold, index.bands, index.rows, bits)) >= min_recall


def test_an_index_for_a_threshold_finds_pairs_at_that_similarity() -> None:
    items = [f"x{i}" for i in range(1000)]
    found = 0
    for seed in range(40):  # pairs of similarity 0.7: P(candidate) >= 0.99 each
        index = LSHIndex(threshold=0.7)
        a = MinHash(index.num_hashes, seed=seed, items=items[:850])
        b = MinHash(index.num_hashes, seed=seed, items=items[150:])  # 700 / 1000
        index.insert("a", a)
        index.insert("b", b)
        found += index.candidate_pairs() == [("a", "b")]
    assert found >= 38


def test_an_index_takes_bands_and_rows_or_a_threshold() -> None:
    assert (LSHIndex().bands, LSHIndex().rows) == (12, 4)
    with pytest.raises(ValueError, match="not both"):
        LSHIndex(bands=4, threshold=0.5)
    # Checked as tune checks them: the same errors (ConfigError, a ValueError), the same words.
    with pytest.raises(ConfigError, match=r"^threshold must be above 0 and at most 1 \(got 80; did you mean 0.8\?\)$"):
        LSHIndex(threshold=80)
    with pytest.raises(ConfigError, match="raise max_hashes or lower min_recall"):
        LSHIndex(threshold=0.5, max_hashes=2)
    numpy = LSHIndex(threshold=np.float32(0.5), max_hashes=np.int64(64), min_recall=np.float64(0.99), bits=np.int8(8))
    plain = LSHIndex(threshold=0.5, max_hashes=64, bits=8)
    assert (numpy.bands, numpy.rows) == (plain.bands, plain.rows)
    for bad in ({"max_hashes": 10_000}, {"min_recall": 1.0}, {"bits": 0}):
        with pytest.raises(ConfigError) as from_index:
            LSHIndex(threshold=0.5, **bad)  # type: ignore[arg-type]
        with pytest.raises(ConfigError) as from_tune:
            minhashdup.tune(threshold=0.5, **bad)  # type: ignore[arg-type]
        assert str(from_index.value) == str(from_tune.value)
