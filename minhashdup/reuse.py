"""The cache in a scan: files whose content and settings were seen before are taken from it
(no reading when their stat is unchanged, no lexing), what was just lexed is put back.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from minhashdup import signature
from minhashdup.cache import RACY_SECONDS, Cache, content_digest, default_dir, file_key
from minhashdup.cache import Entry as CacheEntry
from minhashdup.cache import family as cache_family
from minhashdup.config import Config
from minhashdup.extracted import Extracted
from minhashdup.hashing import UInt64Array
from minhashdup.walk import FileEntry, SkipReason


@contextlib.contextmanager
def open_cache(config: Config, warnings: list[str]) -> Iterator[Cache | None]:
    if not config.cache:
        yield None
        return
    directory = Path(config.cache_dir) if config.cache_dir else default_dir()
    try:
        store = Cache(directory)
    except (OSError, sqlite3.Error) as err:
        warnings.append(f"cache {directory} cannot be used ({err}); scanning without it")
        yield None
        return
    try:
        yield store
    finally:
        warnings.extend(store.warnings)  # from opening (a rebuilt file) and from failed writes
        store.close()


def from_cache(
    store: Cache | None, files: Sequence[FileEntry], config: Config, seeds: UInt64Array
) -> tuple[list[Extracted | None], list[bytes | None]]:
    """Results for the files the cache knows; ``None`` where a file must be lexed."""
    results: list[Extracted | None] = [None] * len(files)
    keys: list[bytes | None] = [None] * len(files)
    if store is None:
        return results, keys
    digests = _digests(store, files)
    for i, (entry, digest) in enumerate(zip(files, digests, strict=True)):
        if digest is not None:
            keys[i] = file_key(os.path.basename(entry.real), digest, config.shingle, config.lexer_engine)
    known = [k for k in keys if k is not None]
    entries = store.get_many(known)
    fam = cache_family(config.seed, config.num_hashes)
    sigs = store.get_signatures([k for k in known if k in entries], fam)
    made: list[tuple[bytes, UInt64Array]] = []  # signatures under a family not seen before
    for i, key in enumerate(keys):
        if key is None or key not in entries:
            continue
        e = entries[key]
        sig = sigs.get(key)
        if sig is None and e.skip is None:
            sig = signature.signature(e.shingles, seeds)
            made.append((key, sig))
        skip = SkipReason(e.skip) if e.skip else None
        results[i] = Extracted(i, e.shingles, e.tokens, e.lexer, skip, e.detail, e.not_utf8, sig)
    if made:
        store.put_signatures(made, fam)  # one transaction, not one per file
    return results, keys


def _digests(store: Cache, files: Sequence[FileEntry]) -> list[bytes | None]:
    """Content digest of each file: from the cache when its stat is unchanged, else read.

    ``None`` for files that cannot be read or are binary: the workers report those.
    """
    seen = store.get_stats([f.real for f in files])
    out: list[bytes | None] = []
    fresh = []
    settled = time.time() - RACY_SECONDS
    for entry in files:
        known = seen.get(entry.real)
        if known is not None and known[:3] == (entry.size, entry.mtime_ns, entry.inode) and entry.mtime_ns:
            out.append(known[3])
            continue
        try:
            with open(entry.real, "rb") as handle:
                data = handle.read()
        except OSError:
            out.append(None)
            continue
        if b"\0" in data:
            out.append(None)
            continue
        digest = content_digest(data)
        out.append(digest)
        if entry.mtime_ns and entry.mtime_ns / 1e9 < settled and len(data) == entry.size:
            fresh.append((entry.real, entry.size, entry.mtime_ns, entry.inode, digest))
    if fresh:
        store.put_stats(fresh)
    return out


def to_cache(
    store: Cache, keys: Sequence[bytes | None], results: Sequence[Extracted | None], fresh: list[int], config: Config
) -> None:
    """Store what was just lexed: shingle sets, no-lexer verdicts, signatures."""
    entries, sigs = [], []
    for i in fresh:
        key, item = keys[i], results[i]
        if key is None or item is None or item.skip not in (None, SkipReason.NO_LEXER):
            continue  # unreadable, binary, lexer crashes: not facts about the content to keep
        skip = item.skip.value if item.skip else None
        entries.append((key, CacheEntry(item.shingles, item.lexer, item.tokens, item.not_utf8, skip, item.detail)))
        if item.signature is not None:
            sigs.append((key, item.signature))
    store.put_many(entries)
    store.put_signatures(sigs, cache_family(config.seed, config.num_hashes))
