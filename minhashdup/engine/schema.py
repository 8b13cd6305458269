"""What a cache file is (the store that reads and writes it: :mod:`minhashdup.engine.cache`).

Its tables (:data:`SCHEMA`), how a new file gets them (:func:`create`), how ours is told from
another SQLite file (:func:`ours`), and what a file's entry holds (:class:`Entry`).
"""

from __future__ import annotations

import dataclasses
import sqlite3
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy only where arrays are read: a replayed scan reads none
    from minhashdup.core.hashing import UInt64Array

APPLICATION_ID = 0x4D484450  # "MHDP"
#: The write-ahead log is cut back to this size after a checkpoint (it otherwise stays as big as
#: the largest transaction, e.g. a cold scan's).
WAL_LIMIT = 64 * 1024**2

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    key BLOB PRIMARY KEY, lexer TEXT NOT NULL, tokens INTEGER NOT NULL, not_utf8 INTEGER NOT NULL,
    skip TEXT, detail TEXT NOT NULL, shingles BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS used (key BLOB PRIMARY KEY, used REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS stats (
    path BLOB PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL, digest BLOB NOT NULL, used REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS signatures (
    key BLOB NOT NULL, family TEXT NOT NULL, signature BLOB NOT NULL, PRIMARY KEY (key, family)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results (key BLOB PRIMARY KEY, doc BLOB NOT NULL, used REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value REAL NOT NULL) WITHOUT ROWID;
"""
# A file entry's ``used`` has its own narrow table: marking it rewrites a few bytes, not the shingles.
# ``results``: scan results (:mod:`.codec`) and, keyed by 21 bytes, a scan's walk memo and result key
# by its files' stats (:mod:`.cached`); ``meta``: last prune.


@dataclasses.dataclass(frozen=True)
class Entry:
    """What the cache holds for one file: its shingles, or the reason it has none."""

    shingles: UInt64Array
    lexer: str
    tokens: int
    not_utf8: bool
    skip: str | None = None
    detail: str = ""
    used: float = 0.0  # when the entry was last used (Unix time; refreshed at most once a day)


def ours(db: sqlite3.Connection) -> bool:
    """True for a minhashdup cache, False for a new (empty) file; raises for a foreign one."""
    # One statement, so one snapshot: a file being created by another scan is seen
    # either before its tables exist or after it is marked as ours, never in between.
    app, tables = db.execute(
        "SELECT (SELECT application_id FROM pragma_application_id), (SELECT count(*) FROM sqlite_master)"
    ).fetchone()
    if app != APPLICATION_ID and tables:
        raise sqlite3.DatabaseError("not a minhashdup cache")
    return bool(app == APPLICATION_ID)


def create(db: sqlite3.Connection, stamp: float) -> None:
    """Make the tables of a new file (last pruned at ``stamp``). Two scans may start on a missing
    cache at once: the check and the creation are one IMMEDIATE transaction, so one creates, the
    other sees it."""
    db.execute("PRAGMA page_size=16384")  # shingle blobs are ~10 KB: fewer overflow pages
    db.execute("PRAGMA auto_vacuum=INCREMENTAL")  # pruning can give pages back to the disk
    db.execute("BEGIN IMMEDIATE")
    try:
        if not ours(db):
            db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)  # not executescript: it would commit first
            db.execute("INSERT INTO meta VALUES ('pruned', ?)", (stamp,))  # nothing to prune yet
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    _to_wal(db)


def _to_wal(db: sqlite3.Connection, patience: float = 30.0) -> None:
    """Switch to WAL mode. The switch needs the file to itself and SQLite does not wait for
    it (no busy handler), so while other scans hold it open, retry."""
    deadline = time.monotonic() + patience
    while True:
        try:
            if db.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal":
                return
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.02)
