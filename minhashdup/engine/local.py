"""The engine of one machine: each file read, lexed, shingled and signed by
:func:`~minhashdup.source.extract.extract_file` in this machine's worker processes
(:mod:`minhashdup.engine.workers`), with the cache in front when the scan has one
(:meth:`minhashdup.engine.cached.CachedFiles.around`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from minhashdup.config import Config
from minhashdup.engine.base import Extractor, ProgressBar, ProgressFactory, Walked, corpus_of
from minhashdup.engine.cached import CachedFiles
from minhashdup.result import Stats
from minhashdup.source.extracted import Extracted, bare
from minhashdup.source.walk import FileEntry

if TYPE_CHECKING:
    from minhashdup.core.pairs import Corpus


class LocalEngine:
    """Implements :class:`minhashdup.engine.base.Engine` with a local process pool.

    Args:
        progress: optional factory of progress bars (a ``lexing`` bar over the files lexed).
        cache: the scan's cache (:func:`minhashdup.engine.cached.session`), or ``None``.
    """

    def __init__(self, progress: ProgressFactory | None = None, cache: CachedFiles | None = None) -> None:
        self.progress, self.cache = progress, cache

    def collect(self, walked: Walked, config: Config) -> Corpus:
        """The corpus of ``walked.files``: cached files from the cache, the rest lexed."""
        return self.collect_parts([walked], config)

    def collect_parts(self, parts: Iterable[Walked], config: Config, total: int | None = None) -> Corpus:
        """The corpus of the files of ``parts``, in order, one part extracted before the next is
        taken: the bytes a part holds (:class:`~minhashdup.source.extracted.ReadEntry`, e.g. rows
        of a Parquet dataset) are let go once it is lexed, its shingle sets kept. A part's
        ``seconds`` count as reading (``walk``); ``total``: the files (and skips) of all parts,
        for one progress bar over them (without it, a bar per part lexed)."""
        lexed = copies = 0
        bar = self.progress("lexing", total) if self.progress and total is not None else None

        def lex(files: Sequence[FileEntry], warnings: list[str]) -> list[Extracted]:
            nonlocal lexed, copies
            lexed += len(files)
            done = self._lex(files, config, warnings, bar)
            copies += sum(item.copied for item in done)
            return done

        extract: Extractor = lex
        if self.cache is not None:
            extract = self.cache.around(lex)
        whole = Walked([], [], [], 0.0, 0.0)
        items: list[Extracted] = []
        try:
            for number, part in enumerate(parts):
                whole.skips += part.skips
                whole.warnings += part.warnings
                whole.seconds += part.seconds
                whole.ended = part.ended if number == 0 else whole.ended + part.seconds  # lexing: the time left
                before = lexed
                items += extract(part.files, whole.warnings)
                whole.files += [bare(f) for f in part.files]
                if bar is not None:  # what was not lexed: cache hits, skips
                    bar.update(len(part.files) - (lexed - before) + len(part.skips))
        finally:
            if bar is not None:
                bar.close()
        stats = Stats(files_walked=len(whole.files))
        # lexed: files lexed; copies: files that took the result of a byte-identical one lexed
        stats.cache = {"hits": len(whole.files) - lexed, "lexed": lexed - copies, "copies": copies, "result": 0}
        stats.seconds = {"walk": whole.seconds, "lex": time.perf_counter() - whole.ended}
        from minhashdup.core.signature import Family  # numpy: not for a scan that replays

        return corpus_of(whole, items, whole.warnings, stats, Family(config.seed, config.num_hashes))

    def _lex(
        self, files: Sequence[FileEntry], config: Config, warnings: list[str], shared: ProgressBar | None = None
    ) -> list[Extracted]:
        """:func:`minhashdup.engine.workers.extract_all` over ``files``, in their order (progress on
        ``shared``, else on a bar of their own)."""
        if not files:
            return []
        # pygments and pools only when something is lexed
        from minhashdup.engine.workers import Recipe, extract_all

        bar = shared or (self.progress("lexing", len(files)) if self.progress else None)
        out: list[Extracted | None] = [None] * len(files)
        try:
            recipe = Recipe.of(config)
            for item in extract_all(files, recipe, config.workers, bar.update if bar else None, warnings):
                out[item.index] = item
        finally:
            if bar and bar is not shared:
                bar.close()
        return [item for item in out if item is not None]
