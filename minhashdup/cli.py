"""The ``minhashdup`` command: parse, validate, call the pipeline, render, map errors to exit codes."""

from __future__ import annotations

import io
import os
import sys
from collections import Counter
from typing import Any, TextIO

import click
from tqdm import tqdm

from minhashdup import __version__
from minhashdup.errors import ExitCode, MinhashdupError
from minhashdup.options import (
    config_from,
    exact_option,
    file_options,
    lsh_options,
    output_options,
    paths_argument,
    run_options,
    token_options,
)
from minhashdup.pipeline import ProgressBar, ProgressFactory, scan
from minhashdup.report import render
from minhashdup.result import Result
from minhashdup.walk import SkipReason

_NOTICE_LIMIT = 20
_ALWAYS_LISTED = ("unreadable", "lex-error")

SCAN_EPILOG = """\b
Examples:
  minhashdup scan ./go/src --include '*.go' --exclude '*_test.go' --exclude testdata
  minhashdup scan . --threshold 0.8 --format json | jq '.pairs[] | [.a, .b, .jaccard]'
  minhashdup scan src --fail-on-pairs --quiet       # CI: exit 1 when clones exist
"""


class _UsageFailure(click.ClickException):
    exit_code = ExitCode.USAGE


class _Group(click.Group):
    """A group whose ``main`` turns every failure into one line and a documented exit code."""

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
            if isinstance(exc, click.UsageError) and exc.ctx is not None:
                hint = f" (see '{exc.ctx.command_path} --help')"
            click.echo(f"minhashdup: error: {exc.format_message()}{hint}", err=True)
            code = ExitCode.USAGE
        except (click.exceptions.Abort, KeyboardInterrupt):
            click.echo("minhashdup: interrupted", err=True)
            code = ExitCode.INTERRUPTED
        except BrokenPipeError:
            # The reader (e.g. `| head`) went away: not an error of ours.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            code = ExitCode.OK
        except Exception as exc:  # the promise: no traceback, ever
            if os.environ.get("MINHASHDUP_DEBUG"):
                raise
            click.echo(
                f"minhashdup: internal error: {type(exc).__name__}: {exc}; please report it "
                "(MINHASHDUP_DEBUG=1 shows the traceback)",
                err=True,
            )
            code = ExitCode.INTERNAL
        sys.exit(int(code or 0))


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
@run_options
def scan_command(
    paths: tuple[str, ...],
    fmt: str,
    output: str | None,
    fail_on_pairs: bool,
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
        config = config_from(options)
        result = scan(list(paths), config, None if quiet else _progress_factory())
    except MinhashdupError as err:
        raise _UsageFailure(str(err)) from None
    _write(result, fmt, output)
    _report_notices(result, quiet, verbose)
    if fail_on_pairs and result.pairs:
        sys.exit(ExitCode.PAIRS_FOUND)


scan_command.name = "scan"


def _progress_factory() -> ProgressFactory:
    def factory(stage: str, total: int) -> ProgressBar:
        bar: ProgressBar = tqdm(
            total=total, desc=stage, unit="file", file=sys.stderr, leave=False, disable=not sys.stderr.isatty()
        )
        return bar

    return factory


def _write(result: Result, fmt: str, output: str | None) -> None:
    if output is None:
        render(result, fmt, sys.stdout)
        return
    try:
        with open(output, "w", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            render(result, fmt, handle)
    except OSError as err:
        raise _UsageFailure(f"cannot write {output}: {err.strerror}; choose another --output") from None


def _report_notices(result: Result, quiet: bool, verbose: bool) -> None:
    err: TextIO = sys.stderr
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    listed = [n for n in result.skips if verbose or n.reason in _ALWAYS_LISTED]
    if not quiet:
        for notice in listed[:_NOTICE_LIMIT] if not verbose else listed:
            click.echo(f"{notice.path}: {notice.message}", err=True)
        if not verbose and len(listed) > _NOTICE_LIMIT:
            click.echo(f"... and {len(listed) - _NOTICE_LIMIT} more; -v lists them all", err=True)
    line = skip_summary(result, verbose)
    if line:
        click.echo(line, file=err)


def skip_summary(result: Result, verbose: bool = False) -> str:
    """One line: files skipped by reason, then what the globs and .gitignore filtered out."""
    counts = Counter(n.reason for n in result.skips)
    filtered = {k: v for k, v in sorted(result.stats.skipped.items()) if SkipReason(k).is_filter}
    parts = []
    if counts:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        parts.append(f"skipped {sum(counts.values())} files: {reasons}" + ("" if verbose else " (-v lists them)"))
    if filtered:
        parts.append("filtered out: " + ", ".join(f"{k} {v}" for k, v in filtered.items()))
    return "; ".join(parts)


def main() -> None:
    """Entry point of the ``minhashdup`` command and ``python -m minhashdup``."""
    cli.main(prog_name="minhashdup")
