"""The table for people (``scan``'s default format): rows by family, an identical group as one
row, paths relative to the PATH, vendored sides marked, at most --limit rows and a line on the
rest. Driven through the command on generated trees and through hand-built results."""

from __future__ import annotations

import io
import json
import os
import random
import re
from pathlib import Path
from unittest.mock import ANY

import pytest

import minhashdup
from minhashdup.errors import ExitCode
from minhashdup.report.families import TABLE_LIMIT, pattern
from minhashdup.report.table import render_table
from minhashdup.result import Cluster, Group, Pair, Result, Stats

from .conftest import TreeFactory, go_file, near_copy, render_go, run

SEE_ALL = "--limit 0 shows every row; --format json or --format html lists every pair"


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a terminal and no COLUMNS: the table is as wide as its paths need (unless a test sets it)."""
    monkeypatch.delenv("COLUMNS", raising=False)


def rows_of(out: str) -> list[list[str]]:
    """The body rows of the table in ``out`` (a family's heading too), as stripped cells."""
    return [[cell.strip() for cell in line[1:-1].split("│")] for line in out.splitlines() if line.startswith("│")]


def pairs_tree(make_tree: TreeFactory, count: int, root: str = "tree") -> Path:
    """``count`` unrelated near-duplicate pairs, ``pN/a.go`` ~ ``pN/b.go``: ``count`` families."""
    rng = random.Random(4)
    files: dict[str, str | bytes] = {}
    for n in range(count):
        blocks = go_file(rng, 10)
        files[f"p{n:02d}/a.go"] = render_go(blocks)
        files[f"p{n:02d}/b.go"] = render_go(near_copy(blocks, rng, 1))
    return make_tree(files, root=root)


def pair(a: str, b: str, jaccard: float, **marks: bool) -> Pair:
    return Pair(a, b, jaccard, jaccard, 100, 100, round(200 * jaccard / (1 + jaccard)), **marks)


def family(*pairs: Pair) -> Cluster:
    sims = [p.jaccard for p in pairs]
    return Cluster(tuple(sorted({f for p in pairs for f in (p.a, p.b)})), len(pairs), min(sims), max(sims))


def result_of(
    pairs: list[Pair], clusters: list[Cluster], groups: list[Group] | None = None, **params: object
) -> Result:
    pairs = sorted(pairs, key=lambda p: (-p.jaccard, p.a, p.b))
    stats = Stats(verified_pairs=len(pairs), clusters=len(clusters))
    return Result({"threshold": 0.5, "bands": 12, "rows": 4, **params}, stats, pairs, clusters, groups=groups or [])


def drawn(result: Result, limit: int = TABLE_LIMIT) -> str:
    stream = io.StringIO()
    render_table(result, stream, limit)
    return stream.getvalue()


# --- the limit ------------------------------------------------------------------------------


def test_limit_line_counts_what_is_left_out_and_says_how_to_see_it(make_tree: TreeFactory) -> None:
    tree = pairs_tree(make_tree, 12)
    code, out, err = run("scan", str(tree), "-q", "--no-cache", "--limit", "5")
    assert code == ExitCode.OK, err
    rows = rows_of(out)
    assert len(rows) == 5  # twelve families of one row each: no headings
    assert f"7 more rows not shown (7 pairs; 7 of the 12 families not at all): {SEE_ALL}\n" in out
    assert "verified pairs: 12, clusters: 12" in out  # the summary still counts everything
    code, out, _ = run("scan", str(tree), "-q", "--no-cache", "--limit", "0")
    assert len(rows_of(out)) == 12 and "more rows not shown" not in out
    code, out, _ = run("scan", str(tree), "-q", "--no-cache", "-f", "json", "--limit", "5")
    pairs = json.loads(out)["pairs"]
    assert len(pairs) == 12  # only the table is cut
    assert [r[0] for r in rows] == [f"{p['jaccard']:.3f}" for p in pairs[:5]]  # the most similar first


def test_default_limit_and_the_share_of_one_family() -> None:
    # 50 two-file families, then one family of 10 files whose 9 rows come first (it is larger).
    pairs = [pair(f"p{n:02d}/a.go", f"p{n:02d}/b.go", 0.9) for n in range(50)]
    star = [pair("big/hub.go", f"big/s{n}.go", 0.6 + n / 100) for n in range(9)]
    clusters = [family(*star)] + [family(p) for p in pairs]
    out = drawn(result_of(pairs + star, clusters))
    rows = rows_of(out)
    per_family = TABLE_LIMIT // 8  # 5: the largest family does not fill the first screen alone
    assert rows[0] == [
        "0.60-0.68",
        "family of 10 files, 9 pairs (top 5 of 9 rows)",
        os.path.join("big", "*.go"),
        "",
        "",
    ]
    assert [r[0] for r in rows[1 : 1 + per_family]] == ["0.680", "0.670", "0.660", "0.650", "0.640"]
    assert len(rows) == 1 + TABLE_LIMIT  # the heading is not a row of pairs
    left = 9 - per_family + 50 - (TABLE_LIMIT - per_family)
    assert f"{left} more rows not shown ({left} pairs; 15 of the 51 families not at all): {SEE_ALL}" in out
    assert "families not at all" not in drawn(result_of(pairs[:3], [family(p) for p in pairs[:3]]))
    everything = rows_of(drawn(result_of(pairs + star, clusters), limit=0))
    assert len(everything) == 1 + 9 + 50 and everything[0][1] == "family of 10 files, 9 pairs"


def test_negative_limit_is_a_usage_error_and_a_config_file_may_set_it(make_tree: TreeFactory, tmp_path: Path) -> None:
    tree = pairs_tree(make_tree, 3)
    code, out, err = run("scan", str(tree), "--limit", "-1")
    assert code == ExitCode.USAGE and out == ""
    assert err.count("\n") == 1 and err.startswith("minhashdup: error: ") and "'--limit'" in err
    config = tmp_path / "settings.toml"
    config.write_text("limit = 1\n")
    code, out, _ = run("scan", str(tree), "-q", "--no-cache", "--config", str(config))
    assert code == ExitCode.OK and len(rows_of(out)) == 1 and "2 more rows not shown" in out
    config.write_text("limit = -2\n")
    code, _, err = run("scan", str(tree), "--config", str(config))
    assert code == ExitCode.USAGE and err.count("\n") == 1 and f"(set in {config})" in err
    with pytest.raises(minhashdup.ConfigError, match="limit must be between 0"):
        minhashdup.write_report(result_of([], []), "table", io.StringIO(), limit=-1)


# --- paths ------------------------------------------------------------------------------------


def test_paths_are_relative_to_the_one_path_given_and_the_title_says_so(make_tree: TreeFactory) -> None:
    tree = pairs_tree(make_tree, 1)
    code, out, _ = run("scan", str(tree), "-q", "--no-cache")
    assert code == ExitCode.OK
    assert out.splitlines()[0].endswith(f"; paths relative to {tree}{os.sep}")
    assert rows_of(out)[0][1:3] == [os.path.join("p00", "a.go"), os.path.join("p00", "b.go")]
    assert str(tree) not in "".join(out.splitlines()[1:])  # never repeated on a row
    _, out, _ = run("scan", str(tree), "-q", "--no-cache", "-f", "json")
    assert json.loads(out)["pairs"][0]["a"] == str(tree / "p00" / "a.go")  # the data keeps whole paths


def test_several_paths_are_relative_to_the_current_folder(
    make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = pairs_tree(make_tree, 2)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("scan", str(tree / "p00"), str(tree / "p01"), "-q", "--no-cache")  # absolute paths
    assert code == ExitCode.OK
    assert out.splitlines()[0].endswith("; paths relative to the current folder")
    assert sorted(r[1] for r in rows_of(out)) == [os.path.join("tree", p, "a.go") for p in ("p00", "p01")]
    monkeypatch.chdir(tree / "p00")  # a PATH outside the current folder is reached with ..
    _, out, _ = run("scan", ".", str(tree / "p01"), "-q", "--no-cache")
    assert sorted(r[1] for r in rows_of(out)) == [os.path.join("..", "p01", "a.go"), "a.go"]


def test_library_write_report_draws_the_commands_table(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = pairs_tree(make_tree, 4)
    monkeypatch.chdir(tree)
    buffer = io.StringIO()
    minhashdup.write_report(minhashdup.scan("p00"), "table", buffer, relative_to="p00")
    _, out, _ = run("scan", "p00", "-q", "--no-cache", "--no-config")
    untimed = [line for line in buffer.getvalue().splitlines() if not line.startswith("seconds: ")]
    assert untimed == [line for line in out.splitlines() if not line.startswith("seconds: ")]
    as_is = io.StringIO()
    minhashdup.write_report(minhashdup.scan("p00"), "table", as_is)  # no relative_to: paths as found
    assert rows_of(as_is.getvalue())[0][1] == os.path.join("p00", "a.go") and "relative" not in as_is.getvalue()


# --- rows: identical groups, families -----------------------------------------------------------


def test_an_identical_group_is_one_row_and_its_pairs_across_one_more(make_tree: TreeFactory) -> None:
    rng = random.Random(6)
    blocks = go_file(rng, 10)
    copies = {f"gen/copy{n}.go": render_go(blocks) for n in range(5)}
    tree = make_tree({**copies, "b/edit.go": render_go(near_copy(blocks, rng, 1))})
    code, out, _ = run("scan", str(tree), "-q", "--no-cache")
    assert code == ExitCode.OK
    result = minhashdup.scan(str(tree))
    assert len(result.pairs) == 10 + 5  # the table folds the 15 pairs into two rows
    n, edit = result.groups[0].shingles, next(p for p in result.pairs if p.jaccard < 1)
    group = os.path.join("gen", "copy*.go")
    assert rows_of(out) == [
        [f"{edit.jaccard:.2f}-1.00", "family of 6 files, 15 pairs", "", "", ""],
        ["1.000", "5 identical files", group, str(n), f"{n} each"],
        [
            f"{edit.jaccard:.3f}",
            os.path.join("b", "edit.go"),
            os.path.join("gen", "copy0.go") + " (+4 identical)",
            str(edit.common),
            f"{edit.shingles_a}/{n}",
        ],
    ]


def test_a_large_group_listed_in_part_is_one_row_counting_all_its_pairs() -> None:
    files = tuple(f"vendor/m{n:02d}/LICENSE" for n in range(50))
    listed = [pair(files[0], f, 1.0) for f in files[1:]]  # a group of 50: its first file with each other
    lone = [pair(f"p{n}/a.go", f"p{n}/b.go", 0.8) for n in range(2)]
    result = result_of(listed + lone, [family(*listed)] + [family(p) for p in lone], [Group(files, 100, 49)])
    group = ["1.000", "50 identical files", os.path.join("vendor", "m*", "LICENSE"), "100", "100 each"]
    assert rows_of(drawn(result, limit=0)) == [group, ["0.800", "p0/a.go", "p0/b.go", "89", "100/100"], ANY]
    assert f"1 more row not shown (1 pair; 1 of the 3 families not at all): {SEE_ALL}" in drawn(result, limit=2)
    star = [pair("hub/h.go", f"hub/s{n:02d}.go", 0.9) for n in range(50)]  # 51 files: before the group
    result = result_of(star + listed + lone, [family(*star), family(*listed)] + [family(p) for p in lone])
    result.groups = [Group(files, 100, 49)]
    out = drawn(result, limit=1)
    assert len(rows_of(out)) == 2  # the star's heading and its first row
    assert f"52 more rows not shown (1,276 pairs; 3 of the 4 families not at all): {SEE_ALL}" in out  # 49 + 1,225 + 2


def test_a_review_that_keeps_part_of_a_group_counts_only_the_pairs_kept() -> None:
    files = ("g/a.go", "g/b.go", "g/c.go", "g/d.go")
    inside = [pair(x, y, 1.0) for n, x in enumerate(files) for y in files[n + 1 :]]
    star = [pair("o/x.go", f"o/y{n}.go", 0.9 - n / 100) for n in range(4)]  # 5 files: before the group
    whole = result_of(inside + star, [family(*star), family(*inside)], [Group(files, 100, 6)])
    assert "4 more rows not shown (9 pairs; 1 of the 2 families not at all)" in drawn(whole, limit=1)
    kept = whole.keep(lambda p: "g/a.go" in (p.a, p.b) or "o/x.go" in (p.a, p.b))  # e.g. --changed-since
    assert len(kept.pairs) == 3 + 4
    assert "4 more rows not shown (6 pairs; 1 of the 2 families not at all)" in drawn(kept, limit=1)  # 3 + 3
    assert rows_of(drawn(kept, limit=0))[-1][1] == "4 identical files"  # still one row


def test_families_come_largest_then_most_similar_first_and_their_rows_by_jaccard() -> None:
    pair_high = pair("zpair/a.go", "zpair/b.go", 0.99)
    four = [
        pair("four/a.go", "four/b.go", 0.6),
        pair("four/b.go", "four/c.go", 0.8),
        pair("four/c.go", "four/d.go", 0.7),
    ]
    three_low = [pair("low/a.go", "low/b.go", 0.7), pair("low/b.go", "low/c.go", 0.75)]
    three_high = [pair("high/a.go", "high/b.go", 0.9), pair("high/a.go", "high/c.go", 0.95)]
    pairs = [pair_high, *four, *three_low, *three_high]
    clusters = [family(pair_high), family(*three_low), family(*four), family(*three_high)]  # any order
    rows = rows_of(drawn(result_of(pairs, clusters), limit=0))
    assert [r[:3] for r in rows] == [
        ["0.60-0.80", "family of 4 files, 3 pairs", os.path.join("four", "*.go")],
        ["0.800", "four/b.go", "four/c.go"],
        ["0.700", "four/c.go", "four/d.go"],
        ["0.600", "four/a.go", "four/b.go"],
        ["0.90-0.95", "family of 3 files, 2 pairs", os.path.join("high", "*.go")],  # the same size, more similar
        ["0.950", "high/a.go", "high/c.go"],
        ["0.900", "high/a.go", "high/b.go"],
        ["0.70-0.75", "family of 3 files, 2 pairs", os.path.join("low", "*.go")],
        ["0.750", "low/b.go", "low/c.go"],
        ["0.700", "low/a.go", "low/b.go"],
        ["0.990", "zpair/a.go", "zpair/b.go"],  # a family of two is one row, no heading
    ]


def test_vendored_sides_are_marked_and_the_baseline_column_counts_new_pairs() -> None:
    vendored = pair("app/util.go", "vendor/lib/util.go", 0.8, vendored_b=True)
    both = pair("third_party/a/x.go", "third_party/b/x.go", 0.7, vendored_a=True, vendored_b=True)
    files = ("app/copy/LICENSE", "vendor/a/LICENSE", "vendor/b/LICENSE")
    inside = [
        pair(files[0], files[1], 1.0, vendored_b=True),
        pair(files[0], files[2], 1.0, vendored_b=True, known=True),
        pair(files[1], files[2], 1.0, vendored_a=True, vendored_b=True),
    ]
    pairs = [vendored, both, *inside]
    result = result_of(pairs, [family(vendored), family(both), family(*inside)], [Group(files, 100, 3)])
    result.params["baseline"] = "dups.json"
    out = drawn(result)
    rows = {r[1]: r for r in rows_of(out)}
    assert rows["3 identical files (2 vendored)"][2] == os.path.join("*", "*", "LICENSE")
    assert rows["3 identical files (2 vendored)"][-1] == "2 new"  # one of its three pairs is known
    assert rows["app/util.go"][2] == "vendor/lib/util.go (vendored)"
    assert rows["third_party/a/x.go (vendored)"][2] == "third_party/b/x.go (vendored)"
    assert rows["app/util.go"][-1] == "new"
    marks = [f for r in rows_of(drawn(result_of([pair("a.go", "b.go", 0.9)], []))) for f in r]
    assert not any("vendored" in cell for cell in marks)  # no flag, no mark


# --- width ------------------------------------------------------------------------------------


def test_columns_is_honoured_off_a_terminal_and_paths_never_wrap_without_it(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = "/".join(f"folder{n}" for n in range(12))
    rng = random.Random(3)
    blocks = go_file(rng, 10)
    tree = make_tree({f"{deep}/a.go": render_go(blocks), f"{deep}/b.go": render_go(near_copy(blocks, rng, 1))})
    _, out, _ = run("scan", str(tree), "-q", "--no-cache")
    assert os.path.join(*deep.split("/"), "a.go") in out  # a whole path on one line
    assert max(len(line) for line in out.splitlines() if line.startswith("│")) > 160
    monkeypatch.setenv("COLUMNS", "80")
    _, out, _ = run("scan", str(tree), "-q", "--no-cache")
    table = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) == 80  # paths fold within the width
    assert os.path.join(*deep.split("/"), "a.go") not in out
    monkeypatch.setenv("COLUMNS", "5")  # too narrow for any path: ignored, as if unset
    _, out, _ = run("scan", str(tree), "-q", "--no-cache")
    assert os.path.join(*deep.split("/"), "a.go") in out


def test_pattern_names_what_a_groups_paths_share() -> None:
    j = os.path.join
    assert pattern([j("a", "x_1.go"), j("a", "x_22.go")]) == j("a", "x_*.go")
    assert pattern([j("a", "b", "LICENSE"), j("c", "LICENSE"), j("d", "e", "f", "LICENSE")]) == j("**", "LICENSE")
    assert pattern([j("s", "amd64.s"), j("s", "arm64.s")]) == j("s", "a*64.s")
    assert pattern(["same.go", "same.go"]) == "same.go"
    assert re.fullmatch(r"\*\*.*", pattern([j("a", "b", "x.go"), j("y.go")]))
