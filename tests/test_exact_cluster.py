from __future__ import annotations

import itertools
import math
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minhashdup.core.cluster import components, roots
from minhashdup.core.exact import all_pairs, prefix_length, size_bound, verify
from minhashdup.core.pairs import Groups, expand, named_groups

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


def _reachable_components(n: int, edges: list[tuple[int, int]]) -> list[set[int]]:
    """Connected components by graph search (no union-find): the oracle for ``components``."""
    neighbours: dict[int, set[int]] = {x: set() for x in range(n)}
    for a, b in edges:
        neighbours[a].add(b)
        neighbours[b].add(a)
    seen: set[int] = set()
    out = []
    for start in range(n):
        if start in seen:
            continue
        component, todo = {start}, [start]
        while todo:
            for nxt in neighbours[todo.pop()] - component:
                component.add(nxt)
                todo.append(nxt)
        seen |= component
        out.append(component)
    return out


@given(st.integers(1, 30), st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=40))
def test_components_are_exactly_the_connected_components(n: int, edges: list[tuple[int, int]]) -> None:
    edges = [(a % n, b % n) for a, b in edges if a % n != b % n]
    comps = components(n, edges)
    oracle = _reachable_components(n, edges)
    # Same partition as graph search: nothing merged that no path joins, nothing left apart.
    assert sorted(map(sorted, comps)) == sorted(sorted(c) for c in oracle if len(c) > 1)
    assert all(c == sorted(c) for c in comps)
    assert [(-len(c), c[0]) for c in comps] == sorted((-len(c), c[0]) for c in comps)
    assert roots(n, edges) == [min(c) for x in range(n) for c in oracle if x in c]


def test_components_keep_unlinked_groups_apart() -> None:
    # Two chains and a lone node: a union-find that over-merges joins the chains.
    assert components(7, [(5, 3), (0, 2), (3, 1), (2, 6)]) == [[0, 2, 6], [1, 3, 5]]
    assert roots(7, [(5, 3), (0, 2), (3, 1), (2, 6)]) == [0, 1, 0, 1, 4, 1, 0]
    assert components(4, []) == []


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


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=2, max_size=7),
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.sampled_from([0.5, 0.75, 1.0])), max_size=12),
    st.randoms(use_true_random=False),
)
def test_expand_lists_pairs_by_jaccard_then_paths(
    sizes: list[int], edges: list[tuple[int, int, float]], rng: random.Random
) -> None:
    # Paths named so that a group's order, the edges' order and the pairs' order all differ:
    # ties in Jaccard (the values repeat, and identical groups give 1.0) sort by path a, then b.
    names = [f"{rng.choice('zmab')}{k:02d}.go" for k in range(sum(sizes))]
    members, start = [], 0
    for n in sizes:
        members.append(list(range(start, start + n)))
        start += n
    groups = named_groups(names, np.full(len(names), 10), Groups(members))
    ends = [(a % len(sizes), b % len(sizes), j) for a, b, j in edges]
    picked = {(min(a, b), max(a, b)): j for a, b, j in ends if a != b}
    ok = np.array(sorted(picked, reverse=True), dtype=np.int64).reshape(-1, 2)
    jac = np.array([picked[tuple(e)] for e in ok.tolist()], dtype=np.float64)
    listed, total = expand(groups, ok, np.full(len(ok), 5), jac, jac)
    keys = [(-p.jaccard, p.a, p.b) for p in listed]
    assert keys == sorted(keys) and all(p.a < p.b for p in listed)
    assert len({(p.a, p.b) for p in listed}) == len(listed) == total  # small groups: every pair listed
