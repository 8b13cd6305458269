"""The stored form of a whole scan :class:`~minhashdup.result.Result` (the cache's ``results``
table): every field at full precision, as compressed JSON.

One entry per stored field in :data:`FIELDS`: a field added to or removed from ``Result`` is a
line here (and a :data:`STORED_SCHEMA` bump, which is part of every result's cache key, so no
result of another shape is ever read back).
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from collections.abc import Callable
from typing import Any

from minhashdup.result import REASONS, SCHEMA_VERSION, Cluster, Group, Pair, Result, Skip, SkipReason, Stats

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
