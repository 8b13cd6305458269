"""The scan, stage by stage: walk -> tokens/shingles -> identical groups -> MinHash ->
bands -> exact check -> clusters. No printing and no click here: progress goes through an
optional callback and everything else into the returned :class:`Result`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from minhashdup.config import Config
from minhashdup.core import bands as banding
from minhashdup.core import cluster, exact, signature
from minhashdup.core.hashing import UInt64Array
from minhashdup.core.runs import pair_codes
from minhashdup.engine import reuse
from minhashdup.errors import ScanLimitError
from minhashdup.result import Cluster, Group, Pair, Result, Skip, SkipReason, Stats
from minhashdup.source.extracted import Extracted
from minhashdup.source.paths import PathsArg, path_list
from minhashdup.source.walk import FileEntry, walk


class ProgressBar(Protocol):
    """What a progress factory returns: ``update(n)`` and ``close()`` (tqdm fits)."""

    def update(self, n: int = 1) -> object: ...

    def close(self) -> None: ...


ProgressFactory = Callable[[str, int], ProgressBar]


@dataclasses.dataclass
class Corpus:
    """Files that lexed into shingle sets, in walk order, plus everything skipped so far."""

    paths: list[str]
    sets: list[UInt64Array]
    lexers: list[str]
    skips: list[Skip]
    warnings: list[str]
    stats: Stats
    signatures: list[UInt64Array] = dataclasses.field(default_factory=list)
    family: tuple[int, int] | None = None  # (seed, K) of ``signatures``, if computed
    result: Result | None = None  # the whole result, when an identical scan stored it
    result_key: bytes | None = None  # where to store this scan's result


@dataclasses.dataclass
class Groups:
    """Files with identical shingle sets: ``members[g]`` lists the files of set ``g``."""

    members: list[list[int]]

    @property
    def representatives(self) -> list[int]:
        """The first file of each group, which stands for the group in MinHash."""
        return [m[0] for m in self.members]


def scan(paths: PathsArg, config: Config | None = None, progress: ProgressFactory | None = None) -> Result:
    """Find the near-duplicate files under ``paths``: what ``minhashdup scan`` does.

    Args:
        paths: a folder or file, or a list of them (a string is one path).
        config: options; defaults to :class:`Config` ().
        progress: optional factory of progress bars, called with a stage name and a total.

    Returns:
        The :class:`Result`, with exact Jaccard for every pair.

    Raises:
        InputPathError: a path does not exist.
        ConfigError: an option (e.g. a glob) is invalid.
        TypeError: ``paths`` holds something other than ``str`` or ``os.PathLike``.

    Example:
        >>> result = scan("examples", Config(threshold=0.6))
        >>> len(result.pairs), min(p.jaccard for p in result.pairs) >= 0.6
        (4, True)
    """
    config = config or Config()
    corpus = collect(path_list(paths), config, progress, reuse_result=True)
    if corpus.result is not None:
        return corpus.result
    result = find_pairs(corpus, config)
    if corpus.result_key is not None and reuse.storable(result):
        with reuse.open_cache(config, []) as store:
            if store is not None:
                store.put_result(corpus.result_key, reuse.encode_result(result))
    return result


def collect(
    paths: PathsArg,
    config: Config,
    progress: ProgressFactory | None = None,
    reuse_result: bool = False,
) -> Corpus:
    """Walk ``paths`` and turn every file into its shingle set (lexing in parallel).

    With ``config.cache``, files whose content, name and settings were seen before are
    taken from the cache (:mod:`minhashdup.engine.cache`) and only the others are lexed. With
    ``reuse_result`` too, when every input of the scan is as in an earlier one, that scan's
    result is returned in ``Corpus.result`` and no file is loaded (:func:`scan` does this).
    ``paths`` is one path or a list of them, as for :func:`scan`.
    """
    roots = path_list(paths)
    stats = Stats()
    t0 = time.perf_counter()
    walked = walk(
        roots, include=config.include, exclude=config.exclude, gitignore=config.gitignore, max_size=config.max_size
    )
    t1 = time.perf_counter()
    files, own = _own_files(walked.files, config.own_files)
    walked.skips.extend(own)
    warnings = list(walked.warnings)
    stats.files_walked = len(files)
    seeds = signature.hash_seeds(config.seed, config.num_hashes)
    with reuse.open_cache(config, warnings) as store:
        keys = reuse.file_keys(store, files, config)
        result_key = None
        if reuse_result and store is not None:
            result_key = reuse.result_key(config, files, keys, walked.skips)
            stored = reuse.replay(store, result_key, keys)
            if stored is not None:
                return _replayed(stored, config, len(files), t0, t1)
        results = reuse.from_cache(store, keys, config, seeds)
        misses = [i for i, r in enumerate(results) if r is None]
        bar = progress("lexing", len(misses)) if progress and misses else None
        try:
            todo = [files[i] for i in misses]
            on_done = bar.update if bar else None
            from minhashdup.source.extract import extract_all  # pygments and pools only when something is lexed

            items = extract_all(
                todo,
                config.shingle,
                config.workers,
                on_done,
                seeds,
                config.lexer_engine,
                warnings,
                config.lex_timeout,
                config.max_size,
            )
            for item in items:
                results[misses[item.index]] = dataclasses.replace(item, index=misses[item.index])
        finally:
            if bar:
                bar.close()
        if store is not None:
            changed = reuse.to_cache(store, files, keys, results, misses, config)
            warnings.extend(reuse.changed_warnings([files[i].path for i in changed]))
    stats.cache = {"hits": len(files) - len(misses), "lexed": len(misses), "result": 0}
    stats.seconds = {"walk": t1 - t0, "lex": time.perf_counter() - t1}
    corpus = Corpus([], [], [], list(walked.skips), warnings, stats)
    corpus.family = (config.seed, config.num_hashes)
    # A run that warned is not kept: a rebuilt cache, workers that could not start, a file that
    # changed during the scan (its result mixes the content of two moments).
    corpus.result_key = result_key if warnings == walked.warnings else None
    _fill(corpus, files, results)
    return corpus


def _replayed(stored: bytes, config: Config, files: int, t0: float, t1: float) -> Corpus:
    """A corpus carrying the stored result of this very scan, with this run's timings."""
    result = reuse.decode_result(stored, config.params())
    stats = result.stats
    stats.seconds = {"walk": t1 - t0, "lex": time.perf_counter() - t1}
    stats.seconds["total"] = sum(stats.seconds.values())
    stats.cpu_seconds = {}
    stats.cache = {"hits": files, "lexed": 0, "result": 1}
    corpus = Corpus([], [], [], [], list(result.warnings), stats)
    corpus.result = result
    return corpus


def _own_files(files: list[FileEntry], own: Sequence[str]) -> tuple[list[FileEntry], list[Skip]]:
    """Leave out the reports this run reads or writes: a baseline is not source to compare."""
    if not own:
        return files, []
    reals = {os.path.realpath(p) for p in own}
    kept = [f for f in files if f.real not in reals]
    return kept, [Skip(f.path, SkipReason.OWN_FILE, "a report of this run") for f in files if f.real in reals]


def _fill(corpus: Corpus, files: Sequence[FileEntry], results: Sequence[Extracted | None]) -> None:
    stats = corpus.stats
    cpu = np.zeros(4)
    for entry, maybe in zip(files, results, strict=True):
        assert maybe is not None  # every index comes back exactly once
        item = maybe
        cpu += item.cpu
        stats.not_utf8 += item.not_utf8
        if item.skip is not None:
            corpus.skips.append(Skip(entry.path, item.skip, item.detail))
            continue
        stats.files_scanned += 1
        stats.tokens += item.tokens
        corpus.paths.append(entry.path)
        corpus.sets.append(item.shingles)
        corpus.lexers.append(item.lexer)
        assert item.signature is not None
        corpus.signatures.append(item.signature)
    stats.cpu_seconds = dict(zip(("read", "lex", "shingle", "signature"), cpu.tolist(), strict=True))


def comparable(corpus: Corpus, min_shingles: int) -> list[int]:
    """Indices of the files with at least ``min_shingles`` distinct shingles."""
    return [i for i, s in enumerate(corpus.sets) if len(s) >= min_shingles]


def identical_groups(sets: Sequence[UInt64Array], indices: Sequence[int]) -> Groups:
    """Group ``indices`` by identical shingle set (first-seen order, members ascending).

    Sets are bucketed by size and three sampled values, then compared whole inside a bucket:
    equal sets always share a bucket, and no digest is trusted (copying every set to a bytes
    key cost a full pass over all shingles).

    Example:
        >>> a, b = np.array([1, 2, 3], dtype=np.uint64), np.array([1, 2, 4], dtype=np.uint64)
        >>> identical_groups([a, b, a.copy()], [0, 1, 2]).members
        [[0, 2], [1]]
    """
    groups: list[list[int]] = []
    buckets: dict[tuple[int, ...], list[int]] = {}  # sample -> indices into groups
    for i in indices:
        s = sets[i]
        n = len(s)
        sample = (n, int(s[0]), int(s[n // 2]), int(s[-1])) if n else (0,)
        candidates = buckets.setdefault(sample, [])
        for g in candidates:
            if np.array_equal(sets[groups[g][0]], s):
                groups[g].append(i)
                break
        else:
            candidates.append(len(groups))
            groups.append([i])
    return Groups(groups)


@dataclasses.dataclass
class Prepared:
    """The files that go to comparison: big enough, grouped by identical set."""

    corpus: Corpus
    groups: Groups
    skips: list[Skip]

    @property
    def reps(self) -> list[int]:
        """Corpus index of each group's representative."""
        return self.groups.representatives

    @functools.cached_property
    def rep_sets(self) -> list[UInt64Array]:
        """Shingle set of each representative, in group order."""
        return [self.corpus.sets[i] for i in self.reps]


def prepare(corpus: Corpus, config: Config) -> Prepared:
    """Drop files under ``--min-shingles`` (recorded as skips) and group identical sets."""
    keep = comparable(corpus, config.min_shingles)
    kept = set(keep)
    skips = list(corpus.skips)
    for i, s in enumerate(corpus.sets):
        if i not in kept:
            detail = f"{len(s)} distinct shingles < --min-shingles {config.min_shingles}"
            skips.append(Skip(corpus.paths[i], SkipReason.TOO_SMALL, detail))
    groups = identical_groups(corpus.sets, keep)
    stats = corpus.stats
    stats.files_compared = len(keep)
    stats.distinct_sets = len(groups.members)
    stats.identical_groups = sum(len(m) > 1 for m in groups.members)
    stats.shingles = int(sum(len(corpus.sets[i]) for i in keep))
    return Prepared(corpus, groups, skips)


def lsh_candidates(sigs: UInt64Array, config: Config) -> tuple[np.ndarray, list[banding.Oversize]]:
    """Candidate pairs of signature rows: those sharing a whole band."""
    keys = banding.band_keys(sigs, config.bands, config.rows)
    return banding.candidate_pairs(keys, config.max_bucket)


def find_pairs(corpus: Corpus, config: Config) -> Result:
    """MinHash, candidates (LSH bands, or the prefix filter with ``config.exact``) and the
    exact check over an already collected :class:`Corpus`."""
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
    with timer("exact"):
        ok, common, jac = exact.verify(cand, prep.rep_sets, config.threshold)
        est = signature.pair_estimates(sigs, ok, config.bits)
    with timer("cluster"):
        named = _named_groups(corpus, prep.groups)
        _check_listed(named, ok, config.max_verified)
        pairs, stats.verified_pairs = _expand(corpus, named, ok, common, jac, est)
        clusters = _clusters([g.files for g in named], ok, jac)
    stats.pairs_listed = len(pairs)
    stats.new_pairs = stats.verified_pairs  # until a review (baseline, changed files) says otherwise
    stats.clusters = len(clusters)
    stats.skipped = dict(Counter(s.reason.value for s in prep.skips))
    reps = prep.reps
    warnings = list(corpus.warnings) + [
        f"band {o.band + 1}: a bucket of {o.size} files (e.g. {corpus.paths[reps[o.example]]}) "
        f"exceeds --max-bucket {config.max_bucket}; its pairs were not compared"
        for o in oversize
    ]
    stats.seconds["total"] = sum(v for k, v in stats.seconds.items() if k != "total")
    notices = [s for s in prep.skips if not s.reason.is_filter]
    files = [corpus.paths[i] for members in prep.groups.members for i in members]
    rejected = _rejected(cand, ok, [corpus.paths[i] for i in reps])
    groups = sorted((g for g in named if len(g.files) > 1), key=lambda g: (-len(g.files), g.files))
    return Result(config.params(), stats, pairs, clusters, notices, warnings, sorted(files), rejected, groups)


def _rejected(cand: np.ndarray, ok: np.ndarray, names: list[str]) -> list[tuple[str, str]]:
    """Candidates (pairs of representatives) that failed the exact check, by path."""
    if not len(cand):
        return []
    n = len(names)
    failed = cand[~np.isin(pair_codes(cand, n), pair_codes(ok, n))]
    return sorted((a, b) if a <= b else (b, a) for a, b in ((names[i], names[j]) for i, j in failed.tolist()))


def rep_signatures(prep: Prepared, config: Config) -> UInt64Array:
    """Signatures of the representatives, cut to ``config.bits`` low bits."""
    return signature.truncate(_signatures(prep.corpus, prep.reps, config), config.bits)


def _signatures(corpus: Corpus, reps: list[int], config: Config) -> UInt64Array:
    """Signatures of the representatives: made while lexing when the family matches."""
    if corpus.family == (config.seed, config.num_hashes) and len(corpus.signatures) == len(corpus.sets):
        if not reps:
            return np.empty((0, config.num_hashes), dtype=np.uint64)
        return np.stack([corpus.signatures[i] for i in reps])
    seeds = signature.hash_seeds(config.seed, config.num_hashes)
    return signature.signatures_of_sets([corpus.sets[i] for i in reps], seeds)


#: A group of identical files, or two similar groups, standing for more file pairs than this
#: lists only some of them (see :func:`_expand`), so that the listing grows with the number of
#: files and not with its square. Every group of up to 45 files is listed whole.
MAX_LISTED_PAIRS = 1_000


def listed_within(n: int) -> int:
    """Rows listed for an identical group of ``n`` files: all its pairs while they are at most
    :data:`MAX_LISTED_PAIRS`, else its first file with each other one (``n - 1``)."""
    total = n * (n - 1) // 2
    return total if total <= MAX_LISTED_PAIRS else n - 1


def listed_across(na: int, nb: int) -> int:
    """Rows listed between two similar groups of ``na`` and ``nb`` files: every pair while they
    are at most :data:`MAX_LISTED_PAIRS`, else the pair of their first files."""
    return na * nb if na * nb <= MAX_LISTED_PAIRS else 1


def _named_groups(corpus: Corpus, groups: Groups) -> list[Group]:
    """Each group of identical sets by path (sorted: the first file anchors a partial listing),
    with the number of pairs inside it that :func:`_expand` lists."""
    out = []
    for members in groups.members:
        files = tuple(sorted(corpus.paths[i] for i in members))
        out.append(Group(files, len(corpus.sets[members[0]]), listed_within(len(files))))
    return out


def _check_listed(groups: list[Group], ok: np.ndarray, limit: int) -> None:
    """Refuse to list more pair rows than ``limit`` (``--max-verified``): a family of thousands
    of near copies (none identical) has millions of verified pairs, each a row.

    Raises:
        ScanLimitError: more rows than ``limit``.
    """
    sizes = np.array([len(g.files) for g in groups], dtype=np.int64)
    across = sizes[ok[:, 0]] * sizes[ok[:, 1]] if len(ok) else np.zeros(0, dtype=np.int64)
    rows = sum(g.pairs_listed for g in groups) + int(np.where(across <= MAX_LISTED_PAIRS, across, 1).sum())
    if rows > limit:
        raise ScanLimitError(
            f"{rows:,} verified pairs exceed --max-verified {limit:,} (about {rows * 250 // 2**20:,} MiB);"
            " raise --threshold, narrow the PATHS, or raise --max-verified"
        )


def _expand(
    corpus: Corpus, groups: list[Group], ok: np.ndarray, common: np.ndarray, jac: np.ndarray, est: np.ndarray
) -> tuple[list[Pair], int]:
    """Pairs of representatives -> pairs of files, and how many file pairs they stand for.

    Inside a group every pair is at J = 1; between two groups every pair has the
    representatives' J. Every pair is listed while a group, or two groups, stand for at most
    :data:`MAX_LISTED_PAIRS` file pairs; beyond, a group lists its first file with each other
    one, and two groups the pair of their first files: memory grows with the files, the count
    stays exact.
    """
    out: list[Pair] = []
    total = 0
    for group in groups:
        files, n = group.files, group.shingles
        total += group.pairs_total
        if group.pairs_listed == group.pairs_total:
            out.extend(Pair(a, b, 1.0, 1.0, n, n, n) for x, a in enumerate(files) for b in files[x + 1 :])
        else:
            out.extend(Pair(files[0], b, 1.0, 1.0, n, n, n) for b in files[1:])
    for (gi, gj), c, j, e in _rows(ok, common, jac, est):
        ga, gb = groups[gi], groups[gj]
        total += len(ga.files) * len(gb.files)
        listed = (
            [(x, y) for x in ga.files for y in gb.files]
            if listed_across(len(ga.files), len(gb.files)) > 1
            else [(ga.files[0], gb.files[0])]
        )
        out.extend(_pair(x, y, j, e, ga.shingles, gb.shingles, c) for x, y in listed)
    out.sort(key=lambda p: (-p.jaccard, p.a, p.b))
    return out, total


def _rows(*columns: np.ndarray) -> Iterator[tuple[Any, ...]]:
    """The rows of equally long arrays as Python values, converted a block at a time (a list
    of millions of Python numbers costs ten times the array)."""
    for start in range(0, len(columns[0]), 65_536):
        yield from zip(*(c[start : start + 65_536].tolist() for c in columns), strict=True)


def _pair(a: str, b: str, jac: float, est: float, na: int, nb: int, common: int) -> Pair:
    if b < a:
        a, b, na, nb = b, a, nb, na
    return Pair(a, b, jac, est, na, nb, common)


def _clusters(files: list[tuple[str, ...]], ok: np.ndarray, jac: np.ndarray) -> list[Cluster]:
    """Families: groups of identical files joined by the verified pairs of their
    representatives, every pair of files counted (as if each had been listed)."""
    root = cluster.roots(len(files), (edge for (edge,) in _rows(ok)))
    names: dict[int, list[str]] = {}
    count: dict[int, int] = {}
    sims: dict[int, list[float]] = {}
    for g, members in enumerate(files):
        names.setdefault(root[g], []).extend(members)
        if len(members) > 1:
            count[root[g]] = count.get(root[g], 0) + len(members) * (len(members) - 1) // 2
            sims.setdefault(root[g], []).append(1.0)
    for (gi, gj), j in _rows(ok, jac):
        count[root[gi]] = count.get(root[gi], 0) + len(files[gi]) * len(files[gj])
        sims.setdefault(root[gi], []).append(j)
    found = [Cluster(tuple(sorted(names[r])), n, min(sims[r]), max(sims[r])) for r, n in count.items()]
    found.sort(key=lambda c: (-len(c.files), c.files[0]))
    return found


@contextlib.contextmanager
def _timed(seconds: dict[str, float], stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds[stage] = seconds.get(stage, 0.0) + time.perf_counter() - start
