"""``minhashdup check`` and the pre-commit hook built on it: the files handed over are compared
against the whole tree, and only their new pairs fail. First through click's runner, then with
the real pre-commit client on git repositories the tests make."""

from __future__ import annotations

import json
import random
import shlex
from pathlib import Path

import pytest

from minhashdup.errors import ExitCode

from .conftest import go_file, near_copy, render_go, run

ROOT = Path(__file__).resolve().parent.parent

ORIG, COPY, OTHER, NEW = "a/orig.go", "b/copy.go", "c/other.go", "d/new.go"


class Tree:
    """A folder, the current one during the test: ``a/orig.go`` and ``b/copy.go`` are a planted
    near-duplicate pair (J about 0.6), ``c/other.go`` resembles nothing until :meth:`add_new`
    writes its near copy ``d/new.go``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rng = random.Random(5)
        self.orig = go_file(self.rng, 10)
        self.other = go_file(self.rng, 10)
        self.write(ORIG, self.orig)
        self.write(COPY, near_copy(self.orig, self.rng, 3))
        self.write(OTHER, self.other)

    def write(self, name: str, blocks: list[str]) -> None:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_go(blocks))

    def add_new(self) -> None:
        self.write(NEW, near_copy(self.other, self.rng, 2))


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Tree:
    monkeypatch.chdir(tmp_path)
    return Tree(tmp_path)


def check(*args: str) -> tuple[int, set[tuple[str, str]], str]:
    """``minhashdup check --exact -q -f json ARGS``: exit code, the pairs reported, stderr."""
    code, out, err = run("check", "--exact", "-q", "-f", "json", *args)
    assert code in (ExitCode.OK, ExitCode.PAIRS_FOUND), err
    return code, {(p["a"], p["b"]) for p in json.loads(out)["pairs"]}, err


def gate_lines(err: str) -> list[str]:
    """The gate's message on stderr (after the notices), line by line."""
    return err[err.index("minhashdup: ") :].splitlines()


def dotted(a: str, b: str) -> tuple[str, str]:
    return f"./{a}", f"./{b}"


def test_only_the_pairs_touching_the_files_given_are_reported_and_fail(tree: Tree) -> None:
    tree.add_new()
    assert check(ORIG)[:2] == (ExitCode.PAIRS_FOUND, {dotted(ORIG, COPY)})
    assert check(NEW)[:2] == (ExitCode.PAIRS_FOUND, {dotted(OTHER, NEW)})
    assert check(COPY, f"./{OTHER}")[:2] == (ExitCode.PAIRS_FOUND, {dotted(ORIG, COPY), dotted(OTHER, NEW)})
    (tree.path / "e").mkdir()
    tree.write("e/alone.go", go_file(tree.rng, 10))
    code, pairs, err = check("e/alone.go")
    assert (code, pairs, err) == (ExitCode.OK, set(), "")  # compared with the whole tree, in no pair
    code, doc = run("check", "--exact", "-q", "-f", "json", "e/alone.go")[:2]
    assert json.loads(doc)["stats"]["verified_pairs"] == 2  # the tree's pairs exist, they are not reported


def test_no_files_is_nothing_to_check(tree: Tree) -> None:
    assert run("check", "--exact") == (ExitCode.OK, "", "")
    assert run("check", "--root", "no/such/folder") == (ExitCode.OK, "", "")  # nothing scanned at all


def test_files_are_a_focus_not_a_scan_request(tree: Tree) -> None:
    # An excluded file named by pre-commit is still left out: no pair, even with its near copy.
    code, pairs, _ = check("--exclude", "b/", COPY)
    assert (code, pairs) == (ExitCode.OK, set())
    (tree.path / ".gitignore").write_text("copy.go\n")
    assert check(COPY)[:2] == (ExitCode.OK, set())
    assert check(ORIG)[:2] == (ExitCode.OK, set())  # its partner is ignored: no pair in the tree


def test_a_file_not_in_the_tree_is_in_no_pair(tree: Tree) -> None:
    (tree.path / COPY).unlink()  # deleted (pre-commit passes no deleted file, a script may)
    code, pairs, err = check(COPY, "never/was.go", ORIG)
    assert (code, pairs) == (ExitCode.OK, set()) and "Traceback" not in err and "internal error" not in err


def test_known_pairs_pass_and_new_ones_fail(tree: Tree) -> None:
    assert run("scan", ".", "--exact", "-q", "--write-baseline", "dups.json")[0] == ExitCode.OK
    assert check("--baseline", "dups.json", ORIG, COPY)[:2] == (ExitCode.OK, set())
    tree.add_new()
    code, pairs, err = check("--baseline", "dups.json", ORIG, NEW)
    assert (code, pairs) == (ExitCode.PAIRS_FOUND, {dotted(OTHER, NEW)})  # the known pair is left out
    assert gate_lines(err)[0].startswith("minhashdup: 1 new near-duplicate pair with the files checked")
    code, _, err = run("check", "--baseline", "missing.json", ORIG)
    assert code == ExitCode.USAGE and "--baseline missing.json: no such file" in err and err.count("\n") == 1


def test_the_gate_message_gives_the_command_that_accepts_the_pairs(tree: Tree) -> None:
    args = ["--exclude", "x y", "-t", "0.4", "--no-completion", "--max-size", "2MiB", "-j", "1"]
    code, _, err = check(*args, ORIG)
    assert code == ExitCode.PAIRS_FOUND
    command = gate_lines(err)[1].strip()
    assert command == (
        "minhashdup scan . --exclude 'x y' --max-size 2097152 --threshold 0.4 --no-completion --exact"
        " --write-baseline .minhashdup-baseline.json"
    )
    assert "pass --baseline .minhashdup-baseline.json to this check" in err
    words = shlex.split(command)
    assert run(*words[1:], "-q")[0] == ExitCode.OK  # a scan, no gate: it records the pairs
    assert check(*args, "--baseline", ".minhashdup-baseline.json", ORIG)[:2] == (ExitCode.OK, set())
    # With a baseline already, the message rewrites that one.
    tree.add_new()
    err = check(*args, "--baseline", ".minhashdup-baseline.json", NEW)[2]
    assert gate_lines(err)[1].strip().endswith("--write-baseline .minhashdup-baseline.json") and "pass" not in err


def test_every_pair_of_the_tree_is_found_whole_or_split(tree: Tree) -> None:
    # pre-commit --all-files hands over every file, perhaps in several runs (long argument
    # lists are split): together they report every pair of the tree, and each run fails.
    tree.add_new()
    everything = sorted(str(p.relative_to(tree.path)) for p in tree.path.rglob("*.go"))
    doc = json.loads(run("scan", ".", "--exact", "-q", "-f", "json")[1])
    whole = {(p["a"], p["b"]) for p in doc["pairs"]}
    assert len(whole) == 2 and check(*everything)[:2] == (ExitCode.PAIRS_FOUND, whole)
    first, second = check(*everything[::2]), check(*everything[1::2])
    assert first[0] == second[0] == ExitCode.PAIRS_FOUND and first[1] | second[1] == whole


def test_root_is_the_tree_and_files_are_relative_to_the_current_folder(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree.path / "b")
    assert check("--root", "..", "copy.go")[:2] == (ExitCode.PAIRS_FOUND, {("../a/orig.go", "../b/copy.go")})
    assert check("copy.go")[:2] == (ExitCode.OK, set())  # the tree is . (b/): its one file is in no pair
    code, _, err = run("check", "--root", "../no/such", "copy.go")
    assert code == ExitCode.USAGE and err.count("\n") == 1


def test_a_project_config_shapes_the_check_and_the_accepting_scan_alike(tree: Tree) -> None:
    (tree.path / "pyproject.toml").write_text(
        '[tool.minhashdup]\nexclude = ["c/"]\nfail-on-pairs = true\n\n[tool.minhashdup.check]\nthreshold = 0.4\n'
    )
    tree.add_new()
    assert check(NEW)[:2] == (ExitCode.OK, set())  # its partner c/other.go is excluded by the config
    code, _, err = check(ORIG)  # fail-on-pairs, a key of scan's, is no error here
    assert code == ExitCode.PAIRS_FOUND
    accept = gate_lines(err)[1].strip()  # the config's values, its check table's too, and none of its gate
    assert accept == (
        "minhashdup scan . --no-config --exclude c/ --threshold 0.4 --exact --write-baseline .minhashdup-baseline.json"
    )
    assert run(*shlex.split(accept)[1:], "-q")[0] == ExitCode.OK
    (tree.path / "pyproject.toml").write_text(
        '[tool.minhashdup]\nexclude = ["c/"]\nbaseline = ".minhashdup-baseline.json"\n\n'
        "[tool.minhashdup.check]\nthreshold = 0.4\n"
    )
    assert check(ORIG)[:2] == (ExitCode.OK, set())  # the baseline, named by the config, knows the pair
