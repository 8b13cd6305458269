"""Issue 12: the library equals the CLI. Each command is one call whose result's ``to_dict()``
is the command's JSON; validation lives in the library and names parameters, which the CLI
spells as flags; a library call keeps no cache and starts no process unless asked."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

import minhashdup
from minhashdup import Config, ConfigError
from minhashdup.engine import parallel
from minhashdup.engine import workers as extract_module
from minhashdup.errors import ExitCode
from minhashdup.report import sarif

from .conftest import GIT_ENV, TreeFactory, go_file, near_copy, render_go, run

TIMINGS = ("seconds", "cpu_seconds", "cache")


def _untimed(doc: Any) -> Any:
    """``doc`` without its timings (and the cache's counts, which depend on earlier runs)."""
    if isinstance(doc, dict):
        return {k: _untimed(v) for k, v in doc.items() if k not in TIMINGS}
    if isinstance(doc, list):
        return [_untimed(v) for v in doc]
    return doc


@pytest.fixture
def tree(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Families of near-copies of Go files, and an identical pair; the current folder."""
    rng = random.Random(12)
    files: dict[str, str | bytes] = {}
    for family in range(3):
        base = go_file(rng, 8)
        files[f"src/f{family}/a.go"] = render_go(base)
        for copy in range(3):
            files[f"src/f{family}/copy{copy}.go"] = render_go(near_copy(base, rng, copy + 1))
    files["src/same/one.go"] = files["src/same/two.go"] = render_go(go_file(rng, 6))
    root = make_tree(files)
    monkeypatch.chdir(root)
    return root


def _cli_json(*args: str) -> Any:
    code, out, err = run(*args, "-f", "json", "--no-config")
    assert code == ExitCode.OK, err
    return json.loads(out)


def test_scan_is_the_cli_scan(tree: Path) -> None:
    result = minhashdup.scan("src", threshold=0.6, bands=16, rows=3)
    assert len(result.pairs) > 5
    cli = _cli_json("scan", "src", "-t", "0.6", "-b", "16", "-r", "3", "--no-cache", "-q")
    assert _untimed(result.to_dict()) == _untimed(cli)
    # A Config works as it always did, and keywords override it.
    assert _untimed(minhashdup.scan(["src"], Config(threshold=0.6, bands=16, rows=3)).to_dict()) == _untimed(cli)
    assert _untimed(minhashdup.scan("src", Config(threshold=0.9), threshold=0.6, bands=16, rows=3).to_dict()) == (
        _untimed(cli)
    )


@pytest.mark.parametrize("fmt", ["csv", "sarif", "html"])
def test_write_report_is_the_cli_report(tree: Path, fmt: str) -> None:
    # SARIF and HTML show more than the Result (the pairs' shared runs, the files' texts, the
    # project root); write_report computes it as the command does, before the renderer writes.
    buffer = io.StringIO()
    minhashdup.write_report(minhashdup.scan("src", threshold=0.6), fmt, buffer)
    code, out, err = run("scan", "src", "-t", "0.6", "-f", fmt, "--no-config", "--no-cache", "-j", "1", "-q")
    assert code == ExitCode.OK, err
    if fmt == "sarif":
        assert _untimed(json.loads(buffer.getvalue())) == _untimed(json.loads(out))
        regions = [r["locations"][0]["physicalLocation"]["region"] for r in json.loads(out)["runs"][0]["results"]]
        assert any(r["startLine"] > 1 for r in regions)  # the runs were found, not line 1 for want of them
    else:
        assert buffer.getvalue() == out
    if fmt == "html":
        assert "copy0.go" in out and "func " in out  # the side-by-side view holds the files' texts


def test_write_report_warns_at_the_callers_line(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A SARIF log cut to GitHub's limits is a warning (warnings.warn by default) attributed to
    # the line that called write_report, as any library warning is: not to a line inside the
    # package (where a filter by module, or -W error::UserWarning:mymodule, would never match).
    monkeypatch.setattr(sarif, "MAX_RESULTS", 1)
    result = minhashdup.scan("src", threshold=0.6)
    assert len(result.pairs) > 1
    with pytest.warns(UserWarning, match=r"^SARIF truncated: 1 of \d+ results kept") as caught:
        minhashdup.write_report(result, "sarif", io.StringIO())
    assert [w.filename for w in caught] == [__file__]


def test_write_report_names_what_it_refuses(tree: Path) -> None:
    result = minhashdup.scan("src")
    with pytest.raises(ConfigError, match=r"^fmt must be one of table, json, jsonl, csv, sarif, html \(got 'xml'\)$"):
        minhashdup.write_report(result, "xml", io.StringIO())
    with pytest.raises(ConfigError, match=r"^per must be 'pair' or 'cluster' \(got 'file'\)$"):
        minhashdup.write_report(result, "sarif", io.StringIO(), per="file")


def test_scan_with_the_ci_review_is_the_cli_scan(tree: Path) -> None:
    recorded = minhashdup.scan("src", write_baseline="dups.json")
    assert recorded.stats.baseline["written"] == len(recorded.pairs) > 0
    assert (tree / "dups.json").is_file()
    (tree / "src/f0/copy3.go").write_text((tree / "src/f0/a.go").read_text())  # a new pair
    result = minhashdup.scan("src", baseline="dups.json", max_pairs=0)
    assert result.stats.new_pairs > 0 and minhashdup.gate(result)
    assert [p.known for p in result.pairs].count(False) == result.stats.new_pairs
    code, out, _ = run("scan", "src", "--baseline", "dups.json", "--fail-on-pairs", "-f", "json", "--no-config", "-q")
    assert code == ExitCode.PAIRS_FOUND
    assert _untimed(result.to_dict()) == _untimed(json.loads(out))
    # review() applies the same review to a scan already made; new_only leaves known pairs out.
    again = minhashdup.review(minhashdup.scan("src"), "src", baseline="dups.json", new_only=True)
    assert [p.known for p in again.pairs] == [False] * result.stats.new_pairs
    assert not minhashdup.gate(again)  # no max_pairs: no gate


def test_compare_is_the_cli_compare(tree: Path) -> None:
    a, b = "src/f1/a.go", "src/f1/copy2.go"
    found = minhashdup.compare(a, b, shingle=4, hashes=64, seed=3, bits=16)
    assert found.common > 0 and found.runs
    cli = _cli_json("compare", a, b, "-k", "4", "--hashes", "64", "--seed", "3", "--bits", "16")
    assert found.to_dict() == cli


def test_evaluate_is_the_cli_evaluate(tree: Path) -> None:
    found = minhashdup.evaluate("src", threshold=0.6, low=0.2, repeats=3)
    assert sum(b.pairs for b in found.bins) > 5
    cli = _cli_json("evaluate", "src", "-t", "0.6", "--low", "0.2", "--repeats", "3", "--no-cache", "-q")
    assert _untimed(found.to_dict()) == _untimed(cli)


def test_tune_is_the_cli_tune() -> None:
    found = minhashdup.tune(threshold=0.8, max_hashes=64, min_recall=0.95, bits=8)
    assert found.recommended is not None and found.recommended.p(0.8) >= 0.95
    assert found.to_dict() == _cli_json(
        "tune", "-t", "0.8", "--max-hashes", "64", "--min-recall", "0.95", "--bits", "8"
    )


#: (library call, its message, the command, the command's message)
BAD_VALUES: list[tuple[Any, str, list[str], str]] = [
    (
        lambda: minhashdup.scan("src", threshold=80),
        "threshold must be above 0 and at most 1 (got 80; did you mean 0.8?)",
        ["scan", "src", "-t", "80"],
        "--threshold must be above 0 and at most 1 (got 80; did you mean 0.8?)",
    ),
    (
        lambda: minhashdup.scan("src", bands=4096, rows=64),
        "bands x rows must be at most 8192 hashes (got 4096 x 64 = 262144); lower one of them",
        ["scan", "src", "-b", "4096", "-r", "64"],
        "--bands x --rows must be at most 8192 hashes (got 4096 x 64 = 262144); lower one of them",
    ),
    (
        lambda: minhashdup.scan("src", tolerance=2.0),
        "tolerance must be between 0 and 1 (got 2)",
        ["scan", "src", "--baseline-tolerance", "2"],
        "--baseline-tolerance must be between 0 and 1 (got 2)",
    ),
    (
        lambda: minhashdup.scan("src", baseline="no{0}.json"),
        "baseline no{0}.json: no such file; record one with write_baseline no{0}.json",
        ["scan", "src", "--baseline", "no{0}.json"],
        "--baseline no{0}.json: no such file; record one with --write-baseline no{0}.json",
    ),
    (
        lambda: minhashdup.scan("src", exclude=["!"]),
        "exclude: invalid glob (Invalid git pattern: '!'); use gitignore syntax",
        ["scan", "src", "--exclude", "!"],
        "--exclude: invalid glob (Invalid git pattern: '!'); use gitignore syntax",
    ),
    (
        lambda: minhashdup.tune(0.5, max_hashes=1),
        "max_hashes must be between 2 and 8192 (got 1)",
        ["tune", "--max-hashes", "1"],
        "--max-hashes must be between 2 and 8192 (got 1)",
    ),
    (
        lambda: minhashdup.tune(0.5, min_recall=1.0),
        "min_recall must be above 0 and below 1 (got 1)",
        ["tune", "--min-recall", "1"],
        "--min-recall must be above 0 and below 1 (got 1)",
    ),
    (
        lambda: minhashdup.evaluate("src", low=0.0),
        "low must be above 0 and below 1 (got 0)",
        ["evaluate", "src", "--low", "0"],
        "--low must be above 0 and below 1 (got 0)",
    ),
    (
        lambda: minhashdup.evaluate("src", repeats=1001),
        "repeats must be between 1 and 1000 (got 1001)",
        ["evaluate", "src", "--repeats", "1001"],
        "--repeats must be between 1 and 1000 (got 1001)",
    ),
    (
        lambda: minhashdup.compare("src/f0/a.go", "src/f0/copy0.go", hashes=0),
        "hashes must be between 1 and 4096 (got 0)",
        ["compare", "src/f0/a.go", "src/f0/copy0.go", "--hashes", "0"],
        "--hashes must be between 1 and 4096 (got 0)",
    ),
]


@pytest.mark.parametrize(("call", "message", "args", "flagged"), BAD_VALUES, ids=[b[2][-2] for b in BAD_VALUES])
def test_the_library_names_parameters_and_the_cli_names_flags(
    tree: Path, call: Any, message: str, args: list[str], flagged: str
) -> None:
    with pytest.raises(minhashdup.MinhashdupError) as caught:
        call()
    assert str(caught.value) == message
    assert run(*args) == (ExitCode.USAGE, "", f"minhashdup: error: {flagged}\n")


def test_a_revision_that_is_not_a_commit_names_the_parameter(tree: Path) -> None:
    subprocess.run(["git", "init", "-q", "."], check=True, env={**os.environ, **GIT_ENV})
    with pytest.raises(minhashdup.MinhashdupError, match=r"^changed_since no-such-ref: not a commit of the repository"):
        minhashdup.scan("src", changed_since="no-such-ref")
    code, _, err = run("scan", "src", "--changed-since", "no-such-ref")
    assert code == ExitCode.USAGE and err.startswith("minhashdup: error: --changed-since no-such-ref: not a commit")


def test_a_bad_value_is_refused_before_any_file_is_read(tree: Path, lexed: list[str]) -> None:
    with pytest.raises(ConfigError, match=r"^repeats must be between 1 and 1000 \(got 0\)$"):
        minhashdup.evaluate("src", repeats=0)
    with pytest.raises(minhashdup.MinhashdupError, match=r"^baseline nothing\.json: no such file"):
        minhashdup.scan("src", baseline="nothing.json")
    assert lexed == []


def test_an_unknown_keyword_is_a_type_error_with_a_suggestion(tree: Path) -> None:
    with pytest.raises(
        TypeError, match=r"^scan\(\) got an unexpected keyword argument 'treshold'; did you mean 'threshold'\?$"
    ):
        minhashdup.scan("src", treshold=0.8)
    with pytest.raises(TypeError, match=r"^evaluate\(\) got an unexpected keyword argument 'baseline'"):
        minhashdup.evaluate("src", baseline="dups.json")


def test_a_library_scan_keeps_no_cache_unless_asked(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    minhashdup.scan("src")
    minhashdup.evaluate("src", repeats=2)
    minhashdup.scan(["src"], Config(threshold=0.7))
    assert list(home.iterdir()) == []
    asked = tmp_path / "asked"
    first = minhashdup.scan("src", cache_dir=str(asked))
    assert first.stats.cache["lexed"] + first.stats.cache["copies"] == len(first.files) and any(asked.iterdir())
    assert minhashdup.scan("src", cache_dir=str(asked)).stats.cache["result"] == 1  # replayed
    other = tmp_path / "other"
    assert minhashdup.scan("src", Config(threshold=0.7), cache_dir=str(other)).stats.cache["lexed"] > 0
    assert any(other.iterdir())
    assert list(home.iterdir()) == []
    # The command keeps its default: the cache under XDG_CACHE_HOME.
    code, _, _ = run("scan", "src", "-q")
    assert code == ExitCode.OK and any((home / ".cache" / "minhashdup").iterdir())


def test_a_library_scan_starts_no_process_unless_asked(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []

    def no_pool(workers: int) -> Any:
        asked.append(workers)
        raise OSError("no processes here")

    monkeypatch.setattr(extract_module, "_INLINE_BYTES", 0)  # workers would pay even for this tree
    monkeypatch.setattr(extract_module, "process_pool", no_pool)
    monkeypatch.setattr(parallel, "process_pool", no_pool)
    monkeypatch.setattr(parallel, "usable_cores", lambda: 4)
    result = minhashdup.scan("src")
    assert result.pairs and result.warnings == [] and asked == []
    assert minhashdup.evaluate("src", repeats=1).bins and asked == []
    # Asked for (jobs), the pool is used: the patch above does reach it.
    with pytest.raises(OSError, match="no processes here"):
        minhashdup.scan("src", jobs=2)
    assert asked == [2]


@pytest.mark.skipif(parallel.start_method() != "forkserver", reason="workers fork from a fork server on POSIX only")
def test_workers_start_with_the_lexer_index_the_fork_server_built() -> None:
    # Built by each worker, the index cost each one half a second before its first file where a
    # pygments plugin is installed (IPython's imports IPython); the fork server builds it once.
    with parallel.process_pool(1) as pool:
        misses, size = pool.submit(_index_in_this_process).result(timeout=120)
    assert (misses, size) == (1, 1)  # built before this worker was forked, not by it


def test_the_main_process_builds_no_lexer_index_when_workers_lex(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Batched by size alone, files get their lexers in the workers only: this process never
    # loads pygments' plugins (half a second where IPython is installed) for files it does not lex.
    from minhashdup.source import tokens

    monkeypatch.setattr(extract_module, "_INLINE_BYTES", 0)  # a small tree, lexed by workers
    tokens._matches_for_name.cache_clear()  # names met by earlier scans would answer without the index
    tokens._name_index.cache_clear()
    pooled = minhashdup.scan("src", jobs=2)
    assert tokens._name_index.cache_info().misses == 0 and pooled.warnings == []
    inline = minhashdup.scan("src", jobs=1)  # the same pairs, the identical two as one group
    assert pooled.pairs == inline.pairs and pooled.groups == inline.groups and len(pooled.groups) == 1


def _index_in_this_process() -> tuple[int, int]:
    from minhashdup.source import tokens

    info = tokens._name_index.cache_info()
    return info.misses, info.currsize
