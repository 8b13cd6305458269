"""The cache never gives a result computed from other bytes; a file read is never waited on
forever; workers are bounded by the machine and the work (issue 11, items 1 and 9)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from minhashdup import Config, scan
from minhashdup.cli import cli
from minhashdup.engine import cache as cache_module
from minhashdup.engine import cached, parallel, pipeline
from minhashdup.engine import workers as workers_module
from minhashdup.errors import ExitCode
from minhashdup.result import Result, Skip, SkipReason

from .conftest import TreeFactory, go_file, near_copy, render_go

SETTLED = time.time() - 3600  # an mtime old enough for the stat cache to trust


def _tree(make_tree: TreeFactory) -> Path:
    """a and c are near copies, b and d are near copies, a and b share nothing; b is shorter."""
    rng = random.Random(13)
    a, b = go_file(rng, 12), go_file(rng, 9)
    root = make_tree(
        {
            "a.go": render_go(a),
            "b.go": render_go(b),
            "c.go": render_go(near_copy(a, rng, 3)),
            "d.go": render_go(near_copy(b, rng, 2)),
        }
    )
    for path in root.iterdir():
        os.utime(path, (SETTLED, SETTLED))
    return root


def _pairs(result: Result) -> list[tuple[str, str, float]]:
    return [(Path(p.a).name, Path(p.b).name, p.jaccard) for p in result.pairs]


def _fresh(root: Path, config: Config) -> list[tuple[str, str, float]]:
    return _pairs(scan([str(root)], dataclasses.replace(config, cache=False)))


@pytest.fixture
def after_walk(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], None]], None]:
    """Run an action once, right after the next scan's walk (before any file is read)."""

    def arm(action: Callable[[], None]) -> None:
        real = pipeline.remembered_walk

        def walk_then_act(*args: Any, **kwargs: Any) -> Any:
            walked = real(*args, **kwargs)
            monkeypatch.setattr(pipeline, "remembered_walk", real)
            action()
            return walked

        monkeypatch.setattr(pipeline, "remembered_walk", walk_then_act)

    return arm


@pytest.mark.parametrize("held", [True, False], ids=["held", "read-again"])
@pytest.mark.parametrize("jobs", [1, 2], ids=["inline", "workers"])
def test_a_file_changed_between_digest_and_lex_poisons_nothing(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, pools: list[int], jobs: int, held: bool
) -> None:
    # The scenario: a file is rewritten after the main process digested it and before
    # it is lexed (in this process, or in a worker), then its old bytes are put back. The bytes
    # read for the digest are lexed (held), or, past the budget, the file is read again.
    root = _tree(make_tree)
    target = root / "a.go"
    old, new = target.read_bytes(), (root / "b.go").read_bytes()
    config = Config(cache=True, jobs=jobs, threshold=0.3)
    before = _fresh(root, config)
    if jobs > 1:
        monkeypatch.setattr(workers_module, "_INLINE_BYTES", 0)  # a small tree, lexed by workers
    if not held:
        monkeypatch.setattr(cached, "HELD_BYTES", 0)
    real = cached.file_keys

    def digest_then_rewrite(*args: Any) -> Any:
        digests = real(*args)
        monkeypatch.setattr(cached, "file_keys", real)
        target.write_bytes(new)
        return digests

    monkeypatch.setattr(cached, "file_keys", digest_then_rewrite)
    raced = scan([str(root)], config)
    assert bool(pools) == (jobs > 1)
    target.write_bytes(old)
    if held:  # the rewrite came after the one read: the scan is of the bytes digested, and kept
        assert _pairs(raced) == before and raced.warnings == [] and raced.stats.cache["result"] == 0
        replayed = scan([str(root)], config)
        assert _pairs(replayed) == before and replayed.stats.cache["result"] == 1
        other = dataclasses.replace(config, threshold=0.2)  # no stored result: from the entries
        from_entries = scan([str(root)], other)
        assert _pairs(from_entries) == _fresh(root, other)
        assert from_entries.stats.cache == {"hits": 4, "lexed": 0, "copies": 0, "result": 0}
        return
    restored = scan([str(root)], config)
    assert _pairs(restored) == before and restored.stats.cache["result"] == 0
    replayed = scan([str(root)], config)  # the result of a settled scan is kept, and right
    assert _pairs(replayed) == before and replayed.stats.cache["result"] == 1
    # The raced scan reports what it lexed (a is b's bytes then), says so, and keeps no result.
    assert ("a.go", "b.go", 1.0) in _pairs(raced)
    assert raced.warnings == [
        f"{target}: changed during the scan; its pairs are from the content read when it was lexed,"
        " and this result is not cached (scan again once the tree is settled)"
    ]


def test_files_changed_during_a_scan_are_named_up_to_a_cap() -> None:
    warnings = cached.changed_warnings([f"f{i}.go" for i in range(cached.CHANGED_SHOWN + 2)])
    assert len(warnings) == cached.CHANGED_SHOWN + 1
    assert warnings[0].startswith("f0.go: changed during the scan; ")
    assert warnings[-1] == "2 more files changed during the scan"


def test_a_changed_file_with_its_stat_restored_is_read_again(
    make_tree: TreeFactory, after_walk: Callable[[Callable[[], None]], None]
) -> None:
    # The stat cache must only ever pair a (size, mtime, inode) with the digest of the bytes
    # that stat describes: here a file changes (same size) between the walk and its digest,
    # then its old bytes and mtime come back (cp -p, rsync -t, a tar extraction do that).
    root = _tree(make_tree)
    target = root / "a.go"
    old = target.read_bytes()
    new = (root / "b.go").read_bytes()
    new += b"\n" * (len(old) - len(new))  # same size; blank lines are not tokens
    config = Config(cache=True, jobs=1, threshold=0.3)
    before = _fresh(root, config)
    after_walk(lambda: target.write_bytes(new))
    scan([str(root)], config)
    target.write_bytes(old)
    os.utime(target, (SETTLED, SETTLED))
    assert _pairs(scan([str(root)], config)) == before


@pytest.mark.parametrize("memo", [True, False], ids=["replayed", "keys"])
def test_a_file_rewritten_with_its_mtime_set_back_is_read_again(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, memo: bool
) -> None:
    # Same size, same inode, its old mtime restored (touch -d, tar or rsync -t over it): only
    # the ctime, which no one can set back, shows the rewrite.
    root = _tree(make_tree)
    target = root / "a.go"
    new = (root / "b.go").read_bytes()
    new += b"\n" * (len(target.read_bytes()) - len(new))  # same size; blank lines are not tokens
    config = Config(cache=True, jobs=1, threshold=0.3)
    scan([str(root)], config)
    if not memo:  # no stored result found by the stats: the file keys come from the stat cache
        monkeypatch.setattr(cached.CachedFiles, "_by_stats", lambda self, key: None)
    time.sleep(0.03)  # past the file system's timestamp granularity
    inode = target.stat().st_ino
    target.write_bytes(new)
    os.utime(target, (SETTLED, SETTLED))
    assert target.stat().st_ino == inode and target.stat().st_mtime == SETTLED
    assert _pairs(scan([str(root)], config)) == _fresh(root, config)


def test_entries_of_the_old_format_possibly_poisoned_are_not_read(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, private_cache: Path
) -> None:
    # What format 2 could leave behind: a.go's current stat paired with the digest of bytes it
    # held during an earlier scan (here b.go's), and those bytes' shingles under that digest.
    root = _tree(make_tree)
    target = root / "a.go"
    old = target.read_bytes()
    config = Config(cache=True, jobs=1, threshold=0.3)
    before = _fresh(root, config)
    target.write_bytes((root / "b.go").read_bytes())
    os.utime(target, (SETTLED, SETTLED))
    with monkeypatch.context() as patch:
        patch.setattr(cache_module, "CACHE_FORMAT", 2)
        patch.setattr(cache_module, "FILE_NAME", "cache-v2.sqlite3")
        scan([str(root)], config)
    target.write_bytes(old)
    os.utime(target, (SETTLED, SETTLED))
    st = target.stat()
    db = sqlite3.connect(private_cache / "cache-v2.sqlite3")
    with db:
        db.execute(
            "UPDATE stats SET size = ?, mtime_ns = ?, inode = ? WHERE path = ?",
            (st.st_size, st.st_mtime_ns, st.st_ino, os.fsencode(os.path.realpath(target))),
        )
    db.close()
    assert _pairs(scan([str(root)], config)) == before
    assert (private_cache / "cache-v2.sqlite3").exists()  # left alone, for an older minhashdup


@contextlib.contextmanager
def _writer_unblocking(fifo: Path) -> Iterator[None]:
    """Until the block ends, open ``fifo`` for writing and close it whenever a reader waits:
    code that (wrongly) blocks opening the FIFO then reads an empty file instead of hanging
    the test suite, and fails the test's assertions."""
    stop = threading.Event()

    def unblock() -> None:
        while not stop.wait(0.02):
            with contextlib.suppress(OSError):  # ENXIO while nobody reads
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    thread = threading.Thread(target=unblock, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_a_source_file_replaced_by_a_fifo_after_the_walk_is_skipped(
    make_tree: TreeFactory, after_walk: Callable[[Callable[[], None]], None], cache: bool
) -> None:
    root = _tree(make_tree)
    target = root / "d.go"
    config = Config(jobs=1, threshold=0.3, cache=cache)
    before = _fresh(root, config)
    assert [p[:2] for p in before] == [("a.go", "c.go"), ("b.go", "d.go")]
    with contextlib.ExitStack() as stack:

        def swap() -> None:
            target.unlink()
            os.mkfifo(target)
            stack.enter_context(_writer_unblocking(target))

        after_walk(swap)
        result = scan([str(root)], config)
    assert _pairs(result) == before[:1]  # the others' pairs are kept
    assert result.skips == [Skip(str(target), SkipReason.UNREADABLE, "not a regular file (FIFO)")]


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_a_source_file_swapped_for_a_link_after_the_walk_is_not_followed(
    make_tree: TreeFactory, after_walk: Callable[[Callable[[], None]], None], tmp_path: Path, cache: bool
) -> None:
    # The walk keeps links inside the root; a file swapped for a link to outside after the walk
    # must not be read through it.
    root = _tree(make_tree)
    target = root / "d.go"
    secret = tmp_path / "outside.go"
    secret.write_bytes(target.read_bytes())
    config = Config(jobs=1, threshold=0.3, cache=cache)
    before = _fresh(root, config)

    def swap() -> None:
        target.unlink()
        target.symlink_to(secret)

    after_walk(swap)
    result = scan([str(root)], config)
    assert _pairs(result) == before[:1]
    assert result.skips == [Skip(str(target), SkipReason.UNREADABLE, "a symbolic link now (swapped after the walk)")]


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_a_file_grown_past_max_size_after_the_walk_is_skipped_as_too_large(
    make_tree: TreeFactory, after_walk: Callable[[Callable[[], None]], None], cache: bool
) -> None:
    root = _tree(make_tree)
    target = root / "d.go"
    config = Config(jobs=1, threshold=0.3, cache=cache, max_size=20_000)
    before = _fresh(root, config)
    after_walk(lambda: target.write_bytes(target.read_bytes() + b"\n" * 20_000))
    result = scan([str(root)], config)
    assert _pairs(result) == before[:1]
    assert result.skips == [
        Skip(str(target), SkipReason.TOO_LARGE, "grew over --max-size (20000 bytes) during the scan")
    ]


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``max_workers`` of every process pool started."""
    sizes: list[int] = []
    real = parallel.ProcessPoolExecutor

    def recording(max_workers: int, **kwargs: Any) -> Any:
        sizes.append(max_workers)
        return real(max_workers, **kwargs)

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", recording)
    return sizes


def test_jobs_1000_starts_no_more_workers_than_cores(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, pools: list[int]
) -> None:
    rng = random.Random(5)
    root = make_tree({f"f{i:03}.go": render_go(go_file(rng, 2)) for i in range(100)})
    monkeypatch.setattr(workers_module, "_INLINE_BYTES", 0)  # a small tree, lexed by workers
    monkeypatch.setattr(parallel, "usable_cores", lambda: 3)  # the same on any machine
    out = CliRunner().invoke(cli, ["scan", "--jobs", "1000", "--no-cache", "-f", "json", str(root)])
    assert out.exit_code == ExitCode.OK, out.output
    assert json.loads(out.stdout)["stats"]["files_scanned"] == 100
    assert pools and max(pools) == 3


def test_a_pool_is_bounded_by_the_cores_and_the_work(monkeypatch: pytest.MonkeyPatch, pools: list[int]) -> None:
    monkeypatch.setattr(parallel, "usable_cores", lambda: 64)
    assert [parallel.pool_size(1000, 5), parallel.pool_size(1000, 100), parallel.pool_size(3, 100)] == [5, 64, 3]
    assert parallel.pool_size(4, 0) == 1
    with parallel.process_pool(1000):
        pass
    assert pools == [64]
