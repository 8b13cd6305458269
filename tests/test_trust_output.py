"""What people and programs read is safe, and a scan ends cleanly (issue 11, items 3 and 7).

Item 3: a spreadsheet does not run a path as a formula, a terminal does not obey a file
name's escape sequences, rich does not read a file name as markup. Item 7: SIGTERM and
Ctrl-C stop the workers (which hold stdout open), ``-o`` never leaves a cut or truncated
report, and a write error on stdout is one line and exit 2.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minhashdup.errors import ExitCode
from minhashdup.report.console import markup
from minhashdup.report.data import _item, csv_cell, rounded
from minhashdup.report.notices import render_notices
from minhashdup.report.terminal import printable
from minhashdup.result import Pair, Result, Skip, SkipReason, Stats

from .conftest import TreeFactory, go_file, near_copy, render_go, run

#: How long a test waits for a process to end: a guard against hangs, not a timing assertion.
HANG_GUARD = 30.0


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


_ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)  # controls, surrogates...
_SHARE = st.floats(0, 1) | st.sampled_from([1 / 3, 2 / 3, 0.1 + 0.2, 1e-7, 0.9999995])


@given(
    st.builds(
        Pair,
        _ANY_TEXT,
        _ANY_TEXT,
        _SHARE,
        _SHARE,
        st.integers(0, 2**40),
        st.integers(0, 2**40),
        st.integers(0, 2**40),
        st.booleans(),
        st.booleans(),
        st.booleans(),
        st.none() | _SHARE,
    )
)
def test_a_pair_written_directly_is_what_json_writes(pair: Pair) -> None:
    # The JSON and JSON Lines reports write a pair without json.dumps (a third of the time).
    assert _item(pair) == json.dumps(pair.to_dict(), ensure_ascii=False)


@given(
    st.floats()
    | st.floats(1e-4, 1e9)
    | st.integers(0, 10**15).map(lambda n: n / 10**6)  # six places exactly, and halfway cases near them
    | st.integers(0, 10**16).map(lambda n: (n + 0.5) / 10**7)
    | st.sampled_from([1e-4, 9.9999995e-5, 0.00010000005, 1e9, 999999999.9999996, 999999999.9999994, 0.9999995])
)
def test_a_share_is_rounded_as_json_writes_its_round(x: float) -> None:
    # rounded() takes the :.6f text of a share for repr(round(x, 6)): the same text, always.
    assert rounded(x) == float.__repr__(round(x, 6))


@pytest.mark.parametrize(
    "pair",
    [
        Pair("a", "b", 1, 1, 30, 30, 30),  # shares given as ints
        Pair("a", "b", 0.5, 0.5, 3, 3, 2, known=None),  # type: ignore[arg-type]
        Pair("a", "b", 0.5, 0.5, True, 3.0, 2, known=1),  # type: ignore[arg-type]
        Pair("a", "b", float("nan"), -0.0, 3, 3, 2),
    ],
)
def test_a_pair_of_other_values_is_written_as_json_writes_it(pair: Pair) -> None:
    # What a scan never makes, the library's caller may: json.dumps writes it, as before.
    assert _item(pair) == json.dumps(pair.to_dict(), ensure_ascii=False)


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
    tree = make_tree(near_duplicates(HOSTILE), root="\x1b[31mroot")
    code, out, _ = run("scan", str(tree), "-q", "--no-cache", "-t", "0.3", "--limit", "0")
    assert code == ExitCode.OK
    assert not {"\x1b", "\x07", "\x9b", "\u202e"} & set(out)
    assert f"paths relative to {tree.parent}{os.sep}\\x1b[31mroot{os.sep}\n" in out  # the title names the PATH
    for shown in ("\\x1b[2Jclear.go", "\\x1b[31mred.go", "\\u202eog.exe.go", "[bold]x[/bold].go", "bell\\x07\\x9b.go"):
        assert out.count(shown) == 4  # 5 files, all similar: each one in 4 pairs, a row each


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
        skips=[Skip("\x1b[2Jx.go", SkipReason.UNREADABLE, "bad \u202e detail")],
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


# --- item 7: -o is replaced whole or not at all ----------------------------------------------


@pytest.fixture
def pair_tree(make_tree: TreeFactory) -> Path:
    return make_tree(near_duplicates(["a.go", "b.go"]))


def _half_then(error: BaseException) -> Any:
    def render_json(result: Result, stream: TextIO) -> None:
        stream.write('{\n  "schema_version": 1,\n' + "x" * 100_000)  # past any buffer: on disk already
        raise error

    return render_json


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (
            OSError(errno.ENOSPC, "No space left on device"),
            ExitCode.USAGE,
            "minhashdup: error: cannot write {out}: No space left on device; choose another --output",
        ),
        (KeyboardInterrupt(), ExitCode.INTERRUPTED, "minhashdup: interrupted"),
        (RuntimeError("bug"), ExitCode.INTERNAL, None),
    ],
)
def test_output_stays_intact_when_writing_fails(
    pair_tree: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    error: BaseException,
    code: int,
    message: str | None,
) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    out = folder / "dups.json"
    out.write_text("previous report\n")
    monkeypatch.setattr("minhashdup.report.data.render_json", _half_then(error))
    got, _, err = run("scan", str(pair_tree), "-q", "--no-cache", "-f", "json", "-o", str(out))
    assert got == code
    if message:
        assert err.strip().splitlines()[-1] == message.format(out=out)
    assert out.read_text() == "previous report\n"
    assert sorted(os.listdir(folder)) == ["dups.json"]  # no temporary file left


def test_output_keeps_the_mode_of_the_file_it_replaces(pair_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "dups.json"
    out.write_text("previous report\n")
    out.chmod(0o640)
    code, _, _ = run("scan", str(pair_tree), "-q", "--no-cache", "-f", "json", "-o", str(out))
    assert code == ExitCode.OK and len(json.loads(out.read_text())["pairs"]) == 1
    assert out.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
def test_a_symlink_at_the_output_is_replaced_never_written_through(
    pair_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    # A scanned repository may commit report.csv -> ~/.bashrc: the report must not land there.
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / ".bashrc"
    victim.write_text("# the user's shell setup\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "report.csv").symlink_to(victim)
    monkeypatch.chdir(repo)
    code, _, err = run("scan", str(pair_tree), "-q", "--no-cache", "-f", "csv", option, "report.csv")
    assert code == ExitCode.OK, err
    assert victim.read_text() == "# the user's shell setup\n"
    assert not (repo / "report.csv").is_symlink()
    assert "a.go" in (repo / "report.csv").read_text()


@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
def test_a_folder_link_in_the_scanned_tree_does_not_choose_where_a_file_goes(
    make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    # The change under review commits reports -> a folder outside; the CI job writes reports/x.
    text = render_go(go_file(random.Random(1), 6))
    repo = make_tree({"a.go": text, "b.go": text}, "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "reports").symlink_to(outside)
    (repo / "real").mkdir()
    monkeypatch.chdir(repo)
    code, out, err = run("scan", ".", "-q", "--no-cache", "-f", "json", option, "reports/x.json")
    assert code == ExitCode.USAGE and out == "" and list(outside.iterdir()) == []
    assert "reports is a link inside the tree scanned" in err
    (tmp_path / "alias").symlink_to(repo)  # the same link, spelled through another
    code, _, err = run("scan", ".", "-q", "--no-cache", "-f", "json", option, str(tmp_path / "alias/reports/x.json"))
    assert code == ExitCode.USAGE and list(outside.iterdir()) == []
    # A real folder of the tree, or a link outside the trees scanned, is written as asked.
    assert run("scan", ".", "-q", "--no-cache", "-f", "json", option, "real/x.json")[0] == ExitCode.OK
    other = make_tree({"a.go": text, "b.go": text}, "other")
    code, _, err = run("scan", str(other), "-q", "--no-cache", "-f", "json", option, "reports/x.json")
    assert code == ExitCode.OK, err
    assert (outside / "x.json").exists()


def test_output_to_dev_stdout_is_written_directly(pair_tree: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "minhashdup",
            "scan",
            str(pair_tree),
            "-q",
            "--no-cache",
            "-f",
            "csv",
            "-o",
            "/dev/stdout",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == ExitCode.OK and proc.stdout.startswith("a,b,jaccard"), proc.stderr


def _not_run(*args: object, **kwargs: object) -> None:
    raise AssertionError("the scan ran before the file to write was checked")


def _refuse_creating_in(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``folder`` as if read-only (this user may be root, whom a mode does not stop)."""
    real_open = os.open

    def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT and os.path.dirname(os.fspath(path)) == str(folder):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)


@pytest.mark.parametrize(
    ("command", "option"), [("scan", "-o"), ("scan", "--write-baseline"), ("evaluate", "--output")]
)
@pytest.mark.parametrize(
    ("where", "why"), [("missing", "No such file or directory"), ("read-only", "Permission denied")]
)
def test_a_file_that_cannot_be_written_is_refused_before_the_scan(
    pair_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, option: str, where: str, why: str
) -> None:
    # A scan of a large tree ran for minutes, then failed to write its report.
    folder = tmp_path / "reports"
    if where == "read-only":
        folder.mkdir()
        _refuse_creating_in(folder, monkeypatch)
    target = folder / "x.json"
    monkeypatch.setattr("minhashdup.scan", _not_run)
    monkeypatch.setattr("minhashdup.evaluate", _not_run)
    code, out, err = run(command, str(pair_tree), "-q", "--no-cache", option, str(target))
    assert code == ExitCode.USAGE and out == ""
    named = "--output" if option == "-o" else option
    assert err == f"minhashdup: error: cannot write {target}: {why}; choose another {named}\n"
    assert not target.exists()


def test_the_check_before_the_scan_leaves_no_file_behind(
    pair_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An interrupted scan must find the old report as it was, and no new one, empty or not.
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text("previous report\n")

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("minhashdup.scan", interrupted)
    for target in (old, new):
        code, _, _ = run("scan", str(pair_tree), "-q", "--no-cache", "-f", "json", "-o", str(target))
        assert code == ExitCode.INTERRUPTED
    assert old.read_text() == "previous report\n" and sorted(os.listdir(tmp_path)) == ["old.json", "tree"]


def test_new_output_gets_the_umask_mode(pair_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "new.csv"
    mask = os.umask(0o027)
    try:
        code, _, _ = run("scan", str(pair_tree), "-q", "--no-cache", "-f", "csv", "-o", str(out))
    finally:
        os.umask(mask)
    assert code == ExitCode.OK and out.read_text().startswith("a,b,jaccard")
    assert out.stat().st_mode & 0o777 == 0o640


# --- item 7: stdout that cannot be written ----------------------------------------------------


def _minhashdup(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "minhashdup", *args], text=True, timeout=HANG_GUARD * 2, check=False, **kwargs
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("fmt", ["json", "table", "csv"])
def test_full_stdout_is_one_line_and_exit_2(pair_tree: Path, fmt: str) -> None:
    with open("/dev/full", "w") as full:
        done = _minhashdup("scan", str(pair_tree), "--no-cache", "-q", "-f", fmt, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == ExitCode.USAGE
    assert done.stderr == (
        "minhashdup: error: cannot write the report to stdout: No space left on device; "
        "write it to a file with --output\n"
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_full_stdout_with_a_small_report_is_not_exit_0(make_tree: TreeFactory) -> None:
    tree = make_tree({"only.go": render_go(go_file(random.Random(1), 3))})  # no pairs: a short JSON
    with open("/dev/full", "w") as full:
        done = _minhashdup("scan", str(tree), "--no-cache", "-q", "-f", "json", stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == ExitCode.USAGE
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize(
    "command",
    [
        ["tune", "-t", "0.5"],
        ["tune", "-t", "0.5", "-f", "json"],
        ["compare", "A", "B"],
        ["compare", "A", "B", "-f", "json"],
        ["cache", "info"],
        ["cache", "info", "-f", "json"],
    ],
    ids=" ".join,
)
def test_every_command_on_a_full_stdout_is_one_line_and_exit_2(pair_tree: Path, command: list[str]) -> None:
    command = [{"A": str(pair_tree / "a.go"), "B": str(pair_tree / "b.go")}.get(arg, arg) for arg in command]
    with open("/dev/full", "w") as full:
        done = _minhashdup(*command, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == ExitCode.USAGE
    assert done.stderr == (
        "minhashdup: error: cannot write the report to stdout: No space left on device; "
        "redirect stdout to a file on a disk with room\n"
    )


@pytest.mark.parametrize(("gate", "code"), [((), ExitCode.OK), (("--fail-on-pairs",), ExitCode.PAIRS_FOUND)])
def test_closed_stderr_pipe_leaves_the_verdict_to_the_gate(
    pair_tree: Path, tmp_path: Path, gate: tuple[str, ...], code: int
) -> None:
    # `2>&1 | head` gone: the notices cannot be written, but a failing gate must still fail.
    read_end, write_end = os.pipe()
    os.close(read_end)
    out = tmp_path / "out.json"
    try:
        done = _minhashdup(
            "scan",
            str(pair_tree),
            "--no-cache",
            "-f",
            "json",
            "-o",
            str(out),
            *gate,
            stdout=subprocess.PIPE,
            stderr=write_end,
        )
    finally:
        os.close(write_end)
    assert done.returncode == code
    assert len(json.loads(out.read_text())["pairs"]) == 1


@pytest.mark.parametrize("fmt", ["json", "table"])
@pytest.mark.parametrize(("gate", "code"), [((), ExitCode.OK), (("--fail-on-pairs",), ExitCode.PAIRS_FOUND)])
def test_closed_stdout_pipe_is_quiet_and_the_gate_still_decides(
    pair_tree: Path, fmt: str, gate: tuple[str, ...], code: int
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head` that has already exited
    try:
        done = _minhashdup(
            "scan", str(pair_tree), "--no-cache", "-f", fmt, *gate, stdout=write_end, stderr=subprocess.PIPE
        )
    finally:
        os.close(write_end)
    assert done.returncode == code
    assert "Traceback" not in done.stderr and "error" not in done.stderr


def test_closed_stdout_pipe_is_not_exit_1_for_other_commands() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = _minhashdup("tune", "-t", "0.5", stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (ExitCode.OK, "")


# --- item 7: signals --------------------------------------------------------------------------

#: Runs minhashdup with each file's lexing (SLOW_LEX) and each family's side-by-side runs of
#: the HTML report (SLOW_FAMILY) slowed down, in the workers too (they import the main script
#: as ``__mp_main__``), so that workers are busy when a signal comes.
SLOW_MAIN = textwrap.dedent(
    """
    import functools
    import os
    import time

    import minhashdup.source.extract as extract
    import minhashdup.analysis.regions as regions


    def _slowed(function, variable):
        @functools.wraps(function)  # pickled by the name it replaces
        def slow(*args, **kwargs):
            time.sleep(float(os.environ.get(variable, "0")))
            return function(*args, **kwargs)

        return slow


    extract.extract_file = _slowed(extract.extract_file, "SLOW_LEX")
    regions._family_runs = _slowed(regions._family_runs, "SLOW_FAMILY")

    if __name__ == "__main__":
        from minhashdup.cli import main

        main()
    """
)

needs_proc = pytest.mark.skipif(
    not os.path.exists("/proc/self/task") or not hasattr(signal, "SIGTERM") or sys.platform != "linux",
    reason="follows child processes through /proc (Linux)",
)

Descendants = dict[int, tuple[int, "str | None"]]


def _start_time(pid: int) -> str | None:
    """Start time of a live (not zombie) process, None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    return None if fields[0] in "ZX" else fields[19]


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            kids += [int(k) for k in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        pass
    return kids


def _descendants(pid: int) -> Descendants:
    """Every descendant: its depth (1 = child) and start time."""
    found, todo = {}, [(pid, 0)]
    while todo:
        parent, depth = todo.pop()
        for kid in _children(parent):
            found[kid] = (depth + 1, _start_time(kid))
            todo.append((kid, depth + 1))
    return found


def _survivors(found: Descendants) -> list[int]:
    """Descendants still running after up to :data:`HANG_GUARD` seconds."""
    deadline = time.monotonic() + HANG_GUARD
    while True:
        alive = [pid for pid, (_, started) in found.items() if started is not None and _start_time(pid) == started]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


@pytest.fixture
def slow_scan(tmp_path: Path) -> Iterator[Any]:
    """A function that starts ``minhashdup scan TREE ARGS`` slowed down by ``env`` (see
    :data:`SLOW_MAIN`) in a new session, and returns once a worker runs (a child of the fork
    server), with the descendants seen. Whatever survives the test is killed."""
    script = tmp_path / "slow_main.py"
    script.write_text(SLOW_MAIN)
    seen: Descendants = {}
    procs: list[subprocess.Popen[bytes]] = []

    def start(tree: Path, env: dict[str, str], *args: str) -> tuple[subprocess.Popen[bytes], Descendants]:
        command = [sys.executable, str(script), "scan", str(tree), "--no-cache", "-j", "2", *args]
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **env}, start_new_session=True
        )
        procs.append(proc)
        deadline = time.monotonic() + HANG_GUARD
        while time.monotonic() < deadline and proc.poll() is None:
            found = _descendants(proc.pid)
            seen.update(found)
            if any(depth == 2 for depth, _ in found.values()):
                return proc, found
            time.sleep(0.05)
        pytest.fail("the scan never started its worker processes")

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for pid, (_, started) in seen.items():
        if started is not None and _start_time(pid) == started:
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def many_files(tmp_path: Path) -> Path:
    """400 Python files, 400 KiB: above extract's inline limit, so lexed in worker processes."""
    tree = tmp_path / "many"
    tree.mkdir()
    for i in range(400):
        body = "".join(f"def f{i}_{j}(x, y):\n    return x * {j} + y - {i} * (x ^ {j})\n" for j in range(18))
        (tree / f"m{i}.py").write_text(body)
    return tree


@needs_proc
def test_sigterm_stops_the_workers_and_exits_143(slow_scan: Any, many_files: Path) -> None:
    proc, found = slow_scan(many_files, {"SLOW_LEX": "0.05"}, "-f", "json")
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=HANG_GUARD)  # EOF on stdout: no worker holds it open
    except subprocess.TimeoutExpired:
        pytest.fail("stdout stayed open after SIGTERM: some process still holds it")
    assert (proc.returncode, err.decode()) == (ExitCode.TERMINATED, "minhashdup: terminated\n")  # stderr says why not
    assert ExitCode.TERMINATED == 143
    assert out == b""
    assert _survivors(found) == []


#: A pool left by an exception while its queue of tasks is full: the thread writing the tasks into
#: the pipe the workers read is blocked for good once they are killed.
STOPPED_WITH_TASKS_QUEUED = textwrap.dedent(
    """
    import time

    from minhashdup.engine.parallel import process_pool


    class Stop(Exception):
        pass


    def work(arg):
        time.sleep(3)
        return len(arg)


    if __name__ == "__main__":
        try:
            with process_pool(1) as executor:
                executor.submit(work, b"")
                for _ in range(4):
                    executor.submit(work, b"x" * 300_000)  # more than a pipe holds
                time.sleep(0.5)
                raise Stop
        except Stop:
            print("stopped")
    """
)


def test_a_pool_stopped_with_tasks_still_queued_lets_the_process_exit(tmp_path: Path) -> None:
    # Python 3.10's pool waited at exit for the thread feeding tasks to the dead workers: the
    # scan printed "terminated" and never ended (test_sigterm_stops_the_workers_and_exits_143
    # failed now and then in CI). The pool's task queue no longer waits for that thread.
    script = tmp_path / "stopped.py"
    script.write_text(STOPPED_WITH_TASKS_QUEUED)
    try:
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        pytest.fail("the process did not exit after its pool was stopped")
    assert (done.returncode, done.stdout) == (0, "stopped\n")


SWALLOWED = textwrap.dedent(
    """
    import signal, sys, time, weakref

    import minhashdup.cli as cli

    cli._handle_sigterm()  # what main() does


    class Module:
        pass


    try:
        module = Module()
        # importlib's module locks have such callbacks: a signal handler may run inside one
        lock = weakref.ref(module, lambda ref: signal.raise_signal(signal.SIGTERM))
        del module
        time.sleep(10)
        print("the SIGTERM was lost")
    except cli._Terminated:
        print("terminated")
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="POSIX signals")
def test_a_sigterm_swallowed_by_a_finaliser_is_delivered_again() -> None:
    """Python prints an exception raised in a weak reference's callback or a ``__del__`` and goes
    on: a SIGTERM handled there would be lost and the scan would finish with 0. The CLI sends it
    again once the finaliser is over."""
    done = subprocess.run([sys.executable, "-c", SWALLOWED], capture_output=True, timeout=HANG_GUARD, check=False)
    assert (done.stdout.decode(), done.stderr.decode()) == ("terminated\n", "")


REPLACED = textwrap.dedent(
    """
    import signal

    import minhashdup.cli as cli

    cli._handle_sigterm()
    try:
        try:
            signal.raise_signal(signal.SIGTERM)
        finally:
            raise OSError("handle is closed")  # a clean-up failing on the way out
    except OSError as err:
        print(int(cli.exit_code(err)))
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="POSIX signals")
def test_a_failure_after_a_sigterm_is_the_scan_being_stopped() -> None:
    """A clean-up that fails while the SIGTERM's exception goes up replaces it: the process was
    still told to stop, and says so (143), not "internal error" (3)."""
    done = subprocess.run([sys.executable, "-c", REPLACED], capture_output=True, timeout=HANG_GUARD, check=False)
    assert (done.stdout.decode(), done.stderr.decode()) == ("143\n", "minhashdup: terminated\n")


SIGTERM_CASES = {
    # A SIGTERM swallowed, then the command ends (here at once, --version) before it is sent
    # again: exit 143 all the same, with its line.
    "ended before sent again": (
        """
        import signal, sys, weakref
        import minhashdup.cli as cli

        cli._handle_sigterm()
        cli._AGAIN = 60.0
        module = type("Module", (), {})()
        lock = weakref.ref(module, lambda ref: signal.raise_signal(signal.SIGTERM))
        del module
        cli.cli.main(["--version"], prog_name="minhashdup")
        """,
        143,
        "minhashdup: terminated\n",
    ),
    # A SIGTERM swallowed, then another handled before the first is sent again: the pending one
    # is dropped, and does not kill the process (the handler is SIG_DFL by then) in its clean-up.
    "handled before sent again": (
        """
        import signal, time, weakref
        import minhashdup.cli as cli

        cli._handle_sigterm()
        module = type("Module", (), {})()
        lock = weakref.ref(module, lambda ref: signal.raise_signal(signal.SIGTERM))
        del module
        try:
            signal.raise_signal(signal.SIGTERM)
        except cli._Terminated:
            time.sleep(0.5)
            print("clean-up done")
        """,
        0,
        "",
    ),
    # A SIGTERM while the workers are stopped after Ctrl-C: exit 143 with one line, no traceback.
    "during the stop after ctrl-c": (
        """
        import signal, sys, types
        import minhashdup.cli as cli

        cli._handle_sigterm()
        pools = types.ModuleType("minhashdup.engine.parallel")
        calls = []

        def stop_workers():
            calls.append(1)
            if len(calls) == 1:
                signal.raise_signal(signal.SIGTERM)

        pools.stop_workers = stop_workers
        sys.modules[pools.__name__] = pools
        print(int(cli._exit_code_held(KeyboardInterrupt())), len(calls))
        """,
        0,
        "minhashdup: terminated\n",
    ),
}


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")
@pytest.mark.parametrize("case", sorted(SIGTERM_CASES))
def test_a_sigterm_ends_the_command_once_with_143(case: str) -> None:
    code, returncode, stderr = SIGTERM_CASES[case]
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, timeout=HANG_GUARD, check=False
    )
    assert (done.returncode, done.stderr.decode()) == (returncode, stderr)
    expected = {"ended before sent again": "minhashdup, version", "handled before sent again": "clean-up done"}
    assert done.stdout.decode().startswith(expected.get(case, "143 2"))


@needs_proc
def test_ctrl_c_to_the_process_group_exits_130_without_a_child_traceback(slow_scan: Any, many_files: Path) -> None:
    proc, found = slow_scan(many_files, {"SLOW_LEX": "0.05"}, "-f", "json")
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    try:
        _, err = proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        pytest.fail("the scan hung after Ctrl-C")
    assert proc.returncode == ExitCode.INTERRUPTED
    assert err.decode().strip() == "minhashdup: interrupted"
    assert _survivors(found) == []


@needs_proc
def test_workers_ignore_sigint_and_leave_it_to_the_main_process(slow_scan: Any, many_files: Path) -> None:
    proc, _ = slow_scan(many_files, {"SLOW_LEX": "0.01"}, "-f", "json", "-q")
    time.sleep(0.3)  # not a timing assertion: lets the workers get into their tasks
    for pid, (depth, _) in _descendants(proc.pid).items():
        if depth == 2:
            os.kill(pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=HANG_GUARD * 2)
    except subprocess.TimeoutExpired:
        pytest.fail("the scan hung after its workers got SIGINT")
    assert (proc.returncode, err.decode()) == (ExitCode.OK, "")
    assert json.loads(out)["stats"]["files_scanned"] == 400


@needs_proc
def test_ctrl_c_while_the_html_report_is_written_does_not_wait_for_its_workers(
    slow_scan: Any, make_tree: TreeFactory, tmp_path: Path
) -> None:
    # 4 families of 7 near copies: 84 pairs (the side-by-side runs use workers from 64 on),
    # 28 small files (lexed in this process: the only workers are the report's).
    files: dict[str, str | bytes] = {}
    for family in range(4):
        files.update(
            {f"f{family}/{k}.go": text for k, text in near_duplicates([str(k) for k in range(7)], family).items()}
        )
    tree = make_tree(files)
    out = tmp_path / "report.html"
    out.write_text("previous report\n")
    proc, found = slow_scan(tree, {"SLOW_FAMILY": "600"}, "-f", "html", "-o", str(out))
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        pytest.fail("the scan waited for the report's workers after Ctrl-C")
    assert proc.returncode == ExitCode.INTERRUPTED
    assert err.decode().strip() == "minhashdup: interrupted"
    assert _survivors(found) == []
    assert out.read_text() == "previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".report")) == []


def _with_closed(fd: int, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m minhashdup ARGS`` started with descriptor ``fd`` closed (as ``>&-`` or ``2>&-``)."""
    closing = ">&-" if fd == 1 else "2>&-"
    script = f'exec "$0" -m minhashdup "$@" {closing}'
    keep = "stderr" if fd == 1 else "stdout"
    return subprocess.run(
        ["sh", "-c", script, sys.executable, *args], **{keep: subprocess.PIPE}, text=True, check=False
    )


def test_a_closed_stdout_is_a_write_error_and_output_still_works(pair_tree: Path, tmp_path: Path) -> None:
    proc = _with_closed(1, "scan", str(pair_tree), "-q", "--no-cache")
    assert proc.returncode == ExitCode.USAGE
    assert proc.stderr.splitlines()[0] == (
        "minhashdup: error: cannot write the report to stdout: Bad file descriptor; write it to a file with --output"
    )
    report = tmp_path / "dups.json"
    proc = _with_closed(1, "scan", str(pair_tree), "-q", "--no-cache", "-f", "json", "-o", str(report))
    assert proc.returncode == ExitCode.OK, proc.stderr
    assert len(json.loads(report.read_text())["pairs"]) == 1


def test_a_closed_stderr_loses_only_the_notices(pair_tree: Path) -> None:
    proc = _with_closed(2, "scan", str(pair_tree), "--no-cache", "-f", "json", "--fail-on-pairs")
    assert proc.returncode == ExitCode.PAIRS_FOUND  # the gate still decides
    assert len(json.loads(proc.stdout)["pairs"]) == 1
