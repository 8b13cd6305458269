"""Sizes on the command line: ``--max-size 512KiB``, ``cache prune --max-size 1GiB``."""

from __future__ import annotations

import re
from typing import Any

import click

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
