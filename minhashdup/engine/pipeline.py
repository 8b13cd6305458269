"""The scan, stage by stage, and the seam where an engine plugs in.

walk (:mod:`minhashdup.source.walk`) -> an engine (:class:`minhashdup.engine.base.Engine`) turns the files into a
:class:`~minhashdup.core.pairs.Corpus` (shingle sets and signatures) -> :func:`find_pairs`:
identical groups, MinHash bands (or the prefix filter), the exact check, clusters. The engine
is the only part that differs between running here (:class:`minhashdup.engine.local.LocalEngine`,
worker processes and the cache) and elsewhere; every engine hands over the same arrays and
:func:`find_pairs` runs the same core functions on them.

No printing and no click here: progress goes through an optional callback and everything
else into the returned :class:`Result`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from minhashdup.config import Config
from minhashdup.core import bands as banding
from minhashdup.core import completion, exact, pairs, signature
from minhashdup.core.hashing import UInt64Array
from minhashdup.core.pairs import Corpus, Prepared
from minhashdup.core.runs import pair_codes
from minhashdup.core.shingles import jaccard
from minhashdup.core.signature import Family
from minhashdup.engine import cached
from minhashdup.engine.base import Engine, ProgressBar, ProgressFactory, Walked
from minhashdup.engine.local import LocalEngine
from minhashdup.result import Group, Pair, Result, Skip, SkipReason
from minhashdup.source.parquet import Dataset, Filters, open_dataset, read_parts
from minhashdup.source.paths import PathsArg, path_list
from minhashdup.source.walk import FileEntry, Kinds, walk

__all__ = [
    "Engine",
    "ProgressBar",
    "ProgressFactory",
    "Walked",
    "collect",
    "complete_families",
    "find_pairs",
    "scan",
    "scan_dataset",
]


def scan(paths: PathsArg | Dataset, config: Config | None = None, progress: ProgressFactory | None = None) -> Result:
    """Find the near-duplicate files under ``paths``: what ``minhashdup scan`` does.

    Args:
        paths: a folder or file, or a list of them (a string is one path); or a Parquet
            :class:`~minhashdup.source.parquet.Dataset` of files (:func:`scan_dataset`).
        config: options; defaults to :class:`Config` ().
        progress: optional factory of progress bars, called with a stage name and a total.

    Returns:
        The :class:`Result`, with exact Jaccard for every pair.

    Raises:
        InputPathError: a path does not exist (or a dataset cannot be read).
        ConfigError: an option (e.g. a glob) is invalid.
        TypeError: ``paths`` holds something other than ``str`` or ``os.PathLike``.

    Example:
        >>> result = scan("examples", Config(threshold=0.6))
        >>> len(result.pairs), min(p.jaccard for p in result.pairs) >= 0.6
        (4, True)
    """
    config = config or Config()
    if isinstance(paths, Dataset):
        return scan_dataset(paths, config, progress)
    walked = walk_files(path_list(paths), config)

    def again(named: set[str]) -> list[Walked]:
        return [Walked([f for f in walked.files if f.path in named], [], [], 0.0, time.perf_counter())]

    with cached.session(config, walked.warnings) as cache:
        engine: Engine = LocalEngine(progress, cache)  # the seam: another engine plugs in here
        if cache is None:
            return with_verbatim(find_pairs(engine.collect(walked, config), config), again, config, None)
        stored = cache.replay(walked.files, walked.skips)
        if stored is not None:
            return _replayed(stored, walked)
        return cache.keep(with_verbatim(find_pairs(engine.collect(walked, config), config), again, config, cache))


def scan_dataset(dataset: Dataset, config: Config, progress: ProgressFactory | None = None) -> Result:
    """:func:`scan` of the files of a Parquet ``dataset`` (:mod:`minhashdup.source.parquet`) on
    the local engine, part by part (:meth:`LocalEngine.collect_parts`): at most a part's content
    is held at a time. The cache serves and keeps each row's shingles as a file's (by its bytes
    and name), but no whole result is replayed: nothing tells a dataset unchanged but its bytes.

    Raises:
        ConfigError: pyarrow is not installed, a column is missing (see
            :func:`~minhashdup.source.parquet.open_dataset`).
        InputPathError: the dataset cannot be found or read.
    """
    opened = open_dataset(dataset)  # every file's columns checked before any lexing
    kinds = Kinds(config.include_generated, config.exclude_vendored)
    filters = Filters(config.include, config.exclude, config.max_size, kinds)
    warnings: list[str] = []

    def parts(only: set[str] | None) -> Iterator[Walked]:
        for k, part in enumerate(read_parts(opened, filters, only)):
            yield Walked(
                part.files, part.skips, warnings if k == 0 and only is None else [], part.seconds, time.perf_counter()
            )

    with cached.session(config, warnings) as cache:
        corpus = LocalEngine(progress, cache).collect_parts(parts(None), config, total=opened.rows)
        result = with_verbatim(find_pairs(corpus, config), parts, config, cache)
    result.params["parquet"] = dataclasses.asdict(dataset)
    return result


def with_verbatim(
    result: Result, files: Callable[[set[str]], Iterable[Walked]], config: Config, cache: cached.CachedFiles | None
) -> Result:
    """With names or literals normalised, each pair's ``jaccard_verbatim``: the exact Jaccard of
    the two files' verbatim shingles (no placeholder, no ``--max-df``), so that a renamed copy
    tells from a verbatim one. The paired files (``files`` gives them, read again, from the paths
    named) are lexed again as a default scan lexes them (from the cache when a default scan
    stored them)."""
    if not config.normalisation.active or not result.pairs:
        return result
    t0 = time.perf_counter()
    plain = dataclasses.replace(config, ignore_identifiers=False, ignore_literals=False, max_df=None)
    named = {path for p in result.pairs for path in (p.a, p.b)}
    store = None if cache is None else cached.CachedFiles(cache.store, plain)
    corpus = LocalEngine(None, store).collect_parts(files(named), plain)
    sets = dict(zip(corpus.paths, corpus.sets, strict=True))
    pairs = [
        dataclasses.replace(p, jaccard_verbatim=jaccard(sets[p.a], sets[p.b]) if p.a in sets and p.b in sets else None)
        for p in result.pairs
    ]
    result.stats.seconds["verbatim"] = time.perf_counter() - t0
    return dataclasses.replace(result, pairs=pairs)


def collect(paths: PathsArg, config: Config, progress: ProgressFactory | None = None) -> Corpus:
    """Walk ``paths`` and turn every file into its shingle set (lexing in parallel).

    With ``config.uses_cache``, files whose content, name and settings were seen before are
    taken from the cache (:mod:`minhashdup.engine.cached`) and only the others are lexed.
    ``paths`` is one path or a list of them, as for :func:`scan`.
    """
    walked = walk_files(path_list(paths), config)
    with cached.session(config, walked.warnings) as cache:
        return LocalEngine(progress, cache).collect(walked, config)


def walk_files(roots: Sequence[str], config: Config) -> Walked:
    """The walk of ``roots`` under ``config``'s filters, the run's own reports left out."""
    t0 = time.perf_counter()
    kinds = Kinds(config.include_generated, config.exclude_vendored)
    walked = walk(
        roots,
        include=config.include,
        exclude=config.exclude,
        gitignore=config.gitignore,
        max_size=config.max_size,
        kinds=kinds,
    )
    t1 = time.perf_counter()
    files, own = _own_files(walked.files, config.own_files)
    return Walked(files, [*walked.skips, *own], list(walked.warnings), t1 - t0, t1)


def _own_files(files: list[FileEntry], own: Sequence[str]) -> tuple[list[FileEntry], list[Skip]]:
    """Leave out the reports this run reads or writes: a baseline is not source to compare."""
    if not own:
        return files, []
    reals = {os.path.realpath(p) for p in own}
    kept = [f for f in files if f.real not in reals]
    return kept, [Skip(f.path, SkipReason.OWN_FILE, "a report of this run") for f in files if f.real in reals]


def _replayed(result: Result, walked: Walked) -> Result:
    """The stored result of this very scan, with this run's timings."""
    stats = result.stats
    stats.seconds = {"walk": walked.seconds, "lex": time.perf_counter() - walked.ended}
    stats.seconds["total"] = sum(stats.seconds.values())
    stats.cpu_seconds = {}
    stats.cache = {"hits": len(walked.files), "lexed": 0, "copies": 0, "result": 1}
    return result


def prepare(corpus: Corpus, config: Config) -> Prepared:
    """:func:`minhashdup.core.pairs.prepare` with ``config.min_shingles``, after ``config.max_df``
    has left out the too common shingles (:func:`without_common`)."""
    if config.max_df is not None:
        corpus = without_common(corpus, config)
    return pairs.prepare(corpus, config.min_shingles)


def lsh_candidates(sigs: UInt64Array, config: Config) -> tuple[np.ndarray, list[banding.Oversize]]:
    """Candidate pairs of signature rows: those sharing a whole band."""
    keys = banding.band_keys(sigs, config.bands, config.rows)
    return banding.candidate_pairs(keys, config.max_bucket)


def rep_signatures(prep: Prepared, config: Config) -> UInt64Array:
    """Signatures of the representatives, cut to ``config.bits`` low bits."""
    return pairs.rep_signatures(prep, Family(config.seed, config.num_hashes), config.bits)


def find_pairs(corpus: Corpus, config: Config) -> Result:
    """MinHash, candidates (LSH bands, or the prefix filter with ``config.exact``) and the
    exact check over an already collected :class:`Corpus`: the same for every engine."""
    stats = corpus.stats
    timer = functools.partial(_timed, stats.seconds)
    prep = prepare(corpus, config)
    with timer("signature"):
        sigs = rep_signatures(prep, config)
    oversize: list[banding.Oversize] = []
    if config.exact:
        with timer("prefix"):
            cand = exact.prefix_candidates(prep.rep_sets, config.threshold)
    else:
        with timer("bands"):
            cand, oversize = lsh_candidates(sigs, config)
    stats.candidates = len(cand)
    stats.oversize_buckets = len(oversize)
    named = pairs.named_groups(corpus, prep.groups)
    with timer("exact"):
        checked = exact.verify(cand, prep.rep_sets, edge_floor(config))
    ok, common, jac, capped = _complete(prep, sigs, cand, checked, named, config)
    with timer("exact"):
        est = signature.pair_estimates(sigs, ok, config.bits)
    with timer("cluster"):
        pairs.check_listed(named, ok, config.max_verified)
        listed, stats.verified_pairs = pairs.expand(named, ok, common, jac, est)
        clusters = pairs.clusters([g.files for g in named], ok, jac)
    listed = _marked(listed, corpus.vendored)
    stats.pairs_listed = len(listed)
    stats.new_pairs = stats.verified_pairs  # until a review (baseline, changed files) says otherwise
    stats.clusters = len(clusters)
    stats.skipped = dict(Counter(s.reason.value for s in prep.skips))
    reps = prep.reps
    warnings = list(corpus.warnings) + [
        f"band {o.band + 1}: a bucket of {o.size} files (e.g. {corpus.paths[reps[o.example]]}) "
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
    notices = [s for s in prep.skips if not s.reason.is_filter]
    files = [corpus.paths[i] for members in prep.groups.members for i in members]
    rejected = pairs.rejected(cand, ok, [corpus.paths[i] for i in reps])
    groups = sorted((g for g in named if len(g.files) > 1), key=lambda g: (-len(g.files), g.files))
    return Result(config.params(), stats, listed, clusters, notices, warnings, sorted(files), rejected, groups)


def _marked(listed: list[Pair], vendored: set[str]) -> list[Pair]:
    """The pairs, each side marked when it is vendored."""
    if not vendored:
        return listed
    return [dataclasses.replace(p, vendored_a=p.a in vendored, vendored_b=p.b in vendored) for p in listed]


def without_common(corpus: Corpus, config: Config) -> Corpus:
    """``corpus`` without the shingles found in more than ``config.max_df`` of the compared files
    (counted in ``stats.shingles_dropped``); signatures are made again for the sets left."""
    assert config.max_df is not None
    sets, dropped = pairs.drop_common(corpus.sets, pairs.comparable(corpus, config.min_shingles), config.max_df)
    corpus.stats.shingles_dropped = dropped
    if not dropped:
        return corpus
    return dataclasses.replace(corpus, sets=sets, signatures=[], family=None)


def edge_floor(config: Config) -> float:
    """What the exact check of the candidates keeps: with completion, the near pairs too
    (edges of the completion graph), else the pairs at the threshold."""
    return completion.near(config.threshold) if config.completes else config.threshold


_Checked = tuple[np.ndarray, np.ndarray, np.ndarray]


def _complete(
    prep: Prepared, sigs: UInt64Array, cand: np.ndarray, checked: _Checked, named: list[Group], config: Config
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The verified pairs of the candidates, and with ``config.completes`` those family
    completion adds (:func:`minhashdup.core.completion.complete`), counted in ``stats``.

    ``checked`` holds the candidates' pairs at :func:`edge_floor` (the completion graph's
    edges), their common shingles and Jaccard. Returns the verified pairs, their common
    shingles and Jaccard, and the number of files the completion cap held back.
    """
    edges, common, jac = checked
    found = jac >= config.threshold
    stats = prep.corpus.stats
    ok, common_ok, jac_ok = edges[found], common[found], jac[found]
    stats.candidate_pairs = pairs.across(named, ok)
    if not config.completes:
        return ok, common_ok, jac_ok, 0
    pairs.check_listed(named, ok, config.max_verified)  # too many already: stop before completing
    with _timed(stats.seconds, "complete"):
        done = complete_families(prep.rep_sets, sigs, cand, edges, jac, config)
    stats.completion_checks, stats.completion_rounds = done.checks, done.rounds
    stats.completion_pairs = pairs.across(named, done.pairs)
    return (
        np.concatenate([ok, done.pairs]),
        np.concatenate([common_ok, done.common]),
        np.concatenate([jac_ok, done.jaccard]),
        done.capped,
    )


def complete_families(
    sets: Sequence[UInt64Array], sigs: UInt64Array, cand: np.ndarray, edges: np.ndarray, jac: np.ndarray, config: Config
) -> completion.Completion:
    """Family completion (:func:`minhashdup.core.completion.complete`) after the exact check
    of ``cand``: ``edges`` are the candidates at :func:`edge_floor` with their Jaccard ``jac``;
    proposals whose MinHash estimate (from ``sigs``, b-bit as configured) is below
    :func:`~minhashdup.core.completion.estimate_floor` are not checked."""
    floor = completion.estimate_floor(config.threshold, config.num_hashes, config.bits)
    return completion.complete(
        edges,
        jac,
        sets,
        config.threshold,
        cap=config.completion_cap,
        known=pair_codes(cand, len(sets)),
        likely=lambda proposed: signature.pair_estimates(sigs, proposed, config.bits) >= floor,
    )


@contextlib.contextmanager
def _timed(seconds: dict[str, float], stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds[stage] = seconds.get(stage, 0.0) + time.perf_counter() - start
