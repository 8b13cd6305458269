"""What the per-file stage gives back: kept apart from :mod:`minhashdup.source.extract` so that a
fully cached scan never imports the lexing machinery (pygments, worker pools)."""

from __future__ import annotations

import dataclasses

from minhashdup.core.hashing import UInt64Array
from minhashdup.result import SkipReason


@dataclasses.dataclass(frozen=True)
class Extracted:
    """What one file gave: its shingle set, or why it has none.

    ``digest`` is the content digest (:func:`minhashdup.core.hashing.content_digest`) of the very
    bytes that were lexed, ``None`` when none could be read: the cache stores the shingles
    under it, never under a digest taken earlier, when the file may have held other bytes.
    """

    index: int
    shingles: UInt64Array
    tokens: int = 0
    lexer: str = ""
    skip: SkipReason | None = None
    detail: str = ""
    not_utf8: bool = False
    signature: UInt64Array | None = None
    cpu: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # seconds: read, lex, shingle, signature
    digest: bytes | None = None
