"""Machine-readable renderers: one JSON object, JSON Lines, CSV."""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring
from typing import Any, TextIO

from minhashdup.result import Pair, Result

PAIR_FIELDS = (
    "a",
    "b",
    "jaccard",
    "estimate",
    "shingles_a",
    "shingles_b",
    "common",
    "known",
    "vendored_a",
    "vendored_b",
)


def render_json(result: Result, stream: TextIO) -> None:
    """``{schema_version, params, stats, pairs, clusters, groups}``, keys in a fixed order.

    One top-level key per line and one pair, cluster or group per line: readable, diffable,
    and written by the C encoder (``indent`` would switch json to its pure-Python encoder,
    several times slower on a tree with thousands of pairs), a few thousand items per write
    (the whole text at once held millions of pairs twice over).
    """
    stream.write("{\n")
    for number, (key, value) in enumerate(result.document().items()):
        stream.write(",\n" if number else "")
        if not isinstance(value, list):
            stream.write(f'  "{key}": {_dumps(value)}')
        elif not value:
            stream.write(f'  "{key}": []')
        else:
            stream.write(f'  "{key}": [\n    ')
            for start in range(0, len(value), _ITEMS_PER_WRITE):
                batch = value[start : start + _ITEMS_PER_WRITE]
                stream.write((",\n    " if start else "") + ",\n    ".join(map(_item, batch)))
            stream.write("\n  ]")
    stream.write("\n}\n")


_ITEMS_PER_WRITE = 4096


_ENCODER = json.JSONEncoder(ensure_ascii=False)
_dumps = _ENCODER.encode
_BOOL = {False: "false", True: "true"}
_FLOAT = float.__repr__  # what json writes a float with (a numpy float's own repr would differ)


def _item(item: Any) -> str:
    """``_dumps(item.to_dict())``; a pair (the one item a large report holds thousands of) written
    directly, in a third of the time, to the same text (a test holds them equal)."""
    direct = type(item) is Pair and item.jaccard_verbatim is None and tuple(map(type, _fields(item))) == _TYPES
    if not direct or not math.isfinite(item.jaccard + item.estimate):  # not what a scan makes: json writes it
        return _dumps(item.to_dict())
    s, b = encode_basestring, _BOOL
    return (
        f'{{"a": {s(item.a)}, "b": {s(item.b)}, "jaccard": {_FLOAT(round(item.jaccard, 6))}, '
        f'"estimate": {_FLOAT(round(item.estimate, 6))}, "shingles_a": {item.shingles_a!r}, '
        f'"shingles_b": {item.shingles_b!r}, "common": {item.common!r}, "known": {b[item.known]}, '
        f'"vendored_a": {b[item.vendored_a]}, "vendored_b": {b[item.vendored_b]}}}'
    )


_TYPES = (str, str, float, float, int, int, int, bool, bool, bool)


def _fields(p: Pair) -> tuple[Any, ...]:
    return p.a, p.b, p.jaccard, p.estimate, p.shingles_a, p.shingles_b, p.common, p.known, p.vendored_a, p.vendored_b


def render_jsonl(result: Result, stream: TextIO) -> None:
    """One verified pair per line, as in the JSON ``pairs`` list."""
    for pair in result.pairs:
        stream.write(_item(pair))
        stream.write("\n")


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def render_csv(result: Result, stream: TextIO) -> None:
    """A header row, then one verified pair per row.

    A path that a spreadsheet would run as a formula is written with a leading ``'``
    (see :func:`csv_cell`); the numbers are written as numbers.
    """
    fields = (*PAIR_FIELDS, "jaccard_verbatim") if result.normalised else PAIR_FIELDS
    import csv  # here: the JSON formats, warm runs' usual output, do not need it

    writer = csv.DictWriter(stream, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for pair in result.pairs:
        row = pair.to_dict()
        row["a"], row["b"] = csv_cell(pair.a), csv_cell(pair.b)
        writer.writerow(row)


def csv_cell(text: str) -> str:
    """``text`` made inert for a spreadsheet, as OWASP recommends: a cell that starts with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is prefixed with a single quote.

    Example:
        >>> csv_cell("=1+2"), csv_cell("-x.go"), csv_cell("src/a.go")
        ("'=1+2", "'-x.go", 'src/a.go')
    """
    return "'" + text if text.startswith(FORMULA_STARTS) else text
