"""What a pygments rule's regular expression allows: joining it with others, and its first characters.

The fast engine (:mod:`.fastlex`) joins the rules of a lexer state into one pattern of
alternatives. That is exact only for a pattern that keeps its meaning inside a group:
:func:`embeddable` parses it and refuses backreferences, named groups and conditionals, and
:func:`scoped` turns a leading global flag group like ``(?i)`` into a scoped one.
:func:`first_chars` tells which ASCII characters a parsed pattern can start with, so the
engine can try at each position only the rules that may match there.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterator
from typing import Any

if sys.version_info >= (3, 11):  # the regex parser; sre_parse is its deprecated alias
    from re import _parser as parser  # type: ignore[attr-defined]
else:  # pragma: no cover - Python 3.10
    import sre_parse as parser

__all__ = ["ASCII", "embeddable", "first_chars", "own_flags", "parser", "scoped"]

#: Characters below this code get a narrowed pattern each; the others use the full one.
ASCII = 128
_ANY = None  # "any character may start a match"

_GLOBAL_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")

_INLINE = {
    "a": re.ASCII,
    "i": re.IGNORECASE,
    "L": re.LOCALE,
    "m": re.MULTILINE,
    "s": re.DOTALL,
    "u": re.UNICODE,
    "x": re.VERBOSE,
}


def own_flags(pattern: re.Pattern[str]) -> int:
    """The flags a pattern was compiled with, less UNICODE and its own leading ``(?flags)``."""
    m = _GLOBAL_FLAGS.match(pattern.pattern)
    inline = 0
    for letter in m.group(1) if m else "":
        inline |= _INLINE[letter]
    return pattern.flags & ~re.UNICODE & ~inline


def scoped(source: str) -> str | None:
    """A leading global flag group like ``(?i)`` turned into a scoped ``(?i:...)``."""
    m = _GLOBAL_FLAGS.match(source)
    if m is None:
        return source
    if "(?" + m.group(1) + ")" in source[m.end() :]:
        return None
    return f"(?{m.group(1)}:{source[m.end() :]})"


def embeddable(source: str, flags: int) -> Any:
    """The parsed pattern if it is safe to embed (no backreferences, named groups or
    conditionals), else ``None``."""
    try:
        parsed = parser.parse(source, flags)
    except re.error:
        return None
    if parsed.state.groupdict or _has_groupref(parsed):
        return None
    return parsed


def _has_groupref(node: Any) -> bool:
    for op, arg in node:
        name = str(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS", "GROUPREF_IGNORE", "GROUPREF_UNI_IGNORE", "GROUPREF_LOC_IGNORE"):
            return True
        for child in _children(arg):
            if _has_groupref(child):
                return True
    return False


def _children(arg: Any) -> Iterator[Any]:
    if isinstance(arg, parser.SubPattern):
        yield arg
    elif isinstance(arg, (tuple, list)):
        for item in arg:
            yield from _children(item)


@functools.lru_cache(maxsize=64)
def _category(name: str, flags: int) -> frozenset[int]:
    probe = {
        "CATEGORY_DIGIT": r"\d",
        "CATEGORY_SPACE": r"\s",
        "CATEGORY_WORD": r"\w",
        "CATEGORY_NOT_DIGIT": r"\D",
        "CATEGORY_NOT_SPACE": r"\S",
        "CATEGORY_NOT_WORD": r"\W",
    }.get(name)
    if probe is None:
        return frozenset(range(ASCII))  # unknown category: any ASCII character
    rx = re.compile(probe, flags & (re.ASCII | re.UNICODE))
    return frozenset(c for c in range(ASCII) if rx.match(chr(c)))


def _with_case(chars: set[int]) -> set[int]:
    out = set(chars)
    for c in chars:
        swapped = chr(c).swapcase()
        if len(swapped) == 1 and ord(swapped) < ASCII:
            out.add(ord(swapped))
    return out


def first_chars(items: Any, flags: int) -> tuple[set[int] | None, bool]:
    """ASCII codes a parsed pattern can start with (``None``: any), and whether it can match empty."""
    chars: set[int] = set()
    for op, arg in items:
        found, nullable = _first_item(str(op), arg, flags)
        if found is _ANY:
            return _ANY, False
        chars |= found
        if not nullable:
            return chars, False
    return chars, True


def _first_item(op: str, arg: Any, flags: int) -> tuple[set[int] | None, bool]:
    ignorecase = bool(flags & re.IGNORECASE)
    if op == "LITERAL":
        if arg >= ASCII:
            return (_ANY, False) if ignorecase else (set(), False)  # non-ASCII: the full pattern handles it
        return (_with_case({arg}) if ignorecase else {arg}), False
    if op == "IN":
        return _first_in(arg, flags), False
    if op in ("AT", "ASSERT", "ASSERT_NOT"):
        return set(), True  # zero-width: what follows decides
    if op == "SUBPATTERN":
        _, add, remove, sub = arg
        return first_chars(sub, (flags | add) & ~remove)
    if op == "ATOMIC_GROUP":
        return first_chars(arg, flags)
    if op == "BRANCH":
        union: set[int] = set()
        any_nullable = False
        for branch in arg[1]:
            found, nullable = first_chars(branch, flags)
            if found is _ANY:
                return _ANY, False
            union |= found
            any_nullable = any_nullable or nullable
        return union, any_nullable
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _, sub = arg
        found, nullable = first_chars(sub, flags)
        return found, nullable or low == 0
    return _ANY, False  # ANY, NOT_LITERAL, CATEGORY outside a set, group references, ...


def _first_in(items: Any, flags: int) -> set[int] | None:
    chars: set[int] = set()
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            return _ANY
        if name == "LITERAL":
            if arg >= ASCII and flags & re.IGNORECASE:
                return _ANY
            chars.add(arg)
        elif name == "RANGE":
            low, high = arg
            if high >= ASCII and flags & re.IGNORECASE:
                return _ANY
            chars.update(range(low, min(high, ASCII - 1) + 1))
        elif name == "CATEGORY":
            chars |= _category(str(arg), flags)
        else:
            return _ANY
    chars = {c for c in chars if c < ASCII}
    return _with_case(chars) if flags & re.IGNORECASE else chars
