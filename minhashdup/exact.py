"""Exact Jaccard of candidate pairs, from the shingle sets themselves."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from minhashdup.hashing import UInt64Array
from minhashdup.shingles import intersection_size


def size_bound(size_a: int, size_b: int) -> float:
    """Upper bound of Jaccard from set sizes alone: ``min / max``."""
    high = max(size_a, size_b)
    return min(size_a, size_b) / high if high else 1.0


def verify(
    pairs: npt.NDArray[np.int64], sets: Sequence[UInt64Array], threshold: float
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Keep the candidate pairs whose exact Jaccard reaches ``threshold``.

    Pairs that the size bound already rules out are not intersected.

    Args:
        pairs: ``(m, 2)`` indices into ``sets``.
        sets: sorted arrays of distinct shingle hashes.
        threshold: minimum Jaccard to keep a pair.

    Returns:
        ``(kept_pairs, common, jaccard)``: the kept ``(p, 2)`` pairs, their intersection
        sizes, and their exact Jaccard, in the input order.
    """
    sizes = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
    kept: list[int] = []
    common: list[int] = []
    for row, (i, j) in enumerate(pairs.tolist()):
        if size_bound(int(sizes[i]), int(sizes[j])) < threshold:
            continue
        inter = intersection_size(sets[i], sets[j])
        union = int(sizes[i] + sizes[j]) - inter
        if union and inter / union >= threshold:
            kept.append(row)
            common.append(inter)
    rows = np.asarray(kept, dtype=np.int64)
    inter_arr = np.asarray(common, dtype=np.int64)
    out_pairs = pairs[rows] if len(rows) else np.empty((0, 2), dtype=np.int64)
    union_arr = sizes[out_pairs[:, 0]] + sizes[out_pairs[:, 1]] - inter_arr
    jac = inter_arr / np.maximum(union_arr, 1)
    return out_pairs, inter_arr, jac.astype(np.float64)
