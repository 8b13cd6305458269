"""Which files to scan: roots, globs, .gitignore and recorded skips.

Every path the walker sees ends up either in :attr:`WalkResult.files` or in
:attr:`WalkResult.skips` with a reason: nothing is dropped silently.

Symlinks are followed only while they stay inside the root being walked; a file reached
by two paths (a link and its target) is scanned once, under the path without a link.
"""

from __future__ import annotations

import dataclasses
import enum
import errno
import os
import stat
from collections.abc import Iterable, Sequence

import pathspec

from minhashdup.errors import ConfigError, InputPathError

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs"})


class SkipReason(str, enum.Enum):
    """Why a path was not scanned. Values are the keys of ``stats.skipped`` in reports."""

    EXCLUDED = "excluded"
    NOT_INCLUDED = "not-included"
    GITIGNORED = "gitignored"
    VCS = "vcs-metadata"
    TOO_LARGE = "too-large"
    SPECIAL = "not-a-regular-file"
    DANGLING = "dangling-symlink"
    CYCLE = "symlink-cycle"
    OUTSIDE = "symlink-outside-root"
    DUPLICATE = "duplicate-path"
    UNREADABLE = "unreadable"
    BINARY = "binary"
    NO_LEXER = "no-lexer"
    LEX_ERROR = "lex-error"
    TOO_SMALL = "too-few-shingles"
    OWN_FILE = "minhashdup-file"

    @property
    def is_filter(self) -> bool:
        """True for skips the user asked for (globs, .gitignore, VCS folders)."""
        return self in _FILTERS


_FILTERS = {SkipReason.EXCLUDED, SkipReason.NOT_INCLUDED, SkipReason.GITIGNORED, SkipReason.VCS, SkipReason.OWN_FILE}


@dataclasses.dataclass(frozen=True)
class FileEntry:
    """A file to scan: ``path`` as shown to the user, ``real`` its resolved absolute path.

    ``mtime_ns`` and ``inode`` come from the same stat as ``size``: the cache uses the three
    to know a file unchanged without reading it.
    """

    path: str
    real: str
    size: int
    mtime_ns: int = 0
    inode: int = 0


@dataclasses.dataclass(frozen=True)
class Skip:
    """A path that was not scanned, and why (``detail`` adds e.g. the OS error)."""

    path: str
    reason: SkipReason
    detail: str = ""


@dataclasses.dataclass
class WalkResult:
    """Output of :func:`walk`: the files to scan, in a deterministic order, and the skips."""

    files: list[FileEntry]
    skips: list[Skip]
    warnings: list[str]


@dataclasses.dataclass(frozen=True)
class _Rules:
    """Glob rules in force under one folder: user globs plus the .gitignore chain."""

    include: pathspec.GitIgnoreSpec | None
    exclude: pathspec.GitIgnoreSpec | None
    ignores: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]  # (absolute base folder, spec)


@dataclasses.dataclass
class _Candidate:
    entry: FileEntry
    via_link: bool
    order: int


def compile_globs(globs: Sequence[str], option: str) -> pathspec.GitIgnoreSpec | None:
    """Compile gitignore-style globs; ``None`` when there are none.

    Raises:
        ConfigError: a glob is not a valid gitignore pattern.
    """
    if not globs:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(globs)
    except Exception as exc:  # pathspec raises several types for bad patterns
        raise ConfigError(f"{option}: invalid glob ({exc}); use gitignore syntax") from None


def walk(
    paths: Sequence[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    gitignore: bool = True,
    max_size: int = 1024 * 1024,
) -> WalkResult:
    """Collect the files under ``paths`` (folders or files).

    Globs match a file name, a folder name on the path, or the path relative to the
    root, as in ``.gitignore``. A file named directly in ``paths`` is always considered
    (globs and .gitignore filter only what is found inside folders).

    Args:
        paths: roots to walk, in order; each file is reported once even if roots overlap.
        include: when non-empty, only files matching one of these globs are kept.
        exclude: files and folders matching these globs are left out.
        gitignore: honour ``.gitignore`` files (up to the enclosing repository's top)
            and ``.git/info/exclude``.
        max_size: files over this many bytes are skipped as ``too-large``.

    Returns:
        A :class:`WalkResult`; ``files`` in root order; within a folder, its files by
        name, then its subfolders (depth first) by name.

    Raises:
        InputPathError: a path does not exist.
        ConfigError: a glob is invalid.

    Example:
        >>> walk(["examples"], include=["*.go"]).files[0].path  # doctest: +SKIP
        'examples/go/reader.go'
    """
    inc = compile_globs(include, "--include")
    exc = compile_globs(exclude, "--exclude")
    walker = _Walker(max_size=max_size, warnings=[])
    for raw in paths:
        given = os.fspath(raw)
        if not os.path.lexists(given):
            raise InputPathError(f"{given}: no such file or folder; check the PATH argument")
        if os.path.isdir(given):
            root_real = os.path.realpath(given)
            chain = _ignore_chain(root_real, walker.warnings) if gitignore else ()
            walker.walk_root(given, root_real, _Rules(inc, exc, chain), gitignore)
        else:
            walker.add_file(given, given)
    return walker.result()


class _Walker:
    def __init__(self, max_size: int, warnings: list[str]) -> None:
        self.max_size = max_size
        self.warnings = warnings
        self.skips: list[Skip] = []
        self.candidates: list[_Candidate] = []

    def skip(self, path: str, reason: SkipReason, detail: str = "") -> None:
        self.skips.append(Skip(path, reason, detail))

    def add_file(
        self,
        shown: str,
        full: str,
        via_link: bool = False,
        real: str | None = None,
        entry: os.DirEntry[str] | None = None,
    ) -> None:
        """Record a file found (or named) at ``shown``; ``real`` is its resolved path if known.

        ``entry``, for a file that is not a link, gives the stat without following it again.
        """
        try:
            st = entry.stat(follow_symlinks=False) if entry is not None else os.stat(full)
        except OSError as err:
            self.skip(shown, *_stat_failure(err))
            return
        if not stat.S_ISREG(st.st_mode):
            self.skip(shown, SkipReason.SPECIAL, _kind(st.st_mode))
        elif st.st_size > self.max_size:
            self.skip(shown, SkipReason.TOO_LARGE, f"{st.st_size} bytes > --max-size")
        else:
            found = FileEntry(shown, real or os.path.realpath(full), st.st_size, st.st_mtime_ns, st.st_ino)
            self.candidates.append(_Candidate(found, via_link, len(self.candidates)))

    def walk_root(self, given: str, root_real: str, rules: _Rules, gitignore: bool) -> None:
        # Iterative depth-first walk; each stack item carries the real folders above it
        # so that a link back to one of them is recognised as a cycle.
        stack: list[tuple[str, str, str, _Rules, tuple[str, ...], bool]] = [
            (given, given, "", rules, (root_real,), False)
        ]
        while stack:
            shown, full, rel, rules, ancestors, via_link = stack.pop()
            if gitignore and rel:
                rules = _with_gitignore(rules, full, shown, self.warnings)
            folders = []
            for entry in self._list(shown, full):  # files in name order, then each folder
                item = self._visit(shown, rel, entry, rules, ancestors, root_real, via_link)
                if item is not None:
                    folders.append(item)
            stack.extend(reversed(folders))

    def _list(self, shown: str, full: str) -> list[os.DirEntry[str]]:
        # scandir: the kind of each entry comes with the listing, so folders and plain files
        # need no lstat of their own.
        try:
            with os.scandir(full) as listing:
                return sorted(listing, key=lambda e: e.name)
        except OSError as err:
            self.skip(shown, SkipReason.UNREADABLE, err.strerror or str(err))
            return []

    def _visit(
        self,
        parent_shown: str,
        parent_rel: str,
        entry: os.DirEntry[str],
        rules: _Rules,
        ancestors: tuple[str, ...],
        root_real: str,
        via_link: bool,
    ) -> tuple[str, str, str, _Rules, tuple[str, ...], bool] | None:
        name, full = entry.name, entry.path
        shown = os.path.join(parent_shown, name)
        rel = f"{parent_rel}/{name}" if parent_rel else name
        try:
            is_link = entry.is_symlink()
            is_dir = os.path.isdir(full) if is_link else entry.is_dir(follow_symlinks=False)
        except OSError as err:
            self.skip(shown, SkipReason.UNREADABLE, err.strerror or str(err))
            return None
        reason = _filtered(name, rel, full, is_dir, rules)
        if reason is not None:
            self.skip(shown + ("/" if is_dir else ""), reason)
            return None
        if is_link:
            return self._follow(shown, full, rel, rules, ancestors, root_real)
        if is_dir:
            # ancestors[-1] is the real path of the parent folder: no need to resolve again.
            return (shown, full, rel, rules, (*ancestors, os.path.join(ancestors[-1], name)), via_link)
        self.add_file(shown, full, via_link, os.path.join(ancestors[-1], name), entry)
        return None

    def _follow(
        self,
        shown: str,
        full: str,
        rel: str,
        rules: _Rules,
        ancestors: tuple[str, ...],
        root_real: str,
    ) -> tuple[str, str, str, _Rules, tuple[str, ...], bool] | None:
        try:
            os.stat(full)
        except OSError as err:
            self.skip(shown, *_stat_failure(err))
            return None
        target = os.path.realpath(full)
        if not _is_within(target, root_real):
            self.skip(shown, SkipReason.OUTSIDE, f"points to {target}")
            return None
        if not os.path.isdir(target):
            self.add_file(shown, full, via_link=True)
            return None
        if any(_is_within(a, target) for a in ancestors):
            self.skip(shown + "/", SkipReason.CYCLE, f"points to its own ancestor {target}")
            return None
        return (shown, full, rel, rules, (*ancestors, target), True)

    def result(self) -> WalkResult:
        """Files deduplicated by real path: a path without links wins, then walk order."""
        best: dict[str, _Candidate] = {}
        for cand in self.candidates:
            kept = best.get(cand.entry.real)
            if kept is None or (kept.via_link and not cand.via_link):
                best[cand.entry.real] = cand
        files: list[FileEntry] = []
        for cand in self.candidates:
            kept = best[cand.entry.real]
            if kept is cand:
                files.append(cand.entry)
            else:
                self.skip(cand.entry.path, SkipReason.DUPLICATE, f"same file as {kept.entry.path}")
        return WalkResult(files, self.skips, self.warnings)


def _filtered(name: str, rel: str, full: str, is_dir: bool, rules: _Rules) -> SkipReason | None:
    if is_dir and name in VCS_DIRS:
        return SkipReason.VCS
    probe = rel + "/" if is_dir else rel
    if rules.exclude is not None and rules.exclude.match_file(probe):
        return SkipReason.EXCLUDED
    if _ignored(full, is_dir, rules.ignores):
        return SkipReason.GITIGNORED
    if not is_dir and rules.include is not None and not rules.include.match_file(rel):
        return SkipReason.NOT_INCLUDED
    return None


def _ignored(full: str, is_dir: bool, ignores: Iterable[tuple[str, pathspec.GitIgnoreSpec]]) -> bool:
    # Deeper .gitignore files override shallower ones: the last decisive match wins.
    verdict = False
    for base, spec in ignores:
        rel = os.path.relpath(full, base).replace(os.sep, "/")
        result = spec.check_file(rel + "/" if is_dir else rel)
        if result.include is not None:
            verdict = bool(result.include)
    return verdict


def _with_gitignore(rules: _Rules, full: str, shown: str, warnings: list[str]) -> _Rules:
    spec = _read_ignore_file(os.path.join(full, ".gitignore"), os.path.join(shown, ".gitignore"), warnings)
    if spec is None:
        return rules
    return dataclasses.replace(rules, ignores=(*rules.ignores, (full, spec)))


def _ignore_chain(root_real: str, warnings: list[str]) -> tuple[tuple[str, pathspec.GitIgnoreSpec], ...]:
    """The .gitignore files from the enclosing repository's top down to ``root_real``."""
    folders = [root_real]
    top = root_real
    while not os.path.exists(os.path.join(top, ".git")):
        parent = os.path.dirname(top)
        if parent == top:  # not inside a repository: only the root's own .gitignore
            folders = [root_real]
            top = root_real
            break
        top = parent
        folders.append(top)
    chain: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    info = _read_ignore_file(os.path.join(top, ".git", "info", "exclude"), None, warnings)
    if info is not None:
        chain.append((top, info))
    for folder in reversed(folders):
        spec = _read_ignore_file(os.path.join(folder, ".gitignore"), None, warnings)
        if spec is not None:
            chain.append((folder, spec))
    return tuple(chain)


def _read_ignore_file(path: str, shown: str | None, warnings: list[str]) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    except OSError as err:
        warnings.append(f"{shown or path}: cannot read ({err.strerror}); its rules are ignored")
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(text.splitlines())
    except Exception as err:  # a hostile .gitignore must not stop the scan
        warnings.append(f"{shown or path}: invalid pattern ({err}); its rules are ignored")
        return None


def _stat_failure(err: OSError) -> tuple[SkipReason, str]:
    if err.errno == errno.ELOOP:
        return SkipReason.CYCLE, "symlink loop"
    if err.errno == errno.ENOENT:
        return SkipReason.DANGLING, "target does not exist"
    return SkipReason.UNREADABLE, err.strerror or str(err)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "device")):
        if test(mode):
            return name
    return "special file"


def _is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
