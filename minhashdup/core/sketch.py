"""MinHash and an LSH index for any sets of items, with the same hash family as the scan.

A :class:`MinHash` built from the shingle hashes of a file (:meth:`MinHash.update_hashes`)
has exactly the signature the scan computes for it, so both can be mixed freely.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator

import numpy as np
import numpy.typing as npt

from minhashdup.core import bands as banding
from minhashdup.core import signature as sig
from minhashdup.core.hashing import UInt64Array, hash_bytes, hash_text
from minhashdup.errors import ConfigError


def item_hash(item: str | bytes) -> int:
    """Stable 64-bit hash of an item (text as UTF-8, bytes as they are).

    Raises:
        TypeError: ``item`` is neither ``str`` nor ``bytes``.
    """
    if isinstance(item, (bytes, bytearray)):
        return hash_bytes(bytes(item))
    if isinstance(item, str):
        return hash_text(item)
    raise TypeError(
        f"an item is a str or bytes (got {type(item).__name__}: {item!r}); give integer hashes to update_hashes"
    )


def _items(items: Iterable[str | bytes]) -> Iterable[str | bytes]:
    """``items``, refusing one string or bytes object taken for a collection of characters."""
    if isinstance(items, (str, bytes, bytearray)):
        raise TypeError(
            f"items must be a collection of items, not one {type(items).__name__} (its characters would be the"
            f" items); wrap it in a list: [{items!r}]"
        )
    return items


_U64_MAX = 2**64 - 1


def as_hashes(hashes: npt.ArrayLike) -> UInt64Array:
    """``hashes`` as a flat array of unsigned 64-bit integers, refusing what would change them.

    Accepted: arrays of unsigned integers, arrays of signed integers without negatives, and
    iterables of Python (or NumPy) integers from 0 to 2**64 - 1.

    Raises:
        TypeError: floats, bools, strings or other non-integers (a float would be truncated).
        ValueError: a negative value or one above 2**64 - 1 (-1 would wrap to 2**64 - 1).

    Example:
        >>> as_hashes([0, 2**64 - 1]).tolist()
        [0, 18446744073709551615]
    """
    if isinstance(hashes, (str, bytes, bytearray)):
        raise TypeError(f"hashes are integers, not a {type(hashes).__name__}; hash text items with update()")
    if isinstance(hashes, np.ndarray) and hashes.dtype.kind in "ui":
        flat = hashes.ravel()
        if flat.dtype.kind == "i" and len(flat) and int(flat.min()) < 0:
            raise ValueError(f"hashes must be from 0 to 2**64 - 1 (got {int(flat.min())})")
        return flat.astype(np.uint64)
    if isinstance(hashes, np.ndarray) and hashes.dtype != object:
        raise TypeError(f"hashes must be an array of unsigned integers (got dtype {hashes.dtype})")
    if not isinstance(hashes, Iterable):
        raise TypeError(f"hashes must be an array or an iterable of integers (got {type(hashes).__name__})")
    values: list[int] = []
    for value in np.ravel(hashes).tolist() if isinstance(hashes, np.ndarray) else hashes:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"hashes must be integers (got {type(value).__name__}: {value!r})")
        values.append(int(value))
    if values and (min(values) < 0 or max(values) > _U64_MAX):
        bad = min(values) if min(values) < 0 else max(values)
        raise ValueError(f"hashes must be from 0 to 2**64 - 1 (got {bad})")
    return np.array(values, dtype=np.uint64)


class MinHash:
    """MinHash signature of a set of items: ``num_hashes`` minima under a seeded family.

    With ``bits`` below 64 it is a b-bit MinHash (Li and König 2010): only the low ``bits``
    of each minimum are kept in :attr:`signature` (``num_hashes * bits / 8`` bytes), and
    :meth:`jaccard` removes the chance that two different minima agree in those bits. The
    full minima are kept inside, so that adding items and merging stay exact.

    Example:
        >>> a, b = MinHash(128), MinHash(128)
        >>> a.update(["x", "y", "z"]); b.update(["x", "y", "w"])
        >>> 0.0 <= a.jaccard(b) <= 1.0
        True
        >>> (a.merge(b).signature == MinHash(128, items=["x", "y", "z", "w"]).signature).all()
        np.True_
        >>> small = MinHash(128, bits=8, items=["x", "y", "z"])
        >>> int(small.signature.max()) < 256, small.jaccard(MinHash(128, bits=8, items=["x", "y", "z"]))
        (True, 1.0)
    """

    def __init__(self, num_hashes: int = 128, seed: int = 1, items: Iterable[str | bytes] = (), bits: int = 64) -> None:
        if isinstance(num_hashes, bool) or not isinstance(num_hashes, int) or num_hashes < 1:
            raise ValueError(f"num_hashes must be a positive whole number (got {num_hashes!r})")
        _check_whole("seed", seed, 0, 2**64 - 1)
        _check_whole("bits", bits, 1, 64)
        self.seed, self.bits = seed, int(bits)
        self._seeds = sig.hash_seeds(seed, num_hashes)
        self._sig = np.full(num_hashes, sig.EMPTY, dtype=np.uint64)
        self.update(items)

    @property
    def num_hashes(self) -> int:
        """Signature length ``K``."""
        return len(self._sig)

    @property
    def signature(self) -> UInt64Array:
        """A copy of the ``K`` minima, each cut to its low :attr:`bits`
        (:data:`minhashdup.core.signature.EMPTY`, so cut, where the set is empty)."""
        return sig.truncate(self._sig, self.bits).copy()

    def is_empty(self) -> bool:
        """True until an item is added."""
        return bool((self._sig == sig.EMPTY).all())

    def add(self, item: str | bytes) -> None:
        """Add one item."""
        self.update_hashes(np.array([item_hash(item)], dtype=np.uint64))

    def update(self, items: Iterable[str | bytes]) -> None:
        """Add many items (hashed once each, then folded in with one vectorised pass).

        Raises:
            TypeError: ``items`` is one ``str`` or ``bytes`` (wrap it in a list), or holds
                something else than ``str`` and ``bytes``.
        """
        hashes = np.fromiter((item_hash(i) for i in _items(items)), dtype=np.uint64)
        self._fold(hashes)

    def update_hashes(self, hashes: npt.ArrayLike) -> None:
        """Add items given as 64-bit hashes (e.g. a file's shingle set).

        Raises:
            TypeError, ValueError: as :func:`as_hashes` (no float, bool or negative value).
        """
        self._fold(as_hashes(hashes))

    def _fold(self, values: UInt64Array) -> None:
        if len(values):
            np.minimum(self._sig, sig.signature(values, self._seeds), out=self._sig)

    def jaccard(self, other: MinHash) -> float:
        """Estimated Jaccard similarity: the share of equal minima.

        The Jaccard similarity of two empty sets is 0 / 0: it is refused rather than given as
        1.0 (all minima "equal") or 0.0; the scan likewise leaves out files without shingles.
        An empty and a non-empty MinHash have similarity 0.0.

        Raises:
            ValueError: the two use different seeds or lengths, or both are empty (check
                :meth:`is_empty` first).
        """
        self._check(other)
        if self.is_empty() and other.is_empty():
            raise ValueError("the Jaccard similarity of two empty MinHashes is undefined (0 / 0); check is_empty()")
        if self.is_empty() or other.is_empty():
            return 0.0  # cut to a few bits, EMPTY could agree with a minimum by chance
        return float(sig.estimate(self.signature, other.signature, self.bits))

    def merge(self, other: MinHash) -> MinHash:
        """The MinHash of the union of both sets (elementwise minimum); neither changes."""
        self._check(other)
        out = self.copy()
        np.minimum(out._sig, other._sig, out=out._sig)
        return out

    def copy(self) -> MinHash:
        """An independent copy."""
        out = MinHash.__new__(MinHash)
        out.seed, out.bits, out._seeds, out._sig = self.seed, self.bits, self._seeds, self._sig.copy()
        return out

    @property
    def family(self) -> tuple[int, int, int]:
        """``(seed, num_hashes, bits)``: MinHashes compare only within one family."""
        return self.seed, self.num_hashes, self.bits

    def band_keys(self, bands: int, rows: int) -> UInt64Array:
        """The ``bands`` LSH keys of this signature (as the scan computes them, b-bit values too)."""
        keys: UInt64Array = banding.band_keys(self.signature[None, :], bands, rows)[0]
        return keys

    def _check(self, other: MinHash) -> None:
        if self.family != other.family:
            raise ValueError(
                f"cannot compare MinHash(K={self.num_hashes}, seed={self.seed}{_bits(self.bits)}) "
                f"with MinHash(K={other.num_hashes}, seed={other.seed}{_bits(other.bits)}); build both alike"
            )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MinHash) and self.family == other.family and bool(np.array_equal(self._sig, other._sig))
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MinHash(num_hashes={self.num_hashes}, seed={self.seed}{_bits(self.bits)})"


def _bits(bits: int) -> str:
    """``, bits=W`` for a b-bit MinHash, nothing for full 64-bit values."""
    return "" if bits >= 64 else f", bits={bits}"


class LSHIndex:
    """Banded LSH over MinHash signatures: items sharing a whole band share a bucket.

    Candidates are approximate (see :func:`minhashdup.core.bands.candidate_probability`): check
    them with an exact similarity before trusting them.

    Give ``bands`` and ``rows``, or a ``threshold``: then they are chosen as ``minhashdup tune``
    recommends (:func:`minhashdup.core.bands.recommend`): the fewest hashes, at most
    ``max_hashes``, with which a pair of similarity ``threshold`` becomes a candidate with
    probability ``min_recall`` at least, for MinHashes of ``bits`` bits. Neither: 12 x 4, as a scan.

    Raises:
        TypeError, ValueError: a value of the wrong type or out of range, bands or rows given
            with a threshold, or no setting within ``max_hashes`` reaching ``min_recall``.

    Example:
        >>> idx = LSHIndex(bands=16, rows=2)
        >>> a = MinHash(32, items=[str(i) for i in range(100)])
        >>> idx.insert("a", a); idx.insert("copy", a.copy())
        >>> idx.query(a), idx.candidate_pairs()
        (['a', 'copy'], [('a', 'copy')])
        >>> tuned = LSHIndex(threshold=0.8)
        >>> tuned.bands, tuned.rows, tuned.num_hashes
        (5, 2, 10)
    """

    def __init__(
        self,
        bands: int | None = None,
        rows: int | None = None,
        *,
        threshold: float | None = None,
        max_hashes: int = 128,
        min_recall: float = 0.99,
        bits: int = 64,
    ) -> None:
        if threshold is not None:
            if bands is not None or rows is not None:
                raise ValueError("give bands and rows, or a threshold to choose them from, not both")
            bands, rows = _tuned(threshold, max_hashes, min_recall, bits)
        bands, rows = (12 if bands is None else bands), (4 if rows is None else rows)
        _check_whole("bands", bands, 1, 2**16)
        _check_whole("rows", rows, 1, 2**16)
        self.bands, self.rows = bands, rows
        self.family: tuple[int, int, int] | None = None  # (seed, num_hashes, bits) of the MinHashes inside
        self._keys: list[Hashable] = []
        self._ids: dict[Hashable, int] = {}
        self._buckets: list[dict[int, list[int]]] = [{} for _ in range(bands)]

    @property
    def num_hashes(self) -> int:
        """The fewest hashes a MinHash needs to fill this index's bands: ``bands * rows``."""
        return self.bands * self.rows

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def _band_keys(self, minhash: MinHash) -> list[int]:
        if not isinstance(minhash, MinHash):
            raise TypeError(f"an LSHIndex holds MinHash objects (got {type(minhash).__name__})")
        if minhash.num_hashes < self.bands * self.rows:
            raise ValueError(
                f"a MinHash of {minhash.num_hashes} hashes cannot fill {self.bands} bands x "
                f"{self.rows} rows; use num_hashes >= {self.bands * self.rows}"
            )
        if self.family is not None and minhash.family != self.family:
            seed, k, bits = self.family
            raise ValueError(
                f"this index holds MinHash(num_hashes={k}, seed={seed}{_bits(bits)}); a MinHash(num_hashes="
                f"{minhash.num_hashes}, seed={minhash.seed}{_bits(minhash.bits)}) is not comparable with them:"
                " build all MinHashes alike"
            )
        return [int(k) for k in minhash.band_keys(self.bands, self.rows)]

    def insert(self, key: Hashable, minhash: MinHash) -> None:
        """Add ``minhash`` under ``key``. Every MinHash of an index has the seed and length
        of the first one inserted (their minima would otherwise match by chance only).

        Raises:
            ValueError: ``key`` is already in the index, the signature is too short, its
                seed or length differs from the index's, or it is empty (an empty set is
                similar to nothing; all empty MinHashes would share every bucket).
        """
        if key in self._ids:
            raise ValueError(f"key {key!r} is already in the index")
        keys = self._band_keys(minhash)
        if minhash.is_empty():
            raise ValueError(f"the MinHash of key {key!r} is empty (no item added); leave it out of the index")
        self.family = minhash.family
        ident = len(self._keys)
        self._keys.append(key)
        self._ids[key] = ident
        for band, k in enumerate(keys):
            self._buckets[band].setdefault(k, []).append(ident)

    def query(self, minhash: MinHash) -> list[Hashable]:
        """Keys sharing at least one band with ``minhash``, in insertion order (none for an
        empty MinHash).

        Raises:
            ValueError: ``minhash`` has another seed or length than the index's MinHashes.
        """
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


def _tuned(threshold: float, max_hashes: int, min_recall: float, bits: int) -> tuple[int, int]:
    """The (bands, rows) ``tune`` recommends for ``threshold``, its arguments checked as ``tune``
    checks them (in :func:`minhashdup.core.bands.tune`: a ``ConfigError``, a ``ValueError``,
    naming each); numpy numbers are taken as the Python numbers they hold, as everywhere in
    this module."""
    threshold, min_recall = (float(v) if isinstance(v, np.floating) else v for v in (threshold, min_recall))
    max_hashes, bits = (int(v) if isinstance(v, np.integer) else v for v in (max_hashes, bits))
    best = banding.recommend(banding.tune(threshold, max_hashes, min_recall, bits), min_recall)
    if best is None:
        raise ConfigError(
            "no bands x rows within {0}={max_hashes} reach {1}={min_recall:g} at threshold {threshold:g};"
            " raise max_hashes or lower min_recall",
            "max_hashes",
            "min_recall",
            max_hashes=max_hashes,
            min_recall=min_recall,
            threshold=threshold,
        )
    return best.bands, best.rows


def _check_whole(name: str, value: object, low: int, high: int) -> None:
    """Raise TypeError unless ``value`` is an ``int`` (not a bool), ValueError unless within bounds."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a whole number (got {type(value).__name__} {value!r})")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high} (got {value})")
