"""Where paired files coincide, as ``minhashdup compare`` finds it: for the HTML report's
side-by-side view, the text of each paired file and each pair's shared token runs; for SARIF,
each pair's longest run.

Pairs are split into families (connected components): a family's files are read and lexed
once, by one task, in worker processes when there are enough pairs to pay for starting them.
Texts are embedded up to a budget of characters; a file over it, or one that no longer reads,
is shown without its text.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool

from minhashdup.analysis.compare import Lexed, Run, lex_text, read_source, shared_runs
from minhashdup.core.cluster import components
from minhashdup.engine.parallel import pool_size, process_pool
from minhashdup.errors import InputPathError

#: Most characters of source embedded in one report.
MAX_SOURCE_CHARS = 48 * 1024 * 1024
#: Most runs listed per pair (longest first).
MAX_RUNS = 200
#: Fewer pairs than this are done in this process: starting workers would cost more.
POOL_PAIRS = 64

_Task = tuple[list[tuple[str, str]], int, int, bool]


@dataclasses.dataclass
class SideBySide:
    """``texts[file index]`` and ``runs[pair index]`` as ``[a_first, a_last, b_first, b_last, tokens]``."""

    texts: dict[int, str]
    runs: dict[int, list[list[int]]]
    left_out: int  # paired files whose text is not embedded


def side_by_side(
    files: Sequence[str],
    pairs: Sequence[tuple[int, int]],
    shingle: int,
    budget: int = MAX_SOURCE_CHARS,
    jobs: int = 1,
) -> SideBySide:
    """Texts and shared runs for ``pairs`` of indices into ``files`` (paths as scanned)."""
    found, read = pair_runs([(files[a], files[b]) for a, b in pairs], shingle, MAX_RUNS, jobs, texts=True)
    texts: dict[int, str] = {}
    left_out = 0
    for i in sorted({i for pair in pairs for i in pair}):
        text = read.get(files[i])
        if text is None or len(text) > budget:
            left_out += 1
            continue
        budget -= len(text)
        texts[i] = text
    runs = {k: [[*r.a_lines, *r.b_lines, r.tokens] for r in f] for k, f in enumerate(found) if f is not None}
    return SideBySide(texts, runs, left_out)


def longest_runs(pairs: Sequence[tuple[str, str]], shingle: int, jobs: int = 1) -> list[Run | None]:
    """Each pair's longest shared token run; ``None`` where a file no longer reads or lexes
    (or, rarely, the two share no run)."""
    found, _ = pair_runs(pairs, shingle, 1, jobs)
    return [f[0] if f else None for f in found]


def pair_runs(
    pairs: Sequence[tuple[str, str]], shingle: int, limit: int, jobs: int = 1, texts: bool = False
) -> tuple[list[list[Run] | None], dict[str, str]]:
    """Each pair's shared runs (longest first, at most ``limit``), ``None`` where a file no
    longer reads or lexes; and, with ``texts``, the text of each paired file that reads.

    The result does not depend on ``jobs``: families are independent and come back in order.
    """
    names = sorted({path for pair in pairs for path in pair})
    index = {name: i for i, name in enumerate(names)}
    # Workers may run in another folder: they get absolute paths, and the texts come back
    # under the names asked for.
    absolute = {name: os.path.abspath(name) for name in names}
    groups = components(len(names), [(index[a], index[b]) for a, b in pairs])
    family = {member: k for k, members in enumerate(groups) for member in members}
    chosen: list[list[int]] = [[] for _ in groups]  # pair indices of each family
    for k, (a, _) in enumerate(pairs):
        chosen[family[index[a]]].append(k)
    tasks: list[_Task] = [
        ([(absolute[pairs[k][0]], absolute[pairs[k][1]]) for k in ks], shingle, limit, texts) for ks in chosen
    ]
    done = _run(tasks, jobs if len(pairs) >= POOL_PAIRS else 1)
    found: list[list[Run] | None] = [None] * len(pairs)
    read: dict[str, str] = {}
    for ks, (runs, got) in zip(chosen, done, strict=True):
        for k, r in zip(ks, runs, strict=True):
            found[k] = r
        read.update(got)
    return found, {name: read[absolute[name]] for name in names if absolute[name] in read}


def _run(tasks: list[_Task], jobs: int) -> list[tuple[list[list[Run] | None], dict[str, str]]]:
    if jobs > 1 and len(tasks) > 1:
        try:
            with process_pool(pool_size(jobs, len(tasks))) as pool:
                return list(pool.map(_family_runs, tasks))  # largest families first, as components sorts them
        except (BrokenProcessPool, OSError):
            pass  # workers cannot start or died: do it here
    return [_family_runs(task) for task in tasks]


def _family_runs(task: _Task) -> tuple[list[list[Run] | None], dict[str, str]]:
    pairs, shingle, limit, keep_texts = task
    lexed: dict[str, Lexed | None] = {}
    texts: dict[str, str] = {}
    for path in sorted({path for pair in pairs for path in pair}):
        try:
            text = read_source(path)  # read once: for the page and for the runs
            lexed[path] = lex_text(path, text, shingle)
        except InputPathError:
            lexed[path] = None
            continue
        if keep_texts:
            texts[path] = text
    runs = [_runs(lexed[a], lexed[b], shingle, limit) for a, b in pairs]
    return runs, texts


def _runs(a: Lexed | None, b: Lexed | None, shingle: int, limit: int) -> list[Run] | None:
    return None if a is None or b is None else shared_runs(a, b, shingle, limit)
