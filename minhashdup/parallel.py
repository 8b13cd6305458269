"""Worker processes for the pure stage functions (lexing, signatures)."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor


def start_method() -> str:
    """``forkserver`` where it exists: ``fork`` is unsafe once threads run (progress bars)."""
    methods = multiprocessing.get_all_start_methods()
    return "forkserver" if "forkserver" in methods else "spawn"


#: Imported once by the fork server, so that each worker starts with them loaded.
_PRELOAD = ["minhashdup.extract", "minhashdup.signature"]


def process_pool(workers: int) -> ProcessPoolExecutor:
    """An executor of ``workers`` processes, started the safe way; use it as a context manager.

    A worker that dies makes its futures raise ``BrokenProcessPool`` instead of hanging.
    """
    ctx = multiprocessing.get_context(start_method())
    if isinstance(ctx, multiprocessing.context.ForkServerContext):
        ctx.set_forkserver_preload(_PRELOAD)
    return ProcessPoolExecutor(workers, mp_context=ctx)
