"""Banding (LSH): signatures cut into bands, equal bands share a bucket, buckets give pairs.

Pure maths of the S-curve lives here too. With ``b`` bands of ``r`` rows, a pair of
similarity ``s`` becomes a candidate with probability ``P(s) = 1 - (1 - s**r)**b``,
an S-curve whose steepest rise sits near ``(1/b)**(1/r)``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from minhashdup.core.hashing import U64, UInt64Array, mix64_inplace
from minhashdup.core.limits import MAX_HASHES
from minhashdup.core.runs import code_pairs, distinct, pairs_in_runs, runs, unordered_codes
from minhashdup.errors import check_share, check_threshold, check_whole

IntArray = npt.NDArray[np.int64]
_COMBINE = U64(0xD6E8FEB86659FD93)


@dataclasses.dataclass(frozen=True)
class Oversize:
    """A bucket left out because it held more than ``max_bucket`` items (``members``: all of
    them, where the engine knows them; ``None`` where it does not)."""

    band: int
    size: int
    example: int  # index of one item in it
    members: IntArray | None = dataclasses.field(default=None, compare=False)


def candidate_probability(s: npt.ArrayLike, bands: int, rows: int, bits: int = 64) -> npt.NDArray[np.float64]:
    """``P(s) = 1 - (1 - p**rows)**bands``: chance that a pair of similarity ``s`` is a candidate.

    ``p`` is the chance that one row agrees: ``s``, plus ``(1 - s) 2**-bits`` with b-bit values.

    Example:
        >>> round(float(candidate_probability(0.5, 12, 4)), 3)
        0.539
    """
    s = np.asarray(s, dtype=np.float64)
    p = s if bits >= 64 else s + (1.0 - s) * 2.0**-bits
    return np.asarray(1.0 - (1.0 - p**rows) ** bands)


def knee(bands: int, rows: int) -> float:
    """Similarity near the S-curve's steepest point: ``(1/bands)**(1/rows)``."""
    return float((1.0 / bands) ** (1.0 / rows))


def band_keys(sigs: UInt64Array, bands: int, rows: int) -> UInt64Array:
    """One 64-bit key per (item, band): the hash of that band's ``rows`` minima.

    Args:
        sigs: ``(n, K)`` signatures with ``K >= bands * rows``.

    Returns:
        ``(n, bands)`` keys; equal keys mean (up to a 2**-64 chance) equal bands.
    """
    if sigs.shape[1] < bands * rows:
        raise ValueError(f"signatures of {sigs.shape[1]} hashes cannot fill {bands} x {rows}")
    view = sigs[:, : bands * rows].reshape(len(sigs), bands, rows)
    keys = view[:, :, 0].copy()
    with np.errstate(over="ignore"):
        for j in range(1, rows):
            keys *= _COMBINE
            keys += view[:, :, j]
            mix64_inplace(keys)
    return keys


def candidate_pairs(keys: UInt64Array, max_bucket: int) -> tuple[IntArray, list[Oversize]]:
    """Distinct pairs ``(i, j)``, ``i < j``, that share a key in at least one band.

    Buckets larger than ``max_bucket`` produce no pairs (their quadratic cost is
    unbounded); each is returned as an :class:`Oversize` so the caller can report it.

    Returns:
        ``(m, 2)`` array of pairs sorted by ``(i, j)``, and the oversize buckets.

    Example:
        >>> k = np.array([[1, 7], [1, 8], [2, 8]], dtype=np.uint64)
        >>> candidate_pairs(k, 10)[0].tolist()
        [[0, 1], [1, 2]]
    """
    n = len(keys)
    codes = np.empty(0, dtype=np.int64)
    oversize: list[Oversize] = []
    for band in range(keys.shape[1] if n else 0):
        band_codes, big = _band_pairs(keys[:, band], n, max_bucket)
        # Merged band by band: the same pairs recur in every band, so memory holds the
        # distinct pairs and one band's, not ``bands`` copies of them.
        codes = distinct(np.concatenate([codes, band_codes]))
        oversize.extend(Oversize(band, size, int(members[0]), members.copy()) for size, members in big)
    return code_pairs(codes, n), oversize


def _band_pairs(column: UInt64Array, n: int, max_bucket: int) -> tuple[IntArray, list[tuple[int, IntArray]]]:
    """Pair codes ``i * n + j`` of one band's buckets, and the (size, items) of big ones."""
    order = np.argsort(column, kind="stable")
    starts, sizes = runs(column[order])
    big = [(int(sizes[i]), order[starts[i] : starts[i] + sizes[i]]) for i in np.flatnonzero(sizes > max_bucket)]
    keep = sizes <= max_bucket
    codes: list[IntArray] = []
    for p, q in pairs_in_runs(starts[keep], sizes[keep]):
        codes.append(unordered_codes(order[p], order[q], n))
    merged = np.concatenate(codes) if codes else np.empty(0, dtype=np.int64)
    return merged, big


def bucket_pairs(
    band: npt.NDArray[np.integer], key: UInt64Array, item: IntArray, n: int, max_bucket: int
) -> tuple[IntArray, list[tuple[int, int, int, int]]]:
    """:func:`candidate_pairs` of rows ``(band, key, item)`` of any bands, as a cluster's
    shuffle hands them over (every row of a bucket in the same part): the distinct pair codes
    (``i * n + j``, ``i < j``, sorted) and each bucket over ``max_bucket`` as ``(band, key,
    size, smallest item)``.

    Example:
        >>> rows = np.array([0, 0, 1, 1]), np.array([5, 5, 6, 6], dtype=np.uint64), np.array([2, 0, 0, 2])
        >>> bucket_pairs(*rows, n=3, max_bucket=10)
        (array([2]), [])
    """
    order = np.lexsort((item, key, band))
    band, key, item = band[order], key[order], item[order]
    if not len(order):
        return np.empty(0, dtype=np.int64), []
    starts = np.flatnonzero(np.r_[True, (band[1:] != band[:-1]) | (key[1:] != key[:-1])]).astype(np.int64)
    sizes = np.diff(np.r_[starts, len(order)]).astype(np.int64)
    big = sizes > max_bucket
    over = [(int(band[s]), int(key[s]), int(z), int(item[s])) for s, z in zip(starts[big], sizes[big], strict=True)]
    codes = [unordered_codes(item[p], item[q], n) for p, q in pairs_in_runs(starts[~big], sizes[~big])]
    return distinct(np.concatenate([np.empty(0, dtype=np.int64), *codes])), over


#: Similarities at which ``tune`` shows P(s).
TUNE_SIMILARITIES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclasses.dataclass(frozen=True)
class Choice:
    """One (bands, rows) setting and its S-curve around a threshold."""

    bands: int
    rows: int
    threshold: float
    bits: int = 64

    @property
    def hashes(self) -> int:
        """Signature length ``K = bands * rows``."""
        return self.bands * self.rows

    @property
    def knee(self) -> float:
        """``(1/b)**(1/r)``, where the S-curve rises steepest."""
        return knee(self.bands, self.rows)

    def p(self, s: float) -> float:
        """Chance that a pair of similarity ``s`` becomes a candidate."""
        return float(candidate_probability(s, self.bands, self.rows, self.bits))

    @property
    def lost_at_threshold(self) -> float:
        """Share of the pairs of similarity exactly ``threshold`` that LSH misses."""
        return 1.0 - self.p(self.threshold)

    @property
    def candidates_per_true_pair(self) -> float:
        """Expected candidates per true pair if similarities were spread evenly over [0, 1].

        ``integral_0^1 P(s) ds / (1 - t)``: a fixed yardstick to compare settings, not a
        forecast (real trees have far more dissimilar pairs; ``evaluate`` measures them).
        """
        s = np.linspace(0.0, 1.0, 2001)
        area = float(np.mean(candidate_probability(s, self.bands, self.rows, self.bits)))
        return area / max(1.0 - self.threshold, 1e-9)


#: Rows per band that ``tune`` considers: one row matches on any single shared minimum.
TUNE_ROWS = range(2, 11)


def tune(threshold: float, max_hashes: int = 128, min_recall: float = 0.99, bits: int = 64) -> list[Choice]:
    """(bands, rows) settings worth considering for ``threshold`` within ``max_hashes``.

    For each ``rows`` in :data:`TUNE_ROWS`, up to three settings: the bands that put the
    knee nearest the threshold, the fewest bands that reach ``min_recall`` at the threshold,
    and all the bands the budget allows; and scan's default 12 x 4 when it fits. Sorted by
    hashes, then rows.

    Raises:
        ConfigError: a value out of range (``max_hashes`` from 2 to :data:`~minhashdup.core.limits.MAX_HASHES`), naming
            the parameter: ``minhashdup tune`` and ``LSHIndex(threshold=...)`` both ask here.

    Example:
        >>> [(c.bands, c.rows) for c in tune(0.8, max_hashes=12)][:4]
        [(2, 2), (2, 3), (1, 7), (1, 8)]
    """
    check_threshold(threshold)
    check_whole("bits", bits, 1, 64)
    check_whole("max_hashes", max_hashes, 2, MAX_HASHES)
    check_share("min_recall", min_recall)
    found: set[tuple[int, int]] = {(12, 4)} if max_hashes >= 48 else set()
    for rows in TUNE_ROWS:
        most = max_hashes // rows
        if most < 1:
            break
        found.add((min(range(1, most + 1), key=lambda b: (abs(knee(b, rows) - threshold), b)), rows))
        found.add((most, rows))
        reaching = [b for b in range(1, most + 1) if Choice(b, rows, threshold, bits).p(threshold) >= min_recall]
        if reaching:
            found.add((reaching[0], rows))
    return sorted((Choice(b, r, threshold, bits) for b, r in found), key=lambda c: (c.hashes, c.rows, c.bands))


def recommend(choices: list[Choice], min_recall: float = 0.99) -> Choice | None:
    """Recall first: the fewest hashes with ``P(threshold) >= min_recall``; ties: fewer candidates."""
    good = [c for c in choices if c.p(c.threshold) >= min_recall]
    return min(good, key=lambda c: (c.hashes, c.candidates_per_true_pair), default=None)


def most_selective(choices: list[Choice], min_recall: float = 0.99) -> Choice | None:
    """Among settings with ``P(threshold) >= min_recall``, the fewest candidates per true pair."""
    good = [c for c in choices if c.p(c.threshold) >= min_recall]
    return min(good, key=lambda c: (c.candidates_per_true_pair, c.hashes), default=None)
