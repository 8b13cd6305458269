"""Another version of a text lexed before: what they share taken from that lex, exactly.

Pygments' loop reads forward: what it yields from a position on depends only on the state
stack there and the text from there on, but for what its patterns look *behind* (``\\b``,
``^`` in MULTILINE, ``(?<=...)``), a bounded number of characters (:func:`lookbehind`). So
when the lex of a new text stands at a position inside the tail it shares with a text lexed
before (its *base*), at least that many characters past the start of the shared tail, with
the stack the base's lex had at the same distance from the end, the rest of its tokens are the
base's from there. Both texts are preprocessed (pygments' newline and tab rules) before this.

The scan records where its lex stood (:class:`Splice`, every :data:`STRIDE` characters: a
position, how many tokens were kept before it, the stack), and a later lex of a related text
looks for one of those in the shared tail.

Before that tail, a stretch the two texts share between two differences is taken too, where
:mod:`.reach` can bound what was read: the later lex finds one of the base's marks again (its
text where the last one was, or near), and, standing there with the same stack, takes the
base's tokens up to a later mark before which no match attempt may have read past the stretch's
end (the rules of bounded reach by the text; those that may read anything by trying again, in
this text, each match the base's lex recorded for them), then lexes on from that mark's stack.

Only lexers whose every rule is a pattern, a token type or a ``bygroups`` of those and
``using(this)`` qualify (:func:`spliceable`): any other callback is code that may read the text
anywhere.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import re
from typing import Any, cast

from minhashdup.source.fastlex.guard import guard_of
from minhashdup.source.patterns import parser as sre_parse  # its node codes too, as sre_parse has them

#: Characters between two recorded positions of a lex (at most this many past the start of the
#: shared tail are lexed again before a recorded position is met).
STRIDE = 256
#: Larger than any position: no mark due.
NEVER = 1 << 62

_FORWARD_ATS = {sre_parse.AT_END, sre_parse.AT_END_LINE, sre_parse.AT_END_STRING, sre_parse.AT_BEGINNING_STRING}
Mark = tuple[int, tuple[str, ...]]  # tokens kept before a position, and the stack there
#: A position a rule that may read any character was tried at: the pattern tried there (its
#: number among :attr:`.reach.Reach.joins`), the group of the rule that matched (0: none), what
#: the match gave (:meth:`.reach.Reach.spans`) and its length (all from the position). Ints
#: only: the garbage collector stops following such a tuple once it has seen it.
Tried = tuple[int, int, int, tuple[int, ...], int]
#: Tokens taken from a base: where in the new lex's tokens, from where in the base's, how many.
Copy = tuple[int, int, int]


@dataclasses.dataclass(frozen=True, slots=True)
class Lexed:
    """A text as lexed (preprocessed), its kept tokens, the marks recorded on the way, how
    many of its tokens (the last) were taken from a base's, and the tokens' pygments types when
    the lex tracked them (a lex that needs them takes a tail only from a base that has them)."""

    text: str
    tokens: list[str]
    marks: dict[int, Mark]
    taken: int = 0
    types: list[Any] | None = None
    #: Where a rule that may read any character (:attr:`.reach.Reach.far`) was tried, in order,
    #: and what matched there (:data:`Tried`; ``None``: not recorded).
    far: list[Tried] | None = None
    reach: Any = None  # the :class:`.reach.Reach` whose joined patterns ``far`` numbers


def lookbehind(pattern: sre_parse.SubPattern) -> int:
    """How many characters before the position it is tried at a parsed pattern may read (a
    zero-width assertion of what precedes, ``\\b``, ``^``: 1; a lookbehind: its width)."""
    most = 0
    for op, av in pattern.data:
        if op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT) and av[0] < 0:
            width = av[1].getwidth()[1]
            most = max(most, width + lookbehind(av[1]))
        elif op is sre_parse.AT:
            most = max(most, 0 if av in _FORWARD_ATS else 1)
        else:
            most = max(most, max((lookbehind(p) for p in _nested(av)), default=0))
    return most


def _nested(av: Any) -> list[sre_parse.SubPattern]:
    """The sub-patterns held in a parsed node's argument, at any depth of tuples and lists."""
    if isinstance(av, sre_parse.SubPattern):
        return [av]
    if isinstance(av, (tuple, list)):
        return [p for item in av for p in _nested(item)]
    return []


def spliceable(tokendefs: dict[str, list[Any]], plans: list[Any]) -> int | None:
    """The lookbehind of a lexer whose tails may be taken from a base (the most any of its
    rules' patterns reads before its position), or ``None`` when they may not: a rule with a
    callback that is not ``bygroups``/``using(this)`` of token types (``plans``: every rule's
    :class:`.states.Plan`), a rule with a guard (:mod:`.guard`), or a pattern this cannot parse."""
    from minhashdup.source.fastlex.states import AGAIN, CALLBACK, TYPED

    for plan in plans:
        code = plan.kind == CALLBACK and plan.by_groups is None
        if code and (plan.parts is None or any(kind not in (TYPED, AGAIN) for kind, _, _ in plan.parts)):
            return None
    most = 0
    for rules in tokendefs.values():
        for rexmatch, _, _ in rules:
            compiled = getattr(rexmatch, "__self__", None)
            if not isinstance(compiled, re.Pattern) or not isinstance(compiled.pattern, str):
                return None
            try:
                parsed = sre_parse.parse(compiled.pattern, compiled.flags)
            except Exception:  # a pattern the parser of this Python reads otherwise: no splice
                return None
            if guard_of(parsed, parsed.state.flags) is not None:
                return None  # its signal's empty match is no token a record could compare (.guard)
            most = max(most, lookbehind(parsed))
    return most


def shared_tail(a: str, b: str) -> int:
    """The length of the longest common suffix of ``a`` and ``b`` (slices compared in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # a tail of length k shared means every shorter one is
        k = (low + high + 1) // 2
        if a[len(a) - k :] == b[len(b) - k :]:
            low = k
        else:
            high = k - 1
    return low


def shared_head(a: str, i: int, b: str, j: int) -> int:
    """The length of the longest common prefix of ``a[i:]`` and ``b[j:]`` (slices compared in C,
    galloping: the work grows with the length found, not with the texts')."""
    most = min(len(a) - i, len(b) - j)
    low, step = 0, 64
    while low < most:  # low characters shared; try step more
        k = min(step, most - low)
        if a[i + low : i + low + k] != b[j + low : j + low + k]:
            high = low + k - 1
            while low < high:  # a prefix of length n shared means every shorter one is
                n = (low + high + 1) // 2
                if a[i + low : i + n] == b[j + low : j + n]:
                    low = n
                else:
                    high = n - 1
            return low
        low += k
        step *= 2
    return low


_LEXES = itertools.count()  # numbers each lex (a watched table is brought up to date once per lex)

#: Characters after an anchor that must agree for it to be tried; how far past where it is
#: expected one is looked for; how many characters looking may read, in all, per text length.
KEY, LOOK, BUDGET = 32, 1 << 16, 8
#: Farther than this many strides from where it was expected, a mark found again must be followed
#: by the next.
JUMP = 4
#: What :meth:`Splice.at` returns: the tokens are complete; the scan goes on at :attr:`Splice.resume`.
DONE, RESUME = -1, -2


class Splice:
    """What the scan of one text calls at the positions it asks for (:attr:`due`, then what
    :meth:`at` returns): records a mark there when asked to; inside the tail shared with
    ``base`` (after ``behind`` characters of it) looks for the base's mark at the same distance
    from the end; before that tail, with ``reach`` (:class:`.reach.Reach`), takes the base's
    tokens over each stretch the texts share (:meth:`_middle`), and ``types`` (the list the scan
    appends the lexed tokens' types to) gets the taken tokens' types, and ``copies`` (a list) where
    tokens were taken (:data:`Copy`)."""

    def __init__(
        self,
        text: str,
        base: Lexed | None,
        behind: int,
        record: bool,
        reach: Any = None,
        types: list[Any] | None = None,
        copies: list[Copy] | None = None,
    ) -> None:
        self.marks: dict[int, Mark] | None = {} if record else None
        self.next_mark = 0 if record else NEVER
        self.base, self.text, self.behind, self.reach, self.types = base, text, behind, reach, types
        self.copies = copies
        self.shift = 0
        self.sync_from = NEVER
        self.anchor = (NEVER, 0)  # the next position to take a stretch at, and the base's mark there
        self.resume: tuple[int, list[str]] = (0, [])
        self.taken = 0  # tokens taken from the base
        self.far: list[Tried] | None = [] if record and reach is not None else None
        # A lex recorded for a later version looks its tables up through :meth:`watch` (the scan
        # takes the bound method: one kept here would make each splice a cycle, its records and
        # base freed by the garbage collector only, which then walked them on every collection).
        self.watching = self.far is not None
        self.lex = next(_LEXES)
        # The base's records, where this lex may read them: numbered by the same Reach.
        self.records = base.far if base is not None and reach is not None and base.reach is reach else None
        if base is not None:
            tail = shared_tail(text, base.text)
            start = len(text) - tail + behind + 1  # one more than the patterns read: margin
            if start < len(text) and len(base.text) - len(text) + start > behind:
                self.sync_from, self.shift = start, len(base.text) - len(text)
            if self.records is not None:
                self.positions = list(base.marks)  # recorded in order
                self.limit = (len(text) - tail, len(base.text) - tail)  # where the shared tail starts
                self.looked, self.moved = 0, 0  # characters looked through; base less text position
                self._plan(0, 0)
        self.due = min(self.next_mark, self.sync_from, self.anchor[0])

    def at(self, pos: int, stack: list[str], out: list[str]) -> int:
        """At the start of a token at ``pos`` with ``stack``, ``out`` the tokens kept before it:
        the next position to be called at, :data:`DONE` when ``out`` is complete (the base's
        tail appended), or :data:`RESUME` when the scan goes on at :attr:`resume`."""
        if pos >= self.next_mark and self.marks is not None:
            self.marks[pos] = (len(out), tuple(stack))
            self.next_mark = pos + STRIDE
        if pos >= self.sync_from and self.base is not None:
            there = pos + self.shift
            mark = self.base.marks.get(there)
            if mark is not None and mark[1] == tuple(stack):
                self._take(there, mark[0], out)
                return DONE
            return pos + 1
        if pos >= self.anchor[0]:
            here, there = self.anchor
            self.anchor = (NEVER, 0)
            reached, moved = self._middle(there, stack, out) if pos == here else (there, False)
            self._plan(bisect.bisect_right(self.positions, reached), self.resume[0] + 1 if moved else pos + 1)
            if moved:
                self.due = min(self.next_mark, self.sync_from, self.anchor[0])
                return RESUME
        self.due = min(self.next_mark, self.sync_from, self.anchor[0])
        return self.due

    def _middle(self, there: int, stack: list[str], out: list[str]) -> tuple[int, bool]:
        """Take the base's tokens from its mark at ``there`` (the scan at the same text, with the
        same ``stack``) up to a later mark of the base's, as far as no attempt in between may have
        read past the stretch the texts share; sets :attr:`resume`. Returns where danger begins
        in the base (the end of the stretch when none: later marks may still be tried), and whether
        tokens were taken."""
        base = cast(Lexed, self.base)
        count, kept = base.marks[there]
        if kept != tuple(stack):
            return there, False
        here = there - self.moved
        end = there + shared_head(base.text, there, self.text, here)
        reached = self.reach.first_reaching(base.text, there, end)
        far = cast(list[Tried], self.records)
        first = bisect.bisect_left(far, there, key=_at)
        text, moved, spans, joins = self.text, self.moved, self.reach.spans, self.reach.joins
        for q, number, rule, groups, length in far[first:]:  # where a rule reading anything was tried
            if q >= reached:
                break
            joined = joins[number]
            m = joined.match(text, q - moved)  # the same match in this text, within the stretch?
            if m is None:
                same = rule == 0
            else:
                same = m.lastindex == rule and q + groups[0] <= end and m.end() - m.start() == length
                if same:  # the rule's end alone (Reach.spans of a rule counted one group), or all
                    same = m.end(rule) - m.start() == groups[0] if len(groups) == 1 else spans(joined, m) == groups
            if not same:
                reached = q
                break
        k = bisect.bisect_right(self.positions, reached) - 1
        upto = self.positions[k]
        if upto <= there:
            return reached, False
        last, after = base.marks[upto]
        self._copy(count, last, out)
        if self.marks is not None:  # the base's marks in the stretch are this text's, moved
            offset = len(out) - last
            for p in self.positions[bisect.bisect_right(self.positions, there) : k + 1]:
                n, s = base.marks[p]
                self.marks[p - self.moved] = (n + offset, s)
            self.next_mark = upto - self.moved + STRIDE
        if self.far is not None:
            self.far += _moved(far[first : bisect.bisect_left(far, upto, key=_at)], moved)
        self.resume = (upto - self.moved, list(after))
        return reached, True

    def _plan(self, k: int, cursor: int) -> None:
        """The next anchor: the first of the base's marks from the ``k``-th whose text (with the
        characters the patterns read behind) is found in this text at ``cursor`` or later, where
        it is expected (the last anchor's distance) or near (within :data:`LOOK`; farther than
        :data:`JUMP` strides from there only where the base's next mark follows it). Looking counts
        the characters read up to where the text was found, within :data:`BUDGET` per character
        of this text; a mark expected more than :data:`LOOK` before the cursor is not looked for."""
        text, back = self.text, self.behind + 1
        for i, there in enumerate(self.positions[k:], k):
            if there >= self.limit[1] or self.looked > BUDGET * len(text):
                return
            key = self._key(there)
            expected = there - self.moved
            behind = there - max(0, there - back)
            if expected >= cursor and text.startswith(key, expected - behind) and (there >= back or expected == there):
                self.anchor = (expected, there)
                return
            if there < back:
                continue
            start, stop = max(0, cursor - back), min(len(text), expected + LOOK)
            if stop <= start:  # expected further back than LOOK before the cursor: nowhere to look
                continue
            found = text.find(key, start, stop)
            self.looked += (stop if found < 0 else found + len(key)) - start
            if found >= 0 and abs(found + back - expected) > JUMP * STRIDE and not self._followed(i, found + back):
                continue
            if found >= 0 and found + back < self.limit[0]:
                self.anchor, self.moved = (found + back, there), there - found - back
                return

    def _key(self, there: int) -> str:
        """The base's text at its mark ``there``: what the patterns read behind it, and
        :data:`KEY` characters after it."""
        return cast(Lexed, self.base).text[max(0, there - self.behind - 1) : there + KEY]

    def _followed(self, i: int, here: int) -> bool:
        """Whether the base's mark after its ``i``-th is found at the same distance after
        ``here`` (where the ``i``-th's text was found): a mark's text found far from where it was
        expected is taken as an anchor only then (a line repeated in another place would take
        the lex past every mark between)."""
        if i + 1 >= len(self.positions):
            return False
        there, after = self.positions[i], self.positions[i + 1]
        return self.text.startswith(self._key(after), here + after - there - self.behind - 1)

    def _copy(self, start: int, stop: int, out: list[str]) -> None:
        base = cast(Lexed, self.base)
        if self.copies is not None and stop > start:
            self.copies.append((len(out), start, stop - start))
        out.extend(base.tokens[start:stop])
        if self.types is not None:
            self.types.extend(cast(list[Any], base.types)[start:stop])
        self.taken += stop - start

    def _take(self, there: int, count: int, out: list[str]) -> None:
        base = self.base
        assert base is not None
        offset = len(out) - count
        self._copy(count, len(base.tokens), out)
        if self.marks is not None:  # the base's marks past here are this text's, shifted
            self.marks.update((p - self.shift, (n + offset, s)) for p, (n, s) in base.marks.items() if p > there)
        if self.far is not None:
            if self.records is None:
                self.far = None
            else:
                past = bisect.bisect_left(self.records, there, key=_at)
                self.far += _moved(self.records[past:], self.shift)

    def watch(self, state: Any) -> Any:
        """The first look-up table the scan of this text uses in ``state`` (a lex recorded for a
        later version): at a character a rule reading anything may start with, the state's whole
        pattern, whose matches there that may have tried such a rule are kept in :attr:`far`
        (:class:`.watch.Watch`)."""
        reach = self.reach
        reach.current = self
        alone = state.joined is None or state.apart  # rule by rule (somewhere): not watched
        if alone and reach.far_in(state):
            self.far = None
        return state.table if alone else reach.watch(state, self.lex)


def _at(entry: Tried) -> int:
    return entry[0]


def _moved(entries: list[Tried], by: int) -> list[Tried]:
    return [(q - by, number, rule, groups, length) for q, number, rule, groups, length in entries]
