"""Worker processes for the pure stage functions (lexing, signatures)."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor


def start_method() -> str:
    """``forkserver`` where it exists: ``fork`` is unsafe once threads run (progress bars)."""
    methods = multiprocessing.get_all_start_methods()
    return "forkserver" if "forkserver" in methods else "spawn"


#: Imported once by the fork server, so that each worker starts with them loaded.
_PRELOAD = ["minhashdup.extract", "minhashdup.signature"]


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def pool_size(requested: int, tasks: int) -> int:
    """Worker processes worth starting for ``tasks`` tasks when ``requested`` were asked for.

    The work is CPU-bound: a process more than the usable cores only costs memory and start-up,
    and one more than the tasks would sit idle. At least 1.

    Example:
        >>> pool_size(1000, 1)  # one task: one process, whatever was asked
        1
    """
    return max(1, min(requested, tasks, usable_cores()))


def process_pool(workers: int) -> ProcessPoolExecutor:
    """An executor of ``workers`` processes, started the safe way; use it as a context manager.

    No more processes than :func:`usable_cores` are started, whatever ``workers`` says
    (callers also bound it by their work, see :func:`pool_size`). A worker that dies makes
    its futures raise ``BrokenProcessPool`` instead of hanging.
    """
    ctx = multiprocessing.get_context(start_method())
    if isinstance(ctx, multiprocessing.context.ForkServerContext):
        ctx.set_forkserver_preload(_PRELOAD)
    return ProcessPoolExecutor(max(1, min(workers, usable_cores())), mp_context=ctx)
