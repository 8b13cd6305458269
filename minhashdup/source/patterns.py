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
from collections.abc import Callable, Iterator
from typing import Any, cast

if sys.version_info >= (3, 11):  # the regex parser and compiler; sre_* are their deprecated aliases
    from re import _compiler as compiler  # type: ignore[attr-defined]
    from re import _parser as parser  # type: ignore[attr-defined]
else:  # pragma: no cover - Python 3.10
    import sre_compile as compiler
    import sre_parse as parser

__all__ = [
    "ASCII",
    "SPACES",
    "compiler",
    "embeddable",
    "first_chars",
    "line_anchored",
    "may_end_with",
    "may_start",
    "one_char_run",
    "own_flags",
    "parser",
    "run_then",
    "scoped",
]

#: Characters below this code get a narrowed pattern each; the others use the full one.
ASCII = 128
_ANY = None  # "any character may start a match"

#: Every character ``str.isspace`` (and so ``\\s``) holds: none is past U+3000 (a test checks
#: the whole of Unicode, so a Python whose tables add one fails there, not here).
SPACES = tuple(c for c in range(0x3001) if chr(c).isspace())

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
    if parsed.state.groupdict or holds(parsed, lambda op, _: str(op) in _GROUPREFS):
        return None
    return parsed


_GROUPREFS = ("GROUPREF", "GROUPREF_EXISTS", "GROUPREF_IGNORE", "GROUPREF_UNI_IGNORE", "GROUPREF_LOC_IGNORE")


def holds(items: Any, test: Callable[[Any, Any], bool]) -> bool:
    """Whether a parsed pattern holds a node ``(op, arg)`` that passes ``test``, at any depth.

    Example:
        >>> holds(parser.parse(r"a(?:b|^c)"), lambda op, arg: str(arg) == "AT_BEGINNING")
        True
    """
    return any(test(op, arg) or any(holds(child, test) for child in _children(arg)) for op, arg in items)


def _children(arg: Any) -> Iterator[Any]:
    if isinstance(arg, parser.SubPattern):
        yield arg
    elif isinstance(arg, (tuple, list)):
        for item in arg:
            yield from _children(item)


_TYPES = re.ASCII | re.UNICODE | re.LOCALE  # one of them at most: which characters \\w and \\s mean


def inner_flags(flags: int, add: int, remove: int) -> int:
    """The flags inside a group ``(?add-remove:...)`` met under ``flags``: a type flag it
    adds (``(?a:``) replaces the one outside, as the regex compiler has it.

    Example:
        >>> inner_flags(re.UNICODE | re.MULTILINE, re.ASCII, 0) == re.ASCII | re.MULTILINE
        True
    """
    if add & _TYPES:
        flags &= ~_TYPES
    return (flags | add) & ~remove


_PROBES = {  # a regex category, and a pattern that tests a character for it
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_NOT_WORD": r"\W",
}


@functools.lru_cache(maxsize=64)
def _category(name: str, flags: int) -> frozenset[int]:
    probe = _PROBES.get(name)
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
        return first_chars(sub, inner_flags(flags, add, remove))
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
    if items and str(items[0][0]) == "NEGATE":  # [^...]: the ASCII characters it holds, one by one
        if flags & re.IGNORECASE:
            return _ANY
        held = [_in_set(items, c, flags) for c in range(ASCII)]
        if None in held:
            return _ANY
        return {c for c, inside in enumerate(held) if inside}
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


def one_char_run(items: Any) -> bool:
    """Whether a parsed pattern matches one or more characters of one set, nothing else (``\\n``,
    ``\\s+``, ``[ \\t]+``): it matches at any character of its set, and only there.

    Example:
        >>> [one_char_run(parser.parse(p)) for p in (r"\\n", r"\\s+", r"[ \\t]+?", r"\\s*", r"\\s{2}", r"\\s+$")]
        [True, True, True, False, False, False]
    """
    if len(items) != 1:
        return False
    op, arg = items[0]
    if str(op) in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, sub = arg
        if low != 1 or high < 1 or len(sub) != 1:
            return False
        op, arg = sub[0]
    return str(op) in ("LITERAL", "IN")


def may_start(items: Any, code: int, flags: int) -> bool:
    """Whether a parsed pattern may match from a position holding character ``code`` (any
    code point): ``False`` only when it surely cannot; a pattern that can match empty may.

    Example:
        >>> [may_start(parser.parse(p), 0xA0, 0) for p in (r"\\n", r"\\s+", r"[^\\W\\d]\\w*", r"x|\\S", ".")]
        [False, True, False, False, True]
    """
    may, nullable = _may(items, code, flags, 1)
    return may or nullable


def may_end_with(items: Any, code: int, flags: int) -> bool:
    """Whether a parsed pattern's match may end with character ``code`` (``False`` only when it
    surely cannot; a pattern that can match empty may).

    Example:
        >>> [may_end_with(parser.parse(p), 10, 0) for p in (r"//.*?$", r"//.*\\n", r"[^\\S\\n]+", r"a(?s:.)", r"\\n?x")]
        [False, True, False, True, False]
    """
    may, nullable = _may(items, code, flags, -1)
    return may or nullable


def line_anchored(items: Any) -> bool:
    """Whether a parsed pattern can only match at a line's start (it begins with ``^``, or
    ``\\A``): where the character before is not a line end, it cannot match.

    Example:
        >>> [line_anchored(parser.parse(p, re.M)) for p in (r"^\\s*#", r"\\A#!", r"(^a|^b)", r"a|^b", r"(?<=\\n)x")]
        [True, True, True, False, False]
    """
    if not items:
        return False
    op, arg = items[0]
    name = str(op)
    if name == "AT":
        return str(arg) in ("AT_BEGINNING", "AT_BEGINNING_LINE", "AT_BEGINNING_STRING")
    if name == "SUBPATTERN":
        return line_anchored(arg[3])
    if name == "BRANCH":
        return all(line_anchored(branch) for branch in arg[1])
    return False


def run_then(items: Any, flags: int) -> tuple[re.Pattern[str], list[Any]] | None:
    """A line-anchored pattern as ``^``, a greedy run of one set and what follows: the set,
    compiled, and the items after the run (groups that open at the run are opened:
    ``^(\\s*(?:/x)?)(#)`` gives ``\\s`` and ``(?:/x)?(#)``); ``None`` for any other shape.

    Example:
        >>> run, rest = run_then(parser.parse(r"^(\\s*(?:/x)?)(#)", re.M), re.M)
        >>> bool(run.fullmatch("\\n")), first_chars(rest, re.M)
        (True, ({35, 47}, False))
    """
    rest = _opened(list(items))
    if not rest or str(rest[0][0]) != "AT" or str(rest[0][1]) not in ("AT_BEGINNING", "AT_BEGINNING_STRING"):
        return None
    rest = _opened(rest[1:])
    if not rest or str(rest[0][0]) not in ("MAX_REPEAT", "POSSESSIVE_REPEAT"):
        return None
    low, high, sub = rest[0][1]
    if low != 0 or high != parser.MAXREPEAT or len(sub) != 1 or str(sub[0][0]) not in ("LITERAL", "IN"):
        return None
    return _item_pattern(sub[0], flags), rest[1:]


def _opened(items: list[Any]) -> list[Any]:
    """``items`` with the groups they start with opened in place (where no flag changes)."""
    while items and str(items[0][0]) == "SUBPATTERN" and not items[0][1][1] and not items[0][1][2]:
        items = [*items[0][1][3], *items[1:]]
    return items


def _may(items: Any, code: int, flags: int, way: int) -> tuple[bool, bool]:
    """(may the items start (``way`` 1) or end (-1) with ``code``, can they match empty)."""
    for op, arg in items if way > 0 else reversed(items):
        may, nullable = _may_item(str(op), arg, code, flags, way)
        if may:
            return True, False
        if not nullable:
            return False, False
    return False, True


def _may_item(op: str, arg: Any, code: int, flags: int, way: int) -> tuple[bool, bool]:
    if op in ("LITERAL", "NOT_LITERAL", "IN"):
        if flags & re.IGNORECASE:
            return _one_char(op, arg, code, flags), False
        if op == "IN":
            inside = _in_set(arg, code, flags)
            return inside is None or inside, False
        return (arg == code) == (op == "LITERAL"), False
    if op == "ANY":
        return code != 10 or bool(flags & re.DOTALL), False
    if op in ("AT", "ASSERT", "ASSERT_NOT"):
        return False, True  # zero-width: it only narrows what is next to it
    if op == "SUBPATTERN":
        _, add, remove, sub = arg
        return _may(sub, code, inner_flags(flags, add, remove), way)
    if op == "ATOMIC_GROUP":
        return _may(arg, code, flags, way)
    if op == "BRANCH":
        found = [_may(branch, code, flags, way) for branch in arg[1]]
        return any(m for m, _ in found), any(n for _, n in found)
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _, sub = arg
        may, nullable = _may(sub, code, flags, way)
        return may, nullable or low == 0
    return True, False  # group references, ...: it may


def _one_char(op: str, arg: Any, code: int, flags: int) -> bool:
    """Whether one character-matching item (a literal, its negation, a set) matches ``code``
    under ``flags``, asked of the regex engine itself: case folding has too many special cases
    to reason about (the Kelvin sign matches ``k``)."""
    return _item_pattern((getattr(parser, op), arg), flags).fullmatch(chr(code)) is not None


def _item_pattern(item: tuple[Any, Any], flags: int) -> re.Pattern[str]:
    """One parsed item (a literal, a set...) compiled alone under ``flags``."""
    state = parser.State()
    state.flags = flags
    return cast(re.Pattern[str], compiler.compile(parser.SubPattern(state, [item]), flags))


def _in_set(items: Any, code: int, flags: int) -> bool | None:
    """Whether ``code`` is in a parsed character set (``None``: cannot tell)."""
    negate, hit = False, False
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            hit = hit or arg == code
        elif name == "RANGE":
            hit = hit or arg[0] <= code <= arg[1]
        elif name == "CATEGORY":
            probe = _PROBES.get(str(arg))
            if probe is None:
                return None
            if code < ASCII:
                hit = hit or code in _category(str(arg), flags)
            else:
                hit = hit or re.match(probe, chr(code), flags & (re.ASCII | re.UNICODE)) is not None
        else:
            return None
    return hit != negate
