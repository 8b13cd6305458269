"""The baseline: verified pairs recorded once (``--write-baseline``) and then treated as known
(``--baseline``), so that a CI gate fails only on new duplication.

The file is JSON with a version field and one pair per line, sorted by path, so that a
change to it reviews well as a diff::

    {"minhashdup_baseline": 1, "pairs": [
    {"a": "pkg/reader.go", "b": "pkg/reader_v2.go", "jaccard": 0.812345},
    {"a": "tools/gen.go", "b": "tools/gen_old.go", "jaccard": 0.9}
    ]}

An entry is keyed by its pair of paths, relative to the baseline file's folder (the same
file works from any working folder, however PATH was spelled); for a Parquet dataset, by its
rows' names as the dataset writes them (they are no files on this disk). Editing a file of a known
pair does not make the pair new; its similarity rising by more than the tolerance does.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence

from minhashdup.ci.git import real, relative
from minhashdup.core import cluster
from minhashdup.errors import MinhashdupError
from minhashdup.report.outfile import check_writable, replaced, tree_link
from minhashdup.result import Pair, Result
from minhashdup.source.safeio import TooLargeError, read_regular

VERSION = 1
_KEY = "minhashdup_baseline"
#: The most bytes a baseline file may hold (about 5 million entries).
LIMIT = 512 * 2**20
#: Notes listed one by one for recorded files that no longer exist; the rest are counted on one line.
NOTE_LIMIT = 20


class BaselineError(MinhashdupError):
    """The baseline file cannot be read, is not a baseline, or cannot be written."""


@dataclasses.dataclass(frozen=True)
class Baseline:
    """Recorded pairs: ``pairs[(a, b)]`` is the Jaccard recorded for paths ``a < b``.

    ``base`` is the folder the paths are relative to; ``dropped`` counts, per recorded path
    that no longer exists, the entries left out because of it; ``dropped_pairs`` counts those
    entries (one whose two files are gone is counted once, as is a repeated entry), and an
    entry whose two paths are one counts once for that path.
    ``classes`` keys the entries (dropped ones too) by classes of files recorded as identical
    (see :meth:`jaccard_of`).
    """

    path: str
    base: str
    pairs: dict[tuple[str, str], float]
    dropped: dict[str, int]
    dropped_pairs: int = 0
    classes: Classes | None = None
    verbatim: bool = False  # a Parquet dataset's: paths are the rows' names, as they are written

    def name(self, path: str) -> str:
        """How the baseline names a scanned path: relative to :attr:`base`, or as it is (:attr:`verbatim`)."""
        return _name(path, self.base, self.verbatim)

    def settled(self, result: Result) -> Baseline:
        """This baseline for the scan ``result``, its entries that name a file gone dropped (and
        counted in :attr:`dropped`): a tree's paths are files relative to :attr:`base`, gone when no
        file is there now; a Parquet dataset's are its rows' names, kept as written, gone when no
        row of the dataset scanned has that name (none of its paths is a file on this disk)."""
        verbatim = _of_rows(result)
        rows = {*result.files, *(skip.path for skip in result.skips)} if verbatim else set()
        exists: dict[str, bool] = {}
        kept: dict[tuple[str, str], float] = {}
        gone_by_entry: dict[tuple[str, str], list[str]] = {}
        for (a, b), jaccard in self.pairs.items():
            for name in (a, b):
                if name not in exists:  # once per file: a stale baseline names some in thousands of entries
                    exists[name] = name in rows if verbatim else os.path.isfile(os.path.join(self.base, name))
            # dict.fromkeys: an entry pairing a file with itself (a dataset's x/a.go and x/./a.go) is one name.
            gone = [name for name in dict.fromkeys((a, b)) if not exists[name]]
            if gone:
                gone_by_entry[(a, b)] = gone
            else:
                kept[(a, b)] = jaccard
        dropped = Counter(name for gone in gone_by_entry.values() for name in gone)
        return dataclasses.replace(
            self, pairs=kept, dropped=dict(sorted(dropped.items())), dropped_pairs=len(gone_by_entry), verbatim=verbatim
        )

    @property
    def recorded(self) -> int:
        """Distinct entries in the file: those kept and those dropped."""
        return len(self.pairs) + self.dropped_pairs

    @functools.cached_property
    def entries_of(self) -> dict[str, dict[str, float]]:
        """Each recorded path's own entries: ``entries_of[a][b]`` is ``pairs[(a, b)]`` either way round."""
        return _both_ways(self.pairs)

    def key(self, pair: Pair) -> tuple[str, str]:
        """The entry key of a scan's pair."""
        return _ordered(self.name(pair.a), self.name(pair.b))

    def jaccard_of(self, pair: Pair) -> float | None:
        """The Jaccard recorded for ``pair``: its own entry's, or else that of an entry whose
        files were recorded as identical (Jaccard 1.0) to the pair's, one to each.

        Identity is transitive, and a large group of identical files is recorded in part (its
        first file paired with each other one): so a group listed otherwise after a change
        (its first file deleted, or small enough now to be listed whole) stays known, while a
        file new to the group is new.
        """
        key = self.key(pair)
        found = self.pairs.get(key)
        if found is None and self.classes is not None:
            found = self.classes.get(key)
        return found


@dataclasses.dataclass(frozen=True)
class Classes:
    """Baseline entries by classes of identical files: the paths linked by entries recorded at
    Jaccard 1.0 form a class, named by its first path."""

    first: dict[str, str]  # path -> first path of its class (paths in no class are absent)
    pairs: dict[tuple[str, str], float]  # (class, class) -> highest Jaccard recorded between them

    @classmethod
    def of(cls, entries: Iterable[tuple[str, str, float]]) -> Classes | None:
        """The classes of ``entries``; ``None`` when no entry records identical files."""
        entries = list(entries)
        links = [(a, b) for a, b, jaccard in entries if jaccard == 1.0]
        if not links:
            return None
        names = sorted({p for link in links for p in link})
        index = {name: i for i, name in enumerate(names)}
        roots = cluster.roots(len(names), [(index[a], index[b]) for a, b in links])
        first = {name: names[r] for name, r in zip(names, roots, strict=True)}
        pairs: dict[tuple[str, str], float] = {}
        for a, b, jaccard in entries:
            key = _ordered(first.get(a, a), first.get(b, b))
            pairs[key] = max(jaccard, pairs.get(key, 0.0))
        return cls(first, pairs)

    @functools.cached_property
    def partners(self) -> dict[str, dict[str, float]]:
        """``partners[x][y]``: the Jaccard recorded between classes ``x`` and ``y``, either way round
        (``partners[x][x]`` inside a class)."""
        return _both_ways(self.pairs)

    def class_of(self, path: str) -> str:
        """The class of a recorded path (the path itself when it is in no class)."""
        return self.first.get(path, path)

    def get(self, key: tuple[str, str]) -> float | None:
        """The Jaccard recorded between the classes of the two paths of ``key``."""
        return self.pairs.get(_ordered(*(self.first.get(p, p) for p in key)))


def load(path: str) -> Baseline:
    """Read a baseline file, every entry kept: :meth:`Baseline.settled` drops those naming a
    file that no longer exists, once the scan is known.

    Raises:
        BaselineError: the file is missing, not a regular file, larger than :data:`LIMIT`, not
            JSON (or nested too deep), not a baseline or of a newer version.
    """
    entries = list(_entries(_read(path), path))
    pairs = {_ordered(a, b): jaccard for a, b, jaccard in entries}
    return Baseline(path, os.path.dirname(real(path)), pairs, {}, 0, Classes.of(entries))


def _read(path: str) -> object:
    """The parsed JSON of a baseline file (a regular file of at most :data:`LIMIT` bytes)."""
    try:
        return json.loads(read_regular(path, LIMIT).decode("utf-8"))
    except FileNotFoundError:
        raise BaselineError(
            "{0} {path}: no such file; record one with {1} {path}", "baseline", "write_baseline", path=path
        ) from None
    except TooLargeError:
        raise BaselineError(
            "{0} {path}: more than {mib} MiB; is it a baseline?", "baseline", path=path, mib=LIMIT // 2**20
        ) from None
    except OSError as err:
        raise BaselineError(
            "{0} {path}: cannot be read ({why})", "baseline", path=path, why=err.strerror or err
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BaselineError(
            "{0} {path}: cannot be read ({why}); rewrite it with {1}", "baseline", "write_baseline", path=path, why=err
        ) from None
    except RecursionError:
        raise BaselineError(
            "{0} {path}: cannot be read (JSON nested too deep); rewrite it with {1}",
            "baseline",
            "write_baseline",
            path=path,
        ) from None


def _entries(doc: object, path: str) -> Iterable[tuple[str, str, float]]:
    if not isinstance(doc, dict) or _KEY not in doc or not isinstance(doc.get("pairs"), list):
        raise BaselineError(
            "{0} {path}: not a minhashdup baseline (no {key!r} and 'pairs')", "baseline", path=path, key=_KEY
        )
    version = doc[_KEY]
    if version != VERSION:
        raise BaselineError(
            "{0} {path}: version {version!r} is not {supported}; rewrite it with this minhashdup's {1}",
            "baseline",
            "write_baseline",
            path=path,
            version=version,
            supported=VERSION,
        )
    for number, entry in enumerate(doc["pairs"], 1):
        a, b, jaccard = (entry.get(k) for k in ("a", "b", "jaccard")) if isinstance(entry, dict) else (None,) * 3
        if not (isinstance(a, str) and isinstance(b, str) and isinstance(jaccard, (int, float))):
            raise BaselineError(
                "{0} {path}: pair {number} needs string 'a', 'b' and a number 'jaccard'",
                "baseline",
                path=path,
                number=number,
            )
        if isinstance(jaccard, bool) or not 0 <= jaccard <= 1:
            raise BaselineError(
                "{0} {path}: pair {number} has jaccard {jaccard!r}, not between 0 and 1",
                "baseline",
                path=path,
                number=number,
                jaccard=jaccard,
            )
        yield a, b, float(jaccard)


def check_target(path: str, roots: Sequence[str]) -> None:
    """Refuse, before a scan of ``roots``, a baseline to write that could not be written after it,
    or whose way goes through a link inside a tree scanned (:func:`.outfile.tree_link`).

    Raises:
        BaselineError: naming the file and why.
    """
    link = tree_link(path, roots)
    if link is not None:
        raise BaselineError(
            "{0} {path}: {link} is a link inside the tree scanned, which would choose where the file goes",
            "write_baseline",
            path=path,
            link=link,
        )
    try:
        check_writable(path)
    except OSError as err:
        raise BaselineError(
            "{0} {path}: cannot write ({why})", "write_baseline", path=path, why=err.strerror or err
        ) from None


def write(result: Result, path: str) -> int:
    """Record every pair of ``result`` in a baseline file at ``path`` (replaced atomically).

    Returns:
        The number of pairs written.

    Raises:
        BaselineError: the file cannot be written.
    """
    base, verbatim = os.path.dirname(real(path)), _of_rows(result)
    entries: dict[tuple[str, str], float] = {}
    for pair in result.pairs:
        entries[_ordered(_name(pair.a, base, verbatim), _name(pair.b, base, verbatim))] = round(pair.jaccard, 6)
    lines = [json.dumps({"a": a, "b": b, "jaccard": j}, ensure_ascii=False) for (a, b), j in sorted(entries.items())]
    text = f'{{"{_KEY}": {VERSION}, "pairs": [\n' + ",\n".join(lines) + ("\n" if lines else "") + "]}\n"
    try:
        # A name that is not UTF-8 is written as a \udcXX escape: valid JSON that reads back the same.
        with replaced(path) as handle:  # whole or not at all; a symlink there is replaced, not followed
            handle.write(text)
    except OSError as err:
        raise BaselineError(
            "{0} {path}: cannot write ({why})", "write_baseline", path=path, why=err.strerror or err
        ) from None
    return len(entries)


def mark(result: Result, baseline: Baseline, tolerance: float) -> Result:
    """Mark the pairs recorded in ``baseline`` as known, unless their similarity rose by
    more than ``tolerance``; count what happened in ``stats.baseline``; note dropped entries.
    """
    pairs, seen, risen = [], set(), 0
    for pair in result.pairs:
        key = baseline.key(pair)
        recorded = baseline.jaccard_of(pair)
        known = recorded is not None and round(pair.jaccard, 6) <= recorded + tolerance + 1e-9
        risen += recorded is not None and not known
        seen.add(key)
        pairs.append(dataclasses.replace(pair, known=known))
    result.stats.baseline |= {
        "recorded": baseline.recorded,
        "known": sum(p.known for p in pairs),
        "risen": risen,
        "gone": len(baseline.pairs.keys() - seen),
        "dropped": baseline.dropped_pairs,
    }
    return dataclasses.replace(result, pairs=pairs, warnings=[*result.warnings, *_dropped_notes(baseline)])


def _dropped_notes(baseline: Baseline) -> list[str]:
    """One note per recorded file that no longer exists, the first :data:`NOTE_LIMIT` of them,
    then one line that counts the rest (a stale baseline can name millions)."""
    names = list(baseline.dropped.items())
    notes = [
        f"baseline {baseline.path}: {name} no longer exists; {n} recorded pair{'s' if n > 1 else ''} dropped"
        for name, n in names[:NOTE_LIMIT]
    ]
    if len(names) > NOTE_LIMIT:
        more = len(names) - NOTE_LIMIT
        files = "1 more recorded file no longer exists" if more == 1 else f"{more} more recorded files no longer exist"
        notes.append(
            f"baseline {baseline.path}: {files} ({baseline.dropped_pairs} recorded pairs dropped in all);"
            " rewrite it with --write-baseline"
        )
    return notes


def _of_rows(result: Result) -> bool:
    """Whether ``result`` scanned a Parquet dataset's rows, whose paths are names, not files."""
    return "parquet" in result.params


def _name(path: str, base: str, verbatim: bool) -> str:
    """How a baseline names a scanned path: relative to its folder ``base``, or as it is."""
    return path if verbatim else relative(path, base)


def _both_ways(pairs: dict[tuple[str, str], float]) -> dict[str, dict[str, float]]:
    """``out[a][b] == out[b][a] == pairs[(a, b)]``: each name's entries, looked up from either side."""
    out: dict[str, dict[str, float]] = {}
    for (a, b), jaccard in pairs.items():
        out.setdefault(a, {})[b] = jaccard
        out.setdefault(b, {})[a] = jaccard
    return out


def _ordered(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)
