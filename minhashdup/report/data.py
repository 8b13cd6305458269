"""Machine-readable renderers: one JSON object, JSON Lines, CSV."""

from __future__ import annotations

import csv
import json
from typing import TextIO

from minhashdup.result import Result

PAIR_FIELDS = ("a", "b", "jaccard", "estimate", "shingles_a", "shingles_b", "common", "known")


def render_json(result: Result, stream: TextIO) -> None:
    """``{schema_version, params, stats, pairs, clusters}``, keys in a fixed order.

    One top-level key per line and one pair or cluster per line: readable, diffable, and
    written by the C encoder (``indent`` would switch json to its pure-Python encoder,
    several times slower on a tree with thousands of pairs).
    """
    doc = result.to_dict()
    lines = []
    for key, value in doc.items():
        if isinstance(value, list):
            items = ",\n    ".join(_dumps(item) for item in value)
            lines.append(f'  "{key}": [\n    {items}\n  ]' if value else f'  "{key}": []')
        else:
            lines.append(f'  "{key}": {_dumps(value)}')
    stream.write("{\n" + ",\n".join(lines) + "\n}\n")  # one write, not thousands


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


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
