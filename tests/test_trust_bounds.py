"""Issue 11, item 6: no quadratic blow-up. A group of identical files is one group with a
bounded listing of its pairs; the gate still sees every file of it; the exact search, LSH
banding and the JSON writer keep their memory bounded."""

from __future__ import annotations

import io
import json
import random
import tracemalloc
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from minhashdup import Config, scan
from minhashdup.cli import cli
from minhashdup.core import exact as exact_mod
from minhashdup.core import limits
from minhashdup.core.bands import candidate_pairs
from minhashdup.core.signature import estimate, pair_estimates
from minhashdup.errors import ExitCode
from minhashdup.report.data import render_json

from .conftest import TreeFactory


def source(seed: int, lines: int = 14) -> str:
    """A small Python file, different for each seed, well over --min-shingles."""
    rng = random.Random(seed)
    body = [f"def f{i}(x):\n    return x * {rng.randint(2, 999)} + {rng.randint(2, 999)}\n" for i in range(lines)]
    return "\n".join(body)


def edited(text: str) -> str:
    """``text`` with its last function changed: a near-duplicate (Jaccard about 0.8)."""
    head, _, _ = text.rpartition("def ")
    return head + "def changed(y):\n    return y - 1\n"


def run(*args: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    result = CliRunner().invoke(cli, ["scan", *args, "--format", "json", "-q", "--no-cache"])
    return result.exit_code, json.loads(result.stdout) if result.stdout else {}, result.stderr


def stable(doc: dict) -> dict:  # type: ignore[type-arg]
    """The document without what describes the run rather than the result."""
    out = json.loads(json.dumps(doc))
    for key in ("seconds", "cpu_seconds", "cache"):
        out["stats"].pop(key)
    return out


def test_identical_group_is_one_group_with_a_bounded_listing(make_tree: TreeFactory) -> None:
    text = source(1)
    tree = make_tree({f"d{i % 7}/copy{i:03d}.py": text for i in range(300)})
    code, doc, _ = run(str(tree), "--fail-on-pairs")
    assert code == ExitCode.PAIRS_FOUND
    names = sorted(str(tree / f"d{i % 7}" / f"copy{i:03d}.py") for i in range(300))
    shingles = doc["pairs"][0]["shingles_a"]
    assert doc["schema_version"] == 2
    assert doc["groups"] == [
        {"size": 300, "shingles": shingles, "pairs_total": 44_850, "pairs_listed": 299, "files": names}
    ]
    # The first file with each other one: every file named once, n - 1 pairs, not n(n-1)/2.
    assert [(p["a"], p["b"], p["jaccard"]) for p in doc["pairs"]] == [(names[0], b, 1.0) for b in names[1:]]
    assert doc["stats"]["verified_pairs"] == 44_850
    assert doc["stats"]["pairs_listed"] == 299
    assert doc["stats"]["identical_groups"] == 1
    assert doc["clusters"] == [{"size": 300, "pairs": 44_850, "jaccard_min": 1.0, "jaccard_max": 1.0, "files": names}]
    code, again, _ = run(str(tree), "--fail-on-pairs", "--jobs", "1")
    assert code == ExitCode.PAIRS_FOUND
    assert stable(again) == stable(doc)


def test_a_group_within_the_bound_lists_every_pair(make_tree: TreeFactory) -> None:
    tree = make_tree({f"c{i}.py": source(2) for i in range(45)})  # 990 pairs <= 1,000
    code, doc, _ = run(str(tree))
    assert code == ExitCode.OK
    assert len(doc["pairs"]) == doc["stats"]["verified_pairs"] == doc["groups"][0]["pairs_listed"] == 990


def test_two_large_similar_groups_list_the_pair_of_their_first_files(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_LISTED_PAIRS", 10)
    text = source(3)
    files = {f"a{i}.py": text for i in range(6)} | {f"b{i}.py": edited(text) for i in range(5)}
    files |= {"x0.py": source(4), "x1.py": source(4)}  # a small group: listed whole
    tree = make_tree(files)
    code, doc, _ = run(str(tree), "--max-pairs", "100")
    assert code == ExitCode.OK
    p = {name: str(tree / name) for name in files}
    a = [p[f"a{i}.py"] for i in range(6)]
    b = [p[f"b{i}.py"] for i in range(5)]
    groups = [(g["size"], g["pairs_total"], g["pairs_listed"]) for g in doc["groups"]]
    assert groups == [(6, 15, 5), (5, 10, 10), (2, 1, 1)]  # 15 > 10: a star; 10 <= 10: whole
    listed = {(x["a"], x["b"]) for x in doc["pairs"]}
    across = [x for x in doc["pairs"] if x["jaccard"] < 1]
    assert [(x["a"], x["b"]) for x in across] == [(a[0], b[0])]  # 6 x 5 = 30 > 10
    assert {(a[0], y) for y in a[1:]} <= listed
    assert len(doc["pairs"]) == doc["stats"]["pairs_listed"] == 5 + 10 + 1 + 1
    assert doc["stats"]["verified_pairs"] == 15 + 10 + 30 + 1
    family = doc["clusters"][0]
    assert (family["size"], family["pairs"], family["jaccard_max"]) == (11, 55, 1.0)
    assert family["jaccard_min"] == across[0]["jaccard"]
    assert family["files"] == sorted(a + b)


def test_gate_and_baseline_see_every_file_of_a_large_group(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file new to a group listed in part is a new pair; deleting the file that anchors the
    listing (which lists the group otherwise) adds none."""
    monkeypatch.setattr(limits, "MAX_LISTED_PAIRS", 3)
    text = source(5)
    tree = make_tree({f"g{i}.py": text for i in range(1, 5)} | {"other.py": source(6)})
    baseline = str(tree / "dups.json")
    code, doc, _ = run(str(tree), "--write-baseline", baseline)
    assert (code, len(doc["pairs"]), doc["stats"]["verified_pairs"]) == (ExitCode.OK, 3, 6)
    gate = (str(tree), "--baseline", baseline, "--fail-on-pairs")
    assert run(*gate)[0] == ExitCode.OK

    (tree / "g9.py").write_text(text)  # sorts last: one listed pair, with the first file
    code, doc, _ = run(*gate)
    new = [(Path(p["a"]).name, Path(p["b"]).name) for p in doc["pairs"] if not p["known"]]
    assert (code, new) == (ExitCode.PAIRS_FOUND, [("g1.py", "g9.py")])
    (tree / "g9.py").unlink()

    (tree / "g0.py").write_text(text)  # sorts first: the listing now starts from it
    code, doc, _ = run(*gate)
    new = [(Path(p["a"]).name, Path(p["b"]).name) for p in doc["pairs"] if not p["known"]]
    assert (code, new) == (ExitCode.PAIRS_FOUND, [("g0.py", f"g{i}.py") for i in range(1, 5)])
    (tree / "g0.py").unlink()

    (tree / "g1.py").unlink()  # the anchor goes: 3 files, listed whole, pairs never recorded
    code, doc, _ = run(*gate)
    assert code == ExitCode.OK
    assert [(Path(p["a"]).name, Path(p["b"]).name, p["known"]) for p in doc["pairs"]] == [
        ("g2.py", "g3.py", True),
        ("g2.py", "g4.py", True),
        ("g3.py", "g4.py", True),
    ]


def test_library_result_carries_the_groups(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_LISTED_PAIRS", 1)
    tree = make_tree({f"s{i}.py": source(7) for i in range(3)})
    result = scan([str(tree)], Config(cache=False))
    (group,) = result.groups
    assert (len(group.files), group.pairs_total, group.pairs_listed) == (3, 3, 2)
    assert result.to_dict()["groups"] == [group.to_dict()]


# Bounded memory of the exact search (prefix filter), LSH banding and the writers.


def near_duplicate_sets(count: int, size: int, seed: int = 0) -> list[np.ndarray]:
    """``count`` sets sharing all but 3 of ``size`` elements: they meet about
    ``count**2 * size / 4`` times in the prefix index, for ``count**2 / 2`` pairs."""
    rng = np.random.default_rng(seed)
    common = rng.choice(2**40, size=size, replace=False).astype(np.uint64)
    out = []
    for k in range(count):
        own = np.arange(3, dtype=np.uint64) + np.uint64(2**41 + 10 * k)
        out.append(np.sort(np.concatenate([common[3:], own])))
    return out


def peak_bytes(call: object) -> int:
    tracemalloc.start()
    try:
        call()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_prefix_candidates_memory_does_not_grow_with_the_meetings() -> None:
    sets = near_duplicate_sets(400, 200)  # about 8 million meetings: 64 MB of pair codes at once
    found: list[np.ndarray] = []
    peak = peak_bytes(lambda: found.append(exact_mod.prefix_candidates(sets, 0.5)))
    assert len(found[0]) == 400 * 399 // 2
    assert peak < 24 * 2**20


def test_band_candidates_memory_holds_one_band_at_a_time() -> None:
    keys = np.repeat(np.arange(2, dtype=np.uint64), 1000)[:, None] * np.ones(12, dtype=np.uint64)
    found: list[np.ndarray] = []
    peak = peak_bytes(lambda: found.append(candidate_pairs(keys, max_bucket=1000)[0]))
    assert len(found[0]) == 2 * 1000 * 999 // 2
    assert peak < 100 * 2**20  # 12 bands of the same million pairs at once: 283 MB


def reference_candidates(sets: list[np.ndarray], threshold: float) -> set[tuple[int, int]]:
    """The filters' definition, pair by pair: some shared prefix element passes the size
    filter and PPJoin's positional filter."""
    sizes = np.array([len(s) for s in sets], dtype=np.int64)
    owner, rank, pos = exact_mod._ranked_prefixes(sets, sizes, threshold)
    where: dict[tuple[int, int], int] = {(int(o), int(r)): int(p) for o, r, p in zip(owner, rank, pos, strict=True)}
    by_rank: dict[int, list[int]] = {}
    for o, r in zip(owner.tolist(), rank.tolist(), strict=True):
        by_rank.setdefault(r, []).append(o)
    out = set()
    for r, members in by_rank.items():
        for x, a in enumerate(members):
            for b in members[x + 1 :]:
                sa, sb = int(sizes[a]), int(sizes[b])
                size_ok = min(sa, sb) >= threshold * max(sa, sb) - 1e-9
                needed = np.ceil(threshold / (1 + threshold) * (sa + sb) - 1e-9)
                reachable = 1 + min(sa - where[a, r] - 1, sb - where[b, r] - 1)
                if size_ok and reachable >= needed:
                    out.add((min(a, b), max(a, b)))
    return out


sets_strategy = st.lists(st.sets(st.integers(0, 30), min_size=1, max_size=12), min_size=2, max_size=14)


@given(sets_strategy, st.sampled_from([0.2, 0.5, 0.8, 1.0]), st.sampled_from([1, 3, 50, 10**6]), st.booleans())
def test_prefix_candidates_in_blocks_are_the_filters_definition(
    raw: list[set[int]], threshold: float, chunk: int, all_heavy: bool
) -> None:
    sets = [np.array(sorted(s), dtype=np.uint64) for s in raw]
    with mock.patch.object(exact_mod, "HEAVY", 0 if all_heavy else exact_mod.HEAVY):
        got = exact_mod.prefix_candidates(sets, threshold, chunk=chunk)
    assert got.tolist() == sorted(got.tolist())
    assert {tuple(p) for p in got.tolist()} == reference_candidates(sets, threshold)
    assert len(got) == len({tuple(p) for p in got.tolist()})


def test_pair_estimates_in_blocks_equal_one_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    sigs = rng.integers(0, 4, size=(30, 16), dtype=np.uint64)
    pairs = np.array([(i, j) for i in range(30) for j in range(i + 1, 30)], dtype=np.int64)
    whole = estimate(sigs[pairs[:, 0]], sigs[pairs[:, 1]], 2)
    monkeypatch.setattr("minhashdup.core.signature._ESTIMATE_ROWS", 7)
    assert pair_estimates(sigs, pairs, 2).tolist() == whole.tolist()
    assert pair_estimates(sigs, pairs[:0], 2).tolist() == []


def test_json_written_in_batches_is_the_same_document(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = make_tree({f"s{i}.py": source(8) for i in range(6)} | {"t.py": edited(source(8))})
    result = scan([str(tree)], Config(cache=False))
    whole = io.StringIO()
    render_json(result, whole)
    monkeypatch.setattr("minhashdup.report.data._ITEMS_PER_WRITE", 2)
    batched = io.StringIO()
    render_json(result, batched)
    assert batched.getvalue() == whole.getvalue()
    assert json.loads(whole.getvalue()) == json.loads(json.dumps(result.to_dict()))
