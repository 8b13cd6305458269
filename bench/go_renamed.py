"""The Go tree with ``--ignore-identifiers`` and ``--ignore-literals`` (issue 15): how many more
pairs, and a fixed random sample of the new ones to read, run by hand:

    python bench/go_renamed.py --go-src /path/go/src            # scans, then counts and samples
    python bench/go_renamed.py --go-src /path/go/src --reuse     # the scans' JSON of a former run

Scans ``*.go`` without ``*_test.go`` and ``testdata`` (as bench/go_tree.py), without flags, with
``--ignore-identifiers``, and with both flags; then the same with ``--include-generated`` (the
older Go figures, 2,410 pairs, were counted before generated files were skipped by default). A
pair is new when the flagged scan lists it and the plain scan of the same files does not. For
each flag set, ``--sample`` new pairs drawn with ``--seed`` are printed with their normalised and
verbatim Jaccard, to be opened with ``minhashdup compare A B --ignore-identifiers`` and judged by
reading (a renamed copy, one template or pattern, or a false likeness): the verdicts are in the
README, not here.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import minhashdup

FLAG_SETS = {
    "plain": [],
    "identifiers": ["--ignore-identifiers"],
    "identifiers+literals": ["--ignore-identifiers", "--ignore-literals"],
}
Pair = frozenset[str]
THRESHOLD = 0.5  # the scans' default
MIN_SHINGLES = 20


def scan(root: Path, flags: list[str], out: Path, cache: Path, reuse: bool) -> tuple[dict[Pair, dict], str]:
    """The pairs of one scan of ``root`` with ``flags`` (by file pair, paths relative to ``root``)
    and a line of its figures; the JSON is kept in ``out`` (read back with ``reuse``)."""
    took = "reused"
    if not (reuse and out.is_file()):
        command = [sys.executable, "-m", "minhashdup", "scan", str(root), "--include", "*.go"]
        command += ["--exclude", "*_test.go", "--exclude", "testdata", "-f", "json", "-q"]
        command += ["--cache-dir", str(cache), *flags]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        took = f"{time.perf_counter() - start:.1f} s"
        if done.returncode not in (0, 1):
            sys.exit(f"scan {' '.join(flags)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
        out.write_text(done.stdout)
    report = json.loads(out.read_text())
    pairs = {frozenset(_rel(p[end], root) for end in "ab"): p for p in report["pairs"]}
    stats = report["stats"]
    line = f"{len(pairs)} pairs, {stats['files_compared']} files compared, {took}"
    return pairs, line


def _rel(path: str, root: Path) -> str:
    return str(Path(path).relative_to(root))


def why_lost(lost: set[Pair], root: Path, flags: list[str]) -> str:
    """Why pairs of the plain scan are not in the flagged one, by ``minhashdup.compare`` with the flags."""
    options = {flag.removeprefix("--").replace("-", "_"): True for flag in flags}
    reasons: collections.Counter[str] = collections.Counter()
    for pair in lost:
        a, b = (root / name for name in sorted(pair))
        compared = minhashdup.compare(a, b, **options)
        if min(compared.shingles_a, compared.shingles_b) < MIN_SHINGLES:
            reasons[f"a file under {MIN_SHINGLES} shingles"] += 1
        elif compared.jaccard < THRESHOLD:
            reasons[f"J under {THRESHOLD}"] += 1
        else:
            reasons["missed by LSH"] += 1
    return ", ".join(f"{why} {count}" for why, count in reasons.most_common())


def describe(label: str, pairs: dict[Pair, dict], plain: dict[Pair, dict], root: Path, sample: int, seed: int) -> None:
    """How many pairs are new (and lost) against the plain scan, and a sample of the new ones."""
    new, lost = set(pairs) - set(plain), set(plain) - set(pairs)
    print(f"  {label}: {len(new)} new pairs, {len(lost)} pairs of the plain scan not listed")
    if lost:
        print(f"    why those are not listed: {why_lost(lost, root, FLAG_SETS[label])}")
    if not new:
        return
    verbatim = [pairs[p].get("jaccard_verbatim", 0.0) for p in new]
    same_dir = sum(len({str(Path(name).parent) for name in p}) == 1 for p in new)
    missed = sum(v >= THRESHOLD for v in verbatim)
    print(f"    new pairs in one directory: {same_dir}; median verbatim J {statistics.median(verbatim):.3f}")
    print(f"    new pairs with verbatim J >= {THRESHOLD} (the plain scan's LSH missed them): {missed}")
    drawn = random.Random(seed).sample(sorted(sorted(p) for p in new), min(sample, len(new)))
    for number, (a, b) in enumerate(drawn, 1):
        p = pairs[frozenset((a, b))]
        print(f"    {number:2}. J {p['jaccard']:.3f}  verbatim {p.get('jaccard_verbatim', 0.0):.3f}  {a}  {b}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--go-src", type=Path, required=True, help="a Go tree's src folder")
    parser.add_argument("--out", type=Path, default=Path("/tmp/go_renamed"), help="where the scans' JSON go")
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/go_renamed/cache"))
    parser.add_argument("--reuse", action="store_true", help="read the scans' JSON of a former run")
    parser.add_argument("--sample", type=int, default=20, help="new pairs to draw per flag set")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    root = args.go_src.resolve()
    for generated in ([], ["--include-generated"]):
        print("\n" + ("with --include-generated" if generated else "generated files skipped (the default)"))
        results = {}
        for label, flags in FLAG_SETS.items():
            name = label + ("-generated" if generated else "") + ".json"
            results[label], line = scan(root, [*generated, *flags], args.out / name, args.cache_dir, args.reuse)
            print(f"  {label:<22} {line}")
        for label in list(FLAG_SETS)[1:]:
            sample = args.sample if not generated else 0
            describe(label, results[label], results["plain"], root, sample, args.seed)


if __name__ == "__main__":
    main()
