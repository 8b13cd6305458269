from __future__ import annotations

import dataclasses
import itertools
import json
import os
import random
import statistics
from pathlib import Path

import pytest

from minhashdup import Config, collect, scan
from minhashdup.analysis.compare import compare_files
from minhashdup.analysis.evaluate import Bin, evaluate
from minhashdup.errors import ExitCode, InputPathError

from .conftest import TreeFactory, go_file, near_copy, oracle_jaccard, oracle_shingles, render_go, run
from .test_bands import cheapest_setting, s_curve
from .test_pipeline import planted_tree


def test_evaluate_bins_count_the_true_pairs_and_those_lsh_found(make_tree: TreeFactory) -> None:
    root = planted_tree(make_tree)
    config = Config(bands=6, rows=4, jobs=1)  # few bands: some pairs are lost
    ev = evaluate(collect([str(root)], config), config, low=0.3)
    compared = sorted(p for p in map(str, root.rglob("*.go")) if len(oracle_shingles(Path(p))) >= 20)
    sims = [j for a, b in itertools.combinations(compared, 2) if (j := oracle_jaccard(Path(a), Path(b))) >= 0.3]
    # LSH's verified pairs at threshold 0.3 are exactly the true pairs it made candidates.
    found = [p.jaccard for p in scan([str(root)], Config(bands=6, rows=4, threshold=0.3, jobs=1)).pairs]
    assert [b.low for b in ev.bins] == pytest.approx([0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
    for b in ev.bins:
        assert b.pairs == sum(_inside(j, b) for j in sims), b
        assert b.found == sum(_inside(j, b) for j in found), b
        # The S-curve's forecast: the mean of P(J) over the bin's true pairs (none: no forecast).
        forecast = [s_curve(j, 6, 4) for j in sims if _inside(j, b)]
        assert b.predicted == (pytest.approx(statistics.fmean(forecast)) if forecast else None), b
    assert sum(b.pairs for b in ev.bins) == len(sims)
    assert ev.all_pairs > ev.candidates > 0


def _inside(j: float, b: Bin) -> bool:
    return b.low - 1e-9 <= j < b.high - 1e-9 or (b.high == 1.0 and j == 1.0)


def test_evaluate_json_has_the_documented_shape(make_tree: TreeFactory) -> None:
    root = planted_tree(make_tree)
    code, out, _ = run("evaluate", str(root), "-f", "json", "--low", "0.4", "-q")
    assert code == ExitCode.OK
    doc = json.loads(out)
    assert list(doc)[:5] == ["params", "candidates", "completion_checks", "all_pairs", "bins"]
    assert doc["params"]["low"] == 0.4 and doc["params"]["bands"] == 12 and doc["params"]["completion"] is True
    documented = ["low", "high", "pairs", "found", "recall", "predicted"]
    completed = ["completed", "recall_completed"]
    spread = ["recall_seed", "recall_se", "recall_min", "recall_max", "recall_completed_seed"]  # several seeds
    assert [list(b) for b in doc["bins"]] == [
        documented + completed + (spread if b["pairs"] else []) for b in doc["bins"]
    ]
    assert doc["params"]["repeats"] == 30 and any(b["pairs"] for b in doc["bins"])
    code, out, _ = run("evaluate", str(root), "-f", "json", "--low", "0.4", "-q", "--repeats", "1")
    assert [list(b) for b in json.loads(out)["bins"]] == [documented + completed] * 6
    code, out, _ = run("evaluate", str(root), "-f", "json", "--low", "0.4", "-q", "--repeats", "1", "--no-completion")
    assert [list(b) for b in json.loads(out)["bins"]] == [documented] * 6
    code, _, err = run("evaluate", str(root), "--low", "1.5")
    assert code == ExitCode.USAGE and "--low must be above 0 and below 1" in err


def family_tree(make_tree: TreeFactory, members: int = 14, seed: int = 3) -> Path:
    """One family: near copies of one Go file, each with 1 to 3 of its 12 functions replaced
    (pairwise Jaccard mostly 0.4 to 0.7), and two unrelated files."""
    rng = random.Random(seed)
    blocks = go_file(rng, 12)
    files: dict[str, str | bytes] = {
        f"fam/m{k:02d}.go": render_go(near_copy(blocks, rng, rng.randint(1, 3))) for k in range(members)
    }
    files["other/a.go"] = render_go(go_file(rng, 10))
    files["other/b.go"] = render_go(go_file(rng, 10))
    return make_tree(files)


def test_evaluate_with_completion_counts_what_a_scan_finds_per_seed(make_tree: TreeFactory) -> None:
    # 3 bands of 4 rows: P(0.5) = 0.18, so LSH misses most of the family's pairs and completion
    # has work. For each seed, the bins at or above the threshold count exactly the pairs a scan
    # with that seed reports, with and without completion.
    root = family_tree(make_tree)
    config = Config(bands=3, rows=4, jobs=1, seed=7)
    corpus = collect([str(root)], config)
    ev = evaluate(corpus, config, low=0.3, repeats=3)
    for k, seed in enumerate((7, 8, 9)):
        with_it, without = (
            scan([str(root)], dataclasses.replace(config, seed=seed, completion=c)).pairs for c in (True, False)
        )
        for b in ev.bins:
            if b.low < config.threshold - 1e-9:
                continue
            completed = (b.completed, *b.repeat_completed)[k]
            found = (b.found, *b.repeat_found)[k]
            assert completed == sum(_inside(p.jaccard, b) for p in with_it), (seed, b)
            assert found == sum(_inside(p.jaccard, b) for p in without), (seed, b)
    pairs, found = ev.at_least(0.5)
    completed = ev.completed_at_least(0.5)
    assert completed is not None and pairs >= completed > found  # completion found what LSH missed
    assert ev.completion_checks > 0
    high = [b for b in ev.bins if b.pairs and b.low >= 0.5]
    assert all(b.recall_completed is not None and b.recall is not None for b in high)
    assert sum(b.recall_completed - b.recall for b in high) > 0  # type: ignore[operator]


def test_evaluate_repeat_seeds_wrap_past_the_largest_seed(make_tree: TreeFactory) -> None:
    # Seeds are 64-bit words: after 2**64 - 1 the repeats go on from 0 (they overflowed: exit 3).
    root = planted_tree(make_tree)
    top = 2**64 - 1
    code, out, err = run("evaluate", str(root), "-f", "json", "-q", "--seed", str(top), "--repeats", "3", "-j", "1")
    assert (code, err) == (ExitCode.OK, "")
    doc = json.loads(out)
    config = Config(bands=3, rows=4, jobs=1)
    corpus = collect([str(root)], config)
    alone = [evaluate(corpus, dataclasses.replace(config, seed=s), repeats=1) for s in (top, 0, 1)]
    ev = evaluate(corpus, dataclasses.replace(config, seed=top), repeats=3)
    assert [(b.found, *b.repeat_found) for b in ev.bins] == [tuple(a.bins[k].found for a in alone) for k in range(7)]
    assert doc["params"]["seed"] == top and sum(b["pairs"] for b in doc["bins"]) > 0
    code, out, _ = run("evaluate", str(root), "-q", "--seed", str(top - 1), "--repeats", "4", "-j", "1")
    assert code == ExitCode.OK and f"mean over seeds {top - 1}..1, modulo 2**64 (" in out.replace("\n", "")


def test_tune_json_and_table() -> None:
    code, out, _ = run("tune", "--threshold", "0.5", "-f", "json")
    assert code == ExitCode.OK
    doc = json.loads(out)
    bands, rows = cheapest_setting(0.5, 128, 0.99) or (0, 0)  # defaults: --max-hashes 128, --min-recall 0.99
    assert (doc["recommended"]["bands"], doc["recommended"]["rows"]) == (bands, rows)
    assert doc["recommended"]["p_threshold"] == pytest.approx(s_curve(0.5, bands, rows), abs=1e-4)
    assert {(c["bands"], c["rows"]) for c in doc["choices"]} >= {(12, 4), (bands, rows)}
    # tune's P(s) is LSH alone; it says so rather than count on family completion
    assert doc["completion"]["accounted_for"] is False and "family completion" in doc["completion"]["note"]
    code, out, _ = run("tune", "-t", "0.5")
    assert code == ExitCode.OK and f"--bands {bands} --rows {rows}" in out and "threshold 0.5" in out
    assert "does not count on family completion" in " ".join(out.split())
    assert run("tune", "-t", "50")[0] == ExitCode.USAGE
    assert "raise --max-hashes" in run("tune", "-t", "0.95", "--max-hashes", "4", "--min-recall", "0.999")[1]


def test_scan_hints_when_a_threshold_meets_the_default_bands(make_tree: TreeFactory) -> None:
    root = planted_tree(make_tree)
    _, _, err = run("scan", str(root), "-t", "0.3", "-f", "json")
    p = s_curve(0.3, 12, 4)
    bands, rows = cheapest_setting(0.3, 128, 0.99) or (0, 0)
    assert f"12 x 4 finds a pair of similarity 0.3 with probability {p:.2f}; for recall first try " in err
    assert f"--bands {bands} --rows {rows}" in err
    assert "note:" not in run("scan", str(root), "-t", "0.3", "-b", "40", "-r", "3", "-f", "json")[2]


def test_compare_finds_the_shared_runs(make_tree: TreeFactory) -> None:
    rng = random.Random(2)
    blocks = go_file(rng, 6)
    edited = near_copy(blocks, rng, 1)
    root = make_tree({"a.go": render_go(blocks), "b.go": render_go(edited)})
    c = compare_files(str(root / "a.go"), str(root / "b.go"))
    assert c.jaccard == pytest.approx(oracle_jaccard(root / "a.go", root / "b.go"))
    assert c.runs and c.runs[0].tokens >= c.runs[-1].tokens
    text_a = (root / "a.go").read_text().splitlines()
    text_b = (root / "b.go").read_text().splitlines()
    for run_ in c.runs:
        (a0, a1), (b0, b1) = run_.a_lines, run_.b_lines
        assert a1 - a0 == b1 - b0  # generated copies keep their line layout
        # A run may start or end inside a line; the lines between are the same text.
        assert text_a[a0 : a1 - 1] == text_b[b0 : b1 - 1]
    code, out, _ = run("compare", str(root / "a.go"), str(root / "b.go"), "-f", "json")
    doc = json.loads(out)
    assert code == ExitCode.OK and doc["common"] == c.common and doc["runs"][0]["a_lines"] == list(c.runs[0].a_lines)


def test_compare_refuses_what_it_cannot_read(make_tree: TreeFactory) -> None:
    root = make_tree({"a.go": "package a\n", "x.bin": b"\0\1"})
    with pytest.raises(InputPathError, match="binary"):
        compare_files(str(root / "a.go"), str(root / "x.bin"))
    code, _, err = run("compare", str(root / "a.go"), str(root / "nope.go"))
    assert code == ExitCode.USAGE and "nope.go" in err and err.count("\n") == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_compare_refuses_a_fifo(make_tree: TreeFactory) -> None:
    # A FIFO opened for reading waits for a writer: compare must refuse it at once, not hang.
    root = make_tree({"a.go": "package a\n"})
    os.mkfifo(root / "f.go")
    code, _, err = run("compare", str(root / "a.go"), str(root / "f.go"))
    assert (code, err) == (
        ExitCode.USAGE,
        f"minhashdup: error: {root / 'f.go'}: not a regular file (FIFO); check the path\n",
    )


@pytest.mark.parametrize("bits", [64, 6])
def test_evaluate_recall_is_the_mean_over_seeds_each_as_a_real_lsh_run(make_tree: TreeFactory, bits: int) -> None:
    root = planted_tree(make_tree)
    config = Config(bands=3, rows=4, bits=bits, jobs=1)  # few bands: seeds differ in what they find
    corpus = collect([str(root)], config)
    ev = evaluate(corpus, config, low=0.3, repeats=6)
    # Each other seed's count (bands compared pair by pair) is what LSH run with that seed finds.
    for r in range(1, 6):
        alone = evaluate(corpus, dataclasses.replace(config, seed=config.seed + r), low=0.3, repeats=1)
        assert [b.repeat_found[r - 1] for b in ev.bins] == [b.found for b in alone.bins]
    first = evaluate(corpus, config, low=0.3, repeats=1)
    assert [b.found for b in ev.bins] == [b.found for b in first.bins]  # the configured seed's own run
    assert any(len({b.found, *b.repeat_found}) > 1 for b in ev.bins)  # the seeds do differ here
    for b in ev.bins:
        if not b.pairs:
            assert b.recall is None and b.to_dict()["recall"] is None
            continue
        every = [b.found / b.pairs] + [f / b.pairs for f in b.repeat_found]
        assert b.recall == pytest.approx(sum(every) / 6)
        assert b.recall_seed == pytest.approx(every[0])
        doc = b.to_dict()
        assert doc["recall_min"] == pytest.approx(min(every)) and doc["recall_max"] == pytest.approx(max(every))
        assert doc["recall_se"] == pytest.approx(statistics.stdev(every) / 6**0.5, abs=1e-6)
    assert ev.to_dict()["params"]["repeats"] == 6
    assert first.bins[-1].recall_se is None and "recall_se" not in first.bins[-1].to_dict()
