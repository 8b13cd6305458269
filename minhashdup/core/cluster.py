"""Verified pairs joined into families (connected components), in a deterministic order.

A family is transitive: ``a ~ b`` and ``b ~ c`` put ``a`` and ``c`` together even if
``a`` and ``c`` are not similar themselves.
"""

from __future__ import annotations

from collections.abc import Iterable


class Parts:
    """Union-find with path compression over the nodes ``0..count-1``, each part's size kept: a
    join may be refused when the part it makes would be larger than a bound.

    Example:
        >>> parts = Parts(4)
        >>> parts.join(0, 1), parts.join(2, 3), parts.join(1, 2, most=3), parts.find(3)
        (True, True, False, 2)
    """

    def __init__(self, count: int) -> None:
        self.parent = list(range(count))
        self.size = [1] * count

    def find(self, x: int) -> int:
        """The smallest node of ``x``'s part."""
        parent = self.parent
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def join(self, a: int, b: int, most: int | None = None) -> bool:
        """Join the parts of ``a`` and ``b``, unless they would then hold more than ``most``
        nodes; whether they are one part now."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        if most is not None and self.size[ra] + self.size[rb] > most:
            return False
        low, high = min(ra, rb), max(ra, rb)
        self.parent[high] = low
        self.size[low] += self.size[high]
        return True


def roots(count: int, pairs: Iterable[tuple[int, int] | list[int]]) -> list[int]:
    """The smallest node of each node's connected component, in the graph on ``0..count-1``
    with edges ``pairs`` (:class:`Parts`).

    Example:
        >>> roots(5, [(3, 4), (0, 1), (1, 2)])
        [0, 0, 0, 3, 3]
    """
    parts = Parts(count)
    for a, b in pairs:
        parts.join(a, b)
    return [parts.find(node) for node in range(count)]


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
