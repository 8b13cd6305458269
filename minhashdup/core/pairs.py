"""From a corpus of shingle sets to listed pairs and clusters: the pure stages of a scan that
come after the files are lexed, and before and after MinHash and the exact check.

Every engine hands :class:`Corpus` arrays over; these functions (and
:func:`minhashdup.engine.stages.pairs_of`, which runs them) are the same for all engines.
Identical sets are grouped first (one representative per group goes to MinHash), and the
verified pairs of representatives are expanded back to file pairs under the listing rules
(:func:`~minhashdup.core.limits.listed_within`, :func:`~minhashdup.core.limits.listed_across`).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Collection, Sequence

import numpy as np

from minhashdup.core import cluster, limits
from minhashdup.core.hashing import UInt64Array
from minhashdup.core.limits import listed_across, listed_within, pairs_among
from minhashdup.core.runs import member, pair_codes, rows
from minhashdup.core.signature import Family, truncate
from minhashdup.errors import ScanLimitError
from minhashdup.result import Cluster, Group, Pair, Skip, SkipReason, Stats


@dataclasses.dataclass
class Corpus:
    """What an engine gives the pair stages: the files that lexed into shingle sets, in walk
    order, with their signatures under ``family``, plus everything skipped so far."""

    paths: list[str]
    sets: list[UInt64Array]
    lexers: list[str]
    skips: list[Skip]
    warnings: list[str]
    stats: Stats
    signatures: list[UInt64Array] = dataclasses.field(default_factory=list)
    family: Family | None = None  # the hash family of ``signatures``, if they were made
    vendored: set[str] = dataclasses.field(default_factory=set)  # paths of vendored files (marked in pairs)


@dataclasses.dataclass
class Groups:
    """Files with identical shingle sets: ``members[g]`` lists the files of set ``g``."""

    members: list[list[int]]

    @property
    def representatives(self) -> list[int]:
        """The first file of each group, which stands for the group in MinHash."""
        return [m[0] for m in self.members]


def comparable(corpus: Corpus, min_shingles: int) -> list[int]:
    """Indices of the files with at least ``min_shingles`` distinct shingles."""
    return [i for i, s in enumerate(corpus.sets) if len(s) >= min_shingles]


def identical_groups(sets: Sequence[UInt64Array], indices: Sequence[int]) -> Groups:
    """Group ``indices`` by identical shingle set (first-seen order, members ascending).

    Sets are bucketed by size and three sampled values, then compared whole inside a bucket:
    equal sets always share a bucket, and no digest is trusted (copying every set to a bytes
    key cost a full pass over all shingles).

    Example:
        >>> a, b = np.array([1, 2, 3], dtype=np.uint64), np.array([1, 2, 4], dtype=np.uint64)
        >>> identical_groups([a, b, a.copy()], [0, 1, 2]).members
        [[0, 2], [1]]
    """
    groups: list[list[int]] = []
    buckets: dict[tuple[int, ...], list[int]] = {}  # sample -> indices into groups
    for i in indices:
        s = sets[i]
        n = len(s)
        sample = (n, int(s[0]), int(s[n // 2]), int(s[-1])) if n else (0,)
        candidates = buckets.setdefault(sample, [])
        for g in candidates:
            first = sets[groups[g][0]]
            if first is s or np.array_equal(first, s):  # copies of one content share one array
                groups[g].append(i)
                break
        else:
            candidates.append(len(groups))
            groups.append([i])
    return Groups(groups)


@dataclasses.dataclass
class Prepared:
    """The files that go to comparison: big enough, grouped by identical set."""

    corpus: Corpus
    groups: Groups
    skips: list[Skip]

    @property
    def reps(self) -> list[int]:
        """Corpus index of each group's representative."""
        return self.groups.representatives

    @functools.cached_property
    def rep_sets(self) -> list[UInt64Array]:
        """Shingle set of each representative, in group order."""
        return [self.corpus.sets[i] for i in self.reps]


def drop_common(sets: Sequence[UInt64Array], among: Sequence[int], max_df: float) -> tuple[list[UInt64Array], int]:
    """The sets without the shingles found in more than a fraction ``max_df`` of the sets
    ``among`` (the compared files), and how many distinct shingles that drops.

    Example:
        >>> sets = [np.array(v, dtype=np.uint64) for v in ([1, 2, 3], [1, 2, 4], [1, 5, 6])]
        >>> kept, dropped = drop_common(sets, [0, 1, 2], 0.5)
        >>> [k.tolist() for k in kept], dropped
        ([[3], [4], [5, 6]], 2)
    """
    if not among:
        return list(sets), 0
    values, counts = np.unique(np.concatenate([sets[i] for i in among]), return_counts=True)
    common = values[counts > max_df * len(among)]
    if not len(common):
        return list(sets), 0
    # ``common`` is sorted: a binary search per shingle. np.isin sorts ``common`` again for each
    # set, which with a small max_df (most shingles common) took minutes over a few thousand files.
    return [s[~member(s, common, ordered=True)] for s in sets], len(common)


def prepare(corpus: Corpus, min_shingles: int) -> Prepared:
    """Drop files under ``min_shingles`` (recorded as skips) and group identical sets."""
    sizes = np.fromiter((len(s) for s in corpus.sets), dtype=np.int64, count=len(corpus.sets))
    keep, skips = screen(corpus.paths, sizes, corpus.skips, min_shingles)
    groups = identical_groups(corpus.sets, keep)
    count_groups(corpus.stats, sizes, keep, groups)
    return Prepared(corpus, groups, skips)


def screen(
    paths: Sequence[str], sizes: np.ndarray, skips: list[Skip], min_shingles: int
) -> tuple[list[int], list[Skip]]:
    """The files to compare (at least ``min_shingles`` distinct shingles), and ``skips`` with
    the others added as ``too-small``."""
    keep = np.flatnonzero(sizes >= min_shingles).tolist()
    small = [
        Skip(paths[i], SkipReason.TOO_SMALL, f"{sizes[i]} distinct shingles < --min-shingles {min_shingles}")
        for i in np.flatnonzero(sizes < min_shingles).tolist()
    ]
    return keep, [*skips, *small]


def digest_groups(keys: Sequence[bytes], indices: Sequence[int]) -> Groups:
    """:func:`identical_groups` by a digest of each set (``keys[i]``, e.g. 16 bytes of BLAKE2b
    over the sorted hashes, with the size in it) where the sets themselves live elsewhere (on
    a cluster's workers): the same groups, in the same order, unless two digests collide.

    Example:
        >>> digest_groups([b"a", b"b", b"a"], [0, 1, 2]).members
        [[0, 2], [1]]
    """
    groups: dict[bytes, list[int]] = {}
    for i in indices:
        groups.setdefault(keys[i], []).append(i)
    return Groups(list(groups.values()))


def count_groups(stats: Stats, sizes: np.ndarray, keep: list[int], groups: Groups) -> None:
    """The comparison's counts in ``stats``: files compared, distinct sets, identical groups, shingles."""
    stats.files_compared = len(keep)
    stats.distinct_sets = len(groups.members)
    stats.identical_groups = sum(len(m) > 1 for m in groups.members)
    stats.shingles = int(sizes[keep].sum()) if keep else 0


def rep_signatures(prep: Prepared, family: Family, bits: int = 64) -> UInt64Array:
    """Signatures of the representatives under ``family``, cut to ``bits`` low bits: those
    the corpus carries when it was signed under that family (while lexing), else made now."""
    corpus = prep.corpus
    if corpus.family == family and len(corpus.signatures) == len(corpus.sets):
        if not prep.reps:
            return np.empty((0, family.num_hashes), dtype=np.uint64)
        full = np.stack([corpus.signatures[i] for i in prep.reps])
    else:
        full = family.sign(prep.rep_sets)
    return truncate(full, bits)


def named_groups(paths: Sequence[str], sizes: np.ndarray, groups: Groups) -> list[Group]:
    """Each group of identical sets by path (sorted: the first file anchors a partial listing),
    with its set's size and the number of pairs inside it that :func:`expand` lists."""
    out = []
    for members in groups.members:
        files = tuple(sorted(paths[i] for i in members))
        out.append(Group(files, int(sizes[members[0]]), listed_within(len(files))))
    return out


def check_listed(groups: list[Group], ok: np.ndarray, limit: int) -> None:
    """Refuse to list more pair rows than ``limit`` (``max_verified``): a family of thousands
    of near copies (none identical) has millions of verified pairs, each a row.

    Raises:
        ScanLimitError: more rows than ``limit``; the message names the parameters to change.
    """
    between = _file_pairs(groups, ok)
    rows = sum(g.pairs_listed for g in groups) + int(np.where(between <= limits.MAX_LISTED_PAIRS, between, 1).sum())
    if rows > limit:
        raise ScanLimitError(
            "{rows:,} verified pairs exceed {0} {limit:,} (about {mib:,} MiB); raise {1}, narrow the {2}, or raise {0}",
            "max_verified",
            "threshold",
            "paths",
            rows=rows,
            limit=limit,
            mib=rows * 250 // 2**20,
        )


def across(groups: list[Group], ok: np.ndarray) -> int:
    """File pairs that verified pairs of representatives stand for: ``len(a) * len(b)`` each."""
    return int(_file_pairs(groups, ok).sum())


def _file_pairs(groups: list[Group], ok: np.ndarray) -> np.ndarray:
    """For each pair of groups in ``ok``, the file pairs it stands for."""
    sizes = np.array([len(g.files) for g in groups], dtype=np.int64)
    return sizes[ok[:, 0]] * sizes[ok[:, 1]] if len(ok) else np.zeros(0, dtype=np.int64)


def expand(
    groups: list[Group],
    ok: np.ndarray,
    common: np.ndarray,
    jac: np.ndarray,
    est: np.ndarray,
    vendored: Collection[str] = frozenset(),
) -> tuple[list[Pair], int]:
    """Pairs of representatives -> pairs of files, and how many file pairs they stand for.

    Inside a group every pair is at J = 1; between two groups every pair has the
    representatives' J. Every pair is listed while a group, or two groups, stand for at most
    :data:`~minhashdup.core.limits.MAX_LISTED_PAIRS` file pairs; beyond, a group lists its first file with each other
    one, and two groups the pair of their first files: memory grows with the files, the count
    stays exact. A side in ``vendored`` is marked so (``vendored_a``, ``vendored_b``).
    """
    out: list[Pair] = []
    total = 0
    for group in groups:
        files, n = group.files, group.shingles
        total += group.pairs_total
        if group.pairs_listed == group.pairs_total:
            listed = [(a, b) for x, a in enumerate(files) for b in files[x + 1 :]]
        else:
            listed = [(files[0], b) for b in files[1:]]
        out.extend(Pair(a, b, 1.0, 1.0, n, n, n, False, a in vendored, b in vendored) for a, b in listed)
    for (gi, gj), c, j, e in rows(ok, common, jac, est):
        ga, gb = groups[gi], groups[gj]
        total += len(ga.files) * len(gb.files)
        listed = (
            [(x, y) for x in ga.files for y in gb.files]
            if listed_across(len(ga.files), len(gb.files)) > 1
            else [(ga.files[0], gb.files[0])]
        )
        out.extend(_pair(x, y, j, e, ga.shingles, gb.shingles, c, vendored) for x, y in listed)
    # By Jaccard descending, then path: two stable sorts by C-level keys (a Python key per pair
    # built a tuple each, a sixth of a second for the 45k pairs of four Go releases).
    out.sort(key=operator.attrgetter("a", "b"))
    out.sort(key=operator.attrgetter("jaccard"), reverse=True)  # stable with reverse too
    return out, total


def _pair(a: str, b: str, jac: float, est: float, na: int, nb: int, common: int, vendored: Collection[str]) -> Pair:
    if b < a:
        a, b, na, nb = b, a, nb, na
    return Pair(a, b, jac, est, na, nb, common, False, a in vendored, b in vendored)


def clusters(files: list[tuple[str, ...]], ok: np.ndarray, jac: np.ndarray) -> list[Cluster]:
    """Families: groups of identical files joined by the verified pairs of their
    representatives, every pair of files counted (as if each had been listed)."""
    root = cluster.roots(len(files), (edge for (edge,) in rows(ok)))
    names: dict[int, list[str]] = {}
    count: dict[int, int] = {}
    sims: dict[int, list[float]] = {}
    for g, members in enumerate(files):
        names.setdefault(root[g], []).extend(members)
        if len(members) > 1:
            count[root[g]] = count.get(root[g], 0) + pairs_among(len(members))
            sims.setdefault(root[g], []).append(1.0)
    for (gi, gj), j in rows(ok, jac):
        count[root[gi]] = count.get(root[gi], 0) + len(files[gi]) * len(files[gj])
        sims.setdefault(root[gi], []).append(j)
    found = [Cluster(tuple(sorted(names[r])), n, min(sims[r]), max(sims[r])) for r, n in count.items()]
    found.sort(key=lambda c: (-len(c.files), c.files[0]))
    return found


def rejected(cand: np.ndarray, ok: np.ndarray, names: list[str]) -> list[tuple[str, str]]:
    """Candidates (pairs of representatives) that failed the exact check, by path."""
    if not len(cand):
        return []
    n = len(names)
    failed = cand[~np.isin(pair_codes(cand, n), pair_codes(ok, n))]
    return sorted((a, b) if a <= b else (b, a) for a, b in ((names[i], names[j]) for i, j in failed.tolist()))
