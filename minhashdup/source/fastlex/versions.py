"""The versions of files among a run of files (a batch): which earlier lex a file may take
what it shares with from (:mod:`.splice`), and which lexes to keep for that; and which files a
scan's batches keep together (:func:`kept_together`)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from minhashdup.core.cluster import Parts
from minhashdup.source.fastlex.pieces import Kept
from minhashdup.source.fastlex.splice import Copy, Lexed


def family(path: str) -> str:
    """What versions of one file share in their paths: the file's name and its folder's
    (``go-1.21/src/net/http/server.go`` and ``go-1.24/src/net/http/server.go``: ``http/server.go``)."""
    return "/".join(path.replace("\\", "/").rsplit("/", 2)[-2:])


def kept_together(files: Sequence[tuple[str, int]], most: int) -> list[list[int]]:
    """The positions of ``files`` (each a path and a size) in parts that a batch of a scan keeps
    whole: the files of one size (maybe copies of one content, lexed once) with the versions of
    each (its :func:`family`), as long as a part holds at most ``most`` files (the files of one
    size alone may be more). A size group spanning two families joins them: a file's versions
    then stay with it even so. In each part, a family's files come in path order (a version
    takes from the one before it); the parts in the order of their first family and path.

    Example:
        >>> files = [("v1/x/a.go", 3), ("v1/y/b.go", 5), ("v2/x/a.go", 4), ("v2/y/b.go", 4)]
        >>> kept_together(files, 8)
        [[0, 2, 1, 3]]
        >>> kept_together(files, 2)
        [[0], [2, 3], [1]]
    """
    keys = [(family(path), path) for path, _ in files]
    order = sorted(range(len(files)), key=keys.__getitem__)
    together = Parts(len(files))
    first: dict[int, int] = {}
    for i, (_, size) in enumerate(files):  # one size: whole, whatever their number
        if first.setdefault(size, i) != i:
            together.join(first[size], i)
    for before, i in itertools.pairwise(order):  # a version joins the one before it, within the bound
        if keys[before][0] == keys[i][0]:
            together.join(before, i, most)
    parts: dict[int, list[int]] = {}
    for i in order:
        parts.setdefault(together.find(i), []).append(i)
    return list(parts.values())


#: The most characters of text :class:`Versions` keeps lexed at once (with their tokens, types and
#: marks, ~20 bytes a character: ~80 MB): a batch whose files' sizes interleave many families
#: keeps no more.
KEEP_CHARS = 4_000_000


class Versions:
    """The bases kept for later versions among a run of files (a batch): the last one lexed
    of each :func:`family` for as long as one of that family is still to come, within
    :data:`KEEP_CHARS`. ``files``: each file's path as walked (its family) and the path it is
    read by (what :meth:`take` and :meth:`passed` are given), and its size if known; the run
    calls :meth:`passed` after each file, lexed or not (a copy, a skip), so a family's base goes
    with its last file. A lex is recorded as a base only when one of its family still to come
    has another size: one of the same size is most often a copy, which is not lexed."""

    def __init__(self, files: Sequence[tuple[str, str] | tuple[str, str, int]]) -> None:
        self.family = {f[1]: family(f[0]) for f in files}
        self.size = {f[1]: f[2] if len(f) > 2 else -1 for f in files}
        self.left: dict[str, int] = {}
        self.sizes: dict[str, dict[int, int]] = {}  # per family: how many still to come, by size
        for read, key in self.family.items():
            self.left[key] = self.left.get(key, 0) + 1
            counts = self.sizes.setdefault(key, {})
            counts[self.size[read]] = counts.get(self.size[read], 0) + 1
        #: the families holding files of more than one size (others hold copies at most, lexed once)
        self.varied = {key for key, counts in self.sizes.items() if len(counts) > 1}
        self.pieces: dict[type, Kept] = {}  # per lexer: the pieces of texts lexed in one call
        self.cut: tuple[str, Kept] | None = None  # the file being lexed in pieces, and its lexer's
        self.bases: dict[str, tuple[type, Lexed]] = {}
        self.chars = 0  # of the texts kept
        self.hashes: dict[str, Any] = {}  # per family: its base's token hashes, once told (hashed)
        self.signed: dict[str, tuple[Any, Any]] = {}  # per family: the last shingle set signed, its signature
        #: The file being lexed: the path it is read by, its base's token hashes (if any), and
        #: where its tokens are the base's (:data:`.splice.Copy`, filled by the lex); and the
        #: family whose base its lex became (:meth:`keep`).
        self.now: tuple[str, Any, list[Copy]] | None = None
        self.kept: str | None = None

    def take(self, path: str, lexer: type) -> tuple[str, Lexed | None, bool]:
        """For the file read at ``path`` lexed by ``lexer`` now: its family, the base it may take
        a tail from, and whether to record its lex for a later one (one of its family is left
        whose size differs, or whose size is not known)."""
        key = self.family.get(path) or family(path)
        hashes = self.hashes.get(key)
        kept = self._drop(key)
        base = kept[1] if kept is not None and kept[0] is lexer else None
        self.now, self.kept = (path, None if base is None else hashes, []), None
        size = self.size.get(path, -1)
        same = self.sizes.get(key, {}).get(size, 0) if size >= 0 else 1
        return key, base, self.left.get(key, 0) - same > 0

    def pieces_for(self, path: str, lexer: type) -> Kept | None:
        """For the file read at ``path``, lexed in one call by ``lexer``: the pieces lexed before
        (:mod:`.pieces`), when its family has files of two sizes in the run (else ``None``: no
        piece of it is likely lexed twice; files of one size are most often copies)."""
        if (self.family.get(path) or family(path)) not in self.varied:
            return None
        kept = self.pieces.get(lexer)
        if kept is None:
            kept = self.pieces[lexer] = Kept()
        kept.used = []
        self.cut = (path, kept)
        return kept

    def keep(self, key: str, lexer: type, lexed: Lexed) -> None:
        """Keep ``lexed`` (by ``lexer``) as the base of the next of family ``key``, if it fits."""
        if self.left.get(key, 0) > 1 and self.chars + len(lexed.text) <= KEEP_CHARS:
            self.bases[key] = (lexer, lexed)
            self.chars += len(lexed.text)
            self.kept = key

    @property
    def copies(self) -> list[Copy] | None:
        """Where the tokens of the file being lexed (since :meth:`take`) are its base's."""
        return None if self.now is None else self.now[2]

    def reuse(self, path: str) -> tuple[Any, list[Copy]] | None:
        """For the file read at ``path``, just lexed, its base's token hashes and where its
        tokens are the base's (:func:`minhashdup.core.shingles.token_hashes`), when it took
        tokens from a base whose hashes were told (:meth:`hashed`); lexed in pieces, the hashes
        of its pieces lexed before (:meth:`.pieces.Kept.reuse`)."""
        if self.cut is not None and self.cut[0] == path:
            return self.cut[1].reuse()
        if self.now is None or self.now[0] != path or self.now[1] is None or not self.now[2]:
            return None
        return self.now[1], self.now[2]

    def hashed(self, hashes: Any) -> None:
        """The token hashes of the file just lexed, all of its tokens as lexed: kept with its
        lex, if that was kept as a base."""
        if self.kept is not None and self.kept in self.bases:
            self.hashes[self.kept] = hashes
        if self.cut is not None:
            self.cut[1].hashed(hashes)
        self.kept, self.cut = None, None

    def sign(self, path: str, shingles: Any, functions: Any) -> Any:
        """The signature under ``functions`` (a :class:`~minhashdup.core.signature.Family`) of the
        shingle set of the file read at ``path``, from that of the version of it signed last in
        the run where they differ little (:meth:`~minhashdup.core.signature.Family.sign_after`).
        Kept for the next one, while one of its family is still to come."""
        key = self.family.get(path) or family(path)
        base = self.signed.pop(key, None)
        sig = functions.sign([shingles])[0] if base is None else functions.sign_after(base[0], base[1], shingles)
        if self.left.get(key, 0) > 1:
            self.signed[key] = (shingles, sig)
        return sig

    def passed(self, path: str) -> None:
        """The file read at ``path`` is done (lexed, copied or skipped): one fewer of its family
        to come; the family's base goes with the last."""
        key = self.family.get(path) or family(path)
        self.now, self.kept, self.cut = None, None, None
        left = self.left.get(key, 1) - 1
        self.left[key] = left
        counts = self.sizes.get(key)
        if counts is not None and self.size.get(path, -1) in counts:
            counts[self.size[path]] -= 1
        if left <= 0:
            self._drop(key)
            self.signed.pop(key, None)

    def _drop(self, key: str) -> tuple[type, Lexed] | None:
        kept = self.bases.pop(key, None)
        self.hashes.pop(key, None)
        self.chars -= 0 if kept is None else len(kept[1].text)
        return kept
