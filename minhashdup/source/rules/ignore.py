"""The walk's rules for leaving files out: user globs, ``.gitignore`` files, version-control folders.

:class:`Rules` is what is in force under one folder; :func:`filtered` says why an entry is
left out (the skip reason), or ``None`` to keep it. Globs and ignore files use gitignore
syntax, matched by pathspec.

Bounded whatever a repository holds: an ignore file is read only if it is a regular file of at
most :data:`.safeio.IGNORE_FILE_LIMIT` bytes (:func:`.safeio.read_rules_file`), at most
:data:`IGNORE_NESTING_LIMIT` apply to a path, and patterns are matched by RE2 in linear time
(``re`` took 41 s on ``**/a/**/a/**/a/**/a/**/a/**/a/b`` over 60 folders named ``a``). A rule not
applied is named in a warning: more files are scanned.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple
from warnings import catch_warnings, simplefilter, warn_explicit

from minhashdup.errors import ConfigError
from minhashdup.result import SkipReason
from minhashdup.source.rules.globs import as_git, git_sets, inside, matchable, posix_class
from minhashdup.source.safeio import git_lines, read_rules_file
from minhashdup.source.witnesses import saw_env, saw_exists, saw_stat, saw_unanswered

if TYPE_CHECKING:  # imported when first compiling: a warm scan, its walk remembered, needs none of it
    import pathspec

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs"})

#: The most ignore files in force on one path. Each is matched against every path under it, so a
#: chain of N folders each holding a .gitignore cost N**3 (N = 1,000: 18 s); one nested deeper
#: is not applied, with a warning.
IGNORE_NESTING_LIMIT = 64

#: pathspec's matching engine: RE2 matches in linear time whatever a pattern holds (its "best"
#: choice would depend on what else is installed, and its pure-Python one backtracks).
BACKEND = "re2"


class Ignore(NamedTuple):
    """One ignore file in force. A path relative to the root, ``rel``, is matched against
    ``spec`` as ``prefix + rel[strip:]``: relative to the folder that holds the file, found by
    slicing strings (``os.path.relpath`` per file and ignore file made deep trees cubic)."""

    spec: pathspec.GitIgnoreSpec
    prefix: str  # an ignore file above the root: the root's path relative to its folder, "/"-ended
    strip: int  # an ignore file inside the root: len(its folder's rel) + 1
    path: str = ""  # an ignore file above the root: where it was read (for a warning)


@dataclasses.dataclass(frozen=True)
class Rules:
    """Glob rules in force under one folder: user globs, the .gitignore chain, what git tracks."""

    include: pathspec.GitIgnoreSpec | None
    exclude: pathspec.GitIgnoreSpec | None
    ignores: tuple[Ignore, ...]
    tracked: Tracked | None = None


class Tracked:
    """What git tracks under one root (``root_real``), which no ``.gitignore`` leaves out, as in
    git (else a change could hide a copy from its gate with ``.gitignore`` and ``git add -f``).
    Asked of git (``ls-files``) the first time the walk would leave an entry out as gitignored;
    the index is a witness of the walk. Where git cannot answer, every entry is kept, with a
    warning. A folder left out but holding tracked files is walked for those only, as in git.
    """

    def __init__(self, root_real: str, top: str, warnings: list[str]) -> None:
        self.root, self.top, self.warnings = root_real, top, warnings
        self.files: frozenset[str] | None = None  # relative to the root; None: not asked yet
        self.folders: frozenset[str] = frozenset()  # every folder holding a tracked file
        self.walked_for_tracked: set[str] = set()  # ignored folders walked for their tracked files
        self.unknown = False  # git could not answer: every entry is kept

    def keeps(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel``, left out by the rules, is kept: tracked, or a folder holding tracked files."""
        if self.files is None:
            self.files, self.folders = self._ask()
        if self.unknown:
            return True
        if not is_dir:
            return rel in self.files
        if rel in self.folders or rel in self.files:  # in files: a tracked link to a folder
            self.walked_for_tracked.add(rel)
            return True
        return False

    def under_ignored(self, rel: str) -> bool:
        """Whether ``rel`` lies in a folder walked only for its tracked files."""
        return bool(self.walked_for_tracked) and rel.rpartition("/")[0] in self.walked_for_tracked

    def _ask(self) -> tuple[frozenset[str], frozenset[str]]:
        from minhashdup import gitrun

        saw_env("GIT_")  # GIT_DIR, GIT_INDEX_FILE...: where git looks
        try:
            top, index = gitrun.git(
                self.root, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-path", "index"
            ).splitlines()
            if os.path.realpath(top) != self.top:  # GIT_DIR set elsewhere: names would not match
                raise gitrun.GitError(f"git's work tree is {top}, not the repository at {self.top}")
            saw_stat(index)  # before reading: a file added or removed changes the index's stat
            names = gitrun.git(self.root, "ls-files", "-z", "--cached", "--recurse-submodules").split("\0")
        except (gitrun.GitError, ValueError) as err:
            saw_unanswered(f"files git tracks under {self.root}")
            self.warnings.append(
                f"{self.root}: cannot list the files git tracks ({err}); what .gitignore names is scanned too"
            )
            self.unknown = True
            return frozenset(), frozenset()
        files = frozenset(name for name in names if name)
        folders: set[str] = set()
        for name in files:
            folder = name.rpartition("/")[0]
            while folder and folder not in folders:  # up to a folder known already
                folders.add(folder)
                folder = folder.rpartition("/")[0]
        return files, frozenset(folders)


def compile_globs(globs: Sequence[str], name: str) -> pathspec.GitIgnoreSpec | None:
    """Compile gitignore-style globs; ``None`` when there are none.

    Raises:
        ConfigError: a glob is not a valid gitignore pattern (naming the parameter ``name``).

    Example:
        >>> compile_globs(["*.go", "!doc.go"], "include").match_file("src/doc.go")
        False
    """
    if not globs:
        return None
    try:
        return _compile(globs)
    except ValueError as exc:
        raise ConfigError("{0}: {why}", name, why=str(exc)) from None


def _compile(lines: Sequence[str], per_path: bool = False) -> pathspec.GitIgnoreSpec:
    """gitignore patterns as pathspec matches them, read as git reads them (:mod:`.globs`);
    ``per_path``: an ignore file's, judging each path by the last line that matches it
    (:func:`.globs.as_git`), where a line git matches nothing with is blank.

    Raises:
        ValueError: a pattern is invalid.
    """
    import pathspec

    read = [line if line.startswith("#") else git_sets(inside(line)) for line in lines]  # a comment: as is
    if None in read and not per_path:
        bad = lines[read.index(None)]
        raise ValueError(f"invalid glob {bad!r} (a set git never closes, or of / alone, or a last \\)")
    try:
        # pathspec compiles each pattern with re too, which warns of sets it may read otherwise one
        # day ([[], [a&&b]): RE2 matches them, as git reads them (POSIX classes: posix_class).
        with catch_warnings(record=True) as heard:
            simplefilter("always")
            texts = ["" if line is None else line for line in read]
            patterns = pathspec.GitIgnoreSpec.from_lines(texts, backend="simple").patterns  # RE2's set: once, below
            spec = pathspec.GitIgnoreSpec(as_git(list(patterns), per_path), backend=BACKEND)
    except Exception as exc:  # pathspec raises several types for bad patterns
        raise ValueError(f"invalid glob ({exc}); use gitignore syntax") from None
    for other in (w for w in heard if not issubclass(w.category, FutureWarning)):  # not ours to hide
        warn_explicit(other.message, other.category, other.filename, other.lineno)
    return spec


def filtered(name: str, rel: str, is_dir: bool, rules: Rules) -> SkipReason | None:
    """Why the entry ``name`` (at ``rel`` under the root) is left out, or ``None`` to keep it."""
    tracked, as_listed, rel = rules.tracked, rel, matchable(rel)
    if name in VCS_DIRS and (name == ".git" or tracked is None or not tracked.keeps(as_listed, is_dir)):
        return SkipReason.VCS  # a file too (a worktree's ".git"); another VCS's, unless git tracks files in it
    probe = rel + "/" if is_dir else rel
    if rules.exclude is not None and rules.exclude.match_file(probe):
        return SkipReason.EXCLUDED
    ignored = (tracked is not None and tracked.under_ignored(as_listed)) or _ignored(rel, is_dir, rules.ignores)
    if ignored and (tracked is None or not tracked.keeps(as_listed, is_dir)):  # git's names: as listed
        return SkipReason.GITIGNORED
    if not is_dir and rules.include is not None and not rules.include.match_file(rel):
        return SkipReason.NOT_INCLUDED
    return None


def _ignored(rel: str, is_dir: bool, ignores: Iterable[Ignore]) -> bool:
    # Deeper .gitignore files override shallower ones: the last decisive match wins.
    verdict = False
    suffix = "/" if is_dir else ""
    for ignore in ignores:
        result = ignore.spec.check_file(ignore.prefix + rel[ignore.strip :] + suffix)
        if result.include is not None:
            verdict = bool(result.include)
    return verdict


def root_rules(
    include: pathspec.GitIgnoreSpec | None, exclude: pathspec.GitIgnoreSpec | None, root_real: str, warnings: list[str]
) -> Rules:
    """The rules at the root ``root_real``: the globs, the .gitignore files from the enclosing
    repository's top down to it, and, in a repository, what git tracks (:class:`Tracked`)."""
    top, folders = repository_folders(root_real)
    tracked = Tracked(root_real, top, warnings) if saw_exists(os.path.join(top, ".git")) else None
    chain: list[Ignore] = []
    # git follows a link for .git/info/exclude (not part of the tree), never for a .gitignore.
    info_path = os.path.join(top, ".git", "info", "exclude")
    info = _read_ignore_file(info_path, None, warnings, follow=True)
    if info is not None:
        chain.append(Ignore(info, prefix_of(root_real, top), 0, info_path))
    for folder in folders:
        spec = _read_ignore_file(os.path.join(folder, ".gitignore"), None, warnings)
        if spec is not None:
            chain.append(Ignore(spec, prefix_of(root_real, folder), 0, os.path.join(folder, ".gitignore")))
    return Rules(include, exclude, named_root(chain, root_real, warnings), tracked)


def named_root(chain: Sequence[Ignore], root_real: str, warnings: list[str]) -> tuple[Ignore, ...]:
    """The ignore files in force at a root, where they leave out the root or a folder above it:
    a folder named on the command line is scanned, as a file named there is (``scan .venv/lib/x``
    where ``.venv/`` is ignored), with a warning. A rule that does is applied only to what lies
    inside the root, as ripgrep does: a name (``build/``) to the folders of that name inside it
    (:func:`_inside`), a path (``/build``) not at all. Nothing changes where the root is not left out."""
    above = [ignore for ignore in chain if ignore.prefix]
    depth = max((ignore.prefix.count("/") for ignore in above), default=0)
    levels = [[i._replace(prefix=_up(i.prefix, up)) for i in above if i.prefix.count("/") > up] for up in range(depth)]
    if not any(_ignored("", False, level) for level in levels):  # the root and each folder above it
        return tuple(chain)
    kept, dropped = [], list[str]()
    for ignore in chain:
        spec, patterns, before = type(ignore.spec), [], len(dropped)
        ups = [_up(ignore.prefix, up) for up in range(ignore.prefix.count("/"))]
        for p in ignore.spec.patterns:  # each matched by RE2 on its own: pathspec's own uses re
            if p.include and any(spec([p], backend=BACKEND).match_file(folder) for folder in ups):
                dropped.append(f"{p.pattern!r} in {ignore.path}")
                patterns += _inside(str(p.pattern), ignore.prefix)
            else:
                patterns.append(p)
        kept.append(ignore._replace(spec=spec(patterns, backend=BACKEND)) if len(dropped) > before else ignore)
    n = len(dropped)
    rules = f"rule {dropped[0]} leaves" if n == 1 else f"rules {dropped[0]} and {n - 1} more leave"
    warnings.append(f"{root_real}: scanned as named on the command line, though ignore {rules} it out")
    return tuple(kept)


def _up(prefix: str, up: int) -> str:
    """The folder ``up`` levels above the one at ``prefix`` (``"a/b/c/"``, 1: ``"a/b/"``)."""
    return prefix.rsplit("/", up + 1)[0] + "/"


def _inside(pattern: str, prefix: str) -> list[Any]:
    """A rule that leaves out a root (at ``prefix`` from its file's folder), as it applies inside
    the root: a name (no ``/`` but a last one, or after a first ``**/``) anchored below the root
    (``build/`` as ``/PREFIX**/build/``); a path, nothing."""
    body = pattern.removeprefix("**/")
    if "/" in body.rstrip("/"):
        return []
    below = "".join("\\" + c if c in "\\*?[" else c for c in prefix)
    return list(_compile([f"/{below}**/{body}"], per_path=True).patterns)


def repository_folders(root_real: str) -> tuple[str, list[str]]:
    """The top of the repository holding ``root_real`` (the root itself outside one) and the
    folders from that top down to the root, whose rules files apply to the root's files."""
    folders = [root_real]
    top = root_real
    while not saw_exists(os.path.join(top, ".git")):
        parent = os.path.dirname(top)
        if parent == top:  # not inside a repository: only the root's own files
            return root_real, [root_real]
        top = parent
        folders.append(top)
    return top, folders[::-1]


def with_folder_gitignore(
    rules: Rules, full: str, shown: str, rel: str, warnings: list[str], too_deep: list[str]
) -> Rules:
    """The rules for the entries of the folder at ``full``: ``rules`` and its own .gitignore.

    ``shown`` is the folder as the user sees it, ``rel`` its path relative to the root. A
    .gitignore nested under :data:`IGNORE_NESTING_LIMIT` others is not read: its path is
    appended to ``too_deep`` (see :func:`nesting_warning`).
    """
    path, shown = os.path.join(full, ".gitignore"), os.path.join(shown, ".gitignore")
    if len(rules.ignores) >= IGNORE_NESTING_LIMIT:  # one added changes its folder's stat, a witness
        if os.path.lexists(path):
            too_deep.append(shown)
        return rules
    spec = _read_ignore_file(path, shown, warnings)
    if spec is None:
        return rules
    return dataclasses.replace(rules, ignores=(*rules.ignores, Ignore(spec, "", len(rel) + 1)))


def nesting_warning(too_deep: Sequence[str]) -> str:
    """The one warning naming the .gitignore files left out for lying too deep."""
    first, more = too_deep[0], len(too_deep) - 1
    return (
        f"{first}"
        + (f" and {more} more .gitignore files" if more else "")
        + f" lie under {IGNORE_NESTING_LIMIT} other ignore files; their rules are not applied,"
        " so the files they list are scanned"
    )


def prefix_of(root_real: str, folder: str) -> str:
    """``root_real`` relative to its ancestor ``folder``, as a prefix for paths relative to the root."""
    rel = os.path.relpath(root_real, folder)
    return "" if rel == os.curdir else matchable(rel.replace(os.sep, "/")) + "/"


def _read_ignore_file(
    path: str, shown: str | None, warnings: list[str], follow: bool = False
) -> pathspec.GitIgnoreSpec | None:
    """The rules of one ignore file (:func:`read_rules_file`); ``None`` when there is none, or with
    a warning when not usable: a pattern that cannot be compiled leaves the whole file out; a line
    not UTF-8 or with a POSIX class (:func:`posix_class`), which pathspec cannot match as git
    does, is left out alone (more files scanned), a negation with the whole file."""
    text = read_rules_file(path, shown, warnings, follow)
    if text is None:
        return None
    lines: list[str] | None = git_lines(text)
    for why, unread in (
        ("not UTF-8", lambda line: matchable(line) != line),  # bytes not UTF-8 (surrogateescape)
        ("has a POSIX class (like [:alpha:]), which pathspec would read as another set", _posix_rule),
    ):
        lines = _without(lines, why, unread, shown or path, warnings) if lines is not None else None
    if lines is None:
        return None
    try:
        return _compile(lines, per_path=True)
    except ValueError as err:  # a pattern invalid or too nested: a hostile .gitignore must not stop the scan
        warnings.append(f"{shown or path}: {err}; its rules are not applied, so the files it lists are scanned")
        return None


def _posix_rule(line: str) -> bool:
    """Whether the line of an ignore file is a rule with a POSIX class (a comment is none)."""
    return not line.startswith("#") and posix_class(line)


def _without(
    lines: list[str], why: str, unread: Callable[[str], bool], name: str, warnings: list[str]
) -> list[str] | None:
    """``lines`` with those pathspec cannot match as git does (``unread``) blanked, named in a
    warning: without a rule that leaves files out, more files are scanned, never fewer. ``None``
    when one is a negation, as without it the file's own rules could leave out what git keeps:
    none of them applies (what it brings back from an ignore file above stays left out, as when
    the file cannot be read)."""
    bad = [n for n, line in enumerate(lines) if unread(line)]
    if not bad:
        return lines
    numbers = ", ".join(str(n + 1) for n in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    negation = any(lines[n].startswith("!") for n in bad)
    warnings.append(
        f"{name}: line {numbers} {why}"
        + (", in a negation; its rules are" if negation else "; that rule is")
        + " not applied, so the files it lists are scanned"
    )
    left_out = set(bad)
    return None if negation else ["" if n in left_out else line for n, line in enumerate(lines)]
