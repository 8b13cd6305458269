"""One frozen, validated :class:`Config` holding every option that shapes a scan."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from minhashdup.core.limits import DEFAULT_CAP, MAX_HASHES
from minhashdup.errors import ConfigError, check_path, check_switch, check_threshold, check_whole
from minhashdup.source.normalise import Normalisation
from minhashdup.source.rules.globs import posix_class
from minhashdup.source.safeio import MIB, TooLargeError, read_regular

if TYPE_CHECKING:
    from pathlib import Path

#: Options that change the result, echoed in ``params`` only when set (their default leaves the
#: output as it was before they existed).
OPTIONAL_SHAPING = ("ignore_identifiers", "ignore_literals", "max_df")
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
    "completion",
    "completion_cap",
    "bits",
    "include",
    "exclude",
    "gitignore",
    "include_generated",
    "exclude_vendored",
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
        completion: after the exact check, check the pairs two hops apart in the graph of
            similar pairs, until none is new (:mod:`minhashdup.core.completion`): the pairs
            LSH missed inside families it half-found. Off with ``exact`` (nothing to add).
        completion_cap: completion checks per file, and similar partners a file passes on:
            bounds completion's work on a family of thousands of near copies.
        bits: low bits kept of each MinHash value (b-bit MinHash), 1 to 64.
        include: gitignore-style globs; when given, only matching files are scanned.
        exclude: gitignore-style globs of files and folders to leave out.
        gitignore: honour ``.gitignore`` files and ``.git/info/exclude``.
        ignore_identifiers: names become one placeholder before shingling, told apart only by
            where they repeat inside a shingle (:mod:`minhashdup.source.normalise`): renamed
            copies match.
        ignore_literals: string and number literals become another placeholder.
        max_df: shingles found in more than this fraction of the compared files are left out
            of every set (boilerplate); ``None``: none is.
        include_generated: scan generated files (:mod:`minhashdup.source.kinds`); by default
            they are skipped as ``generated``, except files named in the paths.
        exclude_vendored: leave vendored files out (as ``vendored`` filters); by default they
            are compared and each pair says which side is vendored.
        jobs: worker processes for lexing; 0 means one per core. The default, 1, lexes in
            this process and starts none (the command line asks for all cores).
        cache: keep per-file shingles and signatures in the cache (see :mod:`minhashdup.engine.cache`);
            by default only when ``cache_dir`` names a folder (the command line turns it on).
        cache_dir: where; ``None`` with ``cache=True`` means ``$XDG_CACHE_HOME/minhashdup``.
        lexer_engine: ``fast`` (pygments' rules, one regex call per token) or ``pygments``;
            both give the same tokens.
        lex_timeout: seconds one file may take to lex; a file that takes longer (a lexer
            regex backtracking on odd input) is skipped as a ``lex-error``. 0: no limit.
        own_files: files this run reads or writes as reports (the baseline, ``--output``):
            left out of the scan, as ``minhashdup-file`` skips.
        engine: ``local`` (this machine's processes) or ``dask`` (a Dask cluster:
            :mod:`minhashdup.engine.distributed`; the same result).
        scheduler: with ``engine="dask"``, the scheduler's address (``tcp://host:8786``);
            ``None``: a local cluster of ``jobs`` worker processes.

    Raises:
        ConfigError: a value is out of range; the message names the parameter and the fix.

    Example:
        >>> Config(bands=20, rows=5).num_hashes
        100
        >>> Config(threshold=80)
        Traceback (most recent call last):
        ...
        minhashdup.errors.ConfigError: threshold must be above 0 and at most 1 (got 80; did you mean 0.8?)
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
    completion: bool = True
    completion_cap: int = DEFAULT_CAP
    bits: int = 64
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    gitignore: bool = True
    include_generated: bool = False
    exclude_vendored: bool = False
    ignore_identifiers: bool = False
    ignore_literals: bool = False
    max_df: float | None = None
    jobs: int = 1
    cache: bool | None = None
    cache_dir: str | None = None
    lexer_engine: str = "fast"
    lex_timeout: float = 60.0
    own_files: tuple[str, ...] = ()
    engine: str = "local"
    scheduler: str | None = None

    def __post_init__(self) -> None:
        check_whole("bands", self.bands, 1, 4096)
        check_whole("rows", self.rows, 1, 64)
        if self.bands * self.rows > MAX_HASHES:
            raise ConfigError(
                "{0} x {1} must be at most {most} hashes (got {b} x {r} = {k}); lower one of them",
                "bands",
                "rows",
                most=MAX_HASHES,
                b=self.bands,
                r=self.rows,
                k=self.bands * self.rows,
            )
        check_threshold(self.threshold)
        check_whole("shingle", self.shingle, 1, 64)
        check_whole("seed", self.seed, 0, 2**64 - 1)
        check_whole("min_shingles", self.min_shingles, 1, 10**9)
        check_whole("max_size", self.max_size, 1, 2**62)
        check_whole("max_bucket", self.max_bucket, 2, 10**7)
        check_whole("max_verified", self.max_verified, 1, 10**9)
        check_whole("jobs", self.jobs, 0, 1024)
        check_whole("bits", self.bits, 1, 64)
        check_whole("completion_cap", self.completion_cap, 2, 10**6)  # a middle file passes on two partners at least
        if self.max_df is not None:
            check_threshold(self.max_df, "max_df")
        self._check_run()
        for name in ("include", "exclude"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(g, str) and g for g in value):
                raise ConfigError("{0} takes non-empty glob strings (got {value!r})", name, value=value)
            object.__setattr__(self, name, tuple(value))
            for glob in value:
                if posix_class(glob):  # pathspec reads [[:alpha:]] as another set
                    raise ConfigError(
                        "{0} {glob!r}: POSIX classes like [:alpha:] are not supported; list the characters ([a-zA-Z])",
                        name,
                        glob=glob,
                    )
            check_globs(value, name)  # a bad glob is refused now, not when the walk starts

    def _check_run(self) -> None:
        if isinstance(self.lex_timeout, bool) or not isinstance(self.lex_timeout, (int, float)):
            raise ConfigError("{0} must be a number of seconds (got {value!r})", "lex_timeout", value=self.lex_timeout)
        if not 0 <= self.lex_timeout <= 86400:
            raise ConfigError(
                "{0} must be between 0 (no limit) and 86400 seconds (got {value:g})",
                "lex_timeout",
                value=self.lex_timeout,
            )
        if self.engine not in ("local", "dask"):
            raise ConfigError("{0} must be local or dask (got {value!r})", "engine", value=self.engine)
        if self.lexer_engine not in ("fast", "pygments"):
            raise ConfigError("{0} must be fast or pygments (got {value!r})", "lexer_engine", value=self.lexer_engine)
        if self.cache not in (None, True, False):
            raise ConfigError("{0} must be True or False (got {value!r})", "cache", value=self.cache)
        for name in ("exact", "completion", "gitignore", "include_generated", "exclude_vendored"):
            check_switch(name, getattr(self, name))
        for name in ("ignore_identifiers", "ignore_literals"):
            check_switch(name, getattr(self, name))
        check_path("cache_dir", self.cache_dir)
        if isinstance(self.own_files, (str, bytes, os.PathLike)):  # it would be read letter by letter
            raise ConfigError(
                "{0} takes a list of paths, not one string (got {value!r})", "own_files", value=self.own_files
            )

    @property
    def uses_cache(self) -> bool:
        """Whether the scan keeps a cache: ``cache`` when given, else whether ``cache_dir``
        names a folder (so that replacing ``cache_dir`` alone asks for the cache)."""
        return self.cache if self.cache is not None else self.cache_dir is not None

    @property
    def completes(self) -> bool:
        """Whether the scan runs family completion: asked for, and LSH (``--exact`` finds
        every pair already)."""
        return self.completion and not self.exact

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
        out["completion"] = self.completes  # what ran: --exact leaves nothing to complete
        out["completion_cap"] = self.completion_cap if self.completes else None  # shapes nothing then
        for name in OPTIONAL_SHAPING:  # shown when set, so that a default scan's output stays as it was
            if getattr(self, name) not in (False, None):
                out[name] = getattr(self, name)
        return out

    @property
    def normalisation(self) -> Normalisation:
        """Which tokens become placeholders before shingling."""
        return Normalisation(self.ignore_identifiers, self.ignore_literals)


CONFIG_TABLE = ("tool", "minhashdup")


def check_globs(globs: Sequence[str], name: str) -> None:
    """Refuse an invalid glob as :func:`compile_globs` does, without compiling the plain ones
    (letters, digits, ``_.-/*``, as ``*.go``, ``vendor/`` or ``**/gen``: valid in any order).

    Raises:
        ConfigError: a glob is not a valid gitignore pattern (naming the parameter ``name``).
    """
    if sum(map(len, globs)) > PLAIN_GLOB_CHARS or not all(_PLAIN.issuperset(glob) for glob in globs):
        from minhashdup.source.rules.ignore import compile_globs  # pathspec's rules: for a glob to compile

        compile_globs(globs, name)


#: The most characters of globs :func:`check_globs` may pass without compiling them: many
#: together can exceed what RE2 builds into one set (61 of 256 characters did).
PLAIN_GLOB_CHARS = 1024
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/*")


def find_config_file(start: str | os.PathLike[str] = ".") -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.minhashdup]`` table, from ``start`` upwards.

    A ``pyproject.toml`` without the table is passed over (a package inside a monorepo
    whose settings live at the top).
    """
    folder = os.path.realpath(start)  # searched with os.path: most runs find none, nor need pathlib
    while True:
        path = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(path) and _table(_read_toml(path), path) is not None:
            from pathlib import Path

            return Path(path)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def read_config_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The options set in a TOML file: its ``[tool.minhashdup]`` table, or the whole file
    when it has none (a file of options only, for ``--config``).

    Raises:
        ConfigError: the file cannot be read or is not valid TOML.
    """
    doc = _read_toml(path)
    table = _table(doc, path)
    return doc if table is None else table


#: The most bytes a config file may hold (a repository's ``pyproject.toml`` is read unasked).
CONFIG_FILE_LIMIT = 4 * MIB


def _read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    if sys.version_info >= (3, 11):  # imported here: most runs read no config file
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
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


def _table(doc: dict[str, Any], path: str | os.PathLike[str]) -> dict[str, Any] | None:
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
