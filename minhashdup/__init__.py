"""minhashdup: near-duplicate files in large source trees, by MinHash and LSH, verified exactly.

Everything the ``minhashdup`` command does is one call here, returning a typed result whose
``to_dict()`` is the command's ``--format json`` document: :func:`scan` (with the CI review:
a baseline, the changed files, the gate), :func:`compare`, :func:`evaluate` and :func:`tune`.
Options are keywords (or a :class:`Config`); a bad value raises :class:`ConfigError` naming the
parameter. Unlike the command, a call keeps no cache and starts no process unless asked (``cache_dir``, ``jobs``).

Example:
    >>> import minhashdup
    >>> result = minhashdup.scan("examples", threshold=0.7)
    >>> for p in result.pairs:
    ...     print(f"{p.jaccard:.3f} {p.a} {p.b}")
    1.000 examples/python/ringbuffer.py examples/python/vendor/ringbuffer.py
    0.873 examples/js/debounce.js examples/js/legacy/debounce.js
    0.859 examples/go/reader.go examples/go/textview.go
    0.833 examples/python/lru.py examples/python/lru_patched.py
"""

# No "from __future__ import ...": it imports the module __future__, which python -m would
# find in the current folder before _pathguard drops it (annotations are quoted instead).
from minhashdup._pathguard import collector_paused as _paused  # first: python -m's folder leaves sys.path

with _paused():  # objects made once, for the process's life
    import dataclasses
    import warnings
    from collections.abc import Callable
    from typing import TYPE_CHECKING, Any, TextIO

    from minhashdup._version import __version__
    from minhashdup.ci import review as _review
    from minhashdup.ci.review import Review
    from minhashdup.config import Config, usable_cores
    from minhashdup.core.limits import REPEATS
    from minhashdup.engine import pipeline as _pipeline
    from minhashdup.engine.pipeline import collect
    from minhashdup.errors import ConfigError, ExitCode, InputPathError, MinhashdupError, check_whole
    from minhashdup.report import TABLE_LIMIT
    from minhashdup.result import Cluster, Pair, Result, Stats
    from minhashdup.source.paths import Dataset, PathArg, PathsArg, path_list

if TYPE_CHECKING:
    from minhashdup.analysis.compare import Comparison
    from minhashdup.analysis.evaluate import Evaluation
    from minhashdup.analysis.tuning import Tuning
    from minhashdup.core.sketch import LSHIndex, MinHash
    from minhashdup.engine.pipeline import ProgressFactory
    from minhashdup.engine.stages import find_pairs

#: Imported when first used: a cached scan replays without numpy and the analyses.
_LAZY = {
    "Evaluation": "minhashdup.analysis.evaluate",
    "Tuning": "minhashdup.analysis.tuning",
    "LSHIndex": "minhashdup.core.sketch",
    "MinHash": "minhashdup.core.sketch",
    "Comparison": "minhashdup.analysis.compare",
    "find_pairs": "minhashdup.engine.stages",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'minhashdup' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Cluster",
    "Comparison",
    "Config",
    "ConfigError",
    "Dataset",
    "Evaluation",
    "ExitCode",
    "InputPathError",
    "LSHIndex",
    "MinHash",
    "MinhashdupError",
    "Pair",
    "Result",
    "Review",
    "Stats",
    "Tuning",
    "__version__",
    "collect",
    "compare",
    "evaluate",
    "find_pairs",
    "gate",
    "review",
    "scan",
    "tune",
    "write_report",
]

_CONFIG_FIELDS = frozenset(f.name for f in dataclasses.fields(Config))
_REVIEW_FIELDS = frozenset(f.name for f in dataclasses.fields(Review))


def scan(
    paths: "PathsArg | Dataset",
    config: Config | None = None,
    *,
    review: Review | None = None,
    progress: "ProgressFactory | None" = None,
    **options: Any,
) -> Result:
    """Find the near-duplicate files under ``paths``: what ``minhashdup scan`` does.

    Args:
        paths: a folder or file, or a list of them (a string is one path); or a Parquet
            :class:`Dataset` of files (a path and a content column): its rows are scanned as
            files named by their paths, on this machine, part by part (pip install
            'minhashdup[dask]' brings pyarrow). A dataset's review may use a baseline, not
            changed files.
        config: options as a :class:`Config`; keyword ``options`` of :class:`Config` override it.
        review: the CI review as a :class:`Review`; keyword ``options`` of :class:`Review`
            (``baseline``, ``write_baseline``, ``tolerance``, ``new_only``, ``changed_since``,
            ``staged``, ``changed_files``, ``max_pairs``) override it. See :func:`gate`.
        progress: optional factory of progress bars, called with a stage name and a total.
        options: e.g. ``threshold=0.8, bands=12, rows=4``; ``cache_dir`` keeps a cache there,
            ``jobs`` lexes in that many processes (0: one per core).

    Returns:
        The :class:`Result`, with exact Jaccard for every pair; ``to_dict()`` is the JSON
        of ``minhashdup scan --format json`` (``params.config_file`` is ``None``: no config
        file is read).

    Raises:
        ConfigError: an option is out of range; the message names it.
        TypeError: an unknown option, or ``paths`` holds something other than ``str`` or
            ``os.PathLike``.
        InputPathError: a path does not exist, or a dataset cannot be read.
        BaselineError, ChangesError: the baseline cannot be read, git cannot list the changes.

    Example:
        >>> result = scan("examples", threshold=0.6, max_pairs=0)
        >>> len(result.pairs), min(p.jaccard for p in result.pairs) >= 0.6, gate(result)
        (4, True, True)
    """
    config, review = _options("scan", options, config, review)
    if isinstance(paths, Dataset) and review.focused:
        raise ConfigError(
            "{0}, {1} and {2} name changed files of a tree; not with a Parquet dataset",
            "changed_since",
            "staged",
            "changed_files",
        )
    roots = [] if isinstance(paths, Dataset) else path_list(paths)
    loaded = _review.load(review, roots)  # a bad baseline or REF fails before lexing
    source = paths if isinstance(paths, Dataset) else roots
    result = _review.apply(_pipeline.scan(source, config, progress), review, roots, loaded)
    result.params["config_file"] = None
    return result


def review(result: Result, paths: "PathsArg", review: Review | None = None, **options: Any) -> Result:
    """The CI review of a scan's ``result`` (of ``paths``): write a baseline, mark the pairs
    a baseline knows, keep the pairs touching changed files; then :func:`gate` decides.

    Args:
        result: from :func:`scan`.
        paths: the paths scanned (the changed files are listed under them).
        review: a :class:`Review`; keyword ``options`` of :class:`Review` override it.

    Returns:
        A new :class:`Result` (``stats.new_pairs`` counts what the gate counts).

    Raises:
        ConfigError: an option is out of range (TypeError: unknown).
        BaselineError, ChangesError: as for :func:`scan`.
    """
    _, chosen = _options("review", options, None, review, config_allowed=False)
    return _review.apply(result, chosen, path_list(paths))


def gate(result: Result) -> bool:
    """Whether the gate fails: more new pairs than ``max_pairs`` allows (``scan`` exits 1), or it
    cannot vouch (exit 4; :func:`minhashdup.ci.unseen.fails`).

    Example:
        >>> gate(scan("examples", max_pairs=10))
        False
    """
    from minhashdup.ci.unseen import fails

    return fails(result, result.params.get("max_pairs"))


def write_report(
    result: Result,
    fmt: str,
    stream: TextIO,
    *,
    per: str = "pair",
    jobs: int = 1,
    warn: Callable[[str], object] | None = None,
    limit: int = TABLE_LIMIT,
    relative_to: str | None = None,
) -> None:
    """Write ``result`` in format ``fmt`` (``table``, ``json``, ``jsonl``, ``csv``, ``sarif``,
    ``html``) to ``stream``, as ``minhashdup scan --format`` does.

    SARIF and HTML show more than the result: the shared token runs of the pairs (the paired
    files are lexed again, in ``jobs`` processes when there are many), the files' texts (HTML),
    the project root that SARIF names files from (the git repository holding the current
    folder). They are computed here, before the renderer (:mod:`minhashdup.report`) writes.

    Args:
        per: with SARIF, ``"pair"`` (one result per pair) or ``"cluster"`` (one per family).
        jobs: worker processes for the runs (1: none; 0: one per core).
        warn: called with a warning for the user (a SARIF log cut to GitHub's limits);
            by default :func:`warnings.warn`.
        limit: with the table, at most this many rows (0: every row); other formats list
            every pair.
        relative_to: with the table, show paths relative to this folder (``minhashdup scan``
            passes its one PATH, or ``"."`` for several); ``None`` shows them as they are.

    Raises:
        ConfigError: an unknown ``fmt`` or ``per``, or ``jobs`` or ``limit`` out of range.

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> write_report(scan("examples"), "csv", out)
        >>> out.getvalue().splitlines()[0]
        'a,b,jaccard,estimate,shingles_a,shingles_b,common,known,vendored_a,vendored_b'
    """
    from minhashdup.report import FORMATS, render

    if fmt not in FORMATS:
        raise ConfigError("{0} must be one of {formats} (got {value!r})", "fmt", formats=", ".join(FORMATS), value=fmt)
    if fmt in ("sarif", "html") and "parquet" in result.params:
        raise ConfigError(
            "{0} {value} reads the paired files from disk; a Parquet dataset's are not there: use table, json,"
            " jsonl or csv",
            "fmt",
            value=fmt,
        )
    if per not in ("pair", "cluster"):
        raise ConfigError("{0} must be 'pair' or 'cluster' (got {value!r})", "per", value=per)
    check_whole("jobs", jobs, 0, 1024)
    check_whole("limit", limit, 0, 10**9)
    table = {"limit": limit, "relative_to": relative_to} if fmt == "table" else {}
    render(result, fmt, stream, **table, **_report_inputs(result, fmt, per, jobs, warn))


def _report_inputs(
    result: Result, fmt: str, per: str, jobs: int, warn: Callable[[str], object] | None
) -> dict[str, Any]:
    """What SARIF and HTML show beyond ``result``, computed before rendering (a renderer only
    writes): the pairs' shared runs, the files' texts, where the project is."""
    if fmt not in ("sarif", "html"):
        return {}
    from minhashdup.analysis import regions  # pygments: only for these formats
    from minhashdup.ci.git import locate

    workers = jobs or usable_cores()
    if fmt == "sarif":
        project = locate(regions.shown_paths(result, per))
        found = regions.pair_regions(result, workers) if per == "pair" else []
        return {"per": per, "project": project, "regions": found, "warn": warn or _warn_caller}
    return {"sources": regions.side_by_side(result, workers)}


def _warn_caller(message: str) -> None:
    """:func:`warnings.warn` at the line that called :func:`write_report`: this function, the
    SARIF renderer, :func:`minhashdup.report.render` and :func:`write_report` are the 4 frames
    above it."""
    warnings.warn(message, stacklevel=5)


def compare(
    a: "PathArg",
    b: "PathArg",
    *,
    shingle: int = 5,
    hashes: int = 48,
    seed: int = 1,
    bits: int = 64,
    ignore_identifiers: bool = False,
    ignore_literals: bool = False,
) -> "Comparison":
    """Compare two files as a scan would: what ``minhashdup compare`` does.

    Args:
        a, b: the files.
        shingle: tokens per shingle.
        hashes: MinHash values of the estimate (``bands * rows`` of a scan), 1 to 4096.
        seed: seed of the MinHash hash family.
        bits: low bits kept of each MinHash value, 1 to 64.
        ignore_identifiers, ignore_literals: names, literals as placeholders (as ``scan``'s);
            the comparison then also gives the verbatim Jaccard.

    Returns:
        The :class:`~minhashdup.analysis.compare.Comparison`: counts, exact Jaccard, the
        estimate and its standard error, the longest shared token runs.

    Raises:
        ConfigError: an option out of range, naming it.
        InputPathError: a file is missing, unreadable, binary or has no lexer.

    Example:
        >>> c = compare("examples/go/reader.go", "examples/go/textview.go")
        >>> round(c.jaccard, 3), c.runs[0].tokens > 20
        (0.859, True)
    """
    from minhashdup.analysis.compare import compare_files  # pygments: only for this call

    check_whole("hashes", hashes, 1, 4096)
    config = Config(bands=hashes, rows=1, shingle=shingle, seed=seed, bits=bits)
    config = dataclasses.replace(config, ignore_identifiers=ignore_identifiers, ignore_literals=ignore_literals)
    return compare_files(a, b, config)


def evaluate(
    paths: "PathsArg",
    config: Config | None = None,
    *,
    low: float = 0.3,
    repeats: int = REPEATS,
    progress: "ProgressFactory | None" = None,
    **options: Any,
) -> "Evaluation":
    """Measure what LSH loses on a tree: what ``minhashdup evaluate`` does.

    Args:
        paths: a folder or file, or a list of them.
        config: options as a :class:`Config`; keyword ``options`` override it, as for :func:`scan`.
        low: lowest similarity counted, above 0 and below 1; bins of 0.1 from there to 1.
        repeats: seeds to measure recall with, 1 to 1000 (see
            :func:`minhashdup.analysis.evaluate.evaluate`).
        progress: optional factory of progress bars.

    Returns:
        The :class:`~minhashdup.analysis.evaluate.Evaluation`, per similarity bin.

    Raises:
        ConfigError: an option out of range, naming it (TypeError: unknown).
        InputPathError: a path does not exist.
    """
    config, _ = _options("evaluate", options, config, None, review_allowed=False)
    from minhashdup.analysis.evaluate import check_bins
    from minhashdup.analysis.evaluate import evaluate as _evaluate

    check_bins(low, repeats)  # before minutes of lexing
    corpus = collect(path_list(paths), config, progress)
    return _evaluate(corpus, config, low, repeats=repeats)


def tune(threshold: float = 0.5, *, max_hashes: int = 128, min_recall: float = 0.99, bits: int = 64) -> "Tuning":
    """Choose bands and rows for ``threshold``: what ``minhashdup tune`` does.

    See :func:`minhashdup.analysis.tuning.tuning` for the arguments.

    Raises:
        ConfigError: a value out of range, naming the parameter.

    Example:
        >>> best = tune(threshold=0.8).recommended
        >>> f"{best.bands} x {best.rows}"
        '5 x 2'
    """
    from minhashdup.analysis.tuning import tuning

    return tuning(threshold, max_hashes, min_recall, bits)


def _options(
    call: str,
    options: dict[str, Any],
    config: Config | None,
    review: Review | None,
    config_allowed: bool = True,
    review_allowed: bool = True,
) -> tuple[Config, Review]:
    """Keyword options split between the :class:`Config` and the :class:`Review`."""
    allowed = (_CONFIG_FIELDS if config_allowed else frozenset()) | (_REVIEW_FIELDS if review_allowed else frozenset())
    for name in options:
        if name not in allowed:
            import difflib

            close = difflib.get_close_matches(name, sorted(allowed), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"{call}() got an unexpected keyword argument {name!r}{hint}")
    for given, kind in ((config, Config), (review, Review)):
        if given is not None and not isinstance(given, kind):
            raise TypeError(f"{call}(): expected a {kind.__name__}, got {type(given).__name__}")
    reviewed = {k: v for k, v in options.items() if k in _REVIEW_FIELDS}
    review = dataclasses.replace(review or Review(), **reviewed)
    settings = {k: v for k, v in options.items() if k in _CONFIG_FIELDS}
    own = tuple(p for p in (review.baseline, review.write_baseline) if p and p != "-")
    if own and "own_files" not in settings:  # the run's own files are not scanned
        settings["own_files"] = tuple(dict.fromkeys((*(config.own_files if config else ()), *own)))
    return (dataclasses.replace(config, **settings) if config else Config(**settings)), review
