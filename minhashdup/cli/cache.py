"""``minhashdup cache info|clear|prune``: the cache of per-file shingles and signatures."""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
from collections.abc import Iterator

import click

from minhashdup.cli.options import UsageFailure, format_option
from minhashdup.cli.output import NO_OUTPUT, write
from minhashdup.cli.sizes import ByteSize
from minhashdup.engine.cache import Cache, default_dir
from minhashdup.engine.prune import MAX_AGE_DAYS, MAX_BYTES, check_limits, old_files
from minhashdup.report.terminal import printable
from minhashdup.source.safeio import MIB


@click.group(name="cache")
def cache_group() -> None:
    """Inspect, prune or empty the cache of per-file shingles and signatures."""


_cache_dir_option = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    show_default="$XDG_CACHE_HOME/minhashdup",
    help="The cache folder.",
)


@cache_group.command(name="info")
@_cache_dir_option
@format_option()
def cache_info(cache_dir: str | None, fmt: str) -> None:
    """Where the cache is, how many files and signatures it holds, and its size."""
    with _cache(cache_dir) as store:
        info = {**store.info(), "path": _shown(store)}
    if fmt == "json":
        write(lambda stream: stream.write(json.dumps(info, indent=2) + "\n"), None, NO_OUTPUT)
        return
    write(
        lambda stream: stream.writelines(f"{key}: {printable(str(value))}\n" for key, value in info.items()),
        None,
        NO_OUTPUT,
    )


@cache_group.command(name="clear")
@_cache_dir_option
def cache_clear(cache_dir: str | None) -> None:
    """Remove every entry from the cache, and the cache files moved aside as broken."""
    with _cache(cache_dir) as store:
        if not store.clear():
            raise UsageFailure(f"{store.warnings[-1]}; is another scan using it?")
        # format 0: no format is older, so only files moved aside as broken go (of any format).
        old = old_files(os.path.dirname(store.path), 0, math.inf)
        more = f" and deleted {_count(len(old), 'broken cache file', 'broken cache files')}" if old else ""
        click.echo(f"cleared {printable(_shown(store))}{more}")


@cache_group.command(name="prune")
@_cache_dir_option
@click.option(
    "--older-than",
    type=float,
    default=MAX_AGE_DAYS,
    show_default=True,
    metavar="DAYS",
    help="Drop entries not used for DAYS days (0 drops them all).",
)
@click.option(
    "--max-size",
    type=ByteSize(),
    default=MAX_BYTES,
    show_default="1GiB",
    help="Then drop the least recently used entries until the cache file is at most SIZE.",
)
@format_option()
def cache_prune(cache_dir: str | None, older_than: float, max_size: int, fmt: str) -> None:
    """Drop the entries not used lately, then the least recently used until the cache fits
    in --max-size. A scan does this with the defaults once a day, sparing what it used that day.
    """
    check_limits(older_than, max_size)  # its messages name --older-than and --max-size (cli.options.flag)
    with _cache(cache_dir) as store:
        pruned = store.prune(older_than, max_size)
        if pruned is None:
            raise UsageFailure(f"{store.warnings[-1]}; is another scan using it?")
    if fmt == "json":
        click.echo(json.dumps({"path": _shown(store), **pruned.to_dict()}, indent=2))
        return
    counts = [_count(pruned.files, "file entry", "file entries"), _count(pruned.stats, "stat", "stats")]
    counts += [
        _count(pruned.results, "result", "results"),
        _count(len(pruned.old_files), "old cache file", "old cache files"),
    ]
    click.echo(
        f"pruned {printable(_shown(store))}: dropped {', '.join(counts)}; "
        f"{pruned.bytes_before / MIB:.1f} MiB -> {pruned.bytes_after / MIB:.1f} MiB"
    )


def _shown(store: Cache) -> str:
    """The cache file's path as pathlib spells it (``cache-v6.sqlite3`` for ``--cache-dir .``)."""
    from pathlib import PurePath

    return str(PurePath(store.path))


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


@contextlib.contextmanager
def _cache(cache_dir: str | None) -> Iterator[Cache]:
    """The cache, open, its warnings on stderr: those of opening first, then those of the
    command (a file found broken on the way is moved aside and rebuilt, as at opening)."""
    try:
        store = Cache(cache_dir or default_dir())
    except (OSError, sqlite3.Error) as err:
        raise UsageFailure(f"cannot open the cache: {err}; check --cache-dir") from None
    with store:
        _warn(store.warnings)
        shown = len(store.warnings)
        yield store  # a command that fails says why itself (the last warning)
        _warn(store.warnings[shown:])


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        click.echo(f"warning: {printable(warning)}", err=True)
