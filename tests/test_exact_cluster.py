from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minhashdup.cluster import components
from minhashdup.exact import all_pairs, prefix_length, size_bound, verify

small_sets = st.lists(st.sets(st.integers(0, 12), max_size=10), min_size=2, max_size=8)


@given(small_sets, st.floats(0.05, 1.0))
def test_verify_keeps_exactly_the_pairs_at_or_above_threshold(sets: list[set[int]], t: float) -> None:
    arrays = [np.array(sorted(s), dtype=np.uint64) for s in sets]
    pairs = np.array(list(itertools.combinations(range(len(sets)), 2)), dtype=np.int64)
    kept, common, jac = verify(pairs, arrays, t)
    want = {}
    for i, j in pairs.tolist():
        union = sets[i] | sets[j]
        if union and len(sets[i] & sets[j]) / len(union) >= t:
            want[(i, j)] = len(sets[i] & sets[j]) / len(union)
    assert {tuple(p): float(x) for p, x in zip(kept.tolist(), jac, strict=True)} == want
    assert common.tolist() == [len(sets[i] & sets[j]) for i, j in kept.tolist()]


def test_size_bound() -> None:
    assert size_bound(10, 40) == 0.25
    assert size_bound(0, 0) == 1.0


@given(st.integers(1, 30), st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=40))
def test_components_partition_the_linked_nodes(n: int, edges: list[tuple[int, int]]) -> None:
    edges = [(a % n, b % n) for a, b in edges if a % n != b % n]
    comps = components(n, edges)
    seen = [x for c in comps for x in c]
    assert len(seen) == len(set(seen))
    where = {x: k for k, c in enumerate(comps) for x in c}
    for a, b in edges:
        assert where[a] == where[b]
    assert all(c == sorted(c) and len(c) > 1 for c in comps)
    assert [(-len(c), c[0]) for c in comps] == sorted((-len(c), c[0]) for c in comps)


def _brute(sets: list[set[int]], t: float) -> dict[tuple[int, int], float]:
    out = {}
    for i, j in itertools.combinations(range(len(sets)), 2):
        union = sets[i] | sets[j]
        if union and len(sets[i] & sets[j]) / len(union) >= t:
            out[(i, j)] = len(sets[i] & sets[j]) / len(union)
    return out


thresholds = st.one_of(
    st.sampled_from([1e-9, 0.01, 0.1, 0.5, 0.7, 0.99, 1.0]),
    st.floats(0.001, 1.0),
    st.integers(1, 20).flatmap(lambda d: st.integers(1, d).map(lambda n: n / d)),  # t = o/u exactly
)
corpora = st.one_of(
    st.lists(st.sets(st.integers(0, 15), max_size=12), max_size=14),
    st.lists(st.sets(st.integers(0, 60), min_size=10, max_size=40), max_size=10),  # long prefixes
)


@settings(max_examples=300)
@given(corpora, thresholds)
def test_all_pairs_finds_exactly_what_brute_force_finds(sets: list[set[int]], t: float) -> None:
    arrays = [np.array(sorted(s), dtype=np.uint64) for s in sets]
    pairs, common, jac = all_pairs(arrays, t)
    got = {tuple(p): float(j) for p, j in zip(pairs.tolist(), jac, strict=True)}
    assert got == _brute(sets, t)
    assert common.tolist() == [len(sets[i] & sets[j]) for i, j in pairs.tolist()]


@given(st.lists(st.integers(0, 5).map(lambda x: {x}), max_size=10))
def test_all_pairs_on_sets_of_size_one(sets: list[set[int]]) -> None:
    arrays = [np.array(sorted(s), dtype=np.uint64) for s in sets]
    got = {tuple(p) for p in all_pairs(arrays, 1.0)[0].tolist()}
    assert got == {(i, j) for i, j in itertools.combinations(range(len(sets)), 2) if sets[i] == sets[j]}


def test_prefix_length_never_cut_by_rounding() -> None:
    sizes = np.arange(0, 200, dtype=np.int64)
    for t in (0.1, 0.3, 0.7, 0.9, 1.0):
        exact = np.array([n - math.ceil(round(t * n, 9)) + 1 if n else 0 for n in sizes.tolist()])
        assert (prefix_length(sizes, t) >= np.minimum(exact, sizes)).all()
