"""A faster driver for pygments' RegexLexer, built at run time from the lexer's own rules.

Pygments tries the rules of the current state one by one at every position: a Python-level
regex call per rule. Here each state's rules become one regular expression whose
alternatives are the rules in order, each wrapped in its own group. Python's regex engine
tries alternatives left to right and takes the first that matches, which is pygments'
first-rule-wins, and ``m.lastindex`` (the wrapper group closes last) tells which rule fired.
A ``bygroups`` rule of token types is applied from the same match; other callbacks
(``using``, ...) are matched again with their own pattern so the callback gets the match
object it expects; state pushes and pops follow ``RegexLexer.get_tokens_unprocessed`` line
for line.

A rule that cannot be joined exactly (backreferences, named groups or conditionals) is left
out of the state's pattern where it can only start with a few ASCII characters, and tried with
the others one by one at those (:mod:`.apart`); a state holding any other such rule is run rule
by rule, as pygments does. A lexer that is not a plain RegexLexer (ExtendedRegexLexer, a custom
``get_tokens_unprocessed``) is not taken at all: callers fall back to pygments for it. The
differential tests and ``bench/lexer_identity.py`` check that the token stream is the same.

Modules: :mod:`.states` joins a state's rules (and narrows them by first character; :mod:`.apart`
and :mod:`.blanks` for what it leaves out and takes after a token), :mod:`.bulk` lexes a whole
text in one call where it may, :mod:`.scan` is the per-token loop; this one is the entry point.
"""

from __future__ import annotations

import functools

import numpy as np
from pygments.lexer import ExtendedRegexLexer, Lexer, RegexLexer
from pygments.token import _TokenType

from minhashdup.source.fastlex import vetted
from minhashdup.source.fastlex.bulk import of_root
from minhashdup.source.fastlex.pieces import Kept, Seams, lexed, seams_of
from minhashdup.source.fastlex.reach import Reach
from minhashdup.source.fastlex.scan import At, scan, tracker
from minhashdup.source.fastlex.splice import Copy, Lexed, Splice, spliceable
from minhashdup.source.fastlex.states import Rule, States, every_plan

__all__ = ["FastLexer", "supported"]


class FastLexer:
    """The fast driver for one pygments lexer instance (see the module docstring).

    Raises:
        TypeError: the lexer is not one this driver reproduces exactly.
    """

    def __init__(self, lexer: Lexer) -> None:
        if not supported(type(lexer)):
            raise TypeError(f"{type(lexer).__name__} is not a plain RegexLexer")
        self.lexer = lexer
        tokendefs: dict[str, list[Rule]] = lexer._tokens
        self.states = States(tokendefs, type(lexer).flags)
        self.retype = vetted.retyping(lexer)
        self.start = vetted.start(lexer)

    def significant_tokens(self, text: str) -> list[str]:
        """The same texts as ``tokens.significant_tokens(lexer, text)``, faster.

        Per rule the drop decision is made once (comment, whitespace, or whitespace-only
        text), so a dropped token costs one regex call and no tuple.
        """
        return self._scan(self.lexer._preprocess_lexer_input(text), None)

    def significant_tokens_after(
        self,
        text: str,
        base: Lexed | None,
        record: bool,
        types: list[_TokenType] | None = None,
        copies: list[Copy] | None = None,
    ) -> tuple[list[str], Lexed | None]:
        """:meth:`significant_tokens`, the tokens of the tail ``text`` shares with ``base`` (an
        earlier version of it, lexed by this lexer) taken from the base's where that is exact
        (:mod:`.splice`); with ``record``, also this lex as a base for a later version. With
        ``types`` (a list), each kept token's pygments type is appended to it, as
        :meth:`significant_tokens_with_types` gives them: a taken tail's are the base's, and a
        base lexed without types gives no tail. ``copies`` (a list) gets where tokens were taken
        from the base's (:data:`.splice.Copy`)."""
        text = self.lexer._preprocess_lexer_input(text)
        at = None if types is None else tracker(None, types)
        lexed = None
        if self.behind is None:
            tokens = self._scan(text, at)
        else:
            if types is not None and base is not None and base.types is None:
                base = None
            splice = Splice(text, base, self.behind, record, self.reach, types, copies)
            try:
                tokens = self._scan(text, at, splice)
            finally:  # the lex recorded is done, or stopped (a deadline): not kept alive with its base
                if self.reach is not None:
                    self.reach.current = None
            if splice.marks is not None:  # the types as lexed: retyped below, in place
                kept = None if types is None else list(types)
                lexed = Lexed(text, tokens, splice.marks, splice.taken, kept, splice.far, self.reach)
        if types is not None:
            self._retyped(tokens, types)
        return tokens, lexed

    @property
    def one_call(self) -> bool:
        """Whether a text lexed from ``root`` with no offsets nor types asked for takes one regex
        call (:mod:`.bulk`)."""
        return of_root(self.states) is not None

    @functools.cached_property
    def seams(self) -> Seams | None:
        """What tells where a text lexed in one call may be lexed in pieces (:mod:`.pieces`);
        ``None`` where it may not."""
        if self.start != ("root",) or of_root(self.states) is None:
            return None
        return seams_of(self.states["root"])

    def significant_tokens_in_pieces(self, text: str, kept: Kept | None) -> list[str]:
        """:meth:`significant_tokens` of a text lexed in one call, lexed in pieces, each one
        ``kept`` has taken from its lex before (:func:`.pieces.lexed`): the same tokens. Without
        ``kept`` (or pieces), in one call."""
        whole, seams = of_root(self.states), self.seams
        if whole is None or seams is None or kept is None:
            return self.significant_tokens(text)
        return lexed(whole, seams, self.lexer._preprocess_lexer_input(text), kept)

    @functools.cached_property
    def behind(self) -> int | None:
        """How far back this lexer's patterns read, when a tail may be taken from a base
        (:func:`.splice.spliceable`); ``None`` when it may not (nor from a stack but ``root``)."""
        if self.start != ("root",):
            return None
        tokendefs = self.lexer._tokens
        return spliceable(tokendefs, every_plan(tokendefs))

    @functools.cached_property
    def reach(self) -> Reach | None:
        """How far this lexer's patterns read ahead (:mod:`.reach`), when a splice may take the
        stretches a text shares with its base before their shared tail; ``None`` when not."""
        if self.behind is None:
            return None
        tokendefs = self.lexer._tokens
        try:
            return Reach([rexmatch.__self__ for rules in tokendefs.values() for rexmatch, _, _ in rules])
        except Exception:  # a pattern this cannot bound (or build again): the tail alone
            return None

    def significant_tokens_with_types(self, text: str) -> tuple[list[str], list[_TokenType]]:
        """:meth:`significant_tokens` and the pygments type of each kept token."""
        types: list[_TokenType] = []
        texts = self._scan(self.lexer._preprocess_lexer_input(text), tracker(None, types))
        return texts, self._retyped(texts, types)

    def significant_tokens_with_lines(self, text: str) -> tuple[list[str], list[int]]:
        """:meth:`significant_tokens` and the 1-based line each kept token starts on."""
        return self._with_lines(text, None)

    def significant_tokens_with_lines_and_types(self, text: str) -> tuple[list[str], list[int], list[_TokenType]]:
        """:meth:`significant_tokens_with_lines` and each kept token's pygments type."""
        types: list[_TokenType] = []
        texts, lines = self._with_lines(text, types)
        return texts, lines, self._retyped(texts, types)

    def _scan(self, text: str, at: At | None, splice: Splice | None = None) -> list[str]:
        """The scan of a whole text (:func:`.scan.scan`); after it, the guards' memory of the
        runs they measured (:mod:`.guard`) is let go: it holds the texts lexed."""
        try:
            return scan(self.lexer, self.states, text, at, self.start, splice)
        finally:
            self.states.forget()

    def _retyped(self, texts: list[str], types: list[_TokenType]) -> list[_TokenType]:
        """``types`` as the lexer's own loop gives them (:mod:`.vetted`): C's ``size_t`` is
        ``Keyword.Type`` there, and normalisation keeps keywords' text."""
        return vetted.retyped(texts, types, self.retype) if self.retype else types

    def _with_lines(self, text: str, types: list[_TokenType] | None) -> tuple[list[str], list[int]]:
        """The kept tokens and the 1-based line of each; with ``types``, their types appended to it."""
        text = self.lexer._preprocess_lexer_input(text)  # newlines made LF: offsets count those
        starts: list[int] = []
        tokens = self._scan(text, tracker(starts, types))
        newlines = np.flatnonzero(np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32) == 10)
        return tokens, (np.searchsorted(newlines, np.asarray(starts, dtype=np.int64)) + 1).tolist()


def supported(cls: type) -> bool:
    """True for RegexLexer subclasses whose token loop is RegexLexer's own (or vetted)."""
    if not issubclass(cls, RegexLexer) or issubclass(cls, ExtendedRegexLexer):
        return False
    for klass in cls.__mro__:
        if "get_tokens_unprocessed" in klass.__dict__:
            return klass is RegexLexer or klass in vetted.overrides()
    return False
