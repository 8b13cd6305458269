"""Extraction over the local process pool: :func:`minhashdup.source.extract.extract_file` for
many files, in batches, largest first, with a file that kills its worker isolated and reported
(the pool itself: :mod:`minhashdup.engine.parallel`). A file whose bytes were read already
(:class:`~minhashdup.source.extracted.ReadEntry`, from the cache) goes to its worker with them
and is not read again. Each content is lexed once per run: files that may be byte-identical (the
same size) share a batch, where the first of each content is lexed and the others
(:func:`~minhashdup.source.extract.alike`) take its result (``copied``), even after a worker
died (the files left run one per task in one process, which keeps the memo of the batch they
come from). A file that kills its worker is read here and its copies are reported with it, not
lexed (:func:`_killer`): they would kill one worker each, and the main process after that.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import NamedTuple, cast

from minhashdup.config import Config
from minhashdup.core.digest import content_digest
from minhashdup.core.signature import Family
from minhashdup.engine.parallel import pool_size, process_pool
from minhashdup.result import SkipReason
from minhashdup.source import extract
from minhashdup.source.extracted import Extracted, ReadEntry, no_shingles
from minhashdup.source.fastlex.versions import Versions, family, kept_together
from minhashdup.source.normalise import VERBATIM, Normalisation
from minhashdup.source.safeio import MIB, read_regular_with_stat
from minhashdup.source.walk import FileEntry

#: Below this many bytes in total, worker processes cost more than they save.
_INLINE_BYTES = 256 * 1024
#: After this many worker deaths in one scan, the rest is lexed in the main process.
MAX_WORKER_DEATHS = 10


class _Item(NamedTuple):
    """One file of a batch: its position in the files extracted (``Extracted.index``), its bytes
    when they were read already, and what :class:`FileEntry` says of it (the stat as walked)."""

    number: int
    path: str
    real: str
    data: bytes | None
    check_generated: bool
    data_ok: bool
    size: int  # files of one size share a batch
    mtime_ns: int
    inode: int


class Recipe(NamedTuple):
    """What every file of a scan gets from :func:`~minhashdup.source.extract.extract_file`
    beyond its own path and bytes (see that function for each)."""

    shingle: int
    family: Family | None = None
    engine: str = "fast"
    timeout: float = 0.0
    max_size: int = MIB
    norm: Normalisation = VERBATIM

    @classmethod
    def of(cls, config: Config) -> Recipe:
        """The recipe of a scan's ``config``, its hash family's seeds made once (shipped with it)."""
        family = Family(config.seed, config.num_hashes)
        _ = family.seeds
        return cls(
            config.shingle, family, config.lexer_engine, config.lex_timeout, config.max_size, config.normalisation
        )


class _Done(NamedTuple):
    """A file extracted earlier, handed to files that may be its copies: what
    :func:`~minhashdup.source.extract.alike` needs of it, and its result."""

    name: str
    check_generated: bool
    data_ok: bool
    result: Extracted

    @classmethod
    def of(cls, item: _Item, result: Extracted) -> _Done | None:
        """``None`` for a result no copy takes: none was lexed (no digest) or it is a copy itself."""
        if result.digest is None or result.copied:
            return None
        return cls(os.path.basename(item.real), item.check_generated, item.data_ok, result)


#: Files, the recipe, and files extracted earlier that may be copies of them (after a worker died).
_Batch = tuple[tuple[_Item, ...], Recipe, tuple[_Done, ...]]
_Seen = dict[tuple[bytes, extract.Alike], Extracted]


def _extract_batch(batch: _Batch, seen: _Seen | None = None) -> list[Extracted]:
    """The batch's files, each content lexed once (``seen``: see :func:`extract.extract_file`;
    one for the batch when not given): a file byte-identical to one done earlier, and alike,
    takes its result as one lexed in this batch would. The batch keeps its files' earlier
    versions' lexes for the tails they share (``Versions``; see :func:`_batches`)."""
    items, r, earlier = batch
    versions = Versions([(item.path, item.real, item.size) for item in items])
    seen = {} if seen is None else seen
    for done in earlier:
        key = (cast(bytes, done.result.digest), extract.alike(done.name, done.check_generated, done.data_ok))
        seen.setdefault(key, done.result)
    results = []
    for index, _, real, data, check, ok, *_ in items:
        # Looked up on the module at each call, so that a replaced extract_file is the one run.
        one = extract.extract_file(
            index, real, r.shingle, r.family, r.engine, r.timeout, r.max_size, data, check, ok, r.norm, seen, versions
        )
        results.append(one)
        versions.passed(real)
    return results


#: In the process that runs files one by one after a worker died (:meth:`_Workers._isolate`): the
#: number of the batch they come from, and its memo of the contents done so far.
_ALONE: tuple[int, _Seen] = (-1, {})


def _extract_alone(task: tuple[int, _Batch]) -> list[Extracted]:
    """One file of the batch numbered ``task[0]``, taking the memo of that batch's files done
    before it in this process (tasks run in order, one process)."""
    global _ALONE
    number, batch = task
    if _ALONE[0] != number:
        _ALONE = (number, {})
    return _extract_batch(batch, _ALONE[1])


def extract_batch(files: Sequence[FileEntry], recipe: Recipe) -> list[Extracted]:
    """:func:`~minhashdup.source.extract.extract_file` over ``files`` in this process, in their
    order (``index``: the position in ``files``); byte-identical files alike
    (:func:`~minhashdup.source.extract.alike`) are lexed once, the others take the result.

    Example:
        >>> entry = FileEntry("reader.go", "examples/go/reader.go", 1)
        >>> [(x.lexer, x.copied) for x in extract_batch([entry, entry], Recipe(5))]
        [('Go', False), ('Go', True)]
    """
    return _extract_batch((tuple(_item(files, i) for i in range(len(files))), recipe, ()))


def _item(files: Sequence[FileEntry], index: int) -> _Item:
    entry = files[index]
    data = entry.data if isinstance(entry, ReadEntry) else None
    kind = (entry.check_generated, entry.data_ok)
    return _Item(index, entry.path, entry.real, data, *kind, entry.size, entry.mtime_ns, entry.inode)


def extract_all(
    files: Sequence[FileEntry],
    recipe: Recipe,
    workers: int,
    on_done: Callable[[int], object] | None = None,
    warnings: list[str] | None = None,
    isolate: bool = False,
) -> Iterator[Extracted]:
    """:func:`~minhashdup.source.extract.extract_file` over ``files``, in worker processes when it pays.

    Results stream back as they finish, in no particular order (each carries its ``index`` into
    ``files``); callers that need determinism order by index.

    Args:
        files: what to read (``real`` paths are opened, except for a :class:`ReadEntry`: its ``data`` is lexed).
        recipe: the shingle size, the hash family (each result then carries its MinHash
            signature), the lexer engine, the lexing deadline, the most bytes read of one file
            and the token normalisation.
        workers: processes asked for; 1 runs in this process. No more are started than
            there are usable cores or batches of files (:func:`minhashdup.engine.parallel.pool_size`).
        on_done: called with the number of files finished, for progress bars.
        warnings: where to say that worker processes could not be used.
        isolate: in worker processes even when one, or few files, would run here: where this
            thread cannot keep the lexing deadline (SIGALRM is the main thread's; a Dask task
            runs in another) or survive a file that kills its process.
    """
    total_bytes = sum(f.size for f in files)
    if not isolate and (workers <= 1 or len(files) < 2 or total_bytes < _INLINE_BYTES):
        yield from _inline(files, list(range(len(files))), recipe, on_done)
        return
    if recipe.family is not None:
        _ = recipe.family.seeds  # computed once here and shipped with each batch, not once per batch
    batches = _batches(files, recipe, pool_size(workers, len(files)))
    runner = _Workers(pool_size(workers, len(batches)), warnings if warnings is not None else [])
    done: set[int] = set()
    shared = {size for size, n in collections.Counter(f.size for f in files).items() if n > 1}
    kept: dict[int, Extracted] = {}  # the results that may serve a copy if this process must go on
    for results in runner.run(batches):
        for r in results:
            done.add(r.index)
            if files[r.index].size in shared:
                kept[r.index] = r
        yield from results
        if on_done:
            on_done(len(results))
    if runner.gave_up:  # what the workers could not do, this process does, with what they did
        rest = [i for i in range(len(files)) if i not in done]
        sizes = {files[i].size for i in rest}
        earlier = [_Done.of(_item(files, i), r) for i, r in kept.items() if files[i].size in sizes]
        earlier += runner.killers  # their copies are not lexed here either: they would end this process
        yield from _inline(files, rest, recipe, on_done, tuple(d for d in earlier if d is not None))


def _inline(
    files: Sequence[FileEntry],
    indices: list[int],
    recipe: Recipe,
    on_done: Callable[[int], object] | None,
    earlier: tuple[_Done, ...] = (),
) -> Iterator[Extracted]:
    seen: _Seen = {}  # each content lexed once in the run
    for index in indices:
        yield from _extract_batch(((_item(files, index),), recipe, earlier), seen)
        earlier = ()  # in seen now
        if on_done:
            on_done(1)


def _ping() -> bool:
    return True


class _Workers:
    """Batches in worker processes; a file that kills its worker is isolated and reported.

    When a worker dies (killed for memory, a crash in native code), the unfinished files are run
    again one per task in a single process, in order: the first one that kills that process is
    reported as a ``lex-error`` and the rest go on in parallel again, in their batches. Copies stay
    lexed once (see :meth:`_isolate`). If workers cannot start at all (a probe task fails), or die
    :data:`MAX_WORKER_DEATHS` times, the caller runs what is left in its own process.
    """

    def __init__(self, workers: int, warnings: list[str]) -> None:
        self.workers, self.warnings = workers, warnings
        self.deaths = 0
        self.gave_up = False
        self.killers: list[_Done] = []  # for the copies of the files workers died on (_killer)

    def run(self, batches: list[_Batch]) -> Iterator[list[Extracted]]:
        pending = batches
        while pending and not self.gave_up:
            done: set[int] = set()
            try:
                with process_pool(self.workers) as executor:
                    if not self._started(executor):
                        return
                    futures = {executor.submit(_extract_batch, b): k for k, b in enumerate(pending)}
                    for future in as_completed(futures):
                        result = future.result()  # raises BrokenProcessPool once a worker died
                        done.add(futures[future])
                        yield result
                pending = []
            except BrokenProcessPool:
                pending = yield from self._isolate([b for k, b in enumerate(pending) if k not in done])

    def _started(self, executor: ProcessPoolExecutor) -> bool:
        try:
            executor.submit(_ping).result(timeout=120)
            return True
        except Exception as err:  # BrokenProcessPool, a timeout, a pickling failure...
            self.warnings.append(f"worker processes could not start ({type(err).__name__}); lexing in this process")
            self.gave_up = True
            return False

    def _isolate(self, left: list[_Batch]) -> Generator[list[Extracted], None, list[_Batch]]:
        """The files of ``left`` one per task in one process, in order, until the file that kills
        it; that process keeps the memo of the batch its files come from (:func:`_extract_alone`),
        so copies of one content (always in one batch) are lexed once.

        Returns:
            The files after that one, in their batches, to go back to the parallel pool: the
            rest of the killer's batch with the files of it done here that may be copies.
        """
        where = [(b, k) for b, (items, _, _) in enumerate(left) for k in range(len(items))]
        tasks = [(b, ((left[b][0][k],), left[b][1], left[b][2] if k == 0 else ())) for b, k in where]
        results: list[Extracted] = []
        try:
            with process_pool(1) as executor:
                if not self._started(executor):
                    return []
                for result in _one_by_one(executor, tasks):
                    results.append(result)
                    yield [result]
        except BrokenProcessPool as err:
            b, k = where[len(results)]
            items, recipe, earlier = left[b]
            died = "the worker process died on this file"
            yield [Extracted(items[k].number, no_shingles(), skip=SkipReason.LEX_ERROR, detail=died)]
            killer = None if isinstance(err, _DiedBetween) else _killer(items[k], recipe.max_size)
            self.killers += [killer] if killer is not None else []
            self.deaths += 1
            if self.deaths >= MAX_WORKER_DEATHS:
                self.warnings.append(f"{self.deaths} files killed their worker process; lexing the rest here")
                self.gave_up = True
                return []
            rest = items[k + 1 :]
            sizes = {item.size for item in rest}
            mine = zip(items[:k], results[len(results) - k :], strict=True)  # this batch's, done here
            done = [*earlier, killer if items[k].size in sizes else None]
            done += [_Done.of(item, r) for item, r in mine if item.size in sizes]
            head = [(rest, recipe, tuple(d for d in done if d is not None))] if rest else []
            return head + left[b + 1 :]
        return []


#: Tasks sent ahead to the isolating process: one runs while the next waits in its queue.
_AHEAD = 2


class _DiedBetween(BrokenProcessPool):
    """The isolating process died with every task sent finished: the file blamed never ran."""


def _one_by_one(executor: ProcessPoolExecutor, tasks: Sequence[tuple[int, _Batch]]) -> Iterator[Extracted]:
    """The result of each task, in order, from a pool of one process.

    Raises:
        BrokenProcessPool: at the first task that did not finish, which is the one the process
            died on: at most :data:`_AHEAD` are sent before the earliest is done, and the one
            process runs them in order. (``executor.map`` sends every task first: a death while
            it sends surfaced before any result was taken, and the first file was blamed.)
    """
    ahead: collections.deque[Future[list[Extracted]]] = collections.deque()
    waiting = iter(tasks)
    broken = False
    while True:
        while not broken and len(ahead) < _AHEAD:
            task = next(waiting, None)
            if task is None:
                break
            try:
                ahead.append(executor.submit(_extract_alone, task))
            except BrokenProcessPool:
                broken = True  # the tasks sent may have finished: their results come first
        if not ahead:
            if broken:  # died with every task sent finished: the next one is blamed
                raise _DiedBetween("the worker process died between two files")
            return
        yield from ahead.popleft().result()


def _killer(item: _Item, max_size: int) -> _Done | None:
    """What the byte-identical copies of ``item``, the file a worker process died on, take
    instead of being lexed: a ``lex-error`` naming it. ``None`` when its bytes cannot be read,
    or may not be those the worker read (its stat is not the walk's any more)."""
    data = item.data
    if data is None:
        try:
            data, after = read_regular_with_stat(item.real, max_size, follow=False)
        except OSError:  # gone, grown, no longer a regular file: its copies are lexed as before
            return None
        if (after.st_size, after.st_mtime_ns, after.st_ino) != (item.size, item.mtime_ns, item.inode):
            return None
    detail = f"not lexed: the same bytes as {item.path}, on which a worker process died"
    result = Extracted(-1, no_shingles(), skip=SkipReason.LEX_ERROR, detail=detail, digest=content_digest(data))
    return _Done.of(item, result)


def same_size(files: Sequence[FileEntry]) -> list[list[int]]:
    """The positions of ``files`` grouped by size, in order of first appearance: the files that
    may be byte-identical, which a batch keeps together. Grouped by size alone, not by
    :func:`~minhashdup.source.extract.alike` too: that would have the process making the batches
    build the lexer index by file name, which loads pygments' plugins (half a second where IPython
    is installed), for no file of its own; the worker lexing the batch decides which are alike.

    Example:
        >>> from minhashdup.source.walk import FileEntry
        >>> same_size([FileEntry(p, p, n, 0, 0) for p, n in [("a", 3), ("b", 5), ("c", 3)]])
        [[0, 2], [1]]
    """
    groups: dict[int, list[int]] = {}
    for i, entry in enumerate(files):
        groups.setdefault(entry.size, []).append(i)
    return list(groups.values())


def _batches(files: Sequence[FileEntry], recipe: Recipe, workers: int) -> list[_Batch]:
    # Batches small enough to balance the workers at the end, large enough to amortise a worker's
    # round trip to this process (~1 ms), the largest first (LPT), filled by what they likely lex:
    # distinct sizes. Files that may be byte-identical (same_size) share one, the first lexed serving
    # the others (a read and a digest each); so do a file's versions (.fastlex.splice), path order.
    sizes = [f.size for f in files]
    size = max(1, min(32, len(set(sizes)) // (workers * 8)))
    batches: list[list[int]] = [[]]
    lexes = 0  # the distinct sizes of the batch being filled (a size is in one part: kept_together)
    for part in kept_together([(f.path, f.size) for f in files], 4 * size):
        if lexes >= size or (batches[-1] and len(batches[-1]) + len(part) > 16 * size):
            batches.append([])
            lexes = 0
        batches[-1] += part
        lexes += len({sizes[i] for i in part})
    # In a batch, each family's files in path order: two parts of one family (its bound cut it)
    # may come in either order, and a version must come after the one it takes from.
    batches = [sorted(b, key=lambda i: (family(files[i].path), files[i].path)) for b in batches if b]
    batches.sort(key=lambda b: -sum({files[i].size for i in b}))  # bytes lexed (copies: none); stable
    return [(tuple(_item(files, i) for i in b), recipe, ()) for b in batches]
