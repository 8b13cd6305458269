"""The fast engine against itself at an earlier commit, file by file, over a whole tree.

    python bench/lexer_ab.py /work/gotree/go/src --include '*.go' --exclude '*_test.go' --exclude testdata
    python bench/lexer_ab.py "$(python -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')" \\
        --include '*.py' --exclude site-packages

The earlier engine is the one at ``--before``, loaded beside the installed one: the module
``minhashdup/source/fastlex.py`` of a commit where the engine was that one module (e.g.
25514f2), or the ``fastlex`` package of a copy of the package at a later commit. Each
file goes through both in turn, for --rounds passes, timed by the thread's CPU clock: on a
shared machine, time spent waiting for a core does not count, and a busy spell slows both
alike. Prints the files whose tokens differ (must be 0), the CPU seconds of each, their
ratio, and tokens per second.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import io
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from minhashdup.source.fastlex import FastLexer, supported
from minhashdup.source.kinds import Kinds
from minhashdup.source.tokens import NoLexerError, decode, lexer_for
from minhashdup.source.walk import walk


def earlier_engine(commit: str) -> Any:
    """The fast engine module as it was at ``commit``, imported under another name: the one
    module ``minhashdup/source/fastlex.py`` of early commits, or the ``fastlex`` package of a
    copy of the whole package at ``commit`` renamed ``minhashdup_before``."""
    repo = Path(__file__).resolve().parent.parent
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", commit, "minhashdup/source/"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    if "minhashdup/source/fastlex.py" not in listed:
        return _renamed_package(repo, commit)
    source = subprocess.run(
        ["git", "show", f"{commit}:minhashdup/source/fastlex.py"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "fastlex_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("fastlex_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fastlex_before"] = module
    spec.loader.exec_module(module)
    return module


def _renamed_package(repo: Path, commit: str) -> Any:
    """``minhashdup.source.fastlex`` from the package at ``commit``, as ``minhashdup_before``."""
    archive = subprocess.run(["git", "archive", commit, "minhashdup"], cwd=repo, check=True, capture_output=True).stdout
    root = Path(tempfile.mkdtemp())
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.12, and 3.10-3.11 updates
            tar.extractall(root, filter="data")
        else:
            tar.extractall(root)
    package = (root / "minhashdup").rename(root / "minhashdup_before")
    for module in package.rglob("*.py"):
        text = module.read_text(encoding="utf-8")
        module.write_text(
            re.sub(r"(?m)^(\s*)(from|import) minhashdup\b", r"\1\2 minhashdup_before", text), encoding="utf-8"
        )
    sys.path.insert(0, str(root))
    return importlib.import_module("minhashdup_before.source.fastlex")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--before", default="25514f2", help="the commit whose engine to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the tree; the median is reported")
    args = parser.parse_args()
    before = earlier_engine(args.before)
    files = walk(
        [args.root],
        include=args.include,
        exclude=args.exclude,
        gitignore=False,
        max_size=1 << 20,
        kinds=Kinds(include_generated=True),
    ).files
    pairs: dict[type, tuple[Any, FastLexer]] = {}
    items = []
    for entry in files:
        data = Path(entry.real).read_bytes()
        if b"\0" in data:
            continue
        text, _ = decode(data)
        try:
            lexer = lexer_for(entry.path, text)
        except NoLexerError:
            continue
        if supported(type(lexer)):
            if type(lexer) not in pairs:
                pairs[type(lexer)] = (before.FastLexer(lexer), FastLexer(lexer))
            items.append((entry.path, pairs[type(lexer)], text))
    rounds = [interleaved(items) for _ in range(args.rounds)]
    old, new = (statistics.median(r[k] for r in rounds) for k in range(2))
    differ, tokens = rounds[0][2], rounds[0][3]
    print(f"{len(items)} files, {tokens:,} significant tokens; files whose tokens differ: {len(differ)} {differ[:5]}")
    print(
        f"CPU seconds (median of {args.rounds} rounds, interleaved file by file): engine at {args.before} "
        f"{old:.2f}, now {new:.2f}; speed-up {old / new:.2f}x (rounds: "
        f"{', '.join(f'{r[0] / r[1]:.2f}x' for r in rounds)}); tokens per second {tokens / old:,.0f} -> "
        f"{tokens / new:,.0f}"
    )


def interleaved(items: list[tuple[str, tuple[Any, FastLexer], str]]) -> tuple[float, float, list[str], int]:
    """Each file through the earlier engine, then the current one: CPU seconds of each, the
    files whose tokens differ, and the number of tokens."""
    clock = time.thread_time
    old = new = 0.0
    differ, tokens = [], 0
    for path, (earlier, current), text in items:
        t0 = clock()
        a = earlier.significant_tokens(text)
        t1 = clock()
        b = current.significant_tokens(text)
        t2 = clock()
        old, new, tokens = old + t1 - t0, new + t2 - t1, tokens + len(b)
        if a != b:
            differ.append(path)
    return old, new, differ, tokens


if __name__ == "__main__":
    main()
