"""Where the project is and what changed in it: paths relative to a base folder, and the
files git reports as changed (for ``--changed-since``, ``--staged`` and ``--files-from``).

CI tools name files relative to the repository, whatever folder the scan was started from
and however a PATH was spelled (``./src``, ``src/``, an absolute path): this module makes
those names. Git is run as a subprocess; a missing git, a folder outside any repository or
an unknown revision is a :class:`ChangesError` with a message that says what to do.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from minhashdup.errors import MinhashdupError

_GIT_TIMEOUT = 120


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


def git_toplevel(folder: str) -> str:
    """The top folder of the repository holding ``folder`` (raises :class:`ChangesError`)."""
    return real(_git(folder, "rev-parse", "--show-toplevel").strip())


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
        _verify_commit(top, ref)
        out |= _names(top, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", ref, "--")
        out |= _names(top, "ls-files", "-z", "--others", "--exclude-standard")
    return out


def staged(starts: Sequence[str]) -> set[str]:
    """Files staged for the next commit (added, modified or renamed in the index), as real paths."""
    out: set[str] = set()
    for top in _toplevels(starts):
        out |= _names(top, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--cached", "--")
    return out


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


def _verify_commit(top: str, ref: str) -> None:
    try:
        _git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    except ChangesError:
        shallow = Path(top, ".git", "shallow").exists()
        hint = "; the clone is shallow: fetch more history (actions/checkout: fetch-depth: 0)" if shallow else ""
        raise ChangesError(f"--changed-since {ref}: not a commit of the repository {top}{hint}") from None


def _names(top: str, *args: str) -> set[str]:
    listing = _git(top, *args)
    return {real(os.path.join(top, name)) for name in listing.split("\0") if name}


def _git(folder: str, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", folder, "-c", "core.quotepath=off", *args],
            capture_output=True,
            text=True,
            errors="surrogateescape",
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise ChangesError("git is not installed (or not on PATH); it is needed to list changed files") from None
    except subprocess.TimeoutExpired:
        raise ChangesError(f"git {args[0]} in {folder} took more than {_GIT_TIMEOUT} s") from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        if "not a git repository" in message:
            raise ChangesError(f"{folder} is not inside a git repository; changed files come from git")
        raise ChangesError(f"git {args[0]} in {folder} failed: {message}")
    return done.stdout
