"""CI use: the gate, baselines, changed files (in a real git repository), and their outputs."""

from __future__ import annotations

import csv
import io
import json
import os
import random
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from minhashdup.errors import ExitCode

from .conftest import GIT_ENV, go_file, go_function, near_copy, render_go, run


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def scan_json(*args: str, stdin: str | None = None) -> tuple[int, dict[str, object], str]:
    code, out, err = run("scan", ".", "--exact", "-q", "-f", "json", *args, stdin=stdin)
    assert code in (ExitCode.OK, ExitCode.PAIRS_FOUND), err
    return code, json.loads(out), err


def pairs_of(doc: dict[str, object]) -> dict[tuple[str, str], bool]:
    """``{(a, b): known}`` of a JSON document's pairs."""
    return {(p["a"], p["b"]): p["known"] for p in doc["pairs"]}  # type: ignore[attr-defined]


class Repo:
    """A git repository in a temporary folder, the current folder during the test.

    ``orig.go`` and ``copy.go`` are a planted near-duplicate pair (J about 0.6-0.7);
    ``other.go`` resembles nothing.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rng = random.Random(5)
        self.orig = go_file(self.rng, 10)
        self.copy = near_copy(self.orig, self.rng, 3)
        self.other = go_file(self.rng, 10)
        git(path, "init", "-q")
        self.write("a/orig.go", self.orig)
        self.write("b/copy.go", self.copy)
        self.write("c/other.go", self.other)
        commit(path, "base")

    def write(self, name: str, blocks: list[str]) -> None:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_go(blocks))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.chdir(tmp_path)
    return Repo(tmp_path)


KNOWN = ("./a/orig.go", "./b/copy.go")
NEW = ("./c/other.go", "./d/new.go")


def test_gate_exit_codes_and_max_pairs(repo: Repo) -> None:
    assert run("scan", ".", "--exact", "-q", "-f", "json")[0] == ExitCode.OK  # no gate asked
    assert run("scan", ".", "--exact", "-q", "--fail-on-pairs")[0] == ExitCode.PAIRS_FOUND
    assert run("scan", ".", "--exact", "-q", "--max-pairs", "1")[0] == ExitCode.OK  # one pair allowed
    assert run("scan", ".", "--exact", "-q", "--max-pairs", "0")[0] == ExitCode.PAIRS_FOUND
    # --max-pairs gives room even when --fail-on-pairs is also set (e.g. in a config file).
    assert run("scan", ".", "--exact", "-q", "--fail-on-pairs", "--max-pairs", "1")[0] == ExitCode.OK
    code, _, err = run("scan", ".", "--max-pairs", "-1")
    assert code == ExitCode.USAGE and "--max-pairs" in err and err.count("\n") == 1


def test_baseline_workflow_known_edited_new_and_risen(repo: Repo) -> None:
    code, doc, err = scan_json("--write-baseline", "dups.json")
    assert code == ExitCode.OK and "wrote 1 pairs to dups.json" not in err  # -q: silent
    assert pairs_of(doc) == {KNOWN: False}
    text = (repo.path / "dups.json").read_text()
    lines = text.splitlines()
    assert lines[0] == '{"minhashdup_baseline": 1, "pairs": ['
    assert json.loads(lines[1].rstrip(",")) == {
        "a": "a/orig.go",
        "b": "b/copy.go",
        "jaccard": doc["pairs"][0]["jaccard"],
    }  # type: ignore[index]
    assert json.loads(text)["pairs"][0]["a"] == "a/orig.go"

    # The known pair passes the gate.
    code, doc, _ = scan_json("--baseline", "dups.json", "--fail-on-pairs")
    assert code == ExitCode.OK and pairs_of(doc) == {KNOWN: True}
    assert doc["stats"]["baseline"] == {"recorded": 1, "known": 1, "risen": 0, "gone": 0, "dropped": 0}  # type: ignore[index]

    # Edited slightly (one differing function swapped for another): still known.
    edited = list(repo.copy)
    differing = next(i for i, (x, y) in enumerate(zip(repo.orig, repo.copy, strict=True)) if x != y)
    edited[differing] = "\n".join(go_function(repo.rng))
    repo.write("b/copy.go", edited)
    code, doc, _ = scan_json("--baseline", "dups.json", "--fail-on-pairs")
    assert code == ExitCode.OK and pairs_of(doc) == {KNOWN: True}

    # A new near-duplicate fails the gate; the known pair is still reported, marked known.
    repo.write("d/new.go", near_copy(repo.other, repo.rng, 2))
    code, doc, _ = scan_json("--baseline", "dups.json", "--fail-on-pairs")
    assert code == ExitCode.PAIRS_FOUND and pairs_of(doc) == {KNOWN: True, NEW: False}
    code, doc, _ = scan_json("--baseline", "dups.json", "--fail-on-pairs", "--new-only")
    assert code == ExitCode.PAIRS_FOUND and pairs_of(doc) == {NEW: False}
    assert [c["files"] for c in doc["clusters"]] == [list(NEW)]  # type: ignore[union-attr]

    # The known pair made much more similar (J rises by more than the tolerance) counts as new.
    repo.write("d/new.go", repo.orig[:1])  # too small to pair: out of the way
    repo.write("b/copy.go", [*repo.orig[:9], "\n".join(go_function(repo.rng))])
    code, doc, _ = scan_json("--baseline", "dups.json", "--fail-on-pairs")
    assert code == ExitCode.PAIRS_FOUND and pairs_of(doc) == {KNOWN: False}
    assert doc["stats"]["baseline"]["risen"] == 1  # type: ignore[index]
    code, doc, _ = scan_json("--baseline", "dups.json", "--fail-on-pairs", "--baseline-tolerance", "1")
    assert code == ExitCode.OK and pairs_of(doc) == {KNOWN: True}


def test_baseline_paths_do_not_depend_on_the_working_folder(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    scan_json("--write-baseline", "dups.json")
    monkeypatch.chdir(repo.path / "a")
    code, out, err = run("scan", "..", "--exact", "-q", "-f", "jsonl", "--baseline", "../dups.json", "--fail-on-pairs")
    assert code == ExitCode.OK, err
    [line] = out.splitlines()
    assert json.loads(line)["known"] is True and json.loads(line)["a"] == "../a/orig.go"
    code, out, _ = run("scan", str(repo.path), "--exact", "-q", "-f", "csv", "--baseline", str(repo.path / "dups.json"))
    [row] = list(csv.DictReader(io.StringIO(out)))
    assert row["known"] == "True" and row["a"].endswith("a/orig.go")


def test_baseline_entry_of_a_deleted_file_is_dropped_with_a_note(repo: Repo) -> None:
    scan_json("--write-baseline", "dups.json")
    (repo.path / "b" / "copy.go").unlink()
    code, out, err = run("scan", ".", "--exact", "-f", "json", "--baseline", "dups.json", "--fail-on-pairs")
    assert code == ExitCode.OK
    assert "baseline dups.json: b/copy.go no longer exists; 1 recorded pair dropped" in err
    assert json.loads(out)["stats"]["baseline"]["dropped"] == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "--baseline dups.json: no such file; record one with --write-baseline dups.json"),
        ("{not json", "--baseline dups.json: cannot be read"),
        ('{"pairs": []}', "not a minhashdup baseline"),
        ('{"minhashdup_baseline": 9, "pairs": []}', "version 9 is not 1"),
        ('{"minhashdup_baseline": 1, "pairs": [{"a": "x"}]}', "pair 1 needs string 'a', 'b'"),
        ('{"minhashdup_baseline": 1, "pairs": [{"a": "x", "b": "y", "jaccard": 3}]}', "not between 0 and 1"),
    ],
)
def test_bad_baselines_are_one_line_usage_errors(repo: Repo, content: str | None, message: str) -> None:
    if content is not None:
        (repo.path / "dups.json").write_text(content)
    code, out, err = run("scan", ".", "-q", "--baseline", "dups.json")
    assert code == ExitCode.USAGE and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_changed_since_reports_exactly_the_pairs_touching_changed_files(repo: Repo) -> None:
    repo.write("d/new.go", near_copy(repo.other, repo.rng, 2))
    commit(repo.path, "add a near copy of other.go")
    code, doc, _ = scan_json()
    assert set(pairs_of(doc)) == {KNOWN, NEW}
    code, doc, _ = scan_json("--changed-since", "HEAD~1", "--fail-on-pairs")
    assert code == ExitCode.PAIRS_FOUND and set(pairs_of(doc)) == {NEW}
    assert doc["stats"]["changes"] == {"files": 1, "pairs_left_out": 1, "unchecked": 0, "unpaired": 0}  # type: ignore[index]
    assert doc["params"]["changed_since"] == "HEAD~1"  # type: ignore[index]
    # Nothing changed since HEAD: no pair reported, the gate passes, yet the tree was compared.
    code, doc, _ = scan_json("--changed-since", "HEAD", "--fail-on-pairs")
    assert code == ExitCode.OK and doc["pairs"] == [] and doc["stats"]["verified_pairs"] == 2  # type: ignore[index]
    # Unstaged, staged and untracked changes count too.
    repo.write("e/untracked.go", near_copy(repo.orig, repo.rng, 2))
    _, doc, _ = scan_json("--changed-since", "HEAD")
    assert {p for pair in pairs_of(doc) for p in pair} >= {"./e/untracked.go"}
    assert all("./e/untracked.go" in pair for pair in pairs_of(doc))


def test_staged_and_files_from(repo: Repo) -> None:
    repo.write("d/new.go", near_copy(repo.other, repo.rng, 2))
    _, doc, _ = scan_json("--staged")
    assert pairs_of(doc) == {}  # written, not staged
    git(repo.path, "add", "d/new.go")
    _, doc, _ = scan_json("--staged")
    assert set(pairs_of(doc)) == {NEW}
    (repo.path / "list.txt").write_text("b/copy.go\n\n")
    _, doc, _ = scan_json("--files-from", "list.txt")
    assert set(pairs_of(doc)) == {KNOWN}
    _, doc, _ = scan_json("--files-from", "-", stdin="./d/new.go\nnowhere.go\n")
    lone_cr = scan_json("--files-from", "-", stdin="nowhere.go\r./d/new.go\r")[1]  # \r alone ends a line
    assert lone_cr["pairs"] == doc["pairs"]
    assert set(pairs_of(doc)) == {NEW}
    code, _, err = run("scan", ".", "--files-from", "missing.txt")
    assert code == ExitCode.USAGE and "--files-from missing.txt: cannot be read" in err
    code, _, err = run("scan", ".", "--files-from", "/dev/zero")  # a list without end is not read whole
    assert code == ExitCode.USAGE and "--files-from /dev/zero: more than 67,108,864 characters" in err


def test_changed_since_errors(repo: Repo, tmp_path_factory: pytest.TempPathFactory) -> None:
    code, _, err = run("scan", ".", "-q", "--changed-since", "no-such-ref")
    assert code == ExitCode.USAGE and "--changed-since no-such-ref: not a commit of the repository" in err
    assert err.count("\n") == 1
    outside = tmp_path_factory.mktemp("not-a-repo")
    (outside / "x.go").write_text(render_go(repo.orig))
    code, _, err = run("scan", str(outside), "-q", "--changed-since", "HEAD")
    assert code == ExitCode.USAGE and "is not inside a git repository" in err


ROOT = Path(__file__).resolve().parent.parent


def _minhashdup_args(command: str) -> list[str]:
    words = shlex.split(command.split("#")[0])
    assert words[0] == "minhashdup", command
    return words[1:]


def test_actions_example_commands_run(repo: Repo) -> None:
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yml").read_text())
    steps = workflow["jobs"]["minhashdup"]["steps"]
    commands = [s["run"] for s in steps if "run" in s and s["run"].startswith("minhashdup")]
    assert len(commands) == 2 and any(s.get("uses", "").startswith("github/codeql-action/upload-sarif") for s in steps)
    assert any(s.get("with", {}).get("path") == "~/.cache/minhashdup" for s in steps)
    run("scan", ".", "-q", "--exact", "--write-baseline", ".minhashdup-baseline.json")
    commit(repo.path, "the baseline")
    (baseline_step,) = [s["run"] for s in steps if "run" in s and s["run"].startswith("git show")]
    sarif_args, gate_args = (_minhashdup_args(c.replace('"$BASE"', "HEAD~1")) for c in commands)

    def change(message: str) -> int:  # the change committed, then the workflow's steps on it
        commit(repo.path, message)
        words, target = (part.strip() for part in baseline_step.replace('"$BASE', '"HEAD~1').split(">"))
        shown = subprocess.run(shlex.split(words), cwd=repo.path, capture_output=True, check=True).stdout
        (repo.path / target).write_bytes(shown)
        return run(*gate_args, "--exact")[0]

    # A file of a known pair edited: still known, the gate passes.
    edited = list(repo.copy)
    differing = next(i for i, (x, y) in enumerate(zip(repo.orig, repo.copy, strict=True)) if x != y)
    edited[differing] = "\n".join(go_function(repo.rng))
    repo.write("b/copy.go", edited)
    assert change("an edit of a known pair's file") == ExitCode.OK
    # A new near copy fails it, whatever baseline the change brings.
    repo.write("d/new.go", near_copy(repo.other, repo.rng, 2))
    (repo.path / ".minhashdup-baseline.json").write_text('{"minhashdup_baseline": 1, "pairs": []}\n')
    assert change("a near copy") == ExitCode.PAIRS_FOUND
    assert run(*sarif_args, "--exact")[0] == ExitCode.OK
    assert json.loads((repo.path / "minhashdup.sarif").read_text())["version"] == "2.1.0"


def test_table_and_stderr_say_what_the_baseline_and_the_gate_did(repo: Repo) -> None:
    run("scan", ".", "--exact", "-q", "--write-baseline", "dups.json")
    repo.write("d/new.go", near_copy(repo.other, repo.rng, 2))
    code, out, err = run("scan", ".", "--exact", "-q", "--baseline", "dups.json", "--fail-on-pairs")
    assert code == ExitCode.PAIRS_FOUND
    cells = [[c.strip() for c in line.split("│")] for line in out.splitlines() if line.startswith("│")]
    rows = {row[2]: row[-2] for row in cells if re.fullmatch(r"0\.\d{3}", row[1])}  # file a: baseline
    assert rows == {"a/orig.go": "known", "c/other.go": "new"}  # paths relative to the PATH, "."
    assert "baseline: 1 new, 1 known; recorded pairs risen past the tolerance 0, gone 0, dropped 0" in out
    assert err.endswith("minhashdup: gate failed: 1 new pair reported\n")
    code, out, err = run("scan", ".", "--exact", "-q", "--changed-since", "HEAD", "--max-pairs", "1", "-f", "json")
    assert code == ExitCode.OK and "gate failed" not in err
    code, out, err = run("scan", ".", "--exact", "-q", "--max-pairs", "1")
    assert code == ExitCode.PAIRS_FOUND
    assert "changed files" not in out
    assert err.endswith(
        "gate failed: 2 new pairs reported, at most 1 allowed (record accepted ones with --write-baseline)\n"
    )


def test_the_runs_own_reports_are_not_scanned(repo: Repo) -> None:
    (repo.path / "out").mkdir()
    run("scan", ".", "--exact", "-q", "--write-baseline", "dups.json", "-f", "json", "-o", "out/report.json")
    code, _, err = run("scan", ".", "--exact", "--baseline", "dups.json", "-f", "json", "-o", "out/report.json")
    doc = json.loads((repo.path / "out" / "report.json").read_text())
    assert code == ExitCode.OK and doc["stats"]["skipped"]["minhashdup-file"] == 2
    assert doc["stats"]["files_scanned"] == 3  # the three sources, not the reports
    assert "filtered out: minhashdup-file 2" in err


def test_baseline_round_trips_names_that_are_not_utf8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = render_go(go_file(random.Random(8), 10))
    Path(os.fsdecode(b"caf\xe9.go")).write_text(text)
    Path("copy.go").write_text(text)
    assert run("scan", ".", "-q", "--write-baseline", "b.json")[0] == ExitCode.OK
    json.loads(Path("b.json").read_bytes().decode("utf-8"))  # valid UTF-8 and JSON
    code, out, err = run("scan", ".", "-q", "-f", "jsonl", "--baseline", "b.json", "--fail-on-pairs")
    assert code == ExitCode.OK, err
    assert json.loads(out)["known"] is True
