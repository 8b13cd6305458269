"""``minhashdup scan``: parse the options, call :func:`minhashdup.scan`, render, say what the
gate decided."""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from typing import Any, NamedTuple

import click
from click.core import ParameterSource

import minhashdup
from minhashdup.ci.review import Review
from minhashdup.ci.unseen import verdict
from minhashdup.cli.options import (
    CONFIG_FILE_KEY,
    UsageFailure,
    ci_options,
    config_from,
    exact_option,
    file_options,
    lsh_options,
    output_options,
    review_from,
    run_options,
    token_options,
)
from minhashdup.cli.output import progress_factory, refuse_tree_links, refuse_unwritable, stderr_may_close, write
from minhashdup.cli.settings import config_option
from minhashdup.config import Config
from minhashdup.errors import ExitCode
from minhashdup.report.notices import render_notices
from minhashdup.report.terminal import printable
from minhashdup.result import Result

SCAN_EPILOG = """\b
Examples:
  minhashdup scan ./go/src --include '*.go' --exclude '*_test.go' --exclude testdata
  minhashdup scan . --threshold 0.8 --format json | jq '.pairs[] | [.a, .b, .jaccard]'
  minhashdup scan src --fail-on-pairs --quiet       # CI: exit 1 when clones exist
  minhashdup scan --parquet data/ --content-column text --format jsonl  # a dataset of files
  minhashdup scan . --baseline dups.json --changed-since origin/main --fail-on-pairs
  minhashdup scan . --format sarif -o dups.sarif    # for GitHub code scanning
  minhashdup scan src --ignore-identifiers --ignore-literals   # renamed copies too
"""


#: PATHS, optional: ``--parquet`` takes their place.
scan_paths = click.argument("paths", nargs=-1, required=False, type=click.Path(readable=False, path_type=str))

#: --parquet and its columns.
DATASET_OPTIONS = (
    click.option(
        "--parquet",
        metavar="PATH_OR_URL",
        help="Scan the files of a Parquet dataset instead of PATHS: one row per file (a .parquet file, a folder"
        " of them, or an fsspec URL such as s3://bucket/data/). Needs pip install 'minhashdup[dask]'.",
    ),
    click.option(
        "--path-column",
        default="path",
        show_default=True,
        help="With --parquet: the column of the files' paths (globs match them; outputs name them).",
    ),
    click.option(
        "--content-column",
        default="content",
        show_default=True,
        help="With --parquet: the column of the files' contents (text, read as UTF-8, or bytes).",
    ),
)


#: --engine and --scheduler.
ENGINE_OPTIONS = (
    click.option(
        "--engine",
        type=click.Choice(["local", "dask"]),
        default="local",
        show_default=True,
        help="local: this machine's processes (with the cache); dask: a Dask cluster, the same result"
        " (needs pip install 'minhashdup[dask]'; no cache, no --exact or --max-df).",
    ),
    click.option(
        "--scheduler",
        metavar="ADDRESS",
        envvar="DASK_SCHEDULER_ADDRESS",
        show_envvar=True,
        help="With --engine dask: the scheduler to run on (tcp://host:8786); without it, a local cluster"
        " of --jobs worker processes.",
    ),
)


@click.command(name="scan", epilog=SCAN_EPILOG)
@scan_paths
@DATASET_OPTIONS[0]
@DATASET_OPTIONS[1]
@DATASET_OPTIONS[2]
@ENGINE_OPTIONS[0]
@ENGINE_OPTIONS[1]
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
    limit: int,
    quiet: bool,
    verbose: bool,
    **options: Any,
) -> ExitCode:
    """Report the pairs of files under PATHS whose token shingles are nearly the same.

    PATHS are folders or files (or, with --parquet, a dataset's rows). Files are lexed with
    pygments (comments and whitespace dropped), cut into shingles of k tokens, MinHashed,
    banded; candidates sharing a band are checked with their exact Jaccard similarity, and
    pairs at or above --threshold are reported with their families (clusters).
    """
    source = _source(paths, options.pop("parquet"), options.pop("path_column"), options.pop("content_column"), fmt)
    engine = _engine(options.pop("engine"), options.pop("scheduler"))
    config = dataclasses.replace(config_from({**options, "output": output}), **engine)
    review = review_from(options)
    report = Report(fmt, output, sarif_per, limit, quiet, _base(paths) if paths else None)
    result, code = scan_and_write(source, config, review, report)
    with stderr_may_close():
        render_notices(result, sys.stderr, quiet, verbose)
        _threshold_hint(config, quiet)
        if "written" in result.stats.baseline and not quiet:
            click.echo(
                f"wrote {result.stats.baseline['written']} pairs to {printable(str(review.write_baseline))}", err=True
            )
    if code != ExitCode.OK:
        with stderr_may_close():
            click.echo(_gate_message(result, review, code), err=True)
    return code


class Report(NamedTuple):
    """Where and how a command writes its report: its output options, and what the table's paths
    are relative to."""

    fmt: str
    output: str | None
    sarif_per: str
    limit: int
    quiet: bool
    relative_to: str | None


def scan_and_write(source: Any, config: Config, review: Review, report: Report) -> tuple[Result, ExitCode]:
    """:func:`minhashdup.scan`, the gate's decision, and the report written: what ``scan`` and
    ``check`` share before their notices. Returns the result and the gate's verdict (:func:`verdict`)."""
    if isinstance(source, list):  # the trees scanned: no link in them may say where a file goes
        refuse_tree_links((report.output, review.write_baseline), source)
        unread = [p for p in source if os.path.exists(p) and not os.access(p, os.R_OK)]
        if unread and review.max_pairs is not None:  # a skip for a scan; a gate would vouch for it unread
            raise UsageFailure(f"cannot read {printable(unread[0])}: a gate cannot vouch for it")
    # A file that cannot be written fails now, not after minutes of scanning.
    refuse_unwritable((("--output", report.output), ("--write-baseline", review.write_baseline)))
    result = minhashdup.scan(source, config, review=review, progress=progress_factory(report.quiet))
    result.params["config_file"] = click.get_current_context().meta.get(CONFIG_FILE_KEY)
    code = verdict(result, review.max_pairs)  # decided before any write: a closed stream must not change it
    # SARIF's warning (cut to GitHub's limits) joins the scan's, shown after the report.
    render = functools.partial(
        minhashdup.write_report,
        result,
        report.fmt,
        per=report.sarif_per,
        jobs=config.jobs,
        limit=report.limit,
        relative_to=report.relative_to,
    )
    write(lambda stream: render(stream, warn=result.warnings.append), report.output)
    return result, code


def _source(paths: tuple[str, ...], parquet: str | None, path_column: str, content_column: str, fmt: str) -> Any:
    """What to scan: PATHS, or the ``--parquet`` dataset (exactly one of them)."""
    if parquet is None:
        if not paths:
            raise click.UsageError("Missing argument 'PATHS...' (or --parquet PATH_OR_URL).")
        return list(paths)
    if paths:
        raise click.UsageError("give PATHS or --parquet, not both")
    if fmt in ("sarif", "html"):
        raise click.UsageError(
            f"--format {fmt} reads the paired files from disk; with --parquet use table, json, jsonl or csv"
        )
    return minhashdup.Dataset(parquet, path_column, content_column)


def _engine(engine: str, scheduler: str | None) -> dict[str, Any]:
    """The engine fields of the config; ``--scheduler`` given on the command line asks for Dask."""
    source = click.get_current_context().get_parameter_source("scheduler")
    if engine == "local" and scheduler and source == ParameterSource.COMMANDLINE:
        raise click.UsageError("--scheduler needs --engine dask")
    return {"engine": engine, "scheduler": scheduler if engine == "dask" else None}


def _base(paths: tuple[str, ...]) -> str:
    """What the table's paths are relative to: the one PATH (a file's folder), else the current folder."""
    if len(paths) == 1 and not os.path.isdir(paths[0]):
        return os.path.dirname(paths[0]) or "."
    return paths[0] if len(paths) == 1 else "."


def _gate_message(result: Result, review: Review, code: ExitCode) -> str:
    new, unchecked = result.stats.new_pairs, result.stats.changes.get("unchecked", 0)
    if code == ExitCode.UNCHECKED:
        why = [f"{unchecked} changed file{'s' if unchecked != 1 else ''} not compared"] if unchecked else []
        if "unpaired" in result.stats.changes:  # changed files: those in a bucket too big to pair
            crowded = result.stats.changes["unpaired"]
            why += (
                [f"{crowded} changed file{'s' if crowded != 1 else ''} in a bucket too big to pair"] if crowded else []
            )
        elif over := result.stats.oversize_buckets:
            why += [f"{over} bucket{'s' if over != 1 else ''} too big to pair (--max-bucket)"]
        return f"minhashdup: gate failed, it cannot vouch for the change: {' and '.join(why)} (see above)"
    return (
        f"minhashdup: gate failed: {new} new pair{'s' if new != 1 else ''} reported"
        + (f", at most {review.max_pairs} allowed" if review.max_pairs else "")
        + ("" if review.baseline else " (record accepted ones with --write-baseline)")
    )


def _threshold_hint(config: Config, quiet: bool) -> None:
    """A --threshold without --bands/--rows keeps 12 x 4: say what that costs in recall."""
    ctx = click.get_current_context()
    given = {n for n in ("threshold", "bands", "rows") if ctx.get_parameter_source(n) != ParameterSource.DEFAULT}
    if quiet or config.exact or given != {"threshold"}:
        return
    from minhashdup.core.bands import candidate_probability  # numpy: when the hint is due

    p = float(candidate_probability(config.threshold, config.bands, config.rows, config.bits))
    if p >= 0.9:
        return
    best = minhashdup.tune(config.threshold, bits=config.bits).recommended
    advice = f"--bands {best.bands} --rows {best.rows}" if best else "--exact"
    click.echo(
        f"note: {config.bands} x {config.rows} finds a pair of similarity {config.threshold:g} with probability "
        f"{p:.2f}; for recall first try {advice} (see 'minhashdup tune --threshold {config.threshold:g}')",
        err=True,
    )
