"""What the per-file stage is given beyond a walked file (:class:`ReadEntry`, its bytes when they
were read already) and what it gives back (:class:`Extracted`): kept apart from
:mod:`minhashdup.source.extract` so that a fully cached scan never imports the lexing machinery
(pygments, worker pools)."""

from __future__ import annotations

import dataclasses

from minhashdup.core.hashing import UInt64Array
from minhashdup.result import SkipReason
from minhashdup.source.walk import FileEntry


@dataclasses.dataclass(frozen=True)
class ReadEntry(FileEntry):
    """A walked file whose bytes were read already (by the cache, to digest them): the per-file
    stage lexes ``data`` instead of reading the file again, so that a file is read once per scan
    and the bytes lexed are the bytes digested.

    Example:
        >>> entry = FileEntry("a.go", "/src/a.go", 7)
        >>> ReadEntry.of(entry, b"package").real, ReadEntry.of(entry, b"package").data
        ('/src/a.go', b'package')
    """

    data: bytes = dataclasses.field(default=b"", repr=False)

    @classmethod
    def of(cls, entry: FileEntry, data: bytes) -> ReadEntry:
        """``entry`` with the bytes read of it."""
        fields = {f.name: getattr(entry, f.name) for f in dataclasses.fields(FileEntry)}
        return cls(**fields, data=data)


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
