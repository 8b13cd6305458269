"""The Dask engine's cluster: reaching it (or starting one here), checking it can run the scan, and
waiting on its tasks without waiting forever.

A scheduler that does not answer like one, one without workers, workers without this version of
minhashdup, a scheduler or every worker lost mid-run: each ends the scan with one line
(:class:`~minhashdup.errors.ClusterError`, exit 2), never a hang or a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from minhashdup._version import __version__
from minhashdup.config import Config, usable_cores
from minhashdup.engine.parallel import _signals_held, outside_the_tree
from minhashdup.errors import ClusterError, ConfigError

INSTALL = "pip install 'minhashdup[dask]'"
#: Seconds to reach a scheduler (its handshake included), and for a first worker to be there.
CONNECT, FIRST_WORKER = 30.0, 60.0
#: Seconds a run waits with no worker in the cluster before it gives up.
NO_WORKERS = 60.0
#: Seconds between looks at the cluster while tasks run.
POLL = 2.0


@contextlib.contextmanager
def connected(config: Config) -> Iterator[Any]:
    """A ``distributed.Client`` of ``config.scheduler``, checked (a worker there, each with this
    version of minhashdup), or of a local cluster of ``config.workers`` processes (one thread
    each, at most one per usable core) on 127.0.0.1 when there is none.

    Raises:
        ConfigError: Dask is not installed.
        ClusterError: the scheduler cannot be reached or cannot run the scan.
    """
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError("{0} dask needs Dask: " + INSTALL, "engine") from None
    if config.scheduler:
        with _quiet(), _reached(config.scheduler, Client) as client:
            _check_workers(client, config.scheduler)
            yield client
        return
    # Its workers lex in a child process of their own (the deadline is the main thread's): Dask's
    # workers must be allowed children while this cluster lives.
    with dask.config.set({"distributed.worker.daemon": False}), contextlib.ExitStack() as stack:
        if sys.version_info >= (3, 11):  # the whole cluster's life: a worker may be restarted later
            stack.enter_context(outside_the_tree())
        # A Ctrl-C while the cluster starts takes effect once it is up and will be closed: one
        # interrupted half-way is left to Dask's exit hook, which prints a traceback.
        with _signals_held(), _blocked_for_children(), outside_the_tree():
            local = stack.enter_context(
                LocalCluster(
                    n_workers=max(1, min(config.workers, usable_cores())),
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address="127.0.0.1:0",
                    scheduler_kwargs={"dashboard": False},
                    # CRITICAL: a worker whose heartbeat meets the scheduler already closed logs an
                    # ERROR with a traceback as the cluster ends (seen in CI); failures reach the
                    # scan through its tasks, as one line.
                    silence_logs=logging.CRITICAL,
                    preload=["minhashdup.engine.shards"],  # its dask_setup: workers leave Ctrl-C to the client
                )
            )
            client = stack.enter_context(Client(local))
        yield client


@contextlib.contextmanager
def _blocked_for_children() -> Iterator[None]:
    """SIGINT blocked in this thread while the cluster starts: the threads and worker processes
    started meanwhile inherit the mask, so a Ctrl-C cannot reach a worker before it ignores it
    (a traceback of a worker half-started); here it is pending, and taken when the block ends."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Dask's own log lines (a lost connection, with its traceback) kept off stderr while the
    scan runs: what went wrong reaches the user as one line, from :func:`finished`."""
    names = ["distributed", *(n for n in logging.root.manager.loggerDict if n.startswith("distributed."))]
    loggers = [logging.getLogger(n) for n in names]  # each may have a level of its own (Dask's config)
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@contextlib.contextmanager
def _reached(address: str, client_class: Any) -> Iterator[Any]:
    """A client of the scheduler at ``address``, once :func:`_probe` found a scheduler there."""
    _probe(address)
    try:
        client = client_class(address, timeout=f"{CONNECT:g}s")
    except Exception as err:  # what the handshake meets with a wrong server: anything
        raise ClusterError(f"--scheduler {address}: cannot connect ({line(err)}); is it a Dask scheduler?") from None
    with client:
        yield client


def _probe(address: str) -> None:
    """Raise unless the server at ``address`` answers Dask's ``identity`` as a scheduler within
    :data:`CONNECT` seconds, all under one deadline (a server that is not Dask's may take the
    connection and never answer: the handshake alone would wait for ever)."""

    async def identity() -> Any:
        from distributed.comm.core import connect

        comm = await connect(address, timeout=0.8 * CONNECT)  # under the deadline: its own error says more
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        said = asyncio.run(asyncio.wait_for(identity(), CONNECT))
    except (TimeoutError, asyncio.TimeoutError):
        raise ClusterError(f"--scheduler {address}: no answer within {CONNECT:g} s; is it a Dask scheduler?") from None
    except Exception as err:  # refused, unresolvable, or not Dask's protocol: anything
        raise ClusterError(f"--scheduler {address}: cannot connect ({line(err)}); is it a Dask scheduler?") from None
    if not isinstance(said, dict) or said.get("type") != "Scheduler":
        kind = said.get("type") if isinstance(said, dict) else type(said).__name__
        raise ClusterError(f"--scheduler {address}: not a Dask scheduler (it answers as {kind})")


def _check_workers(client: Any, address: str) -> None:
    """A worker is there, and every worker has this version of minhashdup (its tasks import it)."""
    try:
        client.wait_for_workers(1, timeout=FIRST_WORKER)
        versions = client.get_versions(packages=["minhashdup"])["workers"]
    except Exception as err:  # a timeout, the scheduler gone
        raise ClusterError(f"--scheduler {address}: no worker joined within {FIRST_WORKER:g} s ({line(err)})") from None
    wrong = sorted(
        (name, found)
        for name, info in versions.items()
        if (found := info.get("packages", {}).get("minhashdup")) != __version__
    )
    if wrong:
        name, found = wrong[0]
        has = f"minhashdup {found}" if found else "no minhashdup"
        raise ClusterError(
            f"--scheduler {address}: {len(wrong)} worker(s) cannot run the scan (e.g. {name} has {has});"
            f" install minhashdup {__version__} with {INSTALL} where the workers run"
        )


def finished(client: Any, futures: list[Any], on_done: Callable[[Any], object] | None = None) -> list[Any]:
    """The results of ``futures``, in order, once all are done (``on_done`` called with each as it
    finishes). A task that failed past its retries or was cancelled (its scheduler gone), or a
    cluster left without workers for :data:`NO_WORKERS` seconds, ends the run.

    Raises:
        ClusterError: the first line of what went wrong.
    """
    from distributed import wait

    pending, alone = list(futures), None
    with cluster_errors():
        while pending:
            # All at once: waiting for the first of thousands, again and again, was quadratic.
            # (asyncio's TimeoutError is a class of its own before Python 3.11.)
            with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
                wait(pending, timeout=POLL, return_when="ALL_COMPLETED")
            left = []
            for future in pending:
                if not future.done():
                    left.append(future)
                    continue
                if future.status != "finished":
                    why = line(future.exception()) if future.status == "error" else future.status
                    raise ClusterError(f"a task failed on the cluster ({why})")
                if on_done is not None:
                    on_done(future)
            alone = _alone(client, alone) if len(left) == len(pending) else None
            pending = left
        return list(client.gather(futures))


def _alone(client: Any, since: float | None) -> float | None:
    """When the cluster was first seen without workers (``None``: it has some)."""
    if client.scheduler_info().get("workers"):
        return None
    now = time.monotonic()
    if since is not None and now - since > NO_WORKERS:
        raise ClusterError(
            f"the cluster has had no workers for {NO_WORKERS:g} s; its workers died or cannot run minhashdup"
        )
    return since if since is not None else now


@contextlib.contextmanager
def cluster_errors() -> Iterator[None]:
    """Dask's and its network's exceptions (a task failed, the scheduler lost) as one ClusterError."""
    try:
        yield
    except (ClusterError, ConfigError, KeyboardInterrupt):
        raise
    except Exception as err:
        if not _of_cluster(err):
            raise
        if "Cancelled" in type(err).__name__:
            raise ClusterError("the cluster cancelled the scan's tasks: its scheduler is gone or restarted") from None
        raise ClusterError(f"the cluster failed ({line(err)})") from None


def _of_cluster(err: BaseException) -> bool:
    import concurrent.futures

    module = type(err).__module__.split(".")[0]
    cancelled = (asyncio.CancelledError, concurrent.futures.CancelledError)
    timeouts = (TimeoutError, asyncio.TimeoutError)
    return module in ("distributed", "tornado", "dask") or isinstance(err, (OSError, *timeouts, *cancelled))


def line(err: BaseException | None) -> str:
    """The first line of an exception, with its type, at most 200 characters."""
    text = f"{type(err).__name__}: {err}" if err is not None else "unknown"
    return text.splitlines()[0][:200] if text else "unknown"
