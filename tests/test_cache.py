from __future__ import annotations

import dataclasses
import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from minhashdup import Config, scan
from minhashdup.cli import cli
from minhashdup.engine.cache import FILE_NAME, Cache
from minhashdup.engine.codec import stats_key, storable
from minhashdup.errors import ExitCode
from minhashdup.result import Result, Skip, SkipReason, Stats
from minhashdup.source import witnesses
from minhashdup.source.found import FileEntry

from .conftest import TreeFactory, go_file, render_go


def _tree(make_tree: TreeFactory, files: int = 30) -> Path:
    rng = random.Random(7)
    base = go_file(rng, 10)
    tree: dict[str, str | bytes] = {}
    for i in range(files):
        blocks = list(base)
        blocks[i % len(blocks)] = "\n".join(go_file(rng, 1))
        tree[f"p{i:02}/f{i:02}.go"] = render_go(blocks)
    return make_tree(tree)


def _pairs(result: Any) -> list[tuple[str, str, float, float]]:
    return [(p.a, p.b, p.jaccard, p.estimate) for p in result.pairs]


def test_warm_scan_lexes_nothing_and_gives_the_same_result(make_tree: TreeFactory, lexed: list[str]) -> None:
    root = _tree(make_tree)
    cold = scan([str(root)], Config(cache=True, jobs=1))
    assert len(lexed) == 30 and cold.stats.cache == {"hits": 0, "lexed": 30, "copies": 0, "result": 0}
    warm = scan([str(root)], Config(cache=True, jobs=1))
    assert len(lexed) == 30 and warm.stats.cache == {"hits": 30, "lexed": 0, "copies": 0, "result": 1}
    assert _pairs(warm) == _pairs(cold) and warm.pairs
    assert [c.files for c in warm.clusters] == [c.files for c in cold.clusters]


def test_touching_ten_files_lexes_only_those_ten(make_tree: TreeFactory, lexed: list[str]) -> None:
    root = _tree(make_tree)
    scan([str(root)], Config(cache=True, jobs=1))
    touched = sorted(root.rglob("*.go"))[:10]
    for path in touched:
        path.write_text(path.read_text() + "\nvar touched = 1\n")
    lexed.clear()
    result = scan([str(root)], Config(cache=True, jobs=1))
    assert sorted(lexed) == sorted(p.read_text() for p in touched)
    assert result.stats.cache == {"hits": 20, "lexed": 10, "copies": 0, "result": 0}
    fresh = scan([str(root)], Config(jobs=1, cache=False))
    assert _pairs(result) == _pairs(fresh)


def test_settings_that_change_shingles_miss(make_tree: TreeFactory, lexed: list[str]) -> None:
    root = _tree(make_tree, files=5)
    scan([str(root)], Config(cache=True, jobs=1))
    scan([str(root)], Config(cache=True, jobs=1, shingle=4))
    assert len(lexed) == 10
    scan([str(root)], Config(cache=True, jobs=1, seed=9, bands=10))  # other signatures, same shingles
    assert len(lexed) == 10
    scan([str(root)], Config(cache=True, jobs=1, lexer_engine="pygments"))  # the engine is part of the key
    assert len(lexed) == 15


def test_no_cache_writes_nothing(make_tree: TreeFactory, private_cache: Path) -> None:
    scan([str(_tree(make_tree, files=3))], Config(jobs=1, cache=False))
    assert not private_cache.exists()


def test_corrupt_cache_is_rebuilt_with_a_warning(make_tree: TreeFactory, private_cache: Path) -> None:
    root = _tree(make_tree, files=4)
    private_cache.mkdir(parents=True)
    (private_cache / FILE_NAME).write_bytes(b"this is not a database" * 100)
    result = scan([str(root)], Config(cache=True, jobs=1))
    assert any("was unusable" in w and "rebuilt" in w for w in result.warnings)
    assert result.stats.cache["lexed"] == 4
    again = scan([str(root)], Config(cache=True, jobs=1))
    assert again.stats.cache == {"hits": 4, "lexed": 0, "copies": 0, "result": 0} and not again.warnings


def test_foreign_sqlite_file_is_not_used(make_tree: TreeFactory, private_cache: Path) -> None:
    private_cache.mkdir(parents=True)
    db = sqlite3.connect(private_cache / FILE_NAME)
    db.execute("CREATE TABLE files (x)")
    db.commit()
    db.close()
    result = scan([str(_tree(make_tree, files=3))], Config(cache=True, jobs=1))
    assert any("not a minhashdup cache" in w for w in result.warnings)


def test_unusable_cache_folder_is_a_warning(make_tree: TreeFactory, tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("")
    result = scan([str(_tree(make_tree, files=3))], Config(jobs=1, cache_dir=str(blocker / "sub")))
    assert any("scanning without it" in w for w in result.warnings)
    assert result.stats.files_scanned == 3


def _cli(*args: str, cache: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "minhashdup", *args, "--cache-dir", str(cache)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# ``python -c`` program: minhashdup whose first write of new files stops before its COMMIT,
# the rows inserted and the write lock held, after writing the marker file argv[1].
_STALL_BEFORE_COMMIT = """
import sqlite3, sys, time
from pathlib import Path

marker, real_connect = Path(sys.argv[1]), sqlite3.connect


class Stalling(sqlite3.Connection):
    pending = False

    def executemany(self, sql, rows):
        cursor = super().executemany(sql, rows)
        self.pending = self.pending or "INTO files" in sql
        return cursor

    def execute(self, sql, *args):
        if self.pending and sql.strip().upper() == "COMMIT":
            self.commit()
        return super().execute(sql, *args)

    def commit(self):
        if self.pending:
            marker.write_text("in a write transaction")
            time.sleep(3600)
        super().commit()


sqlite3.connect = lambda *a, **k: real_connect(*a, **{"factory": Stalling, **k})
sys.argv[1:2] = []
from minhashdup.cli import main

main()
"""


def _kill_when(victim: subprocess.Popen[str], marker: Path) -> None:
    """Kill ``victim`` (SIGKILL) once ``marker`` exists; fail if it ends before."""
    deadline = time.monotonic() + 120  # a guard against a hang, not a timing assertion
    while not marker.exists():
        assert victim.poll() is None, victim.communicate()
        assert time.monotonic() < deadline, "the scan never reached its cache write"
        time.sleep(0.01)
    victim.kill()
    victim.communicate()


def _file_rows(cache: Path) -> int:
    db = sqlite3.connect(cache / FILE_NAME)
    try:
        return int(db.execute("SELECT count(*) FROM files").fetchone()[0])
    finally:
        db.close()


def test_two_scans_at_once_and_a_killed_scan_leave_it_usable(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = _tree(make_tree, files=60)
    cache = tmp_path / "shared"
    both = [_cli("scan", str(root), "-f", "json", "-q", cache=cache) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in both]
    assert [p.returncode for p in both] == [0, 0], outs
    first, second = (json.loads(o)["pairs"] for o, _ in outs)
    assert first == second and first
    assert _file_rows(cache) == 60
    # Killed in the middle of writing 60 new entries (--shingle 3: new keys), the lock held.
    marker = tmp_path / "stalled"
    args = ["scan", str(root), "-f", "json", "-q", "--shingle", "3", "--cache-dir", str(cache)]
    victim = subprocess.Popen(
        [sys.executable, "-c", _STALL_BEFORE_COMMIT, str(marker), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _kill_when(victim, marker)
    assert victim.returncode == -signal.SIGKILL
    assert _file_rows(cache) == 60  # nothing of the killed write is visible
    again = _cli("scan", str(root), "-f", "json", "-q", "--shingle", "3", cache=cache)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0 and "unusable" not in err and "not updated" not in err, err
    assert json.loads(out)["stats"]["cache"] == {"hits": 0, "lexed": 60, "copies": 0, "result": 0}
    assert _file_rows(cache) == 120
    db = sqlite3.connect(cache / FILE_NAME)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_cache_info_and_clear(make_tree: TreeFactory, private_cache: Path) -> None:
    scan([str(_tree(make_tree, files=4))], Config(cache=True, jobs=1))
    runner = CliRunner()
    info = runner.invoke(cli, ["cache", "info", "-f", "json"])
    assert info.exit_code == ExitCode.OK
    doc = json.loads(info.stdout)
    assert doc["files"] == 4 and doc["signatures"] == 4 and doc["path"] == str(private_cache / FILE_NAME)
    cleared = runner.invoke(cli, ["cache", "clear"])
    assert cleared.exit_code == ExitCode.OK and "cleared" in cleared.stdout
    assert json.loads(runner.invoke(cli, ["cache", "info", "-f", "json"]).stdout)["files"] == 0


def test_unchanged_stat_skips_reading_but_a_recent_file_is_read_again(
    make_tree: TreeFactory, lexed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    root = _tree(make_tree, files=6)
    old = time.time() - 3600
    for path in root.rglob("*.go"):
        os.utime(path, (old, old))  # settled files: their stat is trusted next time
    monkeypatch.setattr(witnesses, "RACY_SECONDS", 0.0)  # their ctimes too (now: utime cannot set them back)
    scan([str(root)], Config(cache=True, jobs=1))
    reads: list[str] = []
    real_open = os.open  # what minhashdup.source.safeio reads files with

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith(".go"):
            reads.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    assert scan([str(root)], Config(cache=True, jobs=1)).stats.cache == {
        "hits": 6,
        "lexed": 0,
        "copies": 0,
        "result": 1,
    }
    assert reads == []  # nothing read: size, mtime and inode all matched
    # Same size, rewritten just now: the mtime differs, so the file is read, hashed, lexed.
    target = sorted(root.rglob("*.go"))[0]
    text = target.read_text()
    monkeypatch.setattr(os, "open", real_open)
    target.write_text(text.replace("return", "RETURN", 1))
    lexed.clear()
    result = scan([str(root)], Config(cache=True, jobs=1))
    assert result.stats.cache == {"hits": 5, "lexed": 1, "copies": 0, "result": 0} and len(lexed) == 1


def test_a_cache_that_cannot_be_written_is_a_warning(make_tree: TreeFactory, private_cache: Path) -> None:
    root = _tree(make_tree, files=3)
    scan([str(root)], Config(cache=True, jobs=1))  # create it
    db = sqlite3.connect(private_cache / FILE_NAME, timeout=0.1)
    db.execute("BEGIN EXCLUSIVE")  # another process holds the write lock for the whole scan
    try:
        (root / "p00" / "f00.go").write_text((root / "p00" / "f00.go").read_text() + "\nvar z = 1\n")
        from minhashdup.engine import cache as cache_module

        original = cache_module.Cache._open

        def short_timeout(self: Any) -> Any:
            connection = original(self)
            connection.execute("PRAGMA busy_timeout = 100")
            return connection

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cache_module.Cache, "_open", short_timeout)
            result = scan([str(root)], Config(cache=True, jobs=1))
    finally:
        db.rollback()
        db.close()
    assert result.stats.files_scanned == 3 and result.pairs
    assert any("was not updated" in w for w in result.warnings)


_OPEN_AND_QUERY = """
import sys, time
from pathlib import Path
from minhashdup.engine.cache import Cache
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))  # all start together
with Cache(Path(sys.argv[1])) as store:
    store.get_stats(["x"])
    print(len(store.warnings))
"""


def test_processes_creating_a_missing_cache_at_once_all_use_it(tmp_path: Path) -> None:
    # Each round starts eight processes on a folder with no cache: one creates it, none may
    # take a half-made file for a foreign one and move it aside.
    for round_ in range(4):
        folder = tmp_path / f"round{round_}"
        start = str(time.time() + 1.0)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _OPEN_AND_QUERY, str(folder), start],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(8)
        ]
        outs = [p.communicate(timeout=60) for p in procs]
        assert [(p.returncode, o.strip()) for p, (o, _) in zip(procs, outs, strict=True)] == [(0, b"0")] * 8, outs
        assert [p.name for p in folder.iterdir() if "broken" in p.name] == []


def _without_run(result: Any) -> dict[str, Any]:
    doc = result.to_dict()
    for key in ("seconds", "cpu_seconds", "cache"):
        doc["stats"].pop(key)
    return {**doc, "skips": result.skips, "warnings": result.warnings, "files": result.files, "rej": result.rejected}


def test_an_unchanged_scan_replays_its_result_without_loading_a_shingle(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(make_tree)
    (root / "tiny.go").write_text("package gen\n")  # a skip, which the replay must repeat
    config = Config(cache=True, jobs=1, threshold=0.3)
    cold = scan([str(root)], config)
    assert cold.stats.cache["result"] == 0 and cold.skips and cold.pairs

    def no_loading(*args: Any) -> Any:
        raise AssertionError("shingles loaded")

    monkeypatch.setattr(Cache, "get_many", no_loading)
    warm = scan([str(root)], config)
    assert warm.stats.cache == {"hits": 31, "lexed": 0, "copies": 0, "result": 1}
    assert _without_run(warm) == _without_run(cold)
    assert [p.jaccard for p in warm.pairs] == [p.jaccard for p in cold.pairs]  # full precision


@pytest.mark.parametrize(
    "change",
    ["threshold", "edit", "rename", "new file", "exclude"],
)
def test_any_change_of_input_computes_afresh(make_tree: TreeFactory, change: str) -> None:
    root = _tree(make_tree, files=8)
    config = Config(cache=True, jobs=1)
    scan([str(root)], config)
    first = sorted(root.rglob("*.go"))[0]
    if change == "threshold":
        config = Config(cache=True, jobs=1, threshold=0.7)
    elif change == "edit":
        first.write_text(first.read_text() + "\nvar edited = 1\n")
    elif change == "rename":
        first.rename(first.with_name("renamed.go"))
    elif change == "new file":
        (root / "extra.go").write_text(first.read_text())
    else:
        config = Config(cache=True, jobs=1, exclude=(first.name,))
    again = scan([str(root)], config)
    assert again.stats.cache["result"] == 0
    assert _without_run(again) == _without_run(scan([str(root)], dataclasses.replace(config, cache=False)))


def test_results_with_passing_failures_are_not_replayed() -> None:
    failed = Result({}, Stats(), [], [], [Skip("x.go", SkipReason.LEX_ERROR, "worker died")])
    assert not storable(failed)
    assert storable(Result({}, Stats(), [], [], [Skip("y.go", SkipReason.TOO_SMALL)]))


def test_the_stats_key_changes_with_every_stat_path_and_kind_and_takes_any_inode() -> None:
    config = Config(cache=True)
    files = [FileEntry("a.go", "/t/a.go", 10, 5, 7, ctime_ns=6), FileEntry("b.go", "/t/b.go", 20, -5, 8, ctime_ns=9)]
    skips = [Skip("c.go", SkipReason.TOO_SMALL)]
    key = stats_key(config, files, skips)
    assert stats_key(config, [dataclasses.replace(f) for f in files], list(skips)) == key
    changes = [{"path": "z.go"}, {"real": "/t/z.go"}, {"size": 11}, {"mtime_ns": 4}, {"ctime_ns": 5}]
    changes += [{"inode": 9}, {"vendored": True}, {"check_generated": True}, {"data_ok": False}]
    for change in changes:
        assert stats_key(config, [dataclasses.replace(files[0], **change), files[1]], skips) != key, change
    assert stats_key(config, files[:1], skips) != key
    assert stats_key(config, files, []) != key
    assert stats_key(config, files, [Skip("c.go", SkipReason.TOO_LARGE)]) != key
    # An inode past 2**63 (some file systems give them) does not fit a signed 64-bit word: as text.
    huge = [dataclasses.replace(files[0], inode=2**64 - 1), files[1]]
    assert stats_key(config, huge, skips) not in (
        key,
        stats_key(config, [dataclasses.replace(huge[0], inode=2**64 - 2), files[1]], skips),
    )
