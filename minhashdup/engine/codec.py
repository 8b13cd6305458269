"""The stored form of a whole scan :class:`~minhashdup.result.Result` (the cache's ``results``
table): every field at full precision, as compressed JSON; and the keys it is stored under
(:func:`result_key`, :func:`stats_key`).

One entry per stored field in :data:`FIELDS`: a field added to or removed from ``Result`` is a
line here (and a :data:`STORED_SCHEMA` bump, which is part of every result's cache key, so no
result of another shape is ever read back).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import zlib
from array import array
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import pygments

from minhashdup._version import __version__
from minhashdup.core.digest import blake2b
from minhashdup.engine.cache import CACHE_FORMAT
from minhashdup.result import REASONS, SCHEMA_VERSION, Cluster, Group, Pair, Result, Skip, SkipReason, Stats

if TYPE_CHECKING:
    from minhashdup.config import Config
    from minhashdup.source.found import FileEntry

#: ``(field, to JSON, from JSON)`` for each stored field of a Result; ``params`` is not stored
#: (the scan that replays a result has the same parameters: they are part of its key).
FIELDS: tuple[tuple[str, Callable[[Any], Any], Callable[[Any], Any]], ...] = (
    ("stats", dataclasses.asdict, lambda d: Stats(**d)),
    ("pairs", lambda ps: [dataclasses.astuple(p) for p in ps], lambda rows: [Pair(*r) for r in rows]),
    (
        "clusters",
        lambda cs: [[list(c.files), c.pairs, c.jaccard_min, c.jaccard_max] for c in cs],
        lambda rows: [Cluster(tuple(f), n, lo, hi) for f, n, lo, hi in rows],
    ),
    (
        "skips",
        lambda ss: [[s.path, s.reason.value, s.detail] for s in ss],
        lambda rows: [Skip(p, REASONS[r], d) for p, r, d in rows],
    ),
    ("warnings", list, list),
    ("files", list, list),
    ("rejected", list, lambda rows: [(a, b) for a, b in rows]),
    (
        "groups",
        lambda gs: [[list(g.files), g.shingles, g.pairs_listed] for g in gs],
        lambda rows: [Group(tuple(f), n, listed) for f, n, listed in rows],
    ),
    ("unpaired", list, list),
)

#: Part of each stored result's key: the JSON report's ``SCHEMA_VERSION`` and the stored form's
#: own version (2 added ``unpaired``; 3 left out the walk's warnings, which a replay takes from its
#: own walk), so that no result of another shape is ever read back.
STORED_SCHEMA = (SCHEMA_VERSION, 3)


def encode_result(result: Result) -> bytes:
    """The stored form of ``result`` (its :data:`FIELDS`), compressed."""
    doc = {name: to_json(getattr(result, name)) for name, to_json, _ in FIELDS}
    return zlib.compress(json.dumps(doc).encode("utf-8", "surrogatepass"), 6)


def decode_result(blob: bytes, params: dict[str, Any]) -> Result:
    """A :class:`Result` from :func:`encode_result`'s bytes (``params`` are the scan's).

    Example:
        >>> result = Result({}, Stats(files_walked=2), [Pair("a", "b", 0.5, 0.5, 4, 4, 2)], [])
        >>> decode_result(encode_result(result), {}) == result
        True
    """
    doc = json.loads(zlib.decompress(blob).decode("utf-8", "surrogatepass"))
    return Result(params=params, **{name: from_json(doc[name]) for name, _, from_json in FIELDS})


def decoded(blob: bytes, params: dict[str, Any]) -> Result | None:
    """:func:`decode_result`, or ``None`` for bytes that are not a stored result: damaged (zlib's
    checksum catches a changed bit), or written otherwise than :data:`FIELDS` reads.

    Example:
        >>> decoded(b"x", {}) is None
        True
    """
    try:
        return decode_result(blob, params)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, zlib.error):
        return None


def storable(result: Result) -> bool:
    """Whether a result may be replayed: not when a file failed for a passing reason (a read
    error, a worker that died). :meth:`.cached.CachedFiles.keep` also keeps nothing of a run that
    warned of itself (a rebuilt cache, workers that could not start)."""
    transient = {SkipReason.UNREADABLE.value, SkipReason.LEX_ERROR.value}
    return not any(n.reason in transient for n in result.skips)


# Whole results. A scan is a function of its options, the walked paths with their skips, and
# each file's cache key (its bytes, name and what shapes its shingles): when all of these are
# as in an earlier scan, that scan's result is the answer, and no shingle is loaded at all.


def result_key(
    config: Config, files: Sequence[FileEntry], keys: Sequence[bytes | None], skips: Sequence[Skip], **more: str
) -> bytes:
    """The key of a scan's result: every input that can change it goes in (``more``: :func:`stats_key`'s)."""
    # A file's kind comes from rules files the scan may not read as files (.git/info/attributes,
    # a .gitattributes outside the root or left out by --include): it is an input of its own.
    body = b"".join(
        [
            os.fsencode(e.path) + b"\0" + (k or b"-") + b"\0" + bytes((e.vendored, e.check_generated, e.data_ok))
            for e, k in zip(files, keys, strict=True)
        ]
    )
    return _keyed(config, body, skips, more)


def _keyed(config: Config, body: bytes, skips: Sequence[Skip], more: dict[str, str]) -> bytes:
    head = {"params": config.params(), "version": __version__, "format": CACHE_FORMAT, "schema": STORED_SCHEMA}
    head["max_verified"] = config.max_verified  # a scan over the limit fails: a lower one must not replay
    h = blake2b(json.dumps({**head, **more}, sort_keys=True).encode(), digest_size=20)
    h.update(body)
    # _value_, the member's own attribute: .value is a property, 0.3 us a skip of thousands.
    h.update(os.fsencode("".join([f"{skip.path}\0{skip.reason._value_}\0{skip.detail}\0" for skip in skips])))
    return h.digest()


def stats_key(config: Config, files: Sequence[FileEntry], skips: Sequence[Skip]) -> bytes:
    """The key under which a kept result's key is found by the files' stats, without their
    digests: as :func:`result_key`, with each file's real path and stat for its key, and what else
    goes into a file's key (:func:`.cache.file_key`). As for the stat cache, a file whose
    size, mtime, ctime and inode are unchanged, and were settled when kept, is taken as unchanged."""
    # By column (the paths, the stats, the kinds): a third of the time of a text per file.
    paths = os.fsencode("".join([f"{e.path}\0{e.real}\0" for e in files]))
    numbers = [e.size for e in files]
    for name in ("mtime_ns", "ctime_ns", "inode"):
        numbers += map(attrgetter(name), files)
    kinds = bytes([e.vendored | e.check_generated << 1 | e.data_ok << 2 for e in files])
    body = b"\0".join([paths, _packed(numbers), kinds])
    more = {"by": "stats", "files": str(len(files)), "pygments": pygments.__version__, "engine": config.lexer_engine}
    return b"S" + _keyed(config, body, skips, {"norm": config.normalisation.key, **more})


def _packed(numbers: list[int]) -> bytes:
    """``numbers`` as 64-bit words, or as text where one does not fit (an inode over 2**63): the
    first byte tells which, their count is in the key."""
    try:
        words = array("q", numbers)
    except OverflowError:
        return b"t" + " ".join(map(str, numbers)).encode()
    if sys.byteorder == "big":  # little-endian everywhere: a cache moved between machines keeps its keys
        words.byteswap()
    return b"q" + words.tobytes()
