"""The Dask engine (``--engine dask``): the scan on a Dask cluster, its output the local engine's.

1. **Extraction**: one task per batch of walked files (or per file of a Parquet dataset, read
   on the worker) runs :func:`~minhashdup.source.extract.extract_file` on each
   (:func:`.shards.extract_shard`); the shingle sets and signatures stay on the workers as
   shards, the client gathers each file's small :class:`~.shards.Meta`.
2. **Prepare** (client): the walk's rules on the metas, ``--min-shingles``, identical sets
   grouped by a digest of each set: per-file metadata only.
3. **Bands**: each shard gives ``(band, key, representative)`` rows, which a Dask dataframe
   shuffle brings together by ``(band, key)``; each part's buckets give the candidate pairs
   (buckets past ``--max-bucket`` reported, as on the local engine).
4. **Exact check, completion, estimates**: pairs grouped by the two shards holding their sets,
   one task per pair of shards, where the sets are; family completion runs its rounds the
   same way. The client receives pairs, their shared-shingle counts and Jaccards.
5. The listing, families and report: :func:`.stages.pairs_of`, as on the local engine.

The client's memory grows with the files (a path, a 16-byte digest, a few counters each) and the
pairs, never with the shingles. Tasks are retried when their worker dies
(:data:`RETRIES`); a shard lost with a worker is extracted again by the scheduler.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from minhashdup.config import Config
from minhashdup.core import bands as banding
from minhashdup.core import pairs
from minhashdup.core.exact import FloatArray, IntArray
from minhashdup.core.runs import code_pairs, distinct, runs
from minhashdup.engine import shards
from minhashdup.engine.base import ProgressFactory, Walked
from minhashdup.engine.cluster import connected, finished
from minhashdup.engine.stages import Compared, pairs_of
from minhashdup.engine.workers import Recipe, same_size
from minhashdup.errors import ConfigError
from minhashdup.result import Result, Skip, SkipReason, Stats
from minhashdup.source.kinds import Kinds
from minhashdup.source.parquet import Filters, open_dataset
from minhashdup.source.paths import Dataset
from minhashdup.source.walk import FileEntry

#: A worker that dies costs its tasks this many more tries.
RETRIES = 3
#: Files, and bytes, of one extraction task of a walked tree.
BATCH_FILES, BATCH_BYTES = 256, 16 * 1024 * 1024
#: Pairs of one exact-check task.
BLOCK_PAIRS = 200_000


def scan_walked(walked: Walked, config: Config, progress: ProgressFactory | None = None) -> Result:
    """The scan of walked files on the cluster of ``config``: extraction batches in walk order."""
    _refuse(config)
    recipe = Recipe.of(config)
    with connected(config) as client:
        tasks, numbers = [], list(_batches(walked.files))
        owner = np.zeros(len(walked.files), dtype=np.int64)
        chosen = [[walked.files[i] for i in ids.tolist()] for ids in numbers]
        for s, (ids, batch) in enumerate(zip(numbers, chosen, strict=True)):
            owner[ids] = s
            tasks.append(client.submit(shards.extract_shard, batch, ids, recipe, True, retries=RETRIES, pure=False))
        reports = _gathered(client, tasks, [len(ids) for ids in numbers], progress)
        batches = [
            _Batch(ids, [f.path for f in files], [f.vendored for f in files], report)
            for ids, files, report in zip(numbers, chosen, reports, strict=True)
        ]
        del chosen
        warnings = list(walked.warnings) + _warned(reports)
        seen, ids = _compared(batches, list(walked.skips), warnings, config)
        del reports, batches  # the client keeps per file what the pair stages need
        seen.stats.seconds = {"walk": walked.seconds, "lex": time.perf_counter() - walked.ended}
        reps = DaskReps(client, tasks, owner, ids[seen.groups.representatives], seen)
        return _verbatim(pairs_of(seen, reps, config), reps, ids, seen, config)


def scan_dataset(dataset: Dataset, config: Config, progress: ProgressFactory | None = None) -> Result:
    """The scan of a Parquet ``dataset`` on the cluster: one task per file of the dataset, which
    reads it on the worker (the workers must reach the dataset's URL or path)."""
    _refuse(config)
    t0 = time.perf_counter()
    opened = open_dataset(dataset)
    filters = Filters(
        config.include, config.exclude, config.max_size, Kinds(config.include_generated, config.exclude_vendored)
    )
    with connected(config) as client:
        tasks, firsts = [], np.cumsum([0, *opened.counts[:-1]]).astype(np.int64)
        for k, file in enumerate(opened.files):
            job = (Recipe.of(config), True)
            args = (dataset, file, opened.counts[k], int(firsts[k]), filters, job)
            tasks.append(client.submit(shards.read_shard, *args, retries=RETRIES, pure=False))
        reports = _gathered(client, tasks, list(opened.counts), progress)
        batches, skips = _rows_read(firsts.tolist(), reports)
        owner = np.repeat(np.arange(len(tasks)), opened.counts)
        seen, ids = _compared(batches, skips, _warned(reports), config)
        read = sum(r.seconds for r in reports)
        del reports, batches
        seen.stats.seconds = {"walk": read, "lex": time.perf_counter() - t0 - read}
        reps = DaskReps(client, tasks, owner, ids[seen.groups.representatives], seen)
        result = _verbatim(pairs_of(seen, reps, config), reps, ids, seen, config)
    result.params["parquet"] = dataclasses.asdict(dataset)
    return result


class _Batch(NamedTuple):
    """One extraction task's files as the client sees them: their numbers in the run (ascending),
    each one's path and vendored mark, the task's :class:`~.shards.Report`, and the files of it
    to leave out (a dataset's path repeated from an earlier file)."""

    ids: IntArray
    paths: Sequence[str]
    vendored: Sequence[bool]
    report: shards.Report
    dropped: frozenset[int] = frozenset()


class DaskReps:
    """:class:`~minhashdup.engine.stages.Reps` whose sets and signatures live in shards on the
    cluster's workers (``tasks``: the extraction futures, the files of shard ``s`` numbered from
    ``owner[i]``: the shard of file number ``i``); ``rep_ids``: the number of each representative's file."""

    def __init__(self, client: Any, tasks: list[Any], owner: IntArray, rep_ids: IntArray, seen: Compared) -> None:
        self.client, self.tasks, self.owner, self.rep_ids = client, tasks, owner, rep_ids
        self.sizes = seen.sizes[seen.groups.representatives] if len(rep_ids) else np.zeros(0, dtype=np.int64)

    def shard_of(self, ids: IntArray) -> IntArray:
        """The shard holding each file numbered ``ids``."""
        return self.owner[ids]

    def sign(self) -> None:
        """Signed already, on the workers, as each file was extracted."""

    def candidates(self, config: Config) -> tuple[IntArray, list[banding.Oversize]]:
        import dask.dataframe as dd
        import pandas as pd

        n = len(self.rep_ids)
        if n < 2:
            return np.empty((0, 2), dtype=np.int64), []
        where = self.shard_of(self.rep_ids)
        spec = (config.bands, config.rows, config.bits)
        frames = []
        for s in np.unique(where).tolist():
            mine = np.flatnonzero(where == s)
            frames.append(
                self.client.submit(shards.band_rows, self.tasks[s], self.rep_ids[mine], mine, spec, retries=RETRIES)
            )
        meta = pd.DataFrame(
            {"band": np.zeros(0, np.int32), "key": np.zeros(0, np.uint64), "rep": np.zeros(0, np.int64)}
        )
        rows = dd.from_delayed(frames, meta=meta, verify_meta=False)
        parts = max(1, min(len(frames), 256))
        found = rows.shuffle(on=["band", "key"], npartitions=parts).map_partitions(
            shards.bucket_part,
            n,
            config.max_bucket,
            meta=pd.DataFrame(columns=list(shards.BUCKET_COLUMNS)).astype(shards.BUCKET_COLUMNS),
        )
        (out,) = finished(self.client, [self.client.compute(found, retries=RETRIES)])
        codes = out["code"].to_numpy()
        over = out[codes < 0].sort_values(["band", "key"])
        oversize = [
            banding.Oversize(int(b), int(z), int(e))
            for b, z, e in zip(over["band"], over["size"], over["example"], strict=True)
        ]
        return code_pairs(distinct(codes[codes >= 0]), n), oversize

    def verify(self, pairs_: IntArray, threshold: float) -> tuple[IntArray, IntArray, FloatArray]:
        common, jac = self._blocks(shards.check_block, pairs_, threshold, 2)
        kept = np.flatnonzero(common >= 0)
        out = pairs_[kept] if len(kept) else np.empty((0, 2), dtype=np.int64)
        return out, common[kept].astype(np.int64), jac[kept]

    def estimates(self, pairs_: IntArray, bits: int) -> FloatArray:
        (est,) = self._blocks(shards.estimate_block, pairs_, bits, 1)
        return est

    def _blocks(
        self, task: Callable[..., Any], pairs_: IntArray, arg: Any, width: int, files: bool = False
    ) -> list[np.ndarray]:
        """``task`` over ``pairs_`` (of representatives; with ``files``, of file numbers), one
        call per pair of shards holding them (at most :data:`BLOCK_PAIRS` pairs each): its
        ``width`` output columns, in the order of ``pairs_``."""
        m = len(pairs_)
        out = [np.zeros(m, dtype=np.float64) for _ in range(width)]
        if not m:
            return out
        ids = np.asarray(pairs_, dtype=np.int64) if files else self.rep_ids[pairs_]
        code = self.shard_of(ids[:, 0]) * len(self.tasks) + self.shard_of(ids[:, 1])
        pieces = self._pieces(ids)
        order = np.argsort(code, kind="stable")
        futures, rows = [], []
        for start, size in zip(*runs(code[order]), strict=True):
            left, right = divmod(int(code[order[start]]), len(self.tasks))
            for at in range(start, start + size, BLOCK_PAIRS):
                chosen = order[at : min(at + BLOCK_PAIRS, start + size)]
                rows.append(chosen)
                futures.append(self.client.submit(task, pieces[left], pieces[right], ids[chosen], arg, retries=RETRIES))
        for chosen, got in zip(rows, finished(self.client, futures), strict=True):
            for column, values in zip(out, got if width > 1 else (got,), strict=True):
                column[chosen] = values
        return out

    def _pieces(self, ids: IntArray) -> dict[int, Any]:
        """For each shard a pair of ``ids`` needs, a task that keeps just the files it needs of it
        (:func:`.shards.pick`, run where the shard is): a check moves those sets, not two shards."""
        numbers = ids.reshape(-1)
        where = self.shard_of(numbers)
        order = np.argsort(where, kind="stable")
        pieces = {}
        for start, size in zip(*runs(where[order]), strict=True):
            s = int(where[order[start]])
            wanted = np.unique(numbers[order[start : start + size]])
            pieces[s] = self.client.submit(shards.pick, self.tasks[s], wanted, retries=RETRIES)
        return pieces


def _refuse(config: Config) -> None:
    """What the Dask engine does not do yet, refused rather than done otherwise."""
    if config.exact:
        raise ConfigError("{0} is not available with --engine dask yet (its prefix index is global)" + _LOCAL, "exact")
    if config.cache_dir is not None:
        raise ConfigError("{0} is not used by --engine dask (its workers keep no cache)" + _LOCAL, "cache_dir")
    if config.max_df is not None:
        raise ConfigError("{0} is not available with --engine dask yet (it counts every shingle)" + _LOCAL, "max_df")


_LOCAL = "; use the local engine"


def _batches(files: Sequence[FileEntry]) -> Iterator[IntArray]:
    """The files' numbers in batches of about :data:`BATCH_FILES` files or :data:`BATCH_BYTES`,
    each ascending; files that may be byte-identical (:func:`~.workers.same_size`) go in one
    batch, where the first lexed serves the others alike, as on the local engine."""
    batch: list[int] = []
    held = 0
    for group in same_size(files):
        batch += group
        held += files[group[0]].size * len(group)
        if len(batch) >= BATCH_FILES or held >= BATCH_BYTES:
            yield np.sort(np.asarray(batch, dtype=np.int64))
            batch, held = [], 0
    if batch:
        yield np.sort(np.asarray(batch, dtype=np.int64))


def _gathered(client: Any, tasks: list[Any], sizes: list[int], progress: ProgressFactory | None) -> list[shards.Report]:
    """The :class:`~.shards.Report` of each extraction task, in order, with a ``lexing`` bar
    over the files (``sizes``: each task's) as the tasks finish."""
    futures = [client.submit(shards.report_of, t, retries=RETRIES) for t in tasks]
    index = {f.key: k for k, f in enumerate(futures)}
    bar = progress("lexing", sum(sizes)) if progress else None
    try:
        return finished(client, futures, None if bar is None else lambda f: bar.update(sizes[index[f.key]]))
    finally:
        if bar is not None:
            bar.close()


def _warned(reports: list[shards.Report]) -> list[str]:
    """The workers' warnings, each once, in order."""
    return list(dict.fromkeys(w for r in reports for w in r.warnings))


def _rows_read(firsts: list[int], reports: list[shards.Report]) -> tuple[list[_Batch], list[Skip]]:
    """The batches of a dataset's files read on the workers, in dataset order, and the rows
    skipped as they were read, in row order: a row whose path an earlier row claimed (in any
    file) is a ``duplicate-path`` skip, whatever its content, as on the local engine where one
    reader sees every row (such a file, lexed on its worker already, is left out)."""
    batches: list[_Batch] = []
    skips: list[Skip] = []
    seen: dict[str, str] = {}
    for first, report in zip(firsts, reports, strict=True):
        dropped = set()
        for is_file, k, claim, row in report.events:
            earlier = seen.setdefault(claim, row) if claim is not None else row
            if earlier != row:
                path = report.paths[k] if is_file else report.read_skips[k].path
                skips.append(
                    Skip(
                        path, SkipReason.DUPLICATE, f"the path of an earlier row ({earlier}), which is the one scanned"
                    )
                )
                if is_file:
                    dropped.add(k)
            elif not is_file:
                skips.append(report.read_skips[k])
        ids = np.arange(first, first + len(report.paths), dtype=np.int64)
        batches.append(_Batch(ids, report.paths, report.vendored, report, frozenset(dropped)))
    return batches, skips


def _compared(
    batches: list[_Batch], skips: list[Skip], warnings: list[str], config: Config
) -> tuple[Compared, IntArray]:
    """What the pair stages know of the files (as :func:`~.base.corpus_of` and
    :func:`~minhashdup.core.pairs.prepare` make it on the local engine), and each compared
    file's number in the run. ``skips``: the walk's, the extraction's follow."""
    stats = Stats()
    paths: list[str] = []
    vendored: set[str] = set()
    sizes, keys, ids = [], [], []
    later: list[tuple[int, Skip]] = []  # the extraction's skips, by file number
    cpu = np.zeros(4)
    for batch in batches:
        report, out = batch.report, batch.dropped
        stats.files_walked += len(batch.paths) - len(out)
        cpu += report.cpu
        stats.not_utf8 += sum(k not in out for k in report.not_utf8)
        later += [
            (int(batch.ids[k]), Skip(batch.paths[k], why, detail)) for k, why, detail in report.skips if k not in out
        ]
        mine = ~np.isin(report.kept, np.fromiter(out, dtype=np.int64, count=len(out)))
        kept = report.kept[mine]
        stats.tokens += int(report.tokens[mine].sum())
        paths += [batch.paths[k] for k in kept.tolist()]
        vendored.update(batch.paths[k] for k in kept.tolist() if batch.vendored[k])
        sizes.append(report.sizes[mine])
        keys.append(report.keys[mine])
        ids.append(batch.ids[kept])
    number = np.concatenate([np.zeros(0, np.int64), *ids])
    order = np.argsort(number, kind="stable")  # the walk's (or the dataset's) order, as on the local engine
    number, paths = number[order], [paths[i] for i in order.tolist()]
    skips += [skip for _, skip in sorted(later, key=lambda pair: pair[0])]
    stats.files_scanned = len(paths)
    stats.cpu_seconds = dict(zip(("read", "lex", "shingle", "signature"), cpu.tolist(), strict=True))
    copies = sum(b.report.copies for b in batches)  # byte-identical copies share a lex within a task
    stats.cache = {"hits": 0, "lexed": stats.files_walked - copies, "copies": copies, "result": 0}
    size_arr = np.concatenate([np.zeros(0, np.int64), *sizes])[order]
    keep, skips = pairs.screen(paths, size_arr, skips, config.min_shingles)
    groups = pairs.digest_groups(np.concatenate([np.zeros(0, "S16"), *keys])[order].tolist(), keep)
    pairs.count_groups(stats, size_arr, keep, groups)
    return Compared(paths, size_arr, groups, skips, warnings, stats, vendored), number


def _verbatim(result: Result, reps: DaskReps, ids: IntArray, seen: Compared, config: Config) -> Result:
    """With names or literals normalised, each pair's ``jaccard_verbatim``, from the shingles as
    written that the shards keep (:func:`minhashdup.engine.pipeline.with_verbatim` on the local engine)."""
    if not config.normalisation.active or not result.pairs:
        return result
    t0 = time.perf_counter()
    number = dict(zip(seen.paths, ids.tolist(), strict=True))
    asked = np.array([[number[p.a], number[p.b]] for p in result.pairs], dtype=np.int64)
    (jac,) = reps._blocks(shards.verbatim_block, asked, None, 1, files=True)
    result.stats.seconds["verbatim"] = time.perf_counter() - t0
    listed = [
        dataclasses.replace(p, jaccard_verbatim=float(j)) for p, j in zip(result.pairs, jac.tolist(), strict=True)
    ]
    return dataclasses.replace(result, pairs=listed)
