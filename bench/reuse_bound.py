"""What reusing an earlier version's lex could save on four Go releases (issue 17's 2.3x).

    python bench/reuse_bound.py                      # /work/gotree/releases and its go-1.27.3
    python bench/reuse_bound.py --releases DIR --one DIR/go-1.27.3/go/src --rounds 4

Over the distinct contents of every ``*.go`` file, in the scan's order (by file name and folder,
then path: each version after the one before it, :func:`minhashdup.source.fastlex.versions.family`):

1. characters: all of them, what the tail splice leaves to lex (a version less the tail it shares
   with the one before), and what taking the common prefix too would leave (a bound: no sound
   method reaches it), and how much of that prefix lies before the earlier version's first string
   literal, block comment or run of blank lines (where a sound prefix reuse would have to stop,
   as those tokens' match attempts may read past the prefix);
   and what taking every stretch between differences would leave (a line diff, ``difflib``: each
   difference costs its new lines, the line before, and 300 characters to find a mark again,
   which lie 256 apart; another bound: no cheap sound check of read extents is known, see
   bench/HISTORY.md; the diff takes about two minutes);
2. the lexing time of the versions with an earlier one, in one process, whole against with the
   tail taken (the fast engine, ``significant_tokens_after``), alternated ``--rounds`` times.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import hashlib
import re
import time
from pathlib import Path

from pygments.lexers.go import GoLexer

from minhashdup.source.fastlex import FastLexer
from minhashdup.source.fastlex.splice import Lexed, shared_tail
from minhashdup.source.fastlex.versions import family
from minhashdup.source.walk import walk

RELEASES = Path("/work/gotree/releases")
#: What a sound prefix reuse could not pass on Go: a string, a raw string, a block comment, or
#: whitespace over a line end (its match attempts may read any distance ahead).
_OPEN = re.compile(r'["`]|/\*|\n[ \t]*\n|[ \t]+\n')


def versions(root: str) -> list[tuple[str, str]]:
    """The distinct contents of ``root``'s ``*.go`` files in the scan's order, with their family."""
    files = walk([root], include=["*.go"]).files
    seen: set[bytes] = set()
    out = []
    for key, _, real in sorted((family(f.path), f.path, f.real) for f in files):
        data = Path(real).read_bytes()
        digest = hashlib.blake2b(data, digest_size=16).digest()
        if digest not in seen:
            seen.add(digest)
            out.append((key, data.decode("utf-8", "replace")))
    return out


#: Characters a stretch taken between two differences is assumed to lose to find a mark again.
RESYNC = 300


def between(base: str, text: str) -> int:
    """Characters of ``text`` left to lex if every stretch it shares with ``base`` between their
    differences (a line diff) were taken from ``base``'s lex (:data:`RESYNC` lost per difference)."""
    old, new = base.splitlines(True), text.splitlines(True)
    left = 0
    for tag, _, _, start, end in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            left += sum(len(line) for line in new[max(0, start - 1) : end]) + RESYNC
    return min(left, len(text))


def characters(texts: list[tuple[str, str]]) -> tuple[int, int, int, int, int, int]:
    """All characters, those the tail splice lexes, those a head-and-tail reuse would, the
    common prefixes, the part of them before the earlier version's first open token, and those
    a reuse of every stretch between differences would lex (:func:`between`)."""
    total = tail = both = head = sound = middle = 0
    last: dict[str, str] = {}
    for key, text in texts:
        total += len(text)
        base = last.get(key)
        last[key] = text
        if base is None:
            tail += len(text)
            both += len(text)
            middle += len(text)
            continue
        middle += between(base, text)
        rest = len(text) - shared_tail(text, base)
        prefix = min(shared_tail(text[::-1], base[::-1]), rest)  # the common prefix
        opened = _OPEN.search(base)
        tail += rest
        both += rest - prefix
        head += prefix
        sound += min(prefix, opened.start() if opened else prefix)
    return total, tail, both, head, sound, middle


def lex_times(texts: list[tuple[str, str]], rounds: int) -> None:
    """Lex the versions with an earlier one whole, and with the tail taken, alternated."""
    fast = FastLexer(GoLexer(stripnl=False, ensurenl=True))
    bases: dict[str, Lexed | None] = {}
    pairs = []
    for key, text in texts:
        _, lexed = fast.significant_tokens_after(text, None, True)
        if key in bases:
            pairs.append((text, bases[key]))
        bases[key] = lexed
    print(f"{len(pairs)} versions with an earlier one, {sum(len(t) for t, _ in pairs) / 1e6:.1f} M characters")
    gc.disable()
    for turn in range(rounds):
        for taken in (False, True) if turn % 2 == 0 else (True, False):
            start, tokens = time.process_time(), 0
            for text, base in pairs:
                if taken:
                    lexed = fast.significant_tokens_after(text, base, True)[1]
                    tokens += lexed.taken if lexed is not None else 0
                else:
                    fast.significant_tokens(text)
            label = f"tail taken ({tokens} tokens)" if taken else "whole"
            print(f"round {turn + 1}: {label}: {time.process_time() - start:.2f} s CPU")
    gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--releases", type=Path, default=RELEASES)
    parser.add_argument("--one", type=Path, default=RELEASES / "go-1.27.3" / "go" / "src")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    one = sum(len(t) for _, t in versions(str(args.one)))
    texts = versions(str(args.releases))
    total, tail, both, head, sound, middle = characters(texts)
    print(f"one release: {one / 1e6:.1f} M characters of distinct contents")
    print(f"four: {total / 1e6:.1f} M ({total / one:.2f}x); tail splice lexes {tail / 1e6:.1f} M ({tail / one:.2f}x)")
    print(f"head and tail (a bound): {both / 1e6:.1f} M ({both / one:.2f}x)")
    print(f"common prefixes {head / 1e6:.1f} M, of which before the first open token {sound / 1e6:.1f} M")
    print(f"every stretch between differences (a bound): {middle / 1e6:.1f} M ({middle / one:.2f}x)")
    lex_times(texts, args.rounds)


if __name__ == "__main__":
    main()
