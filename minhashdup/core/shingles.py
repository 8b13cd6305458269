"""k-token shingles as stable 64-bit hashes in sorted numpy arrays."""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Sequence

import numpy as np

from minhashdup.core.hashing import U64, UInt64Array, hash_text, mix64_inplace, seed_sequence
from minhashdup.core.runs import member


def token_hashes(
    tokens: Iterable[str], reuse: tuple[UInt64Array, Sequence[tuple[int, int, int]]] | None = None
) -> UInt64Array:
    """One stable 64-bit hash per token (BLAKE2b of its UTF-8 text), in order.

    Each distinct text is hashed once per process while at most :data:`KEPT_TOKENS` hashes are
    kept (beyond, the next file starts them again): a file repeats its identifiers a lot, and
    the files a worker lexes share their keywords, operators and common names. A file's tokens
    are looked up in one pass, the new ones hashed on the way (:class:`_Hashes`) by
    :func:`minhashdup.core.hashing.hash_text`: the same values on every machine. With ``reuse``
    (the hashes of another token sequence, and runs ``(at, start, count)`` where
    ``tokens[at:at + count]`` is that one's ``[start:start + count]``), those runs are copied,
    not looked up: the same values.

    Example:
        >>> from minhashdup.core.hashing import hash_text
        >>> int(token_hashes(["func"])[0]) == hash_text("func")
        True
        >>> base = token_hashes(["a", "b", "c"])
        >>> token_hashes(["x", "b", "c"], (base, [(1, 1, 2)])).tolist() == token_hashes(["x", "b", "c"]).tolist()
        True
    """
    tokens = tokens if isinstance(tokens, list) else list(tokens)
    if len(_KNOWN) > KEPT_TOKENS:  # a bound on memory: start again
        _KNOWN.clear()
    if reuse is None:
        return _looked_up(tokens)
    base, runs = reuse
    out = np.empty(len(tokens), dtype=np.uint64)
    done = 0
    for at, start, count in [*runs, (len(tokens), 0, 0)]:
        if at > done:
            out[done:at] = _looked_up(tokens[done:at])
        out[at : at + count] = base[start : start + count]
        done = at + count
    return out


def _looked_up(tokens: list[str]) -> UInt64Array:
    """The tokens' hashes, in order, looked up in one C call (``itemgetter``): no bound-method
    call per token, as a ``map`` of the dict's ``__getitem__`` makes."""
    if len(tokens) < 2:  # itemgetter of one key gives the value itself, of none fails
        return np.array([_KNOWN[t] for t in tokens], dtype=np.uint64)
    return np.fromiter(operator.itemgetter(*tokens)(_KNOWN), dtype=np.uint64, count=len(tokens))


class _Hashes(dict[str, int]):
    """Token hashes, each computed when first asked for (a set of a file's new tokens, built
    first, cost more than the look-ups themselves)."""

    __slots__ = ()

    def __missing__(self, text: str) -> int:
        value = self[text] = hash_text(text)
        return value


#: The most token hashes a process keeps between calls of :func:`token_hashes` (~100 bytes each).
KEPT_TOKENS = 1 << 17
_KNOWN = _Hashes()


def shingle_hashes(tokens: UInt64Array, k: int, links: np.ndarray | None = None) -> UInt64Array:
    """Hash of every run of ``k`` consecutive token hashes: ``n - k + 1`` values, in order.

    The hash is ``mix64(sum(M_j * t_(i+j)))`` with a distinct odd multiplier ``M_j`` per
    position (wrapping modulo 2**64), so ``a b c`` and ``c b a`` differ; one mixing pass per
    shingle instead of one per token keeps this a small share of the lexing time.
    Fewer than ``k`` tokens give no shingle.

    With ``links`` (:func:`name_links`: for each token, how far back the same name last
    occurred, 0 for none), a run also takes in, per position, the link when it stays inside the
    run: names that repeat at the same places give the same shingle whatever they are called
    (``x = x + y`` as ``a = a + b``), names that repeat elsewhere another.

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
    multipliers = _multipliers(0x5EED5, k)
    h = tokens[:count] * multipliers[0]
    tmp = np.empty_like(h)
    for j in range(1, k):
        np.multiply(tokens[j : j + count], multipliers[j], out=tmp)
        h += tmp
    if links is not None:
        inside = np.empty(count, dtype=np.uint64)
        link_multipliers = _multipliers(0x11475, k)
        for j in range(1, k):  # position 0 has no earlier position inside the run
            back = links[j : j + count]
            np.multiply(np.where(back <= j, back, 0).astype(np.uint64), link_multipliers[j], out=inside)
            h += inside
    return mix64_inplace(h, tmp)


def name_links(names: list[str]) -> np.ndarray:
    """For each token, how many tokens back the same name last occurred (0: a token that is
    not a name, ``""``, or the name's first occurrence).

    Example:
        >>> name_links(["x", "", "x", "", "y", "x"]).tolist()
        [0, 0, 2, 0, 0, 3]
    """
    links = np.zeros(len(names), dtype=np.int64)
    last: dict[str, int] = {}
    for i, name in enumerate(names):
        if name:
            seen = last.get(name)
            if seen is not None:
                links[i] = i - seen
            last[name] = i
    return links


@functools.lru_cache(maxsize=16)
def _multipliers(seed: int, k: int) -> UInt64Array:
    """``k`` odd multipliers from ``seed`` (odd: each position's term is a bijection of its
    token hash), made once per process: making them took a tenth of the shingling time of a
    file. Read-only, since every call shares the array.

    Example:
        >>> m = _multipliers(0x5EED5, 3)
        >>> bool((m & U64(1)).all()), m is _multipliers(0x5EED5, 3), m.flags.writeable
        (True, True, False)
    """
    multipliers = seed_sequence(seed, k) | U64(1)
    multipliers.flags.writeable = False
    return multipliers


def shingle_set(tokens: UInt64Array, k: int, links: np.ndarray | None = None) -> UInt64Array:
    """The distinct shingle hashes of a token-hash sequence, sorted ascending (``links``: see
    :func:`shingle_hashes`)."""
    hashes = shingle_hashes(tokens, k, links)
    hashes.sort()  # in place, then drop repeats: half the time of np.unique here
    if len(hashes) < 2:
        return hashes
    keep = np.empty(len(hashes), dtype=bool)
    keep[0] = True
    np.not_equal(hashes[1:], hashes[:-1], out=keep[1:])
    return hashes[keep]


def jaccard(a: UInt64Array, b: UInt64Array) -> float:
    """Exact Jaccard similarity of two sorted arrays of distinct values (1.0 if both empty)."""
    common = intersection_size(a, b)
    union = len(a) + len(b) - common
    return common / union if union else 1.0


def intersection_size(a: UInt64Array, b: UInt64Array) -> int:
    """Size of the intersection of two sorted arrays of distinct values.

    Two of like sizes are merged (:func:`merged`): each common value then stands next to itself
    (three times faster than looking each value of one up in the other, for the sets of a scan's
    candidates).
    One many times smaller is looked up, value by value, by bisection.

    Example:
        >>> v = np.array([1, 3, 5, 7], dtype=np.uint64)
        >>> intersection_size(v, v[1:3]), intersection_size(v, np.arange(2, 100, dtype=np.uint64))
        (2, 3)
    """
    if len(a) > len(b):
        a, b = b, a
    if len(a) == 0:
        return 0
    if len(b) <= _MERGED * len(a):
        return int(np.count_nonzero(merged(a, b)[1]))
    return int(np.count_nonzero(member(a, b, ordered=True)))


def merged(a: UInt64Array, b: UInt64Array) -> tuple[UInt64Array, np.ndarray]:
    """The values of ``a`` and ``b`` (sorted arrays of distinct values) joined, sorted, and where a
    value equals the next (one that both hold): a stable sort finds the two runs and merges them
    in one pass (timsort).

    Example:
        >>> both, twice = merged(np.array([1, 4], dtype=np.uint64), np.array([2, 4], dtype=np.uint64))
        >>> both.tolist(), twice.tolist()
        ([1, 2, 4, 4], [False, False, True])
    """
    both = np.concatenate((a, b))
    both.sort(kind="stable")
    return both, both[1:] == both[:-1]


#: Up to how many times larger than the other a set is merged with it (:func:`intersection_size`):
#: beyond, bisection took less time (measured for sizes of 20 to 10,000).
_MERGED = 8
