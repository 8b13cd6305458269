"""Exact Jaccard of candidate pairs, and the lossless all-pairs search (prefix filter)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from minhashdup.core.hashing import UInt64Array
from minhashdup.core.runs import ROW_BLOCK, code_pairs, distinct, rows, runs
from minhashdup.core.shingles import intersection_size

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def size_bound(size_a: npt.ArrayLike, size_b: npt.ArrayLike) -> FloatArray:
    """Upper bound of Jaccard from set sizes alone: ``min / max`` (1 for two empty sets),
    elementwise.

    Example:
        >>> size_bound([10, 0], [40, 0]).tolist()
        [0.25, 1.0]
    """
    low, high = np.minimum(size_a, size_b), np.maximum(size_a, size_b)
    return np.asarray(np.where(high > 0, low / np.maximum(high, 1), 1.0), dtype=np.float64)


class SetSource(Protocol):
    """Shingle sets wherever they live (this process, or the workers of a cluster): their sizes,
    and :func:`verify` of pairs of them where they are."""

    @property
    def sizes(self) -> IntArray: ...

    def verify(self, pairs: IntArray, threshold: float) -> tuple[IntArray, IntArray, FloatArray]: ...


class LocalSets:
    """A :class:`SetSource` of sets held here.

    Example:
        >>> s = LocalSets([np.array([1, 2], dtype=np.uint64), np.array([1, 2, 3], dtype=np.uint64)])
        >>> s.sizes.tolist(), [a.tolist() for a in s.verify(np.array([[0, 1]]), 0.5)]
        ([2, 3], [[[0, 1]], [2], [0.6666666666666666]])
    """

    def __init__(self, sets: Sequence[UInt64Array]) -> None:
        self.sets = sets
        self.sizes = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))

    def verify(self, pairs: IntArray, threshold: float) -> tuple[IntArray, IntArray, FloatArray]:
        return verify(pairs, self.sets, threshold)


def sources(sets: Sequence[UInt64Array] | SetSource) -> SetSource:
    """``sets`` as a :class:`SetSource` (a sequence of arrays is wrapped in :class:`LocalSets`)."""
    return sets if hasattr(sets, "verify") else LocalSets(sets)  # type: ignore[return-value]


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
    common, jac = verify_rows(pairs, sets, threshold)
    kept = np.flatnonzero(common >= 0)
    out_pairs = pairs[kept] if len(kept) else np.empty((0, 2), dtype=np.int64)
    return out_pairs, common[kept], jac[kept]


def verify_rows(pairs: IntArray, sets: Sequence[UInt64Array], threshold: float) -> tuple[IntArray, FloatArray]:
    """For each row ``(i, j)`` of ``pairs``, the intersection size of ``sets[i]`` and
    ``sets[j]`` when their Jaccard reaches ``threshold``, else -1 (the size bound rules most
    pairs out without an intersection), and the Jaccard (0 for those turned down).

    Example:
        >>> s = [np.array(v, dtype=np.uint64) for v in ([1, 2], [1, 2, 3], [9])]
        >>> [a.tolist() for a in verify_rows(np.array([[0, 1], [0, 2]]), s, 0.5)]
        [[2, -1], [0.6666666666666666, 0.0]]
    """
    sizes = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
    common = np.full(len(pairs), -1, dtype=np.int64)  # -1: turned down
    for start in range(0, len(pairs), ROW_BLOCK):  # a block at a time: memory stays bounded
        block = pairs[start : start + ROW_BLOCK]
        possible = np.flatnonzero(size_bound(sizes[block[:, 0]], sizes[block[:, 1]]) >= threshold)
        for row, (i, j) in rows(possible + start, block[possible]):
            inter = intersection_size(sets[i], sets[j])
            union = int(sizes[i] + sizes[j]) - inter
            if union and inter / union >= threshold:
                common[row] = inter
    union_all = sizes[pairs[:, 0]] + sizes[pairs[:, 1]] - common if len(pairs) else np.zeros(0, dtype=np.int64)
    return common, np.where(common >= 0, common / np.maximum(union_all, 1), 0.0).astype(np.float64)


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


#: Prefix meetings (two sets sharing a prefix shingle) made at a time: about 100 MB of index
#: arrays at most. Near-duplicates meet once per shared shingle, billions of times in all.
CHUNK_MEETINGS = 1_000_000

#: A set starting more than ``HEAVY * n`` meetings (``n`` sets) is taken alone, and only until
#: every set it may pair with is found: checking that costs ``n``, a small share of its work.
HEAVY = 8


def prefix_candidates(sets: Sequence[UInt64Array], threshold: float, chunk: int = CHUNK_MEETINGS) -> IntArray:
    """Pairs that pass the prefix, size and positional filters (a superset of the true pairs).

    Two sets meet once per prefix shingle they share: 2,000 near-duplicates meet about two
    billion times, for two million pairs. Meetings are made for a few sets at a time, at most
    ``chunk`` at once, and each block of sets' pairs is deduplicated before the next: memory
    holds the distinct candidates and one chunk, never all the meetings.

    Returns:
        ``(m, 2)`` pairs ``(i, j)``, ``i < j``, sorted.
    """
    n = len(sets)
    sizes = np.fromiter((len(s) for s in sets), dtype=np.int64, count=n)
    if n < 2 or not sizes.any():
        return np.empty((0, 2), dtype=np.int64)
    index = _PrefixIndex(*_ranked_prefixes(sets, sizes, threshold), sizes=sizes, threshold=threshold)
    codes = [index.block_codes(lo, hi, chunk) for lo, hi in index.blocks(chunk)]
    unique = np.concatenate(codes)  # blocks are of distinct sets, in order: codes come sorted
    return code_pairs(unique, n)


class _PrefixIndex:
    """The prefix entries (sorted by set, then rank) and, for each, the meetings it starts:
    the entries of later sets with the same shingle (consecutive in rank-then-set order).

    A meeting of sets A and B at positions (pos_A, pos_B) passes two filters. The size filter:
    ``min(|A|, |B|) >= t max(|A|, |B|)``. PPJoin's positional filter: at the pair's first
    shared shingle the overlap can be at most ``min(|A| - pos_A, |B| - pos_B)``, and J >= t
    needs ``t / (1 + t) (|A| + |B|)``. A later meeting has a smaller bound, so a pair is
    kept if any of its meetings passes. Both are tabulated (per set, per sum of sizes) from
    the same floating-point expressions: a few lookups per meeting.
    """

    def __init__(self, owner: IntArray, rank: IntArray, pos: IntArray, sizes: IntArray, threshold: float) -> None:
        self.n = n = len(sizes)
        order = np.argsort(rank * n + owner)  # by shingle rank, then by set (keys are distinct)
        starts, lengths = runs(rank[order])
        self.at = np.empty_like(order)  # where each entry sits in that order
        self.at[order] = np.arange(len(order), dtype=np.int64)
        self.later = np.repeat(starts + lengths, lengths)[self.at] - self.at - 1
        self.before = np.r_[0, np.cumsum(self.later)]  # meetings started by the entries before each
        # |B| >= t |A| - eps  <=>  |B| >= ceil(t |A| - eps), sizes being integers
        self.set_size, self.set_low = sizes, np.ceil(threshold * sizes - 1e-9).astype(np.int64)
        self.needed = np.ceil(threshold / (1 + threshold) * np.arange(2 * int(sizes.max()) + 1) - 1e-9)
        self.owner, self.size, self.low, self.left = owner, sizes[owner], self.set_low[owner], sizes[owner] - pos
        self.owner_at, self.size_at, self.low_at, self.left_at = (
            x[order] for x in (owner, self.size, self.low, self.left)
        )

    def blocks(self, chunk: int) -> Iterator[tuple[int, int]]:
        """Ranges of entries of whole sets: a set starting more than ``HEAVY * n`` meetings
        alone, else consecutive sets starting at most ``chunk`` meetings in all (or one set)."""
        firsts = np.flatnonzero(np.r_[True, self.owner[1:] != self.owner[:-1]])
        ends = np.r_[firsts[1:], len(self.owner)]
        before_end = self.before[ends]
        heavy = np.flatnonzero(before_end - self.before[firsts] > HEAVY * self.n)
        i = 0
        while i < len(firsts):
            k = int(np.searchsorted(heavy, i))  # the next heavy set
            if k < len(heavy) and heavy[k] == i:
                j = i + 1
            else:
                fit = int(np.searchsorted(before_end, self.before[firsts[i]] + chunk, side="right"))
                j = min(int(heavy[k]) if k < len(heavy) else len(firsts), max(i + 1, fit))
            yield int(firsts[i]), int(ends[j - 1])
            i = j

    def block_codes(self, lo: int, hi: int, chunk: int) -> IntArray:
        """Sorted distinct codes ``i * n + j`` of the candidates whose first set has its
        entries in ``lo:hi``: marked in a dense table of those sets when it is no larger than
        the meetings, else sorted."""
        n = self.n
        first, last = int(self.owner[lo]), int(self.owner[hi - 1])
        meetings = int(self.before[hi] - self.before[lo])
        if first == last and meetings > HEAVY * n:
            return first * n + self._partners(first, lo, hi, chunk)
        if (last - first + 1) * n > max(meetings, n):
            a, b = self._meetings(lo, hi)  # several sets, at most ``chunk`` meetings
            return distinct(a * n + b)
        seen = np.zeros((last - first + 1, n), dtype=np.bool_)
        while lo < hi:
            e = self._cut(lo, hi, chunk)
            a, b = self._meetings(lo, e)
            seen[a - first, b] = True
            lo = e
        rows, cols = np.nonzero(seen)
        return (rows.astype(np.int64) + first) * n + cols

    def _partners(self, a: int, lo: int, hi: int, chunk: int) -> IntArray:
        """Sorted partners of set ``a`` (entries ``lo:hi``), which starts many meetings: made
        in growing steps, and no further once every later set that the size filter allows is
        a partner (near-duplicates: after their first few shingles)."""
        size, low = self.set_size[a + 1 :], self.set_low[a + 1 :]
        possible = int(np.count_nonzero((size >= self.set_low[a]) & (self.set_size[a] >= low)))
        row = np.zeros(self.n, dtype=np.bool_)
        step = self.n
        while lo < hi and int(np.count_nonzero(row)) < possible:
            e = self._cut(lo, hi, step)
            row[self._meetings(lo, e)[1]] = True
            lo, step = e, min(2 * step, chunk)
        return np.flatnonzero(row).astype(np.int64)

    def _cut(self, lo: int, hi: int, most: int) -> int:
        """The end of the entries from ``lo`` that start at most ``most`` meetings (one at least)."""
        e = int(np.searchsorted(self.before, self.before[lo] + most, side="right")) - 1
        return min(hi, max(lo + 1, e))

    def _meetings(self, lo: int, hi: int) -> tuple[IntArray, IntArray]:
        """The pairs ``(a, b)`` that entries ``lo:hi`` meet and that pass both filters."""
        counts = self.later[lo:hi]
        offsets = np.cumsum(counts) - counts
        q = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(self.at[lo:hi] + 1 - offsets, counts)
        size_a, size_b = np.repeat(self.size[lo:hi], counts), self.size_at[q]
        needed = self.needed[size_a + size_b]
        keep = (size_b >= np.repeat(self.low[lo:hi], counts)) & (size_a >= self.low_at[q])
        keep &= (np.repeat(self.left[lo:hi], counts) >= needed) & (self.left_at[q] >= needed)
        return np.repeat(self.owner[lo:hi], counts)[keep], self.owner_at[q[keep]]


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
