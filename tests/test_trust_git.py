"""Git on an untrusted repository: no value read as an option, no program of the repository's run,
no git failure taken for "nothing changed" (issue 11, item 4). Each test uses a real git repository.
"""

from __future__ import annotations

import json
import os
import random
import stat
import subprocess
from pathlib import Path

import pytest

from minhashdup import gitrun
from minhashdup.errors import ExitCode

from .conftest import GIT_ENV, go_file, near_copy, render_go, run


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Plain git, as a user would run it (the repository's configuration in force)."""
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed repository (the current folder) holding a near-duplicate pair; ``copy.go``
    is then changed (a stat-dirty, unstaged change), so that the pair touches a changed file."""
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    rng = random.Random(5)
    orig = go_file(rng, 10)
    path = tmp_path / "repo"
    path.mkdir()
    (path / "orig.go").write_text(render_go(orig))
    (path / "copy.go").write_text(render_go(near_copy(orig, rng, 3)))
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")
    with open(path / "copy.go", "a") as handle:
        handle.write("\n// changed\n")
    monkeypatch.chdir(path)
    return path


def marker_script(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A program that records that it ran (in the returned marker file) and fails."""
    marker = tmp_path / f"{name}.ran"
    script = tmp_path / f"{name}.sh"
    script.write_text(f"#!/bin/sh\necho \"$@\" >> '{marker}'\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, marker


def scan_changed(*args: str) -> tuple[int, dict[str, object], str]:
    code, out, err = run("scan", ".", "--exact", "-q", "-f", "json", "--fail-on-pairs", *args)
    assert code in (ExitCode.OK, ExitCode.PAIRS_FOUND), err
    return code, json.loads(out), err


def test_a_tag_named_like_an_option_is_a_name_and_writes_nothing(repo: Path, tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    ref = f"--output={pwned}"
    git(repo, "update-ref", f"refs/tags/{ref}", "HEAD")  # `git tag` refuses the name; a ref is enough
    code, doc, _ = scan_changed("--changed-since", ref)
    assert not pwned.exists()
    # The tag is the base commit: copy.go changed since it, so the pair is reported and the gate fails.
    assert code == ExitCode.PAIRS_FOUND
    assert doc["stats"]["changes"] == {"files": 1, "pairs_left_out": 0, "unchecked": 0, "unpaired": 0}  # type: ignore[index]
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [("./copy.go", "./orig.go")]  # type: ignore[attr-defined]


@pytest.mark.parametrize("ref", ["--output=x", "--all", "-p", "--no-index"])
def test_an_option_that_names_no_commit_is_a_usage_error(repo: Path, ref: str) -> None:
    code, out, err = run("scan", ".", "-q", "--fail-on-pairs", "--changed-since", ref)
    assert code == ExitCode.USAGE and out == ""
    assert err == f"minhashdup: error: --changed-since {ref}: not a commit of the repository {repo}\n"
    assert not (repo / "x").exists()


def test_core_fsmonitor_of_the_repository_does_not_run(repo: Path, tmp_path: Path) -> None:
    script, marker = marker_script(tmp_path, "fsmonitor")
    git(repo, "config", "core.fsmonitor", str(script))
    code, doc, _ = scan_changed("--changed-since", "HEAD")
    assert not marker.exists()
    assert code == ExitCode.PAIRS_FOUND and doc["stats"]["changes"]["files"] == 1  # type: ignore[index]
    git(repo, "diff", "--name-only", "HEAD")  # the setting is live: plain git runs it
    assert marker.exists()


@pytest.mark.parametrize("kind", ["clean", "process"])
def test_a_filter_driver_of_the_repository_does_not_run(repo: Path, tmp_path: Path, kind: str) -> None:
    script, marker = marker_script(tmp_path, "filter")
    (repo / ".git" / "info" / "attributes").write_text("*.go filter=evil.one\n")
    git(repo, "config", f"filter.evil.one.{kind}", str(script))
    git(repo, "config", "filter.evil.one.required", "true")
    code, doc, _ = scan_changed("--changed-since", "HEAD")
    assert not marker.exists()
    assert code == ExitCode.PAIRS_FOUND and doc["stats"]["changes"]["files"] == 1  # type: ignore[index]
    subprocess.run(["git", "diff", "--name-only", "HEAD"], capture_output=True, check=False)
    assert marker.exists()  # the driver is live: plain git runs it


def test_a_hook_of_the_repository_does_not_run(repo: Path, tmp_path: Path) -> None:
    script, marker = marker_script(tmp_path, "hook")
    hook = repo / ".git" / "hooks" / "post-index-change"  # run when git rewrites the index
    hook.write_text(script.read_text())
    hook.chmod(0o755)

    def stat_dirty() -> None:  # same content, another mtime: git diff refreshes and rewrites the index
        mtime = (repo / "orig.go").stat().st_mtime - 10
        os.utime(repo / "orig.go", (mtime, mtime))

    stat_dirty()
    code, _, _ = scan_changed("--changed-since", "HEAD")
    assert code == ExitCode.PAIRS_FOUND and not marker.exists()
    stat_dirty()
    git(repo, "diff", "--name-only", "HEAD")
    assert marker.exists()  # the hook is live: plain git runs it


def fake_git(folder: Path, monkeypatch: pytest.MonkeyPatch, argument: str, then: str) -> None:
    """Put a ``git`` first on PATH that runs the shell commands ``then`` when called with
    ``argument``, and the real git otherwise."""
    real_git = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout
    fake = folder / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(
        f'#!/bin/sh\nfor a in "$@"; do [ "$a" = {argument} ] && {{ {then}; }}; done\nexec {real_git.strip()} "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")


def test_a_git_failure_is_an_error_not_an_empty_change_list(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A git whose diff fails (after rev-parse resolved the revision): the gate must not pass.
    fake_git(tmp_path, monkeypatch, "diff", 'echo "fatal: disk on fire" >&2; exit 128')
    code, out, err = run("scan", ".", "-q", "--fail-on-pairs", "--changed-since", "HEAD")
    assert code == ExitCode.USAGE and out == ""
    assert err == f"minhashdup: error: git diff in {repo} failed: fatal: disk on fire\n"


def test_a_git_too_old_to_switch_off_the_repositorys_programs_is_refused(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git before 2.31 ignores GIT_CONFIG_COUNT: it would run the repository's fsmonitor and hooks.
    fake_git(tmp_path, monkeypatch, "--version", 'echo "git version 2.30.2"; exit 0')
    gitrun.check_version.cache_clear()
    try:
        code, out, err = run("scan", ".", "-q", "--fail-on-pairs", "--changed-since", "HEAD")
    finally:
        gitrun.check_version.cache_clear()
    assert code == ExitCode.USAGE and out == ""
    assert err == (
        "minhashdup: error: git 2.30 is older than 2.31, which minhashdup needs to switch off the repository's"
        " own programs (hooks, fsmonitor, filters); upgrade git\n"
    )


def test_the_callers_git_settings_are_kept_and_ours_come_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "/bin/evil")
    env = gitrun.safe_env(["a=b.c"])
    keys = [(env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"]) for n in range(int(env["GIT_CONFIG_COUNT"]))]
    assert keys[0] == ("core.fsmonitor", "/bin/evil")
    assert keys.index(("core.fsmonitor", "false")) > 0  # the later setting wins
    assert ("filter.a=b.c.clean", "") in keys and ("filter.a=b.c.process", "") in keys
