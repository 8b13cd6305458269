"""Shared runs of two sequences: the greedy tiling of the first by stretches of the second.

Pure functions over integer arrays, no I/O. :func:`maximal_runs` is what ``compare``, the HTML
side-by-side view and the SARIF regions show (as token runs, via
:func:`minhashdup.analysis.compare.shared_runs`).

How: runs shorter than ``minimum`` never count, so the work is done on windows of ``minimum``
elements (one 64-bit hash each, as shingles are hashed), which repeat far less than single
elements. Prefix doubling over ``windows(a) + [separator] + windows(b)`` (one stable sort per
doubling, often none) ranks every suffix by its first ``2**k`` windows, until the pairs (a start
in ``a``, a start in ``b``) of equal rank are few: at most ``n + m + 1``. Those pairs share at
least ``2**K`` windows, and each shares one more than the next pair on its diagonal, so lengths
follow from where the diagonal breaks. A start of ``a`` in no pair shares less than ``2**K``
with all of ``b``, most with the nearest suffix of ``b`` above or below it in suffix order,
measured by binary lifting over the levels. The greedy choice then only shortens those lengths
as runs are taken. Every run is checked element by element at the end; should two different
windows ever hash alike, the whole is done again on the elements themselves. No step looks at
every equal pair of elements, so long runs of a repeated element (tables of zeros) stay cheap.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from minhashdup.core.shingles import shingle_hashes

IntArray = npt.NDArray[np.int64]


class Match(NamedTuple):
    """``a[i : i + size] == b[j : j + size]``."""

    i: int
    j: int
    size: int


class _Index(NamedTuple):
    """What the greedy choice asks of two sequences of windows, ``text = a + [separator] + b``."""

    n: int  # windows of a; those of b start at n + 1 in text
    m: int  # windows of b
    levels: list[IntArray]  # levels[k][p] == levels[k][q] iff text[p:p+2**k] == text[q:q+2**k]
    order: IntArray  # text positions by the last level
    # Pairs of starts of equal last level, ordered by the start p in a: p's partners q (text
    # positions) and shared lengths are at offsets[p]:offsets[p + 1].
    offsets: IntArray
    partner: IntArray
    shared: IntArray
    # Per level k asked for: the starts of b (text positions) by levels[k], then by position,
    # and their ranks.
    b_by_rank: dict[int, tuple[IntArray, IntArray]]


def maximal_runs(
    a: npt.NDArray[np.integer],
    b: npt.NDArray[np.integer],
    minimum: int = 1,
    limit: int | None = None,
    windows: tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]] | None = None,
) -> list[Match]:
    """The runs that ``a`` shares with ``b``, longest first, none overlapping in ``a``.

    Definition (the greedy tiling of ``a``): while fewer than ``limit`` runs are chosen, among
    all ``(i, j, size)`` with ``a[i:i+size] == b[j:j+size]``, ``size >= minimum`` and
    ``a[i:i+size]`` clear of every run chosen so far, choose the largest ``size``, then the
    smallest ``i``, then the smallest ``j``; stop when there is none. Hence:

    - the first run is a longest common substring of ``a`` and ``b``; sizes never increase;
    - runs never overlap in ``a``; in ``b`` they may (two copies in ``a`` of one stretch of
      ``b`` both point at it, at its first place in ``b``);
    - each run is maximal: one more element on either side, on the same alignment, mismatches,
      leaves a sequence, or belongs to a run chosen earlier;
    - with no ``limit``, no stretch of ``minimum`` elements of ``a`` outside the runs occurs in
      ``b``: the runs cover all of ``a`` that is shared.

    The first ``limit`` runs are the same whatever the ``limit``.

    Args:
        a, b: one-dimensional integer arrays (token hashes, say).
        minimum: shortest run reported, at least 1.
        limit: most runs returned; ``None`` for all.
        windows: ``shingle_hashes`` of ``a`` and ``b`` for ``minimum``, if the caller has
            them already (a lexed file has): not computed again.

    Returns:
        :class:`Match` triples in the order chosen.

    Raises:
        ValueError: ``minimum`` is below 1.

    Cost: one sort of ``n + m`` elements, one per doubling (none to a few for code, more for
    long runs of a repeated element), then O(n + m) per run returned.

    Example:
        >>> maximal_runs(np.array([1, 2, 3, 9, 1, 2]), np.array([7, 1, 2, 3, 1, 2]))
        [Match(i=0, j=1, size=3), Match(i=4, j=1, size=2)]
    """
    if minimum < 1:
        raise ValueError(f"minimum must be at least 1 (got {minimum})")
    if len(a) < minimum or len(b) < minimum:
        return []
    if minimum > 1:
        if windows is None:
            windows = shingle_hashes(a.astype(np.uint64), minimum), shingle_hashes(b.astype(np.uint64), minimum)
        found = _tiling(*windows, minimum, minimum, limit)
        if _all_equal(a, b, found):
            return found
    return _tiling(a, b, 1, minimum, limit)  # exact, on the elements themselves


def _tiling(
    a: npt.NDArray[np.integer], b: npt.NDArray[np.integer], width: int, minimum: int, limit: int | None
) -> list[Match]:
    """:func:`maximal_runs` over the windows ``a`` and ``b`` of ``width`` elements, in elements.

    Starts in no pair reach less than ``wide`` elements: they are measured only once every
    longer run is taken (never, when the first ``limit`` runs are longer).
    """
    index, windows = _paired(*_joined(a, b), len(a), len(b))
    best = _in_elements(windows, width)  # per start, the longest stretch still free
    wide = (1 << (len(index.levels) - 1)) + width - 1
    pending = len(index.levels) > 1 and wide - 1 >= minimum
    taken = np.zeros(len(best), dtype=bool)
    top = max(int(best.max()), wide)
    found: list[Match] = []
    while limit is None or len(found) < limit:
        i = int(np.argmax(best))  # the first of the longest: smallest i
        size = int(best[i])
        if pending and size < wide:
            best = np.maximum(best, _within_free(_in_elements(_alone(index), width), taken))
            pending = False
            continue
        if size < minimum:
            break
        found.append(Match(i, _first_in_b(index, i, size - width + 1), size))
        best[i : i + size] = 0
        taken[i : i + size] = True
        # A start before i now reaches at most up to i; starts further back than the longest
        # run never reached it.
        low = max(0, i - top)
        np.minimum(best[low:i], np.arange(i - low, 0, -1), out=best[low:i])
    return found


def _in_elements(windows: IntArray, width: int) -> IntArray:
    """Lengths in windows of ``width`` (one per start) as lengths in elements."""
    best = np.zeros(len(windows) + width - 1, dtype=np.int64)
    best[: len(windows)] = np.where(windows > 0, windows + width - 1, 0)
    return best


def _within_free(best: IntArray, taken: npt.NDArray[np.bool_]) -> IntArray:
    """``best`` cut short at the next taken element, and nothing where taken."""
    rows = np.arange(len(best))
    next_taken = np.minimum.accumulate(np.where(taken, rows, len(best))[::-1])[::-1]
    return np.where(taken, 0, np.minimum(best, next_taken - rows))


def _all_equal(a: npt.NDArray[np.integer], b: npt.NDArray[np.integer], found: list[Match]) -> bool:
    """Whether ``a[i:i+size] == b[j:j+size]`` for every match found."""
    if not found:
        return True
    i, j, size = (np.array(column, dtype=np.int64) for column in zip(*found, strict=True))
    step = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
    return bool(np.array_equal(a[np.repeat(i, size) + step], b[np.repeat(j, size) + step]))


def _joined(a: npt.NDArray[np.generic], b: npt.NDArray[np.generic]) -> tuple[IntArray, IntArray]:
    """``a + [separator] + b`` as dense ranks of the values, the separator above them all, and
    its positions in rank order."""
    both = np.concatenate([a, b])
    by_value = np.argsort(both)
    ordered = both[by_value]
    new_value = np.empty(len(both), dtype=bool)
    new_value[0] = False
    np.not_equal(ordered[1:], ordered[:-1], out=new_value[1:])
    dense = np.empty(len(both), dtype=np.int64)
    dense[by_value] = np.cumsum(new_value)
    text = np.concatenate([dense[: len(a)], [int(dense.max()) + 1], dense[len(a) :]])
    return text, np.r_[by_value + (by_value >= len(a)), len(a)]


def _prefix_ranks(text: IntArray, order: IntArray, n: int) -> tuple[list[IntArray], IntArray]:
    """Rank levels (see :class:`_Index`; positions past the end count as one symbol below all
    others) up to the first with at most ``len(text)`` pairs of a start in ``a`` (``text[:n]``)
    and one in ``b`` of equal rank, and the order of the positions by the last level (given
    ``order``, the positions by ``text``)."""
    size = len(text)
    rank, ranked = text, text[order]  # ranked: the ranks in order
    levels = [rank]
    width = 1
    padded = np.full(2 * size, -1, dtype=np.int64)  # a level's ranks, then past the end
    while _pair_count(rank, n, int(ranked[-1]) + 1) > size:
        padded[:size] = rank
        # Already sorted by rank, only ties need sorting by the rank width further on: a stable
        # sort of almost sorted keys (timsort) costs little more than a pass.
        key = ranked * (size + 1) + 1
        key += padded[order + width]  # width < size: some pair shares width windows
        resort = np.argsort(key, kind="stable")
        order, key = order[resort], key[resort]
        new_group = np.empty(size, dtype=bool)
        new_group[0] = False
        np.not_equal(key[1:], key[:-1], out=new_group[1:])
        ranked = np.cumsum(new_group)
        rank = np.empty(size, dtype=np.int64)
        rank[order] = ranked
        levels.append(rank)
        width *= 2
    return levels, order


def _pair_count(rank: IntArray, n: int, groups: int) -> int:
    """How many pairs of a start in ``a`` and one in ``b`` have equal ``rank`` (of ``groups``
    values)."""
    in_a = np.bincount(rank[:n], minlength=groups)
    in_b = np.bincount(rank[n + 1 :], minlength=groups)
    return int(in_a @ in_b)


def _lcp(levels: list[IntArray], p: IntArray, q: IntArray) -> IntArray:
    """Length of the common prefix of the suffixes at ``p`` and ``q`` (pairwise), given that it
    is below ``2**(len(levels) - 1)``: binary lifting over the rank levels."""
    size = len(levels[0])
    length = np.zeros(len(p), dtype=np.int64)
    for k in range(len(levels) - 2, -1, -1):
        x, y = p + length, q + length
        inside = (x < size) & (y < size)
        rank = levels[k]
        same = inside & (rank[np.minimum(x, size - 1)] == rank[np.minimum(y, size - 1)])
        length += same.astype(np.int64) << k
    return length


def _paired(text: IntArray, order: IntArray, n: int, m: int) -> tuple[_Index, IntArray]:
    """The index, and for each start ``i`` in ``a`` in a pair the longest ``L`` with
    ``a[i:i+L]`` in ``b`` (0 for the other starts; see :func:`_alone`).

    A start in a pair shares at least ``2**K`` (the last level's width) with its partners and
    less with the rest of ``b``.
    """
    levels, order = _prefix_ranks(text, order, n)
    p, q = _pairs(levels[-1], order, n)
    shared = _pair_lengths(levels, p, q)
    best = np.zeros(n, dtype=np.int64)
    np.maximum.at(best, p, shared)
    offsets = np.r_[0, np.cumsum(np.bincount(p, minlength=n))]
    return _Index(n, m, levels, order, offsets, q, shared, {}), best


def _alone(index: _Index) -> IntArray:
    """For each start ``i`` in ``a`` in no pair, the longest ``L`` with ``a[i:i+L]`` in ``b``
    (0 for the others): below ``2**K``, so the suffix of ``b`` sharing the most with ``a[i:]`` is
    the nearest one above or below it in suffix order (ties inside a group do not matter: its
    members share ``2**K``)."""
    n, order, levels = index.n, index.order, index.levels
    best = np.zeros(n, dtype=np.int64)
    size = len(order)
    in_b = order > n
    rows = np.arange(size)
    above = np.maximum.accumulate(np.where(in_b, rows, -1))
    below = np.minimum.accumulate(np.where(in_b, rows, size)[::-1])[::-1]
    alone = np.r_[index.offsets[1:] == index.offsets[:-1], False]  # per text position up to n
    a_rows = np.flatnonzero((order < n) & alone[np.minimum(order, n)])
    for near in (above[a_rows], below[a_rows]):
        has = (near >= 0) & (near < size)
        starts = order[a_rows[has]]
        best[starts] = np.maximum(best[starts], _lcp(levels, starts, order[near[has]]))
    return best


def _pairs(rank: IntArray, order: IntArray, n: int) -> tuple[IntArray, IntArray]:
    """Every ``(p, q)``, ``p`` in ``a`` and ``q`` in ``b`` (text positions), of equal ``rank``,
    ordered by ``p``."""
    b_sorted = order[order > n]  # grouped by rank
    in_b = np.bincount(rank[b_sorted], minlength=int(rank.max()) + 1)
    count = in_b[rank[:n]]
    first = (np.cumsum(in_b) - in_b)[rank[:n]]  # where each start's group begins in b_sorted
    p = np.repeat(np.arange(n), count)
    offset = np.arange(len(p)) - np.repeat(np.cumsum(count) - count, count)
    return p, b_sorted[np.repeat(first, count) + offset]


def _pair_lengths(levels: list[IntArray], p: IntArray, q: IntArray) -> IntArray:
    """How much each pair shares: one more than the next pair on its diagonal, and past the last,
    less than the last level's width (binary lifting)."""
    along = np.argsort((q - p) * len(levels[0]) + p, kind="stable")  # runs of one diagonal: timsort is quick
    ps, qs = p[along], q[along]
    link = np.zeros(len(ps), dtype=bool)  # the next pair continues this one's diagonal
    link[:-1] = (ps[1:] == ps[:-1] + 1) & (qs[1:] == qs[:-1] + 1)
    rows = np.arange(len(ps))
    last = np.minimum.accumulate(np.where(link, len(ps), rows)[::-1])[::-1]  # last pair on it
    shared = np.empty(len(ps), dtype=np.int64)
    shared[along] = ps[last] - ps + 1 + _lcp(levels, ps[last] + 1, qs[last] + 1)
    return shared


def _first_in_b(index: _Index, i: int, size: int) -> int:
    """The smallest ``j`` with ``b[j:j+size] == a[i:i+size]`` (one exists): among ``i``'s pairs
    from the last level's width on, else among the starts of ``b`` that begin like ``i`` at the
    widest level ``2**k <= size``, by the block of that width that ends the stretch."""
    n, m, levels = index.n, index.m, index.levels
    k = size.bit_length() - 1
    if k >= len(levels) - 1:
        mine = slice(index.offsets[i], index.offsets[i + 1])
        return int(index.partner[mine][index.shared[mine] >= size].min()) - n - 1
    rank, width = levels[k], 1 << k
    if k not in index.b_by_rank:
        starts = np.arange(n + 1, n + 1 + m)
        by_rank = starts[np.argsort(rank[starts] * len(rank) + starts)]
        index.b_by_rank[k] = by_rank, rank[by_rank]
    by_rank, ranks = index.b_by_rank[k]
    alike = by_rank[ranks.searchsorted(rank[i]) : ranks.searchsorted(rank[i], side="right")]
    alike = alike[alike <= n + 1 + m - size]  # room for size
    hits = alike[rank[alike + size - width] == rank[i + size - width]]
    return int(hits[0]) - n - 1
