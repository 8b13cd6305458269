"""Whitespace a token's regex call can take after it, keeping pygments' tokens exactly.

Between tokens, whitespace costs a regex call of its own per run: on Go, two calls in five.
Where a lexer state drops whitespace the same way wherever it stands, each token's alternative
in the joined pattern can end with a ``[...]*`` of it, and the scan skips the rest (whitespace
past ASCII) with one call.

The argument. Say a whitespace character *counts* when the first of the state's rules that may
start with it is a *run rule*: one set of whitespace, one or more times
(:func:`.patterns.one_char_run`), that holds the character, dropped and staying in the state.
Such a rule matches wherever its set's characters stand, and takes the longest stretch of them.
If every character of every such run's set counts too (checked over the whitespace characters:
a run holds whitespace only, :func:`blank_only`), then from a token's end, pygments'
tokens over the longest stretch of counting characters are run rules, each ending inside the
stretch or at its end (a run cannot take a character that does not count), all dropped: taking
the stretch with the token keeps the tokens kept and where the next one starts.

Rules anchored at a line's start (``^\\s*#`` in C, Python's docstring rule) may start with
whitespace, but only just after a line end. When they are all that stops the argument, it
still holds *within a line*: leave the line end out of the counting characters, and take a
stretch only after a token that cannot end with a line end (``//.*$`` may take it; ``\\n`` may
not). Then no position in the stretch is a line's start.

Taken only so far, C, C++, Java and Python pay a regex call per line end, and at every line
start inside a run of blank lines the anchored rules read all the blank lines left (``^\\s*#``
looks past them for a ``#``): quadratic in the blank lines, as in pygments itself. But say each
anchored rule that may start with a counting character is ``^``, a greedy run of one set, and a
rest that can neither match empty nor start with a counting character (C's ``^(\\s*)(#)``, its
labels' ``(^[ \\t]*)(name)(:)``). If its set holds the line end and every counting character,
its run from any line start of a stretch ends where the others' do, past the stretch: one answer
for all of them. If its set does not hold the line end, it fails on a blank line, and can match
only at the stretch's last line start. So a token may take the blank lines after it
(:attr:`Blanks.across`) once those rules, asked at the stretch's first line start (the token's
end if it may end with a line end, and just after the first line end), do not match; it stops
at the last line's start, whose indentation the scan lexes. Only the rules pygments tries there
count: those before the run rule of the line start's character (Java's labels come after its
rule for spaces, before its rule for ``\\n``: blank lines of spaces before a label are still
taken). And pygments must start a token at every line start of the stretch, where a tail may
stop: a line end is a token of its own (``\\n``, not ``\\n+``) and no other run holds one. Each
stretch is then read a bounded number of times: linear.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from typing import Any, NamedTuple, cast

from minhashdup.source.patterns import ASCII, SPACES, first_chars, line_anchored, may_start, one_char_run, run_then
from minhashdup.source.significant import DROP

_LINE_END = 10


class Facts(NamedTuple):
    """What the analysis needs of one rule, in the state's order."""

    kind: int  # its fast-path kind (states.SLOW: not on the fast path)
    blank: bool  # it matches whitespace only
    starts: tuple[set[int] | None, bool]  # its ASCII first characters (None: any), and nullable
    tree: Any  # its parsed pattern
    pattern: re.Pattern[str]  # compiled with the lexer's flags
    bare: str | None = None  # a line-anchored rule's text without capturing groups (None: unsure)


@dataclasses.dataclass(frozen=True)
class Blanks:
    """The whitespace a state's tokens take after them (:func:`blanks`)."""

    tail: str = ""  # appended to a fast alternative: "[...]*" of the counting ASCII characters
    wide: frozenset[int] = frozenset()  # the counting characters past ASCII, skipped by the scan
    within_line: bool = False  # only after tokens that cannot end with a line end, not at a line's start
    across: str = ""  # where the anchored rules allow (:func:`_across`): what a token takes instead
    across_end: str = ""  # the same, after a token that may end with a line end

    @functools.cached_property
    def skip(self) -> Callable[..., Any]:
        """The match of a stretch of ``wide`` characters, as group 1 (for a state with any)."""
        return re.compile("([" + "".join(f"\\U{c:08x}" for c in sorted(self.wide)) + "]*)").match


NONE = Blanks()


def blanks(rules: list[Facts]) -> Blanks:
    """The counting characters of a state (see the module docstring): everywhere or within a
    line, whichever counts more ASCII characters (everywhere on a tie), or none; within a line,
    the blank lines too where the anchored rules allow (:attr:`Blanks.across`).

    Python's root counts only the line end everywhere, and every other whitespace within a line.
    """
    everywhere = _counting(rules, within_line=False)
    within = _counting(rules, within_line=True)
    if within is None or (everywhere is not None and len(everywhere.tail) >= len(within.tail)):
        return everywhere or NONE
    across, across_end = _across(rules)
    return dataclasses.replace(within, across=across, across_end=across_end)


def _counting(rules: list[Facts], within_line: bool) -> Blanks | None:
    found = _counted(rules, within_line, line_end=not within_line)
    narrow = [c for c in found or () if c < ASCII]
    if found is None or not narrow:
        return None
    tail = "[" + "".join(f"\\x{c:02x}" for c in narrow) + "]*"
    return Blanks(tail, frozenset(c for c in found if c >= ASCII), within_line)


def _counted(rules: list[Facts], within_line: bool, line_end: bool) -> list[int] | None:
    """The counting characters (``within_line``: the rules anchored at a line's start left out;
    ``line_end``: the line end among those looked at), or ``None`` where a run holds one that
    does not count."""
    runs: set[int] = set()
    found: list[int] = []
    for code in SPACES:
        if code == _LINE_END and not line_end:
            continue
        i = _first_that_may_start(rules, code, within_line)
        if i is None:
            continue  # no rule: pygments' own way (an error token, or a line end's reset)
        rule = rules[i]
        if rule.kind == DROP and rule.blank and one_char_run(rule.tree) and _holds(rule, code):
            found.append(code)
            runs.add(i)
    if any(_holds(rules[i], c) and c not in found for i in runs for c in SPACES):
        return None
    return found


def _across(rules: list[Facts]) -> tuple[str, str]:
    """What a fast token takes after it where the line end counts but for the anchored rules,
    and these answer once per stretch (the module docstring): after a token that cannot end with
    a line end, and after one that may; ``("", "")`` where that does not hold.

    At a line start holding ``c``, pygments tries the anchored rules before ``c``'s run rule
    only: all of them before a line end's (Java's labels come before ``\\n``), fewer before a
    space's. So after the whitespace within the line and a line end, where the next line is
    blank: its blank lines, where the rules before every run rule fail at its start; else those
    that start with a space, where the rules before a space's run rule fail. After a token that
    may end with a line end, its end is asked first (a line start holding a line end only by
    the first rules). The rules are asked only where whitespace follows: the tail of a token
    followed by code costs two character tests."""
    found = _counted(rules, within_line=True, line_end=True)
    if found is None or _LINE_END not in found:
        return "", ""
    runs = {c: cast(int, _first_that_may_start(rules, c, within_line=True)) for c in found}
    # Every line start of a stretch must be where pygments starts a token, as a tail may stop
    # there: a line end is a token of its own (``\\n``, not ``\\n+``) and no other run holds one.
    line_end = rules[runs[_LINE_END]].tree
    if len(line_end) != 1 or str(line_end[0][0]) not in ("LITERAL", "IN"):
        return "", ""
    if any(_holds(rules[i], _LINE_END) for c, i in runs.items() if c != _LINE_END):
        return "", ""
    every = _guard(rules[: max(runs.values())], found)
    if every is None:
        return "", ""
    spaces = _ranges([c for c in found if c != _LINE_END])
    stretch = f"[{spaces}]*"
    lines = [f"{every}(?:{stretch}\\n)*"]
    at_end = [every]
    blank = _guard(rules[: max(i for c, i in runs.items() if c != _LINE_END)], found)
    if blank is not None and blank != every:
        lines.append(f"{blank}(?:[{spaces}]+\\n)*")
        at_end.append(f"{blank}(?!^\\n)")
    inline = f"{stretch}(?:\\n(?={stretch}\\n)(?:{'|'.join(lines)}))?"
    return inline, f"(?:(?=[{spaces}\\n])(?:{'|'.join(at_end)}){inline})?"


def _ranges(codes: list[int]) -> str:
    """The inside of a character set holding ``codes`` (sorted), runs of them as ranges.

    Example:
        >>> _ranges([9, 10, 11, 13, 0x2000, 0x2001, 0x2002])
        '\\\\x09-\\\\x0b\\\\x0d\\\\u2000-\\\\u2002'
    """
    parts, k = [], 0
    while k < len(codes):
        end = k
        while end + 1 < len(codes) and codes[end + 1] == codes[end] + 1:
            end += 1
        low, high = (f"\\x{c:02x}" if c < 256 else f"\\u{c:04x}" for c in (codes[k], codes[end]))
        parts.append(low if end == k else f"{low}-{high}")
        k = end + 1
    return "".join(parts)


def _guard(rules: list[Facts], counting: list[int]) -> str | None:
    """A lookahead that fails where one of the anchored ``rules`` that may start with a counting
    character matches (``""`` for none); ``None`` if one does not answer once per stretch."""
    guards = []
    for rule in rules:
        if not line_anchored(rule.tree) or not any(_may_start(rule, c) for c in counting):
            continue
        if rule.bare is None or not _answer_once(rule, counting):
            return None
        guards.append(f"(?:{rule.bare})")
    return "(?!" + "|".join(guards) + ")" if guards else ""


def _may_start(rule: Facts, code: int) -> bool:
    """Whether the rule may match from a position holding ``code``: by the narrowing's first
    characters below ASCII, by :func:`.patterns.may_start` past it."""
    if code >= ASCII:
        return may_start(rule.tree, code, rule.tree.state.flags)
    return rule.starts[0] is None or rule.starts[1] or code in rule.starts[0]


def _answer_once(rule: Facts, counting: list[int]) -> bool:
    """Whether an anchored rule gives the line starts of a stretch of ``counting`` characters one
    answer: ``^``, a greedy run of one set, then a rest that can neither match empty nor start
    with a counting character. A set that holds the line end must hold them all (its run from
    any line start then ends where the others' do); one that does not fails at every line start
    but the last, which a tail never passes. (A backreference to the run could answer otherwise:
    such rules are not joined at all.)"""
    flags = rule.tree.state.flags
    shape = run_then(rule.tree, flags)
    if shape is None:
        return False
    run, rest = shape
    chars, nullable = first_chars(rest, flags)
    if chars is None or nullable or any(c in chars for c in counting if c < ASCII):
        return False
    if any(may_start(rest, c, flags) for c in counting if c >= ASCII):
        return False
    return run.fullmatch(chr(_LINE_END)) is None or all(run.fullmatch(chr(c)) for c in counting)


def _first_that_may_start(rules: list[Facts], code: int, within_line: bool) -> int | None:
    """The first rule that :func:`_may_start` from a position holding ``code``; ``within_line``:
    at a position that is not a line's start."""
    for i, rule in enumerate(rules):
        if not (within_line and line_anchored(rule.tree)) and _may_start(rule, code):
            return i
    return None


def _holds(rule: Facts, code: int) -> bool:
    """Whether a run rule's set holds the character (its pattern matches it alone)."""
    return rule.pattern.fullmatch(chr(code)) is not None


def blank_only(items: Any) -> bool:
    """Whether a parsed pattern can match whitespace only (zero-width parts allowed), so that
    a ``Text`` rule's tokens are always blank, hence dropped.

    Example:
        >>> from minhashdup.source.patterns import parser
        >>> [blank_only(parser.parse(p)) for p in (r"[^\\S\\n]+", r"\\s*$", r"\\\\\\n", " |x")]
        [True, True, False, False]
    """
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            ok = chr(arg).isspace()
        elif name == "IN":
            ok = _blank_set(arg)
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            ok = True  # zero-width: consumes nothing
        elif name == "SUBPATTERN":
            ok = blank_only(arg[3])
        elif name == "ATOMIC_GROUP":
            ok = blank_only(arg)
        elif name == "BRANCH":
            ok = all(blank_only(branch) for branch in arg[1])
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            ok = blank_only(arg[2])
        else:
            ok = False  # any character, a negated literal, a group reference, ...
        if not ok:
            return False
    return True


def _blank_set(items: Any) -> bool:
    """Whether a parsed character set holds whitespace only."""
    names = [(str(op), arg) for op, arg in items]
    if names and names[0][0] == "NEGATE":  # everything but a set that holds every non-space
        return any(op == "CATEGORY" and str(arg).endswith("NOT_SPACE") for op, arg in names[1:])
    for op, arg in names:
        if op == "LITERAL":
            ok = chr(arg).isspace()
        elif op == "RANGE":
            ok = arg[1] - arg[0] < 64 and all(chr(c).isspace() for c in range(arg[0], arg[1] + 1))
        else:
            ok = op == "CATEGORY" and str(arg).endswith("_SPACE") and not str(arg).endswith("NOT_SPACE")
        if not ok:
            return False
    return True
