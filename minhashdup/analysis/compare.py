"""Two files side by side: exact Jaccard, the MinHash estimate, and where they coincide."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np

from minhashdup.config import Config
from minhashdup.core.shingles import intersection_size, jaccard, name_links, shingle_hashes, shingle_set, token_hashes
from minhashdup.core.signature import Family, estimate, standard_error, truncate
from minhashdup.core.substrings import maximal_runs
from minhashdup.errors import InputPathError
from minhashdup.source.normalise import VERBATIM, Normalisation, normalised
from minhashdup.source.paths import PathArg, one_path
from minhashdup.source.safeio import read_regular
from minhashdup.source.tokens import (
    NoLexerError,
    binary,
    decode,
    lexer_for,
    token_texts_with_lines,
    token_texts_with_lines_and_types,
)


@dataclasses.dataclass(frozen=True)
class Run:
    """A maximal run of tokens that both files share, as 1-based inclusive line ranges."""

    a_lines: tuple[int, int]
    b_lines: tuple[int, int]
    tokens: int


@dataclasses.dataclass
class Comparison:
    """What :func:`compare_files` found."""

    a: str
    b: str
    shingles_a: int
    shingles_b: int
    common: int
    jaccard: float
    estimate: float
    stddev: float
    runs: list[Run]
    params: dict[str, Any]
    jaccard_verbatim: float | None = None  # with names or literals normalised

    def to_dict(self) -> dict[str, Any]:
        """Plain dict with stable keys."""
        return {
            "a": self.a,
            "b": self.b,
            "shingles_a": self.shingles_a,
            "shingles_b": self.shingles_b,
            "common": self.common,
            "jaccard": round(self.jaccard, 6),
            "estimate": round(self.estimate, 6),
            "stddev": round(self.stddev, 6),
            "runs": [{"a_lines": list(r.a_lines), "b_lines": list(r.b_lines), "tokens": r.tokens} for r in self.runs],
            "params": self.params,
        } | ({} if self.jaccard_verbatim is None else {"jaccard_verbatim": round(self.jaccard_verbatim, 6)})


@dataclasses.dataclass(frozen=True)
class Lexed:
    """A file as :func:`shared_runs` compares it."""

    hashes: np.ndarray  # per shingle position
    lines: list[int]  # per token
    tokens: np.ndarray  # per token: its hash
    verbatim: np.ndarray | None = None  # normalised: the distinct shingles of the tokens as written


def compare_files(a: PathArg, b: PathArg, config: Config | None = None) -> Comparison:
    """Compare two files as the scan would, and locate their shared token runs.

    Raises:
        InputPathError: a file is missing, unreadable, binary or has no lexer.
        TypeError: ``a`` or ``b`` is not a ``str`` or ``os.PathLike``.
    """
    a, b = one_path(a, "a"), one_path(b, "b")
    config = config or Config()
    norm = config.normalisation
    la, lb = (lex_text(path, read_source(path), config.shingle, norm) for path in (a, b))
    sa, sb = np.unique(la.hashes), np.unique(lb.hashes)
    common = intersection_size(sa, sb)
    union = len(sa) + len(sb) - common
    jac = common / union if union else 1.0
    ka, kb = truncate(Family(config.seed, config.num_hashes).sign([sa, sb]), config.bits)
    est = float(estimate(ka, kb, config.bits))
    runs = shared_runs(la, lb, config.shingle)
    params = {"shingle": config.shingle, "seed": config.seed, "hashes": config.num_hashes, "bits": config.bits}
    params |= {f"ignore_{n}": True for n in ("identifiers", "literals") if getattr(norm, n)}
    found = Comparison(a, b, len(sa), len(sb), common, jac, est, standard_error(jac, config.num_hashes), runs, params)
    if la.verbatim is not None and lb.verbatim is not None:
        found.jaccard_verbatim = jaccard(la.verbatim, lb.verbatim)
    return found


#: What a report may read of a file the scan already kept (at most --max-size then): a bound
#: against a file swapped for a larger one since, not a setting.
REPORT_READ_LIMIT = 64 * 1024 * 1024


def read_source(path: str, limit: int = REPORT_READ_LIMIT) -> str:
    """A source file's text, decoded as the scan decodes it: a regular file of at most
    ``limit`` bytes, opened without blocking (:func:`minhashdup.source.safeio.read_regular`).

    Raises:
        InputPathError: the file is missing, unreadable, not a regular file, too large or binary.
    """
    try:
        data = read_regular(path, limit)
    except OSError as err:
        raise InputPathError(f"{path}: {err.strerror or err}; check the path") from None
    if binary(data):
        raise InputPathError(f"{path}: binary file (contains NUL bytes); compare source files")
    return decode(data)[0]


def lex_text(path: str, text: str, k: int, norm: Normalisation = VERBATIM) -> Lexed:
    """Shingle hashes by position and each token's line, for ``text`` read from ``path``, its
    names and literals replaced as ``norm`` says (as the scan does).

    Raises:
        InputPathError: no pygments lexer for the file.
    """
    try:
        lexer = lexer_for(os.path.basename(path), text)
    except NoLexerError:
        raise InputPathError(f"{path}: no pygments lexer for this file; compare source files") from None
    if not norm.active:
        texts, lines = token_texts_with_lines(lexer, text)
        tokens = token_hashes(texts)
        return Lexed(shingle_hashes(tokens, k), lines, tokens)
    raw, raw_lines, types = token_texts_with_lines_and_types(lexer, text)
    texts, names, kept_lines = normalised(raw, types, lexer.name, norm, raw_lines)
    assert kept_lines is not None
    tokens = token_hashes(texts)
    links = None if names is None else name_links(names)
    verbatim = shingle_set(token_hashes(raw), k)  # the same lex, as written: for the verbatim Jaccard
    return Lexed(shingle_hashes(tokens, k, links), kept_lines, tokens, verbatim)


def shared_runs(a: Lexed, b: Lexed, k: int, limit: int = 50) -> list[Run]:
    """The token runs that file ``a`` shares with file ``b``: the first ``limit`` of
    :func:`minhashdup.core.substrings.maximal_runs` over the two token sequences, runs of at least
    ``k`` tokens (one shingle).

    So the longest shared run comes first and sizes never increase; runs never overlap in
    ``a`` (in ``b`` they may); each run is maximal (one more token on either side mismatches,
    ends a file or belongs to a run listed before it); and with a ``limit`` high enough, every
    shingle of ``a`` that ``b`` holds overlaps a run. Ties go to the run first in ``a``, then to
    its first place in ``b``.
    """
    found = maximal_runs(a.tokens, b.tokens, minimum=k, limit=limit, windows=(a.hashes, b.hashes))
    return [Run((a.lines[i], a.lines[i + size - 1]), (b.lines[j], b.lines[j + size - 1]), size) for i, j, size in found]
