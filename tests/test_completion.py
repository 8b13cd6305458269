"""Family completion (issue 13): :func:`minhashdup.core.completion.complete` against brute force
on random sets with planted families, its bounds (cap, triangle, ``known``), and its use in the
scan and on the command line."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minhashdup import Config, scan
from minhashdup.core import completion, signature
from minhashdup.core.completion import Completion, complete, near
from minhashdup.core.runs import pair_codes
from minhashdup.core.signature import Family
from minhashdup.errors import ExitCode

from .conftest import TreeFactory, go_file, near_copy, oracle_jaccard, render_go, run

# -- planted families: random sets, brute force --------------------------------------------------------


@dataclasses.dataclass
class Planted:
    """Sets with planted families, their brute-force Jaccard, and what LSH "found"."""

    sets: list[np.ndarray]
    families: list[list[int]]
    threshold: float
    jac: np.ndarray  # (n, n) brute-force Jaccard
    common: np.ndarray  # (n, n) intersection sizes
    edges: np.ndarray  # (m, 2) the given (verified) pairs, all at near(threshold) or above
    known: np.ndarray  # codes of pairs already decided below near(threshold)

    @property
    def n(self) -> int:
        return len(self.sets)

    def given_jaccard(self) -> np.ndarray:
        return self.jac[self.edges[:, 0], self.edges[:, 1]]

    def complete(self, cap: int | None = None) -> Completion:
        return complete(
            self.edges, self.given_jaccard(), self.sets, self.threshold, cap=cap or self.n, known=self.known
        )


def _pairs(rows: np.ndarray) -> set[tuple[int, int]]:
    return {(int(i), int(j)) for i, j in rows}


def _brute_force(sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    n = len(sets)
    jac, common = np.eye(n), np.zeros((n, n), dtype=np.int64)
    for i, j in itertools.combinations(range(n), 2):
        inter = len(np.intersect1d(sets[i], sets[j], assume_unique=True))
        common[i, j] = common[j, i] = inter
        jac[i, j] = jac[j, i] = inter / (len(sets[i]) + len(sets[j]) - inter)
    return jac, common


class _Fresh:
    """Shingle values never used before (distinct sets are what matters, not their values)."""

    def __init__(self) -> None:
        self.next = 1

    def take(self, k: int) -> np.ndarray:
        self.next += k
        return np.arange(self.next - k, self.next, dtype=np.uint64)


def _member(base: np.ndarray, edits: int, rng: np.random.Generator, fresh: _Fresh) -> np.ndarray:
    """``base`` less up to ``edits`` of its values, plus up to ``edits`` new ones."""
    drop = rng.choice(len(base), int(rng.integers(0, edits + 1)), replace=False)
    return np.sort(np.r_[np.delete(base, drop), fresh.take(int(rng.integers(0, edits + 1)))])


@st.composite
def planted(draw: st.DrawFn, dense: bool = False) -> Planted:
    """Families, each a base set and members with random edits; family 0 a clique (edits of at
    most a tenth: every pair at J >= 2/3) that the given edges connect (a random spanning tree
    among them). A family's base may share part of the previous one (near pairs across families)."""
    threshold = draw(st.sampled_from([0.4, 0.5, 0.6]))
    sizes = draw(st.lists(st.integers(3 if dense else 2, 8 if dense else 6), min_size=1, max_size=4))
    loners = draw(st.integers(0, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    keep = draw(st.floats(0.1, 0.9))  # share of the pairs at near(threshold) or above given as edges
    fresh, sets, families = _Fresh(), [], []
    base = fresh.take(40)
    for f, size in enumerate(sizes):
        width = int(rng.integers(20, 61))
        share = int(width * draw(st.sampled_from([0.0, 0.4, 0.7])))
        base = np.sort(np.r_[base[:share], fresh.take(width - share)])
        edits = width // 10 if f == 0 or dense else draw(st.sampled_from([width // 10, width // 4, width // 2]))
        families.append(list(range(len(sets), len(sets) + size)))
        sets += [_member(base, edits, rng, fresh) for _ in range(size)]
    sets += [fresh.take(int(rng.integers(20, 61))) for _ in range(loners)]
    jac, common = _brute_force(sets)
    n, edge_floor = len(sets), near(threshold)
    chosen = {(i, j) for i, j in itertools.combinations(range(n), 2) if jac[i, j] >= edge_floor and rng.random() < keep}
    order = rng.permutation(families[0])
    chosen |= {tuple(sorted((int(order[k]), int(order[rng.integers(k)])))) for k in range(1, len(order))}
    below = [(i, j) for i, j in itertools.combinations(range(n), 2) if jac[i, j] < edge_floor and rng.random() < 0.3]
    edges = np.array(sorted(chosen), dtype=np.int64).reshape(-1, 2)
    known = pair_codes(np.array(below, dtype=np.int64).reshape(-1, 2), n)
    return Planted(sets, families, threshold, jac, common, edges, known)


@settings(max_examples=150, derandomize=True)
@given(planted())
def test_every_reported_pair_is_exact_new_and_at_the_threshold(case: Planted) -> None:
    done = case.complete()
    i, j = done.pairs[:, 0], done.pairs[:, 1]
    assert np.all(i < j) and np.array_equal(done.pairs, done.pairs[np.argsort(pair_codes(done.pairs, case.n))])
    assert np.all(case.jac[i, j] >= case.threshold)
    assert np.array_equal(done.jaccard, case.jac[i, j]) and np.array_equal(done.common, case.common[i, j])
    assert _pairs(done.pairs) <= _pairs(done.checked)
    given_codes = set(pair_codes(case.edges, case.n).tolist())
    assert not set(pair_codes(done.pairs, case.n).tolist()) & given_codes
    assert not set(pair_codes(done.checked, case.n).tolist()) & (given_codes | set(case.known.tolist()))
    assert len(set(pair_codes(done.checked, case.n).tolist())) == done.checks  # each pair checked once
    # what is left unreported among the checked pairs is truly below the threshold
    missed = [(a, b) for a, b in _pairs(done.checked) - _pairs(done.pairs) if case.jac[a, b] >= case.threshold]
    assert missed == []


def _closure_gaps(case: Planted, done: Completion) -> list[tuple[int, int, int]]:
    """Middle files ``b`` in a family with edges ``a ~ b ~ c`` in the final graph, whose pair
    ``(a, c)`` is at the threshold but neither given nor reported."""
    checked = [(a, b) for a, b in _pairs(done.checked) if case.jac[a, b] >= near(case.threshold)]
    graph = _pairs(case.edges) | set(checked)
    have = _pairs(case.edges) | _pairs(done.pairs)
    in_family = {f for pair in have if case.jac[pair] >= case.threshold for f in pair}
    partners: dict[int, set[int]] = {}
    for a, b in graph:
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    return [
        (a, b, c)
        for b in sorted(in_family)
        for a, c in itertools.combinations(sorted(partners[b]), 2)
        if case.jac[a, c] >= case.threshold and (a, c) not in have
    ]


@settings(max_examples=150, derandomize=True)
@given(planted())
def test_closure_holds_at_the_fixpoint(case: Planted) -> None:
    # Every pair at the threshold two hops apart in the final graph, through a middle file in a
    # family at the end (also one that joined it during completion), is given or reported.
    assert _closure_gaps(case, case.complete()) == []


@settings(max_examples=150, derandomize=True)
@given(planted())
def test_a_clique_connected_by_verified_pairs_is_found_whole(case: Planted) -> None:
    have = _pairs(case.edges) | _pairs(case.complete().pairs)
    for family in case.families:
        inside = list(itertools.combinations(family, 2))
        if not all(case.jac[p] >= case.threshold for p in inside):
            continue
        verified = [p for p in inside if p in _pairs(case.edges)]
        if _connected(family, verified):
            assert set(inside) <= have
    assert all(case.jac[p] >= case.threshold for p in itertools.combinations(case.families[0], 2))


def _connected(nodes: list[int], edges: list[tuple[int, int]]) -> bool:
    reached, todo = {nodes[0]}, [nodes[0]]
    while todo:
        x = todo.pop()
        for a, b in edges:
            for y in (a, b):
                if x in (a, b) and y not in reached:
                    reached.add(y)
                    todo.append(y)
    return reached == set(nodes)


# -- the cap ------------------------------------------------------------------------------------------------


@settings(max_examples=150, derandomize=True)
@given(planted(dense=True), st.integers(1, 4))
def test_the_cap_bounds_each_files_checks_and_capped_says_when_it_cut(case: Planted, cap: int) -> None:
    done = case.complete(cap)
    counts = np.bincount(done.checked.ravel(), minlength=case.n)
    assert counts.max(initial=0) <= cap
    assert np.all(case.jac[done.pairs[:, 0], done.pairs[:, 1]] >= case.threshold)
    free = case.complete(case.n)
    if done.capped == 0:  # the cap cut nothing: the same work as with no cap at all
        assert np.array_equal(done.checked, free.checked) and np.array_equal(done.pairs, free.pairs)
        assert (done.pruned, done.rounds) == (free.pruned, free.rounds)


def _sets(*ranges: tuple[int, int]) -> list[np.ndarray]:
    return [np.arange(a, b, dtype=np.uint64) for a, b in ranges]


def _jaccard(sets: list[np.ndarray], pairs: list[tuple[int, int]]) -> np.ndarray:
    out = []
    for i, j in pairs:
        inter = len(np.intersect1d(sets[i], sets[j]))
        out.append(inter / (len(sets[i]) + len(sets[j]) - inter))
    return np.array(out)


# A star: file 0 with four nested partners (J(0, k) = 0.95, 0.9, 0.85, 0.8), every pair among them
# at J >= 0.8; only the star's edges are given.
STAR = _sets((0, 100), (0, 95), (0, 90), (0, 85), (0, 80))
STAR_EDGES = [(0, 1), (0, 2), (0, 3), (0, 4)]


def test_a_small_cap_passes_on_only_the_most_similar_partners() -> None:
    edges, jac = np.array(STAR_EDGES), _jaccard(STAR, STAR_EDGES)
    free = complete(edges, jac, STAR, 0.5, cap=4)
    assert _pairs(free.pairs) == set(itertools.combinations(range(1, 5), 2)) and free.capped == 0
    capped = complete(edges, jac, STAR, 0.5, cap=2)
    # file 0 passes on its two most similar partners, 1 and 2; their pair adds no new two-hop pair
    assert _pairs(capped.pairs) == {(1, 2)} and _pairs(capped.checked) == {(1, 2)}
    assert capped.capped == 1 and capped.rounds == 1


# -- known pairs, chains, the triangle bound, files outside a family ------------------------------------------


def test_known_pairs_are_never_checked() -> None:
    edges, jac = np.array(STAR_EDGES), _jaccard(STAR, STAR_EDGES)
    done = complete(edges, jac, STAR, 0.5, known=pair_codes(np.array([[1, 2], [3, 4]]), 5))
    assert _pairs(done.checked) == {(1, 3), (1, 4), (2, 3), (2, 4)} == _pairs(done.pairs)


def test_a_chain_whose_ends_are_below_the_threshold_is_checked_not_reported() -> None:
    sets = _sets((0, 100), (20, 120), (40, 140))  # J(a, b) = J(b, c) = 2/3, J(a, c) = 60/140
    done = complete(np.array([[0, 1], [1, 2]]), _jaccard(sets, [(0, 1), (1, 2)]), sets, 0.5)
    assert _pairs(done.checked) == {(0, 2)} and len(done.pairs) == 0
    assert (done.pruned, done.rounds) == (0, 1)


def test_a_proposal_the_triangle_bound_rules_out_is_never_intersected() -> None:
    b = np.arange(0, 100, dtype=np.uint64)
    a = np.r_[np.arange(5, 100), np.arange(1000, 1005)].astype(np.uint64)  # J(a, b) = 95/105
    c = np.r_[np.arange(0, 57), np.arange(2000, 2043)].astype(np.uint64)  # J(b, c) = 57/143, near 0.35
    sets = [a, b, c]
    jac = _jaccard(sets, [(0, 1), (1, 2)])
    assert 1 - abs(jac[0] - jac[1]) < 0.5 and jac[1] >= near(0.5)  # same sizes: only the triangle rules out
    done = complete(np.array([[0, 1], [1, 2]]), jac, sets, 0.5)
    assert (done.checks, done.pruned, len(done.pairs), done.rounds) == (0, 1, 0, 0)
    # the same chain with b ~ c at 0.8: the bound allows it, and it is checked
    c2 = np.r_[np.arange(0, 90), np.arange(2000, 2010)].astype(np.uint64)
    sets2 = [a, b, c2]
    done2 = complete(np.array([[0, 1], [1, 2]]), _jaccard(sets2, [(0, 1), (1, 2)]), sets2, 0.5)
    assert _pairs(done2.checked) == {(0, 2)} and done2.pruned == 0


def test_a_file_with_only_near_edges_passes_nothing_on() -> None:
    # a ~ c at 60/70; b is near both (0.40) but has no pair at 0.5: nothing goes through b
    sets = [np.arange(0, 65, dtype=np.uint64), np.r_[np.arange(0, 36), np.arange(100, 124)].astype(np.uint64)]
    sets.append(np.r_[np.arange(0, 60), np.arange(500, 505)].astype(np.uint64))
    jac = _jaccard(sets, [(0, 1), (1, 2)])
    assert jac.min() >= near(0.5) and jac.max() < 0.5 and _jaccard(sets, [(0, 2)])[0] >= 0.5
    done = complete(np.array([[0, 1], [1, 2]]), jac, sets, 0.5)
    assert (done.checks, done.pruned, done.rounds, len(done.pairs)) == (0, 0, 0, 0)


def _late_family() -> tuple[list[np.ndarray], list[tuple[int, int]]]:
    """a ~ c at 0.857 through b (near both, 0.40); b's pair with x (0.58) is found by completion
    through y (b ~ y 0.46 near, y ~ x 0.82 given); a and c are far from x and y."""
    common_ac, b_only, x_only = list(range(60)), list(range(100, 124)), list(range(200, 216))
    a, c = common_ac + list(range(400, 405)), common_ac + list(range(500, 505))
    b = common_ac[:36] + b_only
    x = b_only + common_ac[:20] + x_only
    y = b_only + common_ac[:14] + x_only + list(range(300, 306))
    return [np.array(sorted(s), dtype=np.uint64) for s in (a, b, c, x, y)], [(0, 1), (1, 2), (1, 4), (3, 4)]


def test_a_file_that_joins_a_family_late_passes_on_its_earlier_edges() -> None:
    sets, edges = _late_family()
    jac = _jaccard(sets, edges)
    done = complete(np.array(edges), jac, sets, 0.5)
    assert (1, 3) in _pairs(done.pairs)  # b ~ x: b is in a family now
    assert (0, 2) in _pairs(done.pairs)


# -- in the scan ---------------------------------------------------------------------------------------------

# 3 bands of 4 rows: LSH finds a pair at J = 0.6 with chance 1 - (1 - 0.6^4)^3 = 0.33 (0.56 at 0.7), and
# the family's pairs sit between 0.5 and 0.8: with seed 3 it finds 35 of the 68 pairs, but they connect the
# family, and completion adds 25 more (checked when this test was written).
LOOSE = {"bands": 3, "rows": 4, "seed": 3}
LOOSE_ARGS = ["--bands", "3", "--rows", "4", "--seed", "3"]


def family_tree(make_tree: TreeFactory) -> Path:
    """One family of 12 near copies of a Go file (1 to 3 of 12 functions replaced), an identical
    twin of one of them, and 4 unrelated files."""
    rng = random.Random(7)
    blocks = go_file(rng, 12)
    files: dict[str, str | bytes] = {
        f"fam/m{k:02}.go": render_go(near_copy(blocks, rng, rng.randrange(1, 4))) for k in range(12)
    }
    files["fam/twin.go"] = files["fam/m03.go"]
    files.update({f"other/u{k}.go": render_go(go_file(rng, 10)) for k in range(4)})
    return make_tree(files)


def _found(result: Any) -> dict[tuple[str, str], float]:
    return {(p.a, p.b): p.jaccard for p in result.pairs}


def _identical(result: Any) -> int:
    return sum(len(g.files) * (len(g.files) - 1) // 2 for g in result.groups)


def test_completion_adds_exact_pairs_to_what_lsh_found(make_tree: TreeFactory) -> None:
    root = family_tree(make_tree)
    on = scan([str(root)], Config(jobs=1, **LOOSE))
    off = scan([str(root)], Config(jobs=1, completion=False, **LOOSE))
    exact = scan([str(root)], Config(jobs=1, exact=True))
    assert on.stats.completion_pairs > 0 and len(on.pairs) > len(off.pairs)
    assert _found(off).items() <= _found(on).items() <= _found(exact).items()
    oracle: dict[tuple[str, str], float] = {}
    for p in on.pairs:
        assert p.jaccard == p.common / (p.shingles_a + p.shingles_b - p.common) and p.jaccard >= 0.5
        oracle[(p.a, p.b)] = oracle_jaccard(Path(p.a), Path(p.b))
    assert _found(on) == pytest.approx(oracle, abs=1e-12)
    for result in (on, off):
        s = result.stats
        assert _identical(result) == 1  # the twin
        assert s.verified_pairs == _identical(result) + s.candidate_pairs + s.completion_pairs == len(result.pairs)
    assert on.params["completion"] is True and on.stats.completion_checks >= on.stats.completion_pairs
    assert on.stats.completion_rounds >= 1
    assert off.params["completion"] is False
    assert (off.stats.completion_checks, off.stats.completion_pairs, off.stats.completion_rounds) == (0, 0, 0)


def test_the_scan_gives_completion_its_near_edges_and_every_candidate_as_known(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from minhashdup.core import completion

    calls: list[tuple[tuple[Any, ...], dict[str, Any], Completion]] = []
    real = completion.complete

    def spy(*args: Any, **kwargs: Any) -> Completion:
        calls.append((args, kwargs, real(*args, **kwargs)))
        return calls[-1][2]

    monkeypatch.setattr(completion, "complete", spy)
    result = scan([str(family_tree(make_tree))], Config(jobs=1, threshold=0.6, completion_cap=7, **LOOSE))
    [((edges, jac, sets, threshold), kwargs, done)] = calls
    n = len(sets.sizes)  # the scan's representatives, where its engine keeps them
    assert threshold == 0.6 and kwargs["cap"] == 7 and kwargs["likely"] is not None
    assert jac.min() >= near(0.6) and (jac < 0.6).any()  # the near pairs are edges too
    known = set(kwargs["known"].tolist())
    assert len(known) == result.stats.candidates and set(pair_codes(edges, n).tolist()) <= known
    assert not set(pair_codes(done.checked, n).tolist()) & known
    assert result.stats.completion_checks == done.checks > 0


def test_a_small_cap_holds_in_the_scan_and_is_warned_about(make_tree: TreeFactory) -> None:
    root = family_tree(make_tree)
    free = scan([str(root)], Config(jobs=1, **LOOSE))
    tight = scan([str(root)], Config(jobs=1, completion_cap=2, **LOOSE))
    reps = tight.stats.distinct_sets
    assert 0 < tight.stats.completion_checks <= reps * 2 // 2 < free.stats.completion_checks
    off = scan([str(root)], Config(jobs=1, completion=False, **LOOSE))
    exact = scan([str(root)], Config(jobs=1, exact=True))
    assert _found(off).items() < _found(tight).items() <= _found(exact).items()  # more than LSH alone, all exact
    [warning] = [w for w in tight.warnings if w.startswith("family completion: ")]
    assert "--completion-cap 2 left pairs unchecked around " in warning
    assert not [w for w in free.warnings if w.startswith("family completion: ")]


def test_exact_mode_does_not_run_completion(make_tree: TreeFactory) -> None:
    root = family_tree(make_tree)
    asked = scan([str(root)], Config(jobs=1, exact=True, completion=True))
    plain = scan([str(root)], Config(jobs=1, exact=True, completion=False))
    assert asked.params["completion"] is False and asked.params["exact"] is True
    s = asked.stats
    assert (s.completion_checks, s.completion_pairs, s.completion_rounds) == (0, 0, 0)
    assert asked.pairs == plain.pairs and s.verified_pairs == plain.stats.verified_pairs


def _json_scan(root: Path, *args: str) -> dict[str, Any]:
    code, out, err = run("scan", str(root), "-f", "json", "--no-cache", "-q", *LOOSE_ARGS, *args)
    assert code == ExitCode.OK, err
    doc = json.loads(out)
    for key in ("seconds", "cpu_seconds", "cache"):
        doc["stats"].pop(key)
    return doc


def test_the_json_document_is_the_same_for_any_number_of_jobs(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from minhashdup.engine import workers

    monkeypatch.setattr(workers, "_INLINE_BYTES", 0)  # worker processes even for a small tree
    root = family_tree(make_tree)
    one, two = _json_scan(root, "--jobs", "1"), _json_scan(root, "--jobs", "2")
    assert one["stats"]["completion_pairs"] > 0 and one["params"]["completion"] is True
    assert one == two


# -- on the command line --------------------------------------------------------------------------------------


def test_no_completion_turns_it_off(make_tree: TreeFactory) -> None:
    root = family_tree(make_tree)
    doc = _json_scan(root, "--jobs", "1", "--no-completion")
    assert doc["params"]["completion"] is False and doc["stats"]["completion_checks"] == 0
    assert len(doc["pairs"]) == doc["stats"]["candidate_pairs"] + 1  # the LSH pairs and the twin only
    assert _json_scan(root, "--jobs", "1", "--completion")["params"]["completion"] is True


def test_a_completion_cap_of_zero_is_a_usage_error(make_tree: TreeFactory) -> None:
    code, out, err = run("scan", str(family_tree(make_tree)), "-q", "--completion-cap", "0")
    assert code == ExitCode.USAGE and out == ""
    assert err.count("\n") == 1 and "--completion-cap" in err and "Traceback" not in err, err


@pytest.mark.parametrize(("cap", "refused"), [(101, True), (100_000, True), (100, False), (3, False)])
def test_a_found_pyproject_may_lower_the_completion_cap_never_raise_it(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, cap: int, refused: bool
) -> None:
    root = family_tree(make_tree)
    (root / "pyproject.toml").write_text(f"[tool.minhashdup]\ncompletion-cap = {cap}\n")
    monkeypatch.chdir(root)
    code, out, err = run("scan", ".", "-q", "-f", "json", "--no-cache")
    if refused:
        assert code == ExitCode.USAGE and out == "" and err.count("\n") == 1, err
        assert f"'completion-cap' = {cap} loosens a bound on the work a scan may do (default 100)" in err
        assert "pass --completion-cap on the command line" in err
    else:
        assert code == ExitCode.OK, err
        assert json.loads(out)["params"]["completion_cap"] == cap


def test_a_family_found_whole_warns_of_nothing_however_large() -> None:
    # 120 files, every pair already verified: each middle file has more partners than the cap,
    # but no pair is left to check, so nothing is capped (the scan would warn otherwise).
    n = 120
    sets = [np.sort(np.r_[np.arange(200), np.arange(1000 + 10 * k, 1005 + 10 * k)]).astype(np.uint64) for k in range(n)]
    edges = np.array(list(itertools.combinations(range(n), 2)))
    done = complete(edges, np.full(len(edges), 200 / 210), sets, 0.5, cap=100, known=pair_codes(edges, n))
    assert (done.checks, done.capped) == (0, 0)
    # the same family with one pair unknown: a middle file's partners beyond the cap hide it
    unknown = edges[:-1]
    done = complete(unknown, np.full(len(unknown), 200 / 210), sets, 0.5, cap=100)
    assert done.pairs.tolist() == [edges[-1].tolist()] or done.capped > 0


def test_pairs_left_after_the_last_pass_count_as_capped() -> None:
    # A ladder of proposals whose priorities fall along a path, two checks per file: each pass
    # takes few pairs, and what the pass limit leaves is not silently dropped.
    n = 200
    codes = np.array(sorted({i * n + j for i in range(n) for j in (i + 1, i + 2) if j < n}))
    graph = completion._Graph(n, 2)
    taken = graph.within_budget(codes, -(codes // n).astype(float))
    counts = np.bincount(np.r_[taken // n, taken % n], minlength=n)
    assert counts.max() <= 2
    left = np.setdiff1d(codes, taken)
    open_files = {int(x) for c in left for x in (c // n, c % n) if counts[x] < 2}
    assert open_files and all(graph.capped[f] for f in open_files)


@settings(max_examples=100, derandomize=True)
@given(planted(), st.sampled_from([64, 4]))
def test_the_estimate_floor_only_ever_passes_pairs_over(case: Planted, bits: int) -> None:
    # With the scan's MinHash filter (b-bit too), completion checks fewer pairs; what it reports
    # is still exact, and a subset of what it reports without the filter.
    sigs = signature.truncate(Family(7, 48).sign(case.sets), bits)
    floor = completion.estimate_floor(case.threshold, 48, bits)
    assert 0 < floor < case.threshold
    filtered = complete(
        case.edges,
        case.given_jaccard(),
        case.sets,
        case.threshold,
        cap=case.n,
        known=case.known,
        likely=lambda proposed: signature.pair_estimates(sigs, proposed, bits) >= floor,
    )
    assert _pairs(filtered.pairs) <= _pairs(case.complete().pairs)
    assert all(case.jac[a, b] >= case.threshold for a, b in _pairs(filtered.pairs))
    assert filtered.checks <= case.complete().checks + filtered.pruned


def test_params_record_the_cap_only_when_completion_runs(make_tree: TreeFactory) -> None:
    root = family_tree(make_tree)
    for options, want in (({}, 100), ({"completion": False}, None), ({"exact": True}, None)):
        params = scan([str(root)], Config(jobs=1, **options)).params  # type: ignore[arg-type]
        assert (params["completion"], params["completion_cap"]) == (want is not None, want)
