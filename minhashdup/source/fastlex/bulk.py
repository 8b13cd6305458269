"""A whole text lexed in one regex call, where the root state never leaves itself.

Where every rule of a lexer's ``root`` state keeps or drops its token and stays in the state (Go's
lexer is one such state; 29 of pygments 2.21's lexers pass every condition below), no token changes
what the next one is matched against: lexed from ``root``, the text is one run of the state's rules
from start to end. ``findall`` makes that run in C, one pattern, one capture group around exactly
the text kept, and no match object per token.

The pattern: the dropping rules, then one group of the keeping rules, each side in pygments'
order, then a line end no rule takes. Why that gives pygments' tokens:

- Pygments tries the rules in order at a position and takes the first that matches; so does an
  alternation, and nothing follows it in the pattern to make it try another. No rule may match
  empty (``findall`` would step past such a match, pygments would stay).
- A dropping rule goes before the keeping rules that came before it only when no position can
  start a match of both: their first characters differ (below ASCII, and one of the two only
  ever starts with an ASCII character). Within each side the order is pygments'.
- Where no rule matches, pygments keeps the character as an ``Error`` token, or drops a line
  end and goes back to ``root``, where the run already is: the group's last alternative and the
  pattern's last. So every position ``findall`` tries is one pygments' loop reaches, and it
  never has to search.
- A ``Text``-like rule (kept unless blank) keeps only where no match of it can be blank.
- A ``bygroups`` rule of two groups whose second is one character ``c`` (Go's ``len(``, a
  line's ``\\`` and its end) becomes its first group followed by a look-ahead for ``c``: ``c``
  is then lexed at its own position, by the first rule that may start with it, which must be a
  rule of one character that keeps or drops ``c`` as the ``bygroups`` would.
- A rule of one character (Go's punctuation) also comes first in the group for the characters
  no earlier rule may start with: where one stands, that rule is pygments' first match (not
  under a lexer-wide IGNORECASE, where the class would match other cases too).
- The whitespace a state's tokens take after them (:mod:`.blanks`) is taken here too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from minhashdup.source.fastlex.apart import ZERO_WIDTH, ascii_start
from minhashdup.source.fastlex.groups import group_opens, without_groups
from minhashdup.source.fastlex.states import Plan, Source, State, States, _fast_kind
from minhashdup.source.patterns import ASCII, SPACES, embeddable, first_chars, may_start
from minhashdup.source.significant import DROP, KEEP, KEEP_UNLESS_BLANK

#: The kept tokens of a preprocessed text, lexed from the root state.
Whole = Callable[[str], list[str]]


class _Rule(NamedTuple):
    text: str  # its alternative (no capturing group)
    keep: bool
    starts: set[int] | None  # its ASCII first characters (None: any)
    ascii: bool  # every match of it starts with an ASCII character
    tail: bool  # it may take the state's whitespace after it
    chars: frozenset[str] = frozenset()  # a rule of one character: the ASCII ones it matches


def of_root(states: States) -> Whole | None:
    """The one-call lex of a lexer's states from ``root`` (:func:`whole`), looked for once."""
    if states.whole is None:
        states.whole = (whole(states["root"]) if "root" in states.tokendefs else None,)
    return states.whole[0]


def whole(state: State) -> Whole | None:
    """The one-call lex of texts from ``state`` (the lexer's root), or ``None`` where the module
    docstring's conditions do not all hold."""
    rules = rules_of(state)
    if rules is None:
        return None
    keeps = [r for r in rules if r.keep]
    taken = state.taken.tail
    parts = [f"(?:{r.text}){taken if r.tail else ''}" for r in rules if not r.keep]
    front = [] if state.flags & re.IGNORECASE else _front(rules)  # folded, a class takes other cases
    alternatives = ["[" + "".join(f"\\x{ord(c):02x}" for c in front) + "]"] if front else []
    alternatives += [f"(?:{r.text})" for r in _ordered(keeps)] + [r"[^\n]"]
    parts.append("(" + "|".join(alternatives) + ")" + (taken if all(r.tail for r in keeps) else ""))
    parts.append(r"\n")
    try:
        findall = re.compile("|".join(parts), state.flags).findall
    except re.error:
        return None
    return lambda text: list(filter(None, findall(text)))


def rules_of(state: State) -> list[_Rule] | None:
    """The rules of ``state`` as its one-call pattern takes them (:func:`whole`), in pygments'
    order, or ``None`` where the module docstring's conditions do not all hold."""
    if state.joined is None or state.apart or any(source.guard is not None for source in state.sources):
        return None  # (a guarded rule's attempts need the scan's guard: .guard)
    rules: list[_Rule] = []
    for plan, source in zip(state.sequential, state.sources, strict=True):
        rule = _rule(plan, source, state)
        if rule is None:
            return None
        rules.append(rule)
    if any(not d.keep and any(k.keep and not _apart(k, d) for k in rules[:j]) for j, d in enumerate(rules)):
        return None
    return rules


def _rule(plan: Plan, source: Source, state: State) -> _Rule | None:
    """A rule as the one pattern takes it, or ``None`` where it cannot."""
    if plan.new_state is not None or source.starts[1]:
        return None
    parsed = embeddable(source.text, state.flags)
    if parsed is None:
        return None
    flags = parsed.state.flags
    ascii_only = ascii_start(list(parsed), flags)
    if plan.by_groups is not None:
        text = _split(plan, source, list(parsed), flags, state)
        return (
            None if text is None else _Rule(text[0], text[1], source.starts[0], ascii_only, not state.taken.within_line)
        )
    kind = _fast_kind(plan, source)
    if kind not in (DROP, KEEP, KEEP_UNLESS_BLANK) or source.groups:
        return None
    if kind == KEEP_UNLESS_BLANK and not _never_blank(parsed, flags):
        return None
    tail = not (state.taken.within_line and source.ends_line)
    chars: frozenset[str] = frozenset()
    if kind != DROP:
        chars = frozenset(c for c in map(chr, range(ASCII)) if not c.isspace() and _alone(plan, list(parsed), c, flags))
    return _Rule(source.text, kind != DROP, source.starts[0], ascii_only, tail, chars)


def _alone(plan: Plan, items: list[Any], c: str, flags: int) -> bool:
    """Whether the rule matches ``c`` and every match of it at a ``c`` is that one character: a
    set, or a choice whose other branches cannot start with ``c`` (``...`` or ``[(.]`` at ``(``)."""
    if not plan.rexmatch(c):
        return False
    if len(items) == 1 and str(items[0][0]) == "BRANCH":
        branches = items[0][1][1]
        return all(_one_char(list(b)) or not may_start(b, ord(c), flags) for b in branches)
    return _one_char(items)


def _one_char(items: list[Any]) -> bool:
    """Whether the parsed items are one character: a literal or a set."""
    return len(items) == 1 and str(items[0][0]) in ("LITERAL", "IN")


def _split(plan: Plan, source: Source, items: list[Any], flags: int, state: State) -> tuple[str, bool] | None:
    """A ``bygroups`` rule ``(P)...(c)`` as ``P...`` followed by a look-ahead for ``c``, and
    whether it keeps ``P``'s text; ``None`` unless ``c`` is then lexed as the rule would."""
    groups = plan.by_groups or ()
    if source.groups != 2 or [g for g, _, _ in groups] != [1, 2] or state.flags & re.IGNORECASE:
        return None
    first, last = items[0], items[-1]
    if str(first[0]) != "SUBPATTERN" or first[1][0] != 1 or any(str(op) not in ZERO_WIDTH for op, _ in items[1:-1]):
        return None
    if str(last[0]) != "SUBPATTERN" or last[1][:3] != (2, 0, 0) or len(last[1][3]) != 1:
        return None
    op, code = last[1][3][0]
    if str(op) != "LITERAL" or code >= ASCII:
        return None
    c = chr(code)
    (_, head, _), (_, tail, _) = groups
    keeps_head = head == KEEP or (head == KEEP_UNLESS_BLANK and _never_blank(first[1][3], flags))
    if head not in (DROP, KEEP) and not keeps_head:
        return None
    keeps_c = tail == KEEP or (tail == KEEP_UNLESS_BLANK and not c.isspace())
    if (c.isspace() and keeps_c) or _lexed_alone(c, state) != keeps_c:
        return None
    opens = group_opens(source.text)
    cut = opens[-1] if opens else None
    bare = None if cut is None else without_groups(source.text[:cut], state.flags)
    rest = embeddable(source.text[cut:], state.flags) if cut is not None else None
    if bare is None or rest is None or len(rest) != 1 or list(rest[0][1][3]) != [(op, code)]:
        return None
    return f"(?:{bare})(?={re.escape(c)})", keeps_head


def _lexed_alone(c: str, state: State) -> bool | None:
    """Whether ``c`` is kept when the state lexes it: ``None`` unless the first rule that may
    start with it is a rule of one character that matches it and stays in the state."""
    for plan, source in zip(state.sequential, state.sources, strict=True):
        chars, nullable = source.starts
        if nullable or chars is None or ord(c) in chars:
            parsed = embeddable(source.text, state.flags)
            kind = _fast_kind(plan, source)
            if parsed is None or plan.new_state is not None or plan.by_groups is not None:
                return None
            if not _alone(plan, list(parsed), c, parsed.state.flags):
                return None
            if kind == KEEP_UNLESS_BLANK:
                return not c.isspace()
            return None if kind not in (DROP, KEEP) else kind == KEEP
    return None


def _front(rules: list[_Rule]) -> list[str]:
    """The characters a rule of one character keeps where no earlier rule may start (a class
    tried first in the group)."""
    return sorted({c for i, r in enumerate(rules) if r.keep for c in r.chars if not _may_start(rules[:i], c)})


def _ordered(rules: list[_Rule]) -> list[_Rule]:
    """``rules`` with each moved ahead of those before it that it is apart from (:func:`_apart`)
    and that may start with fewer ASCII characters: tried sooner, as a rule of more first
    characters (a name's) likely matches more often. Of two rules that may both match at one
    position, the first stays first: pygments' choice at every position stays the same."""
    out: list[_Rule] = []
    for rule in rules:
        at = len(out)
        while at and _apart(rule, out[at - 1]) and len(rule.starts or ()) > len(out[at - 1].starts or ()):
            at -= 1
        out.insert(at, rule)
    return out


def _apart(a: _Rule, b: _Rule) -> bool:
    """Whether no position can start a match of both rules."""
    return a.starts is not None and b.starts is not None and not (a.starts & b.starts) and (a.ascii or b.ascii)


def _may_start(rules: list[_Rule], c: str) -> bool:
    """Whether a match of one of ``rules`` may start with the ASCII character ``c``."""
    return any(r.starts is None or ord(c) in r.starts for r in rules)


def _never_blank(items: Any, flags: int) -> bool:
    """Whether no match of the parsed items is empty or starts with whitespace."""
    _, nullable = first_chars(items, flags)
    return not nullable and not any(may_start(items, code, flags) for code in SPACES)
