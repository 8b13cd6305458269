"""Rules whose failing attempts read far: a guard that answers for a whole run of positions.

Some rules look for a declaration across any number of words and line ends before the character
that makes it one: Java's method rule (words and whitespace, lazily, then a name and ``(``), C#'s,
C's function rule. Where that character never comes, an attempt at each word reads on to the
end of the run of words, and every word of the run starts an attempt: a file of one word per
line costs time quadratic in its length (80 KB of C# took the whole ``--lex-timeout``), in
pygments as here.

Such a rule's pattern, read as a sequence (groups opened), is a *prefix* whose every character
is matched by one of a few single-character items (a literal, a set, ``\\w``, ``\\s``...), then a
character ``c`` none of them matches (the closer: ``(``). A match at ``q`` is the prefix's text,
then ``c``: so ``c`` is the first character at or after ``q`` that none of the prefix's items
matches. The guard finds that first character once for a run of such characters
(:meth:`Guard.live`, remembered for the run's positions): where it is not ``c``, the rule cannot
match anywhere in the run. It is asked only where the run is long: before the rule's alternative,
the joined pattern holds a *signal*, a group matching empty where at least :data:`SIGNAL_RUN`
characters of a set holding the prefix's follow (one look-ahead, in C, where the rule's own
attempt would read those characters anyway). Where the signal matches, the scan asks the
:class:`Resolver`, which tries the same pattern with the signal silenced and, where the guard says
so, the rule too (its alternative made one that never matches: the groups keep their numbers).
Whichever pattern answers, its match is the one the whole pattern gives without a signal,
pygments' own. Elsewhere (nearly every position of real code) nothing but the look-ahead is added.

A guard is set only where the prefix holds an unbounded repeat that can take whitespace and
something else (words across spaces or lines), and nothing before that repeat must match (but
for anchors and optional items): elsewhere an attempt ends at the next space, or starts only
where a keyword stands (JavaScript's ``super(...)``), and the guard would cost more than it saves.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from minhashdup.source.patterns import ASCII, compiler, first_chars, inner_flags, parser, run_then

_ATOMS = ("LITERAL", "NOT_LITERAL", "IN")
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
_ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")
#: A run of the atoms gives up nothing: possessive where Python has it (3.11), else greedy
#: (the same match: nothing after the run could make it shorter), which keeps each step's state.
_RUN = getattr(parser, "POSSESSIVE_REPEAT", parser.MAX_REPEAT)
_SPACES = (" ", "\t", "\n")
_PROBES = ("a", "x", "_", "0")  # word characters: a repeat taking one and whitespace crosses words


class _GiveUp(Exception):
    """A pattern node whose characters this module does not reduce to single-character items."""


class Guard:
    """For one rule: the run of characters its prefix's items match (one compiled pattern), and
    its closer. :meth:`live` remembers the run it last measured, per text."""

    __slots__ = ("alive", "closer", "end", "others", "run", "signal", "start", "text")

    def __init__(self, run: Callable[..., Any], closer: str, signal: str) -> None:
        self.run, self.closer, self.signal = run, closer, signal  # signal: see the module docstring
        self.text: str | None = None  # the last text asked about, and its run [start, end)
        self.start = self.end = 0
        self.alive = False
        self.others: dict[int, tuple[str, int, int, bool]] = {}  # texts asked about in between

    def live(self, text: str, pos: int) -> bool:
        """Whether the rule may match at ``pos``: the first character at or after it that the
        prefix cannot take is the closer."""
        if text is self.text:
            if self.start <= pos < self.end:
                return self.alive
        else:  # another text (a callback's piece lexed in between): the last run of each kept
            if self.text is not None:
                if len(self.others) > 8:
                    self.others.clear()
                self.others[id(self.text)] = (self.text, self.start, self.end, self.alive)
            kept = self.others.pop(id(text), None)
            self.text, self.start, self.end = text, 0, 0  # nothing known of it yet
            if kept is not None and kept[0] is text and kept[1] <= pos < kept[2]:
                _, self.start, self.end, self.alive = kept
                return self.alive
        end = self.run(text, pos).end()  # may be interrupted (a deadline): nothing set before it ends
        alive = end < len(text) and text[end] == self.closer
        self.start, self.end, self.alive = pos, end, alive
        return alive

    def forget(self) -> None:
        """Let go of the texts remembered (the scan of a whole text is over)."""
        self.text = None
        self.start = self.end = 0
        self.others.clear()


def guard_of(items: Any, flags: int) -> Guard | None:
    """The guard of a rule's parsed pattern (see the module docstring), or ``None`` where its
    shape is not a prefix of single-character items and a closer, or a guard would not pay.

    Example:
        >>> g = guard_of(parser.parse(r"((?:[a-z]+\\s+)+?)([a-z]+)(\\s*)(\\()"), 0)
        >>> g.closer, g.live("int f (x)", 0), g.live("a b\\nc d;", 0)
        ('(', True, False)
        >>> print(g.signal)  # 64 characters of the prefix's set, ahead
        (?=[\\x61-\\x7a\\s]{64})
    """
    atoms: list[tuple[Any, Any, int]] = []
    crossing = False
    try:
        for op, arg, item_flags in _sequence(list(items), flags):
            name = str(op)
            if name == "LITERAL" and crossing and 32 < arg < 127 and not chr(arg).isalnum():
                closer = chr(arg)
                run = _run(atoms, flags)
                signal = _signal(atoms)
                if run.fullmatch(closer) is None and signal is not None:
                    return Guard(run.match, closer, signal)
            if name in _REPEATS and arg[1] == parser.MAXREPEAT:
                body = _atoms(arg[2], item_flags)
                crossing = crossing or _crosses(body, flags)
                atoms += body
                continue
            if not crossing and name not in _ZERO_WIDTH and not (name in _REPEATS and arg[0] == 0):
                return None  # attempts start only where this item matches: a keyword's rule, not a run's
            atoms += _atoms([(op, arg)], item_flags)
    except _GiveUp:
        return None
    return None


def _sequence(items: list[Any], flags: int) -> list[tuple[Any, Any, int]]:
    """The pattern's items in order, its groups opened (each with the flags it runs under)."""
    out: list[tuple[Any, Any, int]] = []
    for op, arg in items:
        if str(op) == "SUBPATTERN":
            _, add, remove, sub = arg
            out += _sequence(list(sub), inner_flags(flags, add, remove))
        else:
            out.append((op, arg, flags))
    return out


def _atoms(items: Any, flags: int) -> list[tuple[Any, Any, int]]:
    """Single-character items that, between them, match every character ``items`` may consume."""
    out: list[tuple[Any, Any, int]] = []
    for op, arg in items:
        name = str(op)
        if name in _ATOMS:
            out.append((op, arg, flags))
        elif name in _ZERO_WIDTH:
            continue  # consumes nothing; what a look-ahead reads is not the match's
        elif name == "SUBPATTERN":
            _, add, remove, sub = arg
            out += _atoms(sub, inner_flags(flags, add, remove))
        elif name == "ATOMIC_GROUP":
            out += _atoms(arg, flags)
        elif name == "BRANCH":
            for branch in arg[1]:
                out += _atoms(branch, flags)
        elif name in _REPEATS:
            out += _atoms(arg[2], flags)
        else:  # ANY, a group reference, a conditional...: too wide, or unknown
            raise _GiveUp(name)
    return out


def _compiled(atoms: list[tuple[Any, Any, int]], flags: int, run: bool) -> re.Pattern[str]:
    """The atoms as one pattern: any one of them (``run``: a greedy run of them, whose match
    nothing after it can shorten: the first character none of them takes ends it)."""
    state = parser.State()
    state.flags = flags
    branches = []
    for op, arg, item_flags in atoms:
        if item_flags != flags:  # an inline flag group around it
            raise _GiveUp("flags")
        branches.append(parser.SubPattern(state, [(op, arg)]))
    one: list[Any] = [(parser.BRANCH, (None, branches))]
    if run:
        one = [(_RUN, (0, parser.MAXREPEAT, parser.SubPattern(state, one)))]
    return compiler.compile(parser.SubPattern(state, one), flags)  # type: ignore[no-any-return]


def _run(atoms: list[tuple[Any, Any, int]], flags: int) -> re.Pattern[str]:
    return _compiled(atoms, flags, run=True)


def _crosses(body: list[tuple[Any, Any, int]], flags: int) -> bool:
    """Whether a repeat of these items may take whitespace and other characters: run on, it
    crosses words."""
    if not body:
        return False
    one = _compiled(body, flags, run=False)
    return any(one.fullmatch(c) for c in _SPACES) and any(one.fullmatch(c) for c in _PROBES)


#: The shortest run of a guarded rule's set that asks the guard (:data:`Guard.signal`): rare in
#: real code (30 of 13,171 runs in a Java tree), where every attempt reads its run anyway.
SIGNAL_RUN = 64

_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}
#: A negated set holding one of these is within the other: ``[^\W\d]`` within ``\w``.
_WITHIN = {"CATEGORY_NOT_WORD": r"\w", "CATEGORY_NOT_SPACE": r"\s", "CATEGORY_NOT_DIGIT": r"\d"}


def _signal(atoms: list[tuple[Any, Any, int]]) -> str | None:
    """The signal's look-ahead: :data:`SIGNAL_RUN` characters of one set holding every character
    the atoms match (a negated set by a category it lies within); ``None`` where one cannot be
    written so."""
    inside = _class(atoms)
    return None if inside is None else f"(?={inside}{{{SIGNAL_RUN}}})"


def _class(atoms: list[tuple[Any, Any, int]]) -> str | None:
    """One set, as text, holding every character the atoms match (see :func:`_signal`)."""
    inside: list[str] = []
    for op, arg, _ in atoms:
        name = str(op)
        if name == "LITERAL":
            inside.append(_escape(arg))
        elif name != "IN":
            return None
        elif any(str(o) == "NEGATE" for o, _ in arg):
            within = [_WITHIN[str(a)] for o, a in arg if str(o) == "CATEGORY" and str(a) in _WITHIN]
            if not within:
                return None
            inside.append(within[0])
        else:
            for o, a in arg:
                if str(o) == "LITERAL":
                    inside.append(_escape(a))
                elif str(o) == "RANGE":
                    inside.append(f"{_escape(a[0])}-{_escape(a[1])}")
                elif str(o) == "CATEGORY" and str(a) in _CATEGORIES:
                    inside.append(_CATEGORIES[str(a)])
                else:
                    return None
    return f"[{''.join(dict.fromkeys(inside))}]"


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


class Resolver:
    """What the scan calls where a signal of a joined pattern matched (the pattern's rules with
    a guard: their numbers among its rules, and the guards; ``plans``: the pattern's rule of each
    group): the match of the pattern with its signals silenced and the rules whose guard says
    they cannot match left out (``build`` makes it, once per such set), its rule and group."""

    def __init__(
        self,
        guards: list[tuple[int, Guard]],
        build: Callable[[frozenset[int]], Callable[..., Any]],
        plans: list[Any],
    ) -> None:
        self.guards, self.build, self.plans = guards, build, plans
        self.variants: dict[frozenset[int], Callable[..., Any]] = {}

    def __call__(self, text: str, pos: int) -> tuple[Any, Any, int]:
        dead = frozenset(number for number, guard in self.guards if not guard.live(text, pos))
        match = self.variants.get(dead)
        if match is None:
            match = self.variants[dead] = self.build(dead)
        m = match(text, pos)
        if m is None:
            return None, None, 0
        return m, self.plans[m.lastindex], m.lastindex


def opening(items: Any, flags: int) -> str | None:
    """For a rule anchored at a line's start as ``^``, a greedy run of one set and a rest (see
    :func:`.patterns.run_then`): a pattern matching wherever the rule matches, reading no
    further than the run and one character: ``^``, the run, and a look-ahead for a character
    the rest may start with. A blank-line tail (:mod:`.blanks`) asks it in the rule's place:
    where it does not match, neither does the rule; where it does, no tail is taken (the rule
    itself, asked at each line start of a run of words, would read to the run's end).
    ``None`` for another shape, or a rest that may start with any ASCII character or match empty.

    Example:
        >>> print(opening(parser.parse(r"^([ \\t]*)((?:[ab]+\\s+)+?)([ab]+)(\\()", re.M), re.M))
        ^[\\x20\\x09]*(?=[\\x61\\x62]|[^\\x00-\\x7f])
    """
    shape = run_then(items, flags)
    if shape is None:
        return None
    chars, nullable = first_chars(shape[1], flags)
    sequence = _sequence(list(items), flags)  # ^, the run, ...: the shape run_then read
    if len(sequence) < 2 or str(sequence[1][0]) not in _REPEATS:
        return None
    try:
        run = _class(_atoms(sequence[1][1][2], flags))
    except _GiveUp:
        return None
    if chars is None or nullable or run is None:
        return None
    starts = "".join(_escape(c) for c in sorted(chars) if c < ASCII)
    return f"^{run}*(?=[{starts}]|[^\\x00-\\x7f])"
