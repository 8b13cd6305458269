from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minhashdup.core import signature as sig
from minhashdup.core.hashing import mix64
from minhashdup.core.sketch import MinHash


def _pair_with_overlap(seed: int, common: int, only_a: int, only_b: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    values = np.unique(rng.integers(0, 2**63, common + only_a + only_b + 64, dtype=np.uint64))
    rng.shuffle(values)
    shared = values[:common]
    a = np.concatenate([shared, values[common : common + only_a]])
    b = np.concatenate([shared, values[common + only_a : common + only_a + only_b]])
    return np.sort(a), np.sort(b)


@settings(derandomize=True, max_examples=150)
@given(st.integers(0, 2**32), st.integers(0, 300), st.integers(0, 300), st.integers(0, 300))
def test_estimate_within_four_standard_deviations(seed: int, common: int, only_a: int, only_b: int) -> None:
    a, b = _pair_with_overlap(seed, common, only_a, only_b)
    if len(a) + len(b) == 0:
        return
    true_j = common / (common + only_a + only_b)
    seeds = sig.hash_seeds(7, 256)
    estimate = float(sig.agreement(sig.signature(a, seeds), sig.signature(b, seeds)))
    assert abs(estimate - true_j) <= 4 * sig.standard_error(true_j, 256) + 1e-12


def test_identical_sets_have_identical_signatures_and_empty_is_sentinel() -> None:
    seeds = sig.hash_seeds(1, 16)
    a = np.array([3, 9, 27], dtype=np.uint64)
    assert float(sig.agreement(sig.signature(a, seeds), sig.signature(a.copy(), seeds))) == 1.0
    assert (sig.signature(np.empty(0, dtype=np.uint64), seeds) == sig.EMPTY).all()


@pytest.mark.usefixtures("monkeypatch_block")
@given(st.lists(st.sets(st.integers(0, 2**64 - 1), max_size=40), max_size=12), st.integers(0, 2**64 - 1))
def test_batched_signatures_equal_the_definition(sets: list[set[int]], seed: int) -> None:
    seeds = sig.hash_seeds(seed, 8)
    arrays = [np.array(sorted(s), dtype=np.uint64) for s in sets]
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in arrays], out=offsets[1:])
    values = np.concatenate(arrays) if arrays else np.empty(0, dtype=np.uint64)
    got = sig.signatures(values, offsets, seeds)
    for row, s in zip(got.tolist(), sets, strict=True):
        # The definition, one value at a time: h_i(x) = mix64(x ^ seed_i), then the minimum.
        want = [min((int(mix64([x ^ int(si)])[0]) for x in s), default=int(sig.EMPTY)) for si in seeds]
        assert row == want


@pytest.fixture(scope="module")
def monkeypatch_block() -> Iterator[None]:
    # Tiny blocks so that sets straddle block boundaries in the batched computation.
    old = sig._BLOCK_CELLS
    sig._BLOCK_CELLS = 8 * 5
    yield None
    sig._BLOCK_CELLS = old


@given(st.sets(st.text(max_size=5), max_size=30), st.sets(st.text(max_size=5), max_size=30))
def test_merge_is_the_signature_of_the_union(a: set[str], b: set[str]) -> None:
    ma, mb = MinHash(64, items=a), MinHash(64, items=b)
    assert ma.merge(mb) == MinHash(64, items=a | b)
    assert ma.merge(mb) == mb.merge(ma)
    assert ma == MinHash(64, items=a)  # merge leaves its operands alone


@pytest.mark.parametrize("bits", [1, 4, 8, 16])
def test_b_bit_estimate_is_corrected_for_chance(bits: int) -> None:
    k = 1024
    seeds = sig.hash_seeds(9, k)
    for common, only in ((100, 100), (30, 270), (0, 300)):
        a, b = _pair_with_overlap(common + bits, common, only // 2, only - only // 2)
        j = common / (common + only)
        est = float(
            sig.estimate(sig.truncate(sig.signature(a, seeds), bits), sig.truncate(sig.signature(b, seeds), bits), bits)
        )
        chance = 2.0**-bits
        agree = j + (1 - j) * chance
        sd = np.sqrt(agree * (1 - agree) / k) / (1 - chance)
        assert abs(est - j) <= 4 * sd + 1e-9
    assert sig.truncate(np.array([0xFFFF], dtype=np.uint64), 4).tolist() == [0xF]


@pytest.mark.usefixtures("monkeypatch_block")
@given(st.sets(st.integers(0, 2**64 - 1), max_size=40), st.integers(0, 2**64 - 1))
def test_one_signature_equals_the_definition_across_blocks(values: set[int], seed: int) -> None:
    seeds = sig.hash_seeds(seed, 8)
    got = sig.signature(np.array(sorted(values), dtype=np.uint64), seeds).tolist()
    assert got == [min((int(mix64([x ^ int(si)])[0]) for x in values), default=int(sig.EMPTY)) for si in seeds]


@given(st.data(), st.sets(st.integers(0, 2**64 - 1), max_size=60), st.integers(0, 2**64 - 1))
def test_a_version_signed_from_the_one_before_has_its_own_signature(
    data: st.DataObject, base: set[int], seed: int
) -> None:
    # Values taken from the base (some rows losing their smallest, others not) and values added.
    removed = data.draw(st.sets(st.sampled_from(sorted(base)), max_size=15) if base else st.just(set[int]()))
    added = data.draw(st.sets(st.integers(0, 2**64 - 1), max_size=15))
    seeds = sig.hash_seeds(seed, 16)
    version = (base - removed) | added
    a, b = (np.array(sorted(s), dtype=np.uint64) for s in (base, version))
    got = sig.signature_after(a, sig.signature(a, seeds), b, seeds)
    if sig._DIFFER * len(base ^ version) > len(version):
        assert got is None  # too different: made whole by the caller (Family.sign_after)
    else:
        assert got is not None and got.tolist() == sig.signature(b, seeds).tolist()
    assert sig.Family(seed, 16).sign_after(a, sig.signature(a, seeds), b).tolist() == sig.signature(b, seeds).tolist()


def test_a_row_whose_smallest_value_goes_is_made_again() -> None:
    # The base's smallest values under each function taken away: every row is made again.
    seeds = sig.hash_seeds(7, 8)
    base = np.arange(1000, dtype=np.uint64)
    h = [sig.signature(np.array([x], dtype=np.uint64), seeds) for x in base]
    smallest = {int(np.argmin([row[i] for row in h])) for i in range(8)}
    version = np.array([x for x in base if int(x) not in smallest], dtype=np.uint64)
    got = sig.signature_after(base, sig.signature(base, seeds), version, seeds)
    assert got is not None and got.tolist() == sig.signature(version, seeds).tolist()
    assert (got != sig.signature(base, seeds)).all()
