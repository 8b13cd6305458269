"""Click options, each defined once and reused by every command that scans files."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import click

from minhashdup.config import Config
from minhashdup.report import FORMATS

F = TypeVar("F", bound=Callable[..., Any])
_DEFAULT = Config()

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1000,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1000**3,
    "gib": 1024**3,
}


class ByteSize(click.ParamType):  # type: ignore[type-arg]
    """A size in bytes: ``1048576``, ``512KiB``, ``1MiB``, ``2M`` (K/M/G are binary)."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        match = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(value))
        unit = match.group(2).lower() if match else ""
        if not match or unit not in _UNITS:
            self.fail(f"{value!r} is not a size; write e.g. 1048576, 512KiB or 1MiB", param, ctx)
        return int(match.group(1)) * _UNITS[unit]


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(func: F) -> F:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


paths_argument = click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))

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

token_options = _stack(
    shingle_option,
    click.option(
        "--min-shingles",
        type=int,
        default=_DEFAULT.min_shingles,
        show_default=True,
        help="Drop (and count) files with fewer distinct shingles: empty, comment-only and tiny files.",
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
    bits_option,
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
    click.option("--quiet", "-q", is_flag=True, help="No progress bars and no per-file notices on stderr."),
    click.option("--verbose", "-v", is_flag=True, help="List every skipped file on stderr."),
)

output_options = _stack(
    format_option(FORMATS),
    output_file_option,
    click.option("--fail-on-pairs", is_flag=True, help="Exit with status 1 when any verified pair is found (for CI)."),
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
        exact=options.get("exact", False),
        bits=options["bits"],
        include=tuple(options["include"]),
        exclude=tuple(options["exclude"]),
        gitignore=not options["no_gitignore"],
        jobs=options["jobs"],
        cache=not options["no_cache"],
        cache_dir=options["cache_dir"],
        lexer_engine=options["lexer_engine"],
    )
