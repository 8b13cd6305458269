"""Pairs inside runs of equal keys: the inner loop shared by LSH buckets and the prefix index.

Pairs come out in chunks of bounded size, so a large run costs time, never a burst of memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from minhashdup.core.limits import pairs_among

IntArray = npt.NDArray[np.int64]

#: Pairs per chunk: about 100 MB of index arrays at most.
CHUNK_PAIRS = 4_000_000
#: Rows turned into Python values at a time by :func:`rows`.
ROW_BLOCK = 65_536


def rows(*columns: np.ndarray) -> Iterator[tuple[Any, ...]]:
    """The rows of equally long arrays as Python values, converted a block at a time (a list
    of millions of Python numbers costs ten times the array).

    Example:
        >>> list(rows(np.array([[0, 1], [2, 3]]), np.array([0.5, 1.0])))
        [([0, 1], 0.5), ([2, 3], 1.0)]
    """
    for start in range(0, len(columns[0]), ROW_BLOCK):
        yield from zip(*(c[start : start + ROW_BLOCK].tolist() for c in columns), strict=True)


def runs(sorted_keys: npt.NDArray[np.generic]) -> tuple[IntArray, IntArray]:
    """Start and length of each run of equal values in a sorted array.

    Example:
        >>> [x.tolist() for x in runs(np.array([3, 3, 5, 7, 7, 7]))]
        [[0, 2, 3], [2, 1, 3]]
    """
    n = len(sorted_keys)
    if n == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]).astype(np.int64)
    return starts, np.diff(np.r_[starts, n]).astype(np.int64)


def pairs_in_runs(starts: IntArray, sizes: IntArray, chunk: int = CHUNK_PAIRS) -> Iterator[tuple[IntArray, IntArray]]:
    """Every pair ``(p, q)``, ``p < q``, of positions inside the same run, in chunks.

    Args:
        starts, sizes: runs as from :func:`runs` (runs of one give no pair).
        chunk: most pairs per yielded chunk (a single huge run is split by rows).

    Yields:
        Two arrays of positions (into the sorted array), the same length.

    Example:
        >>> [(p.tolist(), q.tolist()) for p, q in pairs_in_runs(np.array([0, 3]), np.array([3, 2]))]
        [([3], [4]), ([0, 0, 1], [1, 2, 2])]
    """
    for size in np.unique(sizes[sizes >= 2]).tolist():
        first = starts[sizes == size]
        per_run = pairs_among(size)
        if per_run <= chunk:
            p, q = np.triu_indices(size, 1)
            step = max(1, chunk // per_run)
            for k in range(0, len(first), step):
                block = first[k : k + step, None]
                yield (block + p).ravel(), (block + q).ravel()
        else:
            for start in first.tolist():
                yield from _split_run(start, size, chunk)


def _split_run(start: int, size: int, chunk: int) -> Iterator[tuple[IntArray, IntArray]]:
    # Rows i of the upper triangle, as many per chunk as fit.
    row = 0
    while row < size - 1:
        rows = [row]
        count = size - 1 - row
        while rows[-1] + 1 < size - 1 and count + (size - 2 - rows[-1]) <= chunk:
            rows.append(rows[-1] + 1)
            count += size - 1 - rows[-1]
        p = np.concatenate([np.full(size - 1 - i, i, dtype=np.int64) for i in rows])
        q = np.concatenate([np.arange(i + 1, size, dtype=np.int64) for i in rows])
        yield start + p, start + q
        row = rows[-1] + 1


def distinct(values: IntArray) -> IntArray:
    """The sorted distinct values of an integer array, by sorting: ``numpy.unique`` (hashing,
    since NumPy 2.3) took 70 times as long on millions of pair codes.

    Example:
        >>> distinct(np.array([5, 3, 5, 1])).tolist()
        [1, 3, 5]
    """
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


def member(values: npt.NDArray[Any], sorted_values: npt.NDArray[Any], ordered: bool = False) -> npt.NDArray[np.bool_]:
    """Which ``values`` are in the sorted array ``sorted_values``, by bisection (:func:`numpy.isin`
    would sort ``sorted_values`` again at every call). The values are sorted first, so that the
    search walks ``sorted_values`` once; ``ordered``: they are sorted already.

    Example:
        >>> member(np.array([7, 5, 2]), np.array([2, 3, 7])).tolist()
        [True, False, True]
    """
    if not len(sorted_values) or not len(values):
        return np.zeros(len(values), dtype=bool)
    order = None if ordered else np.argsort(values, kind="stable")
    queries = values if order is None else values[order]
    found: npt.NDArray[np.bool_] = (
        sorted_values[np.minimum(np.searchsorted(sorted_values, queries), len(sorted_values) - 1)] == queries
    )
    if order is None:
        return found
    out = np.empty(len(values), dtype=bool)
    out[order] = found
    return out


def pair_codes(pairs: npt.NDArray[np.int64], n: int) -> IntArray:
    """One integer per row ``(i, j)`` of an ``(m, 2)`` pair array: ``i * n + j`` (``n`` items),
    so that sets of pairs compare with :func:`numpy.isin`.

    Example:
        >>> pair_codes(np.array([[0, 2], [1, 2]]), 3).tolist()
        [2, 5]
    """
    return (pairs[:, 0].astype(np.int64) * n + pairs[:, 1]).astype(np.int64)


def unordered_codes(a: npt.NDArray[np.integer], b: npt.NDArray[np.integer], n: int) -> IntArray:
    """:func:`pair_codes` of the pairs ``{a[k], b[k]}`` in either order: the smaller first.

    Example:
        >>> unordered_codes(np.array([2, 0]), np.array([0, 1]), 3).tolist()
        [2, 1]
    """
    low, high = np.minimum(a, b).astype(np.int64), np.maximum(a, b).astype(np.int64)
    return np.asarray(low * n + high, dtype=np.int64)


def code_pairs(codes: IntArray, n: int) -> IntArray:
    """The ``(m, 2)`` pairs of :func:`pair_codes` ``codes`` over ``n`` items: its inverse.

    Example:
        >>> code_pairs(np.array([2, 5]), 3).tolist()
        [[0, 2], [1, 2]]
    """
    return np.stack([codes // n, codes % n], axis=1)
