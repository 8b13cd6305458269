"""The cache around a scan (the store itself: :mod:`minhashdup.engine.cache`).

It wraps two things and is threaded through neither:

- extraction (:meth:`CachedFiles.around`): files -> :class:`Extracted`; the files whose content
  and settings were seen before come from the store (not read when their stat is unchanged, never
  lexed), the others go to the wrapped extractor, and what it lexed is stored after, under the
  digest of the bytes it lexed. A file is read once per scan: the bytes read to digest a file the
  store does not know go to the extractor with it (:class:`.extracted.ReadEntry`), up to
  :data:`HELD_BYTES` in all;
- the whole scan (:meth:`CachedFiles.replay`, :meth:`CachedFiles.keep`): when every input of a
  scan is as in an earlier one (or every file's stat, :func:`.codec.stats_key`), that scan's result is the
  answer; a settled scan's result is kept for the next, as is its walk's memo (:mod:`.pipeline`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from minhashdup.config import Config
from minhashdup.core.digest import content_digest
from minhashdup.engine.base import Extractor
from minhashdup.engine.cache import Cache, default_dir, file_key
from minhashdup.engine.codec import decoded, encode_result, result_key, stats_key, storable
from minhashdup.engine.schema import Entry as CacheEntry
from minhashdup.result import Result, Skip, SkipReason
from minhashdup.source.found import FileEntry
from minhashdup.source.safeio import MIB, read_regular_with_stat
from minhashdup.source.witnesses import racy_limit, settled_times  # the walk memo's rule

if TYPE_CHECKING:  # the per-file results: imported where made, not by a scan that replays
    from minhashdup.core.signature import Family
    from minhashdup.source.extracted import Extracted

#: Files named one by one in the warnings about files that changed during a scan.
CHANGED_SHOWN = 10
#: The most bytes, read to digest files, that a scan holds to hand them to the extractor (so
#: that it does not read them again). Past it, a file's bytes are dropped once digested and the
#: extractor reads it again (and a file changed in between is then warned of, as
#: :func:`changed_warnings` says): the memory of a scan stays bounded on a huge tree.
HELD_BYTES = 256 * MIB


@contextlib.contextmanager
def session(config: Config, warnings: list[str]) -> Iterator[CachedFiles | None]:
    """The cache of ``config`` for one scan, or ``None`` without one (``config.uses_cache`` false, or
    a folder that cannot be used: then a warning in ``warnings`` says so)."""
    if not config.uses_cache:
        yield None
        return
    directory = config.cache_dir or default_dir()
    try:
        store = Cache(directory)
    except (OSError, sqlite3.Error) as err:
        warnings.append(f"cache {directory} cannot be used ({err}); scanning without it")
        yield None
        return
    with store:
        yield CachedFiles(store, config)


class CachedFiles:
    """One scan's use of an open cache: see the module's docstring."""

    def __init__(self, store: Cache, config: Config) -> None:
        self.store, self.config = store, config
        self._files: Sequence[FileEntry] | None = None
        self._keys: list[bytes | None] = []
        self._held: dict[int, bytes] = {}  # index in _files -> the bytes its digest was taken of
        self._paired = False  # every file of _files has its stat paired with its key's digest
        self._result_key: bytes | None = None
        self._stats_key: bytes | None = None
        self._settled = False  # extraction added no warning: the scan's result may be kept

    @functools.cached_property
    def family(self) -> Family:
        """The scan's hash family (numpy: made only when signatures are)."""
        from minhashdup.core.signature import Family

        return Family(self.config.seed, self.config.num_hashes)

    def keys(self, files: Sequence[FileEntry]) -> list[bytes | None]:
        """Each file's cache key (:func:`file_keys`), computed once for a list of files."""
        if files is not self._files:
            self._files, (self._keys, self._held, self._paired) = files, file_keys(self.store, files, self.config)
        return self._keys

    def around(self, inner: Extractor) -> Extractor:
        """``inner`` with the cache in front: hits from the store, misses lexed by ``inner`` and
        stored after. The cache is pruned once a day at the end (:meth:`Cache.maybe_prune`)."""

        def extract(files: Sequence[FileEntry], warnings: list[str]) -> list[Extracted]:
            before = len(warnings)
            keys = self.keys(files)
            found = self._hits(keys)
            misses = [i for i, item in enumerate(found) if item is None]
            for i, item in zip(misses, inner(self._handed(files, misses), warnings), strict=True):
                found[i] = dataclasses.replace(item, index=i)
            changed = self._put(files, keys, found, misses)
            warnings.extend(changed_warnings([files[i].path for i in changed]))
            self.store.maybe_prune()  # at most once a day: the cache stays bounded
            self.store.report(warnings)  # a rebuilt file, failed writes, damaged rows: once each
            # A run that warned is not kept: a rebuilt cache, workers that could not start, a file
            # that changed during the scan (its result mixes the content of two moments).
            self._settled = len(warnings) == before
            done = [_stored(item) for item in found if item is not None]
            assert len(done) == len(files)  # every miss came back from ``inner``
            return done

        return extract

    def replay(self, files: Sequence[FileEntry], skips: Sequence[Skip], missed: Callable[[], None]) -> Result | None:
        """The stored result of a scan of these very inputs, or ``None`` (then :meth:`keep` stores
        this one's); ``missed`` is called when the files' stats do not find it, before the file
        keys. A replay uses every file entry of the scan: those last marked used a day ago or
        more are marked used now, with the result, so that a tree replayed daily is never pruned."""
        self._stats_key = stats_key(self.config, files, skips)
        if (quick := self._by_stats(self._stats_key)) is not None:
            return quick
        missed()
        keys = self.keys(files)
        self._result_key = result_key(self.config, files, keys, skips)
        stored = self.store.get_result(self._result_key)
        if stored is None or (result := self._decoded(self._result_key, stored[0])) is None:
            return None
        self._held = {}  # nothing will be lexed
        if self.store.stale(stored[1]):
            self.store.touch([k for k in keys if k is not None], result=self._result_key)
        self._point()
        self.store.maybe_prune()
        return result

    def _by_stats(self, key: bytes) -> Result | None:
        """The stored result a :func:`.codec.stats_key` leads to, unless due to be marked used (:meth:`replay`)."""
        pointer = self.store.get_result(key)
        stored = None if pointer is None else self.store.get_result(pointer[0])
        if pointer is None or stored is None or self.store.stale(pointer[1]) or self.store.stale(stored[1]):
            return None
        self._held, self._result_key = {}, pointer[0]  # if damaged, :meth:`replay` sets both anew
        return self._decoded(pointer[0], stored[0])

    def _decoded(self, key: bytes, doc: bytes) -> Result | None:
        """The result stored under ``key``, or ``None`` if it is damaged (then deleted)."""
        if (result := decoded(doc, self.config.params())) is None:
            self.store.discard_result(key)
        return result

    def _point(self) -> None:
        """Keep the result's key under the files' :func:`.codec.stats_key` if :func:`file_keys` paired every stat."""
        if self._paired and self._stats_key is not None and self._result_key is not None:
            self.store.put_result(self._stats_key, self._result_key)

    def get_memo(self, key: bytes) -> bytes | None:
        """A walk's memo (:func:`.pipeline.remembered_walk`), kept and marked used as results are."""
        stored = self.store.get_result(key)
        if stored is not None and self.store.stale(stored[1]):
            self.store.touch([], result=key)
        return None if stored is None else stored[0]

    def put_memo(self, key: bytes, doc: bytes) -> None:
        self.store.put_result(key, doc)

    def keep(self, result: Result) -> Result:
        """Store ``result`` for a later :meth:`replay` when it may be (see :func:`.codec.storable`)."""
        if self._result_key is not None and self._settled and storable(result):
            self.store.put_result(self._result_key, encode_result(result))
            self._point()
        return result

    def _handed(self, files: Sequence[FileEntry], misses: list[int]) -> list[FileEntry]:
        """The files to lex, each with the bytes its digest was taken of when they are held (a
        :class:`ReadEntry`: not read again); this object holds them no longer."""
        from minhashdup.source.extracted import ReadEntry

        held, self._held = self._held, {}
        return [ReadEntry.of(files[i], held[i]) if i in held else files[i] for i in misses]

    def _hits(self, keys: Sequence[bytes | None]) -> list[Extracted | None]:
        """Results for the files the cache knows; ``None`` where a file must be lexed. An entry
        stored without this scan's hash family gets its signature now, and stored."""
        known = [k for k in keys if k is not None]
        entries = self.store.get_many(known)
        sigs = self.store.get_signatures([k for k in known if k in entries], self.family)
        self.store.touch([k for k, e in entries.items() if self.store.stale(e.used)])  # a hit is a use
        unsigned = [k for k in dict.fromkeys(known) if k in entries and k not in sigs and entries[k].skip is None]
        if unsigned:
            made = list(zip(unsigned, self.family.sign([entries[k].shingles for k in unsigned]), strict=True))
            sigs.update(made)
            self.store.put_signatures(made, self.family)  # one transaction, not one per file
        from minhashdup.source.extracted import Extracted

        results: list[Extracted | None] = [None] * len(keys)
        for i, key in enumerate(keys):
            if key is not None and key in entries:
                e = entries[key]
                skip = SkipReason(e.skip) if e.skip else None
                detail, generated = (e.detail, "") if skip else ("", e.detail)  # a lexed file's detail: its header
                results[i] = Extracted(
                    i, e.shingles, e.tokens, e.lexer, skip, detail, e.not_utf8, sigs.get(key), generated=generated
                )
        return results

    def _put(
        self,
        files: Sequence[FileEntry],
        keys: Sequence[bytes | None],
        found: Sequence[Extracted | None],
        fresh: list[int],
    ) -> list[int]:
        """Store what was just lexed: shingle sets, no-lexer verdicts, signatures.

        Each under the key of the bytes the lexer read (``Extracted.digest``), not ``keys``
        (from a digest taken before): a file rewritten in between must not leave its new
        shingles under its old bytes' key.

        Returns:
            The indices (among ``fresh``) of files whose content changed between the two reads.
            The scan's result then mixes moments, so it must not be stored for replay.
        """
        entries, sigs, changed = [], [], []
        for i in fresh:
            item = found[i]
            if item is None:
                continue
            key = _key(files[i], item.digest, self.config)
            if key != keys[i] and item.digest is not None:  # no digest: nothing read to compare
                changed.append(i)
            fact = item.skip is None or (item.skip is SkipReason.NO_LEXER and not item.generated)
            if key is None or not fact:
                # unreadable, binary, lexer crashes: not facts about the content to keep; generated
                # or not-code skips: decisions of this scan's options (a later scan may want the file)
                continue
            skip = item.skip.value if item.skip else None
            detail = item.detail if item.skip else item.generated  # a lexed file's detail: its generated header
            entries.append((key, CacheEntry(item.shingles, item.lexer, item.tokens, item.not_utf8, skip, detail)))
            if item.verbatim is not None:  # the same lex, as a default scan stores it (for jaccard_verbatim)
                shingles, tokens = item.verbatim
                plain = _key(files[i], item.digest, self.config, normalised=False)
                assert plain is not None  # the digest that gave ``key``
                entries.append((plain, CacheEntry(shingles, item.lexer, tokens, item.not_utf8, None, detail)))
            if item.signature is not None:
                sigs.append((key, item.signature))
        self.store.put_many(entries)
        self.store.put_signatures(sigs, self.family)
        return changed


def file_keys(
    store: Cache, files: Sequence[FileEntry], config: Config
) -> tuple[list[bytes | None], dict[int, bytes], bool]:
    """Each file's cache key (its content digest and what shapes its shingles; ``None`` for a file
    that cannot be read: not regular, grown past ``max_size``, an OS error, which the workers
    report), the bytes read of the files the store does not know, by index, in walk order while
    they fit in :data:`HELD_BYTES`, and whether every file's stat is now paired with its key's
    digest (by the stat cache's rule, below; for :meth:`CachedFiles._point`).

    An entry that carries its bytes (a :class:`ReadEntry` from a dataset) is keyed by them, not
    held here. A file whose stat the cache knows unchanged is not read: its digest comes from the
    cache. The others are read and digested here; the store is asked which of them it knows
    :data:`_CHECKED` files at a time, or sooner when the bytes waiting fill the budget, so a
    fresh clone of a cached tree (all hits) holds no more than that, and hits never take the
    room of a file to lex. A digest read here is paired with the walk's stat only when the open
    file's stat after the read is that stat, and old enough (:func:`.witnesses.racy_limit`)."""
    from minhashdup.source.extracted import ReadEntry  # imported where used: a replay reads no file

    seen = store.get_stats([f.real for f in files if not isinstance(f, ReadEntry)])
    keys: list[bytes | None] = []
    fresh = []
    held: dict[int, bytes] = {}
    pending: dict[int, bytes] = {}  # read, not yet looked up in the store
    room = HELD_BYTES
    limit = racy_limit()
    paired = 0  # files whose stat the stat cache knows, or now learns, with their key's digest
    for i, entry in enumerate(files):
        if isinstance(entry, ReadEntry):  # bytes given (a dataset's row): no file to stat or read
            fits = len(entry.data) <= config.max_size
            keys.append(_key(entry, content_digest(entry.data), config) if fits else None)
            continue
        walked = (entry.size, entry.mtime_ns, entry.ctime_ns, entry.inode)
        known = seen.get(entry.real)
        if known is not None and known[:4] == walked and entry.ctime_ns:
            keys.append(_key(entry, known[4], config))
            paired += 1
            if store.stale(known[5]):  # used again: stored anew, marked used now
                fresh.append((entry.real, *walked, known[4]))
            continue
        try:
            data, after = read_regular_with_stat(entry.real, config.max_size, follow=False)
        except OSError:
            keys.append(None)
            continue
        digest = content_digest(data)
        keys.append(_key(entry, digest, config))
        if len(data) > room and pending:  # the budget is full of bytes not looked up yet: some may be hits
            room += _keep_misses(store, keys, pending, held)
        if len(data) <= room:
            pending[i], room = data, room - len(data)
            if len(pending) >= _CHECKED:
                room += _keep_misses(store, keys, pending, held)
        unchanged = (after.st_size, after.st_mtime_ns, after.st_ctime_ns, after.st_ino) == walked
        if unchanged and len(data) == entry.size and entry.ctime_ns and settled_times(*walked[1:3], limit):
            fresh.append((entry.real, *walked, digest))
            paired += 1
    _keep_misses(store, keys, pending, held)
    if fresh:
        store.put_stats(fresh)
    return keys, held, paired == len(files)


def _stored(item: Extracted) -> Extracted:
    """``item`` without its verbatim shingles, kept in the cache now: the scan holds one set a file."""
    return dataclasses.replace(item, verbatim=None) if item.verbatim is not None else item


def _key(entry: FileEntry, digest: bytes | None, config: Config, normalised: bool = True) -> bytes | None:
    if digest is None:
        return None
    norm = config.normalisation.key if normalised else ""
    return file_key(os.path.basename(entry.real), digest, config.shingle, config.lexer_engine, norm)


#: Files read for their digest between two lookups of which the store already knows.
_CHECKED = 256


def _keep_misses(store: Cache, keys: Sequence[bytes | None], pending: dict[int, bytes], held: dict[int, bytes]) -> int:
    """Move into ``held`` the ``pending`` bytes of files the store does not know (they will be
    lexed), drop the others; returns the bytes dropped."""
    known = store.known([k for k in (keys[i] for i in pending) if k is not None])
    dropped = 0
    for i, data in pending.items():
        if keys[i] in known:
            dropped += len(data)
        else:
            held[i] = data
    pending.clear()
    return dropped


def changed_warnings(paths: Sequence[str]) -> list[str]:
    """Warnings for files that changed during the scan (the first :data:`CHANGED_SHOWN` by name)."""
    warnings = [
        f"{path}: changed during the scan; its pairs are from the content read when it was lexed,"
        " and this result is not cached (scan again once the tree is settled)"
        for path in paths[:CHANGED_SHOWN]
    ]
    if len(paths) > CHANGED_SHOWN:
        warnings.append(f"{len(paths) - CHANGED_SHOWN} more files changed during the scan")
    return warnings
