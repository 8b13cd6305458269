"""How many pairs does LSH lose on this tree? LSH candidates against the exact all-pairs,
per similarity bin, beside the S-curve's prediction."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from minhashdup.config import Config
from minhashdup.core import exact, signature
from minhashdup.core.bands import candidate_probability
from minhashdup.core.pairs import Corpus, Prepared
from minhashdup.core.runs import pair_codes, pairs_among
from minhashdup.core.signature import Family
from minhashdup.engine.pipeline import lsh_candidates, prepare, rep_signatures
from minhashdup.errors import check_share, check_whole

#: Seeds ``evaluate`` runs by default: the configured one and the next 29. One seed's recall
#: in a bin strays from P(s) by several points on a real tree (families of similar files win
#: or lose together); the mean over 30 seeds has a sixth of that spread.
REPEATS = 30

#: Seeds are 64-bit words: the repeat seeds after the configured one wrap modulo 2**64.
SEED_SPACE = 2**64


def repeat_seeds(seed: int, repeats: int) -> list[int]:
    """The seeds ``evaluate`` measures recall with: ``seed`` first, then the next ones.

    Seeds live in ``[0, 2**64)``, so the sequence wraps: after the largest seed comes 0.
    For any seed below ``2**64 - repeats`` this is simply ``seed, seed + 1, ...``.

    Args:
        seed: the configured seed, in ``[0, 2**64)``.
        repeats: how many seeds (at least 1).

    Returns:
        ``repeats`` distinct seeds, the configured one first.

    Example:
        >>> repeat_seeds(1, 3)
        [1, 2, 3]
        >>> repeat_seeds(2**64 - 2, 4)
        [18446744073709551614, 18446744073709551615, 0, 1]
    """
    return [(seed + i) % SEED_SPACE for i in range(repeats)]


#: The most seeds one evaluation may measure recall with.
MAX_REPEATS = 1000


def check_bins(low: float, repeats: int) -> None:
    """Refuse a ``low`` edge outside (0, 1) or ``repeats`` outside 1..:data:`MAX_REPEATS`.

    Raises:
        ConfigError: naming the parameter.
    """
    check_share("low", low)
    check_whole("repeats", repeats, 1, MAX_REPEATS)


@dataclasses.dataclass(frozen=True)
class Bin:
    """File pairs with exact Jaccard in ``[low, high)`` (the last bin includes 1.0)."""

    low: float
    high: float
    pairs: int
    found: int  # candidates of the LSH run with the configured seed: what a scan finds
    predicted: float | None  # mean P(J) over the bin's pairs
    repeat_found: tuple[int, ...] = ()  # the same count with seeds seed+1, seed+2, ...

    @property
    def recalls(self) -> npt.NDArray[np.float64]:
        """Recall with each seed, the configured one first (empty for an empty bin)."""
        if not self.pairs:
            return np.empty(0)
        return np.array((self.found, *self.repeat_found), dtype=np.float64) / self.pairs

    @property
    def recall(self) -> float | None:
        """Measured recall: the share of the bin's pairs made candidates, averaged over the
        seeds (``found / pairs`` with one seed); ``None`` for an empty bin."""
        return float(self.recalls.mean()) if self.pairs else None

    @property
    def recall_seed(self) -> float | None:
        """Recall of the configured seed alone: ``found / pairs``."""
        return self.found / self.pairs if self.pairs else None

    @property
    def recall_se(self) -> float | None:
        """Standard error of :attr:`recall` over the seeds (``None`` with one seed)."""
        r = self.recalls
        return float(r.std(ddof=1) / math.sqrt(len(r))) if len(r) > 1 else None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict with the documented keys, and the seeds' spread when there are several."""
        out: dict[str, Any] = {
            "low": round(self.low, 6),
            "high": round(self.high, 6),
            "pairs": self.pairs,
            "found": self.found,
            "recall": _round(self.recall),
            "predicted": _round(self.predicted),
        }
        if self.repeat_found and self.pairs:
            r = self.recalls
            out |= {
                "recall_seed": _round(self.recall_seed),
                "recall_se": _round(self.recall_se),
                "recall_min": _round(float(r.min())),
                "recall_max": _round(float(r.max())),
            }
        return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


@dataclasses.dataclass
class Evaluation:
    """Measured recall of LSH per similarity bin; ``candidates`` among ``all_pairs``."""

    params: dict[str, Any]
    candidates: int
    all_pairs: int
    bins: list[Bin]
    seconds: dict[str, float]

    def at_least(self, similarity: float) -> tuple[int, int]:
        """(pairs, found) over the bins from ``similarity`` up."""
        chosen = [b for b in self.bins if b.low >= similarity - 1e-9]
        return sum(b.pairs for b in chosen), sum(b.found for b in chosen)

    def to_dict(self) -> dict[str, Any]:
        """``{params, candidates, all_pairs, bins, seconds}``."""
        return {
            "params": self.params,
            "candidates": self.candidates,
            "all_pairs": self.all_pairs,
            "bins": [b.to_dict() for b in self.bins],
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


def evaluate(
    corpus: Corpus, config: Config, low: float = 0.3, width: float = 0.1, repeats: int = REPEATS
) -> Evaluation:
    """Run LSH (``config``'s bands and rows) and the exact all-pairs on the same shingles.

    File pairs are counted: a pair of identical-set groups stands for all its file pairs,
    and pairs inside a group (J = 1) are always found. ``all_pairs`` and ``candidates``
    count pairs of distinct shingle sets, which is where LSH works.

    Args:
        corpus: from :func:`minhashdup.collect`.
        config: bands, rows, bits, seed, min_shingles as for a scan.
        low: lower edge of the first bin; pairs below it are not counted.
        width: bin width.
        repeats: seeds to measure recall with: the configured seed (a real LSH run, whose
            candidates are ``found`` and ``candidates``), then ``seed + 1 ..`` modulo 2**64
            (:func:`repeat_seeds`), for which each true pair's bands are compared directly
            (the same test as sharing a bucket, without the oversize-bucket cap). A bin's
            ``recall`` is the mean over the seeds: pairs of one tree are not independent
            (families of similar files win or lose together), so one seed's recall can stray
            from P(s) by several points.

    Raises:
        ConfigError: ``low`` or ``repeats`` out of range (see :func:`check_bins`).
    """
    check_bins(low, repeats)
    prep = prepare(corpus, config)
    sigs = rep_signatures(prep, config)
    start = time.perf_counter()
    cand, _ = lsh_candidates(sigs, config)
    exact.verify(cand, prep.rep_sets, config.threshold)
    lsh_seconds = time.perf_counter() - start
    start = time.perf_counter()
    truth, _, jac = exact.all_pairs(prep.rep_sets, low)
    exact_seconds = time.perf_counter() - start
    n = len(prep.reps)
    sizes = np.array([len(m) for m in prep.groups.members], dtype=np.int64)
    weight = sizes[truth[:, 0]] * sizes[truth[:, 1]] if len(truth) else np.empty(0, dtype=np.int64)
    inside = int(np.sum(pairs_among(sizes)))  # identical files: J = 1, always found
    jac, weight = np.r_[jac, 1.0], np.r_[weight, inside]
    runs = [np.isin(pair_codes(truth, n), pair_codes(cand, n))]
    start = time.perf_counter()
    runs += _band_matches(prep, truth, config, repeat_seeds(config.seed, repeats)[1:])
    repeat_seconds = time.perf_counter() - start
    bins = _bins(jac, [np.r_[found, True] for found in runs], weight, low, width, config)
    params = {**config.params(), "low": low, "repeats": repeats}
    seconds = {"lsh": lsh_seconds, "exact": exact_seconds, "repeats": repeat_seconds}
    return Evaluation(params, len(cand), pairs_among(n), bins, seconds)


def _band_matches(
    prep: Prepared, truth: npt.NDArray[np.int64], config: Config, seeds: Sequence[int]
) -> list[npt.NDArray[np.bool_]]:
    """For each seed, which true pairs share a whole band: only their files are signed."""
    if not len(seeds) or not len(truth):
        return [np.zeros(len(truth), dtype=bool) for _ in seeds]
    files, index = np.unique(truth, return_inverse=True)
    a, b = index.reshape(-1, 2).T
    sets = [prep.rep_sets[i] for i in files]
    out = []
    for seed in seeds:
        sigs = signature.truncate(Family(seed, config.num_hashes).sign(sets), config.bits)
        same = (sigs[a] == sigs[b]).reshape(len(a), config.bands, config.rows)
        out.append(same.all(axis=2).any(axis=1))
    return out


def _bins(
    jac: npt.NDArray[np.float64],
    runs: list[npt.NDArray[np.bool_]],
    weight: npt.NDArray[np.int64],
    low: float,
    width: float,
    config: Config,
) -> list[Bin]:
    count = max(1, math.ceil((1.0 - low) / width - 1e-9))
    index = np.minimum(np.floor((jac - low) / width + 1e-9).astype(np.int64), count - 1)
    p = candidate_probability(jac, config.bands, config.rows, config.bits)
    out = []
    for k in range(count):
        mask = (index == k) & (weight > 0)
        pairs = int(weight[mask].sum())
        predicted = float(np.sum(p[mask] * weight[mask]) / pairs) if pairs else None
        high = min(1.0, low + (k + 1) * width)
        found = [int(weight[mask & f].sum()) for f in runs]
        out.append(Bin(low + k * width, high, pairs, found[0], predicted, tuple(found[1:])))
    return out
