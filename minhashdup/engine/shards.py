"""What the Dask engine's tasks run on a worker: a batch of files extracted into a :class:`Shard`
(their shingle sets and signatures, which stay on the worker), the compact :class:`Report` of
the batch the client gathers, the band rows a shard gives the shuffle, the candidate pairs of a
shuffled part, and the exact check and MinHash estimates of pairs between two shards.

Plain functions of plain data (numpy arrays, pandas frames), the core functions inside: the
scheduler moves their inputs and outputs, retries a task whose worker died, and recomputes a
shard lost with it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import multiprocessing
import os
import signal
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from minhashdup.core import bands as banding
from minhashdup.core.exact import FloatArray, IntArray, verify_rows
from minhashdup.core.hashing import UInt64Array
from minhashdup.core.shingles import jaccard
from minhashdup.core.signature import pair_estimates, truncate
from minhashdup.engine.workers import Recipe, extract_all
from minhashdup.result import Skip, SkipReason
from minhashdup.source.extracted import Extracted, screened
from minhashdup.source.parquet import Filters, read_parts, reopened
from minhashdup.source.paths import Dataset
from minhashdup.source.walk import FileEntry


@dataclasses.dataclass
class Shard:
    """The files of one batch that lexed, on the worker that extracted them: each one's number in
    the run (``ids``, ascending), shingle set and signature (``sigs``, one row each), and with
    names or literals normalised, the shingles as written (``verbatim``)."""

    ids: IntArray
    sets: list[UInt64Array]
    sigs: UInt64Array
    verbatim: list[UInt64Array]


@dataclasses.dataclass
class Report:
    """What the client gathers of a batch, compact (its memory grows with the files): which files
    go on to comparison (``kept``: indices into the batch, lexed and not screened out), the size
    and a 16-byte digest of each one's set (``sizes``, ``keys``: identical sets, identical keys)
    and its tokens, the other files' skips ``(index, reason, detail)``, the files
    not UTF-8, the CPU seconds by stage and the warnings. A batch read from a Parquet file on the
    worker also gives every file's path and vendored mark, the rows it skipped as it read them,
    each row's :attr:`~minhashdup.source.parquet.Part.events`, and the seconds spent reading."""

    kept: IntArray
    sizes: IntArray
    keys: npt.NDArray[np.bytes_]
    skips: list[tuple[int, SkipReason, str]]
    tokens: IntArray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))  # of each kept file
    not_utf8: list[int] = dataclasses.field(default_factory=list)  # indices of the files not UTF-8
    copies: int = 0  # files that took the result of a byte-identical one of the batch
    cpu: FloatArray = dataclasses.field(default_factory=lambda: np.zeros(4))
    warnings: list[str] = dataclasses.field(default_factory=list)
    paths: list[str] = dataclasses.field(default_factory=list)
    vendored: list[bool] = dataclasses.field(default_factory=list)
    read_skips: list[Skip] = dataclasses.field(default_factory=list)
    events: list[tuple[bool, int, str | None, str]] = dataclasses.field(default_factory=list)  # Part.events
    seconds: float = 0.0


Extracted_ = tuple[Shard, Report]


def dask_setup(worker: object) -> None:
    """Run in each worker process of the engine's own local cluster (a Dask preload): a Ctrl-C
    at the terminal is the client's to handle (it closes the cluster), not its workers'."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: Said when a worker may not start the child process that keeps the lexing deadline.
DAEMONIC = (
    "Dask workers run as daemonic processes: files were lexed without --lex-timeout and a file that crashes"
    " the lexer stops its worker; start the workers with DASK_DISTRIBUTED__WORKER__DAEMON=False"
)


def set_key(shingles: UInt64Array) -> bytes:
    """A 16-byte BLAKE2b digest of a sorted set of hashes (its size is part of the bytes)."""
    return hashlib.blake2b(np.ascontiguousarray(shingles, dtype="<u8").tobytes(), digest_size=16).digest()


def extract_shard(files: Sequence[FileEntry], ids: IntArray, recipe: Recipe, isolate: bool) -> Extracted_:
    """Extract ``files`` (numbered ``ids`` in the run, ascending) and screen them by kind as the
    local engine does (:func:`~minhashdup.source.extracted.screened`): the :class:`Shard` of
    those kept and the :class:`Report` of all. With ``isolate``, in a child process of this
    worker (where the lexing deadline holds and a file that kills its process is a
    ``lex-error``, as on the local engine); else in the task's thread, without a deadline."""
    items: list[Extracted | None] = [None] * len(files)
    report = Report(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, "S16"), [])
    if isolate and multiprocessing.current_process().daemon:  # a nanny's worker, by default
        report.warnings.append(DAEMONIC)
        isolate = False
    for item in extract_all(files, recipe, 1, warnings=report.warnings, isolate=isolate):
        items[item.index] = item
    sets, sigs, verbatim, kept, keys, tokens = [], [], [], [], [], []
    for k, (entry, got) in enumerate(zip(files, items, strict=True)):
        assert got is not None
        report.cpu += got.cpu
        if got.not_utf8:
            report.not_utf8.append(k)
        report.copies += got.copied
        item = screened(got, os.path.basename(entry.real), entry.check_generated, entry.data_ok)
        if item.skip is not None or item.signature is None:
            report.skips.append((k, item.skip or SkipReason.LEX_ERROR, item.detail))
            continue
        kept.append(k)
        keys.append(set_key(item.shingles))
        tokens.append(item.tokens)
        sets.append(item.shingles)
        sigs.append(item.signature)
        if item.verbatim is not None:
            verbatim.append(item.verbatim[0])
    report.kept = np.asarray(kept, dtype=np.int64)
    report.sizes = np.fromiter((len(x) for x in sets), dtype=np.int64, count=len(sets))
    report.keys = np.asarray(keys, dtype="S16")
    report.tokens = np.asarray(tokens, dtype=np.int64)
    width = recipe.family.num_hashes if recipe.family is not None else 0
    stacked = np.stack(sigs) if sigs else np.empty((0, width), dtype=np.uint64)
    return Shard(np.asarray(ids, dtype=np.int64)[report.kept], sets, stacked, verbatim), report


def read_shard(
    dataset: Dataset, file: tuple[str, str], rows: int, first: int, filters: Filters, job: tuple[Recipe, bool]
) -> Extracted_:
    """One file of a Parquet ``dataset`` (``(shown, path)``, ``rows`` rows, numbered from
    ``first``) read and extracted on this worker (:func:`extract_shard`, ``job`` its recipe and
    isolation), a part at a time: its bytes are let go once lexed. A path that an earlier file
    of the dataset had too is the client's to find (:func:`minhashdup.engine.distributed`)."""
    pieces: list[Extracted_] = []
    whole = Report(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, "S16"), [])
    for part in read_parts(reopened(dataset, file, rows), filters):
        done = len(whole.paths)
        numbers = np.arange(first + done, first + done + len(part.files), dtype=np.int64)
        shard, report = extract_shard(part.files, numbers, *job)
        pieces.append((shard, report))
        whole.kept = np.r_[whole.kept, report.kept + done]
        whole.sizes, whole.keys = np.r_[whole.sizes, report.sizes], np.r_[whole.keys, report.keys]
        whole.skips += [(k + done, reason, detail) for k, reason, detail in report.skips]
        whole.tokens = np.r_[whole.tokens, report.tokens]
        whole.not_utf8 += [k + done for k in report.not_utf8]
        whole.copies += report.copies
        whole.cpu += report.cpu
        whole.warnings += report.warnings
        whole.events += [
            (file, k + (done if file else len(whole.read_skips)), claim, row) for file, k, claim, row in part.events
        ]
        whole.paths += [f.path for f in part.files]
        whole.vendored += [f.vendored for f in part.files]
        whole.read_skips += part.skips
        whole.seconds += part.seconds
    shards = [p[0] for p in pieces]
    shard = Shard(
        np.concatenate([s.ids for s in shards]),
        [x for s in shards for x in s.sets],
        np.concatenate([s.sigs for s in shards]),
        [x for s in shards for x in s.verbatim],
    )
    return shard, whole


def pick(extracted: Extracted_, ids: IntArray) -> Extracted_:
    """The files numbered ``ids`` (ascending, all in the shard) of an extraction: the part of its
    shard that a round of checks needs, to move instead of the whole shard."""
    shard = extracted[0]
    rows = _rows(shard, ids).tolist()
    kept = Shard(
        np.asarray(ids, dtype=np.int64),
        [shard.sets[r] for r in rows],
        shard.sigs[rows],
        [shard.verbatim[r] for r in rows] if shard.verbatim else [],
    )
    return kept, extracted[1]


def report_of(extracted: Extracted_) -> Report:
    """The :class:`Report` of an extraction (a task of its own: the shard stays put)."""
    return extracted[1]


def _rows(shard: Shard, ids: IntArray) -> IntArray:
    """Positions in ``shard`` of the files numbered ``ids``."""
    return np.searchsorted(shard.ids, ids)


def band_rows(extracted: Extracted_, ids: IntArray, reps: IntArray, spec: tuple[int, int, int]) -> Any:
    """The shuffle's rows of a shard: ``(band, key, rep)`` for each representative ``reps[i]``
    (the file numbered ``ids[i]``) and each band of ``spec`` (bands, rows, bits), as a pandas frame."""
    import pandas as pd

    bands, rows, bits = spec
    shard = extracted[0]
    sigs = truncate(shard.sigs[_rows(shard, ids)], bits)
    keys = banding.band_keys(sigs, bands, rows) if len(ids) else np.empty((0, bands), dtype=np.uint64)
    return pd.DataFrame(
        {
            "band": np.tile(np.arange(bands, dtype=np.int32), len(ids)),
            "key": keys.reshape(-1),
            "rep": np.repeat(np.asarray(reps, dtype=np.int64), bands),
        }
    )


#: The columns of :func:`bucket_part`'s frames: a pair (``code``) or an oversize bucket
#: (``code`` -1, its band, key, size and smallest representative).
BUCKET_COLUMNS = {"code": "int64", "band": "int32", "key": "uint64", "size": "int64", "example": "int64"}


def bucket_part(part: Any, n: int, max_bucket: int) -> Any:
    """The candidate pairs of one part of the shuffled band rows (all rows of a bucket are in
    one part): :func:`minhashdup.core.bands.bucket_pairs`, as a frame of :data:`BUCKET_COLUMNS`."""
    import pandas as pd

    codes, over = banding.bucket_pairs(
        part["band"].to_numpy(), part["key"].to_numpy(), part["rep"].to_numpy(), n, max_bucket
    )
    rows = len(codes) + len(over)
    frame = {
        "code": np.r_[codes, np.full(len(over), -1, dtype=np.int64)],
        "band": np.r_[np.zeros(len(codes), dtype=np.int32), [o[0] for o in over]].astype(np.int32),
        "key": np.r_[np.zeros(len(codes), dtype=np.uint64), np.array([o[1] for o in over], dtype=np.uint64)],
        "size": np.r_[np.zeros(len(codes), dtype=np.int64), [o[2] for o in over]].astype(np.int64),
        "example": np.r_[np.zeros(len(codes), dtype=np.int64), [o[3] for o in over]].astype(np.int64),
    }
    return pd.DataFrame(frame, index=pd.RangeIndex(rows)).astype(BUCKET_COLUMNS)


def check_block(
    left: Extracted_,
    right: Extracted_,
    ids: IntArray,
    threshold: float,
) -> tuple[IntArray, FloatArray]:
    """For pairs of files ``ids`` (``(m, 2)`` numbers, the first of each in ``left``, the second in
    ``right``), the intersection size when their Jaccard reaches ``threshold`` (else -1) and the
    Jaccard (0 for those turned down): :func:`~minhashdup.core.exact.verify_rows` where the sets are."""
    sets, pairs = _joined(left, right, ids)
    return verify_rows(pairs, sets, threshold)


def estimate_block(left: Extracted_, right: Extracted_, ids: IntArray, bits: int) -> FloatArray:
    """The MinHash estimate of each pair of files ``ids`` (as for :func:`check_block`), ``bits``
    low bits of each minimum."""
    a, b = left[0], right[0]
    sigs = truncate(np.concatenate([a.sigs[_rows(a, ids[:, 0])], b.sigs[_rows(b, ids[:, 1])]]), bits)
    m = len(ids)
    return pair_estimates(sigs, np.c_[np.arange(m), np.arange(m, 2 * m)], bits)


def _joined(left: Extracted_, right: Extracted_, ids: IntArray) -> tuple[list[UInt64Array], IntArray]:
    """The sets the pairs ``ids`` need (each once) and the pairs as indices into them."""
    a, b = left[0], right[0]
    first, second = np.unique(ids[:, 0], return_inverse=True), np.unique(ids[:, 1], return_inverse=True)
    sets = [a.sets[p] for p in _rows(a, first[0]).tolist()] + [b.sets[p] for p in _rows(b, second[0]).tolist()]
    return sets, np.c_[first[1].reshape(-1), second[1].reshape(-1) + len(first[0])]


def verbatim_block(left: Extracted_, right: Extracted_, ids: IntArray, _: object = None) -> FloatArray:
    """The exact Jaccard of the verbatim shingles (as written) of each pair of files ``ids``."""
    a, b = left[0], right[0]
    pa, pb = _rows(a, ids[:, 0]).tolist(), _rows(b, ids[:, 1]).tolist()
    return np.array([jaccard(a.verbatim[i], b.verbatim[j]) for i, j in zip(pa, pb, strict=True)], dtype=np.float64)
