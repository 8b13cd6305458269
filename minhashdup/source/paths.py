"""What the library takes as paths: one path (``str`` or ``os.PathLike``) or an iterable of them;
or a :class:`Dataset` (read by :mod:`.parquet`).

A string is one path, never a sequence of one-letter paths: ``scan("src")`` scans the folder
``src`` (iterating it walked ``s``, ``r`` and ``c``). Bytes are refused rather than guessed at.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from typing import TypeAlias

from minhashdup.errors import ConfigError

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


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A Parquet dataset of source files, to scan instead of a tree.

    Args:
        url: a ``.parquet`` file, a folder of them (searched recursively, in path order; names
            starting with ``.`` or ``_`` left out), or an fsspec URL of either (``s3://...``,
            ``file://...``; the protocol's package, e.g. s3fs, must be installed).
        path_column: the column of the files' paths (text), shown in every output.
        content_column: the column of the files' contents: text (read as UTF-8) or bytes.

    Example:
        >>> Dataset("stack/", content_column="text").path_column
        'path'
    """

    url: str
    path_column: str = "path"
    content_column: str = "content"

    def __post_init__(self) -> None:
        for name in ("url", "path_column", "content_column"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ConfigError("{0} must be a non-empty string (got {value!r})", name, value=value)
