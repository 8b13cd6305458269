"""The first look-up tables of a lex recorded for a later version: they tell where the rules
that may read anything were tried (:class:`.reach.Reach`, :class:`.splice.Splice`)."""

from __future__ import annotations

from typing import Any

from minhashdup.source.patterns import ASCII


class Watch:
    """A state's first look-up table for a lex recorded for a later version (:meth:`table`): as
    the state's own (:attr:`.states.State.table`), but at a character some rule reading anything
    may start with (ASCII only: :class:`.reach.Reach`), the state's pattern for it wrapped so that
    the lex being recorded (:attr:`.reach.Reach.current`) keeps each match there that may have
    tried such a rule (in its :attr:`.splice.Splice.far`)."""

    def __init__(self, reach: Any, state: Any) -> None:  # reach: a .reach.Reach (imports this)
        self.reach, self.state = reach, state
        firsts = [far.first for far in reach.far_in(state)]
        self.chars = [chr(c) for c in range(ASCII) if any(first.fullmatch(chr(c)) for first in firsts)]
        self.told: dict[int, tuple[Any, Any]] = {}  # id of a pattern: it, and it wrapped
        self.lex = -1  # the lex the table was last brought up to date for
        self.looked: dict[str, Any] = {}

    def table(self, lex: int) -> dict[str, Any]:
        """The table, brought up to date with the state's once per lex (``lex`` counts them)."""
        if lex != self.lex:
            self.lex, state = lex, self.state
            self.looked.update(state.table)
            for char in self.chars:
                joined = state.by_char[ord(char)] or state.for_char(ord(char))
                kept = self.told.get(id(joined))
                if kept is None or kept[0] is not joined:
                    kept = self.told[id(joined)] = (joined, self._wrapped(joined))
                self.looked[char] = kept[1]
        return self.looked

    def _wrapped(self, joined: Any) -> Any:
        # A match whose rule comes before every rule of joined's that may read anything tried
        # none of them (the first alternative that matches is the match): nothing to keep. The
        # rest is kept as :data:`.splice.Tried`, for a later version to try again: where, which
        # pattern, the rule that matched and what it gave (Reach.spans, which is the rule's end
        # alone for a rule counted one group, as Reach.joined counts them: made here, a call less
        # per match).
        reach, inner = self.reach, joined.match
        _, number, counts, first = reach.joined(joined)

        def match(text: str, pos: int) -> Any:
            m = inner(text, pos)
            if m is None:
                far = reach.current.far
                if far is not None:
                    far.append((pos, number, 0, (), 0))
            elif (rule := m.lastindex) >= first:
                far = reach.current.far
                if far is not None:
                    spans = (m.end(rule) - pos,) if counts[rule] == 1 else reach.spans(joined, m)
                    far.append((pos, number, rule, spans, m.end() - pos))
            return m

        return type(joined)(match, joined.plans, joined.fast)
