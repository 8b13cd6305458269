"""MinHash signatures: ``K`` minima under a seeded family of hash functions.

The ``i``-th function is ``h_i(x) = mix64(x ^ seed_i)`` (splitmix64's finaliser), with the
seeds drawn from one integer seed. For two sets the ``i``-th minima agree with probability
equal to their Jaccard similarity ``J``, so the share of agreeing minima estimates ``J``
with standard deviation ``sqrt(J (1 - J) / K)``. Results are estimates: check candidates
with the exact Jaccard (:mod:`minhashdup.core.exact`).
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from minhashdup.core.hashing import UInt64Array, first_step, mix64_after_first_inplace, seed_sequence
from minhashdup.core.runs import member
from minhashdup.core.shingles import merged

#: Signature value of an empty set (no minimum): the largest 64-bit word.
EMPTY = np.iinfo(np.uint64).max

_BLOCK_CELLS = 1 << 18  # shingles x hashes per block: a few MiB, stays in cache


def hash_seeds(seed: int, num_hashes: int) -> UInt64Array:
    """The seeds of the hash family: ``num_hashes`` 64-bit words derived from ``seed``."""
    return seed_sequence(seed, num_hashes)


@dataclasses.dataclass(frozen=True)
class Family:
    """A MinHash hash family: ``num_hashes`` functions drawn from ``seed``.

    Signatures compare only under one family. :meth:`sign` is the one place a scan makes the
    signatures of shingle sets: the lexing workers (each file as it is lexed, or a version from
    the one before it: :meth:`sign_after`), the cache (an entry stored without this family's
    signature), a corpus signed under another family, and ``evaluate``'s extra seeds all call it.

    Example:
        >>> fam = Family(seed=1, num_hashes=8)
        >>> fam.sign([np.array([3, 5], dtype=np.uint64)]).shape
        (1, 8)
    """

    seed: int
    num_hashes: int

    @functools.cached_property
    def seeds(self) -> UInt64Array:
        """The family's seeds (:func:`hash_seeds`), computed once."""
        return hash_seeds(self.seed, self.num_hashes)

    def sign(self, sets: Sequence[UInt64Array]) -> UInt64Array:
        """Signatures of ``sets`` (sorted arrays of shingle hashes): a ``(len(sets), K)`` array."""
        return signatures_of_sets(sets, self.seeds)

    def sign_after(self, base: UInt64Array, base_signature: UInt64Array, values: UInt64Array) -> UInt64Array:
        """The signature of ``values`` from ``base``'s where they differ little
        (:func:`signature_after`), else made whole."""
        found = signature_after(base, base_signature, values, self.seeds)
        return signature(values, self.seeds) if found is None else found


def signature_after(
    base: UInt64Array, base_signature: UInt64Array, values: UInt64Array, seeds: UInt64Array
) -> UInt64Array | None:
    """:func:`signature` of ``values`` from that of ``base`` (both sorted arrays of distinct
    values), when the two differ in at most a quarter as many values as ``values`` holds (else
    ``None``): a version of a file from the version before it.

    The two are merged (:func:`~minhashdup.core.shingles.merged`) to find the values only one
    holds. Each row's minimum is the base's, or a value added if smaller;
    where it was a value taken away, the row is made again over ``values``. The ``i``-th function
    is a bijection (``mix64(x ^ seed_i)``), so the minimum over the values taken away equals the
    base's exactly when the base's smallest was one of them: the same signature, exactly.

    Example:
        >>> s = hash_seeds(1, 8)
        >>> a, b = np.arange(0, 40, dtype=np.uint64), np.arange(3, 44, dtype=np.uint64)
        >>> bool((signature_after(a, signature(a, s), b, s) == signature(b, s)).all())
        True
        >>> signature_after(a, signature(a, s), b + np.uint64(100), s) is None
        True
    """
    if _DIFFER * abs(len(base) - len(values)) > len(values):
        return None
    both, twice = merged(base, values)
    once = np.ones(len(both), dtype=bool)
    once[1:] &= ~twice
    once[:-1] &= ~twice
    changed = both[once]  # sorted: in one of the two only
    if _DIFFER * len(changed) > len(values):
        return None
    gone = member(changed, base, ordered=True)
    out = np.minimum(base_signature, signature(changed[~gone], seeds))  # blocks: a few MiB at most
    lost = signature(changed[gone], seeds) == base_signature
    if lost.any():
        out[lost] = signature(values, seeds[lost])
    return out


#: A version is signed from its base where they differ in at most a ``1 / _DIFFER`` share of its
#: values: at a quarter that took 0.7x the time of signing it whole, at a twentieth 0.14-0.45x
#: (sets of 2,000 and 20,000 values); the more they differ, the more rows are made again.
_DIFFER = 4


def signatures(values: UInt64Array, offsets: npt.NDArray[np.int64], seeds: UInt64Array) -> UInt64Array:
    """MinHash signatures of many sets at once.

    Args:
        values: all sets' elements (64-bit hashes) concatenated.
        offsets: ``n + 1`` increasing positions; set ``i`` is ``values[offsets[i]:offsets[i+1]]``.
        seeds: the hash family, from :func:`hash_seeds`.

    Returns:
        ``(n, K)`` array; row ``i`` holds set ``i``'s minima (:data:`EMPTY` for an empty set).

    Example:
        >>> s = hash_seeds(1, 8)
        >>> v = np.array([5, 6, 7, 5, 6, 7], dtype=np.uint64)
        >>> sig = signatures(v, np.array([0, 3, 6]), s)
        >>> bool((sig[0] == sig[1]).all())
        True
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    count = len(offsets) - 1
    k = len(seeds)
    out = np.full((count, k), EMPTY, dtype=np.uint64)
    total = int(offsets[-1]) if count else 0
    block = max(1, min(total, max(64, _BLOCK_CELLS // max(k, 1))))
    z = np.empty((block, k), dtype=np.uint64)
    tmp = np.empty_like(z)
    stepped = first_step(seeds)  # mix64's first step, once per value and seed (see first_step)
    for start in range(0, total, block):
        stop = min(start + block, total)
        rows = stop - start
        np.bitwise_xor(first_step(values[start:stop])[:, None], stepped[None, :], out=z[:rows])
        mix64_after_first_inplace(z[:rows], tmp[:rows])
        _reduce_block(z[:rows], offsets, start, stop, out)
    return out


def _reduce_block(z: UInt64Array, offsets: npt.NDArray[np.int64], start: int, stop: int, out: UInt64Array) -> None:
    # Sets overlapping [start, stop) that are non-empty there; each gets the minimum of
    # its rows, merged with what earlier blocks gave it.
    first = int(np.searchsorted(offsets, start, side="right")) - 1
    last = int(np.searchsorted(offsets, stop, side="left"))
    sets = np.arange(first, last)
    lo = np.maximum(offsets[first:last], start)
    hi = np.minimum(offsets[first + 1 : last + 1], stop)
    keep = hi > lo
    sets, lo = sets[keep], lo[keep]
    if len(sets) == 0:
        return
    reduced = np.minimum.reduceat(z, lo - start, axis=0)
    np.minimum(out[sets], reduced, out=reduced)
    out[sets] = reduced


def signatures_of_sets(sets: Sequence[UInt64Array], seeds: UInt64Array) -> UInt64Array:
    """:func:`signature` of each sorted array: an ``(len(sets), K)`` array.

    Set by set in the (K, n) layout, which measured faster than :func:`signatures`' blocks
    for file-sized sets.
    """
    out = np.empty((len(sets), len(seeds)), dtype=np.uint64)
    for row, values in enumerate(sets):
        out[row] = signature(values, seeds)
    return out


def signature(values: UInt64Array, seeds: UInt64Array) -> UInt64Array:
    """MinHash signature of one set of 64-bit hashes (``K`` minima; :data:`EMPTY` for an empty set).

    In the (K, n) layout, a block of values at a time: each hash function's minimum is a
    reduction over contiguous memory. mix64's first step is taken once per value and once per
    seed (:func:`~minhashdup.core.hashing.first_step`), not once per pair.

    Example:
        >>> s = hash_seeds(1, 8)
        >>> v = np.array([5, 6, 7], dtype=np.uint64)
        >>> bool((signature(v, s) == signatures(v, np.array([0, 3]), s)[0]).all())
        True
    """
    values = np.asarray(values, dtype=np.uint64)
    k = len(seeds)
    out = np.full(k, EMPTY, dtype=np.uint64)
    step = max(1, _BLOCK_CELLS // max(k, 1))
    stepped = first_step(seeds)[:, None]
    cells, scratch = _scratch(min(step, len(values)) * k)
    for start in range(0, len(values), step):
        chunk = first_step(values[start : start + step])
        z = cells[: k * len(chunk)].reshape(k, len(chunk))
        np.bitwise_xor(stepped, chunk[None, :], out=z)
        mix64_after_first_inplace(z, scratch[: z.size].reshape(z.shape))
        np.minimum(out, z.min(axis=1), out=out)
    return out


_SCRATCH = threading.local()


def _scratch(cells: int) -> tuple[UInt64Array, UInt64Array]:
    """Two arrays of at least ``cells`` words, kept by each thread between calls: a fresh array of
    a MiB or two costs its page faults again on every set (they took half of the time)."""
    kept: tuple[UInt64Array, UInt64Array] | None = getattr(_SCRATCH, "arrays", None)
    if kept is None or len(kept[0]) < cells:
        kept = _SCRATCH.arrays = (np.empty(cells, dtype=np.uint64), np.empty(cells, dtype=np.uint64))
    return kept


def agreement(a: UInt64Array, b: UInt64Array) -> npt.NDArray[np.float64]:
    """Share of equal minima between rows of ``a`` and ``b`` (the Jaccard estimate).

    Works on single signatures (``(K,)``) or row-aligned batches (``(n, K)``).
    """
    return np.asarray(np.mean(np.asarray(a) == np.asarray(b), axis=-1), dtype=np.float64)


def truncate(sigs: UInt64Array, bits: int) -> UInt64Array:
    """b-bit MinHash (Li and König 2010): keep only the ``bits`` low bits of each minimum.

    A signature of ``K`` values then needs ``K * bits / 8`` bytes; two different minima
    agree by chance with probability about ``2**-bits``, which :func:`estimate` removes.
    """
    if bits >= 64:
        return sigs
    return sigs & np.uint64((1 << bits) - 1)


def estimate(a: UInt64Array, b: UInt64Array, bits: int = 64) -> npt.NDArray[np.float64]:
    """Jaccard estimate from (possibly b-bit) signatures.

    With ``b`` bits, P(agree) = J + (1 - J) 2**-b for large sets, so the estimate is
    ``(agreement - 2**-b) / (1 - 2**-b)``, clipped to [0, 1].

    Example:
        >>> a = np.array([1, 2, 3, 4], dtype=np.uint64)
        >>> float(estimate(a, np.array([1, 2, 7, 8], dtype=np.uint64)))
        0.5
    """
    share = agreement(a, b)
    if bits >= 64:
        return share
    chance = 2.0**-bits
    return np.asarray(np.clip((share - chance) / (1.0 - chance), 0.0, 1.0), dtype=np.float64)


def pair_estimates(sigs: UInt64Array, pairs: npt.NDArray[np.int64], bits: int = 64) -> npt.NDArray[np.float64]:
    """:func:`estimate` for each row ``(i, j)`` of ``pairs`` (rows of ``sigs``), a block of
    pairs at a time: the two signatures of two million pairs at once took 1.5 GB.

    Example:
        >>> s = np.array([[1, 2], [1, 3], [1, 2]], dtype=np.uint64)
        >>> pair_estimates(s, np.array([[0, 1], [0, 2]])).tolist()
        [0.5, 1.0]
    """
    out = np.empty(len(pairs), dtype=np.float64)
    for start in range(0, len(pairs), _ESTIMATE_ROWS):
        block = pairs[start : start + _ESTIMATE_ROWS]
        out[start : start + len(block)] = estimate(sigs[block[:, 0]], sigs[block[:, 1]], bits)
    return out


_ESTIMATE_ROWS = 16_384


def standard_error(jaccard: float, num_hashes: int) -> float:
    """Standard deviation of the MinHash estimate: ``sqrt(J (1 - J) / K)``."""
    return float(np.sqrt(jaccard * (1.0 - jaccard) / num_hashes))
