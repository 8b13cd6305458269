"""The per-token loop of the fast engine: pygments' ``get_tokens_unprocessed``, joined patterns.

Per token it looks up the pattern narrowed to the first character (:mod:`.states`), makes
one regex call, and keeps or drops the token by a decision made per rule in advance. State
changes, callbacks and positions no rule matches follow pygments line for line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast

from pygments.lexer import _PseudoMatch
from pygments.token import Error, _TokenType

from minhashdup.source.fastlex.bulk import of_root
from minhashdup.source.fastlex.splice import DONE, NEVER, Splice
from minhashdup.source.fastlex.states import AGAIN, CALLBACK, MOVES, SIGNAL, TYPED, Joined, Plan, States
from minhashdup.source.significant import DROP, KEEP, KEEP_UNLESS_BLANK, kept

#: Records a kept token's offset and type (see :func:`tracker`).
At = Callable[[int, _TokenType], None]


# The hot loop: names are locals; a token whose rule stays in the state and keeps or drops it
# by type alone takes the fast path (a dict look-up by the token's first character, one regex
# call, which takes the whitespace after it too, see .blanks; a list lookup, maybe an append);
# so does one that also changes state (MOVES), the stack changed here; the rest (callbacks,
# no rule matching, a state run rule by rule) is pygments' loop, in :func:`_step`. The look-up
# fails (KeyError, or IndexError at the text's end) only where State.pattern_at must decide:
# try costs nothing when nothing is raised. A splice is called where it asks (one int compare).
def scan(
    lexer: Any,
    states: States,
    text: str,
    at: At | None,
    start: tuple[str, ...] = ("root",),
    splice: Splice | None = None,
) -> list[str]:
    """The kept tokens of preprocessed ``text`` lexed from the state stack ``start``; ``at`` (if
    any) is told each one's offset and type; ``splice`` (if any) at the positions it asks for
    (:attr:`.splice.Splice.due`, then as it says), which may complete the tokens from a base's."""
    if at is None and start == ("root",) and (splice is None or (splice.due >= NEVER and not splice.watching)):
        whole = of_root(states)  # the root state lexed in one call, where it never leaves itself
        if whole is not None:
            return whole(text)
    out: list[str] = []
    due = NEVER if splice is None else splice.due
    watch = splice.watch if splice is not None and splice.watching else None  # a lex recorded for a later version
    fast_keep, fast_drop, unless_blank, moves = KEEP, DROP, KEEP_UNLESS_BLANK, MOVES  # locals
    pos = 0
    stack = list(start)
    state = states[stack[-1]]
    table = state.table if watch is None else watch(state)  # looked up on a change of state only
    while True:
        if pos >= due and (due := cast(Splice, splice).at(pos, stack, out)) < 0:
            if due == DONE:
                return out  # completed from a base's tokens
            pos, stack = cast(Splice, splice).resume  # tokens taken from a base's up to there
            due = cast(Splice, splice).due
            state = states[stack[-1]]
            table = state.table if watch is None else watch(state)
            continue
        try:
            joined: Joined | None = table[text[pos]]
        except (KeyError, IndexError):
            joined = state.pattern_at(text, pos)
        if joined is not None:
            m = joined.match(text, pos)
            if m is not None:
                group = m.lastindex
                kind = joined.fast[group]
                if kind == fast_keep:
                    out.append(m[group])  # out.append, not a bound method: 3.11 inlines it
                    if at is not None:
                        at(pos, joined.plans[group].action)
                    pos = m.end()
                    continue
                if kind == fast_drop:
                    pos = m.end()
                    continue
                if kind == unless_blank:
                    value = m[group]
                    if value and not value.isspace():
                        out.append(value)
                        if at is not None:
                            at(pos, joined.plans[group].action)
                    pos = m.end()
                    continue
                plan = joined.plans[group]
                if kind == moves:  # its token as _step takes it, then the stack here: no call
                    if plan.kind != fast_drop:
                        value = m[group]
                        if plan.kind == fast_keep or (value and not value.isspace()):
                            out.append(value)
                            if at is not None:
                                at(pos, plan.action)
                    pos = m.end()
                    stack = transition(stack, plan.new_state)
                    state = states[stack[-1]]
                    table = state.table if watch is None else watch(state)
                    continue
                found = (m, plan, group)
            else:
                found = (None, None, 0)
            moved = _step(lexer, states, text, pos, stack, out.append, at, found)
        else:
            moved = _step(lexer, states, text, pos, stack, out.append, at, None)
        if moved is None:
            return out
        pos, stack = moved
        state = states[stack[-1]]
        table = state.table if watch is None else watch(state)


def _step(
    lexer: Any,
    states: States,
    text: str,
    pos: int,
    stack: list[str],
    keep: Callable[[str], None],
    at: At | None,
    found: tuple[Any, Plan | None, int] | None,
) -> tuple[int, list[str]] | None:
    """One token at ``pos`` the way pygments' loop takes it (``found``: the joined pattern's
    match there, its rule and the rule's group; ``None``: try the state's rules one by one).

    Returns:
        The next position and state stack, or ``None`` at the end of the text.
    """
    if found is None:
        (m, plan), group = _first_rule(states[stack[-1]].sequential, text, pos), 0
    else:
        m, plan, group = found
        if plan is not None and plan.kind == SIGNAL:  # a long run before a guarded rule (.guard)
            m, plan, group = plan.action(text, pos)
    if plan is None or m is None:
        if pos >= len(text):
            return None
        if text[pos] == "\n":  # at a line end pygments resets to the root state
            return pos + 1, ["root"]
        keep(text[pos])  # an Error token: kept, as pygments yields it
        if at is not None:
            at(pos, Error)
        return pos + 1, stack
    if plan.by_groups is not None:
        _groups(m, group, plan.by_groups, keep, at)
    elif plan.kind == CALLBACK:
        _callback(lexer, states, plan, text, pos, keep, at)
    elif plan.kind != DROP:
        value = m[group]
        if plan.kind == KEEP or (value and not value.isspace()):
            keep(value)
            if at is not None:
                at(pos, plan.action)
    if plan.new_state is not None:
        stack = transition(stack, plan.new_state)
    return m.end(), stack


def _callback(
    lexer: Any, states: States, plan: Plan, text: str, pos: int, keep: Callable[[str], None], at: At | None
) -> None:
    """Run a callback rule (``bygroups``, ``using``, ...) at ``pos``; keep its kept tokens.

    A ``using(this)`` piece (:func:`.states._parts`) is lexed by this engine from its stack,
    which is what pygments' loop does with it; the rest is pygments' callback itself.
    """
    m = plan.rexmatch(text, pos)
    if plan.parts is None:
        _keep_all(plan.action(lexer, m), m.start(), keep, at)
        return
    for kind, group, what in plan.parts:
        value = m.group(group)
        if not value and (kind == TYPED or value is None):
            continue  # bygroups passes over an empty typed group, and any group that did not match
        if kind == TYPED:
            _keep_one(m.start(group), what, value, keep, at)
        elif kind == AGAIN:
            if not value and what in states.silent:
                continue  # an empty text lexes the same from the same stack: nothing, as last time
            base = m.start(group)
            shifted = None if at is None else (lambda offset, ttype, base=base: at(offset + base, ttype))
            tokens = scan(lexer, states, value, shifted, what)
            if not value and not tokens:  # C's function rule lexes empty pieces ~half the time
                states.silent.add(what)
            for token in tokens:
                keep(token)
        else:  # another callable, called as bygroups calls it
            _keep_all(filter(None, what(lexer, _PseudoMatch(m.start(group), value), None)), m.start(group), keep, at)


def _keep_all(items: Iterable[Any], start: int, keep: Callable[[str], None], at: At | None) -> None:
    """A callback's tokens, each kept if significant, at ``start`` and the lengths of the texts
    before it: pygments' lines count the texts yielded, and a callback's own offsets may be
    relative to a piece (Wikitext's ``<source>`` blocks)."""
    for _, ttype, value in items:
        _keep_one(start, ttype, value, keep, at)
        start += len(value)


def _keep_one(index: int, ttype: _TokenType, value: str, keep: Callable[[str], None], at: At | None) -> None:
    """Keep one token of a callback's if it is significant."""
    if kept(ttype, value):
        keep(value)
        if at is not None:
            at(index, ttype)


def _groups(
    m: Any, base: int, groups: tuple[tuple[int, int, _TokenType], ...], keep: Callable[[str], None], at: At | None
) -> None:
    """A ``bygroups`` rule's kept tokens (see :func:`.states._by_groups`); the rule's groups
    are numbered from ``base`` in ``m``."""
    for i, rule, ttype in groups:
        value = m[base + i]
        if value and (rule == KEEP or (rule != DROP and not value.isspace())):
            keep(value)
            if at is not None:
                at(m.start(base + i), ttype)


def _first_rule(plans: list[Plan], text: str, pos: int) -> tuple[Any, Plan | None]:
    """The match of the first rule that matches at ``pos``, and that rule (pygments' order)."""
    for candidate in plans:
        m = candidate.rexmatch(text, pos)
        if m is not None:
            return m, candidate
    return None, None


def transition(stack: list[str], new_state: Any) -> list[str]:
    """The state stack after a rule's ``new_state``, exactly as pygments changes it."""
    if isinstance(new_state, tuple):
        for name in new_state:
            if name == "#pop":
                if len(stack) > 1:
                    stack.pop()
            elif name == "#push":
                stack.append(stack[-1])
            else:
                stack.append(name)
    elif isinstance(new_state, int):
        if abs(new_state) >= len(stack):
            del stack[1:]
        else:
            del stack[new_state:]
    elif new_state == "#push":
        stack.append(stack[-1])
    else:  # pragma: no cover - pygments asserts the same
        raise AssertionError(f"wrong state def: {new_state!r}")
    return stack


def tracker(starts: list[int] | None, types: list[_TokenType] | None) -> At | None:
    """What the scan calls for each kept token, when it tracks offsets or types."""
    if starts is not None and types is not None:

        def both(pos: int, ttype: _TokenType) -> None:
            starts.append(pos)
            types.append(ttype)

        return both
    if starts is not None:
        return lambda pos, _: starts.append(pos)
    if types is not None:
        return lambda _, ttype: types.append(ttype)
    return None
