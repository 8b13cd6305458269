"""``minhashdup check`` and the pre-commit hook built on it: the files handed over are compared
against the whole tree, and only their new pairs fail. First through click's runner, then with
the real pre-commit client on git repositories the tests make."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from minhashdup.errors import ExitCode

from .conftest import GIT_ENV, go_file, near_copy, render_go, run
from .test_ci import commit, git

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


def test_the_table_names_files_as_the_repository_does_and_takes_the_limit(tree: Tree) -> None:
    tree.add_new()
    code, out, _ = run("check", "--exact", "-q", "--limit", "1", ORIG, NEW)
    assert code == ExitCode.PAIRS_FOUND
    assert f"{NEW} " in out and "./d/" not in out  # relative to --root, not ./d/new.go
    assert "1 more row not shown (1 pair" in out  # --limit reaches check's table too


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


def test_the_hook_definition_runs_check_on_the_files_given(tree: Tree) -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "minhashdup" and hook["language"] == "python"
    assert hook["pass_filenames"] is True and hook["require_serial"] is True
    assert not {"types", "types_or", "files", "exclude"} & set(hook)  # the scan's rules decide, no others
    words = shlex.split(hook["entry"])
    assert words == ["minhashdup", "check"]
    assert run(*words[1:], "--exact", "-q")[0] == ExitCode.OK  # pre-commit gave no file
    assert run(*words[1:], "--exact", "-q", ORIG)[0] == ExitCode.PAIRS_FOUND


# The real pre-commit client. It clones the hook's repository, builds a virtualenv and
# pip-installs the package with its dependencies: a few seconds once per PRE_COMMIT_HOME
# (shared by these tests), and again for each try-repo, which always uses a temporary store.


def _client_missing() -> str | None:
    if shutil.which("git") is None:
        return "needs git"
    if importlib.util.find_spec("pre_commit") is None:
        return "needs the pre-commit client: pip install -e '.[test]'"
    return None


client = pytest.mark.skipif(_client_missing() is not None, reason=_client_missing() or "")

#: pip's cache, read before the tests point XDG_CACHE_HOME elsewhere: the hook's virtualenv
#: installs from it as any pip install would.
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip"
)


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This checkout's package and hook definition, committed in a git repository of their
    own: what pre-commit clones and installs (never the state of a developer's working tree).
    Returns the repository and its commit."""
    repo = tmp_path_factory.mktemp("hook-repo")
    shutil.copytree(ROOT / "minhashdup", repo / "minhashdup", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    git(repo, "init", "-q")
    commit(repo, "the hook under test")
    return repo, git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit store for the session: the hook's environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def client_run(cwd: Path, home: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """``command`` in ``cwd``, with the tests' git identity and the shared pre-commit store;
    stdout and stderr together, as a person sees them."""
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home), "PIP_CACHE_DIR": PIP_CACHE}
    return subprocess.run(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900
    )


def pre_commit(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return client_run(cwd, home, sys.executable, "-m", "pre_commit", *args)


def project(path: Path, planted: bool) -> random.Random:
    """A committed git repository: two unrelated Go files, and with ``planted`` a near copy
    (J about 0.8) of one of them. Returns the random source, to write more files."""
    rng = random.Random(7)
    orig = go_file(rng, 10)
    files = {"src/orig.go": orig, "src/other.go": go_file(rng, 10)}
    if planted:
        files["lib/copy.go"] = near_copy(orig, rng, 1)
    for name, blocks in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(render_go(blocks))
    git(path, "init", "-q")
    commit(path, "first")
    return rng


def use_hook(path: Path, hook_repo: tuple[Path, str], args: list[str] | None = None) -> None:
    """A .pre-commit-config.yaml naming the hook at its commit, staged."""
    hook: dict[str, object] = {"id": "minhashdup", **({"args": args} if args else {})}
    config = {"repos": [{"repo": str(hook_repo[0]), "rev": hook_repo[1], "hooks": [hook]}]}
    (path / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    git(path, "add", ".pre-commit-config.yaml")


@client
def test_try_repo_all_files_fails_on_a_planted_near_duplicate(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    for name, planted in (("planted", True), ("clean", False)):
        (tmp_path / name).mkdir()
        project(tmp_path / name, planted)
    done = pre_commit(tmp_path / "planted", pre_commit_home, "try-repo", str(hook_repo[0]), "minhashdup", "--all-files")
    assert done.returncode == 1, done.stdout
    assert (
        "Failed" in done.stdout
        and "lib/copy.go" in done.stdout
        and "src/orig.go" in done.stdout
        and "./lib/" not in done.stdout
    )
    assert "minhashdup: 1 new near-duplicate pair with the files checked" in done.stdout
    done = pre_commit(tmp_path / "clean", pre_commit_home, "try-repo", str(hook_repo[0]), "minhashdup", "--all-files")
    assert done.returncode == 0 and "Passed" in done.stdout, done.stdout


@client
def test_a_commit_adding_a_near_duplicate_fails_until_accepted(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = project(tmp_path, planted=False)
    use_hook(tmp_path, hook_repo)
    assert pre_commit(tmp_path, pre_commit_home, "install").returncode == 0
    (tmp_path / "src" / "more.go").write_text(render_go(go_file(rng, 10)))
    git(tmp_path, "add", "-A")
    done = client_run(tmp_path, pre_commit_home, "git", "commit", "-q", "-m", "clean")
    assert done.returncode == 0 and "Passed" in done.stdout, done.stdout
    head = git(tmp_path, "rev-parse", "HEAD")
    orig = (tmp_path / "src" / "orig.go").read_text()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "copy.go").write_text(orig.replace("return", "return /* moved */", 1))
    git(tmp_path, "add", "lib/copy.go")
    done = client_run(tmp_path, pre_commit_home, "git", "commit", "-q", "-m", "a near copy")
    assert done.returncode == 1 and "lib/copy.go" in done.stdout, done.stdout
    assert git(tmp_path, "rev-parse", "HEAD") == head  # the commit was refused
    # Accepting it as the message says: record the tree's pairs, give the hook the baseline.
    accept = done.stdout[done.stdout.index("minhashdup: 1 new") :].splitlines()[1]
    monkeypatch.chdir(tmp_path)
    assert run(*shlex.split(accept)[1:], "-q")[0] == ExitCode.OK
    use_hook(tmp_path, hook_repo, ["--baseline", ".minhashdup-baseline.json"])
    git(tmp_path, "add", "-A")
    done = client_run(tmp_path, pre_commit_home, "git", "commit", "-q", "-m", "a known copy")
    assert done.returncode == 0, done.stdout
    assert git(tmp_path, "rev-parse", "HEAD") != head


@client
def test_all_files_split_into_several_runs_find_the_pair_in_each(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    # pre-commit cuts argument lists longer than 128 KiB into several runs, require_serial or
    # not: the first file and its near copy, the last, go to different runs.
    rng = random.Random(11)
    orig = go_file(rng, 10)
    (tmp_path / "a.go").write_text(render_go(orig))
    (tmp_path / "zz").mkdir()
    (tmp_path / "zz" / "copy.go").write_text(render_go(near_copy(orig, rng, 1)))
    filler = tmp_path / "m" / ("f" * 200)
    filler.mkdir(parents=True)
    for i in range(700):  # 700 names of about 210 bytes: more than 128 KiB
        (filler / f"{i:04d}.go").write_text(f"package m\n\nvar v{i} = {i}\n")
    git(tmp_path, "init", "-q")
    use_hook(tmp_path, hook_repo)
    commit(tmp_path, "many files")
    done = pre_commit(tmp_path, pre_commit_home, "run", "--all-files")
    assert done.returncode == 1, done.stdout
    assert done.stdout.count("minhashdup: 1 new near-duplicate pair with the files checked") == 2, done.stdout


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
