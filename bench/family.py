"""One family of 2,000 near-duplicate files: time and peak memory of a scan with and without
family completion, and whether completion's per-file cap holds (issue 13).

Run by hand (needs scipy: pip install -e '.[bench]'):

    python bench/family.py                       # a temporary tree, removed at the end
    python bench/family.py --out /tmp/family --repeats 3 --caps 25,400

About 13 minutes on two shared cores with the defaults (most of it the 12 CLI scans, each
exact-checking about 1.2 million LSH candidates); ``--repeats 1`` takes about 5.

The tree is generated here, never committed: one base Python file of ``--lines`` lines, and
``--files`` copies of it, each with its own share of lines replaced by fresh random statements
(a share drawn per copy, uniformly in ``--low``..``--high``), so the pairwise Jaccard spreads
around the default threshold 0.5; plus ``--unrelated`` files that are like nothing. LSH (12 x 4)
finds about half of the pairs near 0.5, so completion has many two-hop pairs to propose: the
hard case for its cap.

Printed: the family's pairwise Jaccard (a sample of pairs); the CLI scan (``minhashdup scan
TREE -f json --no-cache -q``, a child process, peak PSS of it and its workers) with completion
at the default cap, without, and at other caps, interleaved and repeated; recall against an
exact all-pairs; and, in-process, the completion checks per file against the cap.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from go_tree import PeakMemory, _pss, exact_all_pairs

from minhashdup import Config, collect
from minhashdup.core import completion, exact, signature
from minhashdup.core.bands import candidate_probability
from minhashdup.core.pairs import comparable
from minhashdup.core.runs import pair_codes
from minhashdup.core.shingles import intersection_size
from minhashdup.engine.stages import lsh_candidates, prepare, rep_signatures

WORDS = (  # noqa: SIM905
    "alpha beta gamma delta count total index value item node left right key data size path name "
    "result buffer offset limit state token entry table field parent child cache queue store record"
).split()
STATS = ("candidates", "candidate_pairs", "completion_checks", "completion_pairs", "completion_rounds")


# --- the tree ---------------------------------------------------------------------------------


def _ident(rng: random.Random) -> str:
    return "_".join(rng.sample(WORDS, 2)) + str(rng.randrange(1000))


def _statement(rng: random.Random) -> str:
    a, b, c = _ident(rng), _ident(rng), _ident(rng)
    return rng.choice(
        [
            f"{a} = {b}({c}, {rng.randrange(100)})",
            f"if {a} > {b}:\n        {c} += {rng.randrange(10)}",
            f"{a}.{b} = [x for x in {c} if x]",
            f"return {a}({b}) + {c}",
            f"for x in {b}:\n        {c}.append({a}[x])",
        ]
    )


def _base(rng: random.Random, lines: int) -> list[str]:
    """A module of functions: a header every 12 lines, random statements between."""
    return [
        f"def {_ident(rng)}({_ident(rng)}, {_ident(rng)}):" if i % 12 == 0 else "    " + _statement(rng)
        for i in range(lines)
    ]


def make_tree(root: Path, files: int, lines: int, low: float, high: float, unrelated: int, seed: int) -> None:
    """``root/family``: ``files`` copies of one base, each with a share of its statements
    (drawn in ``low..high``) replaced; ``root/other``: ``unrelated`` files of their own."""
    rng = random.Random(seed)
    base = _base(rng, lines)
    (root / "family").mkdir(parents=True)
    (root / "other").mkdir()
    for i in range(files):
        rate = rng.uniform(low, high)
        body = ["    " + _statement(rng) if line.startswith("    ") and rng.random() < rate else line for line in base]
        (root / "family" / f"member_{i:04d}.py").write_text("\n".join(body) + "\n")
    for i in range(unrelated):
        (root / "other" / f"module_{i:04d}.py").write_text("\n".join(_base(rng, lines // 2)) + "\n")


def family_spread(sets: list[np.ndarray], family: list[int], bands: int, rows: int, sample: int, seed: int) -> None:
    """The pairwise Jaccard of a random sample of the family's pairs, binned."""
    rng = np.random.default_rng(seed)
    a, b = rng.choice(family, size=(2, sample))
    keep = a != b
    jac = np.array(
        [
            (c := intersection_size(sets[i], sets[j])) / (len(sets[i]) + len(sets[j]) - c)
            for i, j in zip(a[keep], b[keep], strict=True)
        ]
    )
    pct = np.percentile(jac, [1, 10, 25, 50, 75, 90, 99])
    print(f"family pairwise Jaccard, {len(jac)} random pairs of its {len(family)} files:")
    print("  percentiles 1/10/25/50/75/90/99: " + " ".join(f"{x:.3f}" for x in pct))
    edges = np.round(np.arange(0.0, 1.0001, 0.05), 2)
    counts, _ = np.histogram(jac, bins=edges)
    print(
        "  "
        + "  ".join(f"{edges[k]:.2f}-{edges[k + 1]:.2f} {100 * c / len(jac):.1f}%" for k, c in enumerate(counts) if c)
    )
    print(
        f"  in 0.35-0.65: {100 * np.mean((jac >= 0.35) & (jac < 0.65)):.1f}%; at >= 0.5: "
        f"{100 * np.mean(jac >= 0.5):.1f}%; mean LSH chance P(J) at {bands} x {rows}: "
        f"{float(np.mean(candidate_probability(jac, bands, rows))):.3f}"
    )


# --- the CLI scans ----------------------------------------------------------------------------


def run_scan(tree: Path, extra: list[str]) -> dict:  # type: ignore[type-arg]
    """One ``minhashdup scan`` child: wall seconds, peak PSS, its JSON stats and pairs, stderr."""
    command = [sys.executable, "-m", "minhashdup", "scan", str(tree), "-f", "json", "--no-cache", "-q", *extra]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, text=True, cwd=tempfile.gettempdir())
        with PeakMemory(root=proc.pid) as memory:
            proc.wait()
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stderr = err.read().strip()
        if proc.returncode not in (0, 1):
            raise SystemExit(f"scan {' '.join(extra)} failed with {proc.returncode}: {stderr}")
        report = json.load(out)
    pairs = {(min(p["a"], p["b"]), max(p["a"], p["b"])) for p in report["pairs"]}
    return {"wall": wall, "peak": memory.peak, "stats": report["stats"], "pairs": pairs, "stderr": stderr}


def compare_scans(tree: Path, caps: list[int], repeats: int, truth: set[tuple[str, str]]) -> None:
    """The scans side by side, interleaved ``repeats`` times; medians and ratios."""
    variants = {"cap 100 (default)": [], "--no-completion": ["--no-completion"]}
    variants |= {f"cap {c}": ["--completion-cap", str(c)] for c in caps if c != completion.DEFAULT_CAP}
    runs: dict[str, list[dict]] = {name: [] for name in variants}  # type: ignore[type-arg]
    for r in range(repeats):
        for name, extra in variants.items():
            runs[name].append(run_scan(tree, extra))
            print(f"  repeat {r + 1}, {name}: {runs[name][-1]['wall']:.1f} s", flush=True)
    base = runs["--no-completion"]
    base_wall = statistics.median(x["wall"] for x in base)
    base_peak = statistics.median(x["peak"] for x in base)
    print(
        f"\n{'scan':18s} {'wall s (median; all)':>28s} {'peak MiB (median; all)':>26s} {'x wall':>6s} {'x peak':>6s}"
        f" {'candidates':>10s} {'cand_pairs':>10s} {'compl_checks':>12s} {'compl_pairs':>11s} {'rounds':>6s}"
        f" {'verified':>9s} {'recall':>7s}"
    )
    for name, rs in runs.items():
        wall = statistics.median(x["wall"] for x in rs)
        peak = statistics.median(x["peak"] for x in rs)
        s = rs[0]["stats"]
        recall = len(rs[0]["pairs"] & truth) / max(len(truth), 1)
        print(
            f"{name:18s} {wall:6.1f}; "
            + " ".join(f"{x['wall']:5.1f}" for x in rs).ljust(20)
            + f" {peak / 2**20:5.0f}; "
            + " ".join(f"{x['peak'] / 2**20:4.0f}" for x in rs).ljust(18)
            + f" {wall / base_wall:6.2f} {peak / base_peak:6.2f} "
            + " ".join(f"{s[k]:>{w}d}" for k, w in zip(STATS, (10, 10, 12, 11, 6), strict=True))
            + f" {s['verified_pairs']:9d} {recall:7.4f}"
        )
    print("\nstages (seconds, first repeat) and stderr:")
    for name, rs in runs.items():
        seconds = ", ".join(f"{k} {v:.1f}" for k, v in rs[0]["stats"]["seconds"].items())
        print(f"  {name}: {seconds}; oversize buckets {rs[0]['stats']['oversize_buckets']}")
        for line in sorted({x["stderr"] for x in rs if x["stderr"]}):
            print(f"    stderr: {line}")
        if rs[0]["pairs"] - truth:
            print(f"    REPORTED PAIRS NOT IN THE EXACT SET: {len(rs[0]['pairs'] - truth)}")


# --- the cap, in-process ----------------------------------------------------------------------


def check_cap(corpus, config: Config, caps: list[int], uncapped_rows: int) -> None:  # type: ignore[no-untyped-def]
    """Completion as the scan runs it (:func:`minhashdup.engine.pipeline._complete`'s call) at
    each cap: checks per file against the cap, and the total against ``n * cap / 2``."""
    prep = prepare(corpus, config)
    sigs = rep_signatures(prep, config)
    cand, _ = lsh_candidates(sigs, config)
    t0 = time.perf_counter()
    edges, _, jac = exact.verify(cand, prep.rep_sets, completion.near(config.threshold))
    n = len(prep.reps)
    known = pair_codes(cand, n)
    floor = completion.estimate_floor(config.threshold, config.num_hashes, config.bits)

    def likely(proposed: np.ndarray) -> np.ndarray:
        return signature.pair_estimates(sigs, proposed, config.bits) >= floor

    print(
        f"\nin-process: {n} files, {len(cand)} LSH candidates, {len(edges)} of them at >= "
        f"{completion.near(config.threshold)} (graph edges), {int(np.sum(jac >= config.threshold))} pairs; "
        f"exact check {time.perf_counter() - t0:.1f} s"
    )
    rows = _proposal_rows(edges, jac, n, config.threshold)
    print(
        f"  {'cap':>5s} {'checks':>8s} {'n*cap/2':>9s} {'max/file':>8s} {'holds':>5s} {'pairs':>7s} {'pruned':>8s}"
        f" {'rounds':>6s} {'capped files':>12s} {'at cap':>6s} {'mean/file':>9s} {'seconds':>7s} {'+MiB':>5s}"
    )
    for cap in [*caps, n]:
        if cap == n and rows(n) > uncapped_rows:
            print(f"  {'none':>5s} not run: its first round alone would build {rows(n):,} proposal rows")
            continue
        before = _pss(os.getpid())
        with PeakMemory() as memory:
            start = time.perf_counter()
            done = completion.complete(edges, jac, prep.rep_sets, config.threshold, cap=cap, known=known, likely=likely)
            seconds = time.perf_counter() - start
        per_file = np.bincount(done.checked.ravel(), minlength=n)
        label = "none" if cap == n else str(cap)
        print(
            f"  {label:>5s} {done.checks:8d} {n * cap // 2:9d} {int(per_file.max()):8d} "
            f"{'yes' if per_file.max() <= cap else 'NO':>5s} {len(done.pairs):7d} {done.pruned:8d} {done.rounds:6d}"
            f" {done.capped:12d} {int(np.sum(per_file >= cap)):6d} {per_file.mean():9.1f} {seconds:7.1f}"
            f" {(memory.peak - before) / 2**20:5.0f}"
        )
    uncapped_estimate(edges, jac, cand, sigs, prep.rep_sets, config, rows(n))


def _proposal_rows(edges: np.ndarray, jac: np.ndarray, n: int, threshold: float):  # type: ignore[no-untyped-def]
    """rows(cap): the proposal rows of completion's first round at ``cap``: each middle file in a
    family pairs up its ``cap`` most similar partners, ``sum C(min(d, cap), 2)``."""
    in_family = np.zeros(n, dtype=bool)
    in_family[edges[jac >= threshold].ravel()] = True
    degree = np.bincount(edges.ravel(), minlength=n)[in_family]

    def rows(cap: int) -> int:
        d = np.minimum(degree, cap).astype(np.int64)
        return int(np.sum(d * (d - 1) // 2))

    return rows


def uncapped_estimate(edges, jac, cand, sigs, sets, config: Config, rows: int) -> None:  # type: ignore[no-untyped-def]
    """What completion with no cap would check in its first round, counted with dense n x n
    matrices: the undecided pairs two hops apart through a middle file in a family, less those
    the size bound or the MinHash estimate rule out (the triangle bound is left out: this is an
    upper estimate)."""
    n = len(sets)
    adjacency = np.zeros((n, n), dtype=np.float32)
    adjacency[edges[:, 0], edges[:, 1]] = adjacency[edges[:, 1], edges[:, 0]] = 1
    in_family = np.zeros(n, dtype=bool)
    in_family[edges[jac >= config.threshold].ravel()] = True
    two_hop = (adjacency[:, in_family] @ adjacency[in_family, :]) > 0
    decided = adjacency > 0
    decided[cand[:, 0], cand[:, 1]] = decided[cand[:, 1], cand[:, 0]] = True
    i, j = np.nonzero(np.triu(two_hop & ~decided, k=1))
    proposed = np.stack([i, j], axis=1).astype(np.int64)
    sizes = np.array([len(s) for s in sets])
    floor = completion.estimate_floor(config.threshold, config.num_hashes, config.bits)
    keep = exact.size_bound(sizes[i], sizes[j]) >= config.threshold
    keep[keep] = signature.pair_estimates(sigs, proposed[keep], config.bits) >= floor
    print(
        f"  no cap (estimated): first round {rows:,} proposal rows, {len(proposed):,} distinct undecided "
        f"two-hop pairs, {int(keep.sum()):,} of them past the size bound and the estimate floor {floor:.3f} "
        f"(checks), against {n * (n - 1) // 2 - len(cand):,} pairs LSH did not propose"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="generate the tree here (kept) instead of a temp folder")
    parser.add_argument("--files", type=int, default=2000, help="members of the family")
    parser.add_argument("--lines", type=int, default=120, help="lines of the base file")
    parser.add_argument("--low", type=float, default=0.08, help="least share of statements a member replaces")
    parser.add_argument("--high", type=float, default=0.22, help="most share of statements a member replaces")
    parser.add_argument("--unrelated", type=int, default=200, help="files unlike anything")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated tree")
    parser.add_argument("--caps", default="25,400", help="other completion caps to scan with")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats of the CLI scans")
    parser.add_argument("--jobs", type=int, default=0, help="workers of the in-process collect")
    parser.add_argument(
        "--uncapped-rows",
        type=int,
        default=50_000_000,
        help="run completion with no cap only if its first round has at most this many proposal rows",
    )
    args = parser.parse_args()
    caps = sorted({completion.DEFAULT_CAP, *(int(c) for c in args.caps.split(",") if c)})
    work = args.out or Path(tempfile.mkdtemp(prefix="minhashdup-family-"))
    tree = work.resolve() / "tree"
    try:
        if tree.exists():
            shutil.rmtree(tree)
        make_tree(tree, args.files, args.lines, args.low, args.high, args.unrelated, args.seed)
        config = Config(cache=False, jobs=args.jobs)
        corpus = collect([str(tree)], config)
        keep = comparable(corpus, config.min_shingles)
        family = [k for k, i in enumerate(keep) if "/family/" in corpus.paths[i]]
        sets = [corpus.sets[i] for i in keep]
        print(
            f"tree: {tree}; {len(corpus.paths)} files, shingles per file "
            f"{int(np.median([len(s) for s in sets]))} (median)"
        )
        family_spread(sets, family, config.bands, config.rows, sample=20_000, seed=args.seed)
        t0 = time.perf_counter()
        truth = {
            tuple(sorted((corpus.paths[keep[i]], corpus.paths[keep[j]])))
            for i, j in exact_all_pairs(sets, config.threshold)
        }
        print(
            f"exact all-pairs (sparse product): {len(truth)} pairs at J >= {config.threshold} "
            f"in {time.perf_counter() - t0:.1f} s\n"
        )
        compare_scans(tree, caps, args.repeats, truth)  # type: ignore[arg-type]
        check_cap(corpus, config, caps, args.uncapped_rows)
    finally:
        if args.out is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
