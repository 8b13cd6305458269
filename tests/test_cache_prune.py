"""The cache is bounded: entries unused for a while and, over a size, the least recently used
are dropped, once a day after a scan and by ``minhashdup cache prune`` (issue 12)."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import sqlite3
import time
from pathlib import Path

import pytest

from minhashdup import Config, Result, scan
from minhashdup.engine import cache as cache_module
from minhashdup.engine import cached
from minhashdup.engine.cache import FILE_NAME, Cache
from minhashdup.engine.prune import DAY, bytes_in_use
from minhashdup.errors import ExitCode

from .conftest import TreeFactory, go_file, near_copy, render_go, run

SETTLED = time.time() - 3600  # an mtime old enough for the stat cache to trust
TABLES = ("files", "used", "signatures", "stats", "results")


class Clock:
    """The cache's clock, moved by hand (``clock.days = 31``)."""

    def __init__(self) -> None:
        self.start = time.time()
        self.days = 0.0

    def __call__(self) -> float:
        return self.start + self.days * DAY


@pytest.fixture(autouse=True)
def settled_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stat cache trusts the files made here at once: their mtimes are set back (SETTLED), but
    their ctimes, part of a file's stat, are now, and nothing sets them back."""
    monkeypatch.setattr(cached, "racy_limit", time.time_ns)  # the stat cache's limit only: now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(cache_module, "now", fake)
    return fake


def _tree(make_tree: TreeFactory, name: str, files: int = 5, seed: int = 0) -> Path:
    """``files`` Go files under ``name``: near copies of one another, so a scan finds pairs."""
    rng = random.Random(f"{name}{seed}")
    base = go_file(rng, 6)
    root = make_tree({f"f{i}.go": render_go(near_copy(base, rng, 1)) for i in range(files)}, name)
    for path in root.iterdir():
        os.utime(path, (SETTLED, SETTLED))
    return root


def _counts(folder: Path) -> dict[str, int]:
    db = sqlite3.connect(folder / FILE_NAME)
    try:
        counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
        # results: whole results (20-byte keys); memos: walks and result keys by stats (21 bytes)
        counts["results"] = db.execute("SELECT count(*) FROM results WHERE length(key) = 20").fetchone()[0]
        counts["memos"] = db.execute("SELECT count(*) FROM results WHERE length(key) = 21").fetchone()[0]
        return counts
    finally:
        db.close()


def _in_use(folder: Path) -> int:
    db = sqlite3.connect(folder / FILE_NAME)
    try:
        return bytes_in_use(db)
    finally:
        db.close()


def _found(result: Result) -> list[tuple[str, str, float, float]]:
    return [(p.a, p.b, p.jaccard, p.estimate) for p in result.pairs]


CONFIG = Config(cache=True, jobs=1, threshold=0.3)


def test_entries_unused_for_30_days_are_dropped_by_a_later_scan(
    make_tree: TreeFactory, private_cache: Path, clock: Clock, lexed: list[str]
) -> None:
    a, b = _tree(make_tree, "a"), _tree(make_tree, "b")
    scan([str(a)], CONFIG)
    clock.days = 29
    scan([str(b)], CONFIG)  # prunes (a day since the cache was made): a is 29 days old, kept
    assert _counts(private_cache) == {"files": 10, "used": 10, "signatures": 10, "stats": 10, "results": 2, "memos": 2}
    clock.days = 30.5
    scan([str(b)], CONFIG)  # prunes again: a is 30.5 days old
    assert _counts(private_cache) == {"files": 5, "used": 5, "signatures": 5, "stats": 5, "results": 1, "memos": 1}
    lexed.clear()
    scan([str(b)], CONFIG)
    assert lexed == []
    scan([str(a)], CONFIG)
    assert sorted(lexed) == sorted(p.read_text() for p in a.iterdir())


@pytest.mark.parametrize("mode", ["replayed", "new-options"])
def test_a_tree_scanned_every_few_days_is_never_dropped(
    make_tree: TreeFactory, private_cache: Path, clock: Clock, lexed: list[str], mode: str
) -> None:
    # Each scan uses a's entries (a replayed result, or hits for new options): they are marked
    # used again, so only b, scanned once, goes after 30 days.
    a, b = _tree(make_tree, "a"), _tree(make_tree, "b")
    scan([str(a)], CONFIG)
    scan([str(b)], CONFIG)
    lexed.clear()
    for step in range(1, 15):
        clock.days = 5 * step
        threshold = 0.3 if mode == "replayed" else 0.3 + step / 100
        result = scan([str(a)], dataclasses.replace(CONFIG, threshold=threshold))
        assert result.stats.cache["result"] == (1 if mode == "replayed" else 0)
    assert lexed == []  # a was never lexed again in 70 days
    assert _counts(private_cache)["files"] == 5 and _counts(private_cache)["stats"] == 5
    scan([str(b)], CONFIG)
    assert sorted(lexed) == sorted(p.read_text() for p in b.iterdir())


def _used(db: sqlite3.Connection) -> list[float]:
    """When each file entry, stat and whole result (not a memo: 21-byte keys) was last used."""
    tables = ("used", "stats", "results WHERE length(key) = 20")
    return [u for t in tables for (u,) in db.execute(f"SELECT used FROM {t} ORDER BY 1")]


def test_a_warm_scan_writes_nothing_until_a_day_has_passed(
    make_tree: TreeFactory, private_cache: Path, clock: Clock
) -> None:
    a = _tree(make_tree, "a")
    scan([str(a)], CONFIG)
    observer = sqlite3.connect(private_cache / FILE_NAME)
    try:
        version, used = observer.execute("PRAGMA data_version").fetchone()[0], _used(observer)
        clock.days = 0.9
        assert scan([str(a)], CONFIG).stats.cache["result"] == 1
        assert observer.execute("PRAGMA data_version").fetchone()[0] == version  # nothing written
        scan([str(a)], dataclasses.replace(CONFIG, threshold=0.4))  # from the entries; a new result
        assert _used(observer) == [*used, clock()]  # the new result only: no entry marked again
        clock.days = 1.5
        assert scan([str(a)], CONFIG).stats.cache["result"] == 1
        # Its entries, stats and result are marked used now (the other result was not used).
        assert _used(observer) == [clock()] * 10 + [clock.start + 0.9 * DAY, clock()]
    finally:
        observer.close()


def test_a_size_cap_drops_the_least_recently_used_first(
    make_tree: TreeFactory, private_cache: Path, clock: Clock, lexed: list[str]
) -> None:
    trees = [_tree(make_tree, name, files=6) for name in "abc"]
    for day, tree in enumerate(trees):  # a on day 0, b on day 1, c on day 2
        clock.days = day
        scan([str(tree)], CONFIG)
    clock.days = 3
    scan([str(trees[0])], CONFIG)  # a is used again: b is now the least recently used
    with Cache(private_cache / "empty") as empty:
        base = empty.prune(0, 0).bytes_after  # type: ignore[union-attr]
    cap = base + (_in_use(private_cache) - base) // 2  # room for about half of the entries
    code, out, err = run("cache", "prune", "--older-than", "1000", "--max-size", str(cap), "-f", "json")
    assert (code, err) == (ExitCode.OK, "")
    doc = json.loads(out)
    assert doc["bytes_after"] <= cap < doc["bytes_before"]
    assert 6 <= doc["files"] < 18 and doc["old_files"] == []
    lexed.clear()
    scan([str(trees[0])], CONFIG)  # the most recently used: kept whole
    assert lexed == []
    scan([str(trees[1])], CONFIG)  # the least recently used: dropped first
    assert sorted(lexed) == sorted(p.read_text() for p in trees[1].iterdir())


def test_a_scans_prune_spares_what_was_used_within_a_day(
    make_tree: TreeFactory, private_cache: Path, clock: Clock, lexed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # However small the cap, a scan does not drop the entries used within the last day: a
    # tree bigger than the cap is not lexed again every day.
    monkeypatch.setattr(cache_module, "MAX_BYTES", 0)
    a, b, c = _tree(make_tree, "a"), _tree(make_tree, "b"), _tree(make_tree, "c")
    scan([str(c)], CONFIG)  # day 0: the cache is made
    clock.days = 0.5
    scan([str(a)], CONFIG)
    clock.days = 1.2
    scan([str(b)], CONFIG)  # prunes: c (1.2 days old) goes, a (0.7 days) and b stay
    assert _counts(private_cache) == {"files": 10, "used": 10, "signatures": 10, "stats": 10, "results": 2, "memos": 2}
    lexed.clear()
    scan([str(a)], CONFIG)
    scan([str(b)], CONFIG)
    assert lexed == []
    scan([str(c)], CONFIG)
    assert sorted(lexed) == sorted(p.read_text() for p in c.iterdir())


@pytest.mark.parametrize("limits", [["--older-than", "0"], ["--max-size", "0"], ["--max-size", "300KiB"]])
def test_a_scan_after_prune_gives_the_same_result(
    make_tree: TreeFactory, private_cache: Path, lexed: list[str], limits: list[str]
) -> None:
    a, b = _tree(make_tree, "a"), _tree(make_tree, "b", files=4)
    paths = [str(a), str(b)]
    fresh = scan(paths, dataclasses.replace(CONFIG, cache=False))
    assert len(fresh.pairs) > 4
    scan(paths, CONFIG)
    code, out, err = run("cache", "prune", *limits)
    assert (code, err) == (ExitCode.OK, "") and out.startswith(f"pruned {private_cache / FILE_NAME}: dropped ")
    after = scan(paths, CONFIG)
    assert _found(after) == _found(fresh) and after.clusters == fresh.clusters and after.skips == fresh.skips
    lexed.clear()
    again = scan(paths, CONFIG)
    assert _found(again) == _found(fresh) and lexed == []


def test_prune_reports_what_it_dropped(make_tree: TreeFactory, private_cache: Path, clock: Clock) -> None:
    scan([str(_tree(make_tree, "a"))], CONFIG)
    clock.days = 40
    code, out, err = run("cache", "prune")
    assert (code, err) == (ExitCode.OK, "")
    pattern = r"pruned (.*): dropped 5 file entries, 5 stats, 1 result, 0 old cache files; [\d.]+ MiB -> [\d.]+ MiB\n"
    match = re.fullmatch(pattern, out)
    assert match and match.group(1) == str(private_cache / FILE_NAME)
    code, out, _ = run("cache", "prune", "-f", "json")
    assert code == ExitCode.OK
    doc = json.loads(out)
    assert list(doc) == ["path", "files", "stats", "results", "old_files", "bytes_before", "bytes_after"]
    assert doc["files"] == doc["stats"] == doc["results"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--older-than", "-1"], "--older-than must be a number of days, 0 or more (got -1)"),
        (["--older-than", "nan"], "--older-than must be a number of days, 0 or more (got nan)"),
        (["--older-than", "inf"], "--older-than must be a number of days, 0 or more (got inf)"),
        (["--older-than", "soon"], "Invalid value for '--older-than': 'soon' is not a valid float."),
        (
            ["--max-size", "-5"],
            "Invalid value for '--max-size': '-5' is not a size; write e.g. 1048576, 512KiB or 1MiB",
        ),
        (
            ["--max-size", "1X"],
            "Invalid value for '--max-size': '1X' is not a size; write e.g. 1048576, 512KiB or 1MiB",
        ),
    ],
)
def test_prune_refuses_bad_limits(private_cache: Path, args: list[str], message: str) -> None:
    code, out, err = run("cache", "prune", *args)
    assert (code, out) == (ExitCode.USAGE, "")
    assert err.startswith(f"minhashdup: error: {message}") and err.count("\n") == 1
    assert not (private_cache / FILE_NAME).exists()  # refused before the cache is opened


def test_prune_of_a_cache_that_cannot_be_made_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    code, _, err = run("cache", "prune", "--cache-dir", str(tmp_path / "file" / "cache"))
    assert code == ExitCode.USAGE
    assert err.startswith("minhashdup: error: cannot open the cache: ") and err.endswith("; check --cache-dir\n")


def test_library_prune_refuses_bad_limits(private_cache: Path) -> None:
    with Cache(private_cache) as store:
        with pytest.raises(ValueError, match=r"^older_than_days must be a number of days, 0 or more \(got -2\)$"):
            store.prune(-2)
        with pytest.raises(ValueError, match=r"^max_bytes must be a size in bytes, 0 or more \(got -1\)$"):
            store.prune(1, -1)
        with pytest.raises(ValueError, match=r"^older_than_days must be a number of days \(got '3'\)$"):
            store.prune("3")  # type: ignore[arg-type]


def test_old_cache_files_are_deleted_once_unused_as_long(private_cache: Path) -> None:
    private_cache.mkdir(parents=True)
    old = time.time() - 40 * DAY
    names = {
        "cache-v3.sqlite3": old,  # an older format, unused for 40 days: deleted with its log
        "cache-v3.sqlite3-wal": old,
        "cache-v2.sqlite3": time.time(),  # an older format still in use (an older minhashdup)
        "cache-v4.sqlite3.broken-1700000000": old,  # moved aside as broken long ago
        "cache-v9.sqlite3": old,  # a newer format: not ours to delete
        "notes.txt": old,
    }
    for name, mtime in names.items():
        (private_cache / name).write_bytes(b"x")
        os.utime(private_cache / name, (mtime, mtime))
    code, out, _ = run("cache", "prune", "-f", "json")
    assert code == ExitCode.OK
    deleted = ["cache-v3.sqlite3", "cache-v3.sqlite3-wal", "cache-v4.sqlite3.broken-1700000000"]
    assert json.loads(out)["old_files"] == deleted
    left = sorted(p.name for p in private_cache.iterdir() if not p.name.startswith(FILE_NAME))
    assert left == ["cache-v2.sqlite3", "cache-v9.sqlite3", "notes.txt"]


def test_cache_clear_deletes_the_files_moved_aside_as_broken(private_cache: Path) -> None:
    private_cache.mkdir(parents=True)
    names = [
        f"{FILE_NAME}.broken-1700000000",  # moved aside as broken (seconds, as older versions named them)
        f"{FILE_NAME}.broken-1700000000000000001",  # and in nanoseconds, with its log
        f"{FILE_NAME}.broken-1700000000000000001-wal",
        "cache-v2.sqlite3",  # an older format: another minhashdup may use it (prune deletes it unused)
        "notes.txt",
    ]
    for name in names:
        (private_cache / name).write_bytes(b"x")
    code, out, err = run("cache", "clear")
    assert code == ExitCode.OK and err == ""
    assert out.endswith(" and deleted 3 broken cache files\n")
    assert sorted(p.name for p in private_cache.iterdir() if not p.name.startswith(FILE_NAME)) == [
        "cache-v2.sqlite3",
        "notes.txt",
    ]
    assert not [p for p in private_cache.iterdir() if ".broken-" in p.name]
