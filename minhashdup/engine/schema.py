"""What a cache file is (the store that reads and writes it: :mod:`minhashdup.engine.cache`).

Its tables (:data:`SCHEMA`), how a new file gets them (:func:`create`), how ours is told from
another SQLite file (:func:`ours`, :func:`check_tables`), and which rows are read as written.

The cache lives on a user's disk, where a crash, a tool or a hand can damage it, and a scan
trusts what it reads there. So what this version did not write is never used:

- a file SQLite cannot read (its header, or a page torn midway, found when it is read), a
  foreign one, or one whose tables are not those :data:`SCHEMA` makes (one dropped or altered):
  the store moves it aside and starts a new one, with a warning;
- a row whose values are not what this version writes (:func:`entry_of`, :func:`signature_of`,
  :func:`blob_of`): a value of another type, a blob of a length no array has, shingles not sorted
  and distinct (the exact check relies on both), a signature of another length than its hash
  family's, a skip reason other than ``no-lexer`` (the only one stored: a row saying
  ``gitignored`` would hide a file from a gate). Such a row is read as missing: the file is
  lexed again and the row replaced; the store counts them for one warning.

A value of the right shape and the wrong content (a bit flipped inside a shingle array, a
truncation to whole words) still passes: only a checksum in every row would tell, a new cache
format that every user's cache would pay for with a cold scan.
"""

from __future__ import annotations

import dataclasses
import functools
import sqlite3
import sys
import time
from typing import TYPE_CHECKING, Any

from minhashdup.result import SkipReason

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

#: Every table's columns (name, type, NOT NULL, place in the primary key) and every other object
#: (index, view, trigger) of the file, SQLite's own left out.
_LAYOUT = """
SELECT m.type, m.name, p.name, p.type, p."notnull", p.pk FROM sqlite_master m
    LEFT JOIN pragma_table_info(m.name) p WHERE m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
    ORDER BY m.name, p.cid
"""


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


def scratch(now: float) -> sqlite3.Connection:
    """An empty cache in memory, for a scan whose cache file broke midway and could not be made
    anew (a full disk): it goes on as without a cache."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    create(db, now, wal=False)  # a database in memory never takes WAL mode
    return db


def create(db: sqlite3.Connection, stamp: float, wal: bool = True) -> None:
    """Make the tables of a new file (last pruned at ``stamp``), then switch it to WAL mode (with
    ``wal``). Two scans may start on a missing cache at once: the check and the creation are one
    IMMEDIATE transaction, so one creates, the other sees it."""
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
    if wal:
        _to_wal(db)


def _to_wal(db: sqlite3.Connection, patience: float = 30.0) -> None:
    """Switch to WAL mode. The switch needs the file to itself and SQLite does not wait for
    it (no busy handler), so while other scans hold it open, retry."""
    deadline = time.monotonic() + patience
    while True:
        try:
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)
            continue
        if mode != "wal":  # a file system without WAL answers with the mode it keeps: no use waiting
            raise sqlite3.OperationalError(f"cannot use WAL mode there (journal mode {mode})")
        return


@functools.cache
def _expected() -> tuple[tuple[Any, ...], ...]:
    """The layout :data:`SCHEMA` makes, read from a database in memory (so no second copy of it)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        return tuple(db.execute(_LAYOUT))
    finally:
        db.close()


def check_tables(db: sqlite3.Connection) -> None:
    """Refuse a cache whose tables are not those :data:`SCHEMA` makes.

    Raises:
        sqlite3.DatabaseError: a table is missing (named) or is not as this version makes it,
            or the file holds other objects: what the store takes for a broken file.
    """
    found, expected = tuple(db.execute(_LAYOUT)), _expected()
    if found != expected:
        missing = sorted({row[1] for row in expected} - {row[1] for row in found})
        raise sqlite3.DatabaseError(
            f"no table {', '.join(missing)}" if missing else "tables not as this version makes them"
        )


def text(data: bytes) -> str | bytes:
    """A TEXT value as a str, or as its bytes if they are not UTF-8 (the connection's
    ``text_factory``): this version writes only UTF-8, and a row holding other bytes must be
    refused as damaged, not stop the query that reads it (sqlite3's default would)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


def entry_of(lexer: Any, tokens: Any, not_utf8: Any, skip: Any, detail: Any, blob: Any, used: float) -> Entry | None:
    """The :class:`Entry` of a ``files`` row (``used``: from its ``used`` row), or ``None`` if
    it is not one this version writes (see the module's docstring)."""
    if type(lexer) is not str or type(detail) is not str or type(tokens) is not int or tokens < 0:
        return None
    if not_utf8 not in (0, 1) or skip not in (None, SkipReason.NO_LEXER.value):  # the only skip stored
        return None
    shingles = words(blob)
    if shingles is None or (skip is not None and len(shingles)):  # a file skipped has no shingles
        return None
    if len(shingles) > 1 and not bool((shingles[1:] > shingles[:-1]).all()):  # sorted, distinct
        return None
    return Entry(shingles, lexer, tokens, bool(not_utf8), skip, detail, used)


def signature_of(blob: Any, hashes: int) -> UInt64Array | None:
    """A stored signature of a family of ``hashes`` hash functions, or ``None`` if it is not one."""
    return words(blob) if blob_of(blob) is not None and len(blob) == 8 * hashes else None


def blob_of(value: Any) -> bytes | None:
    """A BLOB value (a stored result, a digest) as bytes; ``None`` for a value of another type."""
    return value if type(value) is bytes else None


def words(blob: Any) -> UInt64Array | None:
    """Stored little-endian words as a (read-only) uint64 array, copied only on big-endian;
    ``None`` unless ``blob`` is bytes of whole words."""
    if type(blob) is not bytes or len(blob) % 8:
        return None
    import numpy as np

    array = np.frombuffer(blob, dtype="<u8")
    return array if sys.byteorder == "little" else array.astype(np.uint64)
