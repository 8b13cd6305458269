"""The result of a scan: the one object every renderer reads."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from typing import Any

from minhashdup.core.limits import pairs_among

#: 2: ``groups`` of identical files; a large group lists only some of its pairs (see :class:`Group`).
SCHEMA_VERSION = 2


@dataclasses.dataclass(frozen=True, slots=True)
class Pair:
    """Two files whose exact Jaccard similarity reached the threshold.

    ``a`` sorts before ``b``; ``estimate`` is the share of equal MinHash minima, the other
    numbers are exact counts of distinct shingles. ``known`` marks a pair recorded in the
    baseline (``--baseline``): reported, but not counted by the gate. With names or literals
    normalised, ``jaccard`` is the normalised similarity the pair was selected by and
    ``jaccard_verbatim`` that of the files' own tokens. ``vendored_a`` and
    ``vendored_b`` tell that a side is vendored code (under ``vendor/``, ``third_party/``,
    ``node_modules/``, or ``linguist-vendored`` in ``.gitattributes``): still compared, marked.
    """

    a: str
    b: str
    jaccard: float
    estimate: float
    shingles_a: int
    shingles_b: int
    common: int
    known: bool = False
    vendored_a: bool = False
    vendored_b: bool = False
    jaccard_verbatim: float | None = None  # with --ignore-identifiers/--ignore-literals

    def to_dict(self) -> dict[str, Any]:
        """Plain dict with stable keys, for JSON/CSV (``jaccard_verbatim`` only when set)."""
        out = {
            "a": self.a,
            "b": self.b,
            "jaccard": round(self.jaccard, 6),
            "estimate": round(self.estimate, 6),
            "shingles_a": self.shingles_a,
            "shingles_b": self.shingles_b,
            "common": self.common,
            "known": self.known,
            "vendored_a": self.vendored_a,
            "vendored_b": self.vendored_b,
        }
        if self.jaccard_verbatim is not None:
            out["jaccard_verbatim"] = round(self.jaccard_verbatim, 6)
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class Cluster:
    """A family of files joined by verified pairs (transitively)."""

    files: tuple[str, ...]
    pairs: int
    jaccard_min: float
    jaccard_max: float

    def to_dict(self) -> dict[str, Any]:
        """Plain dict with stable keys, for JSON."""
        return {
            "size": len(self.files),
            "pairs": self.pairs,
            "jaccard_min": round(self.jaccard_min, 6),
            "jaccard_max": round(self.jaccard_max, 6),
            "files": list(self.files),
        }


@dataclasses.dataclass(frozen=True, slots=True)
class Group:
    """Files whose shingle sets are identical (Jaccard 1.0 between any two of them).

    A group of ``n`` files stands for ``n (n - 1) / 2`` pairs. All of them are listed in
    ``Result.pairs`` while that is at most ``minhashdup.core.limits.MAX_LISTED_PAIRS`` (1,000, a group
    of up to 45 files); a larger group lists its first file (by path) paired with each other
    one: ``pairs_listed = n - 1``. Likewise, two groups whose sets are similar list every pair
    across them while that is at most the bound, else only the pair of their first files. Every
    file of a group has the partners of its first file; ``stats.verified_pairs`` counts them all.
    """

    files: tuple[str, ...]  # sorted
    shingles: int
    pairs_listed: int

    @property
    def pairs_total(self) -> int:
        """Pairs of files inside the group: ``n (n - 1) / 2``."""
        return pairs_among(len(self.files))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict with stable keys, for JSON."""
        return {
            "size": len(self.files),
            "shingles": self.shingles,
            "pairs_total": self.pairs_total,
            "pairs_listed": self.pairs_listed,
            "files": list(self.files),
        }


@dataclasses.dataclass
class Stats:
    """Counts and timings of a scan. ``skipped`` maps each skip reason to a count of paths."""

    files_walked: int = 0
    files_scanned: int = 0
    files_compared: int = 0
    distinct_sets: int = 0
    identical_groups: int = 0
    not_utf8: int = 0
    tokens: int = 0
    shingles: int = 0
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)
    candidates: int = 0  # LSH candidates (pairs of distinct sets), or the prefix filter's with --exact
    candidate_pairs: int = 0  # file pairs found by the exact check of the candidates
    completion_checks: int = 0  # exact checks family completion added
    completion_pairs: int = 0  # file pairs those found (none with --exact or --no-completion)
    completion_rounds: int = 0
    verified_pairs: int = 0  # every pair of files at or above the threshold (identical ones too)
    pairs_listed: int = 0  # those in ``Result.pairs``: fewer when a large group is listed in part
    #: the pairs the gate counts: reported (touching a changed file, with --changed-since etc.)
    #: and not known from the baseline, every pair of a partly listed group counted
    new_pairs: int = 0
    clusters: int = 0
    oversize_buckets: int = 0
    seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    cpu_seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    cache: dict[str, int] = dataclasses.field(default_factory=dict)  # run-dependent, like seconds
    baseline: dict[str, int] = dataclasses.field(default_factory=dict)  # with --baseline
    changes: dict[str, int] = dataclasses.field(default_factory=dict)  # with --changed-since etc.
    shingles_dropped: int | None = None  # with --max-df: distinct shingles left out as too common

    def to_dict(self) -> dict[str, Any]:
        """Plain dict with stable keys (timings rounded to milliseconds)."""
        out = dataclasses.asdict(self)
        out["skipped"] = dict(sorted(self.skipped.items()))
        out["seconds"] = {k: round(v, 3) for k, v in self.seconds.items()}
        out["cpu_seconds"] = {k: round(v, 3) for k, v in self.cpu_seconds.items()}
        if self.shingles_dropped is None:  # a scan without --max-df: the keys it always had
            del out["shingles_dropped"]
        return out


class SkipReason(str, enum.Enum):
    """Why a path was not scanned. Values are the keys of ``stats.skipped`` in reports."""

    EXCLUDED = "excluded"
    NOT_INCLUDED = "not-included"
    GITIGNORED = "gitignored"
    VCS = "vcs-metadata"
    TOO_LARGE = "too-large"
    SPECIAL = "not-a-regular-file"
    DANGLING = "dangling-symlink"
    CYCLE = "symlink-cycle"
    OUTSIDE = "symlink-outside-root"
    DUPLICATE = "duplicate-path"
    UNREADABLE = "unreadable"
    BINARY = "binary"
    NO_LEXER = "no-lexer"
    LEX_ERROR = "lex-error"
    TOO_SMALL = "too-few-shingles"
    OWN_FILE = "minhashdup-file"
    GENERATED = "generated"
    NOT_CODE = "not-code"
    VENDORED = "vendored"

    @property
    def is_filter(self) -> bool:
        """True for skips the user asked for (globs, .gitignore, VCS folders)."""
        return self in _FILTERS


#: Each reason by its value: a dict lookup, several times cheaper than ``SkipReason(value)`` for
#: the thousands of skips a replayed scan reads back.
REASONS = {reason.value: reason for reason in SkipReason}

_FILTERS = {
    SkipReason.EXCLUDED,
    SkipReason.NOT_INCLUDED,
    SkipReason.GITIGNORED,
    SkipReason.VCS,
    SkipReason.OWN_FILE,
    SkipReason.VENDORED,
}


@dataclasses.dataclass(frozen=True)
class Skip:
    """A path that was not scanned or not compared, and why (``detail`` adds e.g. the OS error).

    One type from the walk to the renderers: the walker, the lexing workers and the scan
    each add theirs; reports show those that are not filters.
    """

    path: str
    reason: SkipReason
    detail: str = ""

    @property
    def message(self) -> str:
        """``reason (detail)``, as shown on stderr."""
        return f"{self.reason.value} ({self.detail})" if self.detail else self.reason.value


@dataclasses.dataclass
class Result:
    """Everything a scan found. ``pairs`` sorted by similarity (highest first), then path."""

    params: dict[str, Any]
    stats: Stats
    pairs: list[Pair]
    clusters: list[Cluster]
    skips: list[Skip] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
    #: Paths of the files compared, sorted; the HTML report draws them all.
    files: list[str] = dataclasses.field(default_factory=list)
    #: Candidate pairs (of representatives) that the exact check turned down.
    rejected: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    #: Groups of two or more identical files, largest first.
    groups: list[Group] = dataclasses.field(default_factory=list)
    #: Files in a bucket too big to pair (``--max-bucket``), sorted: a gate cannot vouch for them.
    unpaired: list[str] = dataclasses.field(default_factory=list)

    @property
    def normalised(self) -> bool:
        """Whether names or literals were placeholders (``--ignore-identifiers``,
        ``--ignore-literals``): then each pair carries ``jaccard_verbatim``."""
        return bool(self.params.get("ignore_identifiers") or self.params.get("ignore_literals"))

    def keep(self, wanted: Callable[[Pair], bool]) -> Result:
        """A copy with only the pairs ``wanted`` accepts and the clusters and groups holding one
        of them.

        Clusters and groups stay whole (every member, every pair count): a changed file's whole
        family is what a reviewer needs to see. ``stats.verified_pairs`` keeps the scan's count.
        """
        pairs = [p for p in self.pairs if wanted(p)]
        named = {path for p in pairs for path in (p.a, p.b)}
        clusters = [c for c in self.clusters if not named.isdisjoint(c.files)]
        groups = [g for g in self.groups if not named.isdisjoint(g.files)]
        return dataclasses.replace(self, pairs=pairs, clusters=clusters, groups=groups)

    @property
    def new_pairs(self) -> list[Pair]:
        """The pairs the gate counts: those not known from the baseline."""
        return [p for p in self.pairs if not p.known]

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: ``{schema_version, params, stats, pairs, clusters, groups}``."""
        return {k: [x.to_dict() for x in v] if isinstance(v, list) else v for k, v in self.document().items()}

    def document(self) -> dict[str, Any]:
        """The JSON document's keys in order, its lists still of :class:`Pair`, :class:`Cluster`
        and :class:`Group` (each has ``to_dict``): a renderer converts one at a time."""
        return {
            "schema_version": SCHEMA_VERSION,
            "params": self.params,
            "stats": self.stats.to_dict(),
            "pairs": self.pairs,
            "clusters": self.clusters,
            "groups": self.groups,
        }
