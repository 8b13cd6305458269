"""One frozen, validated :class:`Config` holding every option that shapes a scan."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from minhashdup.errors import ConfigError
from minhashdup.source.safeio import TooLargeError, read_regular

MIB = 1024 * 1024

#: Options whose value changes the result; they are echoed as ``params`` in JSON.
RESULT_SHAPING = (
    "bands",
    "rows",
    "threshold",
    "shingle",
    "seed",
    "min_shingles",
    "max_size",
    "max_bucket",
    "exact",
    "bits",
    "include",
    "exclude",
    "gitignore",
)


@dataclasses.dataclass(frozen=True)
class Config:
    """Options of a scan, validated once on construction.

    Attributes:
        bands: number of LSH bands ``b``.
        rows: MinHash values per band ``r``; the signature holds ``b * r`` minima.
        threshold: minimum exact Jaccard similarity of a reported pair.
        shingle: tokens per shingle ``k``.
        seed: seed of the MinHash hash family.
        min_shingles: files with fewer distinct shingles are dropped before MinHash.
        max_size: files larger than this many bytes are skipped.
        max_bucket: LSH buckets with more files are skipped (and reported).
        max_verified: the most pair rows one scan may hold (about 250 bytes each); a scan
            that would list more stops with :class:`~minhashdup.errors.ScanLimitError`.
        exact: find every pair with the prefix filter instead of LSH (lossless).
        bits: low bits kept of each MinHash value (b-bit MinHash), 1 to 64.
        include: gitignore-style globs; when given, only matching files are scanned.
        exclude: gitignore-style globs of files and folders to leave out.
        gitignore: honour ``.gitignore`` files and ``.git/info/exclude``.
        jobs: worker processes for lexing; 0 means one per core.
        cache: keep per-file shingles and signatures in the cache (see :mod:`minhashdup.engine.cache`).
        cache_dir: where; ``None`` means ``$XDG_CACHE_HOME/minhashdup``.
        lexer_engine: ``fast`` (pygments' rules, one regex call per token) or ``pygments``;
            both give the same tokens.
        lex_timeout: seconds one file may take to lex; a file that takes longer (a lexer
            regex backtracking on odd input) is skipped as a ``lex-error``. 0: no limit.
        own_files: files this run reads or writes as reports (the baseline, ``--output``):
            left out of the scan, as ``minhashdup-file`` skips.

    Raises:
        ConfigError: a value is out of range; the message names the fix.

    Example:
        >>> Config(bands=20, rows=5).num_hashes
        100
    """

    bands: int = 12
    rows: int = 4
    threshold: float = 0.5
    shingle: int = 5
    seed: int = 1
    min_shingles: int = 20
    max_size: int = MIB
    max_bucket: int = 1000
    max_verified: int = 2_000_000
    exact: bool = False
    bits: int = 64
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    gitignore: bool = True
    jobs: int = 0
    cache: bool = True
    cache_dir: str | None = None
    lexer_engine: str = "fast"
    lex_timeout: float = 60.0
    own_files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_int("bands", self.bands, 1, 4096)
        _check_int("rows", self.rows, 1, 64)
        if self.bands * self.rows > 8192:
            raise ConfigError(
                f"--bands x --rows must be at most 8192 hashes (got {self.bands} x {self.rows}"
                f" = {self.bands * self.rows}); lower one of them"
            )
        _check_threshold(self.threshold)
        _check_int("shingle", self.shingle, 1, 64)
        _check_int("seed", self.seed, 0, 2**64 - 1)
        _check_int("min-shingles", self.min_shingles, 1, 10**9)
        _check_int("max-size", self.max_size, 1, 2**62)
        _check_int("max-bucket", self.max_bucket, 2, 10**7)
        _check_int("max-verified", self.max_verified, 1, 10**9)
        _check_int("jobs", self.jobs, 0, 1024)
        _check_int("bits", self.bits, 1, 64)
        if isinstance(self.lex_timeout, bool) or not isinstance(self.lex_timeout, (int, float)):
            raise ConfigError(f"--lex-timeout must be a number of seconds (got {self.lex_timeout!r})")
        if not 0 <= self.lex_timeout <= 86400:
            raise ConfigError(
                f"--lex-timeout must be between 0 (no limit) and 86400 seconds (got {self.lex_timeout:g})"
            )
        if self.lexer_engine not in ("fast", "pygments"):
            raise ConfigError(f"--lexer-engine must be fast or pygments (got {self.lexer_engine!r})")
        for name in ("include", "exclude"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(g, str) and g for g in value):
                raise ConfigError(f"--{name} takes non-empty glob strings (got {value!r})")
            object.__setattr__(self, name, tuple(value))

    @property
    def num_hashes(self) -> int:
        """Signature length ``K = bands * rows``."""
        return self.bands * self.rows

    @property
    def workers(self) -> int:
        """Worker processes actually used (``jobs``, or one per available core)."""
        return self.jobs or usable_cores()

    def params(self) -> dict[str, Any]:
        """The options that shape the result, for reports (``jobs`` does not)."""
        out: dict[str, Any] = {}
        for name in RESULT_SHAPING:
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out


def _check_int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"--{name} must be a whole number (got {value!r})")
    if not low <= value <= high:
        raise ConfigError(f"--{name} must be between {low} and {high} (got {value})")


def _check_threshold(value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"--threshold must be a number between 0 and 1 (got {value!r})")
    if value != value or not 0.0 < value <= 1.0:  # value != value: NaN
        hint = ""
        if isinstance(value, (int, float)) and 1 < value <= 100:
            hint = f"; did you mean {value / 100:g}?"
        raise ConfigError(
            f"--threshold must be above 0 and at most 1 (got {value:g}{hint})"
            if value == value
            else "--threshold must be a number between 0 and 1 (got nan)"
        )


CONFIG_TABLE = ("tool", "minhashdup")


def find_config_file(start: str | os.PathLike[str] = ".") -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.minhashdup]`` table, from ``start`` upwards.

    A ``pyproject.toml`` without the table is passed over (a package inside a monorepo
    whose settings live at the top).
    """
    folder = Path(start).resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file() and _table(_read_toml(path), path) is not None:
            return path
    return None


def read_config_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The options set in a TOML file: its ``[tool.minhashdup]`` table, or the whole file
    when it has none (a file of options only, for ``--config``).

    Raises:
        ConfigError: the file cannot be read or is not valid TOML.
    """
    doc = _read_toml(Path(path))
    table = _table(doc, Path(path))
    return doc if table is None else table


#: The most bytes a config file may hold (a repository's ``pyproject.toml`` is read unasked).
CONFIG_FILE_LIMIT = 4 * MIB


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(read_regular(str(path), CONFIG_FILE_LIMIT).decode("utf-8"))
    except TooLargeError:
        raise ConfigError(f"{path}: more than {CONFIG_FILE_LIMIT // MIB} MiB; is it a config file?") from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot be read ({err.strerror or err})") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML (not UTF-8 at byte {err.start})") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML ({err})") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML (arrays or tables nested too deep); flatten it") from None


def _table(doc: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """The ``[tool.minhashdup]`` table of a parsed file, ``None`` if it has none."""
    node: Any = doc
    for key in CONFIG_TABLE:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    if not isinstance(node, dict):
        raise ConfigError(f"{path}: tool.minhashdup must be a table of options")
    return node


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)
