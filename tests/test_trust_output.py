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
from pathlib import Path

import pytest
from click.testing import CliRunner

from minhashdup.cli import cli
from minhashdup.errors import ExitCode
from minhashdup.report.console import markup
from minhashdup.report.data import csv_cell
from minhashdup.report.notices import render_notices
from minhashdup.report.terminal import printable
from minhashdup.result import Notice, Result, Stats

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


# --- item 3: terminal text -----------------------------------------------------------------

HOSTILE = ["\x1b[2Jclear.go", "\x1b[31mred.go", "\u202eog.exe.go", "[bold]x[/bold].go", "bell\x07\x9b.go"]


def test_printable_escapes_controls_and_bidi_visibly() -> None:
    assert printable("\x1b[2J\x1b[31mred\x00\x7f\x9b\n\t") == "\\x1b[2J\\x1b[31mred\\x00\\x7f\\x9b\\n\\t"
    assert printable("\u202egnp.exe \u2066\u2067\u2068\u2069\u202a\u202b\u202c\u202d\u200e\u200f\u061c") == (
        "\\u202egnp.exe \\u2066\\u2067\\u2068\\u2069\\u202a\\u202b\\u202c\\u202d\\u200e\\u200f\\u061c"
    )
    assert printable("b\udcffad.go") == "b\\udcffad.go"  # a byte that was not UTF-8
    assert printable("src/grüße/文件.go") == "src/grüße/文件.go"


def test_printable_keeps_lines_of_code_when_asked() -> None:
    assert printable("a\r\n\tb\x1b[2J\rc\n", multiline=True) == "a\n\tb\\x1b[2J\\rc\n"


def test_markup_is_printable_then_rich_escaped() -> None:
    from rich.console import Console

    stream = io.StringIO()
    Console(file=stream, highlight=False).print(markup("[bold]x[/bold]\x1b[31m.go"))
    assert stream.getvalue() == "[bold]x[/bold]\\x1b[31m.go\n"


def test_table_shows_hostile_names_escaped_and_not_as_markup(make_tree: TreeFactory) -> None:
    tree = make_tree(near_duplicates(HOSTILE))
    code, out, _ = run("scan", str(tree), "-q", "--no-cache", "-t", "0.3")
    assert code == ExitCode.OK
    assert not {"\x1b", "\x07", "\x9b", "\u202e"} & set(out)
    for shown in ("\\x1b[2Jclear.go", "\\x1b[31mred.go", "\\u202eog.exe.go", "[bold]x[/bold].go", "bell\\x07\\x9b.go"):
        assert shown in out  # once in the pairs table at least, and in the clusters table
        assert out.count(shown) >= 2


def test_verbose_list_and_notices_show_names_escaped(make_tree: TreeFactory) -> None:
    tree = make_tree(
        {
            **near_duplicates(["a.go", "b.go"]),
            "\x1b]0;owned\x07.bin": b"\x00binary",
            "\u202eexe.txt": "tiny",
        }
    )
    code, out, err = run("scan", str(tree), "-v", "--no-cache", "-f", "json")
    assert code == ExitCode.OK
    assert not {"\x1b", "\x07", "\u202e"} & set(err)
    assert f"{tree}/\\x1b]0;owned\\x07.bin: binary (contains NUL bytes)" in err.splitlines()
    assert any(line.startswith(f"{tree}/\\u202eexe.txt: ") for line in err.splitlines())
    assert "\x1b" not in out


def test_render_notices_escapes_warnings_and_paths() -> None:
    result = Result(
        params={},
        stats=Stats(),
        pairs=[],
        clusters=[],
        skips=[Notice("\x1b[2Jx.go", "unreadable", "bad \u202e detail")],
        warnings=["cache /tmp/\x1b[31mc cannot be used"],
    )
    stream = io.StringIO()
    render_notices(result, stream)
    lines = stream.getvalue().splitlines()
    assert lines[:2] == [
        "warning: cache /tmp/\\x1b[31mc cannot be used",
        "\\x1b[2Jx.go: unreadable (bad \\u202e detail)",
    ]


def test_error_message_naming_a_path_is_escaped(tmp_path: Path) -> None:
    code, _, err = run("scan", str(tmp_path / "gone\x1b[2J\u202e"), "--no-cache")
    assert code == ExitCode.USAGE
    assert len(err.splitlines()) == 1 and "\x1b" not in err and "\u202e" not in err
    assert "gone\\x1b[2J\\u202e" in err


def test_compare_shows_names_and_contents_escaped(make_tree: TreeFactory) -> None:
    files = near_duplicates(["\x1b[2Ja.go", "\u202eb.go"])
    files["\x1b[2Ja.go"] = str(files["\x1b[2Ja.go"]).replace("package gen", "package gen // \x1b[31mred\x1b[0m", 1)
    tree = make_tree(files)
    code, out, _ = run("compare", str(tree / "\x1b[2Ja.go"), str(tree / "\u202eb.go"))
    assert code == ExitCode.OK
    assert "\x1b" not in out and "\u202e" not in out
    assert "\\x1b[2Ja.go" in out and "\\u202eb.go" in out


def test_html_and_sarif_escape_names_themselves(make_tree: TreeFactory) -> None:
    tree = make_tree(near_duplicates(["<img src=x onerror=alert(1)>.go", "\x1b[2Jb.go"]))
    _, html, _ = run("scan", str(tree), "-q", "--no-cache", "-t", "0.3", "-f", "html")
    assert "<img src=x" not in html and "\x1b" not in html
    assert "/\\u003cimg src=x onerror=alert(1)\\u003e.go" in html and "/\\u001b[2Jb.go" in html  # page data
    code, sarif, _ = run("scan", str(tree), "-q", "--no-cache", "-t", "0.3", "-f", "sarif")
    assert code == ExitCode.OK and "\x1b" not in sarif
    assert "/%1B%5B2Jb.go" in sarif and "/%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E.go" in sarif  # URIs
