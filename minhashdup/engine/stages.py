"""The pair stages of a scan, the same for every engine: candidates (MinHash bands, or the prefix
filter), the exact check, family completion, the listing and the clusters.

They work on :class:`Compared` (what is known of every file: its path, its set's size, its group
of identical sets, the skips) and a :class:`Reps` (the representatives' shingle sets and
signatures, where the engine keeps them: :class:`LocalReps` in this process, the Dask engine's on
a cluster's workers). Only pairs, their counts and Jaccards cross that seam, never the sets.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import Counter
from collections.abc import Iterator
from typing import Protocol

import numpy as np

from minhashdup.config import Config
from minhashdup.core import bands as banding
from minhashdup.core import completion, exact, pairs, signature
from minhashdup.core.exact import FloatArray, IntArray
from minhashdup.core.hashing import UInt64Array
from minhashdup.core.pairs import Corpus, Groups, Prepared
from minhashdup.core.runs import pair_codes
from minhashdup.core.signature import Family
from minhashdup.engine.parallel import pool_size
from minhashdup.result import Group, Result, Skip, Stats


class Reps(Protocol):
    """The representatives' sets and signatures, in group order, wherever they live.

    ``sizes`` is each one's set size; the methods work on pairs of representatives (``(m, 2)``
    rows of group numbers) and are timed by the caller."""

    @property
    def sizes(self) -> IntArray: ...

    def sign(self) -> None:
        """Make the signatures if they are not made yet."""

    def candidates(self, config: Config) -> tuple[IntArray, list[banding.Oversize]]:
        """Candidate pairs, sorted by ``(i, j)``, and the buckets too big to pair."""
        ...

    def verify(self, pairs: IntArray, threshold: float) -> tuple[IntArray, IntArray, FloatArray]:
        """:func:`minhashdup.core.exact.verify` of ``pairs``: those at ``threshold``, their
        common shingles and Jaccard, in input order."""
        ...

    def estimates(self, pairs: IntArray, bits: int) -> FloatArray:
        """The MinHash estimate of each pair (:func:`minhashdup.core.signature.pair_estimates`)."""
        ...


#: Candidate pairs per thread of the exact check, at least (:meth:`LocalReps.verify`).
THREADED_PAIRS = 1024


class LocalReps:
    """:class:`Reps` held in this process: the prepared corpus's representatives."""

    def __init__(self, prep: Prepared, config: Config) -> None:
        self.sets = prep.rep_sets
        self.sizes = np.fromiter((len(s) for s in self.sets), dtype=np.int64, count=len(self.sets))
        self.prep = prep
        self.config: Config | None = config
        self.sigs: UInt64Array | None = None

    @classmethod
    def of(cls, sets: list[UInt64Array], sigs: UInt64Array, config: Config | None = None) -> LocalReps:
        """Reps of ``sets`` already signed (``sigs``, cut to the bits in use); ``config``: the
        scan's, for its worker count (:meth:`verify`), else one thread."""
        reps = cls.__new__(cls)
        reps.sets, reps.sigs, reps.config = sets, sigs, config
        reps.sizes = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
        return reps

    def sign(self) -> None:
        if self.sigs is None:
            assert self.config is not None  # made by __init__, which has the scan's config
            self.sigs = rep_signatures(self.prep, self.config)

    def candidates(self, config: Config) -> tuple[IntArray, list[banding.Oversize]]:
        if config.exact:
            return exact.prefix_candidates(self.sets, config.threshold), []
        assert self.sigs is not None
        return lsh_candidates(self.sigs, config)

    def verify(self, pairs: IntArray, threshold: float) -> tuple[IntArray, IntArray, FloatArray]:
        """:func:`minhashdup.core.exact.verify`, many pairs cut in parts checked in threads, one
        per worker process the scan may use: the intersections (numpy's ``searchsorted``) let
        go of the GIL. The same pairs come back, in the input order, whatever the threads."""
        threads = 1 if self.config is None else pool_size(self.config.workers, len(pairs) // THREADED_PAIRS)
        if threads == 1:
            return exact.verify(pairs, self.sets, threshold)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(threads) as pool:
            done = list(pool.map(lambda part: exact.verify(part, self.sets, threshold), np.array_split(pairs, threads)))
        kept, common, jac = (np.concatenate(column) for column in zip(*done, strict=True))
        return kept, common, jac

    def estimates(self, pairs: IntArray, bits: int) -> FloatArray:
        assert self.sigs is not None
        return signature.pair_estimates(self.sigs, pairs, bits)


@dataclasses.dataclass
class Compared:
    """What the pair stages know of the files: every path that lexed (``paths``, with its set's
    size in ``sizes``), the groups of identical sets among those compared, every skip (the
    engine's and ``too-small``), the warnings so far, the stats and the vendored paths."""

    paths: list[str]
    sizes: IntArray
    groups: Groups
    skips: list[Skip]
    warnings: list[str]
    stats: Stats
    vendored: set[str]


def prepare(corpus: Corpus, config: Config) -> Prepared:
    """:func:`minhashdup.core.pairs.prepare` with ``config.min_shingles``, after ``config.max_df``
    has left out the too common shingles (:func:`without_common`)."""
    if config.max_df is not None:
        corpus = without_common(corpus, config)
    return pairs.prepare(corpus, config.min_shingles)


def without_common(corpus: Corpus, config: Config) -> Corpus:
    """``corpus`` without the shingles found in more than ``config.max_df`` of the compared files
    (counted in ``stats.shingles_dropped``); signatures are made again for the sets left."""
    assert config.max_df is not None
    sets, dropped = pairs.drop_common(corpus.sets, pairs.comparable(corpus, config.min_shingles), config.max_df)
    corpus.stats.shingles_dropped = dropped
    if not dropped:
        return corpus
    return dataclasses.replace(corpus, sets=sets, signatures=[], family=None)


def lsh_candidates(sigs: UInt64Array, config: Config) -> tuple[np.ndarray, list[banding.Oversize]]:
    """Candidate pairs of signature rows: those sharing a whole band."""
    keys = banding.band_keys(sigs, config.bands, config.rows)
    return banding.candidate_pairs(keys, config.max_bucket)


def rep_signatures(prep: Prepared, config: Config) -> UInt64Array:
    """Signatures of the representatives, cut to ``config.bits`` low bits."""
    return pairs.rep_signatures(prep, Family(config.seed, config.num_hashes), config.bits)


def find_pairs(corpus: Corpus, config: Config) -> Result:
    """MinHash, candidates (LSH bands, or the prefix filter with ``config.exact``) and the
    exact check over an already collected :class:`Corpus`, held in this process."""
    prep = prepare(corpus, config)
    sizes = np.fromiter((len(s) for s in prep.corpus.sets), dtype=np.int64, count=len(prep.corpus.sets))
    seen = Compared(corpus.paths, sizes, prep.groups, prep.skips, corpus.warnings, corpus.stats, corpus.vendored)
    return pairs_of(seen, LocalReps(prep, config), config)


def pairs_of(seen: Compared, reps: Reps, config: Config) -> Result:
    """The pair stages over ``seen`` and its representatives ``reps``: the same for every engine."""
    stats = seen.stats
    with _timed(stats.seconds, "signature"):
        reps.sign()
    with _timed(stats.seconds, "prefix" if config.exact else "bands"):
        cand, oversize = reps.candidates(config)
    stats.candidates = len(cand)
    stats.oversize_buckets = len(oversize)
    named = pairs.named_groups(seen.paths, seen.sizes, seen.groups)
    with _timed(stats.seconds, "exact"):
        checked = reps.verify(cand, edge_floor(config))
    ok, common, jac, capped = _complete(reps, stats, cand, checked, named, config)
    with _timed(stats.seconds, "exact"):
        est = reps.estimates(ok, config.bits)
    with _timed(stats.seconds, "cluster"):
        pairs.check_listed(named, ok, config.max_verified)
        listed, stats.verified_pairs = pairs.expand(named, ok, common, jac, est, seen.vendored)
        clusters = pairs.clusters([g.files for g in named], ok, jac)
    stats.pairs_listed = len(listed)
    stats.new_pairs = stats.verified_pairs  # until a review (baseline, changed files) says otherwise
    stats.clusters = len(clusters)
    stats.skipped = dict(Counter(s.reason.value for s in seen.skips))
    rep_paths = [seen.paths[i] for i in seen.groups.representatives]
    warnings = list(seen.warnings) + [
        f"band {o.band + 1}: a bucket of {o.size} files (e.g. {rep_paths[o.example]}) "
        f"exceeds --max-bucket {config.max_bucket}; its pairs were not compared"
        for o in oversize
    ]
    if capped:
        warnings.append(
            f"family completion: --completion-cap {config.completion_cap} left pairs unchecked around {capped} "
            f"files (each passes on at most {config.completion_cap} similar partners and takes part in at most "
            f"{config.completion_cap} checks); pairs in their families may be missed: raise --completion-cap"
        )
    stats.seconds["total"] = sum(v for k, v in stats.seconds.items() if k != "total")
    notices = [s for s in seen.skips if not s.reason.is_filter]
    files = sorted(seen.paths[i] for members in seen.groups.members for i in members)
    rejected = pairs.rejected(cand, ok, rep_paths)
    groups = sorted((g for g in named if len(g.files) > 1), key=lambda g: (-len(g.files), g.files))
    unpaired = unpaired_files(oversize, named, files)
    return Result(config.params(), stats, listed, clusters, notices, warnings, files, rejected, groups, unpaired)


def unpaired_files(oversize: list[banding.Oversize], named: list[Group], files: list[str]) -> list[str]:
    """The files of the buckets too big to pair (their groups' members), sorted; every file of
    ``files`` when an engine does not say who was in one (``members`` is ``None``: Dask's)."""
    known = [o.members for o in oversize if o.members is not None]
    if len(known) < len(oversize):
        return list(files)
    crowded = np.unique(np.concatenate(known)).tolist() if known else []
    return sorted({path for g in crowded for path in named[g].files})


def edge_floor(config: Config) -> float:
    """What the exact check of the candidates keeps: with completion, the near pairs too
    (edges of the completion graph), else the pairs at the threshold."""
    return completion.near(config.threshold) if config.completes else config.threshold


_Checked = tuple[IntArray, IntArray, FloatArray]


def _complete(
    reps: Reps, stats: Stats, cand: IntArray, checked: _Checked, named: list[Group], config: Config
) -> tuple[IntArray, IntArray, FloatArray, int]:
    """The verified pairs of the candidates, and with ``config.completes`` those family
    completion adds (:func:`minhashdup.core.completion.complete`), counted in ``stats``.

    ``checked`` holds the candidates' pairs at :func:`edge_floor` (the completion graph's
    edges), their common shingles and Jaccard. Returns the verified pairs, their common
    shingles and Jaccard, and the number of files the completion cap held back.
    """
    edges, common, jac = checked
    found = jac >= config.threshold
    ok, common_ok, jac_ok = edges[found], common[found], jac[found]
    stats.candidate_pairs = pairs.across(named, ok)
    if not config.completes:
        return ok, common_ok, jac_ok, 0
    pairs.check_listed(named, ok, config.max_verified)  # too many already: stop before completing
    with _timed(stats.seconds, "complete"):
        done = complete_families(reps, cand, edges, jac, config)
    stats.completion_checks, stats.completion_rounds = done.checks, done.rounds
    stats.completion_pairs = pairs.across(named, done.pairs)
    return (
        np.concatenate([ok, done.pairs]),
        np.concatenate([common_ok, done.common]),
        np.concatenate([jac_ok, done.jaccard]),
        done.capped,
    )


def complete_families(
    reps: Reps, cand: IntArray, edges: IntArray, jac: FloatArray, config: Config
) -> completion.Completion:
    """Family completion (:func:`minhashdup.core.completion.complete`) over ``reps`` after the
    exact check of ``cand``: ``edges`` are the candidates at :func:`edge_floor` with their
    Jaccard ``jac``; proposals whose MinHash estimate (b-bit as configured) is below
    :func:`~minhashdup.core.completion.estimate_floor` are not checked. Each round's checks
    and estimates run where ``reps`` keeps the sets."""
    floor = completion.estimate_floor(config.threshold, config.num_hashes, config.bits)
    return completion.complete(
        edges,
        jac,
        reps,
        config.threshold,
        cap=config.completion_cap,
        known=pair_codes(cand, len(reps.sizes)),
        likely=lambda proposed: reps.estimates(proposed, config.bits) >= floor,
    )


@contextlib.contextmanager
def _timed(seconds: dict[str, float], stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds[stage] = seconds.get(stage, 0.0) + time.perf_counter() - start
