"""The fast lexer engine against pygments, token for token, over a whole tree.

    python bench/lexer_identity.py bench/.data/go/src --include '*.go'
    python bench/lexer_identity.py "$(python -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')" \\
        --include '*.py'

Prints the files whose significant tokens differ (must be 0) and, single process, the
seconds of pygments' own get_tokens over every file (the floor), of pygments plus
minhashdup's comment/whitespace filter, and of the fast engine.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from minhashdup.fastlex import FastLexer, supported
from minhashdup.tokens import NoLexerError, decode, lexer_for, significant_tokens
from minhashdup.walk import walk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--exclude", action="append", default=[])
    args = parser.parse_args()
    files = walk([args.root], include=args.include, exclude=args.exclude, gitignore=False, max_size=1 << 20).files
    items = []
    for entry in files:
        with open(entry.real, "rb") as handle:
            data = handle.read()
        if b"\0" in data:
            continue
        text, _ = decode(data)
        try:
            items.append((entry.path, lexer_for(entry.path, text), text))
        except NoLexerError:
            continue
    floor = timed(lambda: [list(lexer.get_tokens(text)) for _, lexer, text in items])
    filtered = timed(lambda: [list(significant_tokens(lexer, text)) for _, lexer, text in items])
    engines: dict[type, FastLexer | None] = {}
    for _, lexer, _ in items:
        if type(lexer) not in engines:
            engines[type(lexer)] = FastLexer(lexer) if supported(type(lexer)) else None
    fast_start = time.perf_counter()
    fast_out = [
        engine.significant_tokens(text) if (engine := engines[type(lexer)]) else list(significant_tokens(lexer, text))
        for _, lexer, text in items
    ]
    fast = time.perf_counter() - fast_start
    reference = [list(significant_tokens(lexer, text)) for _, lexer, text in items]
    differ = [path for (path, _, _), a, b in zip(items, reference, fast_out, strict=True) if a != b]
    covered = Counter(type(lexer).__name__ for _, lexer, _ in items if engines[type(lexer)] is not None)
    fallback = Counter(type(lexer).__name__ for _, lexer, _ in items if engines[type(lexer)] is None)
    tokens = sum(len(x) for x in reference)
    print(
        f"{len(items)} files, {tokens:,} significant tokens; fast engine for {sum(covered.values())} files "
        f"({dict(covered.most_common(5))}), pygments fallback for {sum(fallback.values())} "
        f"({dict(fallback.most_common(5))})"
    )
    print(f"files whose tokens differ: {len(differ)}" + (f" e.g. {differ[:5]}" if differ else ""))
    print(
        f"single process seconds: pygments get_tokens {floor:.2f}, pygments + filter {filtered:.2f}, "
        f"fast engine {fast:.2f}; speed-up over get_tokens {floor / fast:.2f}x"
    )


def timed(work) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
