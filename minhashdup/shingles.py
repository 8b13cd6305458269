"""k-token shingles as stable 64-bit hashes in sorted numpy arrays."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from minhashdup.hashing import U64, UInt64Array, hash_text, mix64_inplace

_COMBINE = U64(0x9FB21C651E98DF25)


def token_hashes(tokens: Iterable[str]) -> UInt64Array:
    """One stable 64-bit hash per token, in order.

    Each distinct text is hashed once per call (a file repeats its identifiers a lot).
    """
    tokens = tokens if isinstance(tokens, list) else list(tokens)
    vocab: dict[str, int] = dict.fromkeys(tokens, 0)
    for ident, text in enumerate(vocab):
        vocab[text] = ident
    table = np.fromiter(map(hash_text, vocab), dtype=np.uint64, count=len(vocab))
    ids = np.fromiter(map(vocab.__getitem__, tokens), dtype=np.intp, count=len(tokens))
    return table[ids]


def shingle_hashes(tokens: UInt64Array, k: int) -> UInt64Array:
    """Hash of every run of ``k`` consecutive token hashes: ``n - k + 1`` values, in order.

    The combination is order-sensitive (a mixed running value), so ``a b c`` and
    ``c b a`` differ. Fewer than ``k`` tokens give no shingle.

    Example:
        >>> t = token_hashes("a b c d e f".split())
        >>> len(shingle_hashes(t, 5))
        2
    """
    if k < 1:
        raise ValueError(f"shingle size must be at least 1 (got {k})")
    count = len(tokens) - k + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    h = tokens[:count].copy()
    tmp = np.empty_like(h)
    with np.errstate(over="ignore"):
        for j in range(1, k):
            h *= _COMBINE
            h += tokens[j : j + count]
            mix64_inplace(h, tmp)
    return h


def shingle_set(tokens: UInt64Array, k: int) -> UInt64Array:
    """The distinct shingle hashes of a token-hash sequence, sorted ascending."""
    return np.unique(shingle_hashes(tokens, k))


def jaccard(a: UInt64Array, b: UInt64Array) -> float:
    """Exact Jaccard similarity of two sorted arrays of distinct values (1.0 if both empty)."""
    common = intersection_size(a, b)
    union = len(a) + len(b) - common
    return common / union if union else 1.0


def intersection_size(a: UInt64Array, b: UInt64Array) -> int:
    """Size of the intersection of two sorted arrays of distinct values."""
    if len(a) > len(b):
        a, b = b, a
    if len(a) == 0:
        return 0
    pos = np.searchsorted(b, a)
    pos[pos == len(b)] = 0
    return int(np.count_nonzero(b[pos] == a))
