"""Machine-readable renderers: one JSON object, JSON Lines, CSV."""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring
from operator import attrgetter
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


def rounded(x: float) -> str:
    """``float.__repr__(round(x, 6))``, how json writes a share rounded to 6 places, in half the
    time (two per pair, a replayed report's largest cost after reading).

    For ``1e-4 <= x < 1e9``, ``round`` and ``:.6f`` take the same correctly rounded decimal of
    ``x`` (CPython's ``dtoa``, mode 3), and that decimal, of at most 15 significant digits, is
    the shortest text of the float it is read as: ``repr``'s, in fixed notation there, without
    trailing zeros. Elsewhere (exponents, NaN, negatives) ``repr`` itself.

    Example:
        >>> rounded(0.1 + 0.2), rounded(1.0), rounded(2 / 3), rounded(1e-5)
        ('0.3', '1.0', '0.666667', '1e-05')
    """
    if 1e-4 <= x < 1e9:
        text = f"{x:.6f}".rstrip("0")
        return text + "0" if text[-1] == "." else text
    return _FLOAT(round(x, 6))


def _item(item: Any) -> str:
    """``_dumps(item.to_dict())``; a pair (the one item a large report holds thousands of) written
    directly, in a third of the time, to the same text (a test holds them equal)."""
    if type(item) is Pair and item.jaccard_verbatim is None:
        values = _fields(item)
        if tuple(map(type, values)) == _TYPES and math.isfinite(values[2] + values[3]):
            a, b, jaccard, estimate, shingles_a, shingles_b, common, known, vendored_a, vendored_b = values
            s, t = encode_basestring, _BOOL
            return (
                f'{{"a": {s(a)}, "b": {s(b)}, "jaccard": {rounded(jaccard)}, "estimate": {rounded(estimate)}, '
                f'"shingles_a": {shingles_a!r}, "shingles_b": {shingles_b!r}, "common": {common!r}, '
                f'"known": {t[known]}, "vendored_a": {t[vendored_a]}, "vendored_b": {t[vendored_b]}}}'
            )
    return _dumps(item.to_dict())  # not what a scan makes (other types, NaN): json writes it


_TYPES = (str, str, float, float, int, int, int, bool, bool, bool)
#: A pair's fields in :data:`PAIR_FIELDS` order, read in one C call.
_fields = attrgetter(*PAIR_FIELDS)


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
