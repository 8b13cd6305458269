"""Choosing bands and rows for a threshold: the settings worth a look and the recommendation,
as one typed result (what ``minhashdup tune`` prints)."""

from __future__ import annotations

import dataclasses
from typing import Any

from minhashdup.core.bands import TUNE_SIMILARITIES, Choice, most_selective, recommend
from minhashdup.core.bands import tune as settings_for


@dataclasses.dataclass(frozen=True)
class Tuning:
    """What :func:`tuning` found for one threshold.

    Attributes:
        threshold, max_hashes, min_recall, bits: the question asked.
        choices: the settings worth considering, sorted by hashes (:func:`minhashdup.core.bands.tune`).
        recommended: recall first: the fewest hashes reaching ``min_recall`` at the threshold.
        most_selective: among those, the fewest candidates per true pair.
    """

    threshold: float
    max_hashes: int
    min_recall: float
    bits: int
    choices: list[Choice]
    recommended: Choice | None
    most_selective: Choice | None

    @property
    def settings(self) -> dict[str, Any]:
        """The question asked, as the JSON document's first keys."""
        return {
            "threshold": self.threshold,
            "max_hashes": self.max_hashes,
            "min_recall": self.min_recall,
            "bits": self.bits,
        }

    def to_dict(self) -> dict[str, Any]:
        """``{threshold, max_hashes, min_recall, bits, choices, recommended, most_selective,
        completion}``."""
        return {
            **self.settings,
            "choices": [choice_dict(c) for c in self.choices],
            "recommended": choice_dict(self.recommended) if self.recommended else None,
            "most_selective": choice_dict(self.most_selective) if self.most_selective else None,
            "completion": {"accounted_for": False, "note": COMPLETION_NOTE},
        }


#: What ``tune`` says of family completion: it cannot count on it, for the gain depends on the tree.
COMPLETION_NOTE = (
    "P(s) is LSH alone: the recommendation does not count on family completion, which a scan runs"
    " by default and which finds more pairs where similar files come in families (by how much depends"
    " on the tree; minhashdup evaluate measures it per bin). A setting chosen here is a floor."
)


def choice_dict(c: Choice) -> dict[str, Any]:
    """A setting as plain data, for JSON."""
    return {
        "bands": c.bands,
        "rows": c.rows,
        "hashes": c.hashes,
        "knee": round(c.knee, 4),
        "p_threshold": round(c.p(c.threshold), 4),
        "lost_at_threshold": round(c.lost_at_threshold, 4),
        "candidates_per_true_pair": round(c.candidates_per_true_pair, 3),
        "p": {f"{s:.1f}": round(c.p(s), 4) for s in TUNE_SIMILARITIES},
    }


def tuning(threshold: float = 0.5, max_hashes: int = 128, min_recall: float = 0.99, bits: int = 64) -> Tuning:
    """The (bands, rows) settings worth considering for ``threshold``, and which to take.

    Args:
        threshold: the similarity pairs must reach, above 0 and at most 1.
        max_hashes: signature budget, 2 to :data:`~minhashdup.core.limits.MAX_HASHES`: settings with
            more ``bands * rows`` are not listed.
        min_recall: the chance, above 0 and below 1, that a pair at the threshold becomes a
            candidate, which the recommendation must reach.
        bits: low bits kept of each MinHash value (b-bit MinHash), 1 to 64.

    Raises:
        ConfigError: a value out of range; the message names the parameter.

    Example:
        >>> best = tuning(0.8).recommended
        >>> best.bands, best.rows, round(best.p(0.8), 3)
        (5, 2, 0.994)
    """
    choices = settings_for(threshold, max_hashes, min_recall, bits)
    best, selective = recommend(choices, min_recall), most_selective(choices, min_recall)
    return Tuning(threshold, max_hashes, min_recall, bits, choices, best, selective)
