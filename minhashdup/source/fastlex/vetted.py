"""Lexers whose own token loop the fast engine reproduces although it is not ``RegexLexer``'s.

A lexer may define ``get_tokens_unprocessed`` around ``RegexLexer``'s. Where that only starts
from a stack its options choose and changes the *types* of some kept names (never a text, never
a comment or whitespace), the fast engine's texts are the lexer's, and its types are once
:func:`retyped` as the lexer's loop retypes them:

- C and C++ (``CFamilyLexer``): the names of types its options highlight, ``Name`` ->
  ``Keyword.Type``; CUDA: that, then its own word lists, ``Name`` -> ``Keyword.Type``,
  ``Name.Builtin``, ``Keyword.Pseudo``, ``Keyword.Reserved`` or ``Name.Function``;
- Objective-C and Objective-C++: that, then Cocoa's interfaces, protocols and primitives,
  ``Name`` or ``Name.Class`` -> ``Name.Builtin.Pseudo``; Swift: the Cocoa names alike;
- PHP: builtin functions, ``Name.Other`` -> ``Name.Builtin``; with ``startinline`` it starts in
  ``php`` on ``root`` (:func:`start`);
- Elixir: ``Name`` -> ``Keyword``, ``Operator.Word``, ``Keyword.Declaration``,
  ``Keyword.Namespace``, ``Name.Constant`` or ``Name.Builtin.Pseudo`` by its word lists, the
  first list holding the name deciding.

Lua's loop splits a dotted name into three tokens: a change of texts, so it is not here.

A ``using(this)`` piece is lexed by the fast engine from the callback's stack, where pygments
calls the lexer's own loop again: the same for every lexer here (their loops pass the stack on,
and retyping twice changes nothing). A loop to vet must be read for that too: one that ignored
the stack it is given, or a ``using(this)`` under PHP's ``startinline``, would differ.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from typing import Any, NamedTuple

from pygments.lexer import Lexer
from pygments.token import Keyword, Name, Operator, _TokenType

#: One retyping: each token of one of the ``old`` types whose text is one of ``names`` is ``new``.
Retype = tuple[tuple[_TokenType, ...], _TokenType, Collection[str]]
#: The retypings of a loop composed: for a type, the texts whose type changes, and to what.
Retyping = dict[_TokenType, dict[str, _TokenType]]


class _Classes(NamedTuple):
    cfamily: Any
    cuda: Any
    objective: tuple[Any, ...]  # Objective-C, Objective-C++
    swift: Any
    php: Any
    elixir: Any


@functools.cache
def _classes() -> _Classes:
    from pygments.lexers.c_cpp import CFamilyLexer
    from pygments.lexers.c_like import CudaLexer
    from pygments.lexers.erlang import ElixirLexer
    from pygments.lexers.objective import ObjectiveCLexer, ObjectiveCppLexer, SwiftLexer
    from pygments.lexers.php import PhpLexer

    return _Classes(CFamilyLexer, CudaLexer, (ObjectiveCLexer, ObjectiveCppLexer), SwiftLexer, PhpLexer, ElixirLexer)


@functools.cache
def overrides() -> frozenset[type]:
    """The classes whose ``get_tokens_unprocessed`` is vetted (the module docstring)."""
    c = _classes()
    # Objective-C's loop is defined by the class objective() makes around its C or C++ lexer.
    return frozenset({c.cfamily, c.cuda, c.php, c.swift, c.elixir, *(cls.__mro__[1] for cls in c.objective)})


def retyping(lexer: Lexer) -> Retyping:
    """How ``lexer``'s loop retypes tokens, by its options as its loop reads them: its
    :func:`rules` composed in their order (empty for a loop that retypes nothing)."""
    found = rules(lexer)
    table: Retyping = {}
    for old in {t for olds, _, _ in found for t in olds}:
        changed = table.setdefault(old, {})
        for text in set().union(*(names for olds, _, names in found if old in olds)):
            now = old
            for olds, new, names in found:
                if now in olds and text in names:
                    now = new
            if now is not old:
                changed[text] = now
    return {old: changed for old, changed in table.items() if changed}


def rules(lexer: Lexer) -> list[Retype]:
    """How ``lexer``'s loop retypes tokens, rule by rule in its order."""
    c = _classes()
    found: list[Retype] = []
    if isinstance(lexer, c.cfamily):
        options = (
            ("stdlibhighlighting", "stdlib_types"),
            ("c99highlighting", "c99_types"),
            ("c11highlighting", "c11_atomic_types"),
            ("platformhighlighting", "linux_types"),
        )
        names = frozenset(n for on, kept in options if getattr(lexer, on, False) for n in getattr(lexer, kept, ()))
        found.append(((Name,), Keyword.Type, names))
    if isinstance(lexer, c.cuda):
        found += _word_lists(
            lexer,
            ("variable_qualifiers", Keyword.Type),
            ("vector_types", Keyword.Type),
            ("variables", Name.Builtin),
            ("execution_confs", Keyword.Pseudo),
            ("function_qualifiers", Keyword.Reserved),
            ("functions", Name.Function),
        )
    if isinstance(lexer, (*c.objective, c.swift)):
        from pygments.lexers._cocoa_builtins import COCOA_INTERFACES, COCOA_PRIMITIVES, COCOA_PROTOCOLS

        cocoa = frozenset(COCOA_INTERFACES) | frozenset(COCOA_PROTOCOLS) | frozenset(COCOA_PRIMITIVES)
        found.append(((Name, Name.Class), Name.Builtin.Pseudo, cocoa))
    if isinstance(lexer, c.php):
        found.append(((Name.Other,), Name.Builtin, lexer._functions))
    if isinstance(lexer, c.elixir):
        found += _word_lists(
            lexer,
            ("KEYWORD", Keyword),
            ("KEYWORD_OPERATOR", Operator.Word),
            ("BUILTIN", Keyword),
            ("BUILTIN_DECLARATION", Keyword.Declaration),
            ("BUILTIN_NAMESPACE", Keyword.Namespace),
            ("CONSTANT", Name.Constant),
            ("PSEUDO_VAR", Name.Builtin.Pseudo),
        )
    return [rule for rule in found if rule[2]]


def _word_lists(lexer: Lexer, *lists: tuple[str, _TokenType]) -> list[Retype]:
    """``Name`` retyped by the lexer's word lists (attributes), the first list holding a name deciding."""
    return [((Name,), new, frozenset(getattr(lexer, words))) for words, new in lists]


def retyped(texts: list[str], types: list[_TokenType], table: Retyping) -> list[_TokenType]:
    """``types`` (in place) as the composed retyping ``table`` leaves them, in one pass.

    Example:
        >>> retyped(["x", "size_t"], [Name, Name], {Name: {"size_t": Keyword.Type}})
        [Token.Name, Token.Keyword.Type]
    """
    types[:] = [table[t].get(v, t) if t in table else t for v, t in zip(texts, types, strict=True)]
    return types


def start(lexer: Lexer) -> tuple[str, ...]:
    """The state stack ``lexer``'s loop starts from: PHP's ``startinline`` starts in ``php``."""
    return ("root", "php") if isinstance(lexer, _classes().php) and lexer.startinline else ("root",)
