from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minhashdup.core.hashing import hash_text, mix64, seed_sequence
from minhashdup.core.shingles import intersection_size, jaccard, shingle_hashes, shingle_set, token_hashes

# Frozen from the first release: a change means every stored shingle hash changes.
GOLDEN_SHINGLES = [2422098373664073644, 5703637948983470833]
token_lists = st.lists(st.sampled_from(["a", "b", "c", "(", ")", "if", "x", "é", "\udcff"]), max_size=60)
u64_sets = st.sets(st.integers(0, 2**64 - 1), max_size=80).map(lambda s: np.array(sorted(s), dtype=np.uint64))


def test_hashes_are_stable_across_runs_and_machines() -> None:
    # Golden values: a change here changes every cache and baseline; bump the schema then.
    assert hash_text("func") == 0xCAC928352745F674
    assert int(mix64([1])[0]) == 0x5692161D100B05E5
    # splitmix64 seeded with 0: its published first two outputs.
    assert [int(x) for x in seed_sequence(0, 2)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]
    assert shingle_hashes(token_hashes(list("abcdef")), 5).tolist() == GOLDEN_SHINGLES
    tokens = token_hashes(["x", ":=", "1"])
    assert tokens.dtype == np.uint64 and len(set(tokens.tolist())) == 3


@given(token_lists, st.integers(1, 8))
def test_n_minus_k_plus_one_shingles_before_dedup(tokens: list[str], k: int) -> None:
    hashes = shingle_hashes(token_hashes(tokens), k)
    assert len(hashes) == max(0, len(tokens) - k + 1)
    # Equal runs of tokens give equal shingles, different runs (almost surely) differ.
    runs = [tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1)]
    assert len(set(runs)) == len(set(hashes.tolist()))


def _shingle_oracle(tokens: list[str], k: int) -> list[int]:
    """Each distinct run of ``k`` tokens hashed on its own, as a sorted list of Python ints."""
    runs = {tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}
    return sorted({int(shingle_hashes(token_hashes(list(r)), k)[0]) for r in runs})


@given(token_lists, st.integers(1, 6))
def test_shingle_set_is_sorted_and_unique(tokens: list[str], k: int) -> None:
    s = shingle_set(token_hashes(tokens), k)
    assert s.dtype == np.uint64
    # Exactly the hashes of the distinct k-token runs, ascending, each once.
    assert s.tolist() == _shingle_oracle(tokens, k)


def test_shingle_set_of_a_repeating_text() -> None:
    tokens = ["a", "b", "a", "b", "a", "b", "c"]  # runs of 3: (a b a), (b a b) repeated, then (a b c)
    assert shingle_set(token_hashes(tokens), 3).tolist() == _shingle_oracle(tokens, 3)
    assert len(shingle_set(token_hashes(tokens), 3)) == 3
    assert shingle_set(token_hashes(tokens), 8).tolist() == []


def test_shingles_depend_on_order() -> None:
    a = shingle_set(token_hashes(list("abcde")), 5)
    b = shingle_set(token_hashes(list("edcba")), 5)
    assert a.tolist() != b.tolist()


@pytest.mark.parametrize(
    ("small", "large", "looked_up"), [(300, 400, False), (300, 2400, False), (300, 2401, True), (10, 4000, True)]
)
def test_sets_merged_or_looked_up_count_the_same_common_values(
    small: int, large: int, looked_up: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Like sizes are merged, a set more than eight times the other's looked up: both, near the line.
    rng = np.random.default_rng(small + large)
    values = np.unique(rng.integers(0, 2**64, 2 * (small + large), dtype=np.uint64))
    a = np.sort(rng.choice(values, small, replace=False))
    rest = np.setdiff1d(values, a)
    b = np.sort(np.concatenate([a[: small // 3], rng.choice(rest, large - small // 3, replace=False)]))
    assert (len(a), len(np.unique(b))) == (small, large)
    searches = []
    searchsorted = np.searchsorted
    monkeypatch.setattr(np, "searchsorted", lambda *args, **kw: searches.append(1) or searchsorted(*args, **kw))
    assert intersection_size(a, b) == intersection_size(b, a) == small // 3
    assert bool(searches) == looked_up


@given(u64_sets, u64_sets)
def test_jaccard_matches_python_sets(a: np.ndarray, b: np.ndarray) -> None:
    sa, sb = set(a.tolist()), set(b.tolist())
    assert intersection_size(a, b) == len(sa & sb)
    expected = len(sa & sb) / len(sa | sb) if sa | sb else 1.0
    assert jaccard(a, b) == expected
    assert jaccard(a, b) == jaccard(b, a)
    assert jaccard(a, a) == 1.0


@given(token_lists)
def test_token_hashes_are_hash_text_of_each_token(tokens: list[str]) -> None:
    assert token_hashes(tokens).tolist() == [hash_text(t) for t in tokens]


@given(st.lists(token_lists, min_size=1, max_size=6))
def test_token_hashes_kept_between_calls_are_the_hashes_of_the_texts(calls: list[list[str]]) -> None:
    from minhashdup.core import shingles

    old = shingles.KEPT_TOKENS
    shingles.KEPT_TOKENS = 4  # so small that the kept hashes are dropped again and again
    try:
        for tokens in calls:
            assert token_hashes(tokens).tolist() == [hash_text(t) for t in tokens]
            assert len(shingles._KNOWN) <= shingles.KEPT_TOKENS + len(set(tokens))  # bounded
    finally:
        shingles.KEPT_TOKENS = old
