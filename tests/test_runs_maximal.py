"""``maximal_runs``: the greedy tiling of ``a`` by stretches of ``b``, checked against the
definition computed by brute force (issue 12)."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minhashdup import substrings
from minhashdup.substrings import maximal_runs

Triple = tuple[int, int, int]  # start in a, start in b, size


def brute_force(a: list[str], b: list[str], minimum: int) -> list[Triple]:
    """The definition, literally: take the longest shared stretch whose part of ``a`` is still
    free (then the first in a, then the first in b), mark it taken, repeat."""
    taken = [False] * len(a)
    found: list[Triple] = []
    while True:
        best: Triple | None = None
        for i in range(len(a)):
            for j in range(len(b)):
                size = 0
                while i + size < len(a) and j + size < len(b) and not taken[i + size] and a[i + size] == b[j + size]:
                    size += 1
                if size >= minimum and (best is None or size > best[2]):
                    best = (i, j, size)
        if best is None:
            return found
        found.append(best)
        taken[best[0] : best[0] + best[2]] = [True] * best[2]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 2), max_size=45),
    st.lists(st.integers(0, 2), max_size=45),
    st.integers(1, 3),
    st.integers(0, 6),
)
def test_maximal_runs_is_the_greedy_tiling_and_any_limit_a_prefix(
    a: list[int], b: list[int], minimum: int, limit: int
) -> None:
    want = brute_force([str(x) for x in a], [str(x) for x in b], minimum)
    arrays = np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64)
    assert [tuple(r) for r in maximal_runs(*arrays, minimum=minimum)] == want
    assert [tuple(r) for r in maximal_runs(*arrays, minimum=minimum, limit=limit)] == want[:limit]


def test_maximal_runs_refuses_a_minimum_below_one() -> None:
    with pytest.raises(ValueError, match=r"minimum must be at least 1 \(got 0\)"):
        maximal_runs(np.array([1]), np.array([1]), minimum=0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2), max_size=30), st.lists(st.integers(0, 2), max_size=30), st.integers(2, 4))
def test_windows_that_hash_alike_do_not_make_false_runs(a: list[int], b: list[int], minimum: int) -> None:
    # Every window hashed to one value: the runs found on windows are checked against the
    # elements and, false, redone on the elements themselves.
    def collide(tokens: np.ndarray, k: int) -> np.ndarray:
        return np.zeros(max(0, len(tokens) - k + 1), dtype=np.uint64)

    want = brute_force([str(x) for x in a], [str(x) for x in b], minimum)
    with mock.patch.object(substrings, "shingle_hashes", collide):
        got = maximal_runs(np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64), minimum=minimum)
    assert [tuple(r) for r in got] == want
