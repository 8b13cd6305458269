"""What the library takes as paths: one path (``str`` or ``os.PathLike``) or an iterable of them.

A string is one path, never a sequence of one-letter paths: ``scan("src")`` scans the folder
``src`` (iterating it walked ``s``, ``r`` and ``c``). Bytes are refused rather than guessed at.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TypeAlias

#: One path.
PathArg: TypeAlias = "str | os.PathLike[str]"
#: One path, or an iterable of paths.
PathsArg: TypeAlias = "PathArg | Iterable[PathArg]"


def one_path(value: object, what: str = "path") -> str:
    """``value`` as a path string.

    Raises:
        TypeError: ``value`` is not a ``str`` or an ``os.PathLike`` of ``str`` (bytes
            included: decode them with ``os.fsdecode``).

    Example:
        >>> from pathlib import Path
        >>> one_path(Path("src") / "a.go")
        'src/a.go'
    """
    path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else value
    if isinstance(path, str):
        return path
    if isinstance(path, (bytes, bytearray)):
        raise TypeError(f"{what} must be a str or os.PathLike, not bytes ({value!r}); decode it with os.fsdecode()")
    raise TypeError(f"{what} must be a str or os.PathLike (got {type(value).__name__}: {value!r})")


def path_list(value: object, what: str = "paths") -> list[str]:
    """One path or an iterable of paths, as a list of path strings.

    Raises:
        TypeError: ``value`` is neither a path nor an iterable of paths, or one of its
            items is not a path (named by its position).

    Example:
        >>> path_list("src"), path_list(["src", "tests"])
        (['src'], ['src', 'tests'])
    """
    if isinstance(value, (str, bytes, bytearray, os.PathLike)):
        return [one_path(value, what)]
    if not isinstance(value, Iterable):
        raise TypeError(f"{what} must be a path (str or os.PathLike) or a list of paths (got {type(value).__name__})")
    return [one_path(item, f"{what}[{number}]") for number, item in enumerate(value)]
