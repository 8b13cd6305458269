"""Issue 11, the gate and large groups: the gate counts every new pair a partly listed group
stands for; ``keep`` keeps groups named on either side; bounds and notices of partial listings."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import minhashdup
from minhashdup.ci import baseline as baselines
from minhashdup.ci.git import real
from minhashdup.errors import ScanLimitError
from minhashdup.result import Group, Pair, Result, Stats

from .conftest import go_file, near_copy, render_go, run

BASE = "/nonexistent-minhashdup-base"
SOURCE = 'def f(x):\n    return x + 1 * 2 - 3\n\nprint(f(4), "hello", [1, 2, 3])\n'


def _copies(folder: Path, n: int, start: int = 0) -> Path:
    folder.mkdir(exist_ok=True)
    for i in range(start, start + n):
        (folder / f"f{i:03}.py").write_text(SOURCE)
    return folder


def _brute(
    first: list[str],
    second: list[str] | None,
    jaccard: float,
    recorded: baselines.Baseline | None,
    tolerance: float,
    changed: set[str] | None,
) -> int:
    """Every pair enumerated, marked by baseline.mark, cut to the changed files: the reference."""
    pairs = itertools.combinations(sorted(first), 2) if second is None else ((a, b) for a in first for b in second)
    rows = [Pair(*sorted((a, b)), jaccard, jaccard, 5, 5, 5) for a, b in pairs]
    result = Result({}, Stats(), rows, [])
    if recorded is not None:
        result = baselines.mark(result, recorded, tolerance)
    return sum(not p.known for p in result.pairs if changed is None or real(p.a) in changed or real(p.b) in changed)


@st.composite
def _cases(draw: st.DrawFn) -> tuple:
    n1 = draw(st.integers(2, 9))
    n2 = draw(st.integers(0, 5))
    names = [f"f{i}" for i in range(n1 + n2 + 2)]  # two files recorded but not in the scan
    entries = draw(
        st.lists(
            st.tuples(st.sampled_from(names), st.sampled_from(names), st.sampled_from([1.0, 1.0, 0.95, 0.5])),
            max_size=12,
        )
    )
    entries = [(a, b, j) for a, b, j in entries if a != b]
    first = [f"{BASE}/{n}" for n in names[:n1]]
    second = [f"{BASE}/{n}" for n in names[n1 : n1 + n2]] or None
    jaccard = 1.0 if second is None else draw(st.sampled_from([1.0, 0.9]))
    changed = draw(st.none() | st.sets(st.sampled_from(first + (second or []))))
    tolerance = draw(st.sampled_from([0.0, 0.1]))
    use_baseline = draw(st.booleans())
    recorded = None
    if use_baseline:
        pairs = {tuple(sorted((a, b))): j for a, b, j in entries}
        recorded = baselines.Baseline("b.json", BASE, pairs, {}, 0, baselines.Classes.of(entries))
    return first, second, jaccard, recorded, tolerance, changed


@given(_cases())
def test_new_pair_count_equals_enumeration(case: tuple) -> None:
    from minhashdup.ci.review import new_pair_count

    first, second, jaccard, recorded, tolerance, changed = case
    changed_real = None if changed is None else {real(p) for p in changed}
    expected = _brute(first, second, jaccard, recorded, tolerance, changed_real)
    assert new_pair_count(first, second, jaccard, recorded, tolerance, changed_real) == expected


def test_gate_counts_every_pair_of_a_partly_listed_group(tmp_path: Path) -> None:
    """45 copies list 990 pairs, 46 list 45 rows for 1,035 pairs: both fail --max-pairs 500."""
    for n, pairs in ((45, 990), (46, 1035)):
        tree = _copies(tmp_path / f"t{n}", n)
        code, out, err = run("scan", str(tree), "--min-shingles", "1", "--max-pairs", "500", "-f", "json", "-q")
        assert code == 1, err
        assert f"gate failed: {pairs} new pairs reported, at most 500 allowed" in err
        assert json.loads(out)["stats"]["new_pairs"] == pairs


def test_fail_on_pairs_and_baseline_known_group_plus_one_copy(tmp_path: Path) -> None:
    tree = _copies(tmp_path / "t", 60)
    base = tmp_path / "b.json"
    code, _, err = run("scan", str(tree), "--min-shingles", "1", "--write-baseline", str(base), "-q")
    assert code == 0, err
    code, out, err = run(
        "scan", str(tree), "--min-shingles", "1", "--baseline", str(base), "--fail-on-pairs", "-f", "json"
    )
    assert code == 0, err
    assert json.loads(out)["stats"]["new_pairs"] == 0
    _copies(tree, 1, start=60)  # one more copy: new with each of the 60 others
    code, out, err = run(
        "scan", str(tree), "--min-shingles", "1", "--baseline", str(base), "--max-pairs", "59", "-f", "json"
    )
    assert code == 1
    assert "gate failed: 60 new pairs reported, at most 59 allowed" in err
    assert json.loads(out)["stats"]["new_pairs"] == 60
    code, _, err = run("scan", str(tree), "--min-shingles", "1", "--baseline", str(base), "--max-pairs", "60", "-q")
    assert code == 0, err


def test_files_from_counts_pairs_touching_the_changed_files(tmp_path: Path) -> None:
    """50 copies, 2 changed: C(50,2) - C(48,2) = 97 pairs touch them."""
    tree = _copies(tmp_path / "t", 50)
    listed = tmp_path / "list.txt"
    listed.write_text(f"{tree / 'f010.py'}\n{tree / 'f020.py'}\n")
    code, out, err = run(
        "scan", str(tree), "--min-shingles", "1", "--files-from", str(listed), "--fail-on-pairs", "-f", "json"
    )
    assert code == 1
    assert "gate failed: 97 new pairs reported" in err
    assert json.loads(out)["stats"]["new_pairs"] == 97


def test_keep_keeps_groups_named_only_on_the_b_side() -> None:
    group = Group(("g1.py", "g2.py"), 5, 1)
    rows = [Pair("a_s.py", "g1.py", 0.9, 0.9, 5, 5, 4), Pair("a_s.py", "g2.py", 0.9, 0.9, 5, 5, 4)]
    rows.append(Pair("g1.py", "g2.py", 1.0, 1.0, 5, 5, 5))
    result = Result({}, Stats(), rows, [], groups=[group])
    kept = result.keep(lambda p: p.a == "a_s.py")
    assert kept.groups == [group]


def _near_copies(folder: Path, n: int) -> Path:
    """``n`` Go files, each the same 12 functions with one replaced: near copies, none identical."""
    rng = random.Random(7)
    blocks = go_file(rng)
    folder.mkdir()
    for i in range(n):
        (folder / f"n{i:03}.go").write_text(render_go(near_copy(blocks, rng, 1)))
    return folder


def test_max_verified_stops_a_scan_of_a_near_copy_family(tmp_path: Path) -> None:
    tree = _near_copies(tmp_path / "t", 60)  # C(60, 2) = 1,770 verified pairs
    code, out, err = run("scan", str(tree), "--exact", "--max-verified", "1000", "-q")
    assert code == 2
    assert out == ""
    assert err == (
        "minhashdup: error: 1,770 verified pairs exceed --max-verified 1,000 (about 0 MiB);"
        " raise --threshold, narrow the PATHS, or raise --max-verified\n"
    )
    with pytest.raises(ScanLimitError) as raised:  # the library names its parameters
        minhashdup.scan(str(tree), exact=True, max_verified=1000)
    assert str(raised.value) == (
        "1,770 verified pairs exceed max_verified 1,000 (about 0 MiB); raise threshold, narrow the paths,"
        " or raise max_verified"
    )
    code, out, err = run("scan", str(tree), "--exact", "--max-verified", "1770", "-f", "json", "-q")
    assert code == 0, err
    assert json.loads(out)["stats"]["verified_pairs"] == 1770


def test_a_stored_result_is_not_replayed_past_a_lower_max_verified(tmp_path: Path) -> None:
    tree = _near_copies(tmp_path / "t", 60)
    cache = tmp_path / "cache"
    assert minhashdup.scan(str(tree), exact=True, cache_dir=cache).stats.verified_pairs == 1770
    assert minhashdup.scan(str(tree), exact=True, cache_dir=cache).stats.cache["result"] == 1  # replayed
    with pytest.raises(ScanLimitError, match=r"^1,770 verified pairs exceed max_verified 1,000"):
        minhashdup.scan(str(tree), exact=True, cache_dir=cache, max_verified=1000)


def test_a_found_config_cannot_raise_max_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _copies(tmp_path / "src", 2)
    (tmp_path / "pyproject.toml").write_text("[tool.minhashdup]\nmax-verified = 100000000\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run("scan", "src", "-q")
    assert code == 2
    assert "'max-verified' = 100000000 loosens a bound on the work a scan may do (default 2000000)" in err


@pytest.mark.parametrize("fmt", ["table", "csv", "jsonl", "sarif", "json"])
def test_a_partial_listing_is_told_on_stderr(tmp_path: Path, fmt: str) -> None:
    tree = _copies(tmp_path / "t", 50)
    code, out, err = run("scan", str(tree), "--min-shingles", "1", "-f", fmt)
    assert code == 0, err
    line = (
        "1 identical group of 1,225 pairs is listed as 49 pairs (first file with each other file);"
        " JSON 'groups' has them whole"
    )
    assert err.count(line) == 1
    if fmt == "table":
        assert line in out
