"""Shared token runs are maximal: the greedy tiling of file a, longest first (issue 12).

The black-box tests go through :func:`compare_files` on files with one token per line, so a
run's line range is its token range: token ``t`` sits on line ``t + 1``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minhashdup.analysis.compare import Run, compare_files
from minhashdup.config import Config
from minhashdup.core import substrings
from minhashdup.core.substrings import maximal_runs
from minhashdup.errors import ExitCode

from .conftest import TreeFactory, run

A_GO = "package p\n\nfunc f() {\n\tx := g(1)\n\ty := h(2)\n\tz := k(3)\n\treturn\n}\n"
B_GO = "package p\n\nfunc f() {\n\tx := g(1)\n\tr := 9\n\tx := g(1)\n\ty := h(2)\n\tz := k(3)\n\treturn\n}\n"

Triple = tuple[int, int, int]  # start in a, start in b, tokens


def test_the_issue_example_reports_the_whole_twenty_tokens(make_tree: TreeFactory) -> None:
    # b.go holds `x := g(1) r := 9` before the 20 tokens `x := g(1) ... return }` of a.go.
    root = make_tree({"a.go": A_GO, "b.go": B_GO})
    c = compare_files(root / "a.go", root / "b.go")
    assert c.runs == [Run((4, 8), (6, 10), 20), Run((1, 3), (1, 3), 7)]


def test_sarif_regions_show_the_whole_twenty_tokens(make_tree: TreeFactory) -> None:
    root = make_tree({"a.go": A_GO, "b.go": B_GO})
    code, out, _ = run("scan", str(root), "--exact", "-q", "-f", "sarif")
    assert code == ExitCode.OK
    [result] = json.loads(out)["runs"][0]["results"]
    here = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    a_side = {"tokens": 20, "lines": [4, 8], "other_lines": [6, 10]}
    b_side = {"tokens": 20, "lines": [6, 10], "other_lines": [4, 8]}
    assert result["properties"]["run"] == (a_side if here.endswith("/a.go") else b_side)


def brute_force(a: list[str], b: list[str], minimum: int) -> list[Triple]:
    """The definition, literally: take the longest shared stretch whose part of ``a`` is still
    free (then the first in a, then the first in b), mark it taken, repeat."""
    taken = [False] * len(a)
    found: list[Triple] = []
    while True:
        best: Triple | None = None
        for i in range(len(a)):
            for j in range(len(b)):
                size = 0
                while i + size < len(a) and j + size < len(b) and not taken[i + size] and a[i + size] == b[j + size]:
                    size += 1
                if size >= minimum and (best is None or size > best[2]):
                    best = (i, j, size)
        if best is None:
            return found
        found.append(best)
        taken[best[0] : best[0] + best[2]] = [True] * best[2]


def longest_common(a: list[str], b: list[str]) -> int:
    return max((n for n in range(1, len(a) + 1) for i in range(len(a) - n + 1) if occurs(a[i : i + n], b)), default=0)


def occurs(needle: list[str], hay: list[str]) -> bool:
    return any(hay[j : j + len(needle)] == needle for j in range(len(hay) - len(needle) + 1))


def compared_runs(a: list[str], b: list[str], k: int) -> list[Triple]:
    """``compare_files`` on two files of one token per line, its runs as token triples."""
    with tempfile.TemporaryDirectory() as tmp:
        pa, pb = Path(tmp, "a.go"), Path(tmp, "b.go")
        pa.write_text("".join(t + "\n" for t in a))
        pb.write_text("".join(t + "\n" for t in b))
        runs = compare_files(pa, pb, Config(shingle=k)).runs
    for r in runs:
        assert (r.a_lines[1] - r.a_lines[0] + 1, r.b_lines[1] - r.b_lines[0] + 1) == (r.tokens, r.tokens)
    return [(r.a_lines[0] - 1, r.b_lines[0] - 1, r.tokens) for r in runs]


tokens = st.lists(st.sampled_from(["a", "b", "c"]), max_size=22)


@settings(max_examples=150, deadline=None)
@given(tokens, tokens, st.integers(1, 4))
def test_runs_are_maximal_disjoint_in_a_and_longest_first(a: list[str], b: list[str], k: int) -> None:
    got = compared_runs(a, b, k)
    longest = longest_common(a, b)
    assert [size for _, _, size in got[:1]] == ([longest] if longest >= k else [])
    assert [size for _, _, size in got] == sorted((size for _, _, size in got), reverse=True)
    owner = [-1] * len(a)  # which run holds each token of a
    for n, (i, j, size) in enumerate(got):
        assert size >= k and a[i : i + size] == b[j : j + size]
        assert all(o == -1 for o in owner[i : i + size]), "runs overlap in a"
        owner[i : i + size] = [n] * size
    for n, (i, j, size) in enumerate(got):
        # Each run is as long as it can be: one more token on either side mismatches, leaves a
        # file, or is a token that an earlier run already holds.
        left, right = i - 1, i + size
        assert i == 0 or j == 0 or a[left] != b[j - 1] or owner[left] in range(n)
        assert right == len(a) or j + size == len(b) or a[right] != b[j + size] or owner[right] in range(n)
    # Nothing shared is left out: no free stretch of k tokens of a occurs in b.
    free = [i for i in range(len(a) - k + 1) if all(o == -1 for o in owner[i : i + k])]
    assert not any(occurs(a[i : i + k], b) for i in free)


@settings(max_examples=150, deadline=None)
@given(tokens, tokens, st.integers(1, 4))
def test_runs_equal_the_brute_force_greedy_tiling(a: list[str], b: list[str], k: int) -> None:
    assert compared_runs(a, b, k) == brute_force(a, b, k)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 2), max_size=45),
    st.lists(st.integers(0, 2), max_size=45),
    st.integers(1, 3),
    st.integers(0, 6),
)
def test_maximal_runs_is_the_greedy_tiling_and_any_limit_a_prefix(
    a: list[int], b: list[int], minimum: int, limit: int
) -> None:
    want = brute_force([str(x) for x in a], [str(x) for x in b], minimum)
    arrays = np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64)
    assert [tuple(r) for r in maximal_runs(*arrays, minimum=minimum)] == want
    assert [tuple(r) for r in maximal_runs(*arrays, minimum=minimum, limit=limit)] == want[:limit]


def test_maximal_runs_refuses_a_minimum_below_one() -> None:
    with pytest.raises(ValueError, match=r"minimum must be at least 1 \(got 0\)"):
        maximal_runs(np.array([1]), np.array([1]), minimum=0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2), max_size=30), st.lists(st.integers(0, 2), max_size=30), st.integers(2, 4))
def test_windows_that_hash_alike_do_not_make_false_runs(a: list[int], b: list[int], minimum: int) -> None:
    # Every window hashed to one value: the runs found on windows are checked against the
    # elements and, false, redone on the elements themselves.
    def collide(tokens: np.ndarray, k: int) -> np.ndarray:
        return np.zeros(max(0, len(tokens) - k + 1), dtype=np.uint64)

    want = brute_force([str(x) for x in a], [str(x) for x in b], minimum)
    with mock.patch.object(substrings, "shingle_hashes", collide):
        got = maximal_runs(np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64), minimum=minimum)
    assert [tuple(r) for r in got] == want
