"""How far ahead a lexer's match attempts may read: what lets a splice take the tokens *before*
a difference between two versions, not only the shared tail (:mod:`.splice`).

A regex match attempt at ``q`` (a backtracking engine: Python's ``re``) reads the character at
``j`` only while the characters from ``q`` up to ``j`` are what some path of the pattern has
consumed, or looked at ahead: ``text[q:j]`` is a prefix of the pattern's *reading language*
(its language with lookaheads made optional reading, lookbehinds, anchors and ``\\b`` made
empty, backreferences any text; a lazy loop ending the pattern stops at its first exit).
:func:`prefixes` builds a regex of those prefixes from a rule's parsed pattern (a property test
checks that what follows where the text stops being one never changes the match). From it,
:class:`Reach` sorts a lexer's rules (every state's) in three:

- rules of a bounded width (a keyword, an operator): an attempt reads at most that far;
- rules that cannot read some character (an identifier, a number, a line comment: a line end;
  whitespace: a letter): an attempt never reads past the next such *barrier*;
- the rest may read across anything (a string, a block comment: :attr:`Reach.far`).

For the first two, :meth:`Reach.first_reaching` tells from where before an end an attempt may
read up to it, from the text alone (a few characters: the last barrier). The third cannot be
told from the text (a closing quote would read on to the next one, but no lex stands there):
the lex of a base records where it tried such a rule (:class:`Watch`), and a later version
tries the match there again in its own text (:meth:`.splice.Splice._middle`).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from minhashdup.source.fastlex.splice import _nested
from minhashdup.source.fastlex.states import CALLBACK
from minhashdup.source.fastlex.watch import Watch
from minhashdup.source.patterns import ASCII, SPACES
from minhashdup.source.patterns import compiler as sre_compile
from minhashdup.source.patterns import parser as sre_parse

#: Characters tried as barriers (a rule whose reading language holds none of them may read
#: across anything: where it was tried is recorded, :attr:`Reach.far`).
BARRIERS = ("\n", " ", "e", "t", "(", ")", ";", ",", ".", "=", "{", "}", "a", "i", "n", "r", "s", "0", '"', "'")
#: Wider than this, a rule's reach counts as unbounded.
WIDE = 4096

_ATOMS = {sre_parse.LITERAL, sre_parse.NOT_LITERAL, sre_parse.IN, sre_parse.ANY}
_REPEATS = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", None)} - {None}
_ATOMIC = getattr(sre_parse, "ATOMIC_GROUP", None)
_LOOKS = {sre_parse.ASSERT, sre_parse.ASSERT_NOT}
_GROUPREFS = {
    getattr(sre_parse, name)
    for name in ("GROUPREF", "GROUPREF_IGNORE", "GROUPREF_UNI_IGNORE", "GROUPREF_LOC_IGNORE")
    if hasattr(sre_parse, name)
}


class Unsupported(Exception):
    """A pattern node this module does not know how to bound."""


def _sub(items: list[Any]) -> Any:
    state = sre_parse.State()
    return sre_parse.SubPattern(state, items)


def _branch(*alternatives: list[Any]) -> list[Any]:
    return [(sre_parse.BRANCH, (None, [_sub(a) for a in alternatives]))]


def _group(items: list[Any], add: int = 0, remove: int = 0) -> list[Any]:
    return [(sre_parse.SUBPATTERN, (None, add, remove, _sub(items)))]


def _anything() -> list[Any]:
    """Any text at all (what a backreference may match)."""
    return list(sre_parse.parse(r"[\s\S]*").data)


def language(items: Any) -> list[Any]:
    """What a parsed pattern may consume, as a pattern of no groups, anchors or lookarounds (a
    superset of its language: assertions dropped, a backreference any text)."""
    out: list[Any] = []
    for op, av in items:
        if op in _ATOMS:
            out.append((op, av))
        elif op is sre_parse.AT or op in _LOOKS:
            continue
        elif op is sre_parse.SUBPATTERN:
            out += _group(language(av[3]), av[1], av[2])
        elif op is _ATOMIC:
            out += _group(language(av))
        elif op is sre_parse.BRANCH:
            out += _branch(*(language(a) for a in av[1]))
        elif op in _REPEATS:
            out.append((sre_parse.MAX_REPEAT, (av[0], av[1], _sub(language(av[2])))))
        elif op in _GROUPREFS:
            out += _anything()
        elif op is sre_parse.GROUPREF_EXISTS:
            out += _branch(language(av[1]), language(av[2]) if av[2] is not None else [])
        else:
            raise Unsupported(str(op))
    return out


def prefixes(items: Any, top: bool = False) -> list[Any]:
    """A pattern matching every text an attempt of the parsed pattern may have read up to any
    point (the empty text included): its reading language's prefixes (module docstring).
    ``top``: ``items`` ends the whole pattern (a lazy loop there stops at its first exit)."""
    items = list(items)
    if not items:
        return []
    (op, av), rest = items[0], items[1:]
    if op is sre_parse.AT or (op in _LOOKS and av[0] < 0):  # reads the characters before only
        return prefixes(rest, top)
    if op in _LOOKS:  # a lookahead: reads a prefix of its own, or passes on
        return _branch(prefixes(rest, top), prefixes(av[1]))
    if top and op is sre_parse.MIN_REPEAT and av[0] in (0, 1) and av[1] == sre_parse.MAXREPEAT and rest:
        # a lazy loop ending the pattern but for what follows it: the attempt tries the rest at
        # each step, and is over where the rest matches; a step is taken only where it does not
        body = language(av[2])
        step = [(sre_parse.ASSERT_NOT, (1, _sub(_exact(rest)))), *body]
        loop = [(sre_parse.MAX_REPEAT, (0, sre_parse.MAXREPEAT, _sub(step)))]
        inside = _branch(prefixes(rest, top), prefixes(av[2]))
        return _branch(body + loop + inside, prefixes(av[2])) if av[0] else loop + inside
    return _branch(language([(op, av)]) + prefixes(rest, top), _inside(op, av))


def _exact(items: Any) -> list[Any]:
    """``items`` as they match, their groups made non-capturing (no group is referred to)."""
    out: list[Any] = []
    for op, av in items:
        if op is sre_parse.SUBPATTERN:
            out += _group(_exact(av[3]), av[1], av[2])
        elif op in _GROUPREFS or op is sre_parse.GROUPREF_EXISTS:
            raise Unsupported(str(op))
        elif op is sre_parse.BRANCH:
            out += _branch(*(_exact(a) for a in av[1]))
        elif op in _REPEATS or op is _ATOMIC or op in _LOOKS:
            inner = av[2] if op in _REPEATS else av if op is _ATOMIC else av[1]
            sub = _sub(_exact(inner))
            out.append((op, (av[0], av[1], sub) if op in _REPEATS else sub if op is _ATOMIC else (av[0], sub)))
        else:
            out.append((op, av))
    return out


def _inside(op: Any, av: Any) -> list[Any]:
    """The prefixes read while inside one node (not through to what follows it)."""
    if op in _ATOMS:
        return []
    if op is sre_parse.SUBPATTERN:
        return _group(prefixes(av[3]), av[1], av[2])
    if op is _ATOMIC:
        return prefixes(av)
    if op is sre_parse.BRANCH:
        return _branch(*(prefixes(a) for a in av[1]))
    if op in _REPEATS:
        _, high, body = av
        if high == 0:
            return []
        more = high if high == sre_parse.MAXREPEAT else high - 1
        return [(sre_parse.MAX_REPEAT, (0, more, _sub(language(body)))), *prefixes(body)]
    if op in _GROUPREFS:
        return _anything()
    if op is sre_parse.GROUPREF_EXISTS:
        return _branch(prefixes(av[1]), prefixes(av[2]) if av[2] is not None else [])
    raise Unsupported(str(op))


def _compile(items: list[Any], flags: int) -> re.Pattern[str]:
    sub = _sub(items)
    sub.state.flags = flags
    compiled: re.Pattern[str] = sre_compile.compile(sub, flags)
    return compiled


def _atoms(items: Any) -> list[list[Any]]:
    """Each character-consuming node of a :func:`prefixes` pattern, alone, in its flag groups."""
    out: list[list[Any]] = []
    for op, av in items:
        if op in _ATOMS:
            out.append([(op, av)])
        elif op is sre_parse.SUBPATTERN:
            out += [_group(a, av[1], av[2]) for a in _atoms(av[3])]
        elif op is sre_parse.BRANCH:
            for alternative in av[1]:
                out += _atoms(alternative)
        elif op in _REPEATS:
            out += _atoms(av[2])
        elif op in _LOOKS:  # a lazy loop's test of what follows it (only ahead: prefixes())
            out += _atoms(av[1])
        elif op is _ATOMIC:
            out += _atoms(av)
        elif op is not sre_parse.AT:
            raise Unsupported(str(op))
    return out


def _firsts(items: Any) -> tuple[list[list[Any]], bool]:
    """The nodes of a :func:`prefixes` pattern that may consume its first character (each alone,
    in its flag groups), and whether it may consume nothing."""
    out: list[list[Any]] = []
    for op, av in items:
        if op in _ATOMS:
            return [*out, [(op, av)]], False
        if op is sre_parse.SUBPATTERN:
            inner, empty = _firsts(av[3])
            out += [_group(a, av[1], av[2]) for a in inner]
        elif op is sre_parse.BRANCH:
            empty = False
            for alternative in av[1]:
                inner, nothing = _firsts(alternative)
                out += inner
                empty = empty or nothing
        elif op in _REPEATS:
            inner, nothing = _firsts(av[2])
            out += inner
            empty = nothing or av[0] == 0
        elif op in _LOOKS or op is sre_parse.AT:  # zero-width: a lookahead may read first too
            out += _firsts(av[1])[0] if op in _LOOKS and av[0] > 0 else []
            empty = True
        elif op is _ATOMIC:
            inner, empty = _firsts(av)
            out += inner
        else:  # pragma: no cover - prefixes() makes no other node
            raise Unsupported(str(op))
        if not empty:
            return out, False
    return out, True


def _text_end(items: Any, flags: int) -> bool:
    """Whether a parsed pattern holds ``$`` where MULTILINE is off: at ``j`` it asks whether
    ``j + 1`` ends the text (after a line end), a character further than it reads."""
    for op, av in items:
        if op is sre_parse.AT and av is sre_parse.AT_END and not flags & re.MULTILINE:
            return True
        inner = flags
        if op is sre_parse.SUBPATTERN:
            inner = (flags | av[1]) & ~av[2]
        if any(_text_end(sub, inner) for sub in _nested(av)):
            return True
    return False


def _ascii(items: Any, flags: int) -> bool:
    """Whether the nodes (as :func:`_firsts` gives them) match ASCII characters only."""
    if flags & (re.IGNORECASE | re.LOCALE):
        return False  # case folding reaches past ASCII (the Kelvin sign is a k)
    for node in items:
        for op, av in node:
            if op is sre_parse.SUBPATTERN:
                if not _ascii([list(av[3])], flags | av[1]):
                    return False
            elif op is sre_parse.LITERAL:
                if av >= ASCII:
                    return False
            elif op is sre_parse.IN:
                for kind, arg in av:
                    if not (
                        (kind is sre_parse.LITERAL and arg < ASCII) or (kind is sre_parse.RANGE and arg[1] < ASCII)
                    ):
                        return False
            else:
                return False
    return True


@dataclasses.dataclass(frozen=True, slots=True)
class Far:
    """A rule that may read across any character: what it may read first (ASCII only)."""

    first: re.Pattern[str]


class Reach:
    """The rules of a lexer (every state's), and how far their attempts may read (module
    docstring): those of a bounded width or bounded by characters they cannot read, for
    :meth:`first_reaching`; the others (:attr:`far`, by pattern), for the lex to tell where
    they were tried (:class:`.splice.Splice`). Raises :class:`Unsupported` for a pattern it
    cannot bound, or a rule reading anything that may start on whitespace (which the fast
    engine takes with the token before, so the lex never stands there)."""

    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        self.width = 0  # the most a bounded-width rule reads
        self.barriers: list[str] = []  # per rule bounded by characters: the characters it cannot read
        self.far: dict[re.Pattern[str], Far] = {}
        for compiled in dict.fromkeys(patterns):
            parsed = sre_parse.parse(compiled.pattern, compiled.flags)
            flags = parsed.state.flags
            if _text_end(parsed.data, flags):
                raise Unsupported("$ outside MULTILINE reads whether the next character ends the text")
            pref = prefixes(parsed.data, top=True)
            width = _sub(pref).getwidth()[1]
            atoms = _atoms(pref)
            read = _compile(_branch(*atoms), flags) if atoms else None
            stops = "".join(c for c in BARRIERS if read is None or read.fullmatch(c) is None)
            if width <= WIDE:
                self.width = max(self.width, width)
            elif stops:
                self.barriers.append(stops)
            else:
                atoms = _firsts(pref)[0]
                first = _compile(_branch(*atoms), flags)
                if any(first.fullmatch(chr(c)) for c in SPACES) or not _ascii(atoms, flags):
                    raise Unsupported("a rule reading anything may start on whitespace or past ASCII")
                self.far[compiled] = Far(first)
        # a rule whose barriers hold another's: the other's last comes no later, which is enough
        least = {frozenset(b) for b in self.barriers}
        self.barriers = sorted("".join(sorted(b)) for b in least if not any(o < b for o in least))
        self.stops = sorted(set("".join(self.barriers)))
        self.current: Any = None  # the lex being recorded (Watch)
        self._watches: dict[int, tuple[Any, Watch]] = {}
        self.joins: list[Any] = []  # the joined patterns tried where a rule reading anything may start
        self._joined: dict[int, tuple[Any, int, list[int], int]] = {}

    def far_in(self, state: Any) -> list[Far]:
        """The rules of ``state`` that may read anything."""
        return [self.far[p.rexmatch.__self__] for p in state.sequential if _pattern(p) in self.far]

    def joined(self, joined: Any) -> tuple[Any, int, list[int], int]:
        """``joined`` (a pattern joining rules), its number among :attr:`joins` (what a record
        names it by), how many groups tell each of its groups' tokens (a callback rule's own
        groups too; any other rule's tokens are its text), and the group of its first rule
        that may read anything (past the last group when none)."""
        kept = self._joined.get(id(joined))
        if kept is None or kept[0] is not joined:
            plans, counts, first = joined.plans, [], len(joined.plans)
            for g, plan in enumerate(plans):
                n = 1
                while plan is not None and plan.kind == CALLBACK and g + n < len(plans) and plans[g + n] is None:
                    n += 1
                counts.append(n)
                if plan is not None and _pattern(plan) in self.far:
                    first = min(first, g)
            self.joins.append(joined)
            kept = self._joined[id(joined)] = (joined, len(self.joins) - 1, counts, first)
        return kept

    def spans(self, joined: Any, m: Any) -> tuple[int, ...]:
        """What the match ``m`` of the pattern ``joined`` gave, from its start: where the rule
        that matched ends, then, for a callback rule, where each of its own groups starts and
        ends (a group that did not match: ``-1, -1``)."""
        rule, start = m.lastindex, m.start()
        n = self.joined(joined)[2][rule]
        if n == 1:
            return (m.end(rule) - start,)
        out = [m.end(rule) - start]
        for g in range(rule + 1, rule + n):
            a, b = m.span(g)
            out += (a - start, b - start) if a >= 0 else (-1, -1)
        return tuple(out)

    def watch(self, state: Any, lex: int) -> dict[str, Any]:
        """``state``'s first look-up table for the ``lex``-th lex recorded (:class:`Watch`)."""
        kept = self._watches.get(id(state))
        if kept is None or kept[0] is not state:
            kept = (state, Watch(self, state))
            self._watches[id(state)] = kept
        return kept[1].table(lex)

    def first_reaching(self, text: str, start: int, end: int) -> int:
        """A position in ``start..end`` before which no attempt of a rule not in :attr:`far`
        may read the character at ``end`` or past it: within the widest bounded rule's reach
        of ``end``, or past the last barrier of a rule bounded by characters (a few characters;
        the stretch taken ends a little early, not at the first that may read that far)."""
        low = max(start, end - self.width)
        for stops in self.barriers:
            low = min(low, max(start - 1, *(text.rfind(c, start, end) for c in stops)) + 1)
        return low


def _pattern(plan: Any) -> Any:
    return getattr(plan.rexmatch, "__self__", None)
