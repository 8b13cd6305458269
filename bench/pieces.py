"""Texts lexed in one call, lexed in pieces (issue 17): the same tokens, and the lexing CPU of each way.

    python bench/pieces.py ROOT [--include '*.go'] [--rounds 2]

Walks ROOT, makes the scan's batches (files of one size and the versions of a file together:
``engine.workers._batches``) and, batch by batch, in the scan's order, lexes every distinct
content whose lexer takes a text in one call (:mod:`minhashdup.source.fastlex.bulk`) the two
ways, one after the other for each file: in one call, and as a scan lexes it
(``tokens.token_texts`` with the batch's ``Versions``: in pieces where the file's family has
another file in the batch, :mod:`minhashdup.source.fastlex.pieces`). Reports the files whose
tokens differ (there must be none), the CPU seconds of each way and their ratio, and how many
files were lexed in pieces. Generated files are left out, as a scan leaves them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from minhashdup.core.digest import content_digest
from minhashdup.engine.workers import Recipe, _batches
from minhashdup.source.fastlex.versions import Versions
from minhashdup.source.kinds import generated_marker
from minhashdup.source.tokens import _fast, decode, lexer_for, token_texts
from minhashdup.source.walk import walk


def texts_by_batch(root: str, include: list[str]) -> list[list[tuple[str, str, str | None, int]]]:
    """Per batch of a scan of ``root``, in its order: each file (path walked, path read, size in
    bytes) and its text where the scan lexes it (``None``: a copy of one before, or generated)."""
    files = walk([root], include=include).files
    seen: set[bytes] = set()
    out = []
    for items, _, _ in _batches(files, Recipe(5), 2):
        batch: list[tuple[str, str, str | None, int]] = []
        for item in items:
            data = Path(item.real).read_bytes()
            digest = content_digest(data)
            text = None if digest in seen or b"\0" in data else decode(data)[0]
            seen.add(digest)
            batch.append((item.path, item.real, None if text is None or generated_marker(text) else text, len(data)))
        out.append(batch)
    return out


def one_round(batches: list[list[tuple[str, str, str | None, int]]]) -> tuple[float, float, int, int, int]:
    """CPU seconds in one call and in pieces, files lexed, files in pieces, files differing."""
    whole = pieces = 0.0
    lexed = cut = differ = 0
    for batch in batches:
        versions = Versions([(path, real, size) for path, real, _, size in batch])  # as a scan's batch
        for path, real, text, _ in batch:
            lexer = None if text is None else lexer_for(Path(path).name, text)
            fast = None if lexer is None else _fast(lexer)
            if text is None or fast is None or not fast.one_call:
                versions.passed(real)
                continue
            t0 = time.process_time()
            one = fast.significant_tokens(text)
            t1 = time.process_time()
            many = token_texts(lexer, text, "fast", versions, real)
            t2 = time.process_time()
            cut += versions.cut is not None
            versions.passed(real)
            whole, pieces = whole + t1 - t0, pieces + t2 - t1
            lexed += 1
            differ += one != many
            if one != many:
                print(f"differs: {path}", file=sys.stderr)
    return whole, pieces, lexed, cut, differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("--include", action="append", default=None)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    batches = texts_by_batch(args.root, args.include or ["*.go"])
    lexed = sum(text is not None for batch in batches for _, _, text, _ in batch)
    print(f"{args.root}: {lexed} distinct contents lexed, in {len(batches)} batches")
    for turn in range(args.rounds):
        whole, pieces, lexed, cut, differ = one_round(batches)
        print(
            f"round {turn + 1}: {lexed} lexed ({cut} in pieces), {differ} differ; "
            f"CPU in one call {whole:.2f} s, in pieces {pieces:.2f} s: {pieces / whole:.3f}x"
        )


if __name__ == "__main__":
    main()
