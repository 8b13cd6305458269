"""Rules a state's pattern cannot hold, and where the state is joined around them.

A rule with a backreference (C++'s raw string ``R"delim(...)delim"``), a named group or a
conditional cannot be an alternative of a joined pattern (:func:`.patterns.embeddable`): its
group numbers would change. Where such a rule can only start with a few ASCII characters, none
of them whitespace, the state is still joined, without it: at a position holding any other
character (or past ASCII, or at the text's end) the rule cannot match, so pygments' first
matching rule there is the joined pattern's first matching alternative; at a position holding
one of its characters, the scan tries the state's rules one by one, as pygments does
(:meth:`.states.State.pattern_at`). C++'s statement and function-body states hold the raw-string
rule: before this, those states ran rule by rule everywhere (C++ lexed 1.35x faster than
pygments' own loop where C lexed 3x).

The rule must also be anchored nowhere at a line's start and unable to match empty: the
whitespace a state's tokens take after them (:mod:`.blanks`) is then never where it may start.
"""

from __future__ import annotations

import re
from typing import Any

from minhashdup.source.patterns import ASCII, SPACES, first_chars, inner_flags, line_anchored

#: The parsed items that match no character.
ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")


def apart_starts(parsed: Any) -> set[int] | None:
    """The ASCII characters a rule that cannot be joined (its pattern ``parsed``, under its own
    flags) may start with, where the state may be joined around it; ``None`` where it may not.

    Example:
        >>> from minhashdup.source.patterns import parser
        >>> raw = parser.parse(r'((?:[LuU]|u8)?R)(")([^\\\\()\\s]{,16})(\\()([\\s\\S]*?)(\\)\\3)(")')
        >>> sorted(map(chr, apart_starts(raw)))
        ['L', 'R', 'U', 'u']
        >>> apart_starts(parser.parse(r"(\\s*)(\\w+)\\1")) is None  # may start with whitespace
        True
    """
    flags = parsed.state.flags
    chars, nullable = first_chars(parsed, flags)
    if chars is None or nullable or not chars or line_anchored(parsed):
        return None
    if any(code in chars for code in SPACES if code < ASCII) or not ascii_start(list(parsed), flags):
        return None
    return chars


#: The ASCII characters that, under ``re.IGNORECASE``, also match one past ASCII: I and i match
#: U+0130 and U+0131, K and k the Kelvin sign, S and s the long s (a test asks the regex engine
#: about every character).
FOLDS_PAST_ASCII = frozenset(map(ord, "IiKkSs"))


def ascii_start(items: list[Any], flags: int) -> bool:
    """Whether every match of the parsed items starts with an ASCII character (``False`` where
    unsure: categories, negated sets; or where one may be empty)."""
    every, nullable = _ascii(items, flags)
    return every and not nullable


def _ascii(items: Any, flags: int) -> tuple[bool, bool]:
    """(whether every match that starts within the items starts with an ASCII character, whether
    the items can match empty)."""
    for op, arg in items:
        every, nullable = _ascii_item(str(op), arg, flags)
        if not every:
            return False, False
        if not nullable:
            return True, False
    return True, True


def _ascii_item(name: str, arg: Any, flags: int) -> tuple[bool, bool]:
    # Under IGNORECASE, the letters of FOLDS_PAST_ASCII match characters past ASCII too.
    past = FOLDS_PAST_ASCII if flags & re.IGNORECASE else frozenset()
    if name in ZERO_WIDTH:
        return True, True
    if name == "LITERAL":
        return arg < ASCII and arg not in past, False
    if name == "IN":
        return all(_ascii_member(str(op), a, past) for op, a in arg), False
    if name == "SUBPATTERN":  # its own flags: pygments' leading (?i) is such a group (scoped)
        return _ascii(arg[3], inner_flags(flags, arg[1], arg[2]))
    if name == "BRANCH":
        found = [_ascii(branch, flags) for branch in arg[1]]
        return all(every for every, _ in found), any(nullable for _, nullable in found)
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        every, nullable = _ascii(arg[2], flags)
        return every, nullable or arg[0] == 0
    return False, False


def _ascii_member(op: str, arg: Any, past: frozenset[int]) -> bool:
    """Whether a member of a set matches only ASCII characters (``past``: those that do not)."""
    if op == "LITERAL":
        return bool(arg < ASCII) and arg not in past
    if op == "RANGE":
        return bool(arg[1] < ASCII) and not any(arg[0] <= c <= arg[1] for c in past)
    return False
