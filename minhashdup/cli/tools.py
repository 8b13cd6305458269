"""``minhashdup tune``, ``evaluate`` and ``compare``: each parses its options, makes one library
call and renders the result."""

from __future__ import annotations

import functools
import importlib
from typing import Any

import click

import minhashdup
from minhashdup.cli.options import (
    bits_option,
    config_from,
    file_options,
    format_option,
    lsh_options,
    normalise_options,
    output_file_option,
    paths_argument,
    run_options,
    seed_option,
    shingle_option,
    token_options,
)
from minhashdup.cli.output import NO_OUTPUT, progress_factory, refuse_tree_links, refuse_unwritable, write
from minhashdup.cli.settings import config_option
from minhashdup.core.limits import REPEATS


@click.command(
    name="tune",
    epilog="""\b
Examples:
  minhashdup tune --threshold 0.5
  minhashdup tune -t 0.8 --max-hashes 64 --format json
""",
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
    found = minhashdup.tune(threshold, max_hashes=max_hashes, min_recall=min_recall, bits=bits)
    from minhashdup.report.tune import render_tune_json, render_tune_table

    renderer = render_tune_json if fmt == "json" else render_tune_table
    write(functools.partial(renderer, found), None, NO_OUTPUT)


_EVALUATION_RENDERERS = {
    "table": ("minhashdup.report.evaluation", "render_evaluation_table"),
    "json": ("minhashdup.report.evaluation", "render_evaluation_json"),
    "html": ("minhashdup.report.html", "render_evaluation_html"),
}


@click.command(
    name="evaluate",
    epilog="""\b
Example:
  minhashdup evaluate ./go/src --include '*.go' --exclude '*_test.go' --exclude testdata
""",
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
    config = config_from({**options, "output": output})
    refuse_tree_links((output,), paths)
    refuse_unwritable((("--output", output),))
    found = minhashdup.evaluate(list(paths), config, low=low, repeats=repeats, progress=progress_factory(quiet))
    module, name = _EVALUATION_RENDERERS[fmt]
    write(functools.partial(getattr(importlib.import_module(module), name), found), output)


@click.command(
    name="compare",
    epilog="""\b
Example:
  minhashdup compare bytes/reader.go strings/reader.go
""",
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
@normalise_options
@config_option
@format_option()
def compare_command(a: str, b: str, shingle: int, hashes: int, seed: int, bits: int, fmt: str, **norm: bool) -> None:
    """Compare two files: shingle counts, common shingles, exact Jaccard, the MinHash estimate
    with its expected error, and the line ranges of their longest shared token runs.
    """
    found = minhashdup.compare(a, b, shingle=shingle, hashes=hashes, seed=seed, bits=bits, **norm)
    from minhashdup.analysis.compare import read_source
    from minhashdup.report.comparison import render_comparison_json, render_comparison_table

    if fmt == "json":
        write(functools.partial(render_comparison_json, found), None, NO_OUTPUT)
        return
    shown = found.runs  # the table shows the runs' lines: read before rendering
    texts = {path: read_source(path) for path in (found.a, found.b)} if shown else {}
    write(functools.partial(render_comparison_table, found, texts=texts), None, NO_OUTPUT)
