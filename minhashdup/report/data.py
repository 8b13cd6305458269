"""Machine-readable renderers: one JSON object, JSON Lines, CSV."""

from __future__ import annotations

import csv
import json
from typing import TextIO

from minhashdup.result import Result

PAIR_FIELDS = ("a", "b", "jaccard", "estimate", "shingles_a", "shingles_b", "common", "known")


def render_json(result: Result, stream: TextIO) -> None:
    """``{schema_version, params, stats, pairs, clusters}``, keys in a fixed order."""
    stream.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))  # one write, not thousands
    stream.write("\n")


def render_jsonl(result: Result, stream: TextIO) -> None:
    """One verified pair per line, as in the JSON ``pairs`` list."""
    for pair in result.pairs:
        stream.write(json.dumps(pair.to_dict(), ensure_ascii=False))
        stream.write("\n")


def render_csv(result: Result, stream: TextIO) -> None:
    """A header row, then one verified pair per row."""
    writer = csv.DictWriter(stream, fieldnames=PAIR_FIELDS, lineterminator="\n")
    writer.writeheader()
    for pair in result.pairs:
        writer.writerow(pair.to_dict())
