"""Per-file work: read, reject binaries, decode, lex, shingle, sign. Pure and picklable: the
engines run it (:mod:`minhashdup.engine.workers` over a process pool).

:func:`extract_file` never raises for a bad file: it returns an :class:`Extracted` whose
``skip`` says why, so one bad file never loses the results of the others.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import threading
import time
from collections.abc import Iterator

from minhashdup.core.digest import content_digest
from minhashdup.core.shingles import name_links, shingle_set, token_hashes
from minhashdup.core.signature import Family
from minhashdup.result import SkipReason
from minhashdup.source.extracted import Extracted, no_shingles, screened
from minhashdup.source.fastlex.versions import Versions
from minhashdup.source.kinds import generated_marker, not_code
from minhashdup.source.normalise import VERBATIM, Normalisation, normalised
from minhashdup.source.safeio import MIB, TooLargeError, read_regular
from minhashdup.source.tokens import (
    NoLexerError,
    binary,
    decode,
    lexer_for,
    name_choice,
    token_texts,
    token_texts_with_types,
)

__all__ = ["Extracted", "alike", "extract_file"]


class LexTimeout(BaseException):
    """Raised into a lexer that ran past its deadline. A ``BaseException``, so that a lexer's
    own ``except Exception`` cannot swallow it."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`LexTimeout` in the block after ``seconds`` of wall time (SIGALRM).

    Python's regex engine checks for signals while it backtracks, so even one runaway match
    is stopped. Without SIGALRM (Windows), outside the main thread, or with ``seconds`` 0,
    the block runs without a limit. The previous handler is restored afterwards.
    """
    usable = seconds > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise LexTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def extract_file(
    index: int,
    path: str,
    shingle: int,
    family: Family | None = None,
    engine: str = "fast",
    timeout: float = 0.0,
    max_size: int = MIB,
    data: bytes | None = None,
    check_generated: bool = False,
    data_ok: bool = True,
    norm: Normalisation = VERBATIM,
    seen: dict[tuple[bytes, Alike], Extracted] | None = None,
    versions: Versions | None = None,
) -> Extracted:
    """Shingle set of the file at ``path`` (tokens of its pygments lexer, ``shingle`` per run).

    With ``family``, also its MinHash signature (:meth:`Family.sign`), so that this work is
    spread over the lexing processes instead of waiting for all files. A file whose lexing takes more than
    ``timeout`` seconds (0: no limit; see :func:`deadline`) is skipped as a ``lex-error``.
    Only a regular file is read, without waiting (a FIFO put in its place is ``unreadable``),
    and at most ``max_size`` bytes of it (a file grown past that is ``too-large``). With
    ``data`` (the file's bytes, read already by the caller), ``path`` is not read: ``data`` is
    lexed, under the same checks (size, NUL bytes). The result carries the digest of the bytes
    lexed, for the cache, and the generated header it holds (:func:`.kinds.generated_marker`),
    if any. With ``check_generated``, a file with such a header is skipped as ``generated``, and
    without ``data_ok`` a data or prose file as ``not-code`` (:func:`.extracted.screened`), neither
    lexed. With an active ``norm``, names and literals are placeholders (:mod:`.normalise`), and
    ``verbatim`` holds the shingles of the same tokens as written (the cache keeps them as a
    default scan's: the verbatim Jaccard of the pairs needs no second lex). With ``seen`` (one
    dict for many calls), a file byte-identical to one extracted before, under the same
    :func:`alike`, is not lexed: it gets that file's result (``copied``). With ``versions`` (one
    for many calls, files of a family in order: :class:`.fastlex.versions.Versions`), the tail a
    file shares with the version of it lexed before is taken from that lex (the same tokens), and
    its signature is made from that version's (:meth:`.fastlex.versions.Versions.sign`: the same).

    Example:
        >>> extract_file(0, "examples/go/reader.go", 5).lexer
        'Go'
    """
    t0 = time.process_time()
    content = _content(path, max_size, data)
    if isinstance(content, tuple):
        skip, detail = content
        return Extracted(index, no_shingles(), skip=skip, detail=detail)
    digest = content_digest(content)
    name = os.path.basename(path)
    same = None if seen is None else (digest, alike(name, check_generated, data_ok))
    if seen is not None and same in seen:
        return dataclasses.replace(seen[same], index=index, cpu=(time.process_time() - t0, 0, 0, 0), copied=True)
    how = (shingle, family, engine, norm)
    item = _from_content(index, (path, versions), content, digest, how, timeout, (check_generated, data_ok), t0)
    if seen is not None and same is not None:
        seen[same] = item
    return item


#: What beyond its bytes decides what a file gives: see :func:`alike`.
Alike = tuple[tuple[str, ...], bool, bool, str]


def alike(name: str, check_generated: bool = False, data_ok: bool = True) -> Alike:
    """What, beyond its bytes, decides what :func:`extract_file` gives a file named ``name``
    (a scan's other settings being the same): what the name says of its lexer
    (:func:`.tokens.name_choice`), its kind's checks, and what its name alone says of its kind
    (:func:`.kinds.not_code`). Byte-identical files alike give the same :class:`Extracted`.

    Example:
        >>> alike("a/reader.go") == alike("writer.go"), alike("go.sum", data_ok=False) == alike("x.sum", data_ok=False)
        (True, False)
    """
    return name_choice(name), check_generated, data_ok, "" if data_ok else not_code(name, "")


def _from_content(
    index: int,
    where: tuple[str, Versions | None],
    content: bytes,
    digest: bytes,
    how: tuple[int, Family | None, str, Normalisation],
    timeout: float,
    screen: tuple[bool, bool],
    t0: float,
) -> Extracted:
    """:func:`extract_file` once the bytes are read and digested (``where``: the file's path and
    the versions of the run; ``how``: the shingle size, the family, the engine and the
    normalisation)."""
    shingle, family, engine, norm = how
    if binary(content):
        return Extracted(index, no_shingles(), skip=SkipReason.BINARY, detail="contains NUL bytes", digest=digest)
    text, not_utf8 = decode(content)
    base = Extracted(index, no_shingles(), not_utf8=not_utf8, digest=digest, generated=generated_marker(text))
    t1 = time.process_time()
    lexed = _lexed(base, where, text, (engine, norm), timeout, screen)
    if isinstance(lexed, Extracted):
        return lexed
    lexer, tokens, names, raw = lexed
    t2 = time.process_time()
    versions = where[1] if names is None else None  # normalised tokens: not the lex's own
    hashes = token_hashes(tokens, None if versions is None else versions.reuse(where[0]))
    if versions is not None:
        versions.hashed(hashes)  # for a later version that takes tokens from this lex
    shingles = shingle_set(hashes, shingle, None if names is None else name_links(names))
    verbatim = None if raw is None else (shingle_set(token_hashes(raw), shingle), len(raw))
    t3 = time.process_time()
    if family is None:
        sig = None
    else:  # a version: from the signature of the one before it, where they differ little
        sig = family.sign([shingles])[0] if where[1] is None else where[1].sign(where[0], shingles, family)
    t4 = time.process_time()
    cpu = (t1 - t0, t2 - t1, t3 - t2, t4 - t3)
    return dataclasses.replace(
        base, shingles=shingles, tokens=len(tokens), lexer=lexer, signature=sig, cpu=cpu, verbatim=verbatim
    )


def _lexed(
    base: Extracted,
    where: tuple[str, Versions | None],
    text: str,
    how: tuple[str, Normalisation],
    timeout: float,
    screen: tuple[bool, bool],
) -> tuple[str, list[str], list[str] | None, list[str] | None] | Extracted:
    """The lexer's name, the tokens of ``text`` (by the engine and normalisation ``how`` names),
    their names (:func:`.normalise.normalised`) and, normalised, the tokens as written; or
    ``base`` as a skip: a lexer past its
    deadline or failing, no lexer, or a kind that ``screen`` (``check_generated``, ``data_ok``)
    leaves out (:func:`.extracted.screened`: then the file is not lexed)."""
    engine, norm = how
    path, versions = where
    name = os.path.basename(path)
    try:
        with deadline(timeout):
            lexer = lexer_for(name, text)
            kind = screened(dataclasses.replace(base, lexer=lexer.name), name, *screen)
            if kind.skip is not None:
                return kind
            if not norm.active:
                return lexer.name, token_texts(lexer, text, engine, versions, path), None, None
            raw, types = token_texts_with_types(lexer, text, engine, versions, path)
            texts, names, _ = normalised(raw, types, lexer.name, norm)
            return lexer.name, texts, names, raw
    except LexTimeout:
        detail = f"lexing took over {timeout:g} s (--lex-timeout); the lexer may be backtracking on this file"
        return dataclasses.replace(base, skip=SkipReason.LEX_ERROR, detail=detail)
    except NoLexerError as err:
        item = dataclasses.replace(base, skip=SkipReason.NO_LEXER, detail=str(err), lexer=err.lexer)
        return screened(item, name, *screen)  # plain text by its name is prose: not-code
    except Exception as err:  # a lexer bug on one file must not stop the scan
        detail = f"{type(err).__name__}: {err}"[:200]
        return dataclasses.replace(base, skip=SkipReason.LEX_ERROR, detail=detail)


def _content(path: str, max_size: int, data: bytes | None) -> bytes | tuple[SkipReason, str]:
    """The bytes to lex: ``data`` when given, else those of the file at ``path``; or why there
    are none (a skip reason and its detail)."""
    if data is not None:
        if len(data) > max_size:
            return SkipReason.TOO_LARGE, f"over --max-size ({max_size} bytes)"
        return data
    try:
        return read_regular(path, max_size, follow=False)  # path: resolved by the walk
    except TooLargeError:
        return SkipReason.TOO_LARGE, f"grew over --max-size ({max_size} bytes) during the scan"
    except OSError as err:  # NotRegularFileError too: a FIFO or device swapped in after the walk
        return SkipReason.UNREADABLE, err.strerror or str(err)
