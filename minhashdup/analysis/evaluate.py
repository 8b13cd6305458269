"""How many pairs does LSH lose on this tree? LSH candidates against the exact all-pairs,
per similarity bin, beside the S-curve's prediction."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from minhashdup.config import Config
from minhashdup.core import exact, signature
from minhashdup.core.bands import candidate_probability
from minhashdup.core.limits import REPEATS, pairs_among
from minhashdup.core.pairs import Corpus, Prepared
from minhashdup.core.runs import pair_codes
from minhashdup.core.signature import Family
from minhashdup.engine.stages import LocalReps, complete_families, edge_floor, lsh_candidates, prepare, rep_signatures
from minhashdup.errors import check_share, check_whole

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


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
    """File pairs with exact Jaccard in ``[low, high)`` (the last bin includes 1.0).

    ``found`` counts the pairs LSH made candidates; ``completed`` those made candidates by LSH
    or checked by family completion (``None`` when completion is off): what a scan finds.
    """

    low: float
    high: float
    pairs: int
    found: int  # candidates of the LSH run with the configured seed
    predicted: float | None  # mean P(J) over the bin's pairs
    repeat_found: tuple[int, ...] = ()  # the same count with seeds seed+1, seed+2, ...
    completed: int | None = None  # found by LSH or family completion, configured seed
    repeat_completed: tuple[int, ...] = ()

    @property
    def recalls(self) -> npt.NDArray[np.float64]:
        """Recall of LSH alone with each seed, the configured one first (empty for an empty bin)."""
        return self._share((self.found, *self.repeat_found))

    @property
    def recalls_completed(self) -> npt.NDArray[np.float64]:
        """Recall with family completion with each seed (empty for an empty bin or without it)."""
        return self._share(() if self.completed is None else (self.completed, *self.repeat_completed))

    def _share(self, counts: tuple[int, ...]) -> npt.NDArray[np.float64]:
        if not self.pairs:
            return np.empty(0)
        return np.array(counts, dtype=np.float64) / self.pairs

    @property
    def recall(self) -> float | None:
        """Measured recall of LSH: the share of the bin's pairs made candidates, averaged over
        the seeds (``found / pairs`` with one seed); ``None`` for an empty bin."""
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

    @property
    def recall_completed(self) -> float | None:
        """Recall with family completion, averaged over the seeds (``None`` without it)."""
        r = self.recalls_completed
        return float(r.mean()) if len(r) else None

    @property
    def recall_completed_seed(self) -> float | None:
        """Recall with family completion, the configured seed alone."""
        return None if self.completed is None or not self.pairs else self.completed / self.pairs

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
        if self.completed is not None:
            out |= {"completed": self.completed, "recall_completed": _round(self.recall_completed)}
        if self.repeat_found and self.pairs:
            r = self.recalls
            out |= {
                "recall_seed": _round(self.recall_seed),
                "recall_se": _round(self.recall_se),
                "recall_min": _round(float(r.min())),
                "recall_max": _round(float(r.max())),
            }
            if self.completed is not None:
                out["recall_completed_seed"] = _round(self.recall_completed_seed)
        return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


@dataclasses.dataclass
class Evaluation:
    """Measured recall of LSH per similarity bin; ``candidates`` among ``all_pairs``, and
    ``completion_checks`` that family completion added with the configured seed."""

    params: dict[str, Any]
    candidates: int
    all_pairs: int
    bins: list[Bin]
    seconds: dict[str, float]
    completion_checks: int = 0
    exact_from: float = 0.0  # the exact all-pairs ran from here: low, or lower for completion's edges

    @property
    def completes(self) -> bool:
        """Whether the bins count family completion (``completed``): it ran with the scan's
        settings (on, and not ``exact``)."""
        return bool(self.params.get("completion"))

    def at_least(self, similarity: float) -> tuple[int, int]:
        """(pairs, found) over the bins from ``similarity`` up."""
        chosen = self._from(similarity)
        return sum(b.pairs for b in chosen), sum(b.found for b in chosen)

    def completed_at_least(self, similarity: float) -> int | None:
        """Pairs found with family completion over the bins from ``similarity`` up (``None``
        without completion)."""
        return sum(b.completed or 0 for b in self._from(similarity)) if self.completes else None

    def _from(self, similarity: float) -> list[Bin]:
        return [b for b in self.bins if b.low >= similarity - 1e-9]

    def to_dict(self) -> dict[str, Any]:
        """``{params, candidates, completion_checks, all_pairs, bins, seconds, exact_from}``."""
        return {
            "params": self.params,
            "candidates": self.candidates,
            "completion_checks": self.completion_checks,
            "all_pairs": self.all_pairs,
            "bins": [b.to_dict() for b in self.bins],
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "exact_from": round(self.exact_from, 6),
        }


def evaluate(
    corpus: Corpus, config: Config, low: float = 0.3, width: float = 0.1, repeats: int = REPEATS
) -> Evaluation:
    """Run LSH (``config``'s bands and rows), family completion, and the exact all-pairs on
    the same shingles.

    File pairs are counted: a pair of identical-set groups stands for all its file pairs,
    and pairs inside a group (J = 1) are always found. ``all_pairs`` and ``candidates``
    count pairs of distinct shingle sets, which is where LSH works. With ``config.completion``
    each bin also counts the pairs found by LSH or checked by family completion (what a scan
    reports, for the bins at or above the threshold).

    Args:
        corpus: from :func:`minhashdup.collect`.
        config: bands, rows, bits, seed, min_shingles, completion as for a scan.
        low: lower edge of the first bin; pairs below it are not counted.
        width: bin width.
        repeats: seeds to measure recall with: the configured seed (a real LSH run, whose
            candidates are ``found`` and ``candidates``), then ``seed + 1 ..`` modulo 2**64
            (:func:`repeat_seeds`), for which each true pair's bands are compared directly
            (the same test as sharing a bucket, without the oversize-bucket cap), and
            completion starts from those pairs (candidates below ``low`` and below the
            completion graph's :func:`~minhashdup.core.completion.near` are not known to it).
            A bin's recall is the mean over the seeds: pairs of one tree are not independent
            (families of similar files win or lose together), so one seed's recall can stray
            from P(s) by several points.

    Raises:
        ConfigError: ``low`` or ``repeats`` out of range (see :func:`check_bins`).
    """
    check_bins(low, repeats)
    prep = prepare(corpus, config)
    sigs = rep_signatures(prep, config)
    sets, n = prep.rep_sets, len(prep.reps)
    start = time.perf_counter()
    cand, _ = lsh_candidates(sigs, config)
    edges, _, edge_jac = exact.verify(cand, sets, edge_floor(config))
    done = complete_families(LocalReps.of(sets, sigs), cand, edges, edge_jac, config) if config.completes else None
    lsh_seconds = time.perf_counter() - start
    start = time.perf_counter()
    bottom = min(low, edge_floor(config))
    truth, _, jac = exact.all_pairs(sets, bottom)
    exact_seconds = time.perf_counter() - start
    codes = pair_codes(truth, n)
    found = [np.isin(codes, pair_codes(cand, n))]
    completed = [] if done is None else [found[0] | np.isin(codes, pair_codes(done.checked, n))]
    start = time.perf_counter()
    for matched, more in _repeats(prep, truth, jac, config, repeat_seeds(config.seed, repeats)[1:]):
        found.append(matched)
        completed += [more] if done is not None else []
    repeat_seconds = time.perf_counter() - start
    counted = jac >= low
    sizes = np.array([len(m) for m in prep.groups.members], dtype=np.int64)
    weight = sizes[truth[counted, 0]] * sizes[truth[counted, 1]] if len(truth) else np.empty(0, dtype=np.int64)
    inside = int(np.sum(pairs_among(sizes)))  # identical files: J = 1, always found
    columns = [[np.r_[f[counted], True] for f in runs] for runs in (found, completed)]
    bins = _bins(np.r_[jac[counted], 1.0], columns, np.r_[weight, inside], (low, width), config)
    params = {**config.params(), "low": low, "repeats": repeats}
    seconds = {"lsh": lsh_seconds, "exact": exact_seconds, "repeats": repeat_seconds}
    return Evaluation(params, len(cand), pairs_among(n), bins, seconds, done.checks if done else 0, bottom)


def _repeats(
    prep: Prepared, truth: IntArray, jac: FloatArray, config: Config, seeds: Sequence[int]
) -> Iterator[tuple[BoolArray, BoolArray]]:
    """For each seed, which true pairs share a whole band, and which of them LSH or family
    completion (when on) would find. Only the files of true pairs are signed, and completion
    runs on them alone (in their own numbering)."""
    if not len(truth):
        yield from ((np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)) for _ in seeds)
        return
    files, index = np.unique(truth, return_inverse=True)
    local = index.reshape(-1, 2)
    a, b = local.T
    sets = [prep.rep_sets[i] for i in files]
    codes = pair_codes(local, len(files))
    near = jac >= edge_floor(config)
    for seed in seeds:
        sigs = signature.truncate(Family(seed, config.num_hashes).sign(sets), config.bits)
        same = (sigs[a] == sigs[b]).reshape(len(a), config.bands, config.rows)
        matched = same.all(axis=2).any(axis=1)
        if not config.completes:
            yield matched, matched
            continue
        edges = matched & near
        done = complete_families(LocalReps.of(sets, sigs), local[matched], local[edges], jac[edges], config)
        yield matched, matched | np.isin(codes, pair_codes(done.checked, len(files)))


def _bins(
    jac: FloatArray,
    columns: list[list[BoolArray]],
    weight: IntArray,
    edges: tuple[float, float],
    config: Config,
) -> list[Bin]:
    """The bins from ``low`` by ``width`` (``edges``): ``columns`` holds, for LSH alone and with
    completion (empty when off), which pairs each seed found."""
    low, width = edges
    count = max(1, math.ceil((1.0 - low) / width - 1e-9))
    index = np.minimum(np.floor((jac - low) / width + 1e-9).astype(np.int64), count - 1)
    p = candidate_probability(jac, config.bands, config.rows, config.bits)
    out = []
    for k in range(count):
        mask = (index == k) & (weight > 0)
        pairs = int(weight[mask].sum())
        predicted = float(np.sum(p[mask] * weight[mask]) / pairs) if pairs else None
        high = min(1.0, low + (k + 1) * width)
        found, completed = ([int(weight[mask & f].sum()) for f in runs] for runs in columns)
        first = completed[0] if completed else None
        out.append(
            Bin(low + k * width, high, pairs, found[0], predicted, tuple(found[1:]), first, tuple(completed[1:]))
        )
    return out
