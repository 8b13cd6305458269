from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from minhashdup.core.runs import pairs_in_runs, runs


@given(st.lists(st.integers(0, 6), max_size=60), st.integers(1, 40))
def test_pairs_in_runs_are_all_pairs_of_equal_keys_in_bounded_chunks(keys: list[int], chunk: int) -> None:
    ordered = np.sort(np.array(keys, dtype=np.int64))
    starts, sizes = runs(ordered)
    got = []
    for p, q in pairs_in_runs(starts, sizes, chunk=chunk):
        assert len(p) == len(q) and (len(p) <= chunk or len(set(p.tolist())) == 1)
        got.extend(zip(p.tolist(), q.tolist(), strict=True))
    want = [(i, j) for i, j in itertools.combinations(range(len(ordered)), 2) if ordered[i] == ordered[j]]
    assert sorted(got) == want
