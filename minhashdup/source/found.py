"""What a walk finds (:class:`Found`: each file before its stat, the skips, the warnings), and
what it gives once each file is stat'ed (:class:`WalkResult` of :class:`FileEntry`): the part of
a walk that a warm scan repeats from the walk's memo (:func:`.engine.pipeline.remembered_walk`)."""

from __future__ import annotations

import dataclasses
import errno
import os
import stat
from typing import NamedTuple

from minhashdup.result import Skip, SkipReason
from minhashdup.source.safeio import kind_of


@dataclasses.dataclass
class FileEntry:
    """A file to scan: ``path`` as shown to the user, ``real`` its resolved absolute path.

    ``mtime_ns``, ``inode`` and ``ctime_ns`` (a rewrite with its mtime set back shows there only)
    come from the same stat as ``size``: the cache uses them to know a file unchanged unread.

    What the walk found of its kind (:mod:`.kinds`): ``vendored`` (compared, marked);
    ``check_generated``: whether a generated header skips it (not with ``include_generated``,
    nor for a file named on the command line or marked ``-linguist-generated``);
    ``data_ok``: whether data and prose formats are scanned (a file named on the command line,
    or by an ``--include`` glob that matches the file itself, not a folder above it).

    A value, not changed once made, but not ``frozen``: a frozen dataclass sets each field
    through ``object.__setattr__``, five times the cost of plain assignment, and a scan makes
    one per file even when it replays a stored result (5 ms of a warm scan of the Go tree).
    """

    path: str
    real: str
    size: int
    mtime_ns: int = 0
    inode: int = 0
    vendored: bool = False
    check_generated: bool = False
    data_ok: bool = True
    ctime_ns: int = 0


@dataclasses.dataclass
class WalkResult:
    """Output of :func:`.walk.walk`: the files to scan, in a deterministic order, and the skips."""

    files: list[FileEntry]
    skips: list[Skip]
    warnings: list[str]


class Request(NamedTuple):
    """A file the walk found, to stat (:meth:`Found.result`): ``lstat`` for a file of a listing
    (not a link's target nor named by the user), ``kind`` its :class:`FileEntry` kind fields,
    ``skips_before`` the skips recorded before it (its stat's skip goes there)."""

    shown: str
    full: str
    via_link: bool
    real: str | None
    lstat: bool
    kind: tuple[bool, bool, bool]
    skips_before: int


@dataclasses.dataclass
class Found:
    """What a walk found in the tree, before each file's stat: what a walk's memo keeps (:mod:`.witnesses`)."""

    requests: list[Request]
    skips: list[Skip]
    warnings: list[str]
    nested_too_deep: list[str]  # .gitignore files not applied (IGNORE_NESTING_LIMIT)

    def result(self, max_size: int) -> WalkResult:
        """Each file stat'ed now (a skip when not a regular file or over ``max_size``), then one
        per real path (:func:`_one_per_real`): a warm scan's largest step, one stat per file."""
        skips: list[Skip] = []
        found: list[FileEntry] = []
        linked: list[bool] = []  # whether a link led to each found file
        lstat, follow, regular, realpath = os.lstat, os.stat, stat.S_ISREG, os.path.realpath
        done = 0  # the walk's skips added so far
        for shown, full, via_link, real, use_lstat, kind, before in self.requests:
            if before != done:
                skips += self.skips[done:before]
                done = before
            try:
                st = lstat(full) if use_lstat else follow(full)
            except OSError as err:
                skips.append(Skip(shown, *stat_failure(err)))
                continue
            if not regular(st.st_mode):
                skips.append(Skip(shown, SkipReason.SPECIAL, kind_of(st.st_mode)))
            elif st.st_size > max_size:
                skips.append(Skip(shown, SkipReason.TOO_LARGE, f"{st.st_size} bytes > --max-size"))
            else:
                real = real or realpath(full)
                found.append(FileEntry(shown, real, st.st_size, st.st_mtime_ns, st.st_ino, *kind, st.st_ctime_ns))
                linked.append(via_link)
        skips += self.skips[done:]
        return WalkResult(_one_per_real(found, linked, skips), skips, [*self.warnings, *self._nested()])

    def _nested(self) -> list[str]:
        """The warning of the .gitignore files left out for lying too deep, if any."""
        if not self.nested_too_deep:
            return []
        from minhashdup.source.rules.ignore import nesting_warning  # the rules: not for a replayed walk

        return [nesting_warning(self.nested_too_deep)]


def _one_per_real(found: list[FileEntry], linked: list[bool], skips: list[Skip]) -> list[FileEntry]:
    """``found``, one per real path (no link wins, then walk order); the rest: ``duplicate-path`` skips."""
    if len({entry.real for entry in found}) == len(found):
        return found  # the usual tree: nothing reached twice
    best: dict[str, int] = {}
    for number, entry in enumerate(found):
        kept = best.get(entry.real)
        if kept is None or (linked[kept] and not linked[number]):
            best[entry.real] = number
    dropped = [(entry, found[best[entry.real]]) for n, entry in enumerate(found) if best[entry.real] != n]
    skips += [Skip(entry.path, SkipReason.DUPLICATE, f"same file as {kept.path}") for entry, kept in dropped]
    return [entry for n, entry in enumerate(found) if best[entry.real] == n]


def stat_failure(err: OSError) -> tuple[SkipReason, str]:
    """The skip reason and detail of a file or link whose stat failed with ``err``."""
    if err.errno == errno.ELOOP:
        return SkipReason.CYCLE, "symlink loop"
    if err.errno == errno.ENOENT:
        return SkipReason.DANGLING, "target does not exist"
    return SkipReason.UNREADABLE, err.strerror or str(err)
