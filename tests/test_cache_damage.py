"""A damaged cache never costs a scan its result: a damaged row is a miss (lexed or computed
again, replaced, one warning), a file whose tables are not this version's or that SQLite finds
torn is moved aside and rebuilt, and ``cache info|clear|prune`` work on any of them."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from minhashdup.engine import cached
from minhashdup.engine.cache import FILE_NAME
from minhashdup.errors import ExitCode

from .conftest import TreeFactory, go_file, near_copy, render_go, run

FILES = 6
SETTLED = time.time() - 3600  # an mtime old enough for the stat cache to trust
FIRST = "(SELECT key FROM files ORDER BY key LIMIT 1)"  # one file's row
Damage = Callable[[sqlite3.Connection], None]


@pytest.fixture(autouse=True)
def settled_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stat rows are kept for the files made here (their ctimes are now: nothing sets them back)."""
    monkeypatch.setattr(cached, "racy_limit", time.time_ns)


@pytest.fixture
def root(make_tree: TreeFactory) -> Path:
    """Near copies of one Go file, with old mtimes: pairs to find, and stat rows to keep."""
    rng = random.Random(3)
    base = go_file(rng, 6)
    tree = make_tree({f"f{i}.go": render_go(near_copy(base, rng, 1)) for i in range(FILES)})
    for path in tree.iterdir():
        os.utime(path, (SETTLED, SETTLED))
    return tree


def _scan(root: Path, cache: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """``scan ROOT -f json`` in this process: exit code, the JSON, stderr."""
    code, out, err = run("scan", str(root), "-f", "json", "-j", "1", "--cache-dir", str(cache), *args)
    return code, json.loads(out) if out else {}, err


def _run_free(doc: dict[str, Any]) -> dict[str, Any]:
    """The JSON without what describes the run (timings, cache counters)."""
    stats = {k: v for k, v in doc["stats"].items() if k not in ("seconds", "cpu_seconds", "cache")}
    return {**doc, "stats": stats}


def _uncached(root: Path, tmp_path: Path, *args: str) -> dict[str, Any]:
    code, doc, _ = _scan(root, tmp_path / "unused", "--no-cache", *args)
    assert code == ExitCode.OK and doc["pairs"]
    return _run_free(doc)


def _damage(cache: Path, damage: Damage | str) -> None:
    db = sqlite3.connect(cache / FILE_NAME, isolation_level=None)
    try:
        damage(db) if callable(damage) else db.executescript(damage)
    finally:
        db.close()


def _swap_first_two_shingles(db: sqlite3.Connection) -> None:
    key, blob = db.execute(f"SELECT key, shingles FROM files WHERE key = {FIRST}").fetchone()
    db.execute("UPDATE files SET shingles = ? WHERE key = ?", (blob[8:16] + blob[:8] + blob[16:], key))


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning:")]


# (damage, file rows lexed again: the others' rows are damaged signatures, computed again)
ROWS: dict[str, tuple[Damage | str, int]] = {
    "shingles not whole words": (f"UPDATE files SET shingles = x'78' WHERE key = {FIRST}", 1),
    "shingles not sorted": (_swap_first_two_shingles, 1),
    "shingles repeated": (f"UPDATE files SET shingles = shingles || shingles WHERE key = {FIRST}", 1),
    "unknown skip reason": (f"UPDATE files SET skip = 'nonsense' WHERE key = {FIRST}", 1),
    "tokens not a number": (f"UPDATE files SET tokens = 'many' WHERE key = {FIRST}", 1),
    "lexer not UTF-8": (f"UPDATE files SET lexer = CAST(x'ff' AS TEXT) WHERE key = {FIRST}", 1),
    "signature not whole words": (f"UPDATE signatures SET signature = x'78' WHERE key = {FIRST}", 0),
    "signature of another length": (f"UPDATE signatures SET signature = substr(signature, 9) WHERE key = {FIRST}", 0),
    "three rows": ("UPDATE files SET skip = 'nonsense' WHERE key IN (SELECT key FROM files LIMIT 3)", 3),
    # Only no-lexer verdicts are stored: a row saying gitignored would hide the file from a gate.
    "a skip never stored": (f"UPDATE files SET skip = 'gitignored', shingles = x'' WHERE key = {FIRST}", 1),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_a_damaged_row_is_a_miss_replaced_with_one_warning(root: Path, tmp_path: Path, name: str) -> None:
    damage, relexed = ROWS[name]
    cache = tmp_path / "cache"
    assert _scan(root, cache, "-t", "0.5")[0] == ExitCode.OK
    _damage(cache, damage)
    # Another threshold: no stored result answers, every row of the cache is read.
    code, doc, err = _scan(root, cache, "-t", "0.45")
    assert code == ExitCode.OK, err
    assert _run_free(doc) == _uncached(root, tmp_path, "-t", "0.45")
    damaged = "3 damaged entries" if name == "three rows" else "1 damaged entry"
    assert _warnings(err) == [
        f"warning: cache {cache / FILE_NAME}: {damaged} ignored and replaced (lexed or computed again)"
    ]
    assert doc["stats"]["cache"]["lexed"] == relexed and "Traceback" not in err
    # Replaced: the next scan reads every row again, and all are whole.
    code, doc, err = _scan(root, cache, "-t", "0.4")
    assert (code, _warnings(err), doc["stats"]["cache"]["lexed"]) == (ExitCode.OK, [], 0)
    assert _run_free(doc) == _uncached(root, tmp_path, "-t", "0.4")


def test_a_damaged_stored_result_is_computed_again_and_stored_anew(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _scan(root, cache)
    _damage(cache, "UPDATE results SET doc = x'78' WHERE length(key) = 20")  # the whole result
    code, doc, err = _scan(root, cache)
    assert code == ExitCode.OK and _run_free(doc) == _uncached(root, tmp_path)
    assert _warnings(err) == [
        f"warning: cache {cache / FILE_NAME}: 1 damaged entry ignored and replaced (lexed or computed again)"
    ]
    assert doc["stats"]["cache"] == {"hits": FILES, "lexed": 0, "copies": 0, "result": 0}
    code, doc, err = _scan(root, cache)  # computed without a warning: kept
    assert (code, _warnings(err), doc["stats"]["cache"]["result"]) == (ExitCode.OK, [], 0)
    assert _scan(root, cache)[1]["stats"]["cache"]["result"] == 1  # and replayed


def test_a_dataset_extracted_part_by_part_warns_once_of_all_its_damaged_rows(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from minhashdup.source import parquet

    files = sorted(root.iterdir())
    data = tmp_path / "files.parquet"
    table = pa.table({"path": [p.name for p in files], "content": [p.read_bytes() for p in files]})
    pq.write_table(table, data, row_group_size=1)
    monkeypatch.setattr(parquet, "PART_BYTES", 1)  # a part per row: the cache wraps each in turn
    monkeypatch.setattr(parquet, "BATCH_ROWS", 1)
    cache = tmp_path / "cache"
    args = ["scan", "--parquet", str(data), "-f", "json", "-j", "1", "-t", "0.45"]
    assert run(*args, "--cache-dir", str(cache))[0] == ExitCode.OK
    _damage(cache, "UPDATE files SET skip = 'nonsense' WHERE key IN (SELECT key FROM files LIMIT 3)")
    code, out, err = run(*args, "--cache-dir", str(cache))
    assert code == ExitCode.OK and _run_free(json.loads(out)) == _run_free(json.loads(run(*args, "--no-cache")[1]))
    assert _warnings(err) == [
        f"warning: cache {cache / FILE_NAME}: 3 damaged entries ignored and replaced (lexed or computed again)"
    ]


def test_a_stat_row_without_a_digest_is_read_as_unknown(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _scan(root, cache)
    _damage(cache, "UPDATE stats SET digest = x'00'")
    code, doc, err = _scan(root, cache, "-t", "0.45")  # the files are read: no file "changed during the scan"
    assert (code, _warnings(err), doc["stats"]["cache"]["hits"]) == (ExitCode.OK, [], FILES)
    assert _run_free(doc) == _uncached(root, tmp_path, "-t", "0.45")


TABLES = {
    "used dropped": "DROP TABLE used",
    "signatures dropped": "DROP TABLE signatures",
    "files dropped": "DROP TABLE files",
    "meta dropped": "DROP TABLE meta",
    "a column added": "ALTER TABLE files ADD COLUMN extra",
    "a table added": "CREATE TABLE mine (x)",
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_cache_whose_tables_are_not_ours_is_moved_aside_and_rebuilt(root: Path, tmp_path: Path, name: str) -> None:
    cache = tmp_path / "cache"
    _scan(root, cache)
    _damage(cache, TABLES[name])
    code, doc, err = _scan(root, cache, "-t", "0.45")
    assert code == ExitCode.OK and _run_free(doc) == _uncached(root, tmp_path, "-t", "0.45")
    [warning] = _warnings(err)
    reason = f"no table {TABLES[name].split()[-1]}" if "dropped" in name else "tables not as this version makes them"
    assert warning.startswith(f"warning: cache {cache / FILE_NAME} was unusable ({reason}); moved to cache-v")
    assert warning.endswith(" and rebuilt") and len([p for p in cache.iterdir() if ".broken-" in p.name]) == 1
    assert doc["stats"]["cache"]["lexed"] == FILES
    code, doc, err = _scan(root, cache, "-t", "0.4")
    assert (code, _warnings(err), doc["stats"]["cache"]["hits"]) == (ExitCode.OK, [], FILES)


def _tear_a_page(cache: Path, table: str = "files") -> None:
    """Overwrite the start of ``table``'s root page, as a torn write would (the log checkpointed first)."""
    db = sqlite3.connect(cache / FILE_NAME)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = db.execute("PRAGMA page_size").fetchone()[0]
        page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    finally:
        db.close()
    with open(cache / FILE_NAME, "r+b") as file:
        file.seek((page - 1) * size)
        file.write(b"\xa5" * 200)


def test_a_torn_page_found_during_a_scan_is_moved_aside_and_rebuilt(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _scan(root, cache)
    _tear_a_page(cache)
    code, doc, err = _scan(root, cache, "-t", "0.45")
    assert code == ExitCode.OK and _run_free(doc) == _uncached(root, tmp_path, "-t", "0.45")
    [warning] = _warnings(err)
    assert "was unusable (database disk image is malformed); moved to" in warning
    code, doc, err = _scan(root, cache, "-t", "0.4")
    assert (code, _warnings(err), doc["stats"]["cache"]["hits"]) == (ExitCode.OK, [], FILES)


COMMAND_DAMAGE: dict[str, Callable[[Path], None]] = {
    "used dropped": lambda cache: _damage(cache, "DROP TABLE used"),
    "signatures dropped": lambda cache: _damage(cache, "DROP TABLE signatures"),
    "files torn": _tear_a_page,
    "meta torn": lambda cache: _tear_a_page(cache, "meta"),
}


@pytest.mark.parametrize("damage", sorted(COMMAND_DAMAGE))
def test_cache_clear_leaves_a_working_empty_cache_whatever_the_damage(root: Path, tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "cache"
    _scan(root, cache)
    COMMAND_DAMAGE[damage](cache)
    code, out, err = run("cache", "clear", "--cache-dir", str(cache))
    moved = len(_warnings(err))  # a file moved aside says so, and is deleted
    tail = " and deleted 1 broken cache file" if moved else ""
    assert (code, out) == (ExitCode.OK, f"cleared {cache / FILE_NAME}{tail}\n"), err
    assert "Traceback" not in err and moved <= 1 and not [p for p in cache.iterdir() if ".broken-" in p.name]
    code, out, err = run("cache", "info", "-f", "json", "--cache-dir", str(cache))
    assert code == ExitCode.OK and json.loads(out)["files"] == 0 and _warnings(err) == []
    code, doc, err = _scan(root, cache)
    assert (code, _warnings(err), doc["stats"]["cache"]["lexed"]) == (ExitCode.OK, [], FILES)


@pytest.mark.parametrize(
    ("command", "damage"),
    [(command, damage) for command in ("info", "prune") for damage in ("used dropped", "signatures dropped")]
    + [("info", "files torn"), ("prune", "meta torn")],  # what each reads
)
def test_cache_info_and_prune_work_on_a_damaged_cache(root: Path, tmp_path: Path, command: str, damage: str) -> None:
    cache = tmp_path / "cache"
    _scan(root, cache)
    COMMAND_DAMAGE[damage](cache)
    code, out, err = run("cache", command, "-f", "json", "--cache-dir", str(cache))
    assert code == ExitCode.OK and json.loads(out)["path"] == str(cache / FILE_NAME), err
    [warning] = _warnings(err)
    assert "was unusable" in warning and "and rebuilt" in warning
    code, _, err = _scan(root, cache)
    assert code == ExitCode.OK and _warnings(err) == []


def test_scans_sharing_a_damaged_cache_replace_rows_and_keep_the_file(root: Path, tmp_path: Path) -> None:
    # Two scans at once (separate processes, as two CI jobs on one runner), a third connection
    # holding the file open: damaged rows are replaced in place, the file is never moved aside.
    cache = tmp_path / "cache"
    _scan(root, cache)
    _damage(cache, "UPDATE files SET skip = 'nonsense' WHERE key IN (SELECT key FROM files LIMIT 2)")
    other = sqlite3.connect(cache / FILE_NAME)
    try:
        command = [sys.executable, "-m", "minhashdup", "scan", str(root), "-f", "json", "-t", "0.45"]
        both = [
            subprocess.Popen(
                [*command, "--cache-dir", str(cache)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(2)
        ]
        outs = [p.communicate(timeout=120) for p in both]
        assert [p.returncode for p in both] == [ExitCode.OK, ExitCode.OK], outs
        expected = _uncached(root, tmp_path, "-t", "0.45")
        assert all(_run_free(json.loads(out)) == expected for out, _ in outs)
        assert all("Traceback" not in err and "internal error" not in err for _, err in outs)
        assert sorted(p.name for p in cache.iterdir() if ".broken-" in p.name) == []
        assert other.execute("SELECT count(*) FROM files WHERE skip = 'nonsense'").fetchone()[0] == 0
        assert other.execute("SELECT count(*) FROM files").fetchone()[0] == FILES
    finally:
        other.close()


def _query(cache: Path, sql: str, *args: Any) -> tuple[Any, ...]:
    db = sqlite3.connect(cache / FILE_NAME)
    try:
        return tuple(db.execute(sql, args).fetchone())
    finally:
        db.close()


def _edit_schema(cache: Path, table: str, sql: str) -> None:
    db = sqlite3.connect(cache / FILE_NAME, isolation_level=None)
    try:
        db.execute("PRAGMA writable_schema = ON")
        db.execute("UPDATE sqlite_schema SET sql = ? WHERE name = ?", (sql, table))
    finally:
        db.close()


@pytest.mark.parametrize("table", ["used", "results", "stats", "meta"])
def test_a_null_time_is_read_as_long_ago_not_an_internal_error(root: Path, tmp_path: Path, table: str) -> None:
    cache = tmp_path / "cache"
    _scan(root, cache)
    column, where = ("value", "name = 'pruned'") if table == "meta" else ("used", "1")
    # NOT NULL taken off the table, a NULL written, NOT NULL put back (as a tool on the file could).
    [original] = _query(cache, "SELECT sql FROM sqlite_schema WHERE name = ?", table)
    _edit_schema(cache, table, original.replace("NOT NULL", ""))
    _damage(cache, f"UPDATE {table} SET {column} = NULL WHERE {where}")
    _edit_schema(cache, table, original)
    for args in ((), ("-t", "0.45")):  # the stored result, then every row
        code, doc, err = _scan(root, cache, *args)
        assert code == ExitCode.OK and "Traceback" not in err, err
        assert _run_free(doc) == _uncached(root, tmp_path, *args)
    code, _, err = run("cache", "prune", "--max-size", "1000", "--cache-dir", str(cache))
    assert code == ExitCode.OK, err


def test_a_torn_cache_that_cannot_be_made_anew_leaves_the_scan_without_one(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from minhashdup.engine.cache import Cache

    cache = tmp_path / "cache"
    _scan(root, cache)
    _tear_a_page(cache)
    opened = Cache._open

    def full_disk(self: Cache) -> sqlite3.Connection:
        if self.rebuilds:  # the new file, after the torn one was moved aside
            raise sqlite3.OperationalError("database or disk is full")
        return opened(self)

    monkeypatch.setattr(Cache, "_open", full_disk)
    code, doc, err = _scan(root, cache, "-t", "0.45")
    assert code == ExitCode.OK and _run_free(doc) == _uncached(root, tmp_path, "-t", "0.45")
    assert any("cannot be rebuilt (database or disk is full); scanning without it" in w for w in _warnings(err))
