"""What the per-file stage is given beyond a walked file (:class:`ReadEntry`, its bytes when they
were read already) and what it gives back (:class:`Extracted`): kept apart from
:mod:`minhashdup.source.extract` so that a fully cached scan never imports the lexing machinery
(pygments, worker pools)."""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

from minhashdup.result import SkipReason
from minhashdup.source.found import FileEntry
from minhashdup.source.kinds import not_code

if TYPE_CHECKING:  # numpy: not for a scan that replays without a single array
    from minhashdup.core.hashing import UInt64Array


@functools.cache
def no_shingles() -> UInt64Array:
    """The shingles of a file that has none (a skip): one empty array, made when first needed."""
    import numpy as np

    return np.empty(0, dtype=np.uint64)


@dataclasses.dataclass
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

    ``digest`` is the content digest (:func:`minhashdup.core.digest.content_digest`) of the very
    bytes that were lexed, ``None`` when none could be read: the cache stores the shingles
    under it, never under a digest taken earlier, when the file may have held other bytes.
    ``generated`` is the generated header the content holds (:func:`.kinds.generated_marker`),
    ``""`` for none: a fact of the content, which the cache keeps, whatever the scan did with it.
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
    generated: str = ""
    verbatim: tuple[UInt64Array, int] | None = None  # normalised: the shingles and tokens as written
    copied: bool = False  # not lexed: the result of a byte-identical file of the same run


def screened(item: Extracted, name: str, check_generated: bool, data_ok: bool) -> Extracted:
    """``item``, or a skip when its kind leaves it out: a generated header when
    ``check_generated`` (``generated``), a data or prose format (:func:`.kinds.not_code`) unless
    ``data_ok`` (``not-code``). Applied to every file, lexed or from the cache, so that the
    cache keeps facts (a header, a lexer) and each scan decides by its own options.

    Example:
        >>> item = Extracted(0, no_shingles(), lexer="JSON")
        >>> screened(item, "a.json", False, False).skip, screened(item, "a.json", False, True).skip
        (<SkipReason.NOT_CODE: 'not-code'>, None)
    """
    if check_generated and item.generated and item.skip in (None, SkipReason.NO_LEXER):  # whatever its language
        return dataclasses.replace(
            item, shingles=no_shingles(), signature=None, skip=SkipReason.GENERATED, detail=item.generated
        )
    if item.skip not in (None, SkipReason.NO_LEXER):
        return item
    why = "" if data_ok else not_code(name, item.lexer)  # a lockfile without a lexer too
    if why:
        detail = f"{why}; --include a glob matching it, or name it, to scan it"
        return dataclasses.replace(
            item, shingles=no_shingles(), signature=None, skip=SkipReason.NOT_CODE, detail=detail
        )
    return item


def bare(entry: FileEntry) -> FileEntry:
    """``entry`` without the bytes it carries, if any (a corpus keeps what the files are, not their bytes)."""
    if not isinstance(entry, ReadEntry):
        return entry
    return FileEntry(**{f.name: getattr(entry, f.name) for f in dataclasses.fields(FileEntry)})
