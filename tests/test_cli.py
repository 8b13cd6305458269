from __future__ import annotations

import csv
import io
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minhashdup import Config, scan
from minhashdup.errors import ExitCode

from .conftest import TreeFactory, go_file, near_copy, render_go, run


@pytest.fixture
def tree(make_tree: TreeFactory) -> Path:
    rng = random.Random(9)
    blocks = go_file(rng, 10)
    return make_tree(
        {
            "a/orig.go": render_go(blocks),
            "b/edit.go": render_go(near_copy(blocks, rng, 2)),
            "c/other.go": render_go(go_file(rng, 10)),
            "c/other_test.go": render_go(blocks),
            "data.bin": b"\x00\x01binary",
        }
    )


def test_json_document_shape_and_params(tree: Path) -> None:
    code, out, err = run("scan", str(tree), "--format", "json", "--exclude", "*_test.go", "-q", "-t", "0.6")
    assert code == ExitCode.OK
    doc = json.loads(out)
    assert list(doc) == ["schema_version", "params", "stats", "pairs", "clusters", "groups"]
    assert doc["params"] == {
        "bands": 12,
        "rows": 4,
        "threshold": 0.6,
        "shingle": 5,
        "seed": 1,
        "min_shingles": 20,
        "max_size": 1048576,
        "max_bucket": 1000,
        "exact": False,
        "completion": True,
        "completion_cap": 100,
        "bits": 64,
        "include": [],
        "exclude": ["*_test.go"],
        "gitignore": True,
        "include_generated": False,
        "exclude_vendored": False,
        "baseline": None,
        "baseline_tolerance": 0.1,
        "new_only": False,
        "changed_since": None,
        "staged": False,
        "files_from": False,
        "max_pairs": None,
        "config_file": None,
    }
    [pair] = doc["pairs"]
    assert (pair["a"], pair["b"]) == (str(tree / "a" / "orig.go"), str(tree / "b" / "edit.go"))
    assert list(pair) == [
        "a",
        "b",
        "jaccard",
        "estimate",
        "shingles_a",
        "shingles_b",
        "common",
        "known",
        "vendored_a",
        "vendored_b",
    ]
    assert pair["known"] is False
    assert pair["jaccard"] == pytest.approx(pair["common"] / (pair["shingles_a"] + pair["shingles_b"] - pair["common"]))
    assert doc["stats"]["skipped"] == {"binary": 1, "excluded": 1}
    assert err == "skipped 1 files: binary 1 (-v lists them); filtered out: excluded 1\n"


def _boxes(text: str) -> tuple[dict[str, list[list[str]]], list[str]]:
    """The tables rich drew in ``text`` (title -> rows of cells, the header first) and the
    lines after the last table."""
    tables: dict[str, list[list[str]]] = {}
    lines = text.splitlines()
    rows: list[list[str]] = []
    after = 0
    for i, line in enumerate(lines):
        if line.startswith("┏"):
            rows = tables.setdefault(lines[i - 1].strip(), [])
        elif line.startswith(("┃", "│")):
            rows.append([cell.strip() for cell in line.rstrip()[1:-1].split(line[0])])
        elif line.startswith("└"):
            after = i + 1
    return tables, lines[after:]


@pytest.mark.parametrize("relative", [False, True], ids=["long-paths", "short-paths"])
def test_table_lists_pairs_by_family_then_summary(tree: Path, relative: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # not a terminal: as wide as the paths need
    if relative:  # short paths: the narrowest table (100 columns), narrower than the summary
        monkeypatch.chdir(tree)
    root = Path(".") if relative else tree
    code, out, _ = run("scan", str(root), "-q")
    assert code == ExitCode.OK
    result = scan([str(root)], Config())  # the same scan through the library: the values to show
    orig, edit, twin = (os.path.join(str(root), p) for p in ("a/orig.go", "b/edit.go", "c/other_test.go"))
    assert [(p.a, p.b) for p in result.pairs] == [(orig, twin), (orig, edit), (edit, twin)]
    tables, summary = _boxes(out)
    where = "the current folder" if relative else f"{tree}{os.sep}"
    assert list(tables) == [
        f"Near-duplicate pairs (Jaccard >= 0.5) by family, largest first; paths relative to {where}"
    ]
    (rows,) = tables.values()
    n = result.pairs[0].common  # orig.go and other_test.go are the same file: one group of two
    near = result.pairs[1]  # edit.go against the group: the same numbers for both its files
    assert (near.jaccard, near.common) == (result.pairs[2].jaccard, result.pairs[2].common)
    assert rows == [
        ["jaccard", "file a", "file b", "common", "shingles a/b"],
        [f"{near.jaccard:.2f}-1.00", "family of 3 files, 3 pairs", "", "", ""],  # the family's heading
        ["1.000", "a/orig.go", "c/other_test.go", str(n), f"{n}/{n}"],  # paths relative to the PATH
        [f"{near.jaccard:.3f}", "a/orig.go (+1 identical)", "b/edit.go", str(near.common), f"{n}/{near.shingles_b}"],
    ]
    assert summary[:4] == [
        "files: 4 scanned, 4 compared (3 distinct, 1 identical groups)",
        "skipped: binary 1",
        "bands x rows: 12 x 4, candidates: 1, verified pairs: 3, clusters: 1",
        # orig.go and its twin are one identical group: the one candidate stands for two file pairs
        "pairs found: 1 identical, 2 from the 1 candidates, 0 by family completion (0 checks in 0 rounds)",
    ]
    stages = (
        r"walk \d+\.\d\d, lex \d+\.\d\d, signature \d+\.\d\d, bands \d+\.\d\d, exact \d+\.\d\d,"
        r" complete \d+\.\d\d, cluster \d+\.\d\d"
    )
    cache = r"cache: 0 files reused, 5 read afresh"  # data.bin is read too, to find it binary
    assert re.fullmatch(rf"seconds: {stages} \(total \d+\.\d\d\); {cache}", summary[4]), summary[4]
    assert len(summary) == 5


def test_jsonl_and_csv_carry_the_same_pairs(tree: Path, tmp_path: Path) -> None:
    _, out, _ = run("scan", str(tree), "-f", "json", "-q")
    pairs = json.loads(out)["pairs"]
    _, lines, _ = run("scan", str(tree), "-f", "jsonl", "-q")
    assert [json.loads(line) for line in lines.splitlines()] == pairs
    target = tmp_path / "out.csv"
    code, out, _ = run("scan", str(tree), "-f", "csv", "-o", str(target), "-q")
    assert code == ExitCode.OK and out == ""
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert [(r["a"], r["b"], float(r["jaccard"])) for r in rows] == [(p["a"], p["b"], p["jaccard"]) for p in pairs]


def test_fail_on_pairs_exit_codes(tree: Path, make_tree: TreeFactory) -> None:
    assert run("scan", str(tree), "--fail-on-pairs", "-q")[0] == ExitCode.PAIRS_FOUND
    assert run("scan", str(tree / "c" / "other.go"), "--fail-on-pairs", "-q")[0] == ExitCode.OK
    assert run("scan", str(make_tree({}, root="empty")), "--fail-on-pairs")[0] == ExitCode.OK


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--threshold", "80"], "--threshold must be above 0 and at most 1 (got 80; did you mean 0.8?)"),
        (["--threshold", "0"], "--threshold must be above 0 and at most 1 (got 0)"),
        (["--bands", "0"], "--bands must be between 1 and 4096 (got 0)"),
        (["--rows", "x"], "Invalid value for '--rows' / '-r': 'x' is not a valid integer."),
        (["--bands", "1000", "--rows", "64"], "--bands x --rows must be at most 8192 hashes"),
        (["--shingle", "0"], "--shingle must be between 1 and 64 (got 0)"),
        (["--min-shingles", "0"], "--min-shingles must be between 1 and"),
        (["--max-size", "lots"], "'lots' is not a size; write e.g. 1048576, 512KiB or 1MiB"),
        (["--format", "xml"], "Invalid value for '--format' / '-f'"),
        (["--jobs", "-1"], "--jobs must be between 0 and 1024 (got -1)"),
        (["--exclude", "\\"], "--exclude: invalid glob"),
    ],
)
def test_bad_option_values_get_one_line_and_exit_2(tree: Path, args: list[str], message: str) -> None:
    code, out, err = run("scan", str(tree), *args)
    assert code == ExitCode.USAGE
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("minhashdup: error: ")
    assert message in err


def test_missing_path_and_unwritable_output(tree: Path) -> None:
    code, _, err = run("scan", str(tree / "nope"))
    assert code == ExitCode.USAGE
    assert err == f"minhashdup: error: {tree / 'nope'}: no such file or folder; check the PATH argument\n"
    code, _, err = run("scan")
    assert code == ExitCode.USAGE and "Missing argument 'PATHS...'" in err
    code, _, err = run("scan", str(tree), "-o", str(tree / "no" / "dir" / "out.json"))
    assert code == ExitCode.USAGE and "cannot write" in err and "choose another --output" in err


def test_max_size_accepts_units(tree: Path) -> None:
    code, out, _ = run("scan", str(tree), "--max-size", "1KiB", "-f", "json", "-q")
    assert code == ExitCode.OK
    assert json.loads(out)["params"]["max_size"] == 1024
    assert json.loads(out)["stats"]["skipped"]["too-large"] == 4


def test_verbose_lists_every_skipped_file(tree: Path) -> None:
    _, _, err = run("scan", str(tree), "-v", "-f", "json")
    assert f"{tree / 'data.bin'}: binary (contains NUL bytes)" in err


def test_python_dash_m_runs_the_same_cli(tree: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "minhashdup", "scan", str(tree), "-f", "json", "-q", "--fail-on-pairs"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == ExitCode.PAIRS_FOUND
    assert json.loads(proc.stdout)["pairs"]
    bad = subprocess.run(
        [sys.executable, "-m", "minhashdup", "scan", str(tree), "-t", "nan"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == ExitCode.USAGE
    assert "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1


def test_oversize_bucket_warns_with_size_and_example(make_tree: TreeFactory) -> None:
    rng = random.Random(4)
    blocks = go_file(rng, 10)
    # Five files differing only in a last line: nearly all bands put all five in one bucket.
    files: dict[str, str | bytes] = {f"v{i}.go": render_go(blocks) + f"var v{i} = {i}\n" for i in range(5)}
    code, out, err = run("scan", str(make_tree(files)), "--max-bucket", "3", "-f", "json", "-q")
    assert code == ExitCode.OK
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert warnings and all("files (e.g. " in w and "exceeds --max-bucket 3" in w for w in warnings)
    assert json.loads(out)["stats"]["oversize_buckets"] == len(warnings)


def test_unreadable_file_is_always_listed(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    real_open = os.open  # what minhashdup.source.safeio reads files with

    def guarded(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(file).endswith("other.go"):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded)
    code, out, err = run("scan", str(tree), "-j", "1", "-f", "json")
    assert code == ExitCode.OK
    assert f"{tree / 'c' / 'other.go'}: unreadable (Permission denied)" in err.splitlines()
    assert json.loads(out)["pairs"]  # the other files are still compared


def test_a_misspelt_command_is_told_the_commands_it_may_mean() -> None:
    # Commands other than scan are imported when named; an unknown name still gets the suggestion.
    code, out, err = run("chek")
    assert code == ExitCode.USAGE and out == ""
    assert "No such command 'chek'. (Did you mean one of: 'cache', 'check'?)" in err
