"""Another version of a text lexed before: its tail taken from that lex, exactly.

Pygments' loop reads forward: what it yields from a position on depends only on the state
stack there and the text from there on, but for what its patterns look *behind* (``\\b``,
``^`` in MULTILINE, ``(?<=...)``), a bounded number of characters (:func:`lookbehind`). So
when the lex of a new text stands at a position inside the tail it shares with a text lexed
before (its *base*), at least that many characters past the start of the shared tail, with
the stack the base's lex had at the same distance from the end, the rest of its tokens are the
base's from there. Both texts are preprocessed (pygments' newline and tab rules) before this.

The scan records where its lex stood (:class:`Splice`, every :data:`STRIDE` characters: a
position, how many tokens were kept before it, the stack), and a later lex of a related text
looks for one of those in the shared tail. Only lexers whose every rule is a pattern, a
token type or a ``bygroups`` of those and ``using(this)`` qualify (:func:`spliceable`): any
other callback is code that may read the text anywhere.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from minhashdup.source.patterns import parser as sre_parse  # its node codes too, as sre_parse has them

#: Characters between two recorded positions of a lex (at most this many past the start of the
#: shared tail are lexed again before a recorded position is met).
STRIDE = 256
#: Larger than any position: no mark due.
NEVER = 1 << 62

_FORWARD_ATS = {sre_parse.AT_END, sre_parse.AT_END_LINE, sre_parse.AT_END_STRING, sre_parse.AT_BEGINNING_STRING}
Mark = tuple[int, tuple[str, ...]]  # tokens kept before a position, and the stack there


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
    :class:`.states.Plan`), or a pattern this cannot parse."""
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
                most = max(most, lookbehind(sre_parse.parse(compiled.pattern, compiled.flags)))
            except Exception:  # a pattern the parser of this Python reads otherwise: no splice
                return None
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


class Splice:
    """What the scan of one text calls at the positions it asks for (:attr:`due`, then what
    :meth:`at` returns): records a
    mark there when asked to, and inside the tail shared with ``base`` (after ``behind``
    characters of it) looks for the base's mark at the same distance from the end."""

    def __init__(self, text: str, base: Lexed | None, behind: int, record: bool) -> None:
        self.marks: dict[int, Mark] | None = {} if record else None
        self.next_mark = 0 if record else NEVER
        self.base = base
        self.shift = 0
        self.sync_from = NEVER
        if base is not None:
            tail = shared_tail(text, base.text)
            start = len(text) - tail + behind + 1  # one more than the patterns read: margin
            if start < len(text) and len(base.text) - len(text) + start > behind:
                self.sync_from, self.shift = start, len(base.text) - len(text)
        self.due = min(self.next_mark, self.sync_from)
        self.taken = 0  # tokens taken from the base

    def at(self, pos: int, stack: list[str], out: list[str]) -> int:
        """At the start of a token at ``pos`` with ``stack``, ``out`` the tokens kept before it:
        the next position to be called at, or -1 when ``out`` is complete (the base's tail
        appended)."""
        if pos >= self.next_mark and self.marks is not None:
            self.marks[pos] = (len(out), tuple(stack))
            self.next_mark = pos + STRIDE
        if pos >= self.sync_from and self.base is not None:
            there = pos + self.shift
            mark = self.base.marks.get(there)
            if mark is not None and mark[1] == tuple(stack):
                self._take(there, mark[0], out)
                return -1
            return pos + 1
        return min(self.next_mark, self.sync_from)

    def _take(self, there: int, count: int, out: list[str]) -> None:
        base = self.base
        assert base is not None
        offset = len(out) - count
        self.taken = len(base.tokens) - count
        out.extend(base.tokens[count:])
        if self.marks is not None:  # the base's marks past here are this text's, shifted
            self.marks.update((p - self.shift, (n + offset, s)) for p, (n, s) in base.marks.items() if p > there)


def family(path: str) -> str:
    """What versions of one file share in their paths: the file's name and its folder's
    (``go-1.21/src/net/http/server.go`` and ``go-1.24/src/net/http/server.go``: ``http/server.go``)."""
    return "/".join(path.replace("\\", "/").rsplit("/", 2)[-2:])


#: The most characters of text :class:`Versions` keeps lexed at once (with their tokens, types and
#: marks, ~20 bytes a character: ~80 MB): a batch whose files' sizes interleave many families
#: keeps no more.
KEEP_CHARS = 4_000_000


class Versions:
    """The bases kept for later versions among a run of files (a batch): the last one lexed
    of each :func:`family` for as long as one of that family is still to come, within
    :data:`KEEP_CHARS`. ``files``: each file's path as walked (its family) and the path it is
    read by (what :meth:`take` and :meth:`passed` are given); the run calls :meth:`passed`
    after each file, lexed or not (a copy, a skip), so a family's base goes with its last file."""

    def __init__(self, files: list[tuple[str, str]]) -> None:
        self.family = {read: family(walked) for walked, read in files}
        self.left: dict[str, int] = {}
        for key in self.family.values():
            self.left[key] = self.left.get(key, 0) + 1
        self.bases: dict[str, tuple[type, Lexed]] = {}
        self.chars = 0  # of the texts kept

    def take(self, path: str, lexer: type) -> tuple[str, Lexed | None, bool]:
        """For the file read at ``path`` lexed by ``lexer`` now: its family, the base it may take
        a tail from, and whether to record its lex for a later one (one of its family is left)."""
        key = self.family.get(path) or family(path)
        kept = self._drop(key)
        base = kept[1] if kept is not None and kept[0] is lexer else None
        return key, base, self.left.get(key, 0) > 1

    def keep(self, key: str, lexer: type, lexed: Lexed) -> None:
        """Keep ``lexed`` (by ``lexer``) as the base of the next of family ``key``, if it fits."""
        if self.left.get(key, 0) > 1 and self.chars + len(lexed.text) <= KEEP_CHARS:
            self.bases[key] = (lexer, lexed)
            self.chars += len(lexed.text)

    def passed(self, path: str) -> None:
        """The file read at ``path`` is done (lexed, copied or skipped): one fewer of its family
        to come; the family's base goes with the last."""
        key = self.family.get(path) or family(path)
        left = self.left.get(key, 1) - 1
        self.left[key] = left
        if left <= 0:
            self._drop(key)

    def _drop(self, key: str) -> tuple[type, Lexed] | None:
        kept = self.bases.pop(key, None)
        self.chars -= 0 if kept is None else len(kept[1].text)
        return kept
