"""Source bytes to significant tokens: decoding, the lexer chosen by file name, and the engine.

The steps a caller takes for one file: :func:`decode` the bytes, :func:`lexer_for` its name
(or what it declares: a shebang, a modeline), then :func:`token_texts` (or :func:`token_texts_with_lines`),
which runs the fast engine (:mod:`.fastlex`) where it reproduces pygments exactly and pygments itself
elsewhere. Which tokens count (comments and whitespace dropped) is decided in :mod:`.significant`, alike.
"""

from __future__ import annotations

import fnmatch
import functools
import io
import os
import re
from collections.abc import Iterator

from identify.identify import parse_shebang, tags_from_interpreter
from pygments.lexer import Lexer
from pygments.lexers import find_lexer_class, find_lexer_class_for_filename, get_lexer_by_name
from pygments.lexers._mapping import LEXERS
from pygments.lexers.special import TextLexer
from pygments.modeline import get_filetype_from_buffer
from pygments.plugin import find_plugin_lexers
from pygments.token import _TokenType
from pygments.util import ClassNotFound

from minhashdup.source.fastlex import FastLexer, supported
from minhashdup.source.fastlex.versions import Versions
from minhashdup.source.significant import (
    significant_tokens,
    significant_tokens_with_lines,
    significant_tokens_with_types,
    significant_typed_tokens,
)


class NoLexerError(LookupError):
    """No pygments lexer knows this file (by name, nor by what it declares). ``lexer`` names
    pygments' plain-text lexer when the name chose it (``.txt``): prose, with no tokens to compare."""

    def __init__(self, message: str, lexer: str = "") -> None:
        super().__init__(message)
        self.lexer = lexer


def decode(data: bytes) -> tuple[str, bool]:
    """Decode source bytes without ever failing or losing a byte.

    UTF-8 (a leading BOM is dropped); when that fails, the bytes that are not UTF-8
    become lone surrogates (``surrogateescape``), so the text still maps one-to-one back
    to the bytes. A UTF-16 or UTF-32 byte-order mark (:func:`wide_encoding`) decodes the
    file in that encoding (not UTF-8: the second value is true).

    Returns:
        The text, and whether the lossless fallback was needed.

    Example:
        >>> decode(b"caf\\xe9")
        ('caf\\udce9', True)
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    wide = wide_encoding(data)
    if wide is not None:  # its byte-order mark says which; a stray unit becomes U+FFFD
        return data.decode(wide, "replace").removeprefix("\ufeff"), True
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape"), True


#: Byte-order marks of the encodings whose text holds NUL bytes, the longer first (UTF-32-LE's
#: starts with UTF-16-LE's).
_WIDE = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def wide_encoding(data: bytes) -> str | None:
    """``"utf-16"`` or ``"utf-32"`` when ``data`` starts with that encoding's byte-order mark
    (Windows' editors write PowerShell or C# so), else ``None``: its NUL bytes are text, not
    a sign of a binary file.

    Example:
        >>> wide_encoding("x = 1".encode("utf-16")), wide_encoding(b"x = 1"), decode("é".encode("utf-16"))
        ('utf-16', None, ('é', True))
    """
    return next((name for mark, name in _WIDE if data.startswith(mark)), None)


def binary(data: bytes) -> bool:
    """Whether ``data`` is a binary file's: it holds a NUL byte, and no byte-order mark says it
    is UTF-16 or UTF-32 text (:func:`wide_encoding`)."""
    return b"\0" in data and wide_encoding(data) is None


def lexer_for(filename: str, text: str) -> Lexer:
    """The pygments lexer for ``filename``; when the name selects none, the one the file declares.

    No other guessing from content: a name without a lexer counts only a shebang line
    (``#!/usr/bin/env python3``, parsed by ``identify``) or an editor modeline (Emacs'
    ``-*- mode: perl -*-`` on the first line, or the second after a shebang; Vim's
    ``vim: set ft=ruby:`` in the first or last five lines). pygments' content guess lexed
    LICENSE files as Transact-SQL. Plain text (pygments' ``TextLexer``) yields a single token
    per file, which cannot be compared by shingles, so it counts as no lexer.

    Raises:
        NoLexerError: neither the name nor a declaration selects a lexer.

    Example:
        >>> lexer_for("build", "#!/usr/bin/env python3\\nprint(1)\\n").name
        'Python'
    """
    cls = lexer_class_for_filename(filename, text) or declared_lexer(text)
    if cls is None:
        raise NoLexerError("no pygments lexer for this file name, and no shebang or modeline")
    if cls is TextLexer:
        raise NoLexerError("plain text: a single token, nothing to compare", TextLexer.name)
    return _instance(cls)  # type: ignore[arg-type]  # pygments is untyped: type[Any]


def lexer_class_for_filename(filename: str, text: str) -> type[Lexer] | None:
    """pygments' ``find_lexer_class_for_filename(filename, text)``, the same answer for every
    name and text, without testing each of pygments' ~900 file-name patterns on each file.

    The answer depends on the name through the patterns it matches, and on the text only when
    those patterns belong to more than one lexer (pygments then asks each lexer to rate the
    text). So the classes a name's patterns select are memoised by name, found through
    :class:`_NameIndex`, and pygments itself runs only for a name that several lexers claim
    (``*.h``: C, C++, Objective-C).

    Example:
        >>> lexer_class_for_filename("reader.go", "").name, lexer_class_for_filename("CMakeLists.txt", "").name
        ('Go', 'CMake')
    """
    name = os.path.basename(filename)
    classes = {cls for cls, _ in _matches_for_name(name)}
    if len(classes) > 1:
        return find_lexer_class_for_filename(name, text)  # type: ignore[no-any-return]
    return classes.pop() if classes else None


#: File names whose lexer choice a process keeps: the names of several releases of a large tree
#: side by side fit (four Go releases: 29,162 files, 5,755 names), so each is looked up once,
#: not again for each release once 4,096 others came between. Full, ~4 MiB with 250-character
#: names, in the main process and in each worker.
NAMES_KEPT = 1 << 14


def name_choice(filename: str) -> tuple[str, ...]:
    """All that a file's name tells :func:`lexer_for`: the lexers its name's patterns select
    (each as ``module.Class``, sorted), and, when there are several, which of them the name
    matched exactly (``!``: pygments favours those). Two files whose names give the same
    choice get the same lexer for the same text: byte-identical files lexed once serve both.

    Example:
        >>> name_choice("a/reader.go") == name_choice("writer.go"), name_choice("README")
        (True, ())
    """
    matches = _matches_for_name(os.path.basename(filename))
    if len({cls for cls, _ in matches}) == 1:
        return (_path(matches[0][0]),)
    return tuple(sorted(_path(cls) + ("!" if explicit else "") for cls, explicit in matches))


def _path(cls: type[Lexer]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@functools.lru_cache(maxsize=NAMES_KEPT)
def _matches_for_name(name: str) -> tuple[tuple[type[Lexer], bool], ...]:
    """The lexer classes whose file-name patterns match ``name``, each with whether a pattern
    without ``*`` matched it (pygments' bonus), without repeats, in no set order."""
    return tuple(dict.fromkeys((_lexer_class(key), explicit) for key, explicit in _name_index().lexers(name)))


class _NameIndex:
    """pygments' file-name patterns (built-in lexers and plugins) by how a name can match them.

    ``*X`` with a literal ``X`` (845 of 929: ``*.go``, ``*Config.cmake``) matches exactly the
    names ending in ``X``: a name looks up its own suffixes in a dict. A pattern without
    wildcards (``Makefile``, ``CMakeLists.txt``) matches that very name: one more lookup. The
    few left (``Makefile.*``, ``*.[1-9]``) are tested as pygments tests them (``fnmatch``), after
    one combined expression says whether any of them can match at all.
    """

    def __init__(self, patterns: list[tuple[str, str | type[Lexer]]]) -> None:
        self.suffixes: dict[str, list[_Key]] = {}
        self.names: dict[str, list[_Key]] = {}
        self.others: list[tuple[re.Pattern[str], _Key]] = []
        for glob, lexer in patterns:
            key = (lexer, "*" not in glob)
            if not _WILD.search(glob):
                self.names.setdefault(glob, []).append(key)
            elif glob.startswith("*") and not _WILD.search(glob[1:]):
                self.suffixes.setdefault(glob[1:], []).append(key)
            else:
                self.others.append((re.compile(fnmatch.translate(glob)), key))
        self.any_other = re.compile("|".join(f"(?:{p.pattern})" for p, _ in self.others) or "(?!)")

    def lexers(self, name: str) -> Iterator[_Key]:
        """The lexers (a built-in lexer's name, or a plugin's class) of the patterns ``name``
        matches, each with whether that pattern has no ``*``."""
        yield from self.names.get(name, ())
        for start in range(len(name) + 1):
            yield from self.suffixes.get(name[start:], ())
        if self.any_other.match(name):
            yield from (key for pattern, key in self.others if pattern.match(name))


_WILD = re.compile(r"[*?\[]")
#: A lexer (a built-in lexer's name, or a plugin's class) and whether its pattern has no ``*``.
_Key = tuple["str | type[Lexer]", bool]


def index_names() -> None:
    """Build the index of lexers by file-name pattern now, if not yet (:func:`_name_index`): for
    the fork server, whose workers then start with it.

    Example:
        >>> index_names(); _name_index.cache_info().currsize
        1
    """
    _name_index()


@functools.lru_cache(maxsize=1)
def _name_index() -> _NameIndex:
    builtin = [(glob, lexer) for _, lexer, _, globs, _ in LEXERS.values() for glob in globs]
    plugins: list[tuple[str, str | type[Lexer]]] = [(g, cls) for cls in find_plugin_lexers() for g in cls.filenames]
    return _NameIndex([*builtin, *plugins])


def _lexer_class(key: str | type[Lexer]) -> type[Lexer]:
    return key if isinstance(key, type) else find_lexer_class(key)


def declared_lexer(text: str) -> type[Lexer] | None:
    """The lexer class a file declares by its shebang line or an editor modeline, or ``None``.

    Only the first and last lines are read, each cut at :data:`DECLARATION_CHARS`.

    Example:
        >>> declared_lexer("# -*- mode: ruby -*-\\nputs 1\\n").name, declared_lexer("LICENSE text")
        ('Ruby', None)
    """
    head = text[: 8 * DECLARATION_CHARS].split("\n", 5)[:5]
    # The last five lines of the file, whatever its size (they may be among the first five too); a
    # final newline ends the last line, it does not start a sixth.
    tail = text[-8 * DECLARATION_CHARS :].removesuffix("\n").rsplit("\n", 5)[-5:]
    lines = [line[:DECLARATION_CHARS] for line in head + tail]
    names = [*_emacs_modes(lines[:2]), *_shebang_names(lines[0])]  # Emacs' mode line wins, as in Emacs
    vim = get_filetype_from_buffer("\n".join(lines))
    for name in [*names, *([vim] if vim else [])]:
        try:
            return type(get_lexer_by_name(name.lower()))
        except ClassNotFound:
            continue
    return None


#: The most characters of a line that the shebang and modeline checks read.
DECLARATION_CHARS = 512


def _shebang_names(first: str) -> list[str]:
    """Names to look the shebang's interpreter up by: its own (``python3.11`` then ``python3``), then
    the languages ``identify`` knows it for (``node``: javascript)."""
    command = parse_shebang(io.BytesIO(first.encode("utf-8", "surrogateescape")))
    if not command:
        return []
    interpreter = os.path.basename(command[0])
    bare = interpreter.rstrip("0123456789.")
    return [interpreter, bare, *sorted(tags_from_interpreter(interpreter) - {"shell"})]


_EMACS = re.compile(r"-\*-\s*(.*?)\s*-\*-")
_EMACS_MODE = re.compile(r"(?:^|;)\s*mode\s*:\s*([\w+.#-]+)", re.IGNORECASE)


def _emacs_modes(lines: list[str]) -> list[str]:
    """The mode of an Emacs ``-*- ... -*-`` line: the first line, or the second after a shebang."""
    checked = lines[:2] if lines and lines[0].startswith("#!") else lines[:1]
    for line in checked:
        found = _EMACS.search(line)
        if found is None:
            continue
        body = found.group(1)
        if ":" not in body:
            return [body] if body else []
        mode = _EMACS_MODE.search(body)
        return [mode.group(1)] if mode else []
    return []


@functools.lru_cache(maxsize=256)
def _instance(cls: type[Lexer]) -> Lexer:
    # Stateless between calls, and dearer to build than a small file's lex: one per class and
    # worker. stripnl=False keeps pygments from editing the text before lexing.
    return cls(stripnl=False, ensurenl=True)


ENGINES = ("fast", "pygments")


def token_texts(
    lexer: Lexer, text: str, engine: str = "fast", versions: Versions | None = None, path: str = ""
) -> list[str]:
    """:func:`significant_tokens` as a list, by the chosen engine.

    ``fast`` runs :class:`minhashdup.source.fastlex.FastLexer` where it reproduces the lexer
    exactly (:func:`_fast`), pygments elsewhere; ``pygments`` always runs pygments. With
    ``versions`` (fast only), the file at ``path`` may take the tail it shares with an earlier
    version from that version's lex (:mod:`.fastlex.splice`), unless the lexer takes a text in
    one call (:mod:`.fastlex.bulk`): then each piece of it is lexed once (:mod:`.fastlex.pieces`).
    """
    if engine == "fast":
        fast = _fast(lexer)
        if fast is not None and versions is not None:
            if not fast.one_call:
                return _spliced(fast, lexer, text, versions, path)
            return fast.significant_tokens_in_pieces(text, versions.pieces_for(path, type(lexer)))
        if fast is not None:
            return fast.significant_tokens(text)
    return list(significant_tokens(lexer, text))


def token_texts_with_types(
    lexer: Lexer, text: str, engine: str = "fast", versions: Versions | None = None, path: str = ""
) -> tuple[list[str], list[_TokenType]]:
    """:func:`token_texts` and each token's pygments type, by the chosen engine (the same types);
    ``versions`` and ``path`` as there: a tail taken from an earlier version has its types too."""
    fast = _fast(lexer) if engine == "fast" else None
    if fast is None:
        return significant_tokens_with_types(lexer, text)
    if versions is not None:
        types: list[_TokenType] = []
        return _spliced(fast, lexer, text, versions, path, types), types
    return fast.significant_tokens_with_types(text)


def _spliced(
    fast: FastLexer, lexer: Lexer, text: str, versions: Versions, path: str, types: list[_TokenType] | None = None
) -> list[str]:
    """The fast engine's tokens of the file at ``path`` among ``versions``: the tail it shares with
    the version of it lexed before taken from that lex, its own lex kept for the next (with
    ``types``: see :meth:`.FastLexer.significant_tokens_after`; a lexer that cannot take tails
    gives no lex to keep)."""
    key, base, record = versions.take(path, type(lexer))
    tokens, lexed = fast.significant_tokens_after(text, base, record, types, versions.copies)
    if lexed is not None:
        versions.keep(key, type(lexer), lexed)
    return tokens


def token_texts_with_lines_and_types(
    lexer: Lexer, text: str, engine: str = "fast"
) -> tuple[list[str], list[int], list[_TokenType]]:
    """:func:`token_texts_with_lines` and each token's pygments type."""
    fast = _fast(lexer) if engine == "fast" else None
    if fast is None:
        typed = list(significant_typed_tokens(lexer, text))
        return [v for _, v, _ in typed], [n for _, _, n in typed], [t for t, _, _ in typed]
    return fast.significant_tokens_with_lines_and_types(text)


def token_texts_with_lines(lexer: Lexer, text: str, engine: str = "fast") -> tuple[list[str], list[int]]:
    """:func:`token_texts` and the 1-based line each token starts on.

    Example:
        >>> from pygments.lexers import GoLexer
        >>> token_texts_with_lines(GoLexer(stripnl=False), "x := 1\\n// c\\ny")
        (['x', ':=', '1', 'y'], [1, 1, 1, 3])
    """
    fast = _fast(lexer) if engine == "fast" else None
    if fast is None:
        pairs = list(significant_tokens_with_lines(lexer, text))
        return [t for t, _ in pairs], [line for _, line in pairs]
    return fast.significant_tokens_with_lines(text)


def _fast(lexer: Lexer) -> FastLexer | None:
    """The fast engine of ``lexer``'s class where ``lexer`` has ``_instance``'s options, else
    ``None``: others may prepare, start or retype otherwise (PHP's ``startinline``)."""
    fast = _fast_for(type(lexer))  # type: ignore[arg-type]  # pygments is untyped: type[Any]
    return fast if fast is not None and (fast.lexer is lexer or fast.lexer.options == lexer.options) else None


@functools.lru_cache(maxsize=256)
def _fast_for(cls: type[Lexer]) -> FastLexer | None:  # once per class and process, of _instance(cls)
    if not supported(cls):
        return None
    try:
        return FastLexer(_instance(cls))  # type: ignore[arg-type]
    except Exception:  # a lexer whose rules we cannot analyse: pygments it is
        return None
