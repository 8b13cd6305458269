"""The fast lexer engine against pygments, token for token, over a whole tree.

    python bench/lexer_identity.py bench/.data/go/src --include '*.go' --exclude '*_test.go' --exclude testdata
    python bench/lexer_identity.py "$(python -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')" \\
        --include '*.py' --exclude site-packages

Prints the files whose significant tokens differ (must be 0) and, single process, the
seconds of pygments' own get_tokens over every file (the floor), of pygments plus
minhashdup's comment/whitespace filter, of the fast engine, and of the fast engine's loop
token by token (its root state not lexed in one call, ``fastlex.bulk``): the four run file by
file in turn (a shared machine's busy spells then slow all alike), for --rounds passes, and
the significant tokens per second. With --typed it also compares each token's type and
line (what normalisation and the side-by-side views use), in one more pass, not timed.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from typing import Any

from minhashdup.source.fastlex import FastLexer, supported
from minhashdup.source.kinds import Kinds
from minhashdup.source.significant import significant_tokens, significant_typed_tokens
from minhashdup.source.tokens import NoLexerError, decode, lexer_for
from minhashdup.source.walk import walk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=3, help="passes over the tree; the median is reported")
    parser.add_argument(
        "--typed", action="store_true", help="also compare each token's type and line (one more pass, not timed)"
    )
    args = parser.parse_args()
    kinds = Kinds(include_generated=True)  # every file, generated ones too
    files = walk(
        [args.root], include=args.include, exclude=args.exclude, gitignore=False, max_size=1 << 20, kinds=kinds
    ).files
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
    engines: dict[type, FastLexer | None] = {}
    loops: dict[type, FastLexer | None] = {}  # the same, token by token
    for _, lexer, _ in items:
        if type(lexer) not in engines:
            engines[type(lexer)] = FastLexer(lexer) if supported(type(lexer)) else None
            loops[type(lexer)] = FastLexer(lexer) if supported(type(lexer)) else None
            if loops[type(lexer)] is not None:
                loops[type(lexer)].states.whole = (None,)  # looked for, none
    rounds = []
    for _ in range(args.rounds):
        seconds, differ, tokens = interleaved(items, engines, loops)
        rounds.append(seconds)
    floor, filtered, fast, loop = (statistics.median(r[k] for r in rounds) for k in range(4))
    whole = sum(1 for _, lexer, _ in items if (engine := engines[type(lexer)]) and (engine.states.whole or (None,))[0])
    covered = Counter(type(lexer).__name__ for _, lexer, _ in items if engines[type(lexer)] is not None)
    fallback = Counter(type(lexer).__name__ for _, lexer, _ in items if engines[type(lexer)] is None)
    print(
        f"{len(items)} files, {tokens:,} significant tokens; fast engine for {sum(covered.values())} files "
        f"({dict(covered.most_common(5))}), pygments fallback for {sum(fallback.values())} "
        f"({dict(fallback.most_common(5))}); {whole} files lexed in one call from the root state"
    )
    print(f"files whose tokens differ: {len(differ)}" + (f" e.g. {differ[:5]}" if differ else ""))
    print(
        f"single process seconds (median of {args.rounds} rounds, engines interleaved file by file): pygments "
        f"get_tokens {floor:.2f}, pygments + filter {filtered:.2f}, fast engine {fast:.2f}, its loop token by "
        f"token {loop:.2f}; speed-up over get_tokens {floor / fast:.2f}x (rounds: "
        f"{', '.join(f'{r[0] / r[2]:.2f}x' for r in rounds)}), over the loop {loop / fast:.2f}x"
    )
    if args.typed:
        typed = typed_differ(items, engines)
        print(f"files whose token types or lines differ: {len(typed)}" + (f" e.g. {typed[:5]}" if typed else ""))
    print(
        f"significant tokens per second: pygments + filter {tokens / filtered:,.0f}, fast engine "
        f"{tokens / fast:,.0f} ({fast / tokens * 1e6:.2f} us per token)"
    )


def interleaved(
    items: list[tuple[str, Any, str]], engines: dict[type, FastLexer | None], loops: dict[type, FastLexer | None]
) -> tuple[tuple[float, float, float, float], list[str], int]:
    """Each file through the four engines in turn, so that a busy spell of a shared machine
    slows all alike. Outputs are compared at once and not kept: a growing heap would
    make the garbage collector slow down the engine that allocates most (pygments' tuples).

    Returns:
        Seconds of (get_tokens, get_tokens + filter, fast engine, its loop token by token), the
        files whose tokens differ (by either), and the number of significant tokens.
    """
    clock = time.perf_counter
    floor = filtered = fast = loop = 0.0
    differ, tokens = [], 0
    for path, lexer, text in items:
        engine = engines[type(lexer)]
        t0 = clock()
        list(lexer.get_tokens(text))
        t1 = clock()
        reference = list(significant_tokens(lexer, text))
        t2 = clock()
        mine = engine.significant_tokens(text) if engine else list(significant_tokens(lexer, text))
        t3 = clock()
        slow = loops[type(lexer)]
        token_by_token = slow.significant_tokens(text) if slow else list(significant_tokens(lexer, text))
        t4 = clock()
        floor, filtered, fast, loop = floor + t1 - t0, filtered + t2 - t1, fast + t3 - t2, loop + t4 - t3
        tokens += len(reference)
        if mine != reference or token_by_token != reference:
            differ.append(path)
    return (floor, filtered, fast, loop), differ, tokens


def typed_differ(items: list[tuple[str, Any, str]], engines: dict[type, FastLexer | None]) -> list[str]:
    """The files whose tokens, with their types and lines, differ between the engines."""
    differ = []
    for path, lexer, text in items:
        engine = engines[type(lexer)]
        if engine is None:
            continue
        typed = list(significant_typed_tokens(lexer, text))
        want = ([v for _, v, _ in typed], [n for _, _, n in typed], [t for t, _, _ in typed])
        if engine.significant_tokens_with_lines_and_types(text) != want:
            differ.append(path)
    return differ


if __name__ == "__main__":
    main()
