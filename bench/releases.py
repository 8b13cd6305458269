"""Four Go releases side by side (issue 17): each distinct content lexed once per run.

    python bench/releases.py                        # /work/gotree/releases, newest: go-1.27.3
    python bench/releases.py --releases DIR --one DIR/go-1.27.3 --before /tmp/old --rounds 3

Scans, one after the other, cold (``--no-cache``), with ``--include '*.go'``: the newest
release alone, then the folder of all four, then the newest alone again (the four are set
against the mean of the two: the machine's speed drifts). Reported: wall time, peak memory
(PSS of the scan and its workers), files walked, files lexed and copies (``stats.cache``), the
distinct contents among the files walked (digested here), the share of the per-file CPU that
is not lexing; then the ratio of the walls, in each of ``--rounds`` rounds, and their median.
With ``--before DIR``, the same scans by the minhashdup package under DIR too, in the same
rounds (``git archive main minhashdup | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed import measure, not_lexing

from minhashdup.source.walk import walk

RELEASES = Path("/work/gotree/releases")
SCAN = ["--include", "*.go", "--no-cache", "-f", "json", "-q"]


def distinct_contents(root: str) -> tuple[int, int]:
    """Files walked under ``root`` (``*.go``) and how many distinct contents they hold."""
    files = walk([root], include=["*.go"]).files
    digests = {hashlib.blake2b(Path(f.real).read_bytes(), digest_size=16).digest() for f in files}
    return len(files), len(digests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--releases", type=Path, default=RELEASES)
    parser.add_argument("--one", type=Path, default=RELEASES / "go-1.27.3" / "go" / "src", help="one release")
    parser.add_argument("--before", metavar="DIR", help="also the scans by the minhashdup package under DIR")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three scans (median ratio)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds: at least 1")
    every = str(args.releases.resolve())
    one = str(args.one.resolve())
    for root in (one, every):
        walked, distinct = distinct_contents(root)
        print(f"{root}: {walked} files, {distinct} distinct contents")
    versions = [("before", args.before), ("after", None)] if args.before else [("now", None)]
    ratios: dict[str, list[float]] = {label: [] for label, _ in versions}
    walls: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label, _ in versions}
    for turn in range(args.rounds):
        # Each round scans, by each version (their order reversed every other round), one
        # release, then four, then one again: the machine's speed drifts by a fifth or more over
        # minutes, so the four are set against the mean of the scans of one on either side, a
        # ratio taken within a round, and the median of the rounds reported.
        for label, pythonpath in versions if turn % 2 == 0 else versions[::-1]:
            walls_of = []  # one release, four, one again
            for root in (one, every, one):
                wall, peak, out = measure([sys.executable, "-m", "minhashdup", "scan", root, *SCAN], pythonpath)
                stats = json.loads(out)["stats"]
                walls_of.append(wall)
                size = f"{wall:.2f} s, {peak / 2**20:.0f} MiB, {stats['files_walked']} walked"
                print(f"round {turn + 1} {label}: {root}: {size}; {not_lexing(stats)}")
            alone = (walls_of[0] + walls_of[2]) / 2
            ratios[label].append(walls_of[1] / alone)
            walls[label][0].append(alone)
            walls[label][1].append(walls_of[1])
            print(f"round {turn + 1} {label}: four releases / one release (mean of two) = {walls_of[1] / alone:.2f}")
    for label, values in ratios.items():
        rounds = ", ".join(f"{r:.2f}" for r in values)
        median = statistics.median(values)
        print(f"{label}: four releases / one release, median of {len(values)} = {median:.2f} ({rounds})")
        # The one-release scan swings most (4.5-7 s in one run): the medians of each scan's walls
        # are less moved by one slow round than the median of the ratios.
        one_wall, four_wall = (statistics.median(w) for w in walls[label])
        print(f"{label}: median walls {four_wall:.2f} s / {one_wall:.2f} s = {four_wall / one_wall:.2f}")


if __name__ == "__main__":
    main()
