"""The core's limits, defaults and pair counts, without numpy: what the options are checked
against and what a listing counts. The command's start-up and a cached scan's replay (no array
in sight) import this, not the algorithms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_Count = TypeVar("_Count", int, "npt.NDArray[np.int64]")

#: The most hashes a scan's signature may hold (``bands * rows``): what ``tune`` and
#: ``LSHIndex(threshold=...)`` may choose from.
MAX_HASHES = 8192

#: Default of ``cap``: completion checks per file, and partners a file passes on.
DEFAULT_CAP = 100

#: Seeds ``evaluate`` runs by default: the configured one and the next 29. One seed's recall
#: in a bin strays from P(s) by several points on a real tree (families of similar files win
#: or lose together); the mean over 30 seeds has a sixth of that spread.
REPEATS = 30

#: A group of identical files, or two similar groups, standing for more file pairs than this
#: lists only some of them (see :func:`minhashdup.core.pairs.expand`), so that the listing
#: grows with the number of files and not with its square. Every group of up to 45 files is
#: listed whole.
MAX_LISTED_PAIRS = 1_000


def pairs_among(n: _Count) -> _Count:
    """The number of unordered pairs of ``n`` things, n(n-1)/2 (``n`` an int or an array).

    Example:
        >>> import numpy as np
        >>> pairs_among(4), pairs_among(np.array([0, 1, 2])).tolist()
        (6, [0, 0, 1])
    """
    return n * (n - 1) // 2


def listed_within(n: int) -> int:
    """Rows listed for an identical group of ``n`` files: all its pairs while they are at most
    :data:`MAX_LISTED_PAIRS`, else its first file with each other one (``n - 1``)."""
    total = pairs_among(n)
    return total if total <= MAX_LISTED_PAIRS else n - 1


def listed_across(na: int, nb: int) -> int:
    """Rows listed between two similar groups of ``na`` and ``nb`` files: every pair while they
    are at most :data:`MAX_LISTED_PAIRS`, else the pair of their first files."""
    return na * nb if na * nb <= MAX_LISTED_PAIRS else 1
