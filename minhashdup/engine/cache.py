"""Content-addressed store of per-file shingles and signatures, in SQLite (WAL mode).

A file's key is a hash of everything that decides its shingles: its bytes, its name (which, or a
shebang, chooses the lexer), the shingle size, the pygments version and this cache's format: an
unchanged file is never lexed twice, and any change that could alter its shingles misses.
Signatures are stored per key and hash family (seed, K). WAL mode lets two scans share the cache
and survives a scan killed at any moment. Nothing this version did not write is used
(:mod:`.schema`): a corrupt or foreign cache file, or one whose tables are not ours, is moved
aside and rebuilt, with a warning, never fatal; a damaged row is read as missing, deleted, and
replaced by what the scan computes again, with one warning counting them. Entries record when
they were last used (at most daily); the cache is pruned daily after a scan, or on demand
(:mod:`minhashdup.engine.prune`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pygments

from minhashdup._version import __version__  # a release may change tokens without a format bump
from minhashdup.core.digest import DIGEST_BYTES, blake2b
from minhashdup.engine import schema
from minhashdup.engine.prune import DAY, MAX_AGE_DAYS, MAX_BYTES, Pruned, disk_bytes, due, when
from minhashdup.engine.prune import run as run_prune
from minhashdup.engine.schema import Entry

if TYPE_CHECKING:  # numpy only where arrays are read: a replayed scan reads none
    from minhashdup.core.hashing import UInt64Array
    from minhashdup.core.signature import Family

#: Bump when token or shingle hashing changes, or when entries written before may be wrong: the
#: cache file is named after it, so entries of another format (stat rows included) are never
#: read. 3: 2 could pair a file's shingles and stat with bytes of another moment of the scan.
#: 4: entries record when they were last used (pruning). 5: lexers by name, shebang or modeline
#: only (4 could hold pygments' guesses), and a lexed file's generated header in ``detail``.
#: 6: a file's stat holds its ctime (5 took a file rewritten with its mtime set back as unchanged).
#: 7: a file with a UTF-16 or UTF-32 byte-order mark is decoded, not skipped as binary.
CACHE_FORMAT = 7
FILE_NAME = f"cache-v{CACHE_FORMAT}.sqlite3"
_BATCH = 500  # keys per SELECT
#: Rows of ``results`` kept (:mod:`.schema`): a few trees and options.
KEEP_RESULTS = 48
_PRUNE_RESULTS = (
    f"DELETE FROM results WHERE key NOT IN (SELECT key FROM results ORDER BY used DESC LIMIT {KEEP_RESULTS})"
)
T = TypeVar("T")


def now() -> float:
    """The time entries are stamped with (a function, so that tests can move the clock)."""
    return time.time()


def default_dir() -> str:
    """``$XDG_CACHE_HOME/minhashdup``, or ``~/.cache/minhashdup``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "minhashdup")


def file_key(name: str, digest: bytes, shingle: int, engine: str = "fast", norm: str = "") -> bytes:
    """16-byte key of a file's content digest and all that shapes its shingles (``norm``: if set)."""
    h = blake2b(digest_size=16)
    head = f"{CACHE_FORMAT}\0{__version__}\0{pygments.__version__}\0{engine}\0{shingle}\0{name}\0"
    head += f"normalised:{norm}\0" if norm else ""
    h.update(head.encode("utf-8", "surrogatepass"))
    h.update(digest)
    return h.digest()


def family_name(family: Family) -> str:
    """Name of a MinHash hash family in the signatures table."""
    return f"splitmix64:{family.seed}:{family.num_hashes}"


class Cache:
    """One connection to the cache file; use as a context manager.

    Example:
        >>> with Cache(tmp) as cache:
        ...     cache.get_many([b"no such key"])
        {}
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.path = os.path.join(directory, FILE_NAME)  # a str: pathlib costs a warm scan its import
        self.warnings: list[str] = []
        self.damaged = 0  # rows read as missing (:mod:`.schema`): counted in :meth:`report`
        self.rebuilds = 0
        self._told: list[str] = []  # what :meth:`report` put in a scan's warnings
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.OperationalError:
            raise  # locked, read-only, out of space: not a broken file, so not rebuilt
        except sqlite3.DatabaseError as err:
            self._db = self._rebuild(str(err))

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        db.text_factory = schema.text
        try:
            if not schema.ours(db):
                schema.create(db, now())
            schema.check_tables(db)
            db.execute(f"PRAGMA journal_size_limit={schema.WAL_LIMIT}")
            db.execute("PRAGMA mmap_size=1073741824")  # read blobs from the page cache directly
            db.execute("PRAGMA synchronous=NORMAL")
            return db
        except sqlite3.DatabaseError:
            db.close()
            raise

    def _rebuild(self, reason: str) -> sqlite3.Connection:
        self.rebuilds += 1
        aside = f"{self.path}.broken-{time.time_ns()}"  # two in one second must not meet
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
        self.warnings.append(
            f"cache {self.path} was unusable ({reason}); moved to {os.path.basename(aside)} and rebuilt"
        )
        return self._open()

    def _reopened(self, err: sqlite3.Error) -> bool:
        """After ``err``: whether it showed the file broken, as a bad header does (a torn page:
        SQLite raises plain DatabaseError for these, a subclass for a lock, a full disk or a
        misuse), and it was moved aside and rebuilt. Once per connection: a new file that breaks
        at once is a disk's fault, not to be papered over."""
        if type(err) is not sqlite3.DatabaseError or self.rebuilds:
            return False
        self._db.close()
        try:
            self._db = self._rebuild(str(err))
        except sqlite3.Error as failed:  # no room for a new file, say: the scan goes on without one
            self.warnings.append(f"cache {self.path} cannot be rebuilt ({failed}); scanning without it")
            self._db = schema.scratch(now())
        return True

    def _reading(self, read: Callable[[sqlite3.Connection], T]) -> T:
        """``read(connection)``; on a file found broken midway (:meth:`_reopened`), again on the new one."""
        try:
            return read(self._db)
        except sqlite3.DatabaseError as err:
            if not self._reopened(err):
                raise
            return read(self._db)

    def report(self, warnings: list[str]) -> None:
        """Put this connection's warnings (:attr:`warnings`, and one line counting the damaged rows
        read as missing) in ``warnings``, in place of those an earlier call put there: a scan that
        extracts part by part (a dataset) tells each once, with the count at its end."""
        for line in self._told:
            if line in warnings:
                warnings.remove(line)
        n = self.damaged
        damaged = f"cache {self.path}: {n} damaged {'entry' if n == 1 else 'entries'} ignored and replaced"
        self._told = [*self.warnings, *([f"{damaged} (lexed or computed again)"] if n else [])]
        warnings.extend(self._told)

    def _discard(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """Count damaged rows and delete them (``sql``: a DELETE of one, by its key), so that the
        next scan does not meet them even where this one stores nothing in their place."""
        self.damaged += len(rows)
        self._write([(sql, rows)])

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (what was written is already committed)."""
        self._db.close()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, Entry]:
        """The entries present for ``keys`` (with when each was last used); a damaged one
        (:func:`.schema.entry_of`) is left out, as if missing, and deleted."""
        sql = (
            f"SELECT f.key, lexer, tokens, not_utf8, skip, detail, shingles, {when('u.used')}"
            " FROM files f LEFT JOIN used u ON u.key = f.key WHERE f.key IN ({})"
        )
        entries, damaged = {}, []
        for key, *row in self._select(sql, keys):
            entry = schema.entry_of(*row)
            if entry is None:
                damaged.append((key,))
            else:
                entries[key] = entry
        if damaged:
            self._discard("DELETE FROM files WHERE key = ?", damaged)
        return entries

    def known(self, keys: Sequence[bytes]) -> set[bytes]:
        """Which of ``keys`` have an entry (nothing else is read)."""
        return {key for (key,) in self._select("SELECT key FROM files WHERE key IN ({})", keys)}

    def put_many(self, items: Iterable[tuple[bytes, Entry]]) -> None:
        """Store entries, used now (one transaction)."""
        stamp = now()
        rows, used = [], []
        for key, e in items:
            rows.append((key, e.lexer, e.tokens, int(e.not_utf8), e.skip, e.detail, e.shingles.astype("<u8").tobytes()))
            used.append((key, stamp))
        self._write(
            [
                ("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)", rows),
                ("INSERT OR REPLACE INTO used VALUES (?, ?)", used),
            ]
        )

    @staticmethod
    def stale(used: float) -> bool:
        """Whether an entry last marked used at ``used`` is to be marked again when used: a
        :data:`DAY` ago or more (or in the future: the clock went back)."""
        return abs(now() - used) >= DAY

    def touch(self, keys: Sequence[bytes], result: bytes | None = None) -> None:
        """Mark the entries of ``keys`` (and the stored result ``result``) used now, in one
        transaction. Callers pass only what they saw is :meth:`stale`: a warm scan writes
        nothing, except once a day."""
        stamp = now()
        statements: list[tuple[str, list[Any] | None]] = []
        if keys:
            statements.append(("UPDATE used SET used = ? WHERE key = ?", [(stamp, key) for key in keys]))
        if result is not None:
            statements.append(("UPDATE results SET used = ? WHERE key = ?", [(stamp, result)]))
        if statements:
            self._write(statements)

    def get_signatures(self, keys: Sequence[bytes], family: Family) -> dict[bytes, UInt64Array]:
        """Stored signatures of ``keys`` under ``family``; a damaged one (not of its family's
        length) is left out, as if missing, and deleted."""
        sql = "SELECT key, signature FROM signatures WHERE family = ? AND key IN ({})"
        fam, found, damaged = family_name(family), {}, []
        for key, blob in self._select(sql, keys, fam):
            signature = schema.signature_of(blob, family.num_hashes)
            if signature is None:
                damaged.append((key, fam))
            else:
                found[key] = signature
        if damaged:
            self._discard("DELETE FROM signatures WHERE key = ? AND family = ?", damaged)
        return found

    def put_signatures(self, items: Iterable[tuple[bytes, UInt64Array]], family: Family) -> None:
        """Store signatures under ``family`` (one transaction)."""
        fam = family_name(family)
        rows = [(key, fam, sig.astype("<u8").tobytes()) for key, sig in items]
        self._write([("INSERT OR REPLACE INTO signatures VALUES (?, ?, ?)", rows)])

    def get_stats(self, paths: Sequence[str]) -> dict[str, tuple[int, int, int, int, bytes, float]]:
        """``path -> (size, mtime_ns, ctime_ns, inode, content digest, used)`` as last seen (a row
        without a 16-byte digest is left out: the file is read and its row replaced)."""
        sql = f"SELECT path, size, mtime_ns, ctime_ns, inode, digest, {when('used')} FROM stats WHERE path IN ({{}})"
        # Paths as bytes (os.fsencode): a name that is not UTF-8 is still a valid key.
        rows = self._select(sql, [os.fsencode(p) for p in paths])
        return {os.fsdecode(row[0]): row[1:] for row in rows if len(schema.blob_of(row[5]) or b"") == DIGEST_BYTES}

    def put_stats(self, rows: Iterable[tuple[str, int, int, int, int, bytes]]) -> None:
        """Remember ``(path, size, mtime_ns, ctime_ns, inode, digest)`` rows, used now (one transaction)."""
        stamp = now()
        encoded = [(os.fsencode(r[0]), *r[1:], stamp) for r in rows]
        self._write([("INSERT OR REPLACE INTO stats VALUES (?, ?, ?, ?, ?, ?, ?)", encoded)])

    def get_result(self, key: bytes) -> tuple[bytes, float] | None:
        """A stored scan result (:mod:`minhashdup.engine.codec`) and when it was last used, or
        ``None``; a damaged one (not a blob) is deleted (:meth:`discard_result`)."""
        rows = self._query(f"SELECT doc, {when('used')} FROM results WHERE key = ?", (key,))
        if not rows:
            return None
        doc = schema.blob_of(rows[0][0])
        if doc is None:
            self.discard_result(key)
            return None
        return doc, rows[0][1]

    def discard_result(self, key: bytes) -> None:
        """Count the stored result of ``key`` as damaged and delete it (a scan that meets one
        computes afresh and, warned, keeps nothing: the next scan stores it anew)."""
        self._discard("DELETE FROM results WHERE key = ?", [(key,)])

    def put_result(self, key: bytes, doc: bytes) -> None:
        """Store a scan result; only the :data:`KEEP_RESULTS` most recent are kept."""
        self._write(
            [
                ("INSERT OR REPLACE INTO results VALUES (?, ?, ?)", [(key, doc, now())]),
                (_PRUNE_RESULTS, None),
            ]
        )

    def _select(self, sql: str, keys: Sequence[Any], *leading: Any) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` (whose ``IN ({})`` takes the keys), in batches of :data:`_BATCH` keys."""
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(keys), _BATCH):
            chunk = list(keys[start : start + _BATCH])
            rows += self._query(sql.format(",".join("?" * len(chunk))), [*leading, *chunk])
        return rows

    def _query(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._reading(lambda db: db.execute(sql, parameters).fetchall())

    def info(self) -> dict[str, object]:
        """Where the cache is, how many entries it holds and how big it is."""
        counts = self._reading(
            lambda db: [
                db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("files", "signatures", "results WHERE length(key) = 20")
            ]
        )
        return {
            "path": str(self.path),
            "files": counts[0],
            "signatures": counts[1],
            "results": counts[2],
            "bytes": disk_bytes(self.path),
            "format": CACHE_FORMAT,
            "pygments": pygments.__version__,
        }

    def clear(self) -> bool:
        """Drop every entry and give the space back; ``False`` if the file could not be written.
        A file found broken on the way is moved aside and rebuilt (:meth:`_reopened`): empty too."""
        rebuilds = self.rebuilds
        tables = ("files", "used", "signatures", "stats", "results")
        done = self._write([(f"DELETE FROM {table}", None) for table in tables])
        try:
            self._db.execute("VACUUM")  # reads what is left too: a torn page of ``meta`` shows here
        except sqlite3.Error as err:
            self._reopened(err)  # broken: rebuilt; busy (another scan reads): its pages stay in the file
        return done or self.rebuilds > rebuilds

    def prune(
        self,
        older_than_days: float = MAX_AGE_DAYS,
        max_bytes: int = MAX_BYTES,
        spare_days: float = 0.0,
        wait: bool = True,
    ) -> Pruned | None:
        """:func:`minhashdup.engine.prune.run` on this cache: what was dropped, or ``None`` if nothing
        was done (the reason of a failed write is in :attr:`warnings`). Raises ConfigError for
        a negative limit."""
        stamp = now()
        try:
            return self._reading(
                lambda db: run_prune(db, self.path, CACHE_FORMAT, stamp, older_than_days, max_bytes, spare_days, wait)
            )
        except sqlite3.Error as err:
            self._write_failed(err)
            return None

    def maybe_prune(self) -> Pruned | None:
        """Prune with the default limits if the last prune was a day ago or more, sparing what
        was used within the last day; never waits for another scan."""
        stamp = now()
        if not self._reading(lambda db: due(db, stamp)):
            return None
        return self.prune(MAX_AGE_DAYS, MAX_BYTES, spare_days=1.0, wait=False)

    def _write(self, statements: list[tuple[str, list[Any] | None]]) -> bool:
        """Run statements (``executemany`` with rows, else ``execute``) in one transaction;
        ``False`` if it failed.

        A write that fails (read-only file system, disk full, a lock held past the timeout)
        becomes a warning: the scan's results do not depend on the cache being updated. One that
        finds the file broken has it moved aside and rebuilt (:meth:`_reopened`), without what it
        was to add. Statements without rows are left out, and with none left no transaction is begun.
        """
        statements = [(sql, rows) for sql, rows in statements if rows is None or rows]
        if not statements:
            return True
        try:
            self._db.execute("BEGIN IMMEDIATE")
            for sql, rows in statements:
                if rows is None:
                    self._db.execute(sql)
                else:
                    self._db.executemany(sql, rows)
            self._db.execute("COMMIT")
            return True
        except BaseException as err:
            if self._db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            if not isinstance(err, sqlite3.Error):
                raise
            if not self._reopened(err):
                self._write_failed(err)
            return False

    def _write_failed(self, err: sqlite3.Error) -> None:
        message = f"cache {self.path} was not updated ({err})"
        if message not in self.warnings:
            self.warnings.append(message)
