"""A one-call lex (:mod:`.bulk`) of a text in pieces, each distinct piece lexed once per batch:
the versions of a file share most of their top-level pieces (four Go releases side by side: the
distinct pieces of their files hold two thirds of the files' text).

A text is cut after each blank line followed by a line that starts with no whitespace (``\\n\\n``,
then a character that is not a space; :data:`CUT`); where the lexer allows (:attr:`Seams.inner`),
after each blank line and the spaces and tabs that start the next line, before its first other
character (:data:`INNER`: inside functions too). Each piece is lexed alone, in one call. Its
tokens are the whole text's over it, and its end is where the text's lex stands, when no match
attempt that starts in the piece ends otherwise for what comes after it: the text's lex goes on
past the cut where the piece's lex met its end. For the first attempt that would, say at ``q`` by
rule ``A``: every attempt before it ended as in the text, so the two lexes agree up to ``q``. If
``q`` lies before the piece's blank line, ``A`` reads its line end; else ``q`` lies in the
indentation after it, and ``A`` starts on a space or a tab. By what ``A`` may read
(:func:`.reach.prefixes`, its *reading*), one of these holds, or the lexer is not cut:

- ``A`` cannot read a line end: then ``q`` lies in the indentation, and :data:`INNER` is used only
  when every rule that may start on a space or a tab is dropped and reads whitespace only (next
  case). (The one-character last alternative of :func:`.bulk.whole` never crosses a cut.)
- ``A`` reads whitespace only, with no anchor or lookaround (Go's ``\\s+``, a line end, the
  whitespace a token takes after it): past the cut stands a character that is not a space, which
  stops it where the piece's end does.
- ``A`` reads at most ``w`` characters: then ``piece[q:]`` is a reading of ``A`` and
  ``q >= len(piece) - w``, which :meth:`Seams.clean` looks for (such a piece fails).
- ``A`` is kept and is ``o(x)*o`` (Go's strings and raw strings), each ``x`` one character that
  is neither ``o`` nor the escape ``e``, or ``e`` and one character: its attempt stops at the first
  ``o`` no escape takes, so one that reads past the cut finds none in the piece and fails there,
  alone. No other rule may start with ``o``, so the piece's lex keeps ``o`` alone at ``q`` (the
  last alternative of :func:`.bulk.whole`), which a match of ``A`` never is: such a piece fails.
- Else (Go's block comment): ``piece[q:]`` is a reading of ``A``, and ``A`` cannot start on a
  space, so ``piece[q:q + 2]`` is a reading's first two characters, which :meth:`Seams.clean`
  looks for; at each place found (at most :data:`HEADS`; more: the piece fails) it tries the
  reading to the piece's end.

No rule may look behind (``(?<=``, ``^`` without MULTILINE, ``\\A``), nor ask for the text's end
(``$`` without MULTILINE): a piece starts after a line end or an indentation, where ``\\b`` and
``\\B`` see what they see at a text's start, and so does a MULTILINE ``^`` after a line end (a rule
that holds one anywhere: no :data:`INNER` cuts). A rule asking for ``\\Z`` or a MULTILINE ``$`` at a
piece's end has read its last character, which only the cases above may. A failed piece and the
text after it are lexed in one call: that starts where the text's lex stands, the pieces before
being the text's. Whether a piece is clean is told once and holds in every text it is cut from:
in each, a character that is not a space follows it (both cuts ask for one), and that is all the
argument uses of what follows.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, NamedTuple

import numpy as np

from minhashdup.source.fastlex import reach
from minhashdup.source.fastlex.bulk import Whole, rules_of
from minhashdup.source.fastlex.splice import _nested
from minhashdup.source.fastlex.states import State
from minhashdup.source.patterns import ASCII, holds, may_start
from minhashdup.source.patterns import parser as sre_parse

#: Where a text is cut: after a blank line followed by a line that starts with no space.
CUT = re.compile(r"\n\n(?=\S)")
#: Where a text is cut when its lexer allows (:attr:`Seams.inner`): after a blank line and the
#: spaces and tabs that start the next line, before its first other character.
INNER = re.compile(r"\n\n[ \t]*(?=\S)")
#: The widest reading of a bounded rule that may read a line end (wider: the lexer is not cut).
WIDE = 64
#: The most places a piece is tried at for the rules that may read past anything (more: it fails).
HEADS = 8
#: The most characters of pieces kept for a batch (with their tokens, ~10 bytes a character).
KEEP_CHARS = 4_000_000

_CHARS = {sre_parse.LITERAL, sre_parse.NOT_LITERAL, sre_parse.IN, sre_parse.ANY}
_END = [(sre_parse.AT, sre_parse.AT_END_STRING)]


class Bounded(NamedTuple):
    """The bounded rules that may read a line end: what their readings may start with, their
    readings running to the piece's end, and the widest."""

    starts: re.Pattern[str]
    tail: re.Pattern[str]
    width: int


class Far(NamedTuple):
    """The other rules that may read a line end: their first two characters, the same found where
    they overlap too (a zero-width match), and their readings running to the piece's end."""

    heads: re.Pattern[str]
    places: re.Pattern[str]
    readings: re.Pattern[str]


class Seams(NamedTuple):
    """What tells whether a piece's lex alone is the text's over it (module docstring): the
    bounded rules, the openers of the kept ``o(x)*o`` rules, and the other rules."""

    bounded: Bounded | None
    openers: tuple[str, ...]
    far: Far | None
    #: whether the text may be cut after an indentation too (:data:`INNER`, module docstring)
    inner: bool = False

    def clean(self, piece: str, tokens: list[str]) -> bool:
        """Whether ``piece`` (cut from a text, lexed alone into ``tokens``) ends where the text's
        lex stands, with the text's tokens.

        Example:
            >>> from pygments.lexers import GoLexer
            >>> from minhashdup.source.fastlex import FastLexer
            >>> seams = FastLexer(GoLexer()).seams
            >>> seams.clean("x := `a\\n\\n", ["x", ":=", "`", "a"]), seams.clean("x := 1\\n\\n", ["x", ":=", "1"])
            (False, True)
        """
        for opener in self.openers:
            if opener in piece and opener in tokens:  # the text first: a character is found faster
                return False
        end, bounded, far = len(piece), self.bounded, self.far
        if bounded is not None and bounded.starts.search(piece, max(0, end - bounded.width)):
            found = bounded.tail.search(piece, max(0, end - bounded.width))
            if found is not None and found.start() < end:  # the empty reading at the end is none
                return False
        if far is not None and far.heads.search(piece):
            places = list(itertools.islice(far.places.finditer(piece), HEADS + 1))
            if len(places) > HEADS or any(far.readings.match(piece, m.start()) for m in places):
                return False
        return True


class Kept:
    """The pieces lexed in a batch, for one lexer: each one's tokens and whether they are a
    text's where it is cut (:meth:`Seams.clean`), while they hold at most ``most`` characters."""

    def __init__(self, most: int = KEEP_CHARS) -> None:
        #: a piece: [its tokens, clean (None: not told yet), its tokens' hashes (None: not made)]
        self.pieces: dict[str, list[Any]] = {}
        self.room = most
        #: the last text lexed: each kept piece it holds and where its tokens start in the text's
        self.used: list[tuple[list[Any], int]] = []

    def reuse(self) -> tuple[Any, list[tuple[int, int, int]]] | None:
        """The hashes of the last text's pieces that have them, end to end, and where its tokens
        are theirs (``(at, start, count)`` runs: :func:`minhashdup.core.shingles.token_hashes`)."""
        parts, runs, start = [], [], 0
        for entry, at in self.used:
            if entry[2] is not None and len(entry[2]):
                parts.append(entry[2])
                runs.append((at, start, len(entry[2])))
                start += len(entry[2])
        return (np.concatenate(parts), runs) if parts else None

    def hashed(self, hashes: Any) -> None:
        """The last text's token hashes (all of them, in order): each of its kept pieces keeps its own."""
        for entry, at in self.used:
            if entry[2] is None:
                entry[2] = hashes[at : at + len(entry[0])]
        self.used = []


def lexed(whole: Whole, seams: Seams, text: str, kept: Kept) -> list[str]:
    """The kept tokens of ``text`` (``whole``: its one-call lex), each of its pieces (:data:`CUT`,
    or :data:`INNER` where ``seams.inner``) lexed alone unless ``kept`` has it; from a piece that
    fails on, the rest in one call.

    Example:
        >>> from pygments.lexers import GoLexer
        >>> from minhashdup.source.fastlex import FastLexer, of_root
        >>> go = FastLexer(GoLexer())
        >>> whole, kept = of_root(go.states), Kept()
        >>> text = "package p\\n\\nfunc a() {}\\n\\nfunc b() {}\\n"
        >>> lexed(whole, go.seams, text, kept) == whole(text), sorted(kept.pieces)[0]
        (True, 'func a() {}\\n\\n')
    """
    tokens: list[str] = []
    used: list[tuple[list[Any], int]] = []
    kept.used = used
    start, pieces, size = 0, kept.pieces, len(text)
    ends = [m.end() for m in (INNER if seams.inner else CUT).finditer(text)]
    ends.append(size)
    for end in ends:
        piece = text[start:end]
        got = pieces.get(piece)
        if got is None:
            got = [whole(piece), None, None]  # clean: told when a piece follows it
            if kept.room >= len(piece):
                pieces[piece] = got
                kept.room -= len(piece)
        if end < size:
            if got[1] is None:
                got[1] = seams.clean(piece, got[0])
            if not got[1]:
                return tokens + whole(text[start:])
        used.append((got, len(tokens)))
        tokens += got[0]
        start = end
    return tokens


def seams_of(state: State) -> Seams | None:
    """The :class:`Seams` of a lexer's one-call lex from ``state`` (its root), or ``None`` where a
    rule is none of the module docstring's kinds (the lexer is not cut)."""
    rules = rules_of(state)
    flags = state.flags
    if rules is None:
        return None
    try:
        parsed = [(rule, sre_parse.parse(rule.text, flags)) for rule in rules]
        flags = sre_parse.parse("", flags).state.flags  # as parsing gives them (re.UNICODE added)
        if not _blank(list(sre_parse.parse(state.taken.tail, flags)), flags):
            return None  # the whitespace a token takes after it
        tails: list[Any] = []
        fars: list[Any] = []
        openers: list[str] = []
        heads: list[str] = []
        width = 0
        inner = True
        for rule, items in parsed:
            if items.state.flags != flags or _looks_behind(list(items), flags):
                return None
            blank = not rule.keep and _blank(list(items), flags)
            inner = inner and not holds(items, _line_start) and (blank or not _may_start_on_indent(items, flags))
            reading = reach.prefixes(items.data, top=True)
            if reach._compile(reach._branch(*reach._atoms(reading)), flags).fullmatch("\n") is None:
                continue  # cannot read a line end (its atoms in one pattern: one compile, not one each)
            if blank:
                continue
            most = reach._sub(reading).getwidth()[1]
            if most <= WIDE:
                tails.append(reading)
                width = max(width, most)
                continue
            opener = _closed(rule.keep, list(items), [list(i) for r, i in parsed if r is not rule], flags)
            if opener is not None:
                openers.append(opener)
            else:
                head = _heads(reading, flags)
                if head is None:
                    return None
                heads.append(head)
                fars.append(reading)
    except (reach.Unsupported, re.error, RecursionError):
        return None
    bounded = None
    if tails:
        starts = reach._compile(reach._branch(*(a for t in tails for a in reach._firsts(t)[0])), flags)
        bounded = Bounded(starts, reach._compile(reach._branch(*tails) + _END, flags), width)
    far = None
    if fars:  # the heads searched plainly first: a literal first character is found fast
        places = re.compile("(?=" + "|".join(heads) + ")")
        far = Far(re.compile("|".join(heads)), places, reach._compile(reach._branch(*fars) + _END, flags))
    return Seams(bounded, tuple(openers), far, inner)


def _looks_behind(items: list[Any], flags: int) -> bool:
    """Whether a parsed pattern reads before where it is tried, or asks for the text's end: a
    lookbehind, ``\\A``, or ``^`` or ``$`` without MULTILINE (``\\b`` and a MULTILINE ``^`` see the
    same after a line end as at a text's start)."""
    for op, av in items:
        if op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT) and av[0] < 0:
            return True
        if op is sre_parse.AT:
            if av is sre_parse.AT_BEGINNING_STRING:
                return True
            if av in (sre_parse.AT_BEGINNING, sre_parse.AT_END) and not flags & re.MULTILINE:
                return True
        inner = (flags | av[1]) & ~av[2] if op is sre_parse.SUBPATTERN else flags
        if any(_looks_behind(list(sub), inner) for sub in _nested(av)):
            return True
    return False


def _line_start(op: Any, av: Any) -> bool:
    """Whether a parsed node asks for a line's start (``^``)."""
    return op is sre_parse.AT and av is sre_parse.AT_BEGINNING


def _may_start_on_indent(items: Any, flags: int) -> bool:
    """Whether a parsed pattern may match from a space or a tab (or match empty)."""
    return may_start(items, ord(" "), flags) or may_start(items, ord("\t"), flags)


def _blank(items: list[Any], flags: int) -> bool:
    """Whether a parsed pattern reads whitespace only, with no anchor, lookaround or reference."""
    for op, av in items:
        if op in _CHARS:
            if not _spaces_only(op, av):
                return False
        elif op is sre_parse.SUBPATTERN or op in reach._REPEATS or op is sre_parse.BRANCH:
            if not all(_blank(list(sub), flags) for sub in _nested(av)):
                return False
        else:
            return False
    return True


def _spaces_only(op: Any, av: Any) -> bool:
    """Whether a one-character node matches whitespace only (case folding maps no space to a
    letter)."""
    if op is sre_parse.LITERAL:
        return chr(av).isspace()
    if op is not sre_parse.IN:
        return False
    for kind, arg in av:
        if kind is sre_parse.LITERAL and chr(arg).isspace():
            continue
        if (
            kind is sre_parse.RANGE
            and arg[1] - arg[0] < 64
            and all(chr(c).isspace() for c in range(arg[0], arg[1] + 1))
        ):
            continue
        if kind is sre_parse.CATEGORY and arg in (sre_parse.CATEGORY_SPACE, sre_parse.CATEGORY_UNI_SPACE):
            continue
        return False
    return True


def _closed(keep: bool, items: list[Any], others: list[Any], flags: int) -> str | None:
    """The opener ``o`` of a kept rule ``o(x)*o`` (module docstring) that no other rule (``others``,
    parsed) may start with, else ``None``."""
    if not keep or flags & re.IGNORECASE or len(items) != 3:
        return None
    (first, o), (loop, av), (last, close) = items
    if (
        first is not sre_parse.LITERAL
        or last is not sre_parse.LITERAL
        or o != close
        or loop is not sre_parse.MAX_REPEAT
    ):
        return None
    body = list(av[2])
    alternatives = [list(a) for a in body[0][1][1]] if len(body) == 1 and body[0][0] is sre_parse.BRANCH else [body]
    singles = [a[0] for a in alternatives if len(a) == 1 and a[0][0] in _CHARS]
    pairs = [a for a in alternatives if len(a) == 2 and a[0][0] is sre_parse.LITERAL and a[1][0] in _CHARS]
    escapes = {pair[0][1] for pair in pairs}  # each an escape and one character
    if len(singles) + len(pairs) != len(alternatives) or len(escapes) > 1 or o in escapes:
        return None
    stops = [chr(o), *map(chr, escapes)]
    if any(reach._compile([single], flags).fullmatch(c) for single in singles for c in stops):
        return None
    if any(may_start(other, o, flags) for other in others):
        return None
    return chr(o)


def _heads(reading: list[Any], flags: int) -> str | None:
    """A pattern of the first two characters of ``reading`` (a rule's), the second past ASCII
    always taken; ``None`` where it may start past ASCII or on a space."""
    firsts, _ = reach._firsts(reading)
    if not reach._ascii(firsts, flags):
        return None
    prefix = reach._compile(reading, flags)
    starts = [chr(c) for c in range(ASCII) if prefix.fullmatch(chr(c))]
    if any(c.isspace() for c in starts):
        return None
    out = []
    for c in starts:
        seconds = "".join(f"\\x{n:02x}" for n in range(ASCII) if prefix.fullmatch(c + chr(n)))
        out.append(f"{re.escape(c)}[{seconds}\\x80-\\U0010ffff]")
    return "|".join(out) if out else None
