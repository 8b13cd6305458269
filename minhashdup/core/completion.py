"""Family completion: the pairs that LSH half-found.

LSH misses a pair of similarity ``s`` with probability ``(1 - s^r)^b``, but not independently:
the misses of a real tree sit in families (versions of one file, generated per-platform files)
whose other members were found. When ``A ~ B`` and ``B ~ C`` are similar, ``A ~ C`` very
likely is too, and checking it costs one intersection. :func:`complete` checks the unchecked
pairs two hops apart in the graph of similar pairs, adds what it finds to the graph, and
repeats until a round finds nothing new.

The graph's edges are the pairs known to reach :func:`near` (``0.7 x`` the threshold): the
reported pairs, and the *near* pairs that tie two families together (the vendored copy of a
family and the original, say, whose cross pairs LSH missed together). A middle file must be in
a family (have a pair at the threshold): a tree of files all a little alike, none of them a
pair, proposes nothing. Only pairs that can
reach the threshold are checked: Jaccard distance ``1 - J`` is a metric, so through a middle
file ``B``, ``J(A,C) <= 1 - |J(A,B) - J(B,C)|``; with the size bound (``min/max``) and the
MinHash estimate (below :func:`estimate_floor`, two standard errors under the threshold, a
pair is passed over) that rules most proposals out without an intersection. The lower bound
``J(A,B) + J(B,C) - 1`` orders the checks, likeliest first.

The work is bounded by one number, ``cap``: a file passes on at most its ``cap`` most similar
partners (a middle file of degree ``d`` would otherwise propose ``d^2 / 2`` pairs), and takes
part in at most ``cap`` completion checks over all rounds. A family of ``n`` files costs at most
``n * cap / 2`` checks, and a round at most ``n * cap^2 / 2`` proposals, however many pairs LSH
found inside it (a round proposes only pairs through an edge new to its middle file, so all
rounds together stay within a small multiple of that).
Every reported pair is still exact and at or above the threshold.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from minhashdup.core.exact import SetSource, size_bound, sources
from minhashdup.core.hashing import UInt64Array
from minhashdup.core.limits import DEFAULT_CAP
from minhashdup.core.runs import code_pairs, distinct, member, pair_codes, pairs_in_runs, runs, unordered_codes

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
_Found = list[tuple[IntArray, IntArray, FloatArray]]  # new pairs, their common shingles, their Jaccard

#: Edges of the completion graph reach this share of the threshold (see :func:`near`).
NEAR_SHARE = 0.7

#: A proposal whose MinHash estimate is this many standard errors below the threshold is not
#: checked. The estimate is a binomial share: at 48 hashes a pair exactly at 0.5 falls that low
#: (17 agreements of 48 or fewer) with a chance of 3%, 5% at 0.9 and 8% at 0.99, more with b-bit
#: values; a pair 0.1 above the threshold at most 0.14%.
ESTIMATE_SLACK = 2.0

#: Slack on the triangle bound: J values are floats, and a pair exactly at the threshold must
#: not be ruled out by a rounding error.
_SLACK = 1e-9


def near(threshold: float) -> float:
    """The similarity that makes a pair an edge of the completion graph: ``0.7 x threshold``.

    Example:
        >>> near(0.5)
        0.35
    """
    return round(NEAR_SHARE * threshold, 12)


def estimate_floor(threshold: float, num_hashes: int, bits: int = 64) -> float:
    """The MinHash estimate under which a proposal is not checked: the threshold less
    :data:`ESTIMATE_SLACK` standard errors of the estimate there (wider with b-bit values,
    whose random agreements ``2**-bits`` the estimate removes).

    Example:
        >>> round(estimate_floor(0.5, 48), 3)
        0.356
    """
    chance = 0.0 if bits >= 64 else 2.0**-bits
    agree = threshold + (1.0 - threshold) * chance
    error = float(np.sqrt(agree * (1.0 - agree) / num_hashes)) / (1.0 - chance)
    return threshold - ESTIMATE_SLACK * error


@dataclasses.dataclass(frozen=True)
class Completion:
    """What :func:`complete` found.

    Attributes:
        pairs: ``(m, 2)`` new pairs ``(i, j)``, ``i < j``, at or above the threshold, sorted.
        common: their intersection sizes.
        jaccard: their exact Jaccard.
        checked: ``(c, 2)`` every pair intersected, found or not, sorted (``pairs`` among them).
        pruned: proposals ruled out by a bound or the estimate, never intersected.
        rounds: rounds that checked at least one pair.
        capped: files for which ``cap`` left some proposal unchecked (as a middle file with more
            partners than ``cap``, or out of checks).
    """

    pairs: IntArray
    common: IntArray
    jaccard: FloatArray
    checked: IntArray
    pruned: int
    rounds: int
    capped: int

    @property
    def checks(self) -> int:
        """Exact intersections done."""
        return len(self.checked)


def complete(
    edges: IntArray,
    jaccard: FloatArray,
    sets: Sequence[UInt64Array] | SetSource,
    threshold: float,
    *,
    cap: int = DEFAULT_CAP,
    known: IntArray | None = None,
    likely: Callable[[IntArray], BoolArray] | None = None,
) -> Completion:
    """Check the pairs two hops apart in the graph of similar pairs until none is new.

    Args:
        edges: ``(m, 2)`` pairs ``(i, j)``, ``i < j`` (indices into ``sets``) known to reach
            :func:`near` of the threshold: the reported pairs and the near ones.
        jaccard: their exact Jaccard.
        sets: sorted arrays of distinct shingle hashes, or a :class:`~.exact.SetSource` of
            them (where an engine keeps them: each round's checks run there).
        threshold: minimum Jaccard of a reported pair.
        cap: at least 1; see the module docstring.
        known: pairs already decided (e.g. every LSH candidate, similar or not) as
            :func:`~minhashdup.core.runs.pair_codes` over ``len(sets)``; never checked again.
        likely: given ``(k, 2)`` proposals, which are worth an exact check (e.g. a MinHash
            estimate at least :func:`estimate_floor`); all of them when ``None``.

    Returns:
        A :class:`Completion`; its pairs are disjoint from ``edges`` and from ``known``.

    Example:
        >>> s = [np.arange(k, k + 10, dtype=np.uint64) for k in (0, 1, 2)]
        >>> done = complete(np.array([[0, 1], [1, 2]]), np.array([9 / 11, 9 / 11]), s, 0.6)
        >>> done.pairs.tolist(), done.checks, round(float(done.jaccard[0]), 3)
        ([[0, 2]], 1, 0.667)
    """
    source = sources(sets)
    sizes = source.sizes
    n = len(sizes)
    jaccard = np.asarray(jaccard, dtype=np.float64)
    graph = _Graph(n, cap)
    graph.add(np.asarray(edges, dtype=np.int64).reshape(-1, 2), jaccard, jaccard >= threshold)
    graph.decided(pair_codes(graph.edges, n), known)
    found: _Found = []
    checked: list[IntArray] = []
    pruned = 0
    while graph.has_fresh:
        cand, ruled_out = _next_round(graph, sizes, threshold, likely)
        pruned += ruled_out
        if not len(cand):
            break
        checked.append(cand)
        hop, common, jac = source.verify(cand, near(threshold))
        good = jac >= threshold
        found.append((hop[good], common[good], jac[good]))
        graph.add(hop, jac, good)
    return _result(found, checked, pruned, len(checked), graph.capped_files, n)


def _next_round(
    graph: _Graph, sizes: IntArray, threshold: float, likely: Callable[[IntArray], BoolArray] | None
) -> tuple[IntArray, int]:
    """The pairs to check next, charged to their files' budgets, and how many proposals a
    bound or ``likely`` ruled out."""
    n = graph.n
    codes, lower, upper = graph.proposals()
    hopeless = (upper < threshold - _SLACK) | (size_bound(sizes[codes // n], sizes[codes % n]) < threshold)
    if likely is not None and len(codes):
        hopeless[~hopeless] = ~likely(code_pairs(codes[~hopeless], n))
    graph.decided(codes[hopeless])
    chosen = graph.within_budget(codes[~hopeless], lower[~hopeless])
    cand = code_pairs(chosen, n)
    graph.spend(cand, chosen)
    return cand, int(hopeless.sum())


class _Graph:
    """The completion graph: edges with their Jaccard, which of them are new since the last
    round, the files in a family (with a pair at the threshold), the pairs decided so far
    (sorted codes) and each file's remaining checks."""

    def __init__(self, n: int, cap: int) -> None:
        self.n, self.cap = n, cap
        self.edges, self.jac = np.empty((0, 2), dtype=np.int64), np.empty(0)
        # fresh[e, k]: edge e is new to its end k as a middle file (new since the last round,
        # or that end joined a family since: its old edges are new to it as a middle)
        self.fresh = np.empty((0, 2), dtype=bool)
        self.in_family = np.zeros(n, dtype=bool)
        self.seen = np.empty(0, dtype=np.int64)
        self.budget = np.full(n, cap, dtype=np.int64)
        self.capped = np.zeros(n, dtype=bool)

    @property
    def has_fresh(self) -> bool:
        return bool(self.fresh.any())

    @property
    def capped_files(self) -> int:
        return int(self.capped.sum())

    def decided(self, *codes: IntArray | None) -> None:
        """Never propose these pairs again."""
        self.seen = distinct(np.concatenate([self.seen, *(c for c in codes if c is not None)]))

    def add(self, edges: IntArray, jac: FloatArray, reported: BoolArray) -> None:
        """New edges, fresh for the next round; ``reported`` marks those at the threshold,
        whose files are in a family. A file that joins a family now passes on its older edges
        too: they are fresh to it as a middle file."""
        joined = np.zeros(self.n, dtype=bool)
        joined[edges[reported].ravel()] = True
        joined &= ~self.in_family
        self.in_family |= joined
        self.fresh = np.r_[joined[self.edges], np.ones((len(edges), 2), dtype=bool)]
        self.edges, self.jac = np.r_[self.edges, edges], np.r_[self.jac, jac]

    def spend(self, cand: IntArray, codes: IntArray) -> None:
        """Charge each file of ``cand`` a check, and mark the pairs decided."""
        np.subtract.at(self.budget, cand.ravel(), 1)
        self.decided(codes)

    def proposals(self) -> tuple[IntArray, FloatArray, FloatArray]:
        """The undecided pairs two hops apart through a fresh edge and a middle file in a
        family, as sorted codes with the best lower and upper triangle bounds over their middle
        files. (A file without a pair at the threshold passes nothing on: a tree of files all a
        little alike, none a pair, would otherwise be checked pair by pair for nothing.)"""
        middle = np.r_[self.edges[:, 0], self.edges[:, 1]]
        end = np.r_[self.edges[:, 1], self.edges[:, 0]]
        sim, new = np.r_[self.jac, self.jac], np.r_[self.fresh[:, 0], self.fresh[:, 1]]
        hub = self.in_family[middle]
        middle, end, sim, new = middle[hub], end[hub], sim[hub], new[hub]
        order = np.lexsort((end, -sim, middle))  # each middle file's partners, most similar first
        middle, end, sim, new = middle[order], end[order], sim[order], new[order]
        starts, sizes = runs(middle)
        first = np.repeat(starts, sizes)
        keep = np.arange(len(middle)) - first < self.cap
        if not keep.all():
            self._mark_cut(middle, end, new, first, np.repeat(sizes, sizes), keep)
        middle, end, sim, new = middle[keep], end[keep], sim[keep], new[keep]
        merged = _Proposals()
        for p, q in pairs_in_runs(*runs(middle), chunk=_CHUNK):
            via_new = new[p] | new[q]
            p, q = p[via_new], q[via_new]
            a, c = end[p], end[q]
            spent = _spent(a, c, self.budget, self.capped)
            a, c, p, q = a[~spent], c[~spent], p[~spent], q[~spent]
            codes = unordered_codes(a, c, self.n)
            open_ = ~member(codes, self.seen)
            sp, sq = sim[p][open_], sim[q][open_]
            merged.add(codes[open_], sp + sq - 1.0, 1.0 - np.abs(sp - sq))
        return merged.result()

    def _mark_cut(
        self, middle: IntArray, end: IntArray, new: BoolArray, first: IntArray, degree: IntArray, keep: BoolArray
    ) -> None:
        """Mark capped the middle files whose partners beyond the cap may hide an undecided pair
        (rows are partner edges; ``first`` is the row of each one's middle's most similar partner,
        ``degree`` the middle's partner count). Two cheap tests, so that a family LSH found whole
        warns of nothing: a partner with fewer decided pairs than the middle has partners
        (it cannot have them all decided), or a cut partner whose pair with the middle's most
        similar partner is undecided. A pair hidden past both goes unflagged: best effort."""
        ends = np.r_[self.seen // self.n, self.seen % self.n]
        decided = np.bincount(ends, minlength=self.n) if len(ends) else np.zeros(self.n, dtype=np.int64)
        over = degree > self.cap
        short = over & (decided[end] < degree)
        self.capped[middle[short]] = True
        rows = np.flatnonzero(~keep & (new | new[first]) & ~self.capped[middle])
        cut, top = end[rows], end[first[rows]]
        codes = unordered_codes(cut, top, self.n)
        self.capped[middle[rows][~member(codes, self.seen)]] = True

    def within_budget(self, codes: IntArray, lower: FloatArray) -> IntArray:
        """The codes to check this round, sorted: in order of likelihood (highest lower bound,
        then code), each pair while both its files have checks left. Done in passes over
        arrays: each takes the pairs that rank within both files' remaining checks (the
        likeliest pair left always does), until no pair is left or :data:`_PASSES` passes;
        files whose checks run out with pairs left, or with pairs left after the last pass,
        are marked capped."""
        budget = self.budget.copy()
        codes = codes[np.lexsort((codes, -lower))]
        taken: list[IntArray] = []
        for _ in range(_PASSES):
            codes = codes[~_spent(codes // self.n, codes % self.n, budget, self.capped)]
            if not len(codes):
                break
            take = _ranked_within(codes, budget, self.n)
            taken.append(codes[take])
            np.subtract.at(budget, np.r_[codes[take] // self.n, codes[take] % self.n], 1)
            codes = codes[~take]
        self.capped[codes // self.n] = self.capped[codes % self.n] = True  # left after the last pass
        return np.sort(np.concatenate([np.empty(0, np.int64), *taken]))


#: Most passes of :meth:`_Graph.within_budget` in one round (the likeliest pair left is always
#: taken, so a pass never takes nothing; dense families need a few). Pairs still left after them
#: are proposed again only through a new edge, and their files count as capped.
_PASSES = 32


def _spent(a: IntArray, c: IntArray, budget: IntArray, capped: BoolArray) -> BoolArray:
    """Which pairs ``(a, c)`` have a file out of checks; those files are marked capped."""
    out_a, out_c = budget[a] == 0, budget[c] == 0
    capped[a[out_a]] = capped[c[out_c]] = True
    return np.asarray(out_a | out_c)


def _ranked_within(codes: IntArray, budget: IntArray, n: int) -> BoolArray:
    """Which of ``codes`` (in priority order) rank below both their files' ``budget``."""
    ends = np.r_[codes // n, codes % n]
    priority = np.r_[np.arange(len(codes)), np.arange(len(codes))]
    by_file = np.lexsort((priority, ends))
    starts, sizes = runs(ends[by_file])
    rank = np.empty(len(ends), dtype=np.int64)
    rank[by_file] = np.arange(len(ends)) - np.repeat(starts, sizes)
    over = rank >= budget[ends]
    return np.asarray(~(over[: len(codes)] | over[len(codes) :]))


class _Proposals:
    """Proposals gathered chunk by chunk, merged by code (best bounds) whenever the rows
    added since the last merge pass :data:`_MERGE_ROWS` and the merged rows: memory holds
    about twice the distinct pairs, and the merges cost a sort of each row a few times."""

    def __init__(self) -> None:
        self.parts: list[tuple[IntArray, FloatArray, FloatArray]] = []
        self.merged = self.pending = 0  # rows in parts[0] once merged, rows after it

    def add(self, codes: IntArray, lower: FloatArray, upper: FloatArray) -> None:
        self.parts.append(_best_bounds(codes, lower, upper))
        self.pending += len(self.parts[-1][0])
        if self.pending > max(_MERGE_ROWS, self.merged):  # merging costs a sort of the merged rows
            self.parts = [self.result()]
            self.merged, self.pending = len(self.parts[0][0]), 0

    def result(self) -> tuple[IntArray, FloatArray, FloatArray]:
        if not self.parts:
            return np.empty(0, np.int64), np.empty(0), np.empty(0)
        if len(self.parts) == 1:
            return self.parts[0]
        return _best_bounds(*(np.concatenate(col) for col in zip(*self.parts, strict=True)))


_MERGE_ROWS = 4_000_000

#: Proposals made at a time: each costs about a dozen 8-byte values on its way (ends, codes,
#: bounds, masks), so a chunk holds about 100 MB.
_CHUNK = 1_000_000


def _best_bounds(codes: IntArray, lower: FloatArray, upper: FloatArray) -> tuple[IntArray, FloatArray, FloatArray]:
    """One row per distinct code, sorted: the highest lower bound and the lowest upper bound."""
    if not len(codes):
        return codes, lower, upper
    order = np.argsort(codes, kind="stable")
    codes, lower, upper = codes[order], lower[order], upper[order]
    starts, _ = runs(codes)
    return codes[starts], np.maximum.reduceat(lower, starts), np.minimum.reduceat(upper, starts)


def _result(found: _Found, checked: list[IntArray], pruned: int, rounds: int, capped: int, n: int) -> Completion:
    """The rounds' findings in one sorted :class:`Completion`."""
    empty = np.empty((0, 2), dtype=np.int64)
    ok = np.concatenate([empty, *(f[0] for f in found)])
    common = np.concatenate([np.empty(0, np.int64), *(f[1] for f in found)])
    jac = np.concatenate([np.empty(0), *(f[2] for f in found)])
    order = np.argsort(pair_codes(ok, n), kind="stable")
    every = np.concatenate([empty, *checked])
    return Completion(
        ok[order], common[order], jac[order], every[np.argsort(pair_codes(every, n))], pruned, rounds, capped
    )
