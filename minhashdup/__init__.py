"""minhashdup: near-duplicate files in large source trees, by MinHash and LSH, verified exactly.

Example:
    >>> import minhashdup
    >>> result = minhashdup.scan(["examples"], minhashdup.Config(threshold=0.7))
    >>> for p in result.pairs:
    ...     print(f"{p.jaccard:.3f} {p.a} {p.b}")
    1.000 examples/python/ringbuffer.py examples/python/vendor/ringbuffer.py
    0.873 examples/js/debounce.js examples/js/legacy/debounce.js
    0.859 examples/go/reader.go examples/go/textview.go
    0.833 examples/python/lru.py examples/python/lru_patched.py
"""

from minhashdup._version import __version__
from minhashdup.config import Config
from minhashdup.core.sketch import LSHIndex, MinHash
from minhashdup.engine.pipeline import collect, find_pairs, scan
from minhashdup.errors import ConfigError, ExitCode, InputPathError, MinhashdupError
from minhashdup.result import Cluster, Pair, Result, Stats

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
