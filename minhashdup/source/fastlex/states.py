"""A lexer state's rules joined into patterns: the whole state, and narrowed by first character.

Each rule becomes an alternative wrapped in its own group, in pygments' order; ``m.lastindex``
(the wrapper closes last) names the rule that fired. The rule's own groups are made
non-capturing where that is sure to keep its meaning (:func:`.groups.without_groups`): each group
costs the regex engine marks to save and the match object room, and only a callback rule
needs them, which matches again with its own pattern. The first characters of each rule (and
whether it can match empty) narrow the pattern tried at a position.

Where a state drops whitespace the same way wherever it stands (:mod:`.blanks`), each fast
alternative takes the whitespace after its token too, in the same call.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from typing import Any, cast

from pygments.lexer import bygroups, this, using
from pygments.token import Text, _TokenType

from minhashdup.source.fastlex.apart import apart_starts
from minhashdup.source.fastlex.blanks import NONE, Blanks, Facts, blank_only, blanks
from minhashdup.source.fastlex.groups import without_groups
from minhashdup.source.fastlex.guard import Guard, Resolver, guard_of, opening
from minhashdup.source.patterns import (
    ASCII,
    embeddable,
    first_chars,
    line_anchored,
    may_end_with,
    own_flags,
    parser,
    scoped,
)
from minhashdup.source.significant import DROP, KEEP, KEEP_UNLESS_BLANK, verdict

Rule = tuple[Callable[..., Any], Any, Any]  # (pattern.match, action, new_state) as pygments keeps them
Starts = tuple[set[int] | None, bool]  # ASCII first characters (None: any), and whether it can match empty

CALLBACK = max(DROP, KEEP, KEEP_UNLESS_BLANK) + 1  # a rule whose callback yields the tokens
SIGNAL = CALLBACK + 1  # not a rule: a guard's signal (.guard); its action, the Resolver
_SPACES = {c for c in range(ASCII) if chr(c).isspace()}
_WARM_UP = 64  # positions starting with a character before its narrowed pattern is compiled


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """One rule, with its drop decision made in advance."""

    rexmatch: Callable[..., Any]
    action: Any
    new_state: Any
    kind: int
    by_groups: tuple[tuple[int, int, _TokenType], ...] | None = None  # see _by_groups
    parts: tuple[Part, ...] | None = None  # see _parts


def _plan(rule: Rule) -> Plan:
    rexmatch, action, new_state = rule
    if action is None:
        kind = DROP
    elif type(action) is _TokenType:
        kind = verdict(action)
    else:
        return Plan(rexmatch, action, new_state, CALLBACK, _by_groups(action), _parts(action))
    return Plan(rexmatch, action, new_state, kind)


def every_plan(tokendefs: dict[str, list[Rule]]) -> list[Plan]:
    """The plan of every rule of every state of a lexer's ``tokendefs``."""
    return [_plan(rule) for rules in tokendefs.values() for rule in rules]


_BYGROUPS = bygroups(Text).__code__  # the code of pygments' bygroups callbacks, this version


def _bygroups_args(action: Any) -> tuple[Any, ...] | None:
    """The actions a ``bygroups`` callback was made with, one per group; ``None`` for any
    other callback."""
    if getattr(action, "__code__", None) is not _BYGROUPS or not action.__closure__:
        return None
    args = action.__closure__[0].cell_contents
    return args if isinstance(args, tuple) else None


def _by_groups(action: Any) -> tuple[tuple[int, int, _TokenType], ...] | None:
    """For a ``bygroups`` callback of token types only: (group, verdict, type) of each group
    with a type, which the scan applies itself (as the callback would: a group's non-empty
    text is a token of its type), without the callback's generator and second regex call.
    ``None`` for any other callback."""
    types = _bygroups_args(action)
    if types is None or not all(t is None or type(t) is _TokenType for t in types):
        return None
    return tuple((i, verdict(t), t) for i, t in enumerate(types, start=1) if t is not None)


#: A callback's piece (see :func:`_parts`): its kind (``TYPED``, ``AGAIN`` or ``CALL``), the
#: match group it takes (0: the whole match) and a token type, a start stack or a callable.
Part = tuple[int, int, Any]
TYPED, AGAIN, CALL = range(3)
_USING_THIS = using(this).__code__  # the code of pygments' using(this) callbacks, this version


def _again(action: Any) -> tuple[str, ...] | None:
    """The start stack of a ``using(this)`` callback given no lexer options (pygments lexes
    the text it gets with the same lexer, from that stack), else ``None``."""
    if getattr(action, "__code__", None) is not _USING_THIS or not action.__closure__:
        return None
    cells = dict(zip(action.__code__.co_freevars, (c.cell_contents for c in action.__closure__), strict=True))
    if cells.get("kwargs") or not isinstance(cells.get("gt_kwargs"), dict):
        return None  # options make a new lexer instance: its own loop it is
    return tuple(cells["gt_kwargs"].get("stack", ("root",)))


def _parts(action: Any) -> tuple[Part, ...] | None:
    """A ``using(this)`` callback, or a ``bygroups`` one holding any, as pieces the scan runs
    itself: a group's text lexed again by the fast engine from the callback's stack (what
    pygments' own loop does with it), a typed group, or another callable called as
    ``bygroups`` calls it. ``None`` for any other callback (pygments runs it)."""
    stack = _again(action)
    if stack is not None:
        return ((AGAIN, 0, stack),)
    args = _bygroups_args(action)
    if args is None or all(_again(a) is None for a in args):
        return None
    parts: list[Part] = []
    for i, arg in enumerate(args, start=1):
        if arg is None:
            continue
        stack = _again(arg)
        kind = TYPED if type(arg) is _TokenType else CALL if stack is None else AGAIN
        parts.append((kind, i, stack if kind == AGAIN else arg))
    return tuple(parts)


#: The kind of a group whose rule leaves the state as it is and keeps or drops its token by
#: type and text alone (the scan's fast path), ``MOVES``: one that does so and changes
#: state (the scan changes the stack itself), or ``SLOW``: anything else.
SLOW, MOVES = -1, -2


@dataclasses.dataclass(slots=True)
class Joined:
    """A pattern joining some of a state's rules, the rule of each of its groups, and each
    group's fast-path kind (``DROP``, ``KEEP``, ``KEEP_UNLESS_BLANK`` or :data:`SLOW`)."""

    match: Callable[..., Any]
    plans: list[Plan | None]
    fast: list[int]


_NOTHING = re.compile("(?!)").match  # no rule can start here


@dataclasses.dataclass(slots=True)
class Source:
    """What joining needs of one rule: its pattern text, its groups and its first characters."""

    text: str
    groups: int
    starts: Starts
    blank: bool  # it matches whitespace only: dropped, whatever its type
    ends_line: bool = True  # its match may end with a line end (see .blanks)
    alone: bool = False  # it cannot be joined: tried by itself (.apart)
    guard: Guard | None = None  # it may read far where it fails: a run's closer tells (.guard)


@dataclasses.dataclass
class State:
    """A lexer state: its rules in order, joined (``None``: run rule by rule) and narrowed."""

    sequential: list[Plan]
    joined: Joined | None
    by_char: list[Joined | None]  # for each ASCII character, the rules that can start with it
    sources: list[Source] = dataclasses.field(default_factory=list)
    flags: int = 0
    built: dict[tuple[int, ...], Joined] = dataclasses.field(default_factory=dict)
    seen: list[int] = dataclasses.field(default_factory=lambda: [0] * ASCII)
    taken: Blanks = NONE  # the whitespace a fast alternative takes after its token (.blanks)
    #: The scan's first look-up: the pattern for a position's character, where that does not
    #: depend on the position (see :meth:`pattern_at`, which fills it). Keyed by the character
    #: itself, not its code: indexing the text gives the key, and no ``ord`` call per token.
    table: dict[str, Joined | None] = dataclasses.field(default_factory=dict)

    def pattern_at(self, text: str, pos: int) -> Joined | None:
        """The pattern to try at ``pos`` when :attr:`table` has none for its character;
        ``None`` in a state run rule by rule (pygments' way, then).

        At the text's end, the whole joined pattern: it finds the first rule that matches
        there as anywhere else, in one call where trying the rules one by one (pygments' way)
        takes a call each, at the end of every text a ``using(this)`` callback lexes again.
        A character past ASCII that the state drops as whitespace (:mod:`.blanks`) gets a
        pattern taking the stretch of them, dropped; within a line only, if the state says so.
        """
        if self.joined is None or pos >= len(text):
            return self.joined
        char = text[pos]
        code = ord(char)
        if code < ASCII:
            if code in self.apart:  # a rule not joined may start here: pygments' way
                self.table[char] = None
                return None
            found = self.by_char[code] or self.for_char(code)
            if self.by_char[code] is not None:  # narrowed for good (after the warm-up)
                self.table[char] = found
            return found
        if code not in self.taken.wide:
            self.table[char] = self.joined
            return self.joined
        if not self.taken.within_line:
            self.table[char] = self.skipping
            return self.skipping
        return self.joined if pos == 0 or text[pos - 1] == "\n" else self.skipping

    @functools.cached_property
    def apart(self) -> frozenset[int]:
        """The ASCII characters where a rule left out of :attr:`joined` may start (:mod:`.apart`)."""
        return frozenset(c for source in self.sources if source.alone for c in source.starts[0] or ())

    @functools.cached_property
    def skipping(self) -> Joined:
        """The wide whitespace of :attr:`taken` as a pattern whose one group is dropped."""
        return Joined(self.taken.skip, [None, None], [SLOW, DROP])

    def for_char(self, code: int) -> Joined:
        """The pattern to try at a position starting with ASCII character ``code``.

        The narrowed pattern is compiled once the state has met that character
        :data:`_WARM_UP` times; until then the full one serves. Compiling costs milliseconds
        per pattern: worth it over a tree, not for a handful of tokens.
        """
        self.seen[code] += 1
        if self.seen[code] < _WARM_UP:
            assert self.joined is not None
            return self.joined
        chosen = tuple(
            i
            for i, source in enumerate(self.sources)
            if not source.alone and (source.starts[0] is None or source.starts[1] or code in source.starts[0])
        )
        found = self.built.get(chosen)
        if found is None:
            found = compile_joined(self.sequential, self.sources, list(chosen), self.flags, self.taken) or self.joined
            assert found is not None
            self.built[chosen] = found
        self.by_char[code] = found
        return found


class States(dict[str, State]):
    """A lexer's states, each joined the first time the lexer enters it (most files enter
    few of a big lexer's states, and joining means parsing and compiling its rules)."""

    def __init__(self, tokendefs: dict[str, list[Rule]], flags: int) -> None:
        super().__init__()
        self.tokendefs, self.flags = tokendefs, flags
        self.silent: set[tuple[str, ...]] = set()  # start stacks from which an empty text gave no token
        #: The one-call lex from ``root`` where the root state allows it (:func:`.bulk.of_root`
        #: sets it, ``None`` if not), once it was looked for.
        self.whole: tuple[Callable[[str], list[str]] | None] | None = None
        self.guards: list[Guard] = []  # of the states joined so far (.guard)

    def __missing__(self, name: str) -> State:
        rules = self.tokendefs[name]
        try:
            state = join(rules, self.flags)
        except Exception:  # rules our analysis trips on: run them one by one, as pygments does
            state = State([_plan(rule) for rule in rules], None, [])
        self.guards += [source.guard for source in state.sources if source.guard is not None]
        self[name] = state
        return state

    def forget(self) -> None:
        """The guards let go of the texts they remember (a whole text's scan is over)."""
        for guard in self.guards:
            guard.forget()


def join(rules: list[Rule], flags: int) -> State:
    """One pattern for a state's rules, or ``joined=None`` when that would not be exact."""
    plans = [_plan(rule) for rule in rules]
    sequential = State(plans, None, [])
    sources: list[Source] = []
    facts: list[Facts] = []
    for plan in plans:
        pattern: re.Pattern[str] = cast(Any, plan.rexmatch).__self__  # compiled by pygments, lexer's flags
        if not isinstance(pattern.pattern, str):
            return sequential
        if pattern.pattern and own_flags(pattern) != flags & ~re.UNICODE:  # "" (pygments' default()): no flag matters
            return sequential
        text = scoped(pattern.pattern)
        if text is None:
            return sequential
        parsed = embeddable(text, flags)
        if parsed is None:  # a backreference, a named group...: left out where it may be
            tree = parser.parse(text, flags)
            starts = apart_starts(tree)
            if starts is None:
                return sequential
            sources.append(Source(text, pattern.groups, (starts, False), False, alone=True))
            facts.append(Facts(SLOW, False, (starts, False), tree, pattern))
            continue
        # The wrapper's match is the token: inner groups only cost, but for bygroups rules.
        bare = without_groups(text, flags) if plan.by_groups is None else None
        text, groups = (text, pattern.groups) if bare is None else (bare, 0)
        chars, nullable = first_chars(parsed, parsed.state.flags)
        blank = blank_only(parsed)
        if blank:  # whitespace only: it starts with a space (first_chars gives up on [^\S\n])
            chars = _SPACES if chars is None else chars & _SPACES
        ends_line = may_end_with(parsed, 10, parsed.state.flags)
        source = Source(text, groups, (chars, nullable), blank, ends_line, guard=guard_of(parsed, parsed.state.flags))
        sources.append(source)
        # A blank-line tail (.blanks) asks an anchored rule at line starts; one that may read far
        # (.guard) is asked by its opening there: it matches wherever the rule does.
        if not line_anchored(parsed):
            bare = None
        elif source.guard is not None:
            bare = opening(parsed, parsed.state.flags)
        else:
            bare = text if groups == 0 else without_groups(text, flags)
        facts.append(Facts(_fast_kind(plan, source), blank, source.starts, parsed, pattern, bare))
    taken = blanks(facts)
    everything = compile_joined(plans, sources, [i for i, s in enumerate(sources) if not s.alone], flags, taken)
    if everything is None:
        return sequential
    return State(plans, everything, [None] * ASCII, sources, flags, taken=taken)


def compile_joined(
    plans: list[Plan], sources: list[Source], chosen: list[int], flags: int, taken: Blanks = NONE, quiet: bool = False
) -> Joined | None:
    """Join the chosen rules, in order, each in a wrapper group (a fast one followed by the
    whitespace ``taken``, see :mod:`.blanks`), a guarded rule after its signal (:mod:`.guard`;
    ``quiet``: signals that never match); ``None`` if that fails."""
    if not chosen:
        return Joined(_NOTHING, [None], [SLOW])
    by_group: list[Plan | None] = [None]
    fast = [SLOW]
    parts: list[tuple[list[str], str]] = []
    guards: list[tuple[int, Guard]] = []
    signals: list[int] = []  # the signals' groups
    for number, i in enumerate(chosen):
        plan, source = plans[i], sources[i]
        if source.guard is not None:
            guards.append((number, source.guard))
            signals.append(len(by_group))
            by_group.append(None)  # the signal's plan, set below
            fast.append(SLOW)
            parts.append(([f"({'(?!)' if quiet else source.guard.signal})"], ""))
        kind = _fast_kind(plan, source)
        by_group += [plan] + [None] * source.groups
        moves = kind == SLOW and plan.by_groups is None and plan.kind in (DROP, KEEP, KEEP_UNLESS_BLANK)
        fast += [MOVES if moves else kind] + [SLOW] * source.groups
        tail = kind != SLOW and not (taken.within_line and source.ends_line)
        across = taken.across_end if source.ends_line else taken.across
        after = across if kind != SLOW and across else taken.tail if tail else ""
        if after and parts and parts[-1][1] == after:
            parts[-1][0].append(f"({source.text})")  # next to one with the same tail: it once, after both
        else:
            parts.append(([f"({source.text})"], after))
    alternatives = ["|".join(texts) if not after else f"(?:{'|'.join(texts)}){after}" for texts, after in parts]
    try:
        joined = re.compile("|".join(alternatives), flags)
    except re.error:
        return None
    if joined.groups != len(by_group) - 1:
        return None
    if guards and not quiet:

        def without(dead: frozenset[int]) -> Callable[..., Any]:  # silenced, and the dead never match
            kept = list(sources)
            for number, i in enumerate(chosen):
                if number in dead:
                    kept[i] = dataclasses.replace(kept[i], text=f"(?!)(?:{kept[i].text})")
            other = compile_joined(plans, kept, chosen, flags, taken, quiet=True)
            assert other is not None  # the same alternatives compiled once already
            return other.match

        signal = Plan(_NOTHING, Resolver(guards, without, by_group), None, SIGNAL)
        for group in signals:
            by_group[group] = signal
    return Joined(joined.match, by_group, fast)


def _fast_kind(plan: Plan, source: Source) -> int:
    """The rule's kind on the scan's fast path (:data:`SLOW`: not there)."""
    if plan.new_state is not None or plan.kind not in (DROP, KEEP, KEEP_UNLESS_BLANK):
        return SLOW
    if plan.kind == KEEP_UNLESS_BLANK and source.blank:
        return DROP  # a Text rule that matches whitespace only: its text is always dropped
    return plan.kind
