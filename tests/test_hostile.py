"""No input, however hostile, produces a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from minhashdup.cli import cli
from minhashdup.errors import ExitCode
from minhashdup.result import SkipReason
from minhashdup.source.extract import extract_file

#: What a UTF-16 or UTF-32 file starts with: its NUL bytes are text (README, "Skipped files").
WIDE_MARKS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400), st.sampled_from(["x.go", "x.py", "x.c", "x.js", "x.rs", "x.json", "Makefile", "x"]))
@example(b"\xfe\xff\x00", "x.go").via("a UTF-16 mark with a stray byte")
@example(b"\xff\xfe\x00\x00a\x00\x00\x00", "x.c").via("UTF-32")
@example(b"a\x00b", "x.go").via("a NUL byte")
def test_any_bytes_under_any_name_give_a_result_or_a_reason(tmp_path_factory, data: bytes, name: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("h") / name
    path.write_bytes(data)
    item = extract_file(0, str(path), 5)
    if b"\0" in data and not data.startswith(WIDE_MARKS):
        assert item.skip == SkipReason.BINARY
    else:
        assert item.skip in (None, SkipReason.NO_LEXER)
        assert item.shingles.dtype.name == "uint64"


def test_hostile_tree_scans_without_traceback(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    body = "package x\n" + "".join(f"\nfunc f{i}(a int) int {{\n\treturn a + {i}\n}}\n" for i in range(20))
    names = ["<img src=x onerror=alert(1)>.go", "new\nline.go", "tab\there.go", "-rf.go", "ü.go"]
    for name in names:
        (root / name).write_text(body)
    (root.joinpath(os.fsdecode(b"bad\xffname.go"))).write_text(body)
    (root / "latin1.go").write_bytes(b"package x // caf\xe9\n" + body.encode())
    (root / "long.go").write_text("package x\nvar s = []int{" + "1," * 100_000 + "}\n")
    (root / "unterminated.go").write_text('package x\nvar s = "never closed\n/* and a comment that never ends\n')
    deep = root
    for _ in range(120):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "deep.go").write_text(body)
    result = CliRunner().invoke(cli, ["scan", str(root), "-f", "json", "-q"])
    assert result.exit_code == ExitCode.OK, result.stderr
    doc = json.loads(result.stdout)
    shown = {p for pair in doc["pairs"] for p in (pair["a"], pair["b"])}
    assert str(root / "<img src=x onerror=alert(1)>.go") in shown
    assert any("bad\udcffname.go" in p for p in shown)  # not UTF-8: escaped, not lost
    assert str(deep / "deep.go") in shown
    table = CliRunner().invoke(cli, ["scan", str(root), "-q"])
    assert table.exit_code == ExitCode.OK and "Traceback" not in table.stderr
