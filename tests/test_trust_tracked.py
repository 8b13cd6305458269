"""A file git tracks is scanned whatever ``.gitignore`` says: it names files "that Git should
ignore" among the untracked ones. Before, a change under review hid its own copy from the gate
with a line in ``.gitignore`` and ``git add -f``. Each test uses a real git repository, and the
walk is held to git's own answer (``ls-files --cached`` and ``--others --exclude-standard``).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from pathlib import Path

import pytest

from minhashdup import gitrun
from minhashdup.engine import pipeline
from minhashdup.errors import ExitCode
from minhashdup.source import witnesses
from minhashdup.source.kinds import Kinds
from minhashdup.source.walk import SkipReason, walk

from .conftest import GIT_ENV, go_file, render_go, run
from .test_ci import git
from .test_walkmemo import Memos


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def _repo(root: Path, files: dict[str, str], ignore: str) -> Path:
    root.mkdir()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".gitignore").write_text(ignore)
    git(root, "init", "-q")
    return root


def _walked(root: Path, **options: object) -> set[str]:
    return {os.path.relpath(f.path, root) for f in walk([str(root)], **options).files}  # type: ignore[arg-type]


def _gits_files(root: Path) -> set[str]:
    """What git counts as the project's files: tracked, or untracked and not ignored."""
    listed = b""
    for which in (["--cached"], ["--others", "--exclude-standard"]):
        listed += subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", *which], capture_output=True, check=True
        ).stdout
    return {os.fsdecode(name) for name in listed.split(b"\0") if name and (root / os.fsdecode(name)).is_file()}


def test_a_tracked_file_that_gitignore_names_is_scanned(tmp_path: Path) -> None:
    files = {"a.go": "package a\n", "clone.go": "package a\n", "build/kept.go": "package b\n"}
    files |= {"build/out.go": "package b\n", "build/deep/x.go": "package c\n", "junk.go": "package j\n"}
    root = _repo(tmp_path / "r", files, "clone.go\nbuild/\njunk.go\n!build/out.go\n")
    git(root, "add", "a.go", ".gitignore")
    git(root, "add", "-f", "clone.go", "build/kept.go")
    result = walk([str(root)])
    assert _walked(root) == {".gitignore", "a.go", "clone.go", "build/kept.go"} == _gits_files(root)
    ignored = {os.path.relpath(s.path, root) for s in result.skips if s.reason == SkipReason.GITIGNORED}
    # Under an ignored folder, what git does not track stays out, a negation notwithstanding.
    assert ignored == {"junk.go", "build/out.go", "build/deep"}
    assert result.warnings == []


def test_the_walk_finds_what_git_counts_as_the_projects_files(tmp_path: Path) -> None:
    # Random trees, .gitignore files at two levels and random files forced into the index: the
    # walk keeps exactly the files git tracks or would list as untracked.
    names = ["a.go", "b.go", "c.txt", "d/e.go", "d/f.go", "d/g/h.go", "d/g/i.txt", "k/l.go", "k/m/n.go"]
    patterns = ["*.txt", "d/", "g/", "k/*", "!k/l.go", "b.go", "/d/g", "**/n.go", "!d/f.go", "m"]
    for case in range(25):
        rng = random.Random(case)
        root = _repo(
            tmp_path / f"r{case}",
            {name: f"package p{n}\n" for n, name in enumerate(names)},
            "\n".join(rng.sample(patterns, rng.randint(1, 5))) + "\n",
        )
        (root / "d" / ".gitignore").write_text("\n".join(rng.sample(["h.go", "!i.txt", "e.go", "g"], 2)) + "\n")
        git(root, "add", "-f", *rng.sample(names, rng.randint(0, 4)))
        assert _walked(root) == _gits_files(root), (case, (root / ".gitignore").read_text())


def test_a_copy_hidden_by_gitignore_fails_the_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = render_go(go_file(random.Random(3), 8))
    root = _repo(tmp_path / "r", {"orig.go": text}, "")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    (root / "copy.go").write_text(text)
    (root / ".gitignore").write_text("copy.go\n")
    git(root, "add", "-f", "copy.go", ".gitignore")
    git(root, "commit", "-q", "-m", "a change under review")
    monkeypatch.chdir(root)
    code, out, err = run("scan", ".", "-q", "-f", "json", "--fail-on-pairs", "--changed-since", "HEAD~1")
    assert code == ExitCode.PAIRS_FOUND, err
    assert [(p["a"], p["b"]) for p in json.loads(out)["pairs"]] == [("./copy.go", "./orig.go")]


def test_outside_a_repository_git_is_not_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a.go").write_text("package a\n")
    (root / "b.go").write_text("package b\n")
    (root / ".gitignore").write_text("b.go\n")
    asked: list[tuple[str, ...]] = []
    monkeypatch.setattr(gitrun, "git", lambda folder, *args: asked.append(args) or "")
    assert _walked(root) == {".gitignore", "a.go"} and asked == []


def test_git_is_asked_only_once_something_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path / "r", {"a.go": "package a\n"}, "*.txt\n")
    asked: list[tuple[str, ...]] = []
    real = gitrun.git
    monkeypatch.setattr(gitrun, "git", lambda folder, *args: asked.append(args) or real(folder, *args))
    assert _walked(root) == {".gitignore", "a.go"} and asked == []
    (root / "notes.txt").write_text("x\n")
    assert _walked(root) == {".gitignore", "a.go"}
    assert [args[0] for args in asked] == ["rev-parse", "ls-files"]


def test_without_git_what_gitignore_names_is_scanned_and_a_warning_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where git cannot tell tracked from ignored, leaving ignored files out could hide a tracked
    # copy from a gate: they are scanned, as an ignore file that cannot be read is not applied.
    root = _repo(
        tmp_path / "r", {"a.go": "package a\n", "b.go": "package b\n", "out/c.go": "package c\n"}, "b.go\nout/\n"
    )
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    result = walk([str(root)])
    assert {os.path.relpath(f.path, root) for f in result.files} == {".gitignore", "a.go", "b.go", "out/c.go"}
    assert result.warnings == [
        f"{root}: cannot list the files git tracks (git is not installed (or not on PATH)); what .gitignore"
        " names is scanned too"
    ]


def test_git_refusing_the_repository_is_named_by_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A repository owned by another user, as in a container job: git refuses it, with hints after
    # its reason. The warning gives the reason; the ignored file is scanned.
    root = _repo(tmp_path / "r", {"a.go": "package a\n", "b.go": "package b\n"}, "b.go\n")
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(
        '#!/bin/sh\nfor a in "$@"; do [ "$a" = --version ] && exec echo git version 2.45.0; done\n'
        "echo \"fatal: detected dubious ownership in repository at '$3'\" >&2\n"
        "printf 'To add an exception, call:\\n\\n\\tgit config --global --add safe.directory x\\n' >&2\n"
        "exit 128\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    gitrun.check_version.cache_clear()
    try:
        result = walk([str(root)])
    finally:
        gitrun.check_version.cache_clear()
    assert {os.path.relpath(f.path, root) for f in result.files} == {".gitignore", "a.go", "b.go"}
    assert result.warnings == [
        f"{root}: cannot list the files git tracks (git rev-parse in {root} failed: fatal: detected dubious"
        f" ownership in repository at '{root}'); what .gitignore names is scanned too"
    ]


def test_a_git_dir_elsewhere_is_not_taken_for_the_roots_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIT_DIR without GIT_WORK_TREE makes git take the root for the top of its work tree: its
    # names would not be the walk's. Such an answer is refused, and nothing is left out.
    root = _repo(
        tmp_path / "r", {"x.go": "package x\n", "src/x.go": "package s\n", "src/t.go": "package t\n"}, "x.go\n"
    )
    git(root, "add", "-f", "x.go", "src/t.go")
    monkeypatch.setenv("GIT_DIR", str(root / ".git"))
    result = walk([str(root / "src")])
    assert {os.path.relpath(f.path, root) for f in result.files} == {"src/x.go", "src/t.go"}
    assert [w.split(" (")[0] for w in result.warnings] == [f"{root / 'src'}: cannot list the files git tracks"]
    assert f"git's work tree is {root / 'src'}, not the repository at {root}" in result.warnings[0]


def test_a_walk_git_could_not_answer_is_not_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(witnesses, "RACY_SECONDS", 0.0)
    root = _repo(tmp_path / "r", {"a.go": "package a\n", "b.go": "package b\n"}, "b.go\n")
    time.sleep(0.03)
    with witnesses.recording() as seen:
        walk([str(root)])
    assert witnesses.settled(seen, time.time_ns()) and witnesses.unchanged(seen)
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    with witnesses.recording() as seen:
        walk([str(root)])
    assert not witnesses.settled(seen, time.time_ns()) and not witnesses.unchanged(seen)


def test_a_change_of_git_s_variables_is_seen_by_a_remembered_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path / "r", {"a.go": "package a\n", "b.go": "package b\n"}, "b.go\n")
    with witnesses.recording() as seen:
        walk([str(root)])
    assert witnesses.unchanged(seen)
    monkeypatch.setenv("GIT_INDEX_FILE", str(root / ".git" / "other-index"))
    assert not witnesses.unchanged(seen)


def test_files_a_submodule_tracks_are_scanned_whatever_the_ignore_files_say(tmp_path: Path) -> None:
    sub = _repo(tmp_path / "sub", {"s.go": "package s\n", "hidden.go": "package h\n"}, "hidden.go\n")
    git(sub, "add", "-f", "s.go", "hidden.go", ".gitignore")
    git(sub, "commit", "-q", "-m", "sub")
    root = _repo(tmp_path / "r", {"a.go": "package a\n"}, "sub/\n")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "-f", str(sub), "sub")
    walked = _walked(root)
    assert {"sub/s.go", "sub/hidden.go", "a.go"} <= walked
    assert walked == _gits_files(root) | {"sub/s.go", "sub/hidden.go", "sub/.gitignore"}


def test_the_index_is_a_witness_of_a_remembered_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file forced into the index after a walk was remembered is found by the next one.
    monkeypatch.setattr(witnesses, "RACY_SECONDS", 0.0)
    root = _repo(tmp_path / "r", {"a.go": "package a\n", "b.go": "package b\n"}, "b.go\n")
    git(root, "add", "a.go")
    memos = Memos()

    def remembered() -> set[str]:
        found = pipeline.remembered_walk([str(root)], memos, max_size=1 << 20, kinds=Kinds(), gitignore=True)
        return {os.path.relpath(f.path, root) for f in found.files}

    monkeypatch.chdir(tmp_path)
    time.sleep(0.03)  # past the timestamp tick of the files just made
    assert remembered() == {".gitignore", "a.go"} and memos.puts == 1
    git(root, "add", "-f", "b.go")
    assert remembered() == {".gitignore", "a.go", "b.go"}


def test_a_tracked_name_that_is_not_utf8_is_known_by_its_bytes(tmp_path: Path) -> None:
    # The rules match a name with U+FFFD for its stray bytes; git's names are the listing's.
    root = _repo(tmp_path / "r", {"a.go": "package a\n"}, "*.go\n")
    (root / os.fsdecode(b"caf\xe9.go")).write_text("package c\n")
    (root / os.fsdecode(b"th\xe9.go")).write_text("package t\n")
    git(root, "add", "-f", os.fsdecode(b"caf\xe9.go"))
    assert _walked(root) == {".gitignore", os.fsdecode(b"caf\xe9.go")} == _gits_files(root)
