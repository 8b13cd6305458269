"""Banding (LSH): signatures cut into bands, equal bands share a bucket, buckets give pairs.

Pure maths of the S-curve lives here too. With ``b`` bands of ``r`` rows, a pair of
similarity ``s`` becomes a candidate with probability ``P(s) = 1 - (1 - s**r)**b``,
an S-curve whose steepest rise sits near ``(1/b)**(1/r)``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from minhashdup.hashing import U64, UInt64Array, mix64_inplace
from minhashdup.runs import pairs_in_runs, runs

IntArray = npt.NDArray[np.int64]
_COMBINE = U64(0xD6E8FEB86659FD93)


@dataclasses.dataclass(frozen=True)
class Oversize:
    """A bucket left out because it held more than ``max_bucket`` items."""

    band: int
    size: int
    example: int  # index of one item in it


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
    chunks: list[IntArray] = []
    oversize: list[Oversize] = []
    for band in range(keys.shape[1] if n else 0):
        codes, big = _band_pairs(keys[:, band], n, max_bucket)
        chunks.append(codes)
        oversize.extend(Oversize(band, size, example) for size, example in big)
    if not chunks:
        return np.empty((0, 2), dtype=np.int64), oversize
    codes = np.unique(np.concatenate(chunks))
    return np.stack([codes // n, codes % n], axis=1), oversize


def _band_pairs(column: UInt64Array, n: int, max_bucket: int) -> tuple[IntArray, list[tuple[int, int]]]:
    """Pair codes ``i * n + j`` of one band's buckets, and the (size, example) of big ones."""
    order = np.argsort(column, kind="stable")
    starts, sizes = runs(column[order])
    big = [(int(sizes[i]), int(order[starts[i]])) for i in np.flatnonzero(sizes > max_bucket)]
    keep = sizes <= max_bucket
    codes: list[IntArray] = []
    for p, q in pairs_in_runs(starts[keep], sizes[keep]):
        a, b = order[p], order[q]
        codes.append(np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b))
    merged = np.concatenate(codes) if codes else np.empty(0, dtype=np.int64)
    return merged, big
