"""The folder view of the HTML report's chord diagram, for more pairs than a chord per pair can
show: which arcs the rim starts with. The page's script (``assets/chords.js``) draws them, and
opens an arc into its folders, and a folder into its subfolders and files, on a click.

An arc is a run of files in path order: one folder at the chosen depth, or several neighbouring
ones under the same parent when the folders at that depth are too many. Four Go releases side by
side have 4 folders at depth 3 (``go-1.21.13/go/src``...) and 208 at depth 4; a few dozen arcs,
about ten in each release, show which parts of one release repeat in another.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from minhashdup.report.svg import common_folders, folder_of, runs_of

#: The rim starts with about this many arcs: a few dozen a reader can tell apart and read labels of.
ARCS = 40


def folder_view(files: Sequence[str], arcs: int = ARCS) -> dict[str, Any]:
    """The folder view of ``files`` (sorted paths) for the page's script.

    Returns:
        ``strip``: characters of the folders common to every path, left out of all of them
        (after ``\\`` -> ``/`` and a leading ``./``); ``depth``: the deepest folder level below
        them with at most ``arcs`` folders (at least 1); ``fine``: the level the arcs are made
        of (``depth``, or one deeper when ``depth`` has fewer than half of ``arcs`` folders);
        ``arcs``: ``[first, last, label, folder]`` for each arc, the files ``first`` to ``last - 1``,
        ``folder`` its one folder at level ``fine`` (``""`` when it joins several). A large folder
        of files only (a flat tree) is cut into ranges of its files, each an arc.

    Example:
        >>> names = [f"r/a/{f}/1.go" for f in "pqstuv"] + [f"r/b/x/{n}.go" for n in range(6)]
        >>> view = folder_view(names, arcs=6)
        >>> view["depth"], view["fine"], [label for _, _, label, _ in view["arcs"]]
        (1, 2, ['a/p .. q', 'a/s .. t', 'a/u .. v', 'b/x/0.go .. 1.go', 'b/x/2.go .. 3.go', 'b/x/4.go .. 5.go'])
    """
    clean = [n.replace("\\", "/").removeprefix("./") for n in files]
    common = common_folders(clean)
    strip = len("".join(part + "/" for part in clean[0].split("/")[:common])) if clean else 0
    rel = [c[strip:] for c in clean]
    deepest = max((r.count("/") for r in rel), default=0)
    depth = 1
    while depth < deepest and len({folder_of(r, depth + 1) for r in rel}) <= arcs:
        depth += 1
    few = len({folder_of(r, depth) for r in rel}) < arcs // 2
    fine = depth + 1 if few and depth < deepest else depth
    return {"strip": strip, "depth": depth, "fine": fine, "arcs": _arcs(rel, depth, fine, len(rel) / arcs)}


def _arcs(rel: Sequence[str], depth: int, fine: int, share: float) -> list[list[Any]]:
    """The folders at level ``fine`` (runs of files), neighbours under one folder at level
    ``depth`` joined into arcs of about ``share`` files each (a larger folder alone)."""
    units = runs_of([folder_of(r, fine) for r in rel])
    parents = runs_of([folder_of(rel[first], depth) for _, first, _ in units])
    out: list[list[Any]] = []
    for _, u1, u2 in parents:
        start, size = units[u1][1], units[u2 - 1][2] - units[u1][1]
        wanted = max(1, round(size / share))

        def place(unit: tuple[str, int, int], start: int = start, size: int = size, wanted: int = wanted) -> int:
            return min(wanted - 1, int(((unit[1] + unit[2]) / 2 - start) * wanted / size))  # by its middle file

        for _, group in itertools.groupby(units[u1:u2], key=place):
            out.extend(_flat(_arc(list(group)), rel, fine, share))
    return out


def _flat(arc: list[Any], rel: Sequence[str], fine: int, share: float) -> list[list[Any]]:
    """``arc``, or when it is one large folder of files only (no deeper folder: opened, each of
    its files would be an arc), ranges of about ``share`` of its files, each opening into its own."""
    first, last, _, folder = arc
    if not folder or last - first < 2 * share or any(r.count("/") > fine for r in rel[first:last]):
        return [arc]
    parts = round((last - first) / share)
    bounds = [first + (last - first) * k // parts for k in range(parts + 1)]
    name = [r.rsplit("/", 1)[-1] for r in rel]
    above = "" if folder == "." else folder + "/"
    return [[a, b, f"{above}{name[a]} .. {name[b - 1]}", folder] for a, b in itertools.pairwise(bounds)]


def _arc(units: list[tuple[str, int, int]]) -> list[Any]:
    first, last = units[0], units[-1]
    if len({u[0] for u in units}) == 1:
        return [first[1], last[2], first[0], first[0]]
    return [first[1], last[2], f"{first[0]} .. {last[0].rsplit('/', 1)[-1]}", ""]
