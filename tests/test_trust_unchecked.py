"""The CI gate on a change under review cannot be passed by a copy the scan leaves out for what it
holds or where it lies: a copy padded past --max-size, given a NUL byte, put in a folder named like
another VCS's metadata, or in a submodule the change adds; nor by files laid out as a repository of
their own in the scanned folder. Each test is a real git repository: a base commit, then a change."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from minhashdup.errors import ExitCode

from .conftest import go_file, render_go, run
from .test_ci import git
from .test_trust_tracked import _git_env, _repo

__all__ = ["_git_env"]  # the fixture that gives git a name and no user configuration

TEXT = render_go(go_file(random.Random(7), 8))


def _base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = _repo(tmp_path / "r", {"orig.go": TEXT, "other.go": render_go(go_file(random.Random(8), 8))}, "")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    return root


def _change(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a change under review")


def _gate(*extra: str) -> tuple[int, dict, str]:
    code, out, err = run("scan", ".", "-j", "1", "--no-cache", "-f", "json", "--changed-since", "HEAD~1", *extra)
    return code, json.loads(out) if out else {}, err


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("copy.go", TEXT.encode() + b"// " + b"x" * 1100 * 1024 + b"\n", "too-large"),
        ("copy.go", TEXT.encode().replace(b"\n", b"\n/* \0 */\n", 1), "binary"),
    ],
    ids=["too-large", "binary"],
)
def test_a_copy_left_out_for_what_it_holds_fails_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, data: bytes, reason: str
) -> None:
    root = _base(tmp_path, monkeypatch)
    _change(root, {name: data, "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0"})  # a binary named as no code: fine
    code, doc, err = _gate("--fail-on-pairs")
    assert code == ExitCode.UNCHECKED and doc["pairs"] == []
    assert doc["stats"]["changes"]["unchecked"] == 1
    assert f"changed but not compared: ./{name}: {reason}" in err and "logo.png" not in err
    assert "gate failed, it cannot vouch for the change: 1 changed file not compared" in err
    # Without a gate the scan says how many, and exits 0.
    code, doc, _ = _gate()
    assert code == ExitCode.OK and doc["stats"]["changes"]["unchecked"] == 1


def test_a_copy_left_out_that_is_no_change_does_not_fail_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _base(tmp_path, monkeypatch)
    (root / "big.go").write_bytes(TEXT.encode() + b"x" * 1100 * 1024)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base, with a large file")
    _change(root, {"new.go": render_go(go_file(random.Random(9), 8)).encode()})
    code, doc, _ = _gate("--fail-on-pairs")
    assert code == ExitCode.OK and doc["stats"]["changes"]["unchecked"] == 0


def test_the_check_command_fails_on_a_file_it_could_not_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _base(tmp_path, monkeypatch)
    (root / "copy.go").write_bytes(TEXT.encode().replace(b"\n", b"\n/* \0 */\n", 1))
    code, _, err = run("check", "--no-cache", "copy.go", "other.go")
    assert code == ExitCode.UNCHECKED and "copy.go: binary" in err
    code, _, _ = run("check", "--no-cache", "other.go")
    assert code == ExitCode.OK


def test_a_copy_in_a_folder_named_like_another_vcs_is_compared_when_git_tracks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _base(tmp_path, monkeypatch)
    (root / ".hg").mkdir()
    (root / ".hg" / "untracked.go").write_text(TEXT)  # not tracked: metadata, left out
    (root / ".gitignore").write_text(".hg/\n")
    _change(root, {"_darcs/copy.go": TEXT.encode(), ".svn/copy2.go": TEXT.encode()})
    code, doc, err = _gate("--fail-on-pairs")
    assert code == ExitCode.PAIRS_FOUND, err
    files = {p for pair in doc["pairs"] for p in (pair["a"], pair["b"])}
    assert files == {"./_darcs/copy.go", "./.svn/copy2.go", "./orig.go"}


def test_a_copy_in_a_submodule_the_change_adds_is_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = _repo(tmp_path / "sub", {"copy.go": TEXT}, "")
    git(sub, "add", "-A")
    git(sub, "commit", "-q", "-m", "sub")
    root = _base(tmp_path, monkeypatch)
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "lib/sub")
    git(root, "commit", "-q", "-m", "a change under review: a submodule")
    code, doc, err = _gate("--fail-on-pairs")
    assert code == ExitCode.PAIRS_FOUND, err
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [("./lib/sub/copy.go", "./orig.go")]
    # .gitmodules and the submodule's two files (copy.go, .gitignore): not its folder nor its .git
    assert doc["stats"]["changes"]["files"] == 3
    # Its commit moved: the files that differ in it are the change's, not every file in it (nor
    # a file too large to compare that it holds unchanged).
    inner = root / "lib" / "sub"

    def move(message: str) -> None:
        git(sub, "add", "-A")
        git(sub, "commit", "-q", "-m", message)
        git(inner, "fetch", "-q", str(sub), "HEAD")
        git(inner, "checkout", "-q", "FETCH_HEAD")
        git(root, "commit", "-q", "-am", message)

    (sub / "big.js").write_text("var x = 1;\n" * 200_000)
    (sub / "README").write_text("a submodule\n")
    move("the base: the submodule at its second commit")
    base = git(root, "rev-parse", "HEAD").strip()
    (sub / "README").write_text("a submodule, again\n")
    move("a change under review: the submodule moved")
    code, out, err = run("scan", ".", "-j", "1", "--no-cache", "-f", "json", "--changed-since", base, "--fail-on-pairs")
    assert code == ExitCode.OK, err
    assert json.loads(out)["stats"]["changes"] == {"files": 1, "pairs_left_out": 1, "unchecked": 0, "unpaired": 0}


def test_files_laid_out_as_a_repository_do_not_answer_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The change commits src/HEAD, src/config (a work tree of its own) and an objects folder
    # borrowing the real one's: git run in src would take src for the repository.
    root = _base(tmp_path, monkeypatch)
    layout = {
        "src/a.go": TEXT.encode(),
        "src/HEAD": b"ref: refs/heads/main\n",
        "src/config": b"[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n",
        "src/refs/heads/.keep": b"",
        "src/objects/info/alternates": b"../../.git/objects\n",
        "src/info/exclude": b"*\n",
    }
    _change(root, layout)
    code, out, err = run("scan", "src", "-j", "1", "--no-cache", "-f", "json", "--changed-since", "HEAD~1")
    assert code == ExitCode.USAGE and out == ""
    assert "bare repository" in err or "git takes" in err
    # The check that the repository git names is the one with the .git above, on its own (for a
    # git that does not know safe.bareRepository):
    from minhashdup import gitrun
    from minhashdup.ci import git as project

    monkeypatch.setattr(gitrun, "_SAFE_CONFIG", tuple(c for c in gitrun._SAFE_CONFIG if c[0] != "safe.bareRepository"))
    with pytest.raises(project.ChangesError, match=r"git takes .* as the repository"):
        project.git_toplevel(str(root / "src"))


def test_a_changed_file_no_lexer_takes_is_named_in_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _base(tmp_path, monkeypatch)
    _change(root, {"bin/tool": TEXT.encode()})
    code, doc, err = _gate("--fail-on-pairs")
    assert code == ExitCode.OK and doc["stats"]["changes"]["unchecked"] == 0
    assert "./bin/tool: changed but not compared, skipped as no-lexer" in err


def test_a_gate_with_a_bucket_too_big_to_pair_fails_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A change floods a band's bucket with near variants of its copy: nothing in it is paired.
    root = _base(tmp_path, monkeypatch)
    _change(root, {f"v{n}.go": (TEXT + f"\nvar V{n} = {n}\n").encode() for n in range(6)})
    tight = ("--max-bucket", "3", "--bands", "1", "--rows", "1")
    code, doc, err = _gate("--fail-on-pairs", *tight)
    assert doc["pairs"] == [] and doc["stats"]["oversize_buckets"] == 1
    assert doc["stats"]["changes"]["unpaired"] == 6
    assert code == ExitCode.UNCHECKED and "6 changed files in a bucket too big to pair" in err
    assert "changed but in a bucket too big to pair: ./v0.go;" in err
    code, doc, _ = _gate(*tight)  # no gate: a warning only
    assert code == ExitCode.OK
    # A change of a file in no such bucket: the gate vouches for it, whatever the tree holds.
    _change(root, {"other.go": render_go(go_file(random.Random(10), 8)).encode()})
    code, doc, err = _gate("--fail-on-pairs", *tight)
    assert doc["stats"]["oversize_buckets"] == 1 and doc["stats"]["changes"]["unpaired"] == 0
    assert code == ExitCode.OK, err
    # The whole tree's gate (no changed files) cannot vouch for what it did not pair.
    code, _, err = run("scan", ".", "-j", "1", "--no-cache", "-q", "--fail-on-pairs", *tight)
    assert code == ExitCode.UNCHECKED and "1 bucket too big to pair (--max-bucket)" in err


def test_what_is_compared_as_code_decides_not_the_name_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _base(tmp_path, monkeypatch)
    # A large lockfile or data file is never compared: it does not fail the gate.
    _change(root, {"package-lock.json": b'{"a": "' + b"x" * 1100 * 1024 + b'"}\n', "notes.md": b"# x\n\0\n"})
    code, doc, _ = _gate("--fail-on-pairs")
    assert code == ExitCode.OK and doc["stats"]["changes"]["unchecked"] == 0
    # A script with no extension is code by its shebang: padded, it fails the gate.
    _change(root, {"bin/tool": b"#!/usr/bin/env python3\n" + TEXT.encode() + b"#" * 1100 * 1024 + b"\n"})
    code, doc, err = _gate("--fail-on-pairs")
    assert code == ExitCode.UNCHECKED and "./bin/tool: too-large" in err


def test_a_root_reached_through_a_link_or_git_dir_is_the_same_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _base(tmp_path, monkeypatch)
    _change(root, {"sub/copy.go": TEXT.encode()})
    (tmp_path / "top").symlink_to(root)
    (tmp_path / "low").symlink_to(root / "sub")
    monkeypatch.chdir(tmp_path)
    for start in (tmp_path / "top", tmp_path / "low"):
        code, _, err = run(
            "scan", str(start), "-j", "1", "--no-cache", "-q", "--changed-since", "HEAD~1", "--fail-on-pairs"
        )
        assert code == (ExitCode.PAIRS_FOUND if start.name == "top" else ExitCode.OK), err
    monkeypatch.setenv("GIT_DIR", str(root / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(root))
    code, _, err = run("scan", str(root), "-j", "1", "--no-cache", "-q", "--changed-since", "HEAD~1", "--fail-on-pairs")
    assert code == ExitCode.PAIRS_FOUND, err


def test_a_changed_file_that_cannot_be_read_is_not_vouched_for(tmp_path: Path) -> None:
    # git cannot commit an unreadable file, but a file list (--files-from, check) can name one.
    from minhashdup.ci import unseen
    from minhashdup.result import Result, Skip, SkipReason, Stats

    path = tmp_path / "copy.go"
    path.write_text(TEXT)
    result = Result({}, Stats(), [], [], [Skip(str(path), SkipReason.UNREADABLE, "Permission denied")])
    assert [s.path for s in unseen.not_compared(result, {str(path.resolve())})] == [str(path)]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_source_in_utf16_or_utf32_is_compared_not_skipped_as_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    # Windows' editors write PowerShell or C# so: its NUL bytes are text, and a copy saved so is a copy.
    root = _base(tmp_path, monkeypatch)
    data = TEXT.encode(encoding)
    if not data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        data = "\ufeff".encode(encoding) + data  # the -be/-le codecs write no mark of their own
    _change(root, {"copy.go": data})
    code, doc, err = _gate("--fail-on-pairs")
    assert code == ExitCode.PAIRS_FOUND, err
    assert [(p["a"], p["b"], p["jaccard"]) for p in doc["pairs"]] == [("./copy.go", "./orig.go", 1.0)]
