"""The engine of one machine: each file read, lexed, shingled and signed by
:func:`~minhashdup.source.extract.extract_file` in this machine's worker processes
(:mod:`minhashdup.engine.workers`), with the cache in front when the scan has one
(:meth:`minhashdup.engine.cached.CachedFiles.around`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from minhashdup.config import Config
from minhashdup.core.pairs import Corpus
from minhashdup.core.signature import Family
from minhashdup.engine.base import Extractor, ProgressFactory, Walked, corpus_of
from minhashdup.engine.cached import CachedFiles
from minhashdup.result import Stats
from minhashdup.source.extracted import Extracted
from minhashdup.source.walk import FileEntry


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
        lexed = 0

        def lex(files: Sequence[FileEntry], warnings: list[str]) -> list[Extracted]:
            nonlocal lexed
            lexed += len(files)
            return self._lex(files, config, warnings)

        extract: Extractor = lex
        if self.cache is not None:
            extract = self.cache.around(lex)
        warnings = list(walked.warnings)
        items = extract(walked.files, warnings)
        stats = Stats(files_walked=len(walked.files))
        stats.cache = {"hits": len(walked.files) - lexed, "lexed": lexed, "result": 0}
        stats.seconds = {"walk": walked.seconds, "lex": time.perf_counter() - walked.ended}
        return corpus_of(walked, items, warnings, stats, Family(config.seed, config.num_hashes))

    def _lex(self, files: Sequence[FileEntry], config: Config, warnings: list[str]) -> list[Extracted]:
        """:func:`minhashdup.engine.workers.extract_all` over ``files``, in their order."""
        if not files:
            return []
        # pygments and pools only when something is lexed
        from minhashdup.engine.workers import Recipe, extract_all

        bar = self.progress("lexing", len(files)) if self.progress else None
        out: list[Extracted | None] = [None] * len(files)
        try:
            recipe = Recipe(
                config.shingle,
                Family(config.seed, config.num_hashes),
                config.lexer_engine,
                config.lex_timeout,
                config.max_size,
                config.normalisation,
            )
            for item in extract_all(files, recipe, config.workers, bar.update if bar else None, warnings):
                out[item.index] = item
        finally:
            if bar:
                bar.close()
        return [item for item in out if item is not None]
