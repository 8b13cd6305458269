"""Keeping the cache bounded: what :meth:`minhashdup.engine.cache.Cache.prune` drops, and when.

Every entry (a file's shingles with its signatures, a stat row, a whole result) records when
it was last used. Pruning drops the entries unused for a number of days, then, while the
cache file is bigger than a size, the least recently used ones. A scan prunes with the
defaults at most once a day (:data:`DAY`), sparing what was used within the last day, so a
tree bigger than the cap is not lexed again every day; ``minhashdup cache prune`` prunes on
demand with any limits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import re
import sqlite3
from typing import Any

from minhashdup.errors import ConfigError

#: Seconds in a day: ``used`` times are refreshed, and the cache pruned, at most this often.
DAY = 86400.0
#: Entries not used for this many days are dropped. A branch untouched for a month is gone or
#: stale, and anything a scan still reads is marked used at least once a day.
MAX_AGE_DAYS = 30.0
#: Then the least recently used entries are dropped until the cache file is at most this size:
#: the Go tree's 5,013 files take 69 MiB, so this keeps about 15 trees of that size, and it
#: fits a CI cache (GitHub keeps 10 GB per repository).
MAX_BYTES = 1024**3
_BATCH = 500  # keys per DELETE


def when(column: str) -> str:
    """SQL reading a stored time (``used``, the last prune) as a number: a damaged one (a NULL,
    a text) is 0, long ago, not a value Python cannot compare or subtract.

    Example:
        >>> when("used")
        'CAST(coalesce(used, 0) AS REAL)'
    """
    return f"CAST(coalesce({column}, 0) AS REAL)"


# Each entry's payload in bytes, least recently used first; files count their signatures.
_BY_USE = f"""
SELECT 0, u.key, {when("u.used")}, length(f.shingles) + length(f.key) + 64
    + (SELECT coalesce(sum(length(s.signature) + length(s.family) + 32), 0) FROM signatures s WHERE s.key = u.key)
    FROM used u JOIN files f ON f.key = u.key
UNION ALL SELECT 1, path, {when("used")}, length(path) + 64 FROM stats
UNION ALL SELECT 2 + (length(key) != 20), key, {when("used")}, length(doc) + 32 FROM results
ORDER BY 3, 1, 2
"""


@dataclasses.dataclass(frozen=True)
class Pruned:
    """What a prune dropped, and the cache file's size on disk before and after."""

    files: int  # per-file entries (each with its signatures)
    stats: int  # remembered stats
    results: int  # whole scan results
    old_files: tuple[str, ...]  # cache files of older formats, and broken ones, deleted
    bytes_before: int
    bytes_after: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict: the counts, ``old_files`` as a list, and the sizes."""
        doc = dataclasses.asdict(self)
        doc["old_files"] = list(self.old_files)
        return doc


def check_limits(older_than_days: float, max_bytes: int) -> None:
    """Refuse limits that mean nothing.

    Raises:
        ConfigError: ``older_than_days`` is negative or not a finite number, or ``max_bytes``
            is negative; the message names the parameter.
    """
    days = "older_than_days"
    if isinstance(older_than_days, bool) or not isinstance(older_than_days, (int, float)):
        raise ConfigError("{0} must be a number of days (got {value!r})", days, value=older_than_days)
    if not (math.isfinite(older_than_days) and older_than_days >= 0):
        raise ConfigError("{0} must be a number of days, 0 or more (got {value:g})", days, value=older_than_days)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise ConfigError("{0} must be a size in bytes, 0 or more (got {value!r})", "max_bytes", value=max_bytes)


def run(
    db: sqlite3.Connection,
    path: str,
    format_now: int,
    now: float,
    older_than_days: float = MAX_AGE_DAYS,
    max_bytes: int = MAX_BYTES,
    spare_days: float = 0.0,
    wait: bool = True,
) -> Pruned | None:
    """Prune the cache open in ``db`` (the file at ``path``), in one transaction.

    Drops the entries last used more than ``older_than_days`` before ``now``, then, while the
    file holds more than ``max_bytes``, the least recently used, sparing those used within
    ``spare_days``; gives the free pages back to the disk; deletes the cache files of older
    formats than ``format_now``, and broken ones, unused for ``older_than_days`` as well. A scan
    running meanwhile only misses what was dropped, and lexes it again.

    Args:
        wait: wait for another scan's write to end; if ``False``, give up at once (returning
            ``None``) when another scan writes, or pruned within a :data:`DAY`.

    Returns:
        What was dropped, or ``None`` when nothing was done.

    Raises:
        ConfigError: a limit is negative or not a number.
        sqlite3.Error: the cache could not be written.
    """
    check_limits(older_than_days, max_bytes)
    before, cutoff = disk_bytes(path), now - older_than_days * DAY
    if not _begin(db, wait):
        return None
    try:
        if not wait and not due(db, now):
            db.execute("ROLLBACK")
            return None
        counts = drop(db, cutoff, max_bytes, now - spare_days * DAY)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('pruned', ?)", (now,))
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    db.executescript("PRAGMA incremental_vacuum;")  # every free page back to the disk (execute: one)
    if wait:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # at once, not at the next checkpoint
    old = old_files(os.path.dirname(path), format_now, cutoff)
    return Pruned(*counts, old, before, disk_bytes(path))


def _begin(db: sqlite3.Connection, wait: bool) -> bool:
    """``BEGIN IMMEDIATE``; without ``wait``, ``False`` at once when another scan writes."""
    if wait:
        db.execute("BEGIN IMMEDIATE")
        return True
    db.execute("PRAGMA busy_timeout=0")
    try:
        db.execute("BEGIN IMMEDIATE")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        db.execute("PRAGMA busy_timeout=30000")


def disk_bytes(path: str) -> int:
    """Bytes the cache file at ``path`` and its write-ahead log take on disk."""
    return sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal") if os.path.exists(f"{path}{s}"))


def due(db: sqlite3.Connection, now: float) -> bool:
    """Whether the automatic prune is due: the last one was a :data:`DAY` ago or more (or the
    clock went back that much)."""
    row = db.execute(f"SELECT {when('value')} FROM meta WHERE name = 'pruned'").fetchone()  # damaged: 0, due
    return row is None or abs(now - row[0]) >= DAY


def drop(db: sqlite3.Connection, cutoff: float, max_bytes: int, spare_after: float) -> tuple[int, int, int]:
    """In the caller's transaction: drop what was last used before ``cutoff``, then, while the
    file holds more than ``max_bytes``, the least recently used entries, never one used at or
    after ``spare_after``.

    Returns:
        How many file entries, stats and results were dropped.
    """
    files = _drop_files(db, [key for (key,) in db.execute("SELECT key FROM used WHERE used < ?", (cutoff,))])
    counts = [files, db.execute("DELETE FROM stats WHERE used < ?", (cutoff,)).rowcount]
    counts.append(db.execute("DELETE FROM results WHERE used < ? AND length(key) = 20", (cutoff,)).rowcount)
    db.execute("DELETE FROM results WHERE used < ?", (cutoff,))  # memos (21-byte keys), not counted
    if bytes_in_use(db) <= max_bytes:
        return counts[0], counts[1], counts[2]
    rows = db.execute(_BY_USE).fetchall()
    # Payloads scaled to the pages in use: blobs leave part of their overflow pages empty.
    scale = bytes_in_use(db) / max(1, sum(row[3] for row in rows))
    rows = [row for row in rows if row[2] < spare_after]
    start = 0
    while start < len(rows) and (excess := bytes_in_use(db) - max_bytes) > 0:
        stop, freed = start, 0.0
        while stop < len(rows) and (freed < excess or stop == start):
            freed += rows[stop][3] * scale
            stop += 1
        chosen: tuple[list[Any], ...] = ([], [], [], [])  # files, stats, results, memos (not counted)
        for kind, key, _, _ in rows[start:stop]:
            chosen[kind].append(key)
        counts[0] += _drop_files(db, chosen[0])
        counts[1] += _delete(db, "DELETE FROM stats WHERE path IN ({})", chosen[1])
        counts[2] += _delete(db, "DELETE FROM results WHERE key IN ({})", chosen[2])
        _delete(db, "DELETE FROM results WHERE key IN ({})", chosen[3])
        start = stop  # pages only partly emptied free less than estimated: go on if still over
    return counts[0], counts[1], counts[2]


def bytes_in_use(db: sqlite3.Connection) -> int:
    """Bytes of the pages that hold data (free pages, kept for reuse, not counted)."""
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
    return int(page_size * pages)


def _drop_files(db: sqlite3.Connection, keys: list[bytes]) -> int:
    _delete(db, "DELETE FROM signatures WHERE key IN ({})", keys)
    _delete(db, "DELETE FROM used WHERE key IN ({})", keys)
    return _delete(db, "DELETE FROM files WHERE key IN ({})", keys)


def _delete(db: sqlite3.Connection, sql: str, keys: list[Any]) -> int:
    count = 0
    for start in range(0, len(keys), _BATCH):
        chunk = keys[start : start + _BATCH]
        count += db.execute(sql.format(",".join("?" * len(chunk))), chunk).rowcount
    return count


_OLD = re.compile(r"(cache-v(\d+)\.sqlite3)(\.broken-\d+)?(-wal|-shm)?")


def old_files(directory: str, format_now: int, cutoff: float) -> tuple[str, ...]:
    """Delete the cache files of older formats (never read again) and those moved aside as
    broken, when none of a file's parts (``-wal``, ``-shm``) was modified since ``cutoff``.

    Returns:
        The names deleted.
    """
    groups: dict[str, list[str]] = {}
    try:
        names = os.listdir(directory)
    except OSError:
        return ()
    for name in names:
        match = _OLD.fullmatch(name)
        if match and (int(match.group(2)) < format_now or match.group(3)):
            groups.setdefault(match.group(1) + (match.group(3) or ""), []).append(name)
    deleted: list[str] = []
    for parts in groups.values():
        try:
            if max(os.stat(os.path.join(directory, p)).st_mtime for p in parts) >= cutoff:
                continue
            for part in sorted(parts):
                os.unlink(os.path.join(directory, part))
                deleted.append(part)
        except OSError:
            continue  # gone already, or not ours to delete: left alone
    return tuple(sorted(deleted))
