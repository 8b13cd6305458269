"""MinHash and an LSH index for any sets of items, with the same hash family as the scan.

A :class:`MinHash` built from the shingle hashes of a file (:meth:`MinHash.update_hashes`)
has exactly the signature the scan computes for it, so both can be mixed freely.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator

import numpy as np
import numpy.typing as npt

from minhashdup import bands as banding
from minhashdup import signature as sig
from minhashdup.hashing import UInt64Array, hash_bytes, hash_text


def item_hash(item: str | bytes) -> int:
    """Stable 64-bit hash of an item (text as UTF-8, bytes as they are)."""
    return hash_bytes(item) if isinstance(item, (bytes, bytearray)) else hash_text(item)


class MinHash:
    """MinHash signature of a set of items: ``num_hashes`` minima under a seeded family.

    Example:
        >>> a, b = MinHash(128), MinHash(128)
        >>> a.update(["x", "y", "z"]); b.update(["x", "y", "w"])
        >>> 0.0 <= a.jaccard(b) <= 1.0
        True
        >>> (a.merge(b).signature == MinHash(128, items=["x", "y", "z", "w"]).signature).all()
        np.True_
    """

    def __init__(self, num_hashes: int = 128, seed: int = 1, items: Iterable[str | bytes] = ()) -> None:
        if not isinstance(num_hashes, int) or num_hashes < 1:
            raise ValueError(f"num_hashes must be a positive whole number (got {num_hashes!r})")
        self.seed = seed
        self._seeds = sig.hash_seeds(seed, num_hashes)
        self._sig = np.full(num_hashes, sig.EMPTY, dtype=np.uint64)
        self.update(items)

    @property
    def num_hashes(self) -> int:
        """Signature length ``K``."""
        return len(self._sig)

    @property
    def signature(self) -> UInt64Array:
        """A copy of the ``K`` minima (:data:`minhashdup.signature.EMPTY` where the set is empty)."""
        return self._sig.copy()

    def is_empty(self) -> bool:
        """True until an item is added."""
        return bool((self._sig == sig.EMPTY).all())

    def add(self, item: str | bytes) -> None:
        """Add one item."""
        self.update_hashes(np.array([item_hash(item)], dtype=np.uint64))

    def update(self, items: Iterable[str | bytes]) -> None:
        """Add many items (hashed once each, then folded in with one vectorised pass)."""
        hashes = np.fromiter((item_hash(i) for i in items), dtype=np.uint64)
        self.update_hashes(hashes)

    def update_hashes(self, hashes: npt.ArrayLike) -> None:
        """Add items given as 64-bit hashes (e.g. a file's shingle set)."""
        values = np.asarray(hashes, dtype=np.uint64).ravel()
        if len(values):
            np.minimum(self._sig, sig.signature(values, self._seeds), out=self._sig)

    def jaccard(self, other: MinHash) -> float:
        """Estimated Jaccard similarity: the share of equal minima.

        Raises:
            ValueError: the two use different seeds or lengths.
        """
        self._check(other)
        return float(sig.agreement(self._sig, other._sig))

    def merge(self, other: MinHash) -> MinHash:
        """The MinHash of the union of both sets (elementwise minimum); neither changes."""
        self._check(other)
        out = self.copy()
        np.minimum(out._sig, other._sig, out=out._sig)
        return out

    def copy(self) -> MinHash:
        """An independent copy."""
        out = MinHash.__new__(MinHash)
        out.seed, out._seeds, out._sig = self.seed, self._seeds, self._sig.copy()
        return out

    def band_keys(self, bands: int, rows: int) -> UInt64Array:
        """The ``bands`` LSH keys of this signature (as the scan computes them)."""
        keys: UInt64Array = banding.band_keys(self._sig[None, :], bands, rows)[0]
        return keys

    def _check(self, other: MinHash) -> None:
        if self.num_hashes != other.num_hashes or self.seed != other.seed:
            raise ValueError(
                f"cannot compare MinHash(K={self.num_hashes}, seed={self.seed}) "
                f"with MinHash(K={other.num_hashes}, seed={other.seed}); build both alike"
            )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MinHash) and self.seed == other.seed and bool(np.array_equal(self._sig, other._sig))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MinHash(num_hashes={self.num_hashes}, seed={self.seed})"


class LSHIndex:
    """Banded LSH over MinHash signatures: items sharing a whole band share a bucket.

    Candidates are approximate (see :func:`minhashdup.bands.candidate_probability`): check
    them with an exact similarity before trusting them.

    Example:
        >>> idx = LSHIndex(bands=16, rows=2)
        >>> a = MinHash(32, items=[str(i) for i in range(100)])
        >>> idx.insert("a", a); idx.insert("copy", a.copy())
        >>> idx.query(a), idx.candidate_pairs()
        (['a', 'copy'], [('a', 'copy')])
    """

    def __init__(self, bands: int = 12, rows: int = 4) -> None:
        if bands < 1 or rows < 1:
            raise ValueError(f"bands and rows must be positive (got {bands} x {rows})")
        self.bands, self.rows = bands, rows
        self._keys: list[Hashable] = []
        self._ids: dict[Hashable, int] = {}
        self._buckets: list[dict[int, list[int]]] = [{} for _ in range(bands)]

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def _band_keys(self, minhash: MinHash) -> list[int]:
        if minhash.num_hashes < self.bands * self.rows:
            raise ValueError(
                f"a MinHash of {minhash.num_hashes} hashes cannot fill {self.bands} bands x "
                f"{self.rows} rows; use num_hashes >= {self.bands * self.rows}"
            )
        return [int(k) for k in minhash.band_keys(self.bands, self.rows)]

    def insert(self, key: Hashable, minhash: MinHash) -> None:
        """Add ``minhash`` under ``key``.

        Raises:
            ValueError: ``key`` is already in the index, or the signature is too short.
        """
        if key in self._ids:
            raise ValueError(f"key {key!r} is already in the index")
        keys = self._band_keys(minhash)
        ident = len(self._keys)
        self._keys.append(key)
        self._ids[key] = ident
        for band, k in enumerate(keys):
            self._buckets[band].setdefault(k, []).append(ident)

    def query(self, minhash: MinHash) -> list[Hashable]:
        """Keys sharing at least one band with ``minhash``, in insertion order."""
        found: set[int] = set()
        for band, k in enumerate(self._band_keys(minhash)):
            found.update(self._buckets[band].get(k, ()))
        return [self._keys[i] for i in sorted(found)]

    def candidate_pairs(self) -> list[tuple[Hashable, Hashable]]:
        """Distinct pairs of keys sharing a bucket in any band, in insertion order."""
        return [(self._keys[i], self._keys[j]) for i, j in sorted(set(self._pair_ids()))]

    def _pair_ids(self) -> Iterator[tuple[int, int]]:
        for buckets in self._buckets:
            for members in buckets.values():
                for x in range(len(members)):
                    for y in range(x + 1, len(members)):
                        yield members[x], members[y]
