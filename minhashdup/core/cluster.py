"""Verified pairs joined into families (connected components), in a deterministic order.

A family is transitive: ``a ~ b`` and ``b ~ c`` put ``a`` and ``c`` together even if
``a`` and ``c`` are not similar themselves.
"""

from __future__ import annotations

from collections.abc import Iterable


def roots(count: int, pairs: Iterable[tuple[int, int] | list[int]]) -> list[int]:
    """The smallest node of each node's connected component, in the graph on ``0..count-1``
    with edges ``pairs`` (union-find with path compression).

    Example:
        >>> roots(5, [(3, 4), (0, 1), (1, 2)])
        [0, 0, 0, 3, 3]
    """
    parent = list(range(count))

    def find(x: int) -> int:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return [find(node) for node in range(count)]


def components(count: int, pairs: Iterable[tuple[int, int]]) -> list[list[int]]:
    """Connected components of the graph on ``0..count-1`` with edges ``pairs``.

    Returns:
        Components of two or more nodes, each sorted; ordered by size (largest first),
        then by smallest member.

    Example:
        >>> components(5, [(3, 4), (0, 1), (1, 2)])
        [[0, 1, 2], [3, 4]]
    """
    groups: dict[int, list[int]] = {}
    for node, root in enumerate(roots(count, pairs)):
        groups.setdefault(root, []).append(node)
    found = [g for g in groups.values() if len(g) > 1]
    found.sort(key=lambda g: (-len(g), g[0]))
    return found
