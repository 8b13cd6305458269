"""What building SARIF with sarif-pydantic's models would cost, against today's dicts.

Measures, for a log of N pair results (each with its regions): the time and the peak memory
(tracemalloc) to write it as ``render_sarif`` does today, and to build the same log as
sarif-pydantic models and dump it; whether the two outputs are the same bytes and the same JSON;
the import time of ``sarif_pydantic`` (pydantic included) in a fresh interpreter; and the
installed size of the packages a runtime dependency on it would add.

    python bench/sarif_models.py [N]        # N defaults to 2000
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from minhashdup.analysis.compare import Run
from minhashdup.analysis.regions import Project
from minhashdup.report.sarif import render_sarif
from minhashdup.result import Pair, Result, Stats

#: What a runtime dependency on sarif-pydantic brings that minhashdup does not already need.
ADDED = ["sarif-pydantic", "pydantic", "pydantic-core", "annotated-types", "typing-inspection", "typing-extensions"]


def synthetic(n: int) -> tuple[Result, Project, list[Run | None]]:
    pairs = [Pair(f"src/p{i:05d}/a.go", f"src/p{i:05d}/b.go", 1 - i / (2 * n), 0.5, 100, 100, 60) for i in range(n)]
    result = Result({"threshold": 0.5, "shingle": 5}, Stats(), pairs, [])
    project = Project.of("/repo", {path: f"/repo/{path}" for p in pairs for path in (p.a, p.b)})
    regions: list[Run | None] = [Run((3 + i % 40, 30 + i % 40), (5, 32), 120) for i in range(n)]
    return result, project, regions


def today(result: Result, project: Project, regions: list[Run | None]) -> str:
    stream = io.StringIO()
    render_sarif(result, stream, project=project, regions=regions)
    return stream.getvalue()


def with_models(result: Result, project: Project, regions: list[Run | None]) -> str:
    """The same log as models: validated from today's document (what building them field by
    field would check too), dumped by pydantic."""
    from sarif_pydantic import Sarif

    log = Sarif.model_validate(json.loads(today(result, project, regions)))
    return log.model_dump_json(by_alias=True, exclude_none=True, indent=1)


def models_only(result: Result, project: Project, regions: list[Run | None], doc: dict[str, Any]) -> str:
    """Validation and dump alone: the cost the models add on top of building the dicts."""
    from sarif_pydantic import Sarif

    return Sarif.model_validate(doc).model_dump_json(by_alias=True, exclude_none=True, indent=1)


def measure(work: Callable[[], object], repeats: int = 5) -> tuple[float, float]:
    """Median seconds over ``repeats`` runs, and the peak traced memory of one run in MB."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        work()
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    work()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return statistics.median(times), peak / 1e6


def import_seconds(module: str, before: str = "pass", repeats: int = 9) -> float:
    """Median wall time of ``python -c 'before; import module'`` minus that of ``before`` alone."""

    def run(code: str) -> float:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - t0

    bare = statistics.median(run(before) for _ in range(repeats))
    return statistics.median(run(f"{before}; import {module}") for _ in range(repeats)) - bare


def installed_mb(names: list[str]) -> dict[str, float]:
    sizes = {}
    for name in names:
        try:
            files = importlib.metadata.distribution(name).files or []
        except importlib.metadata.PackageNotFoundError:
            continue
        sizes[name] = sum((f.size or 0) for f in files) / 1e6
    return sizes


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    inputs = synthetic(n)
    ours, theirs = today(*inputs), with_models(*inputs)
    doc = json.loads(ours)
    print(f"{n} results: today {len(ours.encode()) / 1e6:.2f} MB, models {len(theirs.encode()) / 1e6:.2f} MB")
    print(f"same bytes: {ours == theirs}; same JSON: {json.loads(theirs) == doc}")
    for label, work in (
        ("today (dicts, json.dumps)", lambda: today(*inputs)),
        ("models (validate + dump)", lambda: with_models(*inputs)),
        ("  of which the models", lambda: models_only(*inputs, doc)),
    ):
        seconds, peak = measure(work)
        print(f"{label:28} {seconds * 1000:8.1f} ms  peak {peak:6.1f} MB")
    print(f"import minhashdup.report.sarif: {import_seconds('minhashdup.report.sarif') * 1000:.0f} ms")
    print(f"import sarif_pydantic (pydantic): {import_seconds('sarif_pydantic') * 1000:.0f} ms")
    after = import_seconds("sarif_pydantic", "import minhashdup.report.sarif")
    print(f"  ... after minhashdup.report.sarif: {after * 1000:.0f} ms more")
    sizes = installed_mb(ADDED)
    print(f"installed: {sum(sizes.values()):.1f} MB", {k: round(v, 2) for k, v in sizes.items()})


if __name__ == "__main__":
    main()
