"""Source files from a Parquet dataset: one row per file, its path in one column and its content in
another (The Stack's layout), read in record batches and handed on in parts of bounded size.

A row becomes what a walked file is, with its bytes (a
:class:`~minhashdup.source.extracted.ReadEntry` whose ``path`` and ``real`` are the path column's
value: nothing is read from disk), or a :class:`~minhashdup.result.Skip`, under the walk's rules
for what a path says: ``--include``/``--exclude`` (gitignore syntax, against the path with a
leading ``/`` or ``./`` left out), version-control folders, generated names, vendor folders,
``--max-size``. What the content says (NUL bytes, no lexer, a generated header, data or prose)
is the per-file stage's part, as for files. A row whose path or content is null is an
``unreadable`` skip; a path that an earlier row had is a ``duplicate-path`` skip (the first row is
the one scanned).

pyarrow (and fsspec, for URLs) come with ``pip install 'minhashdup[dask]'``; they are imported
only when a dataset is opened.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import time
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from minhashdup.errors import ConfigError, InputPathError
from minhashdup.result import Skip, SkipReason
from minhashdup.source.extracted import ReadEntry
from minhashdup.source.kinds import Kinds, file_kind
from minhashdup.source.paths import Dataset
from minhashdup.source.rules.ignore import VCS_DIRS, Rules, compile_globs, filtered
from minhashdup.source.walk import FileEntry

#: The content bytes one part holds at most (past one batch): the per-file stage takes a part, and
#: its bytes are let go, before the next part is read. On the Go tree as one Parquet file (12,031
#: rows, 126 MB of content) the scan's peak was 241 MB with 4 MiB parts, 269 MB with 16 MiB, 351 MB
#: with 64 MiB (a scan of the tree itself: 119 MB; pyarrow's import and decoding take ~120 MB).
PART_BYTES = 16 * 1024 * 1024
#: Rows decoded into Python objects at a time.
BATCH_ROWS = 64
#: What to install when pyarrow or fsspec is missing.
INSTALL = "pip install 'minhashdup[dask]'"


class Part(NamedTuple):
    """Rows read, in dataset order: the files to extract (with their bytes), the skips, and the
    seconds spent reading them."""

    files: list[FileEntry]  # each a ReadEntry
    skips: list[Skip]
    seconds: float
    rows: Sequence[str] = ()  # the row of each file, as skips name rows ("data.parquet[12]")
    #: Each row in order: ``(is a file, its index in files or skips, the path it claimed or None,
    #: its row)``. A row claims its path once the path's rules let it in (before its content is
    #: looked at): a later row with that path is a ``duplicate-path``. For whoever reads a
    #: dataset's files apart (the Dask engine) and finds the repeats across them.
    events: Sequence[tuple[bool, int, str | None, str]] = ()


@dataclasses.dataclass(frozen=True)
class Filters:
    """What the walk's options make of a dataset's paths (as :func:`.walk.walk` takes them)."""

    include: Sequence[str]
    exclude: Sequence[str]
    max_size: int
    kinds: Kinds


@dataclasses.dataclass(frozen=True)
class Opened:
    """A dataset whose files and columns were checked: ``files`` are ``(shown, path)`` pairs
    (shown: how a skip names it; path: on ``filesystem``), ``rows`` their rows in all."""

    dataset: Dataset
    filesystem: Any  # a pyarrow.fs.FileSystem
    files: list[tuple[str, str]]
    rows: int
    counts: tuple[int, ...] = ()  # the rows of each file


def reopened(dataset: Dataset, file: tuple[str, str], rows: int) -> Opened:
    """One file ``(shown, path)`` of an :class:`Opened` dataset of ``rows`` rows, opened again
    (on a cluster's worker, which reads its part of the dataset itself)."""
    return Opened(dataset, _filesystem(dataset.url)[0], [file], rows, (rows,))


def open_dataset(dataset: Dataset) -> Opened:
    """Find the dataset's files and check that each has the two columns, before anything is read.

    Raises:
        ConfigError: pyarrow (or fsspec, for a URL) is not installed; a column is missing
            (the message names the columns there are) or holds neither text nor bytes.
        InputPathError: no such file or folder, a folder without ``.parquet`` files, or a file
            that is not Parquet.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("{0} needs pyarrow: " + INSTALL, "parquet") from None
    fs, root = _filesystem(dataset.url)
    files = _listed(fs, root, dataset.url)
    counts: list[int] = []
    for shown, path in files:
        try:
            with fs.open_input_file(path) as handle:
                meta = pq.ParquetFile(handle).metadata
                schema = meta.schema.to_arrow_schema()
        except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
            raise InputPathError(f"{shown}: cannot be read as Parquet ({_first_line(err)})") from None
        _check_columns(schema, dataset, shown)
        counts.append(meta.num_rows)
    return Opened(dataset, fs, files, sum(counts), tuple(counts))


def read_parts(opened: Opened, filters: Filters, only: set[str] | None = None) -> Iterator[Part]:
    """The dataset's rows, in order, as parts of at most about :data:`PART_BYTES` of content
    (the last part may be empty). With ``only``, just the files at those paths (no skips).

    Raises:
        InputPathError: a file cannot be read (it changed or is corrupt).
    """
    rows = _Rows(opened.dataset, filters)
    files: list[FileEntry] = []
    skips: list[Skip] = []
    labels: list[str] = []
    events: list[tuple[bool, int, str | None, str]] = []
    held, start = 0, time.perf_counter()
    for shown, first, paths, contents in _batches(opened):
        for k, (path, content) in enumerate(zip(paths, contents, strict=True)):
            label = f"{shown}[{first + k}]"
            got = rows.entry(label, path, content)
            if isinstance(got, Skip):
                if only is None:
                    events.append((False, len(skips), rows.claim, label))
                    skips.append(got)
            elif only is None or got.path in only:
                events.append((True, len(files), rows.claim, label))
                files.append(got)
                labels.append(label)
                held += got.size
        if held >= PART_BYTES:
            yield Part(files, skips, time.perf_counter() - start, labels, events)
            files, skips, labels, events, held = [], [], [], [], 0
            start = time.perf_counter()
    yield Part(files, skips, time.perf_counter() - start, labels, events)


class _Rows:
    """One row to a file entry or a skip, remembering the paths seen (a repeated one is a skip)."""

    def __init__(self, dataset: Dataset, filters: Filters) -> None:
        self.dataset, self.filters = dataset, filters
        self.rules = Rules(compile_globs(filters.include, "include"), compile_globs(filters.exclude, "exclude"), ())
        self.seen: dict[str, str] = {}  # path -> the row that had it first
        self.claim: str | None = None  # the path the last row claimed, if it got that far

    def entry(self, row: str, path: str | bytes | None, content: str | bytes | None) -> ReadEntry | Skip:
        self.claim = None
        if isinstance(path, bytes):
            path = path.decode("utf-8", "surrogateescape")
        if not path:
            return Skip(row, SkipReason.UNREADABLE, f"no path: {self.dataset.path_column!r} is null or empty")
        rel = posixpath.normpath(path).lstrip("/")
        name = posixpath.basename(rel)
        kind = self._kind(path, name, rel)
        if isinstance(kind, Skip):
            return kind
        self.claim = path
        first = self.seen.setdefault(path, row)
        if first != row:
            return Skip(path, SkipReason.DUPLICATE, f"the path of an earlier row ({first}), which is the one scanned")
        if content is None:
            return Skip(path, SkipReason.UNREADABLE, f"{self.dataset.content_column!r} is null ({row})")
        data = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content
        if len(data) > self.filters.max_size:
            return Skip(path, SkipReason.TOO_LARGE, f"{len(data)} bytes > --max-size")
        return ReadEntry(path, path, len(data), **kind, data=data)

    def _kind(self, path: str, name: str, rel: str) -> dict[str, bool] | Skip:
        """The entry's kind fields, or the skip its path makes (as the walk decides for a file)."""
        if any(part in VCS_DIRS for part in rel.split("/")):
            return Skip(path, SkipReason.VCS)
        reason = filtered(name, rel, False, self.rules)
        if reason is not None:
            return Skip(path, reason)
        return file_kind(path, name, rel, self.filters.kinds, self.rules.include)


def _batches(opened: Opened) -> Iterator[tuple[str, int, list[Any], list[Any]]]:
    """``(file shown, its first row's number, paths, contents)`` of :data:`BATCH_ROWS` rows at a time."""
    import pyarrow.parquet as pq

    columns = [opened.dataset.path_column, opened.dataset.content_column]
    for shown, path in opened.files:
        first = 0
        try:
            with opened.filesystem.open_input_file(path) as handle:
                # One row group at a time, decoded in this thread: pre-buffering and threads made the
                # reading's peak ~80 MB higher on a 47 MB file of the Go tree.
                batches = pq.ParquetFile(handle, pre_buffer=False).iter_batches(
                    batch_size=BATCH_ROWS, columns=columns, use_threads=False
                )
                for batch in batches:
                    yield shown, first, batch.column(0).to_pylist(), batch.column(1).to_pylist()
                    first += batch.num_rows
        except (OSError, ValueError) as err:
            raise InputPathError(f"{shown}: cannot be read as Parquet ({_first_line(err)})") from None


def _filesystem(url: str) -> tuple[Any, str]:
    """The pyarrow filesystem of ``url`` and the path on it: fsspec's for a URL, else the local one."""
    from pyarrow import fs

    if "://" not in url:
        return fs.LocalFileSystem(), os.path.abspath(url)
    try:
        import fsspec
    except ImportError:
        raise ConfigError("{0} with a URL needs fsspec: " + INSTALL, "parquet") from None
    try:
        found, root = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as err:  # an unknown protocol, or its package missing (s3fs, gcsfs)
        raise ConfigError("{0} {url}: {why}", "parquet", url=url, why=_first_line(err)) from None
    return fs.PyFileSystem(fs.FSSpecHandler(found)), root


def _listed(filesystem: Any, root: str, url: str) -> list[tuple[str, str]]:
    """The Parquet files at ``root``: itself, or the ``.parquet`` files under the folder, by path."""
    from pyarrow import fs

    try:
        info = filesystem.get_file_info(root)
        if info.type == fs.FileType.File:
            return [(url, root)]
        if info.type != fs.FileType.Directory:
            raise InputPathError(f"{url}: no such file or folder; check --parquet")
        found = filesystem.get_file_info(fs.FileSelector(root, recursive=True))
    except OSError as err:
        raise InputPathError(f"{url}: cannot be listed ({_first_line(err)})") from None
    base = root.rstrip("/") + "/"
    files = sorted(
        f.path[len(base) :]
        for f in found
        if f.type == fs.FileType.File
        and f.path.endswith(".parquet")
        and not any(part.startswith((".", "_")) for part in f.path[len(base) :].split("/"))
    )
    if not files:
        raise InputPathError(f"{url}: a folder without .parquet files; check --parquet")
    return [(url.rstrip("/") + "/" + rel, base + rel) for rel in files]


def _check_columns(schema: Any, dataset: Dataset, shown: str) -> None:
    import pyarrow as pa

    for param, column, kinds in (
        ("path_column", dataset.path_column, "text"),
        ("content_column", dataset.content_column, "text or bytes"),
    ):
        if column not in schema.names:
            there = ", ".join(schema.names) or "none"
            raise ConfigError(
                "{0}: {shown} has no column {column!r} (its columns: {there})",
                param,
                shown=shown,
                column=column,
                there=there,
            )
        kind = schema.field(column).type
        ok = pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)
        ok = ok or pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind)
        if not ok:
            raise ConfigError(
                "{0}: {column!r} of {shown} holds {kind}, not {kinds}",
                param,
                column=column,
                shown=shown,
                kind=kind,
                kinds=kinds,
            )


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]
