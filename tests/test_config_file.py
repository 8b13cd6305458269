"""Options from [tool.minhashdup] in pyproject.toml or --config FILE; command-line flags win."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from minhashdup.errors import ExitCode

from .conftest import go_file, near_copy, render_go, run


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with one near-duplicate pair and a test file copying it; cwd is a subfolder."""
    rng = random.Random(2)
    blocks = go_file(rng, 10)
    for name, content in {
        "src/a.go": blocks,
        "src/b.go": near_copy(blocks, rng, 1),
        "src/a_test.go": blocks,
    }.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_go(content))
    monkeypatch.chdir(tmp_path / "src")
    return tmp_path


def settings(folder: Path, text: str, name: str = "pyproject.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_pyproject_table_in_a_parent_sets_options_and_params_show_them(project: Path) -> None:
    path = settings(
        project,
        '[project]\nname = "x"\n\n[tool.minhashdup]\nexclude = ["*_test.go"]\nthreshold = 0.6\n'
        'fail-on-pairs = true\nformat = "json"\nexact = true\n',
    )
    code, out, _ = run("scan", ".", "-q")
    assert code == ExitCode.PAIRS_FOUND  # the gate, from the file
    doc = json.loads(out)  # the format, from the file
    assert doc["params"]["exclude"] == ["*_test.go"] and doc["params"]["threshold"] == 0.6
    assert doc["params"]["exact"] is True and doc["params"]["max_pairs"] == 0
    assert doc["params"]["config_file"] == str(path)
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [("./a.go", "./b.go")]


def test_command_line_flags_win(project: Path) -> None:
    settings(project, '[tool.minhashdup]\nexclude = ["*_test.go"]\nthreshold = 0.6\nformat = "json"\nexact = true\n')
    code, out, _ = run("scan", ".", "-q", "--threshold", "0.99", "--exclude", "b.go")
    doc = json.loads(out)
    assert code == ExitCode.OK and doc["params"]["threshold"] == 0.99 and doc["params"]["exclude"] == ["b.go"]
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [("./a.go", "./a_test.go")]


def test_nearest_pyproject_without_the_table_is_passed_over(project: Path) -> None:
    settings(project / "src", '[project]\nname = "inner"\n')
    settings(project, '[tool.minhashdup]\nformat = "jsonl"\n')
    code, out, _ = run("scan", ".", "-q", "--exact")
    assert code == ExitCode.OK and all(json.loads(line)["jaccard"] for line in out.splitlines())


def test_config_option_reads_a_plain_toml_file(project: Path) -> None:
    path = settings(project, 'format = "csv"\ninclude = ["a*.go"]\n', name="ci.toml")
    code, out, _ = run("scan", ".", "-q", "--exact", "--config", str(path))
    assert code == ExitCode.OK
    assert out.splitlines()[0].startswith("a,b,jaccard") and out.count("\n") == 2  # a.go ~ a_test.go only


def test_keys_of_other_commands_are_ignored_and_command_tables_apply_to_their_command(project: Path) -> None:
    settings(project, '[tool.minhashdup]\nlow = 0.2\nformat = "json"\n\n[tool.minhashdup.evaluate]\nlow = 0.4\n')
    assert run("scan", ".", "-q")[0] == ExitCode.OK  # 'low' is evaluate's: scan ignores it
    code, out, _ = run("evaluate", ".", "-q")
    assert code == ExitCode.OK and json.loads(out)["bins"][0]["low"] == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tool.minhashdup]\nbandz = 4\n", "[tool.minhashdup]: unknown option 'bandz' (did you mean 'bands'?)"),
        ("[tool.minhashdup.scan]\nlow = 0.2\n", "[scan]: 'low' is not an option of this command"),
        ("[tool.minhashdup]\nbands = 'many'\n", "'many' is not a valid integer"),
        ("[tool.minhashdup]\nthreshold = 80\n", "did you mean 0.8?"),
        ("[tool.minhashdup\nbands = 4\n", "not valid TOML"),
        ("[tool]\nminhashdup = 3\n", "tool.minhashdup must be a table of options"),
    ],
)
def test_bad_settings_are_one_line_usage_errors(project: Path, text: str, message: str) -> None:
    path = settings(project, text)
    code, out, err = run("scan", ".", "-q")
    assert code == ExitCode.USAGE and out == "" and err.count("\n") == 1, err
    assert message in err and "Traceback" not in err
    if "valid integer" in message:
        assert f"(set in {path})" in err


def test_missing_config_file_is_a_usage_error(project: Path) -> None:
    code, _, err = run("scan", ".", "--config", "nowhere.toml")
    assert code == ExitCode.USAGE and "nowhere.toml: cannot be read" in err
