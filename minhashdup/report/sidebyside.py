"""What the HTML report's side-by-side view needs: the text of each paired file and, per pair,
the line ranges of their shared token runs (as ``minhashdup compare`` finds them).

Each file is read and lexed once, however many pairs it is in. Texts are embedded up to a
budget of characters; a file over it, or one that no longer reads, is shown without its text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from minhashdup.compare import Lexed, lex_text, read_source, shared_runs
from minhashdup.errors import InputPathError

#: Most characters of source embedded in one report.
MAX_SOURCE_CHARS = 48 * 1024 * 1024
#: Most runs listed per pair (longest first).
MAX_RUNS = 200


@dataclasses.dataclass
class SideBySide:
    """``texts[file index]`` and ``runs[pair index]`` as ``[a_first, a_last, b_first, b_last, tokens]``."""

    texts: dict[int, str]
    runs: dict[int, list[list[int]]]
    left_out: int  # paired files whose text is not embedded


def side_by_side(
    files: Sequence[str], pairs: Sequence[tuple[int, int]], shingle: int, budget: int = MAX_SOURCE_CHARS
) -> SideBySide:
    """Texts and shared runs for ``pairs`` of indices into ``files`` (paths as scanned)."""
    wanted = sorted({i for pair in pairs for i in pair})
    texts: dict[int, str] = {}
    lexed: dict[int, Lexed] = {}
    left_out = 0
    for i in wanted:
        try:
            text = read_source(files[i])  # read once: for the page and for the runs
            lexed[i] = lex_text(files[i], text, shingle)
        except InputPathError:
            left_out += 1
            continue
        if len(text) > budget:
            left_out += 1
            continue
        budget -= len(text)
        texts[i] = text
    runs: dict[int, list[list[int]]] = {}
    for k, (a, b) in enumerate(pairs):
        if a in lexed and b in lexed:
            found = shared_runs(lexed[a], lexed[b], shingle, limit=MAX_RUNS)
            runs[k] = [[*r.a_lines, *r.b_lines, r.tokens] for r in found]
    return SideBySide(texts, runs, left_out)
