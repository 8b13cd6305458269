"""The seam between the scan and the engines that run its per-file stage.

An engine (:class:`Engine`) is given the walked files and the scan's settings and returns the
:class:`~minhashdup.core.pairs.Corpus` arrays; :func:`minhashdup.engine.stages.find_pairs`
then runs the same core functions on them. The local engine is :mod:`minhashdup.engine.local`.
An engine that keeps the shingle sets elsewhere (the Dask engine,
:mod:`minhashdup.engine.distributed`) plugs in one seam later, at
:func:`minhashdup.engine.stages.pairs_of`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from minhashdup.config import Config
from minhashdup.result import Skip, Stats
from minhashdup.source.found import FileEntry

if TYPE_CHECKING:  # numpy, the per-file results: not for a scan that replays its stored result
    from minhashdup.core.pairs import Corpus
    from minhashdup.core.signature import Family
    from minhashdup.source.extracted import Extracted


class ProgressBar(Protocol):
    """What a progress factory returns: ``update(n)`` and ``close()`` (tqdm fits)."""

    def update(self, n: int = 1) -> object: ...

    def close(self) -> None: ...


ProgressFactory = Callable[[str, int], ProgressBar]

#: The per-file stage as a function: ``files`` (and a list to append warnings to) -> one
#: :class:`Extracted` per file, in the order of ``files``. The cache wraps one
#: (:meth:`minhashdup.engine.cached.CachedFiles.around`).
Extractor = Callable[[Sequence[FileEntry], list[str]], "list[Extracted]"]


@dataclasses.dataclass
class Walked:
    """What an engine is given: the files to read (in walk order, the run's own reports left
    out), what the walk skipped and warned of, and the walk's timing."""

    files: list[FileEntry]
    skips: list[Skip]
    warnings: list[str]
    seconds: float  # the walk's wall time
    ended: float  # time.perf_counter() when the walk ended


class Engine(Protocol):
    """How the per-file stage runs: the seam for a second engine (e.g. Dask).

    An engine is given the walked files and the scan's :class:`Config` and returns the
    :class:`Corpus`: for each file that lexed, in walk order, its path, shingle set (sorted
    unique ``uint64``), lexer name and signature under ``Family(config.seed,
    config.num_hashes)`` (set ``Corpus.family``; without signatures :func:`find_pairs` makes
    them); every file that did not as a :class:`Skip` after the walk's; the walk's warnings
    and its own; and :class:`~minhashdup.result.Stats` with ``files_walked``,
    ``files_scanned``, ``tokens``, ``not_utf8`` and ``seconds`` (``walk``, ``lex``).

    The per-file work is :func:`minhashdup.source.extract.extract_file` (one file ->
    :class:`~minhashdup.source.extracted.Extracted`, signature included);
    :func:`corpus_of` builds the Corpus from those. An engine adds a
    module, not a branch in the stages.

    Example:
        >>> from minhashdup.engine.local import LocalEngine
        >>> from minhashdup.engine.pipeline import walk_files
        >>> config = Config(cache=False, jobs=1)
        >>> engine: Engine = LocalEngine()
        >>> corpus = engine.collect(walk_files(["examples/go"], config), config)
        >>> corpus.paths[2], corpus.lexers[2], len(corpus.signatures[2]) == config.num_hashes
        ('examples/go/reader.go', 'Go', True)
    """

    def collect(self, walked: Walked, config: Config) -> Corpus:
        """The corpus of ``walked.files`` under ``config``."""
        ...


def corpus_of(walked: Walked, items: Sequence[Extracted], warnings: list[str], stats: Stats, family: Family) -> Corpus:
    """The :class:`Corpus` of ``walked.files`` from their :class:`Extracted` (one each, in
    order, signed under ``family``): any engine that runs ``extract_file`` can build it so."""
    import numpy as np

    from minhashdup.core.pairs import Corpus
    from minhashdup.source.extracted import screened

    corpus = Corpus([], [], [], list(walked.skips), warnings, stats, family=family)
    cpu = np.zeros(4)
    for entry, item in zip(walked.files, items, strict=True):
        cpu += item.cpu
        stats.not_utf8 += item.not_utf8
        item = screened(item, os.path.basename(entry.real), entry.check_generated, entry.data_ok)  # cache hits too
        if item.skip is not None:
            corpus.skips.append(Skip(entry.path, item.skip, item.detail))
            continue
        stats.files_scanned += 1
        stats.tokens += item.tokens
        corpus.paths.append(entry.path)
        if entry.vendored:
            corpus.vendored.add(entry.path)
        corpus.sets.append(item.shingles)
        corpus.lexers.append(item.lexer)
        assert item.signature is not None
        corpus.signatures.append(item.signature)
    stats.cpu_seconds = dict(zip(("read", "lex", "shingle", "signature"), cpu.tolist(), strict=True))
    return corpus
