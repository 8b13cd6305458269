"""The scan, stage by stage, and the seam where an engine plugs in.

walk (:mod:`minhashdup.source.walk`) -> an engine (:class:`minhashdup.engine.base.Engine`) turns the files into a
:class:`~minhashdup.core.pairs.Corpus` (shingle sets and signatures) -> :func:`find_pairs`:
identical groups, MinHash bands (or the prefix filter), the exact check, clusters. The engine
is the only part that differs between running here (:class:`minhashdup.engine.local.LocalEngine`,
worker processes and the cache) and elsewhere; every engine hands over the same arrays and
:func:`find_pairs` runs the same core functions on them.

No printing and no click here: progress goes through an optional callback and everything
else into the returned :class:`Result`.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from minhashdup._version import __version__
from minhashdup.config import Config
from minhashdup.core.digest import blake2b
from minhashdup.engine import cached
from minhashdup.engine.base import Engine, ProgressBar, ProgressFactory, Walked
from minhashdup.result import REASONS, Result, Skip, SkipReason
from minhashdup.source.found import FileEntry, Found, Request, WalkResult
from minhashdup.source.kinds import Kinds
from minhashdup.source.paths import Dataset, PathsArg, path_list
from minhashdup.source.witnesses import Witness, recording, settled, stat_of, unchanged

if TYPE_CHECKING:  # numpy, the stages, lexing, listing: not for a scan that replays its stored result
    from minhashdup.core.pairs import Corpus
    from minhashdup.engine.local import LocalEngine
    from minhashdup.engine.stages import complete_families, find_pairs

__all__ = [
    "Engine",
    "ProgressBar",
    "ProgressFactory",
    "Walked",
    "collect",
    "complete_families",
    "find_pairs",
    "scan",
    "scan_dataset",
]


def __getattr__(name: str) -> Any:
    """The pair stages, re-exported here, imported when first asked for."""
    if name in ("find_pairs", "complete_families"):
        from minhashdup.engine import stages

        return getattr(stages, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def scan(paths: PathsArg | Dataset, config: Config | None = None, progress: ProgressFactory | None = None) -> Result:
    """Find the near-duplicate files under ``paths``: what ``minhashdup scan`` does.

    Args:
        paths: a folder or file, or a list of them (a string is one path); or a Parquet
            :class:`~minhashdup.source.parquet.Dataset` of files (:func:`scan_dataset`).
        config: options; defaults to :class:`Config` ().
        progress: optional factory of progress bars, called with a stage name and a total.

    Returns:
        The :class:`Result`, with exact Jaccard for every pair.

    Raises:
        InputPathError: a path does not exist (or a dataset cannot be read).
        ConfigError: an option (e.g. a glob) is invalid.
        TypeError: ``paths`` holds something other than ``str`` or ``os.PathLike``.

    Example:
        >>> result = scan("examples", Config(threshold=0.6))
        >>> len(result.pairs), min(p.jaccard for p in result.pairs) >= 0.6
        (4, True)
    """
    config = config or Config()
    if isinstance(paths, Dataset):
        return scan_dataset(paths, config, progress)
    if config.engine == "dask":  # the other engine: the sets stay on a cluster (no cache there)
        from minhashdup.engine import distributed

        return distributed.scan_walked(walk_files(path_list(paths), config), config, progress)

    opening: list[str] = []  # the cache's own warnings, after the walk's

    def lexing_likely() -> None:  # the fork server starts while this process walks or digests
        from minhashdup.engine import parallel  # not imported by a scan that replays

        parallel.start_early(config.workers)

    with cached.session(config, opening) as cache:
        if cache is None:
            lexing_likely()  # no result to replay
        walked = walk_files(path_list(paths), config, cache)
        walked.warnings.extend(opening)

        def again(named: set[str]) -> list[Walked]:
            return [Walked([f for f in walked.files if f.path in named], [], [], 0.0, time.perf_counter())]

        stored = cache.replay(walked.files, walked.skips, lexing_likely) if cache is not None else None
        if stored is not None:
            return _replayed(stored, walked)
        from minhashdup.engine.stages import find_pairs

        engine: Engine = _local(progress, cache)  # the seam: another engine plugs in here
        if cache is None:
            return with_verbatim(find_pairs(engine.collect(walked, config), config), again, config, None)
        walk_warnings = list(walked.warnings)  # the collect adds its own warnings after them
        found = with_verbatim(find_pairs(engine.collect(walked, config), config), again, config, cache)
        if found.warnings[: len(walk_warnings)] == walk_warnings:  # kept without: a replay gives its own walk's
            cache.keep(dataclasses.replace(found, warnings=found.warnings[len(walk_warnings) :]))
        return found


def scan_dataset(dataset: Dataset, config: Config, progress: ProgressFactory | None = None) -> Result:
    """:func:`scan` of the files of a Parquet ``dataset`` (:mod:`minhashdup.source.parquet`) on
    the local engine, part by part (:meth:`LocalEngine.collect_parts`): at most a part's content
    is held at a time. The cache serves and keeps each row's shingles as a file's (by its bytes
    and name), but no whole result is replayed: nothing tells a dataset unchanged but its bytes.

    Raises:
        ConfigError: pyarrow is not installed, a column is missing (see
            :func:`~minhashdup.source.parquet.open_dataset`).
        InputPathError: the dataset cannot be found or read.
    """
    if config.engine == "dask":
        from minhashdup.engine import distributed

        return distributed.scan_dataset(dataset, config, progress)
    from minhashdup.source.parquet import Filters, open_dataset, read_parts  # here: a tree scan needs none

    opened = open_dataset(dataset)  # every file's columns checked before any lexing
    kinds = Kinds(config.include_generated, config.exclude_vendored)
    filters = Filters(config.include, config.exclude, config.max_size, kinds)
    warnings: list[str] = []

    def parts(only: set[str] | None) -> Iterator[Walked]:
        for k, part in enumerate(read_parts(opened, filters, only)):
            yield Walked(
                part.files, part.skips, warnings if k == 0 and only is None else [], part.seconds, time.perf_counter()
            )

    from minhashdup.engine.stages import find_pairs

    with cached.session(config, warnings) as cache:
        corpus = _local(progress, cache).collect_parts(parts(None), config, total=opened.rows)
        result = with_verbatim(find_pairs(corpus, config), parts, config, cache)
    result.params["parquet"] = dataclasses.asdict(dataset)
    return result


def with_verbatim(
    result: Result, files: Callable[[set[str]], Iterable[Walked]], config: Config, cache: cached.CachedFiles | None
) -> Result:
    """With names or literals normalised, each pair's ``jaccard_verbatim``: the exact Jaccard of
    the two files' verbatim shingles (no placeholder, no ``--max-df``), so that a renamed copy
    tells from a verbatim one. The paired files (``files`` gives them, read again, from the paths
    named) are lexed again as a default scan lexes them (from the cache when a default scan
    stored them)."""
    if not config.normalisation.active or not result.pairs:
        return result
    from minhashdup.core.shingles import jaccard

    t0 = time.perf_counter()
    plain = dataclasses.replace(config, ignore_identifiers=False, ignore_literals=False, max_df=None)
    named = {path for p in result.pairs for path in (p.a, p.b)}
    store = None if cache is None else cached.CachedFiles(cache.store, plain)
    corpus = _local(None, store).collect_parts(files(named), plain)
    sets = dict(zip(corpus.paths, corpus.sets, strict=True))
    pairs = [
        dataclasses.replace(p, jaccard_verbatim=jaccard(sets[p.a], sets[p.b]) if p.a in sets and p.b in sets else None)
        for p in result.pairs
    ]
    result.stats.seconds["verbatim"] = time.perf_counter() - t0
    return dataclasses.replace(result, pairs=pairs)


def collect(paths: PathsArg, config: Config, progress: ProgressFactory | None = None) -> Corpus:
    """Walk ``paths`` and turn every file into its shingle set (lexing in parallel).

    With ``config.uses_cache``, files whose content, name and settings were seen before are
    taken from the cache (:mod:`minhashdup.engine.cached`) and only the others are lexed.
    ``paths`` is one path or a list of them, as for :func:`scan`.
    """
    opening: list[str] = []
    with cached.session(config, opening) as cache:
        walked = walk_files(path_list(paths), config, cache)
        walked.warnings.extend(opening)
        return _local(progress, cache).collect(walked, config)


def _local(progress: ProgressFactory | None, cache: cached.CachedFiles | None) -> LocalEngine:
    """The engine that lexes here (imported when a scan lexes: not when it replays)."""
    from minhashdup.engine.local import LocalEngine

    return LocalEngine(progress, cache)


def _find(paths: Sequence[str], options: dict[str, Any]) -> Found:
    """The walk of ``paths`` (imported when a scan walks: not when it replays a remembered walk)."""
    from minhashdup.source.walk import find

    return find(paths, **options)


def walk_files(roots: Sequence[str], config: Config, memo: Store | None = None) -> Walked:
    """The walk of ``roots`` under ``config``'s filters, the run's own reports left out
    (``memo``: where the walk is remembered, see :func:`remembered_walk`)."""
    t0 = time.perf_counter()
    kinds = Kinds(config.include_generated, config.exclude_vendored)
    walked = remembered_walk(
        roots,
        memo,
        include=config.include,
        exclude=config.exclude,
        gitignore=config.gitignore,
        max_size=config.max_size,
        kinds=kinds,
    )
    t1 = time.perf_counter()
    files, own = _own_files(walked.files, config.own_files)
    return Walked(files, [*walked.skips, *own], list(walked.warnings), t1 - t0, t1)


def _own_files(files: list[FileEntry], own: Sequence[str]) -> tuple[list[FileEntry], list[Skip]]:
    """Leave out the reports this run reads or writes: a baseline is not source to compare."""
    if not own:
        return files, []
    reals = {os.path.realpath(p) for p in own}
    kept = [f for f in files if f.real not in reals]
    return kept, [Skip(f.path, SkipReason.OWN_FILE, "a report of this run") for f in files if f.real in reals]


def _replayed(result: Result, walked: Walked) -> Result:
    """The stored result of this very scan, with this run's timings and its walk's warnings first."""
    result = dataclasses.replace(result, warnings=[*walked.warnings, *result.warnings])
    stats = result.stats
    stats.seconds = {"walk": walked.seconds, "lex": time.perf_counter() - walked.ended}
    stats.seconds["total"] = sum(stats.seconds.values())
    stats.cpu_seconds = {}
    stats.cache = {"hits": len(walked.files), "lexed": 0, "copies": 0, "result": 1}
    return result


# A walk remembered (issue 17: a warm scan's walk): see :mod:`minhashdup.source.witnesses`.

#: The memo's layout, or the rules it was walked by: a memo of another is not used (2: by column;
#: 3: ignore files read by git's lines, ``X/**`` as what is inside ``X``; 4: tracked files never gitignored;
#: 5: a POSIX class's line not applied, one notice for an unreadable folder, a named root never ignored;
#: 6: each path judged by the last ignore line that matches it, a \\ in a set read as git reads it).
MEMO_FORMAT = 6


class Store(Protocol):
    """Where walk memos are kept (the scan's cache): bytes by key."""

    def get_memo(self, key: bytes) -> bytes | None: ...

    def put_memo(self, key: bytes, doc: bytes) -> None: ...


def memo_key(
    paths: Sequence[str], include: Sequence[str], exclude: Sequence[str], gitignore: bool, kinds: Kinds
) -> bytes | None:
    """The key of a walk's memo: everything beyond the tree that decides what it finds; ``None``
    where the current folder is gone. The paths as given are relative to the current folder;
    who walks decides which folders can be listed; pathspec's own file stands for its version (a
    new release may match globs otherwise), found without importing it."""
    spec = importlib.util.find_spec("pathspec")
    origin = spec.origin if spec is not None and spec.origin else ""
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    who = [os.geteuid(), os.getegid(), sorted(os.getgroups())] if hasattr(os, "geteuid") else []
    head = {
        "memo": "walk",
        "format": MEMO_FORMAT,
        "version": __version__,
        "cwd": cwd,
        "who": who,
        "paths": [os.fspath(p) for p in paths],
        "include": list(include),
        "exclude": list(exclude),
        "gitignore": gitignore,
        "kinds": [kinds.include_generated, kinds.exclude_vendored],
        "pathspec": [origin, *stat_of(origin, True)],
    }
    data = json.dumps(head, sort_keys=True).encode("utf-8", "surrogatepass")
    return b"W" + blake2b(data, digest_size=20).digest()  # 21 bytes: not a result's key


def remembered_walk(
    paths: Sequence[str],
    store: Store | None,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    gitignore: bool = True,
    max_size: int,
    kinds: Kinds,
) -> WalkResult:
    """:func:`~minhashdup.source.walk.walk` of ``paths``, from the memo in ``store`` while every
    witness shows the same, else walked (and remembered when :func:`settled`: each stat was taken
    before the listing or read it stands for, so a change during the walk shows in it later).
    Without a store, or a current folder, a plain walk.

    Raises:
        InputPathError: a path does not exist.
        ConfigError: a glob is invalid.
    """
    options: dict[str, Any] = {"include": include, "exclude": exclude, "gitignore": gitignore, "kinds": kinds}
    key = None if store is None else memo_key(paths, include, exclude, gitignore, kinds)
    if store is None or key is None:
        return _find(paths, options).result(max_size)
    doc = store.get_memo(key)
    found = _found(doc) if doc is not None else None
    if found is None:
        started = time.time_ns()
        with recording() as seen:
            found = _find(paths, options)
        if settled(seen, started):
            store.put_memo(key, _encode(found, seen))
    return found.result(max_size)


def _encode(found: Found, witnesses: Sequence[Witness]) -> bytes:
    # By column, read back in a few C-level passes: a file's full and real paths are written
    # only where they differ from its path as shown (they rarely do); its flags as one number.
    requests = found.requests
    doc = {
        "witnesses": witnesses,
        "shown": [r.shown for r in requests],
        "full": {n: r.full for n, r in enumerate(requests) if r.full != r.shown},
        "real": {n: r.real for n, r in enumerate(requests) if r.real != r.full},  # a path or None
        "flags": [sum(bit << k for k, bit in enumerate((r.via_link, r.lstat, *r.kind))) for r in requests],
        "before": [r.skips_before for r in requests],
        "skips": [(s.path, s.reason.value, s.detail) for s in found.skips],
        "warnings": found.warnings,
        "nested": found.nested_too_deep,
    }
    return zlib.compress(json.dumps(doc).encode("utf-8", "surrogatepass"), 1)


#: A request's flags, decoded: (via_link, lstat, kind).
_FLAGS = {f: (bool(f & 1), bool(f & 2), (bool(f & 4), bool(f & 8), bool(f & 16))) for f in range(32)}


def _place(number: str, column: list[Any]) -> int:
    """A request's position written as a JSON key (IndexError if not one of ``column``'s)."""
    place = int(number)
    if not 0 <= place < len(column):
        raise IndexError(place)
    return place


def _found(blob: bytes) -> Found | None:
    """The walk a memo holds, if its witnesses are :func:`unchanged`; ``None`` otherwise, or when
    it cannot be read as a memo."""
    try:
        doc = json.loads(zlib.decompress(blob).decode("utf-8", "surrogatepass"))
        if not unchanged([(kind, path, shown) for kind, path, shown in doc["witnesses"]]):
            return None
        shown: list[str] = doc["shown"]
        full = list(shown)
        for number, path in doc["full"].items():
            full[_place(number, full)] = path
        real: list[str | None] = list(full)
        for number, path in doc["real"].items():
            real[_place(number, real)] = path
        flags, before = [_FLAGS[f] for f in doc["flags"]], doc["before"]
        if not len(shown) == len(flags) == len(before):
            return None
        via, lstat, kind = zip(*flags, strict=True) if flags else ((), (), ())
        # Plain tuples in Request's order, not Requests (a fifth of the time, 1.3 ms of a warm
        # scan of the Go tree): Found.result, their one reader here, unpacks them by position.
        requests = cast("list[Request]", list(zip(shown, full, via, real, lstat, kind, before, strict=True)))
        skips = [Skip(path, REASONS[reason], detail) for path, reason, detail in doc["skips"]]
        return Found(requests, skips, list(doc["warnings"]), list(doc["nested"]))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, zlib.error):
        return None
