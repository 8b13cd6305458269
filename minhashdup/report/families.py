"""What the table for people lists, and in which order: the verified pairs folded into rows
(an identical group is one row, the pairs across two groups one row), the rows gathered by
family (largest and most similar first), and cut to a limit.

Only the table folds and cuts: every other format lists every pair. Nothing here draws; the
rows are plain data that :mod:`minhashdup.report.table` writes with rich.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence

from minhashdup.core.limits import listed_across
from minhashdup.report import FAMILY_ROWS_MIN, FAMILY_SHARE, TABLE_LIMIT
from minhashdup.result import Cluster, Group, Pair, Result


@dataclasses.dataclass(frozen=True)
class Side:
    """One side of a row: a path, a group (``path (+4 identical)``) or a group's summary, and
    how much of it is vendored (``""``, ``"vendored"`` or ``"3 vendored"``)."""

    text: str
    vendored: str = ""


@dataclasses.dataclass(frozen=True)
class Row:
    """A line of the table: a pair of files, an identical group, or the pairs across a group
    and another file or group (every pair of them has the same Jaccard).

    ``pairs`` counts the file pairs the row stands for; ``listed`` and ``new`` those of
    ``Result.pairs`` it holds and how many of them the baseline does not know.
    """

    jaccard: float
    a: Side
    b: Side
    common: int
    shingles: str
    pairs: int
    listed: int = 1
    new: int = 1
    group: bool = False  # an identical group's row
    verbatim: tuple[float, float] | None = None  # the pairs' jaccard_verbatim, lowest and highest


@dataclasses.dataclass(frozen=True)
class Family:
    """A cluster's rows, best first, and how many of them the table shows."""

    cluster: Cluster
    summary: str  # a glob naming its files, or "" when none says much
    rows: list[Row]
    shown: int

    @property
    def pairs(self) -> int:
        """File pairs its rows stand for."""
        return sum(r.pairs for r in self.rows)


@dataclasses.dataclass(frozen=True)
class Listing:
    """The families in table order, each with the rows shown."""

    families: list[Family]

    @property
    def rows(self) -> int:
        return sum(len(f.rows) for f in self.families)

    @property
    def hidden_rows(self) -> int:
        return sum(len(f.rows) - f.shown for f in self.families)

    @property
    def hidden_pairs(self) -> int:
        return sum(r.pairs for f in self.families for r in f.rows[f.shown :])

    @property
    def hidden_families(self) -> int:
        """Families of which no row is shown."""
        return sum(1 for f in self.families if not f.shown)


def listing(result: Result, limit: int = TABLE_LIMIT, relative_to: str | None = None) -> Listing:
    """The rows of ``result.pairs`` by family, at most ``limit`` shown (0: all).

    Families come largest first, then by their highest and lowest Jaccard; a family's rows by
    Jaccard (an identical group first), then path. With a limit, a family shows at most
    ``limit // 8`` rows (at least 3). Paths are shown relative to ``relative_to`` (as they are
    when ``None``).

    Example:
        >>> from minhashdup.result import Stats
        >>> pair = Pair("src/a.go", "src/b.go", 0.9, 0.9, 50, 50, 47)
        >>> found = listing(Result({}, Stats(), [pair], [Cluster(("src/a.go", "src/b.go"), 1, 0.9, 0.9)]), 40, "src")
        >>> [(r.a.text, r.b.text) for f in found.families for r in f.rows]
        [('a.go', 'b.go')]
    """
    shown = _Shown(result, relative_to)
    rows = _rows(result, shown)
    by_file = {path: c for c in result.clusters for path in c.files}
    gathered: dict[int, tuple[Cluster, list[Row]]] = {}
    for files, row in rows:
        cluster = by_file.get(files[0]) or Cluster(files, row.pairs, row.jaccard, row.jaccard)
        gathered.setdefault(id(cluster), (cluster, []))[1].append(row)
    order = sorted(gathered.values(), key=lambda f: _rank(f[0]))
    per = max(FAMILY_ROWS_MIN, limit // FAMILY_SHARE)
    budget = limit
    families = []
    for cluster, members in order:
        members.sort(key=lambda r: (-r.jaccard, not r.group, r.a.text, r.b.text))
        count = len(members) if not limit else min(len(members), per, budget)
        budget -= count
        summary = pattern([shown.path(f) for f in cluster.files]) if len(members) > 1 else ""
        families.append(Family(cluster, summary if _telling(summary) else "", members, count))
    return Listing(families)


def _rank(cluster: Cluster) -> tuple[int, float, float, tuple[str, ...]]:
    """Families largest first, then the most similar (highest Jaccard, then lowest)."""
    return (-len(cluster.files), -cluster.jaccard_max, -cluster.jaccard_min, cluster.files)


class _Shown:
    """How files and groups are named in the table: relative paths, vendored marks."""

    def __init__(self, result: Result, relative_to: str | None) -> None:
        self.base = relative_to
        self.vendored = {path for p in result.pairs for path, v in ((p.a, p.vendored_a), (p.b, p.vendored_b)) if v}
        self.group = {path: g for g in result.groups for path in g.files}

    def path(self, path: str) -> str:
        return relative(path, self.base)

    def unit(self, path: str) -> tuple[str, ...]:
        """The files shown as one: ``path``'s identical group, else ``path`` alone."""
        group = self.group.get(path)
        return group.files if group else (path,)

    def side(self, files: Sequence[str]) -> Side:
        """A file, or a group named by its first file: ``a.go (+4 identical)``."""
        extra = f" (+{len(files) - 1} identical)" if len(files) > 1 else ""
        return Side(self.path(files[0]) + extra, self.marks(files))

    def marks(self, files: Sequence[str]) -> str:
        count = sum(1 for f in files if f in self.vendored)
        return "" if not count else "vendored" if count == len(files) else f"{count} vendored"

    def group_row(self, group: Group, listed: int, new: int, verbatim: tuple[float, float] | None) -> Row:
        n = len(group.files)
        shown = [self.path(f) for f in group.files]
        summary = pattern(shown)
        if not _telling(summary):
            summary = f"{shown[0]} and {n - 1} more"
        a = Side(f"{n} identical files", self.marks(group.files))
        each = f"{group.shingles} each"
        pairs = group.pairs_total if listed >= group.pairs_listed else listed  # fewer: kept by a review
        return Row(1.0, a, Side(summary), group.shingles, each, pairs, listed, new, group=True, verbatim=verbatim)


def _rows(result: Result, shown: _Shown) -> list[tuple[tuple[str, ...], Row]]:
    """Every row, with the files of its first side (that find its family).

    A pair inside a group of three or more files joins the group's row; a pair across two
    units (a file, or a group) joins theirs: both are counted in ``listed`` and ``new``. A row
    stands for every pair of its units when the scan listed them all, or in part as
    :func:`~minhashdup.core.pairs.expand` does; else (a review kept only the pairs touching
    changed files) for the pairs listed.
    """
    found: dict[tuple[tuple[str, ...], ...], list[Pair]] = {}
    for p in result.pairs:
        ua, ub = shown.unit(p.a), shown.unit(p.b)
        # inside a group: its one row, or the pair itself for a group of two
        inside = (ua,) if len(ua) > 2 else ((p.a,), (p.b,))
        key = tuple(sorted((ua, ub))) if ua != ub else inside
        found.setdefault(key, []).append(p)
    out = []
    for key, pairs in found.items():
        listed, new = len(pairs), sum(1 for p in pairs if not p.known)
        verbatim = _range([p.jaccard_verbatim for p in pairs if p.jaccard_verbatim is not None])
        if len(key) == 1:
            out.append((key[0], shown.group_row(shown.group[key[0][0]], listed, new, verbatim)))
            continue
        ua, ub = key
        p = pairs[0]
        na, nb = (p.shingles_a, p.shingles_b) if p.a in ua else (p.shingles_b, p.shingles_a)
        stands = len(ua) * len(ub) if listed == listed_across(len(ua), len(ub)) else listed
        row = Row(
            p.jaccard, shown.side(ua), shown.side(ub), p.common, f"{na}/{nb}", stands, listed, new, verbatim=verbatim
        )
        out.append((ua, row))
    return out


def _range(values: list[float]) -> tuple[float, float] | None:
    return (min(values), max(values)) if values else None


def relative(path: str, base: str | None) -> str:
    """``path`` relative to ``base`` (as it is when ``base`` is ``None`` or when it cannot be
    made relative, e.g. on another drive).

    Example:
        >>> relative("src/cmd/go/main.go", "src"), relative("src/a.go", None)
        ('cmd/go/main.go', 'src/a.go')
    """
    if base is None:
        return path
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return path


_SEPARATORS = re.compile("[" + re.escape(os.sep + (os.altsep or "")) + "]")


def pattern(paths: Sequence[str]) -> str:
    """A glob that matches every one of ``paths``: their common folders, then ``**`` when they
    lie at different depths, then what the last parts share (``*`` for the rest of a name).

    Example:
        >>> pattern(["syscall/zsyscall_openbsd_386.go", "syscall/zsyscall_openbsd_arm.go"])
        'syscall/zsyscall_openbsd_*.go'
        >>> pattern(["cmd/vendor/golang.org/x/mod/LICENSE", "vendor/golang.org/x/net/LICENSE"])
        '**/vendor/golang.org/x/*/LICENSE'
    """
    split = [_SEPARATORS.split(p) for p in paths]
    head: list[str] = []
    for column in zip(*(parts[:-1] for parts in split), strict=False):
        if len(set(column)) > 1:
            break
        head.append(column[0])
    rests = [parts[len(head) :] for parts in split]
    if len({len(rest) for rest in rests}) == 1:
        return os.sep.join(head + [_glob(column) for column in zip(*rests, strict=True)])
    tail = [_glob(column) for column in zip(*(rest[::-1] for rest in rests), strict=False)]
    while len(tail) > 1 and tail[-1] == "*":  # a folder of any name: ``**`` says so already
        tail.pop()
    return os.sep.join([*head, "**", *tail[::-1]])


def _glob(names: Sequence[str]) -> str:
    """The name if all are the same, else their common start and end around a ``*``."""
    if len(set(names)) == 1:
        return names[0]
    start = _shared_start(names)
    return start + "*" + _shared_start([name[len(start) :][::-1] for name in names])[::-1]


def _shared_start(names: Sequence[str]) -> str:
    """The longest start all ``names`` share (character by character: parts of a name)."""
    first, last = min(names), max(names)
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


def _telling(glob: str) -> bool:
    """Whether a glob names something: at least 3 characters besides ``*``, the separators
    and an extension (``**/*.go`` does not)."""
    return len(re.sub(r"\.\w+$", "", _SEPARATORS.sub("", glob.replace("*", "")))) >= 3
