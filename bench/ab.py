"""Two or more versions of minhashdup, interleaved on one tree: the A/B that a noisy machine needs.

    git archive 5806f57 minhashdup | tar -x -C /tmp/old
    python bench/ab.py cold /tmp/old now --rounds 6          # cold scans (--no-cache)
    python bench/ab.py warm /tmp/old now --rounds 10         # warm scans, each version its own cache

Each version is a folder holding a ``minhashdup`` package (imported through PYTHONPATH), or
``now`` for the one installed. The scans alternate, the order reversed every round, so that a
busy spell of a shared machine falls on both; reported: per round, the wall time (and for cold
scans the per-file CPU of ``stats.cpu_seconds``), then the medians and each version's ratios to
the first, round by round. Same scan as bench/speed.py: the Go tree's non-test ``*.go``, 12 x 4.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from go_tree import fetch_go_src
from speed import SCAN, byte_compile, measure


def run(version: str, command: list[str]) -> tuple[float, dict[str, float]]:
    """Wall seconds and ``stats.cpu_seconds`` of one scan by ``version``."""
    wall, _, out = measure(command, None if version == "now" else version)
    cpu: dict[str, float] = json.loads(out)["stats"].get("cpu_seconds", {})
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["cold", "warm"])
    parser.add_argument("versions", nargs="+", help="folders holding a minhashdup package, or 'now'")
    parser.add_argument("--go-src", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    if len(args.versions) < 2:
        parser.error("name at least two versions")
    root = str((args.go_src or fetch_go_src()).resolve())
    import minhashdup

    for version in args.versions:
        byte_compile(str(Path(minhashdup.__file__).parent) if version == "now" else version)
    scan = [sys.executable, "-m", "minhashdup", "scan", root, *SCAN]
    caches = {v: tempfile.mkdtemp(prefix="minhashdup-ab-") for v in args.versions}
    flags = {v: ["--no-cache"] if args.kind == "cold" else ["--cache-dir", caches[v]] for v in args.versions}
    try:
        if args.kind == "warm":
            for version in args.versions:  # fill each version's cache
                run(version, scan + flags[version])
        walls: dict[str, list[float]] = {v: [] for v in args.versions}
        cpus: dict[str, list[float]] = {v: [] for v in args.versions}
        for number in range(args.rounds):
            for version in args.versions if number % 2 == 0 else args.versions[::-1]:
                wall, cpu = run(version, scan + flags[version])
                walls[version].append(wall)
                cpus[version].append(sum(cpu.values()))
                parts = ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
                print(f"round {number}: {version}: {wall:.2f} s" + (f" (per-file CPU: {parts})" if parts else ""))
    finally:
        for folder in caches.values():
            shutil.rmtree(folder, ignore_errors=True)
    first = args.versions[0]
    for version in args.versions:
        line = f"{version}: median wall {statistics.median(walls[version]):.3f} s"
        if args.kind == "cold":
            line += f", median per-file CPU {statistics.median(cpus[version]):.2f} s"
        print(line)
    for version in args.versions[1:]:
        ratios = [f"{a / b:.3f}" for a, b in zip(walls[version], walls[first], strict=True)]
        median = statistics.median(walls[version]) / statistics.median(walls[first])
        print(f"{version} / {first}: wall by round {', '.join(ratios)}; medians {median:.3f}")


if __name__ == "__main__":
    main()
