"""Renamed clones: tokens mapped to placeholders by their pygments type before shingling.

A copy whose variables were renamed shares few verbatim shingles with its original (a median
J of about 0.17 on copies made by a renaming tool). With ``--ignore-identifiers`` every name
becomes one placeholder, with ``--ignore-literals`` every string and number another; keywords,
operators, punctuation and builtins keep their text. Names that a renaming tool never touches
keep it too: builtins (``len``, ``print``), exceptions, and magic names (``__init__``); ``self``
and ``cls`` are names like any parameter (a minifier renames them).

Inside each shingle the names are told apart by where they repeat, not by what they are
called: ``x = x + y`` and ``a = a + b`` give the same shingle, ``x = y + x`` another (a
consistent renaming inside the shingle, ``$1 = $1 + $2``). :func:`normalised` gives, beside the
placeholder texts, each name's own text; :func:`minhashdup.core.shingles.name_links` turns them
into the links the shingle hash takes in.

Layout stays invisible: in a language where a line break ends a statement, a ``;`` that joins
two statements on one line (a minifier's output) is dropped, so it does not break a shingle.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

from pygments.token import Literal, Name, Punctuation, String, _TokenType

#: The placeholders: a NUL never occurs in a scanned file (such a file is ``binary``).
IDENTIFIER = "\0name"
LITERAL = "\0literal"

#: Names that renaming tools leave alone: they keep their text.
_KEPT_NAMES = (Name.Builtin, Name.Exception, Name.Function.Magic, Name.Variable.Magic, Name.Tag, Name.Entity)

#: pygments lexers (by name) of languages where a line break ends a statement, so that ``;``
#: is layout.
NEWLINE_STATEMENTS = frozenset(
    {
        "Python",
        "Python 2.x",
        "Cython",
        "Go",
        "JavaScript",
        "TypeScript",
        "JSX",
        "TSX",
        "Ruby",
        "Lua",
        "Swift",
        "Kotlin",
        "Scala",
        "Groovy",
        "Julia",
        "Bash",
    }
)


@dataclasses.dataclass(frozen=True)
class Normalisation:
    """Which tokens become placeholders.

    Example:
        >>> Normalisation(identifiers=True).key, Normalisation().key
        ('identifiers', '')
    """

    identifiers: bool = False
    literals: bool = False

    @property
    def active(self) -> bool:
        """Whether any token is replaced."""
        return self.identifiers or self.literals

    @property
    def key(self) -> str:
        """What shapes the shingles, for cache keys: ``""`` when nothing is replaced."""
        return "+".join(name for name, on in (("identifiers", self.identifiers), ("literals", self.literals)) if on)


#: Nothing replaced: the tokens as they are.
VERBATIM = Normalisation()


class Normalised(NamedTuple):
    """Tokens after :func:`normalised`: their texts, each one's own name (``None`` unless
    identifiers are replaced; ``""`` for a token that is not a replaced name), and the 1-based
    line of each (when lines were given)."""

    texts: list[str]
    names: list[str] | None
    lines: list[int] | None = None


def normalised(
    texts: list[str], types: list[_TokenType], lexer: str, norm: Normalisation, lines: list[int] | None = None
) -> Normalised:
    """``texts`` with names and literals replaced as ``norm`` says, each token's own name, and
    the lines of the tokens kept (``lines`` gives each input token's).

    A run of string tokens (pygments cuts ``"a\\nb"`` into quotes, text and escapes) is one
    literal; a ``;`` is dropped in a language of :data:`NEWLINE_STATEMENTS`.

    Example:
        >>> from pygments.lexers import PythonLexer
        >>> from minhashdup.source.significant import significant_tokens_with_types
        >>> texts, types = significant_tokens_with_types(PythonLexer(), 'x = len(y); s = "a"')
        >>> out, names, _ = normalised(texts, types, "Python", Normalisation(True, True))
        >>> [t.replace(IDENTIFIER, "$").replace(LITERAL, "L") for t in out], names
        (['$', '=', 'len', '(', '$', ')', '$', '=', 'L'], ['x', '', '', '', 'y', '', 's', '', ''])
    """
    if not norm.active:
        return Normalised(texts, None, lines)
    drop_semicolons = lexer in NEWLINE_STATEMENTS
    out: list[str] = []
    names: list[str] = []
    kept: list[int] = []
    in_string = False
    for index, (text, ttype) in enumerate(zip(texts, types, strict=True)):
        kind = _kind(ttype)
        if kind == _PUNCTUATION and drop_semicolons and text == ";":
            continue
        if norm.literals and kind in (_STRING, _NUMBER):
            if kind == _STRING and in_string:
                continue  # the rest of one string: the literal is there already
            in_string = kind == _STRING
            text, name = LITERAL, ""
        else:
            in_string = False
            name = text if norm.identifiers and kind == _NAME else ""
            text = IDENTIFIER if name else text
        out.append(text)
        names.append(name)
        kept.append(index)
    return Normalised(out, names if norm.identifiers else None, None if lines is None else [lines[i] for i in kept])


_OTHER, _NAME, _STRING, _NUMBER, _PUNCTUATION = range(5)


@functools.lru_cache(maxsize=4096)
def _kind(ttype: _TokenType) -> int:
    """What a token type is to the normalisation (decided once per type)."""
    if ttype in Name:
        if ttype in Name.Builtin.Pseudo:  # self, cls: parameters by convention, renamed by minifiers
            return _NAME
        return _OTHER if any(ttype in kept for kept in _KEPT_NAMES) else _NAME
    if ttype in String:
        return _STRING
    if ttype in Literal:
        return _NUMBER  # numbers, dates: one token, one literal
    return _PUNCTUATION if ttype in Punctuation else _OTHER
