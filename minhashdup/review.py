"""What a CI job asks of a scan: pairs known from a baseline, only the pairs touching changed
files, and a gate on the new ones.

Example (``tmp`` is a scratch folder; a CI job would add ``changed_since="origin/main"``):
    >>> from minhashdup import Config, scan
    >>> from minhashdup.review import Review, apply
    >>> recorded = apply(scan(["examples"], Config()), Review(write_baseline=f"{tmp}/dups.json"), ["examples"])
    >>> review = Review(baseline=f"{tmp}/dups.json", max_pairs=0)
    >>> result = apply(scan(["examples"], Config()), review, ["examples"])
    >>> [p.known for p in result.pairs], review.fails(result)
    ([True, True, True, True], False)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from minhashdup import baseline as baselines
from minhashdup import project
from minhashdup.errors import ConfigError
from minhashdup.paths import PathsArg, path_list
from minhashdup.result import Result


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
        baselines.check_tolerance(self.tolerance)
        if self.max_pairs is not None and self.max_pairs < 0:
            raise ConfigError(f"--max-pairs must be 0 or more (got {self.max_pairs})")

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
        """The gate: more new (not known) pairs reported than ``max_pairs`` allows."""
        return self.max_pairs is not None and len(result.new_pairs) > self.max_pairs


def load(review: Review, paths: Sequence[str]) -> tuple[baselines.Baseline | None, set[str] | None]:
    """Read the baseline and list the changed files: done before the scan so that a typo
    fails in a second, not after minutes of lexing."""
    recorded = baselines.load(review.baseline) if review.baseline else None
    return recorded, review.changed(paths)


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
    if review.write_baseline:
        result.stats.baseline["written"] = baselines.write(result, review.write_baseline)
    if recorded is not None:
        result = baselines.mark(result, recorded, review.tolerance)
    if changed is not None:
        before = len(result.pairs)
        result = result.keep(lambda p: project.real(p.a) in changed or project.real(p.b) in changed)
        result.stats.changes = {"files": len(changed), "pairs_left_out": before - len(result.pairs)}
    if review.new_only:
        result = result.keep(lambda p: not p.known)
    result.params = {**result.params, **review.params()}
    return result
