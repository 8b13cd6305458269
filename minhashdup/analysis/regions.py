"""What the SARIF and HTML reports show beyond the :class:`~minhashdup.result.Result`, computed
before rendering so that a renderer only writes: where paired files coincide (their shared
token runs, as ``minhashdup compare`` finds them), the texts the HTML page embeds, and where
the project's files are.

For SARIF, each pair's longest run gives its regions; for the HTML report's side-by-side view,
each pair's runs and the text of each paired file. Pairs are split into families (connected
components): a family's files are read and lexed once, by one task, in worker processes when
``jobs`` asks for them and there are enough pairs to pay for starting them. The result does not
depend on ``jobs``. Texts are embedded up to a budget of bytes, a pair at a time; the pairs over
it, or with a file that no longer reads, are shown without text (and not lexed).

Example:
    >>> from minhashdup import Config, scan
    >>> result = scan("examples", Config(threshold=0.85, cache=False))
    >>> pair, run = result.pairs[2], pair_regions(result)[2]
    >>> print(f"{pair.a} lines {run.a_lines}, {pair.b} lines {run.b_lines}: {run.tokens} tokens")
    examples/go/reader.go lines (40, 87), examples/go/textview.go lines (45, 92): 225 tokens
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from minhashdup.analysis.compare import Lexed, Run, lex_text, read_source, shared_runs
from minhashdup.core.cluster import components
from minhashdup.errors import InputPathError
from minhashdup.result import Result
from minhashdup.source.normalise import VERBATIM, Normalisation

#: Most bytes of source (by size on disk) embedded in one HTML report.
MAX_SOURCE_BYTES = 24 * 1024 * 1024
#: Most runs listed per pair in the side-by-side view (longest first).
MAX_RUNS = 200
#: GitHub accepts at most this many results per SARIF run: pairs beyond it are not shown, so not lexed.
MAX_RESULTS = 25_000
#: Fewer pairs than this are done in this process: starting workers would cost more.
POOL_PAIRS = 64

_Task = tuple[list[tuple[str, str]], int, int, bool, Normalisation]


@dataclasses.dataclass(frozen=True)
class SideBySide:
    """What the HTML report's side-by-side view shows: ``texts[path]`` of the paired files
    embedded, ``runs[k]`` the shared runs of ``result.pairs[k]`` (longest first; absent where a
    file no longer reads or lexes), and how many paired files are left without their text."""

    texts: dict[str, str]
    runs: dict[int, list[Run]]
    left_out: int


@dataclasses.dataclass(frozen=True)
class Project:
    """Where the files a report names are: ``root``, the top folder of the project (the git
    repository holding the current folder, else that folder; see
    :func:`minhashdup.ci.git.locate`), and for each file as scanned its ``name`` relative to the
    root (``/``-separated, ``../`` first when outside it) and its ``real`` path (absolute, its
    folders resolved)."""

    root: str
    names: dict[str, str]
    real: dict[str, str]

    @classmethod
    def of(cls, root: str, real: dict[str, str]) -> Project:
        """The project of real paths ``real[path]`` under the real folder ``root``.

        Example:
            >>> Project.of("/repo", {"src/a.go": "/repo/src/a.go", "b.go": "/b.go"}).names
            {'src/a.go': 'src/a.go', 'b.go': '../b.go'}
        """
        names = {path: os.path.relpath(where, root).replace(os.sep, "/") for path, where in real.items()}
        return cls(root, names, real)

    def name(self, path: str) -> str:
        """``path`` relative to the root (see :meth:`of`)."""
        return self.names[path]


def shown_paths(result: Result, per: str = "pair") -> list[str]:
    """The files a SARIF log of ``result`` names (``per`` is ``"pair"`` or ``"cluster"``), sorted."""
    if per == "cluster":
        return sorted({f for c in result.clusters for f in c.files})
    return sorted({path for p in result.pairs for path in (p.a, p.b)})


def pair_regions(result: Result, jobs: int = 1, limit: int = MAX_RESULTS) -> list[Run | None]:
    """The longest shared run of each of the first ``limit`` pairs of ``result`` (the regions
    of a SARIF result), ``None`` where a file no longer reads or lexes (or, rarely, the two
    share no run); ``jobs`` worker processes lex the files when that pays."""
    pairs = [(p.a, p.b) for p in result.pairs[:limit]]
    found, _ = pair_runs(pairs, _shingle(result), 1, jobs, norm=_norm(result))
    return [f[0] if f else None for f in found]


def side_by_side(result: Result, jobs: int = 1, budget: int = MAX_SOURCE_BYTES) -> SideBySide:
    """The texts and shared runs of the HTML report's side-by-side view of ``result``.

    Files are chosen before any is read, by their size on disk, a pair at a time while the
    ``budget`` of bytes lasts: near pairs first (identical ones have nothing to compare), each in
    the result's order, both files or neither. Only the chosen pairs are lexed, family by family,
    and only the chosen texts are kept: memory grows with the budget, not with the tree.
    """
    pairs = [(p.a, p.b) for p in result.pairs]
    order = sorted(range(len(pairs)), key=lambda k: result.pairs[k].jaccard >= 1.0)  # stable: near pairs first
    chosen: list[int] = []
    shown: set[str] = set()
    size = {path: _size(path) for path in sorted({path for pair in pairs for path in pair})}
    for k in order:
        sizes = [size[path] for path in set(pairs[k]) - shown]
        cost = sum(s or 0 for s in sizes)
        if None not in sizes and cost <= budget:
            budget -= cost
            shown.update(pairs[k])
            chosen.append(k)
    chosen.sort()
    shingle, norm = _shingle(result), _norm(result)
    found, read = pair_runs([pairs[k] for k in chosen], shingle, MAX_RUNS, jobs, texts=True, norm=norm)
    runs = {k: f for k, f in zip(chosen, found, strict=True) if f is not None}
    texts = {path: read[path] for path in sorted(read)}
    left_out = len(size) - len(texts)
    return SideBySide(texts, runs, left_out)


def _size(path: str) -> int | None:
    """Bytes of ``path`` on disk (no fewer than its characters once decoded); ``None`` when it is gone."""
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def _shingle(result: Result) -> int:
    return int(result.params.get("shingle", 5))


def _norm(result: Result) -> Normalisation:
    """The scan's normalisation: the runs are those of the tokens it compared."""
    return Normalisation(bool(result.params.get("ignore_identifiers")), bool(result.params.get("ignore_literals")))


def pair_runs(
    pairs: Sequence[tuple[str, str]],
    shingle: int,
    limit: int,
    jobs: int = 1,
    texts: bool = False,
    norm: Normalisation = VERBATIM,
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
        ([(absolute[pairs[k][0]], absolute[pairs[k][1]]) for k in ks], shingle, limit, texts, norm) for ks in chosen
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
        from concurrent.futures.process import BrokenProcessPool

        from minhashdup.engine.parallel import pool_size, process_pool  # only when workers are asked for

        try:
            with process_pool(pool_size(jobs, len(tasks))) as pool:
                return list(pool.map(_family_runs, tasks))  # largest families first, as components sorts them
        except (BrokenProcessPool, OSError):
            pass  # workers cannot start or died: do it here
    return [_family_runs(task) for task in tasks]


def _family_runs(task: _Task) -> tuple[list[list[Run] | None], dict[str, str]]:
    pairs, shingle, limit, keep_texts, norm = task
    lexed: dict[str, Lexed | None] = {}
    texts: dict[str, str] = {}
    for path in sorted({path for pair in pairs for path in pair}):
        try:
            text = read_source(path)  # read once: for the page and for the runs
            lexed[path] = lex_text(path, text, shingle, norm)
        except InputPathError:
            lexed[path] = None
            continue
        if keep_texts:
            texts[path] = text
    runs = [_runs(lexed[a], lexed[b], shingle, limit) for a, b in pairs]
    return runs, texts


def _runs(a: Lexed | None, b: Lexed | None, shingle: int, limit: int) -> list[Run] | None:
    return None if a is None or b is None else shared_runs(a, b, shingle, limit)
