"""Source bytes to significant tokens: decoding, the lexer chosen by file name, and the engine.

The steps a caller takes for one file: :func:`decode` the bytes, :func:`lexer_for` its name
(and content), then :func:`token_texts` (or :func:`token_texts_with_lines`), which runs the
fast engine (:mod:`.fastlex`) where it reproduces pygments exactly and pygments itself
elsewhere. Which tokens count (comments and whitespace dropped) is decided in
:mod:`.significant`, the same way by both engines.
"""

from __future__ import annotations

import functools

from pygments.lexer import Lexer
from pygments.lexers import find_lexer_class_for_filename, guess_lexer
from pygments.lexers.special import TextLexer
from pygments.util import ClassNotFound

from minhashdup.source.fastlex import FastLexer, supported
from minhashdup.source.significant import significant_tokens, significant_tokens_with_lines


class NoLexerError(LookupError):
    """No pygments lexer knows this file (by name, nor by content)."""


def decode(data: bytes) -> tuple[str, bool]:
    """Decode source bytes without ever failing or losing a byte.

    UTF-8 (a leading BOM is dropped); when that fails, the bytes that are not UTF-8
    become lone surrogates (``surrogateescape``), so the text still maps one-to-one back
    to the bytes.

    Returns:
        The text, and whether the lossless fallback was needed.

    Example:
        >>> decode(b"caf\\xe9")
        ('caf\\udce9', True)
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape"), True


def lexer_for(filename: str, text: str) -> Lexer:
    """The pygments lexer for ``filename``; the content decides only when the name does not.

    Plain text (pygments' ``TextLexer``) yields a single token per file, which cannot be
    compared by shingles, so it counts as no lexer.

    Raises:
        NoLexerError: neither the name nor the content selects a lexer.
    """
    cls = find_lexer_class_for_filename(filename, text)
    if cls is None:
        try:
            cls = type(guess_lexer(text))
        except ClassNotFound:
            cls = TextLexer
    if cls is TextLexer:
        raise NoLexerError("no pygments lexer for this file name or content")
    return _instance(cls)


@functools.lru_cache(maxsize=256)
def _instance(cls: type[Lexer]) -> Lexer:
    # Lexers are stateless between get_tokens calls; building one costs more than lexing
    # a small file, so each worker keeps one per class. stripnl=False keeps pygments from
    # editing the text before lexing.
    return cls(stripnl=False, ensurenl=True)


ENGINES = ("fast", "pygments")


def token_texts(lexer: Lexer, text: str, engine: str = "fast") -> list[str]:
    """:func:`significant_tokens` as a list, by the chosen engine.

    ``fast`` runs :class:`minhashdup.source.fastlex.FastLexer` for the lexers it reproduces exactly
    and pygments itself for the others; ``pygments`` always runs pygments.
    """
    if engine == "fast":
        fast = _fast_for(type(lexer))  # type: ignore[arg-type]  # pygments is untyped: type[Any]
        if fast is not None:
            return fast.significant_tokens(text)
    return list(significant_tokens(lexer, text))


def token_texts_with_lines(lexer: Lexer, text: str, engine: str = "fast") -> tuple[list[str], list[int]]:
    """:func:`token_texts` and the 1-based line each token starts on.

    Example:
        >>> from pygments.lexers import GoLexer
        >>> token_texts_with_lines(GoLexer(stripnl=False), "x := 1\\n// c\\ny")
        (['x', ':=', '1', 'y'], [1, 1, 1, 3])
    """
    fast = _fast_for(type(lexer)) if engine == "fast" else None  # type: ignore[arg-type]
    if fast is None:
        pairs = list(significant_tokens_with_lines(lexer, text))
        return [t for t, _ in pairs], [line for _, line in pairs]
    return fast.significant_tokens_with_lines(text)


@functools.lru_cache(maxsize=256)
def _fast_for(cls: type[Lexer]) -> FastLexer | None:
    # Built once per lexer class and process, from the same instance lexer_for hands out.
    if not supported(cls):
        return None
    try:
        return FastLexer(_instance(cls))  # type: ignore[arg-type]
    except Exception:  # a lexer whose rules we cannot analyse: pygments it is
        return None
