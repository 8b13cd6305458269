"""Exact Jaccard of candidate pairs, and the lossless all-pairs search (prefix filter)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from minhashdup.hashing import UInt64Array
from minhashdup.runs import pairs_in_runs, runs
from minhashdup.shingles import intersection_size

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def size_bound(size_a: int, size_b: int) -> float:
    """Upper bound of Jaccard from set sizes alone: ``min / max``."""
    high = max(size_a, size_b)
    return min(size_a, size_b) / high if high else 1.0


def verify(
    pairs: npt.NDArray[np.int64], sets: Sequence[UInt64Array], threshold: float
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Keep the candidate pairs whose exact Jaccard reaches ``threshold``.

    Pairs that the size bound already rules out are not intersected.

    Args:
        pairs: ``(m, 2)`` indices into ``sets``.
        sets: sorted arrays of distinct shingle hashes.
        threshold: minimum Jaccard to keep a pair.

    Returns:
        ``(kept_pairs, common, jaccard)``: the kept ``(p, 2)`` pairs, their intersection
        sizes, and their exact Jaccard, in the input order.
    """
    sizes = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
    kept: list[int] = []
    common: list[int] = []
    for row, (i, j) in enumerate(pairs.tolist()):
        if size_bound(int(sizes[i]), int(sizes[j])) < threshold:
            continue
        inter = intersection_size(sets[i], sets[j])
        union = int(sizes[i] + sizes[j]) - inter
        if union and inter / union >= threshold:
            kept.append(row)
            common.append(inter)
    rows = np.asarray(kept, dtype=np.int64)
    inter_arr = np.asarray(common, dtype=np.int64)
    out_pairs = pairs[rows] if len(rows) else np.empty((0, 2), dtype=np.int64)
    union_arr = sizes[out_pairs[:, 0]] + sizes[out_pairs[:, 1]] - inter_arr
    jac = inter_arr / np.maximum(union_arr, 1)
    return out_pairs, inter_arr, jac.astype(np.float64)


def prefix_length(sizes: npt.NDArray[np.int64], threshold: float) -> npt.NDArray[np.int64]:
    """Prefix a set of size ``n`` must index so that J >= t implies a shared prefix token.

    ``n - ceil(t n) + 1`` (Chaudhuri et al. 2006); rounded so that floating-point error
    can only lengthen it, never cut a needed token.
    """
    length: npt.NDArray[np.int64] = np.minimum(sizes, sizes - np.ceil(threshold * sizes - 1e-9).astype(np.int64) + 1)
    return length


def all_pairs(sets: Sequence[UInt64Array], threshold: float) -> tuple[IntArray, IntArray, FloatArray]:
    """Every pair of ``sets`` with Jaccard >= ``threshold``, exactly: no pair is missed.

    All-Pairs with PPJoin's positional filter (Bayardo et al. 2007; Xiao et al. 2008):
    elements are ranked rarest first; each set indexes only its prefix
    (:func:`prefix_length`); pairs sharing a prefix element are kept if their sizes allow
    ``J >= t`` (``min/max >= t``) and if, at their first shared element, the elements left
    can still reach the overlap ``J >= t`` needs; the survivors get the exact check.

    Args:
        sets: sorted arrays of distinct 64-bit values.
        threshold: in (0, 1].

    Returns:
        ``(pairs, common, jaccard)`` as :func:`verify` returns them, pairs sorted.

    Example:
        >>> s = [np.array(x, dtype=np.uint64) for x in ([1, 2, 3, 4], [1, 2, 3, 5], [7, 8])]
        >>> all_pairs(s, 0.5)[0].tolist()
        [[0, 1]]
    """
    candidates = prefix_candidates(sets, threshold)
    return verify(candidates, sets, threshold)


def prefix_candidates(sets: Sequence[UInt64Array], threshold: float) -> IntArray:
    """Pairs that pass the prefix, size and positional filters (a superset of the true pairs)."""
    n = len(sets)
    sizes = np.fromiter((len(s) for s in sets), dtype=np.int64, count=n)
    if n < 2 or not sizes.any():
        return np.empty((0, 2), dtype=np.int64)
    owner, rank, pos = _ranked_prefixes(sets, sizes, threshold)
    order = np.argsort(rank * n + owner)  # by element rank, then by set (keys are distinct)
    starts, lengths = runs(rank[order])
    codes: list[IntArray] = []
    for p, q in pairs_in_runs(starts, lengths):
        a, b = owner[order[p]], owner[order[q]]  # a < b: same rank, sorted by set
        keep = _filters(sizes[a], sizes[b], pos[order[p]], pos[order[q]], threshold)
        codes.append(a[keep] * n + b[keep])
    if not codes:
        return np.empty((0, 2), dtype=np.int64)
    unique = np.unique(np.concatenate(codes))
    return np.stack([unique // n, unique % n], axis=1)


def _ranked_prefixes(
    sets: Sequence[UInt64Array], sizes: IntArray, threshold: float
) -> tuple[IntArray, IntArray, IntArray]:
    """(set, global rank, position in the set) of each element inside its set's prefix.

    Sorting uses single integer keys (set * ranks + rank) rather than lexsort: same order,
    a third of the time on the Go tree.
    """
    values = np.concatenate(sets)
    owner = np.repeat(np.arange(len(sets), dtype=np.int64), sizes)
    order = np.argsort(values, kind="stable")
    starts, counts = runs(values[order])
    distinct_id = np.empty(len(values), dtype=np.int64)
    distinct_id[order] = np.repeat(np.arange(len(starts), dtype=np.int64), counts)
    # Rarest first; a stable sort keeps equal counts in value order: one global order.
    rank_of = np.empty(len(starts), dtype=np.int64)
    rank_of[np.argsort(counts, kind="stable")] = np.arange(len(starts), dtype=np.int64)
    key = np.sort(owner * len(starts) + rank_of[distinct_id])  # each set's elements, rarest first
    owner, rank = key // len(starts), key % len(starts)
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    pos = np.arange(len(rank), dtype=np.int64) - offsets[owner]
    inside = pos < prefix_length(sizes, threshold)[owner]
    return owner[inside], rank[inside], pos[inside]


def _filters(
    size_a: IntArray, size_b: IntArray, pos_a: IntArray, pos_b: IntArray, threshold: float
) -> npt.NDArray[np.bool_]:
    """Size filter and PPJoin's positional filter for pairs meeting at (pos_a, pos_b).

    At a pair's first shared element the overlap can be at most ``1 + min(elements left)``;
    J >= t needs an overlap of at least ``t / (1 + t) * (|A| + |B|)``. At a later shared
    element the bound is loose, so a pair is kept if any of its meetings passes.
    """
    small, large = np.minimum(size_a, size_b), np.maximum(size_a, size_b)
    size_ok = small >= threshold * large - 1e-9
    needed = np.ceil(threshold / (1 + threshold) * (size_a + size_b) - 1e-9)
    reachable = 1 + np.minimum(size_a - pos_a - 1, size_b - pos_b - 1)
    keep: npt.NDArray[np.bool_] = size_ok & (reachable >= needed)
    return keep
