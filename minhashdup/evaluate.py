"""How many pairs does LSH lose on this tree? LSH candidates against the exact all-pairs,
per similarity bin, beside the S-curve's prediction."""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from minhashdup import exact
from minhashdup.bands import candidate_probability
from minhashdup.config import Config
from minhashdup.pipeline import Corpus, lsh_candidates, prepare, rep_signatures
from minhashdup.runs import pair_codes


@dataclasses.dataclass(frozen=True)
class Bin:
    """File pairs with exact Jaccard in ``[low, high)`` (the last bin includes 1.0)."""

    low: float
    high: float
    pairs: int
    found: int
    predicted: float | None  # mean P(J) over the bin's pairs
    other_seeds: tuple[float, ...] = ()  # recall with seeds seed+1, seed+2, ... (``repeats``)

    @property
    def recall(self) -> float | None:
        """Share of the bin's pairs that LSH made candidates (``None`` for an empty bin)."""
        return self.found / self.pairs if self.pairs else None

    @property
    def recall_mean(self) -> float | None:
        """Recall averaged over the configured seed and the other seeds."""
        if self.recall is None:
            return None
        return (self.recall + sum(self.other_seeds)) / (1 + len(self.other_seeds))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict with the documented keys (and the repeats' spread when there are any)."""
        out: dict[str, Any] = {
            "low": round(self.low, 6),
            "high": round(self.high, 6),
            "pairs": self.pairs,
            "found": self.found,
            "recall": _round(self.recall),
            "predicted": _round(self.predicted),
        }
        if self.other_seeds and self.recall is not None:
            every = (self.recall, *self.other_seeds)
            out |= {
                "recall_mean": _round(self.recall_mean),
                "recall_min": _round(min(every)),
                "recall_max": _round(max(every)),
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


def evaluate(corpus: Corpus, config: Config, low: float = 0.3, width: float = 0.1, repeats: int = 1) -> Evaluation:
    """Run LSH (``config``'s bands and rows) and the exact all-pairs on the same shingles.

    File pairs are counted: a pair of identical-set groups stands for all its file pairs,
    and pairs inside a group (J = 1) are always found. ``all_pairs`` and ``candidates``
    count pairs of distinct shingle sets, which is where LSH works.

    Args:
        corpus: from :func:`minhashdup.collect`.
        config: bands, rows, bits, seed, min_shingles as for a scan.
        low: lower edge of the first bin; pairs below it are not counted.
        width: bin width.
        repeats: also run LSH with seeds ``seed + 1 .. seed + repeats - 1`` and report the
            spread of recall: pairs of one tree are not independent (families of similar
            files win or lose together), so one seed's recall can stray from P(s) by
            several points while the mean over seeds follows it.
    """
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
    codes = pair_codes(truth, n)
    sizes = np.array([len(m) for m in prep.groups.members], dtype=np.int64)
    weight = sizes[truth[:, 0]] * sizes[truth[:, 1]] if len(truth) else np.empty(0, dtype=np.int64)
    inside = int(np.sum(sizes * (sizes - 1) // 2))  # identical files: J = 1, always found
    jac, weight = np.r_[jac, 1.0], np.r_[weight, inside]
    found = np.r_[np.isin(codes, pair_codes(cand, n)), True]
    bins = _bins(jac, found, weight, low, width, config)
    for r in range(1, repeats):
        other = dataclasses.replace(config, seed=config.seed + r)
        more, _ = lsh_candidates(rep_signatures(prep, other), other)
        again = _bins(jac, np.r_[np.isin(codes, pair_codes(more, n)), True], weight, low, width, config)
        bins = [
            dataclasses.replace(b, other_seeds=(*b.other_seeds, a.recall or 0.0))
            for b, a in zip(bins, again, strict=True)
        ]
    params = {**config.params(), "low": low, "repeats": repeats}
    seconds = {"lsh": lsh_seconds, "exact": exact_seconds}
    return Evaluation(params, len(cand), n * (n - 1) // 2, bins, seconds)


def _bins(
    jac: npt.NDArray[np.float64],
    found: npt.NDArray[np.bool_],
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
        out.append(Bin(low + k * width, high, pairs, int(weight[mask & found].sum()), predicted))
    return out
