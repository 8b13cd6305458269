"""Per-file work: read, reject binaries, decode, lex, shingle. Pure, picklable, parallel.

:func:`extract_file` never raises for a bad file: it returns an :class:`Extracted` whose
``skip`` says why, so one bad file never loses the results of the others.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from minhashdup.config import MIB
from minhashdup.core.hashing import UInt64Array
from minhashdup.core.shingles import shingle_set, token_hashes
from minhashdup.core.signature import signature
from minhashdup.engine.cache import content_digest
from minhashdup.engine.parallel import pool_size, process_pool
from minhashdup.result import SkipReason
from minhashdup.source.extracted import Extracted
from minhashdup.source.safeio import TooLargeError, read_regular
from minhashdup.source.tokens import NoLexerError, decode, lexer_for, token_texts
from minhashdup.source.walk import FileEntry

#: Below this many bytes in total, worker processes cost more than they save.
_INLINE_BYTES = 256 * 1024
#: After this many worker deaths in one scan, the rest is lexed in the main process.
MAX_WORKER_DEATHS = 10


_NONE = np.empty(0, dtype=np.uint64)
__all__ = ["Extracted", "extract_all", "extract_file"]


class LexTimeout(BaseException):
    """Raised into a lexer that ran past its deadline. A ``BaseException``, so that a lexer's
    own ``except Exception`` cannot swallow it."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`LexTimeout` in the block after ``seconds`` of wall time (SIGALRM).

    Python's regex engine checks for signals while it backtracks, so even one runaway match
    is stopped. Without SIGALRM (Windows), outside the main thread, or with ``seconds`` 0,
    the block runs without a limit. The previous handler is restored afterwards.
    """
    usable = seconds > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise LexTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def extract_file(
    index: int,
    path: str,
    shingle: int,
    seeds: UInt64Array | None = None,
    engine: str = "fast",
    timeout: float = 0.0,
    max_size: int = MIB,
) -> Extracted:
    """Shingle set of the file at ``path`` (tokens of its pygments lexer, ``shingle`` per run).

    With ``seeds``, also its MinHash signature, so that this work is spread over the
    lexing processes instead of waiting for all files. A file whose lexing takes more than
    ``timeout`` seconds (0: no limit; see :func:`deadline`) is skipped as a ``lex-error``.
    Only a regular file is read, without waiting (a FIFO put in its place is ``unreadable``),
    and at most ``max_size`` bytes of it (a file grown past that is ``too-large``). The
    result carries the digest of the bytes read, for the cache.

    Example:
        >>> extract_file(0, "examples/go/reader.go", 5).lexer
        'Go'
    """
    t0 = time.process_time()
    try:
        data = read_regular(path, max_size, follow=False)  # path: resolved by the walk
    except TooLargeError:
        detail = f"grew over --max-size ({max_size} bytes) during the scan"
        return Extracted(index, _NONE, skip=SkipReason.TOO_LARGE, detail=detail)
    except OSError as err:  # NotRegularFileError too: a FIFO or device swapped in after the walk
        return Extracted(index, _NONE, skip=SkipReason.UNREADABLE, detail=err.strerror or str(err))
    digest = content_digest(data)
    if b"\0" in data:
        return Extracted(index, _NONE, skip=SkipReason.BINARY, detail="contains NUL bytes", digest=digest)
    text, not_utf8 = decode(data)
    t1 = time.process_time()
    try:
        with deadline(timeout):
            lexer = lexer_for(os.path.basename(path), text)
            tokens = token_texts(lexer, text, engine)
    except LexTimeout:
        detail = f"lexing took over {timeout:g} s (--lex-timeout); the lexer may be backtracking on this file"
        return Extracted(index, _NONE, skip=SkipReason.LEX_ERROR, detail=detail, not_utf8=not_utf8, digest=digest)
    except NoLexerError as err:
        return Extracted(index, _NONE, skip=SkipReason.NO_LEXER, detail=str(err), not_utf8=not_utf8, digest=digest)
    except Exception as err:  # a lexer bug on one file must not stop the scan
        detail = f"{type(err).__name__}: {err}"[:200]
        return Extracted(index, _NONE, skip=SkipReason.LEX_ERROR, detail=detail, not_utf8=not_utf8, digest=digest)
    t2 = time.process_time()
    shingles = shingle_set(token_hashes(tokens), shingle)
    t3 = time.process_time()
    sig = signature(shingles, seeds) if seeds is not None else None
    t4 = time.process_time()
    cpu = (t1 - t0, t2 - t1, t3 - t2, t4 - t3)
    return Extracted(index, shingles, len(tokens), lexer.name, None, "", not_utf8, sig, cpu, digest)


_Batch = tuple[tuple[tuple[int, str], ...], int, "UInt64Array | None", str, float, int]


def _extract_batch(batch: _Batch) -> list[Extracted]:
    items, shingle, seeds, engine, timeout, max_size = batch
    return [extract_file(index, path, shingle, seeds, engine, timeout, max_size) for index, path in items]


def extract_all(
    files: Sequence[FileEntry],
    shingle: int,
    workers: int,
    on_done: Callable[[int], object] | None = None,
    seeds: UInt64Array | None = None,
    engine: str = "fast",
    warnings: list[str] | None = None,
    timeout: float = 0.0,
    max_size: int = MIB,
) -> Iterator[Extracted]:
    """:func:`extract_file` over ``files``, in worker processes when it pays.

    Results stream back as they finish, in no particular order (each carries its
    ``index`` into ``files``); callers that need determinism order by index.

    Args:
        files: what to read (``real`` paths are opened).
        shingle: tokens per shingle.
        workers: processes asked for; 1 runs in this process. No more are started than
            there are usable cores or batches of files (:func:`minhashdup.engine.parallel.pool_size`).
        on_done: called with the number of files finished, for progress bars.
        seeds: when given, each result carries its MinHash signature under these seeds.
        engine: ``fast`` or ``pygments`` (see :func:`minhashdup.source.tokens.token_texts`).
        warnings: where to say that worker processes could not be used.
        timeout: seconds one file may take to lex (0: no limit).
        max_size: the most bytes read of one file (``--max-size``).
    """
    total_bytes = sum(f.size for f in files)
    if workers <= 1 or len(files) < 2 or total_bytes < _INLINE_BYTES:
        yield from _inline(files, list(range(len(files))), shingle, seeds, engine, on_done, timeout, max_size)
        return
    batches = list(_batches(files, shingle, pool_size(workers, len(files)), seeds, engine, timeout, max_size))
    runner = _Workers(pool_size(workers, len(batches)), warnings if warnings is not None else [])
    done: set[int] = set()
    for results in runner.run(batches):
        done.update(r.index for r in results)
        yield from results
        if on_done:
            on_done(len(results))
    if runner.gave_up:  # what the workers could not do, this process does
        rest = [i for i in range(len(files)) if i not in done]
        yield from _inline(files, rest, shingle, seeds, engine, on_done, timeout, max_size)


def _inline(
    files: Sequence[FileEntry],
    indices: list[int],
    shingle: int,
    seeds: UInt64Array | None,
    engine: str,
    on_done: Callable[[int], object] | None,
    timeout: float,
    max_size: int,
) -> Iterator[Extracted]:
    for index in indices:
        yield extract_file(index, files[index].real, shingle, seeds, engine, timeout, max_size)
        if on_done:
            on_done(1)


def _ping() -> bool:
    return True


class _Workers:
    """Batches in worker processes; a file that kills its worker is isolated and reported.

    When a worker dies (killed for memory, a crash in native code), the unfinished files
    are run again one per task in a single process, in order: the first one that kills
    that process is reported as a ``lex-error`` and the rest go on in parallel again.
    If workers cannot start at all (a probe task fails), or die more than
    :data:`MAX_WORKER_DEATHS` times, the caller runs what is left in its own process.
    """

    def __init__(self, workers: int, warnings: list[str]) -> None:
        self.workers, self.warnings = workers, warnings
        self.deaths = 0
        self.gave_up = False

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
                left = [b for k, b in enumerate(pending) if k not in done]
                singles: list[_Batch] = [
                    ((it,), k, sd, en, to, ms) for items, k, sd, en, to, ms in left for it in items
                ]
                pending = yield from self._isolate(singles)

    def _started(self, executor: ProcessPoolExecutor) -> bool:
        try:
            executor.submit(_ping).result(timeout=120)
            return True
        except Exception as err:  # BrokenProcessPool, a timeout, a pickling failure...
            self.warnings.append(f"worker processes could not start ({type(err).__name__}); lexing in this process")
            self.gave_up = True
            return False

    def _isolate(self, singles: list[_Batch]) -> Generator[list[Extracted], None, list[_Batch]]:
        """One file per task in one process, in order, until the file that kills it.

        Returns:
            The files after that one, to go back to the parallel pool.
        """
        done = 0
        try:
            with process_pool(1) as executor:
                if not self._started(executor):
                    return []
                for result in executor.map(_extract_batch, singles):
                    done += 1
                    yield result
        except BrokenProcessPool:
            ((index, _),), *_ = singles[done]
            yield [Extracted(index, _NONE, skip=SkipReason.LEX_ERROR, detail="the worker process died on this file")]
            self.deaths += 1
            if self.deaths >= MAX_WORKER_DEATHS:
                self.warnings.append(f"{self.deaths} files killed their worker process; lexing the rest here")
                self.gave_up = True
                return []
            return singles[done + 1 :]
        return []


def _batches(
    files: Sequence[FileEntry],
    shingle: int,
    workers: int,
    seeds: UInt64Array | None,
    engine: str,
    timeout: float,
    max_size: int,
) -> Iterator[_Batch]:
    # Largest files first (longest-processing-time scheduling), in batches small enough
    # that the last ones balance the workers and large enough to amortise pickling.
    order = sorted(range(len(files)), key=lambda i: (-files[i].size, i))
    size = max(1, min(32, len(files) // (workers * 8)))
    for start in range(0, len(order), size):
        yield tuple((i, files[i].real) for i in order[start : start + size]), shingle, seeds, engine, timeout, max_size
