"""minhashdup: near-duplicate files in large source trees, by MinHash and LSH, verified exactly.

Example:
    >>> import minhashdup
    >>> result = minhashdup.scan(["examples"], minhashdup.Config(threshold=0.7))  # doctest: +SKIP
    >>> [(p.a, p.b, p.jaccard) for p in result.pairs][:1]  # doctest: +SKIP
"""

from minhashdup._version import __version__
from minhashdup.config import Config
from minhashdup.errors import ConfigError, ExitCode, InputPathError, MinhashdupError
from minhashdup.pipeline import collect, find_pairs, scan
from minhashdup.result import Cluster, Pair, Result, Stats
from minhashdup.sketch import LSHIndex, MinHash

__all__ = [
    "Cluster",
    "Config",
    "ConfigError",
    "ExitCode",
    "InputPathError",
    "LSHIndex",
    "MinHash",
    "MinhashdupError",
    "Pair",
    "Result",
    "Stats",
    "__version__",
    "collect",
    "find_pairs",
    "scan",
]
