"""Where the project is and what changed in it: paths relative to a base folder, and the
files git reports as changed (for ``--changed-since``, ``--staged`` and ``--files-from``).

CI tools name files relative to the repository, whatever folder the scan was started from
and however a PATH was spelled (``./src``, ``src/``, an absolute path): this module makes
those names. Git is run as a subprocess; a missing git, a folder outside any repository or
an unknown revision is a :class:`ChangesError` with a message that says what to do.

Git runs on a repository nobody has reviewed, so no value reaches it where an option could be
(a revision is resolved with ``--end-of-options`` and passed on as its commit id), and the
repository's own configuration may not run programs: ``core.fsmonitor``, hooks, filter drivers,
external diff and textconv commands are switched off for every git call (:mod:`minhashdup.gitrun`).
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from minhashdup import gitrun
from minhashdup.errors import ConfigError, MinhashdupError

if TYPE_CHECKING:
    from minhashdup.analysis.regions import Project


class ChangesError(MinhashdupError):
    """The changed files could not be listed (no git, not a repository, unknown revision)."""


def real(path: str | os.PathLike[str]) -> str:
    """Absolute path with every folder resolved, the file name itself kept.

    A symlinked file keeps its own name (git and users know it by that name); a symlinked
    folder on the way (a checkout reached through a link) is resolved, so that two spellings
    of one file give one name.
    """
    absolute = os.path.abspath(os.fspath(path))
    return os.path.join(_real_folder(os.path.dirname(absolute)), os.path.basename(absolute))


@functools.lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    # Reports name thousands of files in a few hundred folders, each resolved by an lstat per
    # component: once per folder is enough within one run.
    return os.path.realpath(folder)


def relative(path: str | os.PathLike[str], base: str) -> str:
    """``path`` relative to the folder ``base`` (a :func:`real` path), with ``/`` separators.

    Example:
        >>> relative("/repo/src/a.go", "/repo")
        'src/a.go'
    """
    return os.path.relpath(real(path), base).replace(os.sep, "/")


def project_root(start: str | os.PathLike[str] = ".") -> str:
    """The top folder of the git repository holding ``start``, else ``start`` itself (real path)."""
    folder = real(start)
    try:
        return git_toplevel(folder)
    except ChangesError:
        return folder


def locate(paths: Iterable[str], start: str | os.PathLike[str] = ".") -> Project:
    """Where ``paths`` are in the project holding ``start`` (see :func:`project_root`): what a
    SARIF report needs to name them relative to the repository, computed before it is written."""
    from minhashdup.analysis.regions import Project  # with the lexers: only for the reports that need it

    return Project.of(project_root(start), {path: real(path) for path in paths})


def git_toplevel(folder: str) -> str:
    """The top folder of the repository holding ``folder`` (raises :class:`ChangesError`): the
    nearest folder up from it with a ``.git``, which git must agree is its top (unless ``GIT_DIR``
    or ``GIT_WORK_TREE`` says where the repository is). A tree can hold
    files git reads as a repository of their own (``HEAD``, ``config``, ``objects/``: a bare one,
    its work tree set by its own config), which would answer what changed instead."""
    top = real(_git(folder, "rev-parse", "--show-toplevel").strip())
    if "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ:  # the user's own choice of repository
        return top
    nearest = os.path.realpath(folder)
    while not os.path.lexists(os.path.join(nearest, ".git")) and os.path.dirname(nearest) != nearest:
        nearest = os.path.dirname(nearest)
    if os.path.realpath(top) != nearest:
        raise ChangesError(
            f"git takes {top} as the repository of {folder}, not the folder with the .git above it ({nearest});"
            " files in the tree that git reads as a repository are refused"
        )
    return top


def changed_since(ref: str, starts: Sequence[str]) -> set[str]:
    """Files changed since commit ``ref``: committed after it, staged, unstaged or untracked.

    Args:
        ref: a revision git understands (``HEAD~1``, ``origin/main``, a hash).
        starts: folders or files; each one's repository is asked (once per repository).

    Returns:
        :func:`real` paths of the changed files (deleted ones included: they match nothing).

    Raises:
        ChangesError: git is missing, a start is outside any repository, or ``ref`` is not a commit.
    """
    out: set[str] = set()
    for top in _toplevels(starts):
        commit = _verify_commit(top, ref)  # a commit id: never read as an option by the diff
        out |= _changed(top, "--end-of-options", commit, "--")
        out |= _names(top, "ls-files", "-z", "--others", "--exclude-standard")
    return out


def staged(starts: Sequence[str]) -> set[str]:
    """Files staged for the next commit (added, modified or renamed in the index), as real paths."""
    out: set[str] = set()
    for top in _toplevels(starts):
        out |= _changed(top, "--cached", "--")
    return out


#: The most characters :func:`read_lines` reads (a million paths of 60 characters fit): a list
#: without end (``/dev/zero``, a stream that never closes) is refused, not read into memory.
LIST_CHARS = 64 * 2**20


def read_lines(source: str) -> tuple[str, ...]:
    """The lines of the list of files ``source`` (``--files-from``; ``-``: stdin; a pipe too, as
    ``<(git diff --name-only)``), at most :data:`LIST_CHARS` characters.

    Raises:
        ConfigError: it cannot be read, or it is longer.
    """
    try:
        if source == "-":
            text = sys.stdin.read(LIST_CHARS + 1)
        else:
            with open(source, encoding="utf-8", errors="surrogateescape") as handle:
                text = handle.read(LIST_CHARS + 1)
    except OSError as err:
        raise ConfigError(f"--files-from {source}: cannot be read ({err.strerror or err})") from None
    if len(text) > LIST_CHARS:
        raise ConfigError(f"--files-from {source}: more than {LIST_CHARS:,} characters; is it a list of files?")
    return tuple(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))  # stdin keeps a lone \r


def read_list(lines: Iterable[str], base: str = ".") -> set[str]:
    """Real paths of a list of files, one per line, relative to ``base`` (blank lines ignored)."""
    out = set()
    for line in lines:
        name = line.rstrip("\r\n")
        if name.strip():
            out.add(real(os.path.join(base, name)))
    return out


def _toplevels(starts: Sequence[str]) -> list[str]:
    tops: list[str] = []
    for start in starts:
        folder = start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start))
        top = git_toplevel(real(folder))
        if top not in tops:
            tops.append(top)
    return tops


def _verify_commit(top: str, ref: str) -> str:
    """The commit id ``ref`` names in the repository ``top`` (a ref named ``--output=x`` is a name)."""
    try:
        commit = _git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").strip()
    except ChangesError:
        shallow = os.path.exists(os.path.join(top, ".git", "shallow"))
        hint = "; the clone is shallow: fetch more history (actions/checkout: fetch-depth: 0)" if shallow else ""
        raise ChangesError(
            "{0} {ref}: not a commit of the repository {top}{hint}", "changed_since", ref=ref, top=top, hint=hint
        ) from None
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        raise ChangesError(
            "{0} {ref}: git rev-parse in {top} gave {commit!r}, not a commit id; name a branch, tag or commit hash",
            "changed_since",
            ref=ref,
            top=top,
            commit=commit,
        )
    return commit


def _names(top: str, *args: str) -> set[str]:
    """The files git lists, as real paths; a folder it lists (a repository inside the tree, not
    tracked) stands for every file in it: git names no file there."""
    out: set[str] = set()
    for name in _git(top, *args).split("\0"):
        path = os.path.join(top, name)
        if name:
            out |= _inside(path) if os.path.isdir(path) and not os.path.islink(path) else {real(path)}
    return out


def _changed(top: str, *selection: str) -> set[str]:
    """The files ``git diff`` finds changed (``selection``: a commit, or ``--cached``), as real
    paths. A submodule is named by its folder alone: one the change adds stands for every file in
    it, one whose commit it moves for the files that differ in it from the commit before (all of
    them when the submodule cannot say)."""
    fields = _git(top, "diff", "--raw", "--no-abbrev", *_DIFF_SAFE, *selection).split("\0")
    out: set[str] = set()
    for meta, name in zip(fields[0:-1:2], fields[1::2], strict=True):
        old_mode, new_mode, old, _, _ = meta.lstrip(":").split(" ")
        path = os.path.join(top, name)
        if new_mode != _GITLINK or not os.path.isdir(path):
            out.add(real(path))
        elif old_mode != _GITLINK:  # added (or a file made a submodule)
            out |= _inside(path)
        else:
            try:
                out |= _names(path, "diff", *_DIFF, "--end-of-options", old, "--")
            except ChangesError:  # the commit before is not in the submodule's clone
                out |= _inside(path)
    return out


#: The mode git gives a submodule's entry (a "gitlink").
_GITLINK = "160000"


def _inside(folder: str) -> set[str]:
    """Every file under ``folder`` (a submodule, a repository), its ``.git`` left out, as real paths."""
    out: set[str] = set()
    for here, subfolders, files in os.walk(folder):
        subfolders[:] = [d for d in subfolders if d != ".git"]
        out.update(real(os.path.join(here, f)) for f in files if f != ".git")
    return out


def _git(folder: str, *args: str) -> str:
    """The output of ``git -C folder args``, run with the repository's programs switched off
    (:func:`minhashdup.gitrun.git`).

    Raises:
        ChangesError: git is missing, fails, or takes more than two minutes.
    """
    try:
        return gitrun.git(folder, *args)
    except gitrun.GitError as err:
        if "not a git repository" in err.said:
            raise ChangesError(f"{folder} is not inside a git repository; changed files come from git") from None
        if isinstance(err, gitrun.GitMissingError):
            raise ChangesError(f"{err}; it is needed to list changed files") from None
        raise ChangesError(str(err)) from None


#: Options of every ``git diff`` here: NUL-separated, no renames, and no program of the
#: repository's (external diff or textconv driver); :data:`_DIFF` lists names only.
_DIFF_SAFE = ("-z", "--no-renames", "--no-ext-diff", "--no-textconv")
_DIFF = ("--name-only", *_DIFF_SAFE)
