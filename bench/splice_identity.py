"""Versions of a tree lexed with tails taken from the version before, against lexing afresh.

    python bench/splice_identity.py /work/gotree/releases/go-{1.21.13,1.24.11,1.26.6,1.27.3}/go/src --include '*.go'
    python bench/splice_identity.py /root/.pyenv/versions/3.{6.15,7.16,8.18,9.18,10.13,11.7,12.1,13.0}/lib/python3.* \\
        --include '*.py' --exclude site-packages

The roots are versions of one tree, oldest first; a file's versions are the files at the same
path under each root. Each version of each file is lexed by the fast engine afresh and taking
the tail it shares with the version before (``FastLexer.significant_tokens_after``, which is
what a scan's batches do), in turn, file by file. Printed: the files whose tokens differ (must
be 0), the versions that had an earlier one, the share of their tokens taken from it, and the
seconds of each way of lexing them.
"""

from __future__ import annotations

import argparse
import os
import time

from minhashdup.source.fastlex.splice import Lexed
from minhashdup.source.tokens import NoLexerError, _fast_for, decode, lexer_for
from minhashdup.source.walk import walk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--exclude", action="append", default=[])
    args = parser.parse_args()
    bases: dict[str, tuple[type, Lexed]] = {}
    differ = versions = taken = tokens = 0
    fresh_s = spliced_s = 0.0
    for root in args.roots:
        files = walk([root], include=args.include or None, exclude=args.exclude or None, gitignore=False).files
        for entry in sorted(files, key=lambda f: f.path):
            with open(entry.real, "rb") as f:
                text, _ = decode(f.read())
            name = os.path.relpath(entry.path, root)
            try:
                lexer = lexer_for(os.path.basename(name), text)
            except NoLexerError:
                continue
            fast = _fast_for(type(lexer))
            if fast is None or fast.behind is None:
                continue
            kept = bases.get(name)
            base = kept[1] if kept is not None and kept[0] is type(lexer) else None
            t0 = time.perf_counter()
            afresh = fast.significant_tokens(text)
            t1 = time.perf_counter()
            spliced, lexed = fast.significant_tokens_after(text, base, True)
            t2 = time.perf_counter()
            assert lexed is not None
            if spliced != afresh:
                differ += 1
                print(f"DIFFERS: {entry.path}")
            if base is not None and base.text != lexed.text:
                versions += 1
                tokens += len(afresh)
                taken += lexed.taken
                fresh_s += t1 - t0
                spliced_s += t2 - t1
            bases[name] = (type(lexer), lexed)
    print(f"files whose tokens differ: {differ}")
    share = taken / max(tokens, 1)
    print(f"versions with an earlier one (and other bytes): {versions}; tokens {tokens}, taken {share:.1%}")
    print(f"lexing them afresh {fresh_s:.2f} s, taking tails {spliced_s:.2f} s ({spliced_s / max(fresh_s, 1e-9):.3f}x)")


if __name__ == "__main__":
    main()
