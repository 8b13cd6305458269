"""The one mixing function every stage uses: splitmix64's finaliser, vectorised with numpy.

Stable across runs and machines (no salted ``hash()``, fixed-width unsigned arithmetic
that wraps modulo 2**64).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from minhashdup.core.digest import blake2b

U64 = np.uint64
UInt64Array = npt.NDArray[np.uint64]

GOLDEN = U64(0x9E3779B97F4A7C15)
_M1 = U64(0xBF58476D1CE4E5B9)
_M2 = U64(0x94D049BB133111EB)
_S30, _S27, _S31 = U64(30), U64(27), U64(31)


def mix64_inplace(z: UInt64Array, tmp: UInt64Array | None = None) -> UInt64Array:
    """Apply splitmix64's finaliser to ``z`` in place (a bijection on 64-bit words).

    ``tmp`` is scratch space of the same shape, to avoid allocations in hot loops.
    """
    if tmp is None:
        tmp = np.empty_like(z)
    np.right_shift(z, _S30, out=tmp)
    z ^= tmp
    return mix64_after_first_inplace(z, tmp)


def first_step(values: UInt64Array) -> UInt64Array:
    """The first step of :func:`mix64_inplace` (``z ^ z >> 30``), as a new array.

    It commutes with XOR (``first_step(a ^ b) == first_step(a) ^ first_step(b)``), so a hash
    family ``mix64(x ^ seed)`` takes it once per value and once per seed, not once per pair,
    and finishes with :func:`mix64_after_first_inplace`.

    Example:
        >>> a, b = np.array([3, 1 << 40], dtype=np.uint64), np.array([7, 5], dtype=np.uint64)
        >>> bool((mix64_after_first_inplace(first_step(a) ^ first_step(b)) == mix64(a ^ b)).all())
        True
    """
    return values ^ (values >> _S30)


def mix64_after_first_inplace(z: UInt64Array, tmp: UInt64Array | None = None) -> UInt64Array:
    """:func:`mix64_inplace` without its first step (:func:`first_step`), in place."""
    if tmp is None:
        tmp = np.empty_like(z)
    z *= _M1
    np.right_shift(z, _S27, out=tmp)
    z ^= tmp
    z *= _M2
    np.right_shift(z, _S31, out=tmp)
    z ^= tmp
    return z


def mix64(values: npt.ArrayLike) -> UInt64Array:
    """splitmix64's finaliser of each value, as a new array.

    Example:
        >>> int(mix64([0])[0]), int(mix64([1])[0]) != 1
        (0, True)
    """
    z = np.array(values, dtype=np.uint64, copy=True)
    return mix64_inplace(z)


def seed_sequence(seed: int, count: int) -> UInt64Array:
    """``count`` well-spread 64-bit seeds from one integer seed (splitmix64's generator)."""
    steps = np.arange(1, count + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        state = U64(seed) + steps * GOLDEN
    return mix64(state)


def hash_text(text: str) -> int:
    """Stable 64-bit hash of a string (BLAKE2b), independent of ``PYTHONHASHSEED``."""
    data = text.encode("utf-8", "surrogatepass")
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little")


def hash_bytes(data: bytes) -> int:
    """Stable 64-bit hash of bytes (BLAKE2b)."""
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little")
