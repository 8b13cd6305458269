from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minhashdup.core import signature as sig
from minhashdup.core.bands import (
    Choice,
    band_keys,
    candidate_pairs,
    candidate_probability,
    knee,
    most_selective,
    recommend,
    tune,
)


def s_curve(s: float, bands: int, rows: int, bits: int = 64) -> float:
    """``1 - (1 - q**rows)**bands`` written out here, ``q`` the chance one row agrees: the
    tests' own P(s), not the package's."""
    q = s if bits >= 64 else s + (1 - s) * 2.0**-bits
    return 1 - (1 - q**rows) ** bands


def _enumerated(s: float, bands: int, rows: int) -> float:
    """P(s) with no formula: the chances of every pattern of agreeing rows with a whole band."""
    total = 0.0
    for agree in itertools.product((True, False), repeat=bands * rows):
        if any(all(agree[k * rows : (k + 1) * rows]) for k in range(bands)):
            total += s ** sum(agree) * (1 - s) ** (len(agree) - sum(agree))
    return total


def area_under(bands: int, rows: int) -> float:
    """``integral_0^1 P(s) ds``, exactly: ``1 - sum_k C(b, k) (-1)^k / (r k + 1)``."""
    rest = sum(Fraction((-1) ** k * math.comb(bands, k), rows * k + 1) for k in range(bands + 1))
    return float(1 - rest)


def cheapest_setting(threshold: float, budget: int, recall: float) -> tuple[int, int] | None:
    """(bands, rows) with the fewest hashes reaching ``recall`` at ``threshold``, by trying every
    setting of 2..10 rows within ``budget`` (ties: fewer candidates per true pair)."""
    reaching = [
        (b * r, area_under(b, r), b, r)
        for r in range(2, 11)
        for b in range(1, budget // r + 1)
        if s_curve(threshold, b, r) >= recall
    ]
    return min(reaching)[2:] if reaching else None


@pytest.mark.parametrize(("bands", "rows"), [(1, 1), (3, 2), (2, 3), (4, 3), (1, 5), (6, 2)])
def test_s_curve_is_the_chance_that_a_whole_band_agrees(bands: int, rows: int) -> None:
    similarities = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
    want = [_enumerated(s, bands, rows) for s in similarities]
    assert candidate_probability(similarities, bands, rows).tolist() == pytest.approx(want, abs=1e-12)


def test_s_curve_values() -> None:
    similarities = [0.0, 0.3, 0.5, 0.7, 1.0]
    p = candidate_probability(similarities, 12, 4)
    assert p[0] == 0.0 and p[-1] == 1.0
    assert p.tolist() == pytest.approx([s_curve(s, 12, 4) for s in similarities], abs=1e-12)
    for bits in (1, 4, 32):
        got = candidate_probability(similarities, 12, 4, bits).tolist()
        assert got == pytest.approx([s_curve(s, 12, 4, bits) for s in similarities], abs=1e-12)
    assert knee(12, 4) == pytest.approx(12 ** (-1 / 4), abs=1e-12)
    assert (np.diff(candidate_probability(np.linspace(0, 1, 101), 20, 5)) >= 0).all()


@given(hnp.arrays(np.uint64, st.tuples(st.integers(0, 30), st.integers(1, 4)), elements=st.integers(0, 3)))
def test_candidates_are_exactly_the_pairs_sharing_a_key(keys: np.ndarray) -> None:
    pairs, oversize = candidate_pairs(keys, max_bucket=10_000)
    want = sorted((i, j) for i, j in itertools.combinations(range(len(keys)), 2) if (keys[i] == keys[j]).any())
    assert [tuple(p) for p in pairs.tolist()] == want
    assert oversize == []


def test_oversize_bucket_is_reported_and_skipped() -> None:
    keys = np.zeros((50, 2), dtype=np.uint64)
    keys[:, 1] = np.arange(50)
    keys[48:, 1] = 999  # band 1 has one small bucket of two
    pairs, oversize = candidate_pairs(keys, max_bucket=10)
    assert pairs.tolist() == [[48, 49]]
    assert [(o.band, o.size) for o in oversize] == [(0, 50)]
    assert 0 <= oversize[0].example < 50


def test_band_keys_equal_exactly_when_band_rows_equal() -> None:
    rng = np.random.default_rng(3)
    sigs = rng.integers(0, 2**63, (6, 12), dtype=np.uint64)
    sigs[1, :4] = sigs[0, :4]  # band 0 of rows 0 and 1 equal
    sigs[2, 4:7] = sigs[0, 4:7]  # band 1 equal but for one row
    keys = band_keys(sigs, 3, 4)
    assert keys[0, 0] == keys[1, 0]
    assert keys[0, 1] != keys[2, 1]
    with pytest.raises(ValueError):
        band_keys(sigs, 4, 4)


def _simulated_rate(similarity: float, bands: int, rows: int, bits: int, trials: int, seed: int) -> float:
    """Share of random set pairs of exact similarity ``similarity`` that share a band."""
    union = 200
    common = round(similarity * union)
    rng = np.random.default_rng(seed)
    seeds = sig.hash_seeds(seed + 11, bands * rows)
    hits = 0
    for _ in range(trials):
        values = rng.integers(0, 2**63, union, dtype=np.uint64)
        split = common + (union - common) // 2
        a, b = np.sort(values[:split]), np.sort(np.r_[values[:common], values[split:]])
        ka = band_keys(sig.truncate(sig.signature(a, seeds), bits)[None, :], bands, rows)
        kb = band_keys(sig.truncate(sig.signature(b, seeds), bits)[None, :], bands, rows)
        hits += bool((ka == kb).any())
    return hits / trials


@pytest.mark.parametrize("similarity", [0.3, 0.5, 0.6, 0.8])
def test_simulated_candidate_rate_follows_the_s_curve(similarity: float) -> None:
    trials = 600
    rate = _simulated_rate(similarity, 12, 4, 64, trials, int(similarity * 100))
    p = float(candidate_probability(similarity, 12, 4))
    assert abs(rate - p) <= 4 * np.sqrt(p * (1 - p) / trials) + 1e-9


@pytest.mark.parametrize(("threshold", "budget", "recall"), [(0.5, 128, 0.99), (0.8, 64, 0.95), (0.3, 200, 0.9)])
def test_recommendation_is_the_cheapest_setting_that_reaches_the_recall(
    threshold: float, budget: int, recall: float
) -> None:
    choices = tune(threshold, budget, recall)
    best = recommend(choices, recall)
    assert best is not None and best.rows >= 2 and best.hashes <= budget
    assert best.p(threshold) >= recall
    assert s_curve(threshold, best.bands, best.rows) >= recall
    # No setting at all (rows 2..10, any bands within the budget) reaches it with fewer hashes.
    assert (best.bands, best.rows) == cheapest_setting(threshold, budget, recall)
    selective = most_selective(choices, recall)
    assert selective is not None and selective.candidates_per_true_pair <= best.candidates_per_true_pair
    assert all(c.rows >= 2 and c.hashes <= budget for c in choices)


def test_choice_figures() -> None:
    c = Choice(12, 4, 0.5)
    assert c.hashes == 48 and c.knee == pytest.approx(12 ** (-1 / 4), abs=1e-12)
    assert c.lost_at_threshold == pytest.approx((1 - 0.5**4) ** 12, abs=1e-12)
    # integral of P over [0, 1] / (1 - t): a curve that is a step at t would give exactly 1.
    assert c.candidates_per_true_pair == pytest.approx(area_under(12, 4) / 0.5, rel=1e-3)
    assert Choice(3, 2, 0.8).candidates_per_true_pair == pytest.approx(area_under(3, 2) / 0.2, rel=1e-3)


def test_no_recommendation_when_the_budget_is_too_small() -> None:
    assert cheapest_setting(0.9, 4, 0.999) is None
    assert recommend(tune(0.9, 4, 0.999), 0.999) is None


@pytest.mark.parametrize("bits", [1, 2])
def test_b_bit_candidate_rate_follows_the_corrected_s_curve(bits: int) -> None:
    trials, similarity = 800, 0.3
    rate = _simulated_rate(similarity, 6, 4, bits, trials, bits)
    p = float(candidate_probability(similarity, 6, 4, bits))
    assert p > float(candidate_probability(similarity, 6, 4)) + 0.05  # chance matches do add up
    assert abs(rate - p) <= 4 * np.sqrt(p * (1 - p) / trials)
