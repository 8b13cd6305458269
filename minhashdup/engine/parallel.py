"""Worker processes for the pure stage functions (lexing, signatures), and how they end.

A worker that outlives the scan keeps the scan's stdout open: a CI step or ``| tee`` then
waits for it forever. So a pool left by an exception (Ctrl-C, SIGTERM turned into an
exception by the CLI, a closed generator) terminates its workers instead of waiting for the
work already queued, and workers ignore Ctrl-C: the main process alone handles it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from minhashdup.config import usable_cores

#: Seconds a terminated worker gets to exit before it is killed.
_GRACE = 5.0

#: Pools currently open (see :func:`stop_workers`).
_LIVE: set[ProcessPoolExecutor] = set()


def start_method() -> str:
    """``forkserver`` where it exists: ``fork`` is unsafe once threads run (progress bars)."""
    methods = multiprocessing.get_all_start_methods()
    return "forkserver" if "forkserver" in methods else "spawn"


#: Imported once by the fork server, so that each worker starts with them loaded.
_PRELOAD = ["minhashdup.engine._workerstart", "minhashdup.engine.workers", "minhashdup.core.signature"]


def pool_size(requested: int, tasks: int) -> int:
    """Worker processes worth starting for ``tasks`` tasks when ``requested`` were asked for.

    The work is CPU-bound: a process more than the usable cores only costs memory and start-up,
    and one more than the tasks would sit idle. At least 1.

    Example:
        >>> pool_size(1000, 1)  # one task: one process, whatever was asked
        1
    """
    return max(1, min(requested, tasks, usable_cores()))


@contextlib.contextmanager
def process_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """An executor of ``workers`` processes, started the safe way, as a context manager.

    No more processes than :func:`usable_cores` are started, whatever ``workers`` says
    (callers also bound it by their work, see :func:`pool_size`). A worker that dies makes
    its futures raise ``BrokenProcessPool`` instead of hanging.

    Leaving the block normally waits for the work submitted; leaving it by an exception
    (``KeyboardInterrupt`` included) cancels what has not started and terminates the workers.
    Workers ignore SIGINT: a Ctrl-C sent to the whole process group reaches the main process
    only, which leaves the block by ``KeyboardInterrupt``.

    Example:
        >>> with process_pool(2) as pool:
        ...     list(pool.map(abs, [-1, 2]))
        [1, 2]
    """
    ctx = multiprocessing.get_context(start_method())
    if isinstance(ctx, multiprocessing.context.ForkServerContext):
        ctx.set_forkserver_preload(_PRELOAD)
        _start_fork_server()
    size = max(1, min(workers, usable_cores()))
    executor = ProcessPoolExecutor(size, mp_context=ctx, initializer=_worker_start, initargs=(os.getpid(),))
    _hold_signals_while_starting(executor)
    _LIVE.add(executor)
    try:
        yield executor
    except BaseException:
        _terminate(executor)
        raise
    else:
        executor.shutdown(wait=True)
    finally:
        _LIVE.discard(executor)


def _hold_signals_while_starting(executor: ProcessPoolExecutor) -> None:
    """``executor`` starts each worker (on demand, in ``submit``) under :func:`_signals_held`."""
    adjust = executor._adjust_process_count

    def held() -> None:
        with _signals_held():
            adjust()

    executor._adjust_process_count = held  # type: ignore[method-assign]


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM arriving in the block take effect when it ends.

    A worker's start interrupted half-way leaves a child the pool does not know of: it is
    not terminated with the others, and prints a traceback when the queues it expects are
    gone. Held, the signal is raised again once the worker is known to the pool.
    """
    held = (signal.SIGINT, signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or None in map(signal.getsignal, held):
        yield  # handlers can only be set in the main thread, and restored if set from Python
        return
    caught: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, frame: caught.append(signum)) for signum in held}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for number in dict.fromkeys(caught):
            signal.raise_signal(number)


def stop_workers() -> None:
    """Terminate the workers of every open pool (the CLI calls it on Ctrl-C and SIGTERM)."""
    for executor in list(_LIVE):
        _terminate(executor)


def _terminate(executor: ProcessPoolExecutor) -> None:
    """Kill the workers first (shutting the pool down first could let one fail on its closed
    queues and print a traceback), then wait for the pool's thread, so that the interpreter
    does not wake it while it closes its pipes at exit."""
    processes = list((executor._processes or {}).values())
    manager = getattr(executor, "_executor_manager_thread", None)
    if isinstance(manager, threading.Thread):
        _quiet_when_it_fails(manager)
    for process in processes:
        process.terminate()  # SIGTERM: workers keep its default action
    # The queue of tasks has a thread writing them into a pipe that the workers read; with the
    # workers gone, one blocked on a full pipe (tasks waiting, a large batch) never ends, and the
    # pool's thread and the interpreter's exit would wait for it: the scan hung after its
    # "terminated". What it still holds is not wanted.
    call_queue = getattr(executor, "_call_queue", None)
    if call_queue is not None:
        call_queue.cancel_join_thread()
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.join(_GRACE)
        if process.is_alive():
            process.kill()
            process.join()
    if isinstance(manager, threading.Thread):
        manager.join(_GRACE)


def _quiet_when_it_fails(thread: threading.Thread) -> None:
    """An exception in ``thread`` (the pool's manager, meeting the pipes of the workers just
    killed) ends it without a traceback on stderr: the pool is being stopped on purpose, and
    the scan reports the interruption itself. Other threads keep the hook they had."""
    previous = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        if args.thread is not thread:
            previous(args)

    threading.excepthook = hook


def start_early(workers: int) -> None:
    """Start the fork server now, where the scan will likely lex in ``workers`` processes: its
    start (an interpreter importing pygments and its index of lexers, 0.5-1 s) then overlaps the
    walk or the digests in this process, instead of following them. Nothing where a pool would
    have one process, or without a fork server. A fork server that ends up unused exits with
    this process."""
    if pool_size(workers, 2) > 1 and start_method() == "forkserver":
        multiprocessing.get_context("forkserver").set_forkserver_preload(_PRELOAD)
        _start_fork_server()


def _start_fork_server() -> None:
    """Start the fork server (once) with SIGINT blocked.

    The fork server passes its signal mask to every worker it forks, so a Ctrl-C that
    arrives while a worker starts stays pending until :func:`_worker_start` discards it,
    instead of printing the worker's traceback.
    """
    from multiprocessing import forkserver  # POSIX only

    with _signals_held(), outside_the_tree():
        if not hasattr(signal, "pthread_sigmask"):
            forkserver.ensure_running()
            return
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            forkserver.ensure_running()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def outside_the_tree() -> Iterator[None]:
    """New interpreters started in this block do not put their current folder on ``sys.path``.

    The fork server, the resource tracker and Dask's processes run with ``-c``, which puts the
    current folder first on ``sys.path`` before they import ``multiprocessing`` (and the fork
    server its preloads, pygments' index of lexer plugins): started in a scanned tree, its
    ``multiprocessing.py`` or a lexer plugin (``*.dist-info``) would run there. From Python 3.11
    they get ``PYTHONSAFEPATH=1`` (every process started in the block: a Dask worker restarted
    later too, while the cluster's block lasts); on 3.10, or under ``python -E``, which ignores
    it, this process stands in the root folder while the block lasts (writable by root alone;
    spawned workers go back to the folder of the process that spawned them), so keep the block
    short there. Nothing to do where this interpreter runs with ``-P`` or ``-I``."""
    if getattr(sys.flags, "safe_path", False):
        yield
    elif sys.version_info >= (3, 11) and not sys.flags.ignore_environment:
        before = os.environ.get("PYTHONSAFEPATH")
        os.environ["PYTHONSAFEPATH"] = "1"
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("PYTHONSAFEPATH", None)
            else:
                os.environ["PYTHONSAFEPATH"] = before
    else:
        # O_PATH: a folder this user may enter but not read (mode 711) can still be come back to.
        here = os.open(os.curdir, getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0))
        try:
            os.chdir(os.sep)
            try:
                yield
            finally:
                os.fchdir(here)  # by its descriptor: back to the same folder even if it was renamed
        finally:
            os.close(here)


def _worker_start(parent: int) -> None:
    """Initializer of each worker: Ctrl-C is for the main process, which stops the pool; and the
    worker ends when ``parent`` (the process that made the pool) is gone. A worker forked by the
    fork server outlives a parent killed outright (SIGKILL, the OOM killer, a Dask worker killed
    mid-run): it waits on its queue forever, and keeps the fork server alive with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    threading.Thread(target=_watch, args=(parent,), name="minhashdup-parent-watch", daemon=True).start()


#: Seconds between a worker's looks at its parent.
_WATCH = 1.0


def _watch(parent: int) -> None:
    """End this process once ``parent`` no longer runs (gone, or a zombie not yet reaped)."""
    while _alive(parent):
        time.sleep(_WATCH)
    os._exit(1)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs: on Linux its /proc entry, not a zombie; elsewhere a signal 0."""
    if os.path.isdir("/proc/self"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
        except FileNotFoundError:
            return False
        except OSError:
            pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
