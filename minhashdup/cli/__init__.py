"""The ``minhashdup`` command: parse, validate, call the pipeline, render, map errors to exit codes."""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import json
import os
import signal
import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

import click
from click.core import ParameterSource

from minhashdup import __version__
from minhashdup.analysis.evaluate import REPEATS, evaluate
from minhashdup.ci.review import apply as review_result
from minhashdup.ci.review import load as review_inputs
from minhashdup.cli.options import (
    CONFIG_FILE_KEY,
    ByteSize,
    UsageFailure,
    bits_option,
    ci_options,
    config_from,
    exact_option,
    file_options,
    format_option,
    lsh_options,
    output_file_option,
    output_options,
    paths_argument,
    review_from,
    run_options,
    seed_option,
    shingle_option,
    token_options,
)
from minhashdup.cli.settings import config_option
from minhashdup.config import MIB, Config
from minhashdup.core.bands import candidate_probability, most_selective, recommend, tune
from minhashdup.engine.cache import Cache, default_dir
from minhashdup.engine.parallel import stop_workers
from minhashdup.engine.pipeline import ProgressBar, ProgressFactory, collect, scan
from minhashdup.engine.prune import MAX_AGE_DAYS, MAX_BYTES, check_limits
from minhashdup.errors import ConfigError, ExitCode, MinhashdupError
from minhashdup.report import render
from minhashdup.report.notices import render_notices
from minhashdup.report.outfile import replaced
from minhashdup.report.terminal import printable
from minhashdup.result import Result

SCAN_EPILOG = """\b
Examples:
  minhashdup scan ./go/src --include '*.go' --exclude '*_test.go' --exclude testdata
  minhashdup scan . --threshold 0.8 --format json | jq '.pairs[] | [.a, .b, .jaccard]'
  minhashdup scan src --fail-on-pairs --quiet       # CI: exit 1 when clones exist
  minhashdup scan . --baseline dups.json --changed-since origin/main --fail-on-pairs
  minhashdup scan . --format sarif -o dups.sarif    # for GitHub code scanning
"""


class _Group(click.Group):
    """A group whose ``main`` turns every failure into one line and a documented exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # before click's own handler, which would exit 1 (our gate's code)
            _silence(sys.stdout)  # the reader (e.g. `| head`) went away: not an error of ours
            return ExitCode.OK

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        for stream in (sys.stdout, sys.stderr):
            # Paths that are not valid UTF-8 are printed as \udcXX escapes, never a crash.
            if isinstance(stream, io.TextIOWrapper):
                stream.reconfigure(errors="backslashreplace")
        try:
            code = super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:  # --help, --version
            code = exc.exit_code
        except click.ClickException as exc:
            hint = ""
            ctx, param = getattr(exc, "ctx", None), getattr(exc, "param", None)
            if isinstance(exc, click.BadParameter) and ctx and param and param.name in (ctx.default_map or {}):
                hint = f" (set in {ctx.meta.get(CONFIG_FILE_KEY)})"
            if isinstance(exc, click.UsageError) and exc.ctx is not None and not hint:
                hint = f" (see '{exc.ctx.command_path} --help')"
            click.echo(f"minhashdup: error: {printable(exc.format_message() + hint)}", err=True)
            code = ExitCode.USAGE
        except (click.exceptions.Abort, KeyboardInterrupt):
            stop_workers()
            click.echo("minhashdup: interrupted", err=True)
            code = ExitCode.INTERRUPTED
        except _Terminated:
            stop_workers()
            click.echo("minhashdup: terminated", err=True)
            code = ExitCode.TERMINATED
        except Exception as exc:  # the promise: no traceback, ever
            if os.environ.get("MINHASHDUP_DEBUG"):
                raise
            click.echo(
                f"minhashdup: internal error: {type(exc).__name__}: {printable(str(exc))}; please report it "
                "(MINHASHDUP_DEBUG=1 shows the traceback)",
                err=True,
            )
            code = ExitCode.INTERNAL
        sys.exit(int(code or 0))


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that the scan ends like on Ctrl-C: workers
    stopped (they hold stdout open), no partial ``--output`` left, exit 143."""


def _on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM handler of the ``minhashdup`` process (set by :func:`main`, not by the library)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    raise _Terminated


#: What to do when stdout cannot be written, for the commands without --output.
_NO_OUTPUT = "redirect stdout to a file on a disk with room"


@contextlib.contextmanager
def _stderr_may_close() -> Iterator[None]:
    """Notices to stderr whose reader may have gone (``2>&1 | head``): the rest of them is
    dropped, and the scan ends with the exit code it decided (a gate must never pass because
    its messages could not be shown)."""
    try:
        yield
    except BrokenPipeError:
        _silence(sys.stderr)


def _silence(stream: TextIO) -> None:
    """Point ``stream``'s file at the null device: what is still buffered is dropped, not retried."""
    try:
        fileno = stream.fileno()
    except (OSError, ValueError):  # not a real file (e.g. captured in tests)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="minhashdup")
def cli() -> None:
    """Find near-duplicate files in a source tree: MinHash and LSH find candidates,
    an exact Jaccard check on token shingles verifies them."""


@cli.command(epilog=SCAN_EPILOG)
@paths_argument
@file_options
@token_options
@lsh_options
@exact_option
@output_options
@ci_options
@run_options
@config_option
def scan_command(
    paths: tuple[str, ...],
    fmt: str,
    output: str | None,
    sarif_per: str,
    quiet: bool,
    verbose: bool,
    **options: Any,
) -> None:
    """Report the pairs of files under PATHS whose token shingles are nearly the same.

    PATHS are folders or files. Files are lexed with pygments (comments and whitespace
    dropped), cut into shingles of k tokens, MinHashed, banded; candidates sharing a band
    are checked with their exact Jaccard similarity, and pairs at or above --threshold are
    reported with their families (clusters).
    """
    try:
        config = config_from({**options, "output": output})
        review = review_from(options)
        inputs = review_inputs(review, list(paths))  # a bad baseline or REF fails before lexing
        result = scan(list(paths), config, None if quiet else _progress_factory())
        result = review_result(result, review, list(paths), inputs)
    except MinhashdupError as err:
        raise UsageFailure(str(err)) from None
    result.params["config_file"] = click.get_current_context().meta.get(CONFIG_FILE_KEY)
    extra = _report_inputs(result, fmt, sarif_per, config.workers)
    failed = review.fails(result)  # decided before any write: a closed stream must not change it
    _write(lambda stream: render(result, fmt, stream, **extra), output)
    with _stderr_may_close():
        render_notices(result, sys.stderr, quiet, verbose)
        _threshold_hint(config, quiet)
        if "written" in result.stats.baseline and not quiet:
            click.echo(
                f"wrote {result.stats.baseline['written']} pairs to {printable(str(review.write_baseline))}", err=True
            )
    if failed:
        new = result.stats.new_pairs
        with _stderr_may_close():
            click.echo(
                f"minhashdup: gate failed: {new} new pair{'s' if new != 1 else ''} reported"
                + (f", at most {review.max_pairs} allowed" if review.max_pairs else "")
                + ("" if review.baseline else " (record accepted ones with --write-baseline)"),
                err=True,
            )
        sys.exit(ExitCode.PAIRS_FOUND)


scan_command.name = "scan"


def _report_inputs(result: Result, fmt: str, sarif_per: str, jobs: int) -> dict[str, Any]:
    """What SARIF and HTML show beyond ``result``, computed before rendering (a renderer only
    writes): the pairs' shared runs (``jobs`` processes lex the paired files), the files' texts,
    where the project is; and SARIF's warning (cut to GitHub's limits) joins the scan's, shown
    after the report."""
    from minhashdup.analysis import regions  # pygments: only for these formats
    from minhashdup.ci.git import locate

    if fmt == "sarif":
        project = locate(regions.shown_paths(result, sarif_per))
        found = regions.pair_regions(result, jobs) if sarif_per == "pair" else []
        return {"per": sarif_per, "project": project, "regions": found, "warn": result.warnings.append}
    if fmt == "html":
        return {"sources": regions.side_by_side(result, jobs)}
    return {}


@cli.group(name="cache")
def cache_group() -> None:
    """Inspect, prune or empty the cache of per-file shingles and signatures."""


_cache_dir_option = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    show_default="$XDG_CACHE_HOME/minhashdup",
    help="The cache folder.",
)


@cache_group.command(name="info")
@_cache_dir_option
@format_option()
def cache_info(cache_dir: str | None, fmt: str) -> None:
    """Where the cache is, how many files and signatures it holds, and its size."""
    with _cache(cache_dir) as store:
        info = store.info()
    if fmt == "json":
        _write(lambda stream: stream.write(json.dumps(info, indent=2) + "\n"), None, _NO_OUTPUT)
        return
    _write(
        lambda stream: stream.writelines(f"{key}: {printable(str(value))}\n" for key, value in info.items()),
        None,
        _NO_OUTPUT,
    )


@cache_group.command(name="clear")
@_cache_dir_option
def cache_clear(cache_dir: str | None) -> None:
    """Remove every entry from the cache."""
    with _cache(cache_dir) as store:
        if not store.clear():
            raise UsageFailure(f"{store.warnings[-1]}; is another scan using it?")
        click.echo(f"cleared {printable(str(store.path))}")


@cache_group.command(name="prune")
@_cache_dir_option
@click.option(
    "--older-than",
    type=float,
    default=MAX_AGE_DAYS,
    show_default=True,
    metavar="DAYS",
    help="Drop entries not used for DAYS days (0 drops them all).",
)
@click.option(
    "--max-size",
    type=ByteSize(),
    default=MAX_BYTES,
    show_default="1GiB",
    help="Then drop the least recently used entries until the cache file is at most SIZE.",
)
@format_option()
def cache_prune(cache_dir: str | None, older_than: float, max_size: int, fmt: str) -> None:
    """Drop the entries not used lately, then the least recently used until the cache fits
    in --max-size. A scan does this with the defaults once a day, sparing what it used that day.
    """
    try:
        check_limits(older_than, max_size, ("--older-than", "--max-size"))
    except ConfigError as err:
        raise UsageFailure(str(err)) from None
    with _cache(cache_dir) as store:
        pruned = store.prune(older_than, max_size)
        if pruned is None:
            raise UsageFailure(f"{store.warnings[-1]}; is another scan using it?")
    if fmt == "json":
        click.echo(json.dumps({"path": str(store.path), **pruned.to_dict()}, indent=2))
        return
    counts = [_count(pruned.files, "file entry", "file entries"), _count(pruned.stats, "stat", "stats")]
    counts += [
        _count(pruned.results, "result", "results"),
        _count(len(pruned.old_files), "old cache file", "old cache files"),
    ]
    click.echo(
        f"pruned {printable(str(store.path))}: dropped {', '.join(counts)}; "
        f"{pruned.bytes_before / MIB:.1f} MiB -> {pruned.bytes_after / MIB:.1f} MiB"
    )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _cache(cache_dir: str | None) -> Cache:
    try:
        store = Cache(Path(cache_dir) if cache_dir else default_dir())
    except (OSError, sqlite3.Error) as err:
        raise UsageFailure(f"cannot open the cache: {err}; check --cache-dir") from None
    for warning in store.warnings:
        click.echo(f"warning: {printable(warning)}", err=True)
    return store


def _threshold_hint(config: Config, quiet: bool) -> None:
    """A --threshold without --bands/--rows keeps 12 x 4: say what that costs in recall."""
    ctx = click.get_current_context()
    given = {n for n in ("threshold", "bands", "rows") if ctx.get_parameter_source(n) != ParameterSource.DEFAULT}
    if quiet or config.exact or given != {"threshold"}:
        return
    p = float(candidate_probability(config.threshold, config.bands, config.rows, config.bits))
    if p >= 0.9:
        return
    best = recommend(tune(config.threshold, 128, 0.99, config.bits))
    advice = f"--bands {best.bands} --rows {best.rows}" if best else "--exact"
    click.echo(
        f"note: {config.bands} x {config.rows} finds a pair of similarity {config.threshold:g} with probability "
        f"{p:.2f}; for recall first try {advice} (see 'minhashdup tune --threshold {config.threshold:g}')",
        err=True,
    )


@cli.command(
    epilog="""\b
Examples:
  minhashdup tune --threshold 0.5
  minhashdup tune -t 0.8 --max-hashes 64 --format json
"""
)
@click.option(
    "--threshold", "-t", type=float, default=0.5, show_default=True, help="Similarity that pairs must reach to count."
)
@click.option(
    "--max-hashes",
    type=int,
    default=128,
    show_default=True,
    help="Signature budget: settings with bands x rows above it are not listed.",
)
@click.option(
    "--min-recall",
    type=float,
    default=0.99,
    show_default=True,
    help="Recall at the threshold that the recommendation must reach.",
)
@bits_option
@config_option
@format_option()
def tune_command(threshold: float, max_hashes: int, min_recall: float, bits: int, fmt: str) -> None:
    """Choose --bands and --rows for a threshold: each setting's S-curve, what it loses at the
    threshold, what it costs in candidates, and a recall-first recommendation.

    A band of one row is never listed: any single shared minimum would make a candidate.
    """
    try:
        Config(threshold=threshold, bits=bits)
    except MinhashdupError as err:
        raise UsageFailure(str(err)) from None
    if not 2 <= max_hashes <= 8192:
        raise UsageFailure(f"--max-hashes must be between 2 and 8192 (got {max_hashes})")
    if not 0 < min_recall < 1:
        raise UsageFailure(f"--min-recall must be above 0 and below 1 (got {min_recall:g})")
    choices = tune(threshold, max_hashes, min_recall, bits)
    best, selective = recommend(choices, min_recall), most_selective(choices, min_recall)
    settings = {"threshold": threshold, "max_hashes": max_hashes, "min_recall": min_recall, "bits": bits}
    from minhashdup.report.tune import render_tune_json, render_tune_table

    renderer = render_tune_json if fmt == "json" else render_tune_table
    _write(functools.partial(renderer, choices, best, selective, settings), None, _NO_OUTPUT)


tune_command.name = "tune"


@cli.command(
    epilog="""\b
Example:
  minhashdup evaluate ./go/src --include '*.go' --exclude '*_test.go' --exclude testdata
"""
)
@paths_argument
@file_options
@token_options
@lsh_options
@click.option(
    "--low", type=float, default=0.3, show_default=True, help="Lowest similarity counted; bins of 0.1 from here to 1."
)
@click.option(
    "--repeats",
    type=int,
    default=REPEATS,
    show_default=True,
    help="Seeds to measure recall with: the configured one and the next ones (after 2**64-1 comes 0); "
    "recall is their mean.",
)
@format_option(("table", "json", "html"))
@output_file_option
@config_option
@run_options
def evaluate_command(
    paths: tuple[str, ...],
    low: float,
    repeats: int,
    fmt: str,
    output: str | None,
    quiet: bool,
    verbose: bool,
    **options: Any,
) -> None:
    """Measure what LSH loses on your tree: the LSH candidates and the exact all-pairs on the
    same shingles, per similarity bin, beside the S-curve's prediction.
    """
    try:
        config = config_from({**options, "output": output})
        if not 0 < low < 1:
            raise ConfigError(f"--low must be above 0 and below 1 (got {low:g})")
        if not 1 <= repeats <= 1000:
            raise ConfigError(f"--repeats must be between 1 and 1000 (got {repeats})")
        corpus = collect(list(paths), config, None if quiet else _progress_factory())
        ev = evaluate(corpus, config, low, repeats=repeats)
    except MinhashdupError as err:
        raise UsageFailure(str(err)) from None
    module, name = {
        "table": ("minhashdup.report.evaluation", "render_evaluation_table"),
        "json": ("minhashdup.report.evaluation", "render_evaluation_json"),
        "html": ("minhashdup.report.html", "render_evaluation_html"),
    }[fmt]
    _write(functools.partial(getattr(importlib.import_module(module), name), ev), output)


evaluate_command.name = "evaluate"


@cli.command(
    epilog="""\b
Example:
  minhashdup compare bytes/reader.go strings/reader.go
"""
)
@click.argument("a", type=click.Path(path_type=str))
@click.argument("b", type=click.Path(path_type=str))
@shingle_option
@click.option(
    "--hashes",
    type=int,
    default=48,
    show_default=True,
    help="MinHash values for the estimate (bands x rows of a scan).",
)
@seed_option
@bits_option
@config_option
@format_option()
def compare_command(a: str, b: str, shingle: int, hashes: int, seed: int, bits: int, fmt: str) -> None:
    """Compare two files: shingle counts, common shingles, exact Jaccard, the MinHash estimate
    with its expected error, and the line ranges of their longest shared token runs.
    """
    from minhashdup.analysis.compare import compare_files, read_source  # pygments: only for this command

    try:
        config = Config(bands=hashes, rows=1, shingle=shingle, seed=seed, bits=bits)
        result = compare_files(a, b, config)
        shown = fmt != "json" and result.runs  # the table shows the runs' lines: read before rendering
        texts = {path: read_source(path) for path in (result.a, result.b)} if shown else {}
    except MinhashdupError as err:
        raise UsageFailure(str(err).replace("--bands", "--hashes")) from None
    from minhashdup.report.comparison import render_comparison_json, render_comparison_table

    if fmt == "json":
        _write(functools.partial(render_comparison_json, result), None, _NO_OUTPUT)
    else:
        _write(functools.partial(render_comparison_table, result, texts=texts), None, _NO_OUTPUT)


compare_command.name = "compare"


def _progress_factory() -> ProgressFactory:
    def factory(stage: str, total: int) -> ProgressBar:
        from tqdm import tqdm  # only when there is something to lex

        bar: ProgressBar = tqdm(
            total=total, desc=stage, unit="file", file=sys.stderr, leave=False, disable=not sys.stderr.isatty()
        )
        return bar

    return factory


def _write(
    renderer: Callable[[TextIO], object], output: str | None, hint: str = "write it to a file with --output"
) -> None:
    """The report to ``output`` (whole or not at all, see :func:`replaced`) or to stdout.

    A write error (a full disk, a closed terminal) is one line and exit 2, never a cut file
    that exits 0. A reader that went away (``| head``) is not an error: the rest of stdout
    is dropped and the scan ends as it would have (the gate still decides the exit code).
    """
    if output is None:
        try:
            renderer(sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:
            _silence(sys.stdout)
        except OSError as err:
            _silence(sys.stdout)
            raise UsageFailure(f"cannot write the report to stdout: {err.strerror or err}; {hint}") from None
        return
    try:
        with replaced(output) as handle:
            renderer(handle)
    except OSError as err:
        raise UsageFailure(f"cannot write {output}: {err.strerror or err}; choose another --output") from None


def main() -> None:
    """Entry point of the ``minhashdup`` command and ``python -m minhashdup``."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    cli.main(prog_name="minhashdup")
