"""What people and programs read is safe, and a scan ends cleanly (issue 11, items 3 and 7).

Item 3: a spreadsheet does not run a path as a formula, a terminal does not obey a file
name's escape sequences, rich does not read a file name as markup. Item 7: SIGTERM and
Ctrl-C stop the workers (which hold stdout open), ``-o`` never leaves a cut or truncated
report, and a write error on stdout is one line and exit 2.
"""

from __future__ import annotations

import csv
import io
import json
import random

import pytest
from click.testing import CliRunner

from minhashdup.cli import cli
from minhashdup.errors import ExitCode
from minhashdup.report.data import csv_cell

from .conftest import TreeFactory, go_file, near_copy, render_go

#: How long a test waits for a process to end: a guard against hangs, not a timing assertion.
HANG_GUARD = 30.0


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def near_duplicates(names: list[str], seed: int = 3) -> dict[str, str | bytes]:
    """Go files under ``names``, each a near copy of the same original (so all are paired)."""
    rng = random.Random(seed)
    blocks = go_file(rng, 12)
    return {name: render_go(near_copy(blocks, rng, 1)) for name in names}


# --- item 3: CSV cells ---------------------------------------------------------------------


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cell_prefixes_every_formula_start_with_a_quote(start: str) -> None:
    assert csv_cell(f"{start}cmd|' /C calc'!A0.go") == f"'{start}cmd|' /C calc'!A0.go"


def test_csv_cell_leaves_other_paths_alone() -> None:
    for path in ("src/a.go", "./=x.go", "a=b.go", "'quoted.go", ""):
        assert csv_cell(path) == path


def test_csv_report_neutralises_formula_paths_and_keeps_numbers(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["=HYPERLINK(1).go", "+1.go", "-2.go", "@SUM(3).go", "\tt.go", "plain.go"]
    monkeypatch.chdir(make_tree(near_duplicates(names)))
    code, out, _ = run("scan", "-f", "csv", "-q", "--no-cache", "-t", "0.3", "--", *names)
    assert code == ExitCode.OK
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 15  # every pair of the six files
    shown = {row[side] for row in rows for side in ("a", "b")}
    assert shown == {"'=HYPERLINK(1).go", "'+1.go", "'-2.go", "'@SUM(3).go", "'\tt.go", "plain.go"}
    for row in rows:
        assert 0.3 <= float(row["jaccard"]) <= 1 and row["jaccard"][0].isdigit()
        assert int(row["common"]) > 0 and row["known"] == "False"


def test_json_keeps_exact_names(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["=x.go", "\x1b[2Jy.go"]
    monkeypatch.chdir(make_tree(near_duplicates(names)))
    code, out, _ = run("scan", "-f", "json", "-q", "--no-cache", "-t", "0.3", "--", *names)
    assert code == ExitCode.OK
    assert "\x1b" not in out  # JSON escapes control characters itself
    assert {json.loads(out)["pairs"][0][side] for side in ("a", "b")} == set(names)
