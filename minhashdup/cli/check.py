"""``minhashdup check``: the files a pre-commit hook (or an editor, or a script) hands over,
compared against the whole tree; exit 1 when one of them is in a new near-duplicate pair."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource

from minhashdup.ci.review import Review
from minhashdup.cli.options import (
    CONFIG_FILE_KEY,
    ci_options,
    config_from,
    exact_option,
    file_options,
    lsh_options,
    output_options,
    run_options,
    token_options,
)
from minhashdup.cli.output import stderr_may_close
from minhashdup.cli.scan import Report, scan_and_write
from minhashdup.cli.settings import config_option
from minhashdup.errors import ExitCode
from minhashdup.report.notices import render_notices
from minhashdup.report.terminal import printable

CHECK_EPILOG = """\b
Examples:
  minhashdup check src/parse.go src/lex.go     # exit 1 if either has a new near-duplicate in .
  git diff --name-only origin/main | xargs minhashdup check --baseline .minhashdup-baseline.json
  pre-commit: the hook `minhashdup` of this repository runs `minhashdup check` on the files it is given
"""

#: Where an accepted pair is recorded when the hook has no --baseline yet.
SUGGESTED_BASELINE = ".minhashdup-baseline.json"

#: Options of ``check`` that do not change which pairs a scan finds: not repeated in the
#: ``scan --write-baseline`` command that the gate message proposes.
_NOT_REPEATED = frozenset(
    {"root", "files", "fmt", "output", "sarif_per", "quiet", "verbose", "baseline", "baseline_tolerance"}
    | {"jobs", "cache_dir", "no_cache"}
)
#: Where an option's value counts as given: the command line or a config file.
_GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.DEFAULT_MAP)


@click.command(name="check", epilog=CHECK_EPILOG)
@click.argument("files", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=str),
    default=".",
    show_default=True,
    help="The tree FILES are compared against (pre-commit runs hooks at the top of the repository).",
)
@file_options
@token_options
@lsh_options
@exact_option
@output_options
@run_options
@config_option
def check_command(
    files: tuple[str, ...],
    root: str,
    fmt: str,
    output: str | None,
    sarif_per: str,
    quiet: bool,
    verbose: bool,
    baseline: str | None,
    baseline_tolerance: float,
    **options: Any,
) -> ExitCode:
    """Compare FILES against the whole tree under --root and exit with status 1 when one of
    them is in a near-duplicate pair not known from --baseline: the pre-commit hook.

    Only the new pairs with at least one of FILES are reported. FILES are a focus, not a
    scan request: a file the tree's scan leaves out (a data file, an --exclude'd or ignored
    one) is not compared because it is named, and a file that no longer exists is in no pair.
    Without FILES there is nothing to check: exit 0, nothing scanned.
    """
    if not files:
        return ExitCode.OK
    config = config_from({**options, "output": output, "baseline": baseline})
    review = Review(baseline=baseline, tolerance=baseline_tolerance, new_only=True, changed_files=files, max_pairs=0)
    # paths relative to root: as the repository names them
    report = Report(fmt, output, sarif_per, options["limit"], quiet, relative_to=root)
    result, code = scan_and_write([root], config, review, report)
    with stderr_may_close():
        render_notices(result, sys.stderr, quiet, verbose)
        if code == ExitCode.PAIRS_FOUND:
            click.echo(_gate_message(result.stats.new_pairs, root, baseline), err=True)
        elif code == ExitCode.UNCHECKED:
            click.echo("minhashdup: the check cannot vouch for the files (see above): it fails", err=True)
    return code


def _picked(stack: Callable[[Any], Any], *names: str) -> list[click.Parameter]:
    """The options ``names`` of a stack of cli/options.py, still defined there once: check
    takes the baseline options of scan's CI stack, not its focus and gate options."""
    probe = click.command()(stack(lambda **_: None))
    return [param for param in probe.params if param.name in names]


check_command.params += _picked(ci_options, "baseline", "baseline_tolerance")


def _gate_message(new: int, root: str, baseline: str | None) -> str:
    """What failed, and the command that accepts the pairs: a scan of the same tree with the
    same options, recording every pair of it in the baseline."""
    import shlex  # here: only a failed gate needs it

    accept = shlex.join(
        ["minhashdup", "scan", root, *_scan_options(), "--write-baseline", baseline or SUGGESTED_BASELINE]
    )
    lines = [
        f"minhashdup: {new} new near-duplicate pair{'s' if new != 1 else ''} with the files checked"
        " (listed above); merge the copies, or accept every pair of the tree with",
        "  " + printable(accept),
    ]
    if baseline is None:
        lines.append(
            f"then pass --baseline {SUGGESTED_BASELINE} to this check"
            f" (in .pre-commit-config.yaml: args: [--baseline, {SUGGESTED_BASELINE}])"
        )
    return "\n".join(lines)


def _scan_options() -> list[str]:
    """The options of this check that change which pairs a scan finds, as words of a
    ``minhashdup scan`` command line: those given on the command line and those read from a
    config file, with ``--no-config`` then (scan would read the file's general table, not a
    ``[tool.minhashdup.check]`` one, and its gate options, which would fail the recording scan)."""
    ctx = click.get_current_context()
    words = ["--no-config"] if ctx.meta.get(CONFIG_FILE_KEY) else []
    for param in ctx.command.params:
        name = param.name or ""
        if name in _NOT_REPEATED or ctx.get_parameter_source(name) not in _GIVEN:
            continue
        words += _words(param, ctx.params[name])
    return words


def _words(param: click.Parameter, value: Any) -> list[str]:
    """``param`` with ``value`` on a command line: a flag alone, each value of a repeated option."""
    if isinstance(param, click.Option) and param.is_bool_flag:
        return [param.opts[0]] if value else list(param.secondary_opts[:1])
    values = value if param.multiple else (value,)
    return [word for item in values for word in (param.opts[0], str(item))]
