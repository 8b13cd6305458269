"""What a scanned repository's own pyproject.toml may set, and config and baseline files that are
broken or hostile (issue 11, items 2 and 9): each ends as one line and exit 2, never exit 3.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minhashdup.ci import baseline as baselines
from minhashdup.errors import ExitCode
from minhashdup.source.rules.globs import posix_class

from .conftest import go_file, near_copy, render_go, run

FOUND = "[tool.minhashdup]"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project (the current folder) with one near-duplicate pair, a.go ~ b.go."""
    rng = random.Random(2)
    blocks = go_file(rng, 10)
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.go").write_text(render_go(blocks))
    (root / "b.go").write_text(render_go(near_copy(blocks, rng, 1)))
    monkeypatch.chdir(root)
    return root


def pyproject(folder: Path, text: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text(text)
    return path


def usage_error(*args: str) -> str:
    """Run a command that must fail as a usage error; its one line of stderr."""
    code, out, err = run(*args)
    assert code == ExitCode.USAGE and out == "", err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# -- item 2: a found pyproject.toml may not choose where anything is written or read ---------------------


def test_the_issues_scenario_writes_nothing_outside_and_exits_2(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = pyproject(project, f'[tool.minhashdup]\noutput = "{elsewhere}/x.csv"\nformat = "csv"\nquiet = true\n')
    err = usage_error("scan", ".")
    assert err == (
        f"minhashdup: error: {path} {FOUND}: 'output' cannot be set by the scanned project (it names a file to"
        " write); pass --output on the command line (or in a file given with --config)\n"
    )
    assert list(elsewhere.iterdir()) == [] and sorted(p.name for p in project.iterdir()) == [
        "a.go",
        "b.go",
        "pyproject.toml",
    ]


REFUSED = {
    "output": "a file to write",
    "write-baseline": "a file to write",
    "write_baseline": "a file to write",
    "cache-dir": "the cache folder, written and then trusted",
    "files-from": "a file to read",
    "engine": "where the files are sent and lexed",
    "scheduler": "a cluster to send the files to",
}


@pytest.mark.parametrize("table", ["", ".scan", ".evaluate"])
@pytest.mark.parametrize("key", sorted(REFUSED))
def test_each_destination_key_is_refused_in_a_found_pyproject(
    project: Path, tmp_path: Path, key: str, table: str
) -> None:
    target = tmp_path / "target"
    path = pyproject(project, f'[tool.minhashdup{table}]\n{key} = "{target}"\n')
    where = f"{path} {FOUND}" + (f" [{table[1:]}]" if table else "")
    flag = "--" + key.replace("_", "-")
    err = usage_error("scan", ".", "-q")
    assert err == (
        f"minhashdup: error: {where}: {key!r} cannot be set by the scanned project (it names {REFUSED[key]});"
        f" pass {flag} on the command line (or in a file given with --config)\n"
    )
    assert not target.exists()


@pytest.mark.parametrize("command", ["evaluate", "tune"])
def test_every_command_refuses_a_found_pyproject_that_sets_a_destination(
    project: Path, tmp_path: Path, command: str
) -> None:
    pyproject(project, f'[tool.minhashdup]\noutput = "{tmp_path}/x.html"\nformat = "html"\n')
    args = [command] + ([".", "-q"] if command == "evaluate" else [])
    assert "'output' cannot be set by the scanned project" in usage_error(*args)
    assert not (tmp_path / "x.html").exists()


@pytest.mark.parametrize("value", ["/etc/passwd", "../outside.json", "sub/../../outside.json", "link.json"])
def test_a_baseline_outside_the_project_is_refused_in_a_found_pyproject(
    project: Path, tmp_path: Path, value: str
) -> None:
    (tmp_path / "outside.json").write_text('{"minhashdup_baseline": 1, "pairs": []}\n')
    (project / "link.json").symlink_to(tmp_path / "outside.json")  # inside by name, outside in fact
    path = pyproject(project, f'[tool.minhashdup]\nbaseline = "{value}"\n')
    assert usage_error("scan", ".", "-q") == (
        f"minhashdup: error: {path} {FOUND}: 'baseline' = {value!r} is outside the project folder {project};"
        " pass --baseline on the command line (or in a file given with --config)\n"
    )


def test_a_baseline_inside_the_project_still_works_from_a_found_pyproject(project: Path) -> None:
    assert run("scan", ".", "-q", "--exact", "--write-baseline", "dups.json")[0] == ExitCode.OK
    pyproject(project, '[tool.minhashdup]\nbaseline = "dups.json"\nfail-on-pairs = true\nformat = "json"\n')
    code, out, err = run("scan", ".", "-q", "--exact")
    assert code == ExitCode.OK, err  # the pair is known: the gate passes
    assert [p["known"] for p in json.loads(out)["pairs"]] == [True]


def test_allowed_keys_still_work_from_a_found_pyproject(project: Path) -> None:
    pyproject(
        project,
        "[tool.minhashdup]\nthreshold = 0.6\nexclude = ['*_test.go']\ninclude = ['*.go']\nexact = true\n"
        'format = "json"\nquiet = true\nfail-on-pairs = true\nnew-only = true\nbaseline-tolerance = 0.2\n'
        'jobs = 1\nlexer-engine = "pygments"\nmax-size = "512KiB"\nno-cache = true\nshingle = 5\n'
        "[tool.minhashdup.scan]\nmax-pairs = 3\n",
    )
    code, out, err = run("scan", ".")
    assert code == ExitCode.OK and err == "filtered out: not-included 1\n"  # quiet; 1 new pair, 3 allowed
    doc = json.loads(out)
    params = {k: doc["params"][k] for k in ("threshold", "exclude", "include", "exact", "new_only", "max_pairs")}
    assert params == {
        "threshold": 0.6,
        "exclude": ["*_test.go"],
        "include": ["*.go"],
        "exact": True,
        "new_only": True,
        "max_pairs": 3,
    }
    assert doc["params"]["baseline_tolerance"] == 0.2 and doc["params"]["max_size"] == 512 * 1024
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [("./a.go", "./b.go")]


def test_a_file_given_with_config_is_trusted_like_the_command_line(project: Path, tmp_path: Path) -> None:
    (tmp_path / "changed.txt").write_text("a.go\n")
    ci = tmp_path / "ci.toml"
    ci.write_text(
        f'output = "{tmp_path}/report.json"\nformat = "json"\nwrite-baseline = "{tmp_path}/dups.json"\n'
        f'cache-dir = "{tmp_path}/cache"\nfiles-from = "{tmp_path}/changed.txt"\nbaseline = "{tmp_path}/old.json"\n'
    )
    (tmp_path / "old.json").write_text('{"minhashdup_baseline": 1, "pairs": []}\n')
    pyproject(project, f'[tool.minhashdup]\noutput = "{tmp_path}/nope.json"\n')  # not read: --config wins
    code, out, err = run("scan", ".", "-q", "--exact", "--config", str(ci))
    assert code == ExitCode.OK and out == "", err
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["params"]["config_file"] == str(ci) and len(doc["pairs"]) == 1
    assert doc["stats"]["changes"] == {"files": 1, "pairs_left_out": 0, "unchecked": 0, "unpaired": 0}
    assert len(json.loads((tmp_path / "dups.json").read_text())["pairs"]) == 1
    assert (tmp_path / "cache").is_dir() and not (tmp_path / "nope.json").exists()


def test_a_config_file_cannot_name_another(project: Path) -> None:
    path = pyproject(project, '[tool.minhashdup]\nconfig = "other.toml"\n')
    assert usage_error("scan", ".") == (
        f"minhashdup: error: {path} {FOUND}: a config file cannot name another;"
        " give --config FILE on the command line\n"
    )


# -- item 9: wrong types, bad bytes, deep nesting: exit 2 with one line ----------------------------------


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("cache-dir = 5", "'cache-dir' must be a string (got integer 5)"),
        ("threshold = [0.9]", "'threshold' must be a number (got array [0.9])"),
        ("threshold = true", "'threshold' must be a number (got boolean True)"),
        ("bands = 4.5", "'bands' must be an integer (got float 4.5)"),
        ("include = '*.go'", "'include' must be an array of strings (got string '*.go')"),
        ("exclude = [1, 2]", "'exclude' must be an array of strings (got array [1, 2])"),
        ("max-size = 2.5", "'max-size' must be a size (an integer or a string) (got float 2.5)"),
        ("format = {a = 1}", "'format' must be a string (got table {'a': 1})"),
        ("quiet = [true]", "'quiet' must be true or false (got array [True])"),
        ("exact = 1", "'exact' must be true or false (got integer 1)"),
        ("fail-on-pairs = 0", "'fail-on-pairs' must be true or false (got integer 0)"),
        ("seed = 2000-01-01", "'seed' must be an integer (got date-time datetime.date(2000, 1, 1))"),
        (f"exclude = ['{'x' * 60}', 3]", f"'exclude' must be an array of strings (got array ['{'x' * 35}...)\n"),
    ],
)
def test_a_value_of_the_wrong_type_is_a_usage_error(project: Path, tmp_path: Path, setting: str, message: str) -> None:
    ci = tmp_path / "ci.toml"  # --config: cache-dir may be set there, so its type is what is refused
    ci.write_text(setting + "\n")
    err = usage_error("scan", ".", "--config", str(ci))
    assert err.startswith(f"minhashdup: error: {ci}: {message}"), err
    assert len(err) < 200


def test_a_pyproject_that_is_not_utf8_is_a_usage_error(project: Path) -> None:
    path = project / "pyproject.toml"
    path.write_bytes(b'[tool.minhashdup]\nthreshold = "\xff"\n')
    assert usage_error("scan", ".") == f"minhashdup: error: {path}: not valid TOML (not UTF-8 at byte 31)\n"


def test_a_pyproject_nested_too_deep_is_a_usage_error(project: Path) -> None:
    path = pyproject(project, "[tool.minhashdup]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert usage_error("scan", ".") == (
        f"minhashdup: error: {path}: not valid TOML (arrays or tables nested too deep); flatten it\n"
    )


# -- item 9: baselines ---------------------------------------------------------------------------------


def write_baseline(path: Path, pairs: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps({"minhashdup_baseline": 1, "pairs": pairs}))


def test_a_baseline_nested_too_deep_is_a_usage_error(project: Path) -> None:
    (project / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    assert usage_error("scan", ".", "--baseline", "deep.json") == (
        "minhashdup: error: --baseline deep.json: cannot be read (JSON nested too deep); rewrite it with"
        " --write-baseline\n"
    )


def test_a_stale_baseline_gives_twenty_notes_and_a_count(project: Path) -> None:
    write_baseline(
        project / "dups.json",
        [{"a": "a.go", "b": f"gone/{n:03}.go", "jaccard": 0.9} for n in range(50)]
        + [{"a": f"gone/{n:03}.go", "b": f"gone/x{n:03}.go", "jaccard": 0.9} for n in range(50)],
    )
    code, out, err = run("scan", ".", "--exact", "-f", "json", "--baseline", "dups.json")
    assert code == ExitCode.OK
    notes = [line for line in err.splitlines() if line.startswith("warning: baseline dups.json")]
    assert notes[0] == "warning: baseline dups.json: gone/000.go no longer exists; 2 recorded pairs dropped"
    assert len(notes) == 21 and notes[19].startswith("warning: baseline dups.json: gone/019.go no longer exists")
    assert notes[20] == (
        "warning: baseline dups.json: 80 more recorded files no longer exist (100 recorded pairs dropped in all);"
        " rewrite it with --write-baseline"
    )
    assert json.loads(out)["stats"]["baseline"]["dropped"] == 100


def test_stats_baseline_counts_each_distinct_entry_once(project: Path) -> None:
    a_b = {"a": "a.go", "b": "b.go", "jaccard": 0.99}
    both_gone = {"a": "gone1.go", "b": "gone2.go", "jaccard": 0.9}
    one_gone = {"a": "a.go", "b": "gone1.go", "jaccard": 0.9}
    write_baseline(
        project / "dups.json",
        [a_b, a_b, both_gone, both_gone, {**both_gone, "a": "gone2.go", "b": "gone1.go"}, one_gone],
    )
    code, out, err = run("scan", ".", "--exact", "-f", "json", "--baseline", "dups.json")
    assert code == ExitCode.OK, err
    # Three distinct entries: a-b (known), gone1-gone2 and a-gone1 (dropped).
    assert json.loads(out)["stats"]["baseline"] == {"recorded": 3, "known": 1, "risen": 0, "gone": 0, "dropped": 2}
    assert "warning: baseline dups.json: gone1.go no longer exists; 2 recorded pairs dropped" in err
    assert "warning: baseline dups.json: gone2.go no longer exists; 1 recorded pair dropped" in err


def test_an_entry_pairing_a_gone_file_with_itself_is_one_dropped_entry(project: Path) -> None:
    # --write-baseline writes such an entry for a dataset holding one file under two spellings.
    itself = {"a": "gone.go", "b": "gone.go", "jaccard": 1.0}
    write_baseline(project / "dups.json", [itself, {**itself, "b": "gone2.go"}])
    code, out, err = run("scan", ".", "--exact", "-f", "json", "--baseline", "dups.json")
    assert code == ExitCode.OK, err
    assert json.loads(out)["stats"]["baseline"]["dropped"] == 2
    assert "warning: baseline dups.json: gone.go no longer exists; 2 recorded pairs dropped" in err.splitlines()
    assert "warning: baseline dups.json: gone2.go no longer exists; 1 recorded pair dropped" in err.splitlines()


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_write_baseline_leaves_no_temporary_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    target = project / "dups.json"
    real_replace = os.replace

    def failing_replace(src: Any, dst: Any) -> None:
        if os.fspath(dst) == str(target):
            raise error
        real_replace(src, dst)

    monkeypatch.setattr(baselines.os, "replace", failing_replace)
    code, _, err = run("scan", ".", "-q", "--exact", "--write-baseline", str(target))
    if isinstance(error, OSError):
        assert code == ExitCode.USAGE
        assert err == f"minhashdup: error: --write-baseline {target}: cannot write (No space left on device)\n"
    else:
        assert code == ExitCode.INTERRUPTED
    assert sorted(p.name for p in project.iterdir()) == ["a.go", "b.go"]


# -- bounds on the work: a found config may tighten them, never loosen them -------------------------------


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("lex-timeout = 0", "'lex-timeout' = 0 loosens a bound on the work a scan may do (default 60 s)"),
        ("lex-timeout = 600", "'lex-timeout' = 600 loosens a bound on the work a scan may do (default 60 s)"),
        ('max-size = "2MiB"', "'max-size' = '2MiB' loosens a bound on the work a scan may do (default 1048576)"),
        ("max-bucket = 100000", "'max-bucket' = 100000 loosens a bound on the work a scan may do (default 1000)"),
    ],
)
def test_a_found_config_cannot_loosen_a_bound(project: Path, line: str, shown: str) -> None:
    path = pyproject(project, f"{FOUND}\n{line}\n")
    err = usage_error("scan", ".", "-q")
    assert err == f"minhashdup: error: {path} {FOUND}: {shown}; a scanned project may only lower it: pass " + (
        "--" + line.split(" =")[0] + " on the command line (or in a file given with --config)\n"
    )


def test_a_found_config_may_tighten_a_bound_and_config_may_loosen_it(project: Path, tmp_path: Path) -> None:
    pyproject(project, f'{FOUND}\nlex-timeout = 5\nmax-size = "2KiB"\nmax-bucket = 10\n')
    code, out, _ = run("scan", ".", "-q", "-f", "json")
    assert code == ExitCode.OK
    assert json.loads(out)["params"]["max_size"] == 2048
    chosen = tmp_path / "ci.toml"
    chosen.write_text("lex-timeout = 0\nmax-size = '4MiB'\n")
    code, out, _ = run("scan", ".", "-q", "-f", "json", "--config", str(chosen))
    assert code == ExitCode.OK and json.loads(out)["params"]["max_size"] == 4 * 1024 * 1024


def test_no_config_ignores_the_projects_pyproject(project: Path) -> None:
    # A change under review must not shape its own gate: with --no-config its exclude is not read.
    pyproject(project, f'{FOUND}\nexclude = ["*"]\n')
    code, out, _ = run("scan", ".", "-q", "-f", "json")
    assert code == ExitCode.OK and json.loads(out)["pairs"] == []
    code, out, _ = run("scan", ".", "-q", "-f", "json", "--no-config")
    assert code == ExitCode.OK
    assert [(p["a"], p["b"]) for p in json.loads(out)["pairs"]] == [("./a.go", "./b.go")]
    assert json.loads(out)["params"]["config_file"] is None
    for args in (["--no-config", "--config", "pyproject.toml"], ["--config", "pyproject.toml", "--no-config"]):
        err = usage_error("scan", ".", *args)
        assert err == "minhashdup: error: --config and --no-config exclude each other; give one\n"


@pytest.mark.parametrize(
    "glob", ["[[:alpha:]]*.py", "x[![:digit:]_].go", "[a[:digit:]]", "[]x[:alpha:]]", "\\\\[[:x:]]", "[\\[:alpha:]]"]
)
def test_a_posix_class_in_a_glob_is_refused_not_read_as_another_set(project: Path, glob: str) -> None:
    err = usage_error("scan", ".", "--no-config", "--include", glob)
    assert "POSIX classes like [:alpha:] are not supported" in err


@pytest.mark.parametrize("glob", ["\\[[:x:]]*.go", "\\[:x:]*.go", "[:x:]*.go"])
def test_an_escaped_bracket_before_a_colon_is_no_posix_class(project: Path, glob: str) -> None:
    # \[[:x:]] is a literal [, the set of : and x, then ]: git and pathspec read it alike.
    # ([\[:alpha:]] is refused: in a set, git reads \[ as [ but pathspec's RE2 a \ and a class.)
    (project / "[x]a.go").write_text((project / "a.go").read_text())
    code, out, err = run("scan", ".", "--no-config", "--exact", "-f", "json", "--include", glob)
    assert code == ExitCode.OK, err
    assert json.loads(out)["stats"]["files_walked"] == (1 if glob.startswith("\\[[") else 0)


_CLASS_NAMES = st.sampled_from(["alpha", "digit", "space", "x"])
_PLAIN = st.text(alphabet="ab.*?/-_", max_size=3)
_NO_CLASS = st.one_of(
    _PLAIN,
    st.builds("[{}]".format, st.text(alphabet="ab0-9:", min_size=1, max_size=4)),  # a set without a class
    st.builds("\\[[:{}:]]".format, _CLASS_NAMES),  # an escaped [, then the set of : and the name
    st.builds("\\\\\\[[:{}:]]".format, _CLASS_NAMES),  # an escaped \, an escaped [, a set
)
_CLASS = st.builds(  # a class in a set, after nothing, a negation, a member, an escaped ] or [
    "[{}[:{}:]{}]".format,
    st.sampled_from(["", "!", "^", "]", "a", "\\]", "\\"]),
    _CLASS_NAMES,
    st.sampled_from(["", "_"]),
)


@given(st.lists(st.tuples(st.booleans(), _NO_CLASS, _CLASS), min_size=1, max_size=4))
def test_posix_classes_are_found_in_sets_and_escaped_brackets_pass(pieces: list[tuple[bool, str, str]]) -> None:
    glob = "".join(cls if real else plain for real, plain, cls in pieces)
    assert posix_class(glob) == any(real for real, _, _ in pieces), glob
