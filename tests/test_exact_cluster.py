from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from minhashdup.cluster import components
from minhashdup.exact import size_bound, verify

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
