from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minhashdup.core.bands import band_keys, candidate_pairs
from minhashdup.core.sketch import LSHIndex, MinHash

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
