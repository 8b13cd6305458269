"""What a CI job asks of a scan: pairs known from a baseline, only the pairs touching changed
files, and a gate on the new ones.

Example (``tmp`` is a scratch folder; a CI job would add ``changed_since="origin/main"``):
    >>> from minhashdup import Config, scan
    >>> from minhashdup.ci.review import Review, apply
    >>> recorded = apply(scan(["examples"], Config()), Review(write_baseline=f"{tmp}/dups.json"), ["examples"])
    >>> review = Review(baseline=f"{tmp}/dups.json", max_pairs=0)
    >>> result = apply(scan(["examples"], Config()), review, ["examples"])
    >>> [p.known for p in result.pairs], review.fails(result)
    ([True, True, True, True], False)
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from minhashdup.ci import git as project
from minhashdup.ci import unseen
from minhashdup.core.limits import listed_across, listed_within, pairs_among
from minhashdup.errors import ConfigError, check_path, check_switch
from minhashdup.result import Pair, Result
from minhashdup.source.paths import PathsArg, path_list

if TYPE_CHECKING:  # imported where used: a scan without a baseline needs none of it
    from minhashdup.ci import baseline as baselines


@dataclasses.dataclass(frozen=True)
class Review:
    """CI options of a scan (all optional).

    Attributes:
        baseline: baseline file whose pairs are known (reported with ``known: true``, not gated).
        write_baseline: record the scan's verified pairs (all of them) in this file.
        tolerance: a known pair whose Jaccard rose by more than this counts as new.
        new_only: leave known pairs out of every output.
        changed_since: git revision; report only pairs with a file changed since it
            (committed, staged, unstaged or untracked).
        staged: report only pairs with a file staged in git (a pre-commit hook).
        changed_files: report only pairs with one of these files (e.g. ``--files-from``),
            relative to ``base``.
        base: folder the ``changed_files`` names are relative to.
        max_pairs: the gate: fail when more new pairs than this are reported; ``None``: no gate.
    """

    baseline: str | None = None
    write_baseline: str | None = None
    tolerance: float = 0.1
    new_only: bool = False
    changed_since: str | None = None
    staged: bool = False
    changed_files: tuple[str, ...] | None = None
    base: str = "."
    max_pairs: int | None = None

    def __post_init__(self) -> None:
        check_tolerance(self.tolerance)
        if self.max_pairs is not None:
            if isinstance(self.max_pairs, bool) or not isinstance(self.max_pairs, int):
                raise ConfigError("{0} must be a whole number (got {value!r})", "max_pairs", value=self.max_pairs)
            if self.max_pairs < 0:
                raise ConfigError("{0} must be 0 or more (got {value})", "max_pairs", value=self.max_pairs)
        for name in ("baseline", "write_baseline"):
            check_path(name, getattr(self, name))
        for name in ("new_only", "staged"):
            check_switch(name, getattr(self, name))
        if isinstance(self.changed_files, (str, bytes, os.PathLike)):  # it would be read letter by letter
            raise ConfigError(
                "{0} takes a list of paths, not one string (got {value!r})", "changed_files", value=self.changed_files
            )

    @property
    def focused(self) -> bool:
        """Whether only pairs touching changed files are reported."""
        return self.changed_since is not None or self.staged or self.changed_files is not None

    def changed(self, paths: PathsArg) -> set[str] | None:
        """Real paths of the changed files under ``paths`` (one path or a list), or ``None``
        when every pair is reported.

        Raises:
            ChangesError: git cannot list them.
        """
        if not self.focused:
            return None
        paths = path_list(paths)
        out: set[str] = set()
        if self.changed_since is not None:
            out |= project.changed_since(self.changed_since, paths)
        if self.staged:
            out |= project.staged(paths)
        if self.changed_files is not None:
            out |= project.read_list(self.changed_files, self.base)
        return out

    def params(self) -> dict[str, Any]:
        """The options in force, for ``params`` in reports."""
        return {
            "baseline": self.baseline,
            "baseline_tolerance": self.tolerance,
            "new_only": self.new_only,
            "changed_since": self.changed_since,
            "staged": self.staged,
            "files_from": self.changed_files is not None,
            "max_pairs": self.max_pairs,
        }

    def fails(self, result: Result) -> bool:
        """The gate: more new (not known) pairs reported than ``max_pairs`` allows, or what it
        cannot vouch for (:func:`minhashdup.gate`).

        It counts ``stats.new_pairs`` (set by :func:`apply`): every pair a listed row stands for,
        so a large identical group listed in part counts all of its new pairs.
        """
        return unseen.fails(result, self.max_pairs)


def load(review: Review, paths: Sequence[str]) -> tuple[baselines.Baseline | None, set[str] | None]:
    """Read the baseline, check the one to write and list the changed files: done before the scan
    so that a typo fails in a second, not after minutes of lexing."""
    if not (review.write_baseline or review.baseline):  # the module is not imported (a warm scan's ms)
        return None, review.changed(paths)
    from minhashdup.ci import baseline as baselines

    if review.write_baseline:
        baselines.check_target(review.write_baseline, paths)
    return baselines.load(review.baseline) if review.baseline else None, review.changed(paths)


def apply(
    result: Result,
    review: Review,
    paths: Sequence[str],
    loaded: tuple[baselines.Baseline | None, set[str] | None] | None = None,
) -> Result:
    """Write the baseline if asked, then mark known pairs, keep the pairs touching changed
    files and, with ``new_only``, leave the known ones out; ``params`` shows the options.
    """
    recorded, changed = loaded if loaded is not None else load(review, paths)
    recorded = recorded.settled(result) if recorded is not None else None
    if review.write_baseline:
        from minhashdup.ci.baseline import write

        result.stats.baseline["written"] = write(result, review.write_baseline)
    if recorded is not None:
        from minhashdup.ci.baseline import mark

        result = mark(result, recorded, review.tolerance)
    if changed is not None:
        before = len(result.pairs)
        result = result.keep(_touching(result, changed))
        result.stats.changes = {"files": len(changed), "pairs_left_out": before - len(result.pairs)}
        result.warnings.extend(unseen.unchecked_changes(result, changed))
        missed = unseen.not_compared(result, changed)
        crowded = [path for path in result.unpaired if project.real(path) in changed]
        result.stats.changes["unchecked"] = len(missed)  # a gate fails on them: it could not compare them
        result.stats.changes["unpaired"] = len(crowded)  # and on these: in a bucket too big to pair
        if review.max_pairs is not None:
            result.warnings.extend(unseen.not_compared_warning(missed, crowded))
    result.stats.new_pairs = count_new(result, recorded, review.tolerance, changed)
    if review.new_only:
        result = result.keep(lambda p: not p.known)
    result.params = {**result.params, **review.params()}
    return result


def _group_of(result: Result) -> dict[str, tuple[str, ...]]:
    """The files of the identical group of each path in one."""
    return {path: group.files for group in result.groups for path in group.files}


def _members(result: Result) -> Callable[[str], tuple[str, ...]]:
    """The files of the identical group of a path (the path alone when it is in none)."""
    of = _group_of(result)
    return lambda path: of.get(path, (path,))


def _partial_across(first: tuple[str, ...], second: tuple[str, ...]) -> bool:
    """Whether a row between two different groups stands for more pairs than itself."""
    return first != second and listed_across(len(first), len(second)) < len(first) * len(second)


def _touching(result: Result, changed: set[str]) -> Callable[[Pair], bool]:
    """The rows that touch a changed file; a row standing for two whole groups (listed as the
    pair of their first files) touches every file of both."""
    members = _members(result)
    is_changed = {path: project.real(path) in changed for path in result.files}

    def wanted(p: Pair) -> bool:
        if is_changed.get(p.a) or is_changed.get(p.b):
            return True
        first, second = members(p.a), members(p.b)
        return _partial_across(first, second) and any(is_changed.get(f) for f in (*first, *second))

    return wanted


def count_new(result: Result, recorded: baselines.Baseline | None, tolerance: float, changed: set[str] | None) -> int:
    """The new pairs ``result`` reports: every listed row not known, except that a row of a
    group listed in part (see :class:`~minhashdup.result.Group`) is replaced by the count of
    all the pairs it stands for (:func:`new_pair_count`). ``result`` is already marked with
    ``recorded`` and cut to the rows touching ``changed``.
    """
    of = _group_of(result)
    total = 0
    for p in result.pairs:
        if p.a not in of and p.b not in of:  # two files of no group: the row is one pair
            total += not p.known
            continue
        first, second = of.get(p.a, (p.a,)), of.get(p.b, (p.b,))
        if first == second and listed_within(len(first)) < pairs_among(len(first)):
            continue  # a row of a partly listed group: counted below, once per group
        if _partial_across(first, second):
            total += new_pair_count(first, second, p.jaccard, recorded, tolerance, changed)
        else:
            total += not p.known
    for group in result.groups:
        if group.pairs_listed < group.pairs_total:
            total += new_pair_count(group.files, None, 1.0, recorded, tolerance, changed)
    return total


def new_pair_count(
    first: Sequence[str],
    second: Sequence[str] | None,
    jaccard: float,
    recorded: baselines.Baseline | None,
    tolerance: float,
    changed: set[str] | None,
) -> int:
    """How many of the pairs of ``first`` (``second`` is ``None``: pairs inside one identical
    group) or of ``first`` x ``second`` (two groups, every pair at ``jaccard``) are reported
    as new: touching a changed file (``changed`` holds real paths; ``None``: every pair is
    reported) and not known from ``recorded`` (the rule of :func:`baseline.mark`).

    No pair is enumerated. Files are tallied by baseline class (``n`` files, ``c`` of them
    changed, per class; a file in no class is a class of its own). Between two tallies
    ``(n1, c1)``, ``(n2, c2)`` the reported pairs are ``n1 n2 - (n1 - c1)(n2 - c2)``; inside
    one, ``C(n, 2) - C(n - c, 2)``. The new pairs are all reported pairs less the reported
    pairs whose classes the baseline records at a Jaccard that knows them; then each pair
    with an entry of its own (which :func:`baseline.mark` reads first) is counted by that
    entry instead of by its classes. The work grows with the files and the baseline entries.

    Example:
        >>> new_pair_count(["a", "b", "c", "d"], None, 1.0, None, 0.1, {"/x"})
        0
        >>> new_pair_count(["a", "b", "c", "d"], None, 1.0, None, 0.1, None)
        6
    """
    one = _tally(first, recorded, changed)
    two = one if second is None else _tally(second, recorded, changed)
    total = _within(one.n, one.c) if second is None else _across(one.n, one.c, two.n, two.c)
    if recorded is None:
        return total

    def knows(value: float | None) -> bool:
        return value is not None and round(jaccard, 6) <= value + tolerance + 1e-9

    return total - _known_by_class(one, two, second is None, knows) - _known_by_entry(one, two, recorded, knows)


@dataclasses.dataclass(frozen=True)
class _Tally:
    """Files of one side by baseline class: ``by_class[k] = [n, c]`` (files, changed files),
    ``flags[key]`` whether each file (by its baseline key) is changed; ``classes`` as recorded."""

    by_class: dict[str, list[int]]
    flags: dict[str, bool]
    classes: baselines.Classes | None

    @property
    def n(self) -> int:
        return len(self.flags)

    @property
    def c(self) -> int:
        return sum(self.flags.values())


def _tally(files: Sequence[str], recorded: baselines.Baseline | None, changed: set[str] | None) -> _Tally:
    classes = recorded.classes if recorded is not None else None
    by_class: dict[str, list[int]] = {}
    flags: dict[str, bool] = {}
    for path in files:
        k = recorded.name(path) if recorded is not None else path
        flags[k] = changed is None or project.real(path) in changed
        counts = by_class.setdefault(classes.class_of(k) if classes is not None else k, [0, 0])
        counts[0] += 1
        counts[1] += flags[k]
    return _Tally(by_class, flags, classes)


def _across(n1: int, c1: int, n2: int, c2: int) -> int:
    """Reported pairs between ``n1`` files (``c1`` changed) and ``n2`` files (``c2`` changed)."""
    return n1 * n2 - (n1 - c1) * (n2 - c2)


def _within(n: int, c: int) -> int:
    """Reported pairs among ``n`` files, ``c`` of them changed."""
    return pairs_among(n) - pairs_among(n - c)


def _known_by_class(one: _Tally, two: _Tally, inside: bool, knows: Callable[[float | None], bool]) -> int:
    """The reported pairs whose classes the baseline records at a Jaccard that knows them
    (``inside``: the pairs within ``one``, each class pair once)."""
    if one.classes is None:
        return 0
    known = 0
    for x, (nx, cx) in one.by_class.items():
        for y, value in one.classes.partners.get(x, {}).items():
            if y not in two.by_class or not knows(value) or (inside and x > y):
                continue
            known += _within(nx, cx) if inside and x == y else _across(nx, cx, *two.by_class[y])
    return known


def _known_by_entry(
    one: _Tally, two: _Tally, recorded: baselines.Baseline, knows: Callable[[float | None], bool]
) -> int:
    """The correction of the pairs with an entry of their own (read first by
    :func:`baseline.mark`): known by the entry instead of by their classes."""
    inside = one is two
    known = 0
    for a, a_changed in one.flags.items():
        for b, value in recorded.entries_of.get(a, {}).items():
            if b not in two.flags or (inside and b <= a) or not (a_changed or two.flags[b]):
                continue
            by_class = one.classes is not None and knows(one.classes.get((a, b)))
            known += knows(value) - by_class
    return known


def check_tolerance(value: float) -> float:
    """The tolerance of a baseline (``tolerance``, ``--baseline-tolerance``) must be a number from 0 to 1.

    Raises:
        ConfigError: naming the parameter.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError("{0} must be a number between 0 and 1 (got {value!r})", "tolerance", value=value)
    if math.isnan(value) or not 0 <= value <= 1:
        raise ConfigError("{0} must be between 0 and 1 (got {value:g})", "tolerance", value=value)
    return value
