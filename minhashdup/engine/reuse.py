"""The cache in a scan: files whose content and settings were seen before are taken from it
(no reading when their stat is unchanged, no lexing), what was just lexed is put back.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sqlite3
import time
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from minhashdup._version import __version__
from minhashdup.config import Config
from minhashdup.core import signature
from minhashdup.core.hashing import UInt64Array
from minhashdup.engine.cache import CACHE_FORMAT, RACY_SECONDS, Cache, content_digest, default_dir, file_key
from minhashdup.engine.cache import Entry as CacheEntry
from minhashdup.engine.cache import family as cache_family
from minhashdup.result import SCHEMA_VERSION, Cluster, Group, Pair, Result, Skip, SkipReason, Stats
from minhashdup.source.extracted import Extracted
from minhashdup.source.safeio import read_regular_with_stat
from minhashdup.source.walk import FileEntry


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
        store.maybe_prune()  # at most once a day: the cache stays bounded
    finally:
        warnings.extend(store.warnings)  # from opening (a rebuilt file) and from failed writes
        store.close()


def file_keys(store: Cache | None, files: Sequence[FileEntry], config: Config) -> list[bytes | None]:
    """Each file's cache key (content digest and what shapes its shingles); ``None`` for files
    that cannot be read, and for every file without a cache."""
    if store is None:
        return [None] * len(files)
    digests = _digests(store, files, config.max_size)
    return [_key(entry, digest, config) for entry, digest in zip(files, digests, strict=True)]


def _key(entry: FileEntry, digest: bytes | None, config: Config) -> bytes | None:
    if digest is None:
        return None
    return file_key(os.path.basename(entry.real), digest, config.shingle, config.lexer_engine)


def from_cache(
    store: Cache | None, keys: Sequence[bytes | None], config: Config, seeds: UInt64Array
) -> list[Extracted | None]:
    """Results for the files the cache knows; ``None`` where a file must be lexed."""
    results: list[Extracted | None] = [None] * len(keys)
    if store is None:
        return results
    known = [k for k in keys if k is not None]
    entries = store.get_many(known)
    fam = cache_family(config.seed, config.num_hashes)
    sigs = store.get_signatures([k for k in known if k in entries], fam)
    made: list[tuple[bytes, UInt64Array]] = []  # signatures under a family not seen before
    store.touch([k for k, e in entries.items() if store.stale(e.used)])  # a hit is a use
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
    return results


def _digests(store: Cache, files: Sequence[FileEntry], max_size: int) -> list[bytes | None]:
    """Content digest of each file: from the cache when its stat is unchanged, else read.

    ``None`` for files that cannot be read (not regular, grown past ``max_size``, an OS
    error): the workers report those. A digest read here is remembered for the walk's stat
    only when the open file's stat after the read is that very stat, and old enough that any
    later write must change it (:data:`RACY_SECONDS`): the stat cache never pairs a stat with
    bytes of another moment.
    """
    seen = store.get_stats([f.real for f in files])
    out: list[bytes | None] = []
    fresh = []
    settled = time.time() - RACY_SECONDS
    for entry in files:
        walked = (entry.size, entry.mtime_ns, entry.inode)
        known = seen.get(entry.real)
        if known is not None and known[:3] == walked and entry.mtime_ns:
            out.append(known[3])
            if store.stale(known[4]):  # used again: stored anew, marked used now
                fresh.append((entry.real, *walked, known[3]))
            continue
        try:
            data, after = read_regular_with_stat(entry.real, max_size, follow=False)
        except OSError:
            out.append(None)
            continue
        digest = content_digest(data)
        out.append(digest)
        unchanged = (after.st_size, after.st_mtime_ns, after.st_ino) == walked and len(data) == entry.size
        if unchanged and entry.mtime_ns and entry.mtime_ns / 1e9 < settled:
            fresh.append((entry.real, entry.size, entry.mtime_ns, entry.inode, digest))
    if fresh:
        store.put_stats(fresh)
    return out


def replay(store: Cache, key: bytes, keys: Sequence[bytes | None]) -> bytes | None:
    """The stored result of the scan whose result key is ``key``, or ``None``. A replay uses
    every file entry of the scan (``keys``): those last marked used a day ago or more are
    marked used now, with the result, so that a tree replayed every day is never pruned."""
    stored = store.get_result(key)
    if stored is None:
        return None
    doc, used = stored
    if store.stale(used):
        store.touch([k for k in keys if k is not None], result=key)
    return doc


def to_cache(
    store: Cache,
    files: Sequence[FileEntry],
    keys: Sequence[bytes | None],
    results: Sequence[Extracted | None],
    fresh: list[int],
    config: Config,
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
        item = results[i]
        if item is None:
            continue
        key = _key(files[i], item.digest, config)
        if key != keys[i]:
            changed.append(i)
        if key is None or item.skip not in (None, SkipReason.NO_LEXER):
            continue  # unreadable, binary, lexer crashes: not facts about the content to keep
        skip = item.skip.value if item.skip else None
        entries.append((key, CacheEntry(item.shingles, item.lexer, item.tokens, item.not_utf8, skip, item.detail)))
        if item.signature is not None:
            sigs.append((key, item.signature))
    store.put_many(entries)
    store.put_signatures(sigs, cache_family(config.seed, config.num_hashes))
    return changed


#: Files named one by one in the warnings about files that changed during a scan.
CHANGED_SHOWN = 10


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


# Whole results. A scan is a function of its options, the walked paths with their skips, and
# each file's cache key (its bytes, name and what shapes its shingles): when all of these are
# as in an earlier scan, that scan's result is the answer, and no shingle is loaded at all.


def result_key(
    config: Config, files: Sequence[FileEntry], keys: Sequence[bytes | None], skips: Sequence[Skip]
) -> bytes:
    """The key of a scan's result; every input that can change the result goes into it."""
    h = hashlib.blake2b(digest_size=20)
    head = {"params": config.params(), "version": __version__, "format": CACHE_FORMAT, "schema": SCHEMA_VERSION}
    h.update(json.dumps(head, sort_keys=True).encode())
    for entry, key in zip(files, keys, strict=True):
        h.update(os.fsencode(entry.path) + b"\0" + (key or b"-") + b"\0")
    for skip in skips:
        h.update(os.fsencode(f"{skip.path}\0{skip.reason.value}\0{skip.detail}\0"))
    return h.digest()


def storable(result: Result) -> bool:
    """Whether a result may be replayed: not when a file failed for a passing reason (a read
    error, a worker that died). :func:`minhashdup.engine.pipeline.collect` also keeps no key for a run
    that warned of itself (a rebuilt cache, workers that could not start)."""
    transient = {SkipReason.UNREADABLE.value, SkipReason.LEX_ERROR.value}
    return not any(n.reason in transient for n in result.skips)


def encode_result(result: Result) -> bytes:
    """The stored form of a result: every field at full precision, compressed."""
    doc = {
        "stats": dataclasses.asdict(result.stats),
        "pairs": [dataclasses.astuple(p) for p in result.pairs],
        "clusters": [[list(c.files), c.pairs, c.jaccard_min, c.jaccard_max] for c in result.clusters],
        "skips": [[s.path, s.reason.value, s.detail] for s in result.skips],
        "warnings": result.warnings,
        "files": result.files,
        "rejected": result.rejected,
        "groups": [[list(g.files), g.shingles, g.pairs_listed] for g in result.groups],
    }
    return zlib.compress(json.dumps(doc).encode("utf-8", "surrogatepass"), 6)


def decode_result(blob: bytes, params: dict[str, Any]) -> Result:
    """A :class:`Result` from :func:`encode_result`'s bytes (``params`` are the scan's)."""
    doc = json.loads(zlib.decompress(blob).decode("utf-8", "surrogatepass"))
    return Result(
        params,
        Stats(**doc["stats"]),
        [Pair(*p) for p in doc["pairs"]],
        [Cluster(tuple(c[0]), c[1], c[2], c[3]) for c in doc["clusters"]],
        [Skip(p, SkipReason(r), d) for p, r, d in doc["skips"]],
        list(doc["warnings"]),
        list(doc["files"]),
        [(a, b) for a, b in doc["rejected"]],
        [Group(tuple(g[0]), g[1], g[2]) for g in doc["groups"]],
    )
