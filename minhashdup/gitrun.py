"""Git run on a repository nobody has reviewed: for the CI review (:mod:`minhashdup.ci.git`)
and for the walk, which asks which files git tracks (:class:`minhashdup.source.rules.ignore.Tracked`).

No value reaches git where an option could be, and the repository's own configuration may not
run programs: ``core.fsmonitor``, hooks and filter drivers are switched off for every call
(:func:`safe_env`), which needs git 2.31 or later (:data:`MIN_GIT`). Output is read as the file
system's names are (bytes as :func:`os.fsdecode` gives them), so a name git prints is the name a
folder listing shows.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from minhashdup.errors import MinhashdupError

if TYPE_CHECKING:
    import subprocess

_GIT_TIMEOUT = 120


class GitError(MinhashdupError):
    """git could not answer: missing, too old, failing or too slow. ``said`` is the last line
    git wrote on a failure (its reason), else ``""``."""

    said = ""


class GitMissingError(GitError):
    """No ``git`` on PATH."""


def git(folder: str, *args: str) -> str:
    """The output of ``git -C folder args``, run with the repository's programs switched off.

    Raises:
        GitError: git is missing, older than :data:`MIN_GIT`, fails, or takes more than two minutes.
    """
    check_version(folder)
    # diff and ls-files may hash work-tree files, through the repository's filter drivers.
    filters = filter_drivers(folder) if args[0] in ("diff", "ls-files") else []
    done = _run(folder, args, safe_env(filters))
    if done.returncode != 0:
        said = _last_line(done)
        err = GitError(f"git {args[0]} in {folder} failed: {said}")
        err.said = said
        raise err
    return done.stdout


#: The oldest git that reads settings from ``GIT_CONFIG_COUNT`` (2.31, March 2021): an older one
#: would ignore them and run the repository's programs.
MIN_GIT = (2, 31)


@functools.lru_cache(maxsize=1)
def check_version(folder: str) -> None:
    """Raise GitError for a git older than :data:`MIN_GIT` (checked once per folder and process)."""
    done = _run(folder, ("--version",), dict(os.environ))
    found = re.search(r"(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        raise GitError(f"git --version failed: {_last_line(done)}")
    if (int(found[1]), int(found[2])) < MIN_GIT:
        raise GitError(
            f"git {found[0]} is older than {'.'.join(map(str, MIN_GIT))}, which minhashdup needs to switch off"
            " the repository's own programs (hooks, fsmonitor, filters); upgrade git"
        )


#: Repository settings that would run a program, switched off (as ``git -c`` would) for each call.
_SAFE_CONFIG = (
    ("core.fsmonitor", "false"),  # a program run on every index refresh
    ("core.hooksPath", os.devnull),  # e.g. post-index-change, run when git rewrites the index
    ("core.quotepath", "off"),  # names as they are, not octal escapes
    ("safe.bareRepository", "explicit"),  # files of the tree laid out as a bare repository (git 2.38+)
)


def safe_env(filters: Iterable[str]) -> dict[str, str]:
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


def filter_drivers(folder: str) -> list[str]:
    """Names of the filter drivers the configuration defines (``filter.<name>.clean``...)."""
    done = _run(folder, ("config", "-z", "--name-only", "--get-regexp", r"^filter\."), safe_env(()))
    if done.returncode not in (0, 1):  # 1: none defined
        raise GitError(f"git config in {folder} failed: {_last_line(done)}")
    return sorted({name.split(".", 1)[1].rsplit(".", 1)[0] for name in done.stdout.split("\0") if name.count(".") >= 2})


def _run(folder: str, args: Sequence[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import subprocess  # not at start-up: most scans run no git

    try:
        return subprocess.run(
            ["git", "--no-pager", "-C", folder, *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            encoding=sys.getfilesystemencoding(),
            errors=sys.getfilesystemencodeerrors(),
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise GitMissingError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} in {folder} took more than {_GIT_TIMEOUT} s") from None


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    """What a failed git call said last (its reason: the last ``fatal:`` or ``error:`` line, not
    a hint after it), else its exit status."""
    lines = done.stderr.strip().splitlines()
    reasons = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines
    return reasons[-1] if reasons else f"exit status {done.returncode}"
