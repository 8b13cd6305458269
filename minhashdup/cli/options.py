"""Click options, each defined once and reused by every command that scans files."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from minhashdup.ci.git import read_lines
from minhashdup.ci.review import Review
from minhashdup.cli.sizes import ByteSize
from minhashdup.config import Config
from minhashdup.errors import ExitCode
from minhashdup.report import FAMILY_ROWS_MIN, FAMILY_SHARE, FORMATS, TABLE_LIMIT

F = TypeVar("F", bound=Callable[..., Any])
_DEFAULT = Config()
CONFIG_FILE_KEY = "minhashdup.config_file"


class UsageFailure(click.ClickException):
    """A bad option value or input: one line on stderr, exit status 2."""

    exit_code = ExitCode.USAGE


#: Library parameters whose flag is not ``--`` and the name with dashes.
_FLAGS = {
    "tolerance": "--baseline-tolerance",
    "changed_files": "--files-from",
    "gitignore": "--no-gitignore",
    "cache": "--no-cache",
    "paths": "PATHS",
    "older_than_days": "--older-than",  # cache prune
    "max_bytes": "--max-size",
}


def flag(name: str) -> str:
    """The flag of a library parameter, as error messages name it on the command line.

    Example:
        >>> flag("max_hashes"), flag("tolerance")
        ('--max-hashes', '--baseline-tolerance')
    """
    return _FLAGS.get(name, "--" + name.replace("_", "-"))


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(func: F) -> F:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


paths_argument = click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False, path_type=str))

file_options = _stack(
    click.option(
        "--include",
        multiple=True,
        metavar="GLOB",
        help="Scan only files matching GLOB (gitignore syntax: a file name, a folder name or a path"
        " under the root). Repeatable.",
    ),
    click.option(
        "--exclude",
        multiple=True,
        metavar="GLOB",
        help="Leave out files and folders matching GLOB (gitignore syntax), e.g. --exclude '*_test.go'"
        " --exclude testdata. Repeatable.",
    ),
    click.option(
        "--no-gitignore", "no_gitignore", is_flag=True, help="Do not honour .gitignore files and .git/info/exclude."
    ),
    click.option(
        "--include-generated",
        is_flag=True,
        help="Scan generated files too. By default a file with Go's 'Code generated ... DO NOT EDIT.' header,"
        " an @generated marker, a generator's name (*.pb.go, *.min.js) or linguist-generated in .gitattributes"
        " is skipped as 'generated' (counted; -v lists them).",
    ),
    click.option(
        "--exclude-vendored",
        is_flag=True,
        help="Leave out vendored files (under vendor/, third_party/ or node_modules/, or linguist-vendored in"
        " .gitattributes). By default they are compared and each pair marks its vendored side.",
    ),
    click.option(
        "--max-size",
        type=ByteSize(),
        default=_DEFAULT.max_size,
        show_default="1MiB",
        help="Skip (and report) files larger than SIZE.",
    ),
)

shingle_option = click.option(
    "--shingle", "-k", type=int, default=_DEFAULT.shingle, show_default=True, help="Tokens per shingle."
)

normalise_options = _stack(
    click.option(
        "--ignore-identifiers",
        is_flag=True,
        help="Renamed copies match: every name becomes one placeholder, names told apart only by where"
        " they repeat inside a shingle (x = x + y matches a = a + b); builtins keep their text.",
    ),
    click.option(
        "--ignore-literals", is_flag=True, help="String and number literals become one placeholder before shingling."
    ),
)

token_options = _stack(
    shingle_option,
    click.option(
        "--min-shingles",
        type=int,
        default=_DEFAULT.min_shingles,
        show_default=True,
        help="Drop (and count) files with fewer distinct shingles: empty, comment-only and tiny files.",
    ),
    normalise_options,
    click.option(
        "--max-df",
        type=float,
        default=None,
        metavar="F",
        help="Leave out shingles found in more than a fraction F of the compared files (boilerplate;"
        " each file counts, identical copies too; stats count them). Default: none is left out.",
    ),
)

seed_option = click.option(
    "--seed", type=int, default=_DEFAULT.seed, show_default=True, help="Seed of the MinHash hash family."
)
bits_option = click.option(
    "--bits",
    type=int,
    default=_DEFAULT.bits,
    show_default=True,
    help="Keep only this many low bits of each MinHash value (b-bit MinHash, 1-64): K x bits / 8 bytes"
    " per file; estimates are corrected for chance agreement.",
)
output_file_option = click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    help="Write the report to this file instead of stdout.",
)


def format_option(choices: tuple[str, ...] = ("table", "json")) -> Callable[[F], F]:
    """``--format/-f`` with the given choices, the first being the default."""
    return click.option(
        "--format",
        "-f",
        "fmt",
        type=click.Choice(choices),
        default=choices[0],
        show_default=True,
        help="Output format.",
    )


lsh_options = _stack(
    click.option(
        "--bands",
        "-b",
        type=int,
        default=_DEFAULT.bands,
        show_default=True,
        help="LSH bands; more bands find less similar pairs.",
    ),
    click.option(
        "--rows",
        "-r",
        type=int,
        default=_DEFAULT.rows,
        show_default=True,
        help="MinHash values per band; more rows make candidates stricter. The signature holds bands x rows values.",
    ),
    click.option(
        "--threshold",
        "-t",
        type=float,
        default=_DEFAULT.threshold,
        show_default=True,
        help="Report pairs whose exact Jaccard similarity is at least this (0-1].",
    ),
    seed_option,
    click.option(
        "--max-bucket",
        type=int,
        default=_DEFAULT.max_bucket,
        show_default=True,
        help="LSH buckets with more files than this are skipped with a warning (bounds time and memory).",
    ),
    click.option(
        "--max-verified",
        type=int,
        default=_DEFAULT.max_verified,
        show_default=True,
        help="Stop with exit status 2 when a scan would list more verified pairs than this"
        " (about 250 bytes each; a large identical group counts as its listed rows).",
    ),
    bits_option,
    click.option(
        "--completion/--no-completion",
        default=_DEFAULT.completion,
        show_default=True,
        help="Family completion: after the exact check, check the pairs two hops apart in the graph of"
        " similar pairs until none is new (finds the pairs LSH missed inside families it half-found).",
    ),
    click.option(
        "--completion-cap",
        type=int,
        default=_DEFAULT.completion_cap,
        show_default=True,
        help="Family completion checks at most this many pairs per file (at least 2), and a file passes on"
        " at most this many similar partners (bounds the work on a family of thousands of near copies).",
    ),
)

exact_option = click.option(
    "--exact",
    is_flag=True,
    help="Find every pair at or above --threshold, without LSH: prefix, size and positional filters,"
    " then the exact check. Lossless; slower at low thresholds.",
)

run_options = _stack(
    click.option("--jobs", "-j", type=int, default=0, show_default="all cores", help="Worker processes for lexing."),
    click.option(
        "--cache-dir",
        type=click.Path(file_okay=False, path_type=str),
        default=None,
        show_default="$XDG_CACHE_HOME/minhashdup",
        help="Where per-file shingles are kept between runs.",
    ),
    click.option("--no-cache", "no_cache", is_flag=True, help="Neither read nor write the cache."),
    click.option(
        "--lexer-engine",
        type=click.Choice(["fast", "pygments"]),
        default="fast",
        show_default=True,
        help="fast: pygments' own rules, one regex call per token (same tokens); pygments: pygments itself.",
    ),
    click.option(
        "--lex-timeout",
        type=float,
        default=60.0,
        show_default=True,
        help="Seconds one file may take to lex; a slower one is skipped as a lex-error (0: no limit).",
    ),
    click.option("--quiet", "-q", is_flag=True, help="No progress bars and no per-file notices on stderr."),
    click.option("--verbose", "-v", is_flag=True, help="List every skipped file on stderr."),
)

output_options = _stack(
    format_option(FORMATS),
    output_file_option,
    click.option(
        "--sarif-per",
        type=click.Choice(["pair", "cluster"]),
        default="pair",
        show_default=True,
        help="With --format sarif: one result per verified pair, or one per cluster (family).",
    ),
    click.option(
        "--limit",
        type=click.IntRange(0, 10**9),
        default=TABLE_LIMIT,
        show_default=True,
        metavar="N",
        help=f"The table shows at most N rows (a family at most N/{FAMILY_SHARE}, at least {FAMILY_ROWS_MIN})"
        " and says how many more there are; 0 shows every row. Other formats list every pair.",
    ),
)


def _file_option(name: str, help_text: str, dash: bool = False) -> Callable[[F], F]:
    return click.option(
        name,
        type=click.Path(dir_okay=False, allow_dash=dash, path_type=str),
        default=None,
        metavar="FILE",
        help=help_text,
    )


ci_options = _stack(
    click.option(
        "--fail-on-pairs",
        is_flag=True,
        help="The gate: exit with status 1 when any new verified pair (not in --baseline) is reported.",
    ),
    click.option(
        "--max-pairs",
        type=click.IntRange(min=0),
        default=None,
        metavar="N",
        help="The gate, with room: exit with status 1 when more than N new pairs are reported.",
    ),
    _file_option("--baseline", "Pairs recorded in FILE are known: reported with known=true, not counted by the gate."),
    _file_option("--write-baseline", "Record every verified pair of this scan in FILE (JSON, one pair per line)."),
    click.option(
        "--baseline-tolerance",
        type=float,
        default=0.1,
        show_default=True,
        help="A known pair whose Jaccard rose by more than this counts as new.",
    ),
    click.option("--new-only", is_flag=True, help="Leave pairs known from --baseline out of the output."),
    click.option(
        "--changed-since",
        metavar="REF",
        default=None,
        help="Report only pairs with a file changed since git revision REF (committed, staged, unstaged or"
        " untracked); the whole tree is still compared.",
    ),
    click.option(
        "--staged",
        is_flag=True,
        help="Report only pairs with a file staged in git (a git hook of your own; the pre-commit hook runs"
        " 'minhashdup check').",
    ),
    _file_option(
        "--files-from", "Report only pairs with a file listed in FILE (one path per line; - reads stdin).", dash=True
    ),
)


def config_from(options: dict[str, Any]) -> Config:
    """Build the validated :class:`Config` from parsed click options (raises ConfigError)."""
    return Config(
        bands=options["bands"],
        rows=options["rows"],
        threshold=options["threshold"],
        shingle=options["shingle"],
        seed=options["seed"],
        min_shingles=options["min_shingles"],
        max_size=options["max_size"],
        max_bucket=options["max_bucket"],
        max_verified=options.get("max_verified", _DEFAULT.max_verified),
        exact=options.get("exact", False),
        completion=options.get("completion", _DEFAULT.completion),
        completion_cap=options.get("completion_cap", _DEFAULT.completion_cap),
        bits=options["bits"],
        include=tuple(options["include"]),
        exclude=tuple(options["exclude"]),
        gitignore=not options["no_gitignore"],
        include_generated=options.get("include_generated", False),
        ignore_identifiers=options.get("ignore_identifiers", False),
        ignore_literals=options.get("ignore_literals", False),
        max_df=options.get("max_df"),
        exclude_vendored=options.get("exclude_vendored", False),
        jobs=options["jobs"],
        cache=not options["no_cache"],
        cache_dir=options["cache_dir"],
        lexer_engine=options["lexer_engine"],
        lex_timeout=options["lex_timeout"],
        own_files=tuple(
            path for path in (options.get(k) for k in ("baseline", "write_baseline", "output")) if path and path != "-"
        ),
    )


def review_from(options: dict[str, Any], base: str = ".") -> Review:
    """Build the :class:`~minhashdup.ci.review.Review` of the CI options (raises ConfigError)."""
    changed: tuple[str, ...] | None = None
    source = options["files_from"]
    if source is not None:
        changed = read_lines(source)
    gate = options["max_pairs"]
    if gate is None and options["fail_on_pairs"]:
        gate = 0
    return Review(
        baseline=options["baseline"],
        write_baseline=options["write_baseline"],
        tolerance=options["baseline_tolerance"],
        new_only=options["new_only"],
        changed_since=options["changed_since"],
        staged=options["staged"],
        changed_files=changed,
        base=base,
        max_pairs=gate,
    )
