"""Where the project is and what changed in it: paths relative to a base folder, and the
files git reports as changed (for ``--changed-since``, ``--staged`` and ``--files-from``).

CI tools name files relative to the repository, whatever folder the scan was started from
and however a PATH was spelled (``./src``, ``src/``, an absolute path): this module makes
those names. Git is run as a subprocess; a missing git, a folder outside any repository or
an unknown revision is a :class:`ChangesError` with a message that says what to do.

Git runs on a repository nobody has reviewed, so no value reaches it where an option could be
(a revision is resolved with ``--end-of-options`` and passed on as its commit id), and the
repository's own configuration may not run programs: ``core.fsmonitor``, hooks, filter drivers,
external diff and textconv commands are switched off for every git call (see :func:`_git`).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from minhashdup.errors import MinhashdupError

if TYPE_CHECKING:
    import subprocess

    from minhashdup.analysis.regions import Project

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


def locate(paths: Iterable[str], start: str | os.PathLike[str] = ".") -> Project:
    """Where ``paths`` are in the project holding ``start`` (see :func:`project_root`): what a
    SARIF report needs to name them relative to the repository, computed before it is written."""
    from minhashdup.analysis.regions import Project  # with the lexers: only for the reports that need it

    return Project.of(project_root(start), {path: real(path) for path in paths})


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
        commit = _verify_commit(top, ref)  # a commit id: never read as an option by the diff
        out |= _names(top, "diff", *_DIFF, "--end-of-options", commit, "--")
        out |= _names(top, "ls-files", "-z", "--others", "--exclude-standard")
    return out


def staged(starts: Sequence[str]) -> set[str]:
    """Files staged for the next commit (added, modified or renamed in the index), as real paths."""
    out: set[str] = set()
    for top in _toplevels(starts):
        out |= _names(top, "diff", *_DIFF, "--cached", "--")
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
    listing = _git(top, *args)
    return {real(os.path.join(top, name)) for name in listing.split("\0") if name}


def _git(folder: str, *args: str) -> str:
    """The output of ``git -C folder args``, run with the repository's programs switched off.

    Raises:
        ChangesError: git is missing, fails, or takes more than two minutes.
    """
    _check_version(folder)
    # diff and ls-files may hash work-tree files, through the repository's filter drivers.
    filters = _filter_drivers(folder) if args[0] in ("diff", "ls-files") else []
    done = _run(folder, args, _safe_env(filters))
    if done.returncode != 0:
        message = _last_line(done)
        if "not a git repository" in message:
            raise ChangesError(f"{folder} is not inside a git repository; changed files come from git")
        raise ChangesError(f"git {args[0]} in {folder} failed: {message}")
    return done.stdout


#: The oldest git that reads settings from ``GIT_CONFIG_COUNT`` (2.31, March 2021): an older one
#: would ignore them and run the repository's programs.
MIN_GIT = (2, 31)


@functools.lru_cache(maxsize=1)
def _check_version(folder: str) -> None:
    """Raise ChangesError for a git older than :data:`MIN_GIT` (checked once per folder and process)."""
    done = _run(folder, ("--version",), dict(os.environ))
    found = re.search(r"(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        raise ChangesError(f"git --version failed: {_last_line(done)}")
    if (int(found[1]), int(found[2])) < MIN_GIT:
        raise ChangesError(
            f"git {found[0]} is older than {'.'.join(map(str, MIN_GIT))}, which minhashdup needs to switch off"
            " the repository's own programs (hooks, fsmonitor, filters); upgrade git"
        )


#: Repository settings that would run a program, switched off (as ``git -c`` would) for each call.
_SAFE_CONFIG = (
    ("core.fsmonitor", "false"),  # a program run on every index refresh
    ("core.hooksPath", os.devnull),  # e.g. post-index-change, run when git rewrites the index
    ("core.quotepath", "off"),  # names as they are, not octal escapes
)

#: Options of every ``git diff`` here: names only, and no program of the repository's (external
#: diff or textconv driver).
_DIFF = ("--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv")


def _safe_env(filters: Iterable[str]) -> dict[str, str]:
    """The environment of a git call: ours, plus :data:`_SAFE_CONFIG` and an empty ``clean`` and
    ``process`` command for each filter driver, passed as ``GIT_CONFIG_KEY_n``/``VALUE_n`` pairs
    (after any the caller set) so that no name or value is ever parsed as ``key=value``.
    """
    settings = list(_SAFE_CONFIG)
    for name in filters:
        settings += [(f"filter.{name}.clean", ""), (f"filter.{name}.process", ""), (f"filter.{name}.required", "false")]
    env = dict(os.environ)
    try:
        first = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        first = 0
    for number, (key, value) in enumerate(settings, first):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    env["GIT_CONFIG_COUNT"] = str(first + len(settings))
    env["GIT_OPTIONAL_LOCKS"] = "0"  # skip optional index refreshes where git honours it (status)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_NO_LAZY_FETCH"] = "1"  # a partial clone fetches nothing (git 2.44+; ignored before)
    return env


def _filter_drivers(folder: str) -> list[str]:
    """Names of the filter drivers the configuration defines (``filter.<name>.clean``...)."""
    done = _run(folder, ("config", "-z", "--name-only", "--get-regexp", r"^filter\."), _safe_env(()))
    if done.returncode not in (0, 1):  # 1: none defined
        raise ChangesError(f"git config in {folder} failed: {_last_line(done)}")
    return sorted({name.split(".", 1)[1].rsplit(".", 1)[0] for name in done.stdout.split("\0") if name.count(".") >= 2})


def _run(folder: str, args: Sequence[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import subprocess  # not at start-up: a scan without a review runs no git

    try:
        return subprocess.run(
            ["git", "--no-pager", "-C", folder, *args],
            env=env,
            stdin=subprocess.DEVNULL,
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


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    """What a failed git call said last (its reason), else its exit status."""
    lines = done.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"
