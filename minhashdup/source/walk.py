"""Which files to scan: roots, globs, .gitignore and recorded skips.

Every path the walker sees ends up either in :attr:`WalkResult.files` or in
:attr:`WalkResult.skips` with a reason: nothing is dropped silently.

Symlinks are followed only while they stay inside the root being walked; a file reached
by two paths (a link and its target) is scanned once, under the path without a link.

A repository's contents cannot make the walk unbounded: each real folder is listed once per
root (a second link to it is a ``duplicate-path`` skip, so a ladder of folders that link twice
to the next costs one listing per folder, not two to the power of its height), and the walk is
a loop, not a recursion. Which entries the globs, ``.gitignore`` files and version-control
folders leave out, and how reading those files stays bounded, is :mod:`.rules.ignore`'s part.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from typing import NamedTuple

from minhashdup.errors import InputPathError
from minhashdup.result import Skip, SkipReason
from minhashdup.source.found import FileEntry, Found, Request, WalkResult, stat_failure
from minhashdup.source.kinds import Kinds, file_kind, vendored_path
from minhashdup.source.rules import rules_files_in
from minhashdup.source.rules.attributes import Attributes, attribute_chain, marks, with_folder_attributes
from minhashdup.source.rules.ignore import (
    IGNORE_NESTING_LIMIT,
    Rules,
    compile_globs,
    filtered,
    root_rules,
    with_folder_gitignore,
)
from minhashdup.source.safeio import MIB
from minhashdup.source.witnesses import saw_path, saw_stat

__all__ = ["FileEntry", "Found", "Request", "WalkResult", "find", "walk"]  # the first four: .found's

_DEFAULT_KINDS = Kinds()  # generated files skipped, vendored ones scanned


class _Folder(NamedTuple):
    """A folder to list. ``ancestors`` are the real paths of the folders walked from the root
    down to this one, itself last; ``via_link`` tells that a link was followed to reach it."""

    shown: str
    full: str
    rel: str
    rules: Rules
    ancestors: tuple[str, ...]
    via_link: bool
    attributes: tuple[Attributes, ...]


def walk(
    paths: Sequence[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    gitignore: bool = True,
    max_size: int = MIB,
    kinds: Kinds = _DEFAULT_KINDS,
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
        kinds: generated files, known here by name (:func:`.kinds.generated_name`) or by
            ``linguist-generated`` in ``.gitattributes``, are skipped as ``generated``, unless
            ``kinds.include_generated`` or named in ``paths``; files in vendor folders or
            marked ``linguist-vendored`` are marked ``vendored``, and left out with
            ``kinds.exclude_vendored``. ``.gitattributes`` files are read whatever ``gitignore``.

    Returns:
        A :class:`WalkResult`; ``files`` in root order; within a root, the tree without
        links first (in a folder, its files by name, then its subfolders, depth first, by
        name), then the folders reached through links, in the order the links were found.

    Raises:
        InputPathError: a path does not exist.
        ConfigError: a glob is invalid.

    Example:
        >>> [f.path for f in walk(["examples"], include=["*.go"]).files][:3]  # doc.go, empty.go: walked too
        ['examples/go/doc.go', 'examples/go/empty.go', 'examples/go/reader.go']
    """
    return find(paths, include=include, exclude=exclude, gitignore=gitignore, kinds=kinds).result(max_size)


def find(
    paths: Sequence[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    gitignore: bool = True,
    kinds: Kinds = _DEFAULT_KINDS,
) -> Found:
    """What :func:`walk` finds in the tree, before each file's stat (:meth:`Found.result`)."""
    inc = compile_globs(include, "include")  # named as Config names them (the command line: --include)
    exc = compile_globs(exclude, "exclude")
    walker = _Walker(warnings=[], kinds=kinds)
    for raw in paths:
        given = os.fspath(raw)
        saw_path(given)
        if not os.path.lexists(given):
            raise InputPathError(f"{given}: no such file or folder; check the PATH argument")
        if os.path.isdir(given):
            walker.walk_root(given, os.path.realpath(given), Rules(inc, exc, ()), gitignore)
        else:
            named = os.path.normpath(given).replace(os.sep, "/")
            walker.add_file(given, given, vendored=vendored_path(named), check_generated=False, data_ok=True)
    return walker.found()


class _Walker:
    def __init__(self, warnings: list[str], kinds: Kinds) -> None:
        self.kinds = kinds
        self.warnings = warnings
        self.skips: list[Skip] = []
        self.requests: list[Request] = []
        self.walked: dict[str, str] = {}  # real folder -> the path it was walked under (this root)
        self.links: deque[_Folder] = deque()  # links to folders, to walk after the tree
        self.nested_too_deep: list[str] = []  # .gitignore files not applied (IGNORE_NESTING_LIMIT)
        self.named_folders: dict[str, bool] = {}  # folders --include names (one spec a walk)

    def skip(self, path: str, reason: SkipReason, detail: str = "") -> None:
        self.skips.append(Skip(path, reason, detail))

    def add_file(
        self, shown: str, full: str, via_link: bool = False, real: str | None = None, lstat: bool = False, **kind: bool
    ) -> None:
        """Record a file found (or named) at ``shown``, to stat later (:meth:`stat_file`);
        ``real`` is its resolved path if known, ``lstat`` that it is not a link (a file of a
        listing); ``kind`` gives the :class:`FileEntry` fields of its kind."""
        flags = (kind["vendored"], kind["check_generated"], kind["data_ok"])
        self.requests.append(Request(shown, full, via_link, real, lstat, flags, len(self.skips)))

    def walk_root(self, given: str, root_real: str, globs: Rules, gitignore: bool) -> None:
        """Walk one root, each real folder once: first the tree without links, then the folders
        that links lead to, in the order the links were found. ``globs``: the user's; the rules
        files in force are read once a folder is listed (:meth:`_with_rules`).

        Following links last makes a folder shown under its path without links whenever it has
        one, whatever the names sort as; a later link to a folder already walked, or a folder
        reached again under such a link, is a ``duplicate-path`` skip naming the first path.
        """
        self.walked, self.named_folders = {}, {}
        self.links.clear()
        self._walk_tree(_Folder(given, given, "", globs, (root_real,), False, ()), gitignore)
        while self.links:
            self._walk_tree(self.links.popleft(), gitignore)

    def _walk_tree(self, top: _Folder, gitignore: bool) -> None:
        # Iterative depth-first walk (a recursion would stop at Python's limit in a deep tree);
        # links to folders are queued on self.links, not followed here.
        stack = [top]
        while stack:
            folder = stack.pop()
            first = self.walked.get(folder.ancestors[-1])
            if first is not None:
                self.skip(folder.shown + "/", SkipReason.DUPLICATE, f"same folder as {first}")
                continue
            self.walked[folder.ancestors[-1]] = folder.shown
            listing = self._list(folder.shown, folder.full)
            if listing is None:  # its skip says so; its rules files are not read, as they rule nothing
                continue
            folder = self._with_rules(folder, gitignore, rules_files_in(e.name for e in listing))
            subfolders = []
            for entry in listing:  # files in name order, then each folder
                sub = self._visit(folder, folder.rules, entry)
                if sub is not None:
                    subfolders.append(sub)
            stack.extend(reversed(subfolders))

    def _list(self, shown: str, full: str) -> list[os.DirEntry[str]] | None:
        # scandir: the kind of each entry comes with the listing, so folders and plain files
        # need no lstat of their own. None: it cannot be listed (an unreadable skip, the one notice).
        saw_stat(full)  # before the listing: an entry added after it changes the folder's stat
        try:
            with os.scandir(full) as listing:
                return sorted(listing, key=lambda e: e.name)
        except OSError as err:
            self.skip(shown, SkipReason.UNREADABLE, f"{err.strerror or err}; nothing in it is scanned")
            return None

    def _with_rules(self, folder: _Folder, gitignore: bool, listed: frozenset[str]) -> _Folder:
        """``folder`` with its own ``.gitignore`` and ``.gitattributes`` in force; for the root,
        those from the repository's top down to it. Below it, only those ``listed`` (its listing's
        :func:`.rules.rules_files_in`) are looked for."""
        shown, full, rel, warnings = folder.shown, folder.full, folder.rel, self.warnings
        if not rel:
            root, globs = folder.ancestors[0], folder.rules
            rules = root_rules(globs.include, globs.exclude, root, warnings) if gitignore else globs
            return folder._replace(rules=rules, attributes=attribute_chain(root, warnings))
        rules, too_deep, attributes = folder.rules, self.nested_too_deep, folder.attributes
        if gitignore and ".gitignore" in listed:
            rules = with_folder_gitignore(rules, full, shown, rel, warnings, too_deep)
        if ".gitattributes" in listed:
            attributes = with_folder_attributes(attributes, full, shown, rel, warnings, IGNORE_NESTING_LIMIT)
        return folder._replace(rules=rules, attributes=attributes)

    def _visit(self, parent: _Folder, rules: Rules, entry: os.DirEntry[str]) -> _Folder | None:
        """Record one entry of ``parent``'s listing; a subfolder (not a link) is returned to walk."""
        name, full = entry.name, entry.path
        shown = _child(parent.shown, name)
        rel = f"{parent.rel}/{name}" if parent.rel else name
        try:
            is_link = entry.is_symlink()
            if is_link:
                saw_path(full)  # where it leads decides what is walked
            is_dir = os.path.isdir(full) if is_link else entry.is_dir(follow_symlinks=False)
        except OSError as err:
            self.skip(shown, SkipReason.UNREADABLE, err.strerror or str(err))
            return None
        reason = filtered(name, rel, is_dir, rules)
        if reason is not None:
            self.skip(shown + ("/" if is_dir else ""), reason)
            return None
        if is_link:
            self._follow(_Folder(shown, full, rel, rules, parent.ancestors, True, parent.attributes))
            return None
        # ancestors[-1] is the real path of the parent folder: no need to resolve again.
        real = _child(parent.ancestors[-1], name)
        if is_dir:
            return _Folder(shown, full, rel, rules, (*parent.ancestors, real), parent.via_link, parent.attributes)
        kind = self._kind(shown, name, rel, rules, parent.attributes)
        if kind is not None:
            self.add_file(shown, full, parent.via_link, real, True, **kind)
        return None

    def _kind(
        self, shown: str, name: str, rel: str, rules: Rules, attributes: tuple[Attributes, ...]
    ) -> dict[str, bool] | None:
        """:func:`file_kind` with the file's attributes; ``None`` (a skip recorded) when its kind
        leaves it out."""
        marked = marks(rel, attributes) if attributes else {}
        kind = file_kind(shown, name, rel, self.kinds, rules.include, marked, self.named_folders)
        if isinstance(kind, Skip):
            self.skips.append(kind)
            return None
        return kind

    def _follow(self, link: _Folder) -> None:
        """A link found in a folder whose real path is ``link.ancestors[-1]``: scan the file it
        leads to, queue the folder, or record why not."""
        try:
            os.stat(link.full)
        except OSError as err:
            self.skip(link.shown, *stat_failure(err))
            return
        target = os.path.realpath(link.full)
        if not _is_within(target, link.ancestors[0]):
            self.skip(link.shown, SkipReason.OUTSIDE, f"points to {target}")
        elif not os.path.isdir(target):
            kind = self._kind(link.shown, os.path.basename(link.rel), link.rel, link.rules, link.attributes)
            if kind is not None:
                self.add_file(link.shown, link.full, True, None, False, **kind)
        elif any(_is_within(a, target) for a in link.ancestors):
            self.skip(link.shown + "/", SkipReason.CYCLE, f"points to its own ancestor {target}")
        else:
            self.links.append(link._replace(ancestors=(*link.ancestors, target)))

    def found(self) -> Found:
        return Found(self.requests, self.skips, self.warnings, self.nested_too_deep)


def _child(folder: str, name: str) -> str:
    """``os.path.join(folder, name)`` for a name from a listing (never empty, never holding a
    "/"), on POSIX without its generality: the walk makes two such paths per entry.

    Example:
        >>> _child("src", "a.go"), _child("/", "etc"), _child("src/", "a.go"), _child("", "a.go")
        ('src/a.go', '/etc', 'src/a.go', 'a.go')
    """
    if os.sep != "/":  # Windows: drives and two separators, os.path.join knows them
        return os.path.join(folder, name)
    return folder + name if not folder or folder.endswith("/") else f"{folder}/{name}"


def _is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
