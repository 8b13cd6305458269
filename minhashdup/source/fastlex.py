"""A faster driver for pygments' RegexLexer, built at run time from the lexer's own rules.

Pygments tries the rules of the current state one by one at every position: a Python-level
regex call per rule. Here each state's rules become one regular expression whose
alternatives are the rules in order, each wrapped in its own group. Python's regex engine
tries alternatives left to right and takes the first that matches, which is pygments'
first-rule-wins, and ``m.lastindex`` (the wrapper group closes last) tells which rule fired.
Rules whose action is a callback (``bygroups``, ``using``, ...) are matched again with their
own pattern so the callback gets the match object it expects; state pushes and pops follow
``RegexLexer.get_tokens_unprocessed`` line for line.

A state that cannot be joined exactly (a rule with backreferences, named groups or
conditionals) is run rule by rule, as pygments does. A lexer that is not a plain RegexLexer
(ExtendedRegexLexer, a custom ``get_tokens_unprocessed``) is not taken at all: callers fall
back to pygments for it. The differential tests and ``bench/lexer_identity.py`` check that
the token stream is the same.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from pygments.lexer import ExtendedRegexLexer, Lexer, RegexLexer
from pygments.token import Error, Keyword, Name, _TokenType

from minhashdup.source.patterns import ASCII, embeddable, first_chars, own_flags, scoped
from minhashdup.source.significant import DROP, KEEP, KEEP_UNLESS_BLANK, kept, verdict

Token = tuple[int, Any, str]
Rule = tuple[Callable[..., Any], Any, Any]  # (pattern.match, action, new_state) as pygments keeps them


def _type_names(lexer: Lexer) -> frozenset[str]:
    """The names a vetted override retypes from ``Name`` to ``Keyword.Type`` (by the lexer's
    options, as its loop reads them); empty for a lexer that retypes nothing."""
    from pygments.lexers.c_cpp import CFamilyLexer

    if not isinstance(lexer, CFamilyLexer):
        return frozenset()
    options = (
        ("stdlibhighlighting", "stdlib_types"),
        ("c99highlighting", "c99_types"),
        ("c11highlighting", "c11_atomic_types"),
        ("platformhighlighting", "linux_types"),
    )
    return frozenset(n for on, names in options if getattr(lexer, on, False) for n in getattr(lexer, names, ()))


def _vetted_overrides() -> set[type]:
    # Classes whose get_tokens_unprocessed only wraps RegexLexer's to change token *types*
    # from Name to Keyword.Type: the texts, and which tokens are comments or whitespace,
    # stay the same, so the fast stream (before that retyping) drops the same tokens.
    from pygments.lexers.c_cpp import CFamilyLexer

    return {CFamilyLexer}


_CALLBACK = max(DROP, KEEP, KEEP_UNLESS_BLANK) + 1  # a rule whose callback yields the tokens
_WARM_UP = 64  # positions starting with a character before its narrowed pattern is compiled


@dataclasses.dataclass(frozen=True)
class _Plan:
    """One rule, with its drop decision made in advance."""

    rexmatch: Callable[..., Any]
    action: Any
    new_state: Any
    kind: int


def _plan(rule: Rule) -> _Plan:
    rexmatch, action, new_state = rule
    if action is None:
        kind = DROP
    elif type(action) is _TokenType:
        kind = verdict(action)
    else:
        kind = _CALLBACK
    return _Plan(rexmatch, action, new_state, kind)


@dataclasses.dataclass
class _Joined:
    """A pattern joining some of a state's rules, and the rule of each of its groups."""

    match: Callable[..., Any] | None  # None: no rule can start here
    plans: list[_Plan | None]


@dataclasses.dataclass
class _State:
    sequential: list[_Plan]
    joined: _Joined | None  # all rules joined, or None: rule by rule
    by_char: list[_Joined | None]  # for each ASCII character, the rules that can start with it
    starts: list[tuple[set[int] | None, bool]] = dataclasses.field(default_factory=list)
    sources: list[tuple[str, int]] = dataclasses.field(default_factory=list)
    flags: int = 0
    built: dict[tuple[int, ...], _Joined] = dataclasses.field(default_factory=dict)
    seen: list[int] = dataclasses.field(default_factory=lambda: [0] * ASCII)

    def for_char(self, code: int) -> _Joined:
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
            i for i, (chars, nullable) in enumerate(self.starts) if chars is None or nullable or code in chars
        )
        found = self.built.get(chosen)
        if found is None:
            found = _compile(self.sequential, self.sources, list(chosen), self.flags) or self.joined
            assert found is not None
            self.built[chosen] = found
        self.by_char[code] = found
        return found


class FastLexer:
    """The fast driver for one pygments lexer instance (see the module docstring).

    Raises:
        TypeError: the lexer is not one this driver reproduces exactly.
    """

    def __init__(self, lexer: Lexer) -> None:
        if not supported(type(lexer)):
            raise TypeError(f"{type(lexer).__name__} is not a plain RegexLexer")
        self.lexer = lexer
        tokendefs: dict[str, list[Rule]] = type(lexer)._tokens
        self.states = _States(tokendefs, type(lexer).flags)
        self.type_names = _type_names(lexer)

    def significant_tokens(self, text: str) -> list[str]:
        """The same texts as ``tokens.significant_tokens(lexer, text)``, faster.

        Per rule the drop decision is made once (comment, whitespace, or whitespace-only
        text), so a dropped token costs one regex call and no tuple.
        """
        return self._scan(self.lexer._preprocess_lexer_input(text), None)

    def significant_tokens_with_types(self, text: str) -> tuple[list[str], list[_TokenType]]:
        """:meth:`significant_tokens` and the pygments type of each kept token."""
        types: list[_TokenType] = []
        texts = self._scan(self.lexer._preprocess_lexer_input(text), None, types)
        return texts, self._retyped(texts, types)

    def significant_tokens_with_lines(self, text: str) -> tuple[list[str], list[int]]:
        """:meth:`significant_tokens` and the 1-based line each kept token starts on."""
        return self._with_lines(text, None)

    def significant_tokens_with_lines_and_types(self, text: str) -> tuple[list[str], list[int], list[_TokenType]]:
        """:meth:`significant_tokens_with_lines` and each kept token's pygments type."""
        types: list[_TokenType] = []
        texts, lines = self._with_lines(text, types)
        return texts, lines, self._retyped(texts, types)

    def _retyped(self, texts: list[str], types: list[_TokenType]) -> list[_TokenType]:
        """``types`` as the lexer's own loop gives them: a vetted override's names of types
        (C's ``size_t``) are ``Keyword.Type`` there, and normalisation keeps keywords' text."""
        if self.type_names:
            names = self.type_names
            types[:] = [Keyword.Type if t is Name and v in names else t for v, t in zip(texts, types, strict=True)]
        return types

    def _with_lines(self, text: str, types: list[_TokenType] | None) -> tuple[list[str], list[int]]:
        """The kept tokens and the 1-based line of each; with ``types``, their types appended to it."""
        text = self.lexer._preprocess_lexer_input(text)  # newlines made LF: offsets count those
        starts: list[int] = []
        tokens = self._scan(text, starts, types)
        newlines = np.flatnonzero(np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32) == 10)
        return tokens, (np.searchsorted(newlines, np.asarray(starts, dtype=np.int64)) + 1).tolist()

    def _callback(self, plan: _Plan, text: str, pos: int, keep: Callable[[str], None], at: _At | None) -> None:
        """Run a callback rule (``bygroups``, ``using``, ...) at ``pos``; keep its kept tokens."""
        for index, ttype, value in plan.action(self.lexer, plan.rexmatch(text, pos)):
            if kept(ttype, value):
                keep(value)
                if at is not None:
                    at(index, ttype)

    # The per-token hot loop: names are locals, and a joined state's match and a token kept or
    # dropped by its type stay inline; only the rare paths (a state run rule by rule, a callback
    # rule) are calls, which measured no slower than inline (issue 12).
    def _scan(self, text: str, starts: list[int] | None, types: list[_TokenType] | None = None) -> list[str]:
        """The kept tokens of preprocessed ``text``; with ``starts``, each one's offset too, and
        with ``types`` each one's token type."""
        out: list[str] = []
        keep = out.append
        track = starts is not None or types is not None
        at = _tracker(starts, types)
        states = self.states
        keep_all, keep_unless_blank, callback, ascii_ = KEEP, KEEP_UNLESS_BLANK, _CALLBACK, ASCII  # locals: hot loop
        code_of = ord
        pos, end = 0, len(text)
        stack = ["root"]
        state = states["root"]
        whole, by_char = state.joined, state.by_char  # the state's, looked up on a change of state only
        plan: _Plan | None
        while True:
            joined = whole
            if joined is not None:
                if pos < end:
                    code = code_of(text[pos])
                    if code < ascii_:
                        joined = by_char[code] or state.for_char(code)
                match = joined.match
                m = None if match is None else match(text, pos)
                plan = None if m is None else joined.plans[m.lastindex]
            else:
                m, plan = _first_rule(state.sequential, text, pos)
            if plan is None or m is None:
                if pos >= end:
                    break
                if text[pos] == "\n":  # at a line end pygments resets to the root state
                    stack = ["root"]
                    state = states["root"]
                    whole, by_char = state.joined, state.by_char
                else:
                    keep(text[pos])  # an Error token: kept, as pygments yields it
                    if track:
                        at(pos, Error)
                pos += 1
                continue
            kind = plan.kind
            if kind == keep_all:
                keep(m.group())
                if track:
                    at(pos, plan.action)
            elif kind == keep_unless_blank:
                value = m.group()
                if value and not value.isspace():
                    keep(value)
                    if track:
                        at(pos, plan.action)
            elif kind == callback:
                self._callback(plan, text, pos, keep, at if track else None)
            pos = m.end()
            new_state = plan.new_state
            if new_state is not None:
                stack = _transition(stack, new_state)
                state = states[stack[-1]]
                whole, by_char = state.joined, state.by_char
        return out


def _first_rule(plans: list[_Plan], text: str, pos: int) -> tuple[Any, _Plan | None]:
    """The match of the first rule that matches at ``pos``, and that rule (pygments' order)."""
    for candidate in plans:
        m = candidate.rexmatch(text, pos)
        if m is not None:
            return m, candidate
    return None, None


#: Records a kept token's offset and type (see :func:`_tracker`).
_At = Callable[[int, _TokenType], None]


def _tracker(starts: list[int] | None, types: list[_TokenType] | None) -> _At:
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
    return _no_op


def _no_op(_: int, __: _TokenType) -> None:
    return None


class _States(dict[str, "_State"]):
    """A lexer's states, each joined the first time the lexer enters it (most files enter
    few of a big lexer's states, and joining means parsing and compiling its rules)."""

    def __init__(self, tokendefs: dict[str, list[Rule]], flags: int) -> None:
        super().__init__()
        self.tokendefs, self.flags = tokendefs, flags

    def __missing__(self, name: str) -> _State:
        state = _join(self.tokendefs[name], self.flags)
        self[name] = state
        return state


def _transition(stack: list[str], new_state: Any) -> list[str]:
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


def supported(cls: type) -> bool:
    """True for RegexLexer subclasses whose token loop is RegexLexer's own (or vetted)."""
    if not issubclass(cls, RegexLexer) or issubclass(cls, ExtendedRegexLexer):
        return False
    for klass in cls.__mro__:
        if "get_tokens_unprocessed" in klass.__dict__:
            return klass is RegexLexer or klass in _vetted_overrides()
    return False


def _join(rules: list[Rule], flags: int) -> _State:
    """One pattern for a state's rules, or ``joined=None`` when that would not be exact."""
    plans = [_plan(rule) for rule in rules]
    sequential = _State(plans, None, [])
    sources: list[tuple[str, int]] = []
    starts: list[tuple[set[int] | None, bool]] = []
    for plan in plans:
        pattern: re.Pattern[str] = cast(Any, plan.rexmatch).__self__  # compiled by pygments, lexer's flags
        if not isinstance(pattern.pattern, str) or own_flags(pattern) != flags & ~re.UNICODE:
            return sequential
        source = scoped(pattern.pattern)
        parsed = embeddable(source, flags) if source is not None else None
        if source is None or parsed is None:
            return sequential
        sources.append((source, pattern.groups))
        starts.append(first_chars(parsed, parsed.state.flags))
    everything = _compile(plans, sources, list(range(len(plans))), flags)
    if everything is None:
        return sequential
    return _State(plans, everything, [None] * ASCII, starts, sources, flags)


def _compile(plans: list[_Plan], sources: list[tuple[str, int]], chosen: list[int], flags: int) -> _Joined | None:
    """Join the chosen rules, in order, each in a wrapper group; ``None`` if that fails."""
    if not chosen:
        return _Joined(None, [])
    by_group: list[_Plan | None] = [None]
    parts = []
    for i in chosen:
        source, groups = sources[i]
        by_group.append(plans[i])
        by_group.extend([None] * groups)
        parts.append(f"({source})")
    try:
        joined = re.compile("|".join(parts), flags)
    except re.error:
        return None
    if joined.groups != len(by_group) - 1:
        return None
    return _Joined(joined.match, by_group)
