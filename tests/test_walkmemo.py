"""A warm scan's walk comes from a memo (issue 17): it lists no folder, yet finds exactly what a
walk of the tree as it is now would, whatever changed in between."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from minhashdup import Config, scan
from minhashdup.engine import cached, parallel, pipeline
from minhashdup.source import witnesses
from minhashdup.source.kinds import Kinds
from minhashdup.source.walk import WalkResult, walk

from .conftest import TreeFactory, go_file, near_copy, render_go

OPTIONS: dict[str, Any] = {"include": ["*.go", "*.txt"], "exclude": ["skip"], "gitignore": True}
KINDS = Kinds()


class Memos:
    """A store of memos in a dict (the cache's role), counting what is put."""

    def __init__(self) -> None:
        self.docs: dict[bytes, bytes] = {}
        self.puts = 0

    def get_memo(self, key: bytes) -> bytes | None:
        return self.docs.get(key)

    def put_memo(self, key: bytes, doc: bytes) -> None:
        self.puts += 1
        self.docs[key] = doc


@pytest.fixture
def settled_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree made by the test counts as settled once a tick has passed (RACY_SECONDS 0, for the
    walk's memo and the stat cache: a file's ctime, which no utime sets back, is part of its stat):
    the tests wait that tick after making or changing it."""
    monkeypatch.setattr(witnesses, "RACY_SECONDS", 0.0)


def _tick() -> None:
    time.sleep(0.03)  # past the file system's timestamp granularity (a jiffy at most)


def _listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    listed: list[str] = []
    real = os.scandir

    def counting(path: Any = ".") -> Any:
        listed.append(str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    return listed


def _remembered(root: Path, memos: Memos, **options: Any) -> WalkResult:
    chosen = {**OPTIONS, **options}
    return pipeline.remembered_walk([str(root)], memos, max_size=1 << 20, kinds=KINDS, **chosen)


def _fresh(root: Path, **options: Any) -> WalkResult:
    return walk([str(root)], **{**OPTIONS, **options})


def _tree(make_tree: TreeFactory) -> Path:
    root = make_tree(
        {
            "a.go": "package a\n",
            "b.txt": "text\n",
            "sub/c.go": "package c\n",
            "sub/deep/d.go": "package d\n",
            "sub/.gitignore": "ignored.go\n",
            "sub/ignored.go": "package i\n",
            "skip/e.go": "package e\n",
            "gen/.gitattributes": "*.go linguist-generated\n",
            "gen/f.go": "package f\n",
            "big.go": "x" * 2000,
        }
    )
    os.symlink("sub/c.go", root / "link.go")
    os.symlink("sub", root / "linkdir")
    return root


def test_a_remembered_walk_lists_no_folder_and_finds_what_a_walk_finds(
    make_tree: TreeFactory, settled_now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(make_tree)
    _tick()
    memos = Memos()
    first = _remembered(root, memos)
    assert memos.puts == 1 and first == _fresh(root)
    listed = _listings(monkeypatch)
    again = _remembered(root, memos)
    assert listed == [] and memos.puts == 1
    assert again == first
    # The files are stat'ed afresh: a size limit applies to the remembered walk too.
    small = pipeline.remembered_walk([str(root)], memos, max_size=100, kinds=KINDS, **OPTIONS)
    assert [s.path for s in small.skips if s.reason.value == "too-large"] == [str(root / "big.go")]


CHANGES: dict[str, Callable[[Path], None]] = {
    "a file added in a subfolder": lambda root: (root / "sub" / "deep" / "new.go").write_text("package n\n"),
    "a file removed": lambda root: (root / "sub" / "deep" / "d.go").unlink(),
    "a file renamed": lambda root: (root / "a.go").rename(root / "a2.go"),
    "a folder renamed": lambda root: (root / "sub" / "deep").rename(root / "sub" / "skip"),
    "a .gitignore edited, same size": lambda root: (root / "sub" / ".gitignore").write_text("ignorex.go\n"),
    "a .gitignore added": lambda root: (root / "sub" / "deep" / ".gitignore").write_text("d.go\n"),
    "a .gitignore moved in from another folder": lambda root: (root / "sub" / ".gitignore").rename(
        root / "sub" / "deep" / ".gitignore"
    ),
    "a .gitattributes edited": lambda root: (root / "gen" / ".gitattributes").write_text("*.txt linguist-generated\n"),
    "a .gitattributes added": lambda root: (root / "sub" / "deep" / ".gitattributes").write_text(
        "*.go linguist-generated\n"
    ),
    "a link retargeted": lambda root: (os.unlink(root / "link.go"), os.symlink("a.go", root / "link.go")),
    "a link's target removed": lambda root: (root / "sub" / "c.go").unlink(),
    "a repository made above the root": lambda root: (
        (root.parent / ".git").mkdir(),
        (root.parent / ".gitignore").write_text("a.go\n"),
    ),
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_a_memo_is_not_used_once_the_tree_changed(
    make_tree: TreeFactory, settled_now: None, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(make_tree)
    _tick()
    memos = Memos()
    before = _remembered(root, memos)
    CHANGES[change](root)
    now = _fresh(root)
    assert now != before  # the change shows in a walk
    listed = _listings(monkeypatch)
    assert _remembered(root, memos) == now
    assert listed  # walked again, not remembered


def test_below_the_root_a_walk_opens_only_the_rules_files_its_listings_hold(make_tree: TreeFactory) -> None:
    # A rules file a folder does not hold is neither looked for nor a witness of the memo: the
    # folder's own stat, taken before its listing, changes when one is added (above).
    root = _tree(make_tree)
    with witnesses.recording() as seen:
        found = _fresh(root)
    looked = {Path(path) for kind, path, _ in seen if kind != "exists"}
    below = {str(path) for path in looked if root in path.parent.parents}  # in a folder under the root
    rules = {path for path in below if os.path.basename(path) in (".gitignore", ".gitattributes")}
    assert rules == {str(root / "sub" / ".gitignore"), str(root / "gen" / ".gitattributes")}
    assert str(root / "sub" / "ignored.go") not in [f.path for f in found.files]  # its rules applied
    assert str(root / "gen" / "f.go") not in [f.path for f in found.files]  # generated, by its attributes


def test_a_rules_file_named_in_another_case_is_looked_for_and_witnessed(
    make_tree: TreeFactory, settled_now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # .GITIGNORE is .gitignore where names ignore case: the walk looks for .gitignore there (here,
    # where case counts, it finds none), and renaming one to the other is seen by the memo.
    root = _tree(make_tree)
    (root / "sub" / "deep" / ".GITIGNORE").write_text("d.go\n")
    _tick()
    with witnesses.recording() as seen:
        before = _fresh(root)
    assert ("lstat", str(root / "sub" / "deep" / ".gitignore")) in {(kind, path) for kind, path, _ in seen}
    memos = Memos()
    assert _remembered(root, memos) == before
    (root / "sub" / "deep" / ".GITIGNORE").rename(root / "sub" / "deep" / ".gitignore")
    listed = _listings(monkeypatch)
    now = _remembered(root, memos)
    assert listed and now == _fresh(root) != before
    assert str(root / "sub" / "deep" / "d.go") not in [f.path for f in now.files]


def test_a_just_changed_tree_is_not_remembered(make_tree: TreeFactory) -> None:
    # A stat taken in the same clock tick as a change may not show a later change in that tick:
    # a walk that saw anything changed within RACY_SECONDS keeps no memo.
    root = _tree(make_tree)
    memos = Memos()
    assert _remembered(root, memos) == _fresh(root)
    assert memos.puts == 0


def test_options_and_the_current_folder_are_part_of_the_key(
    make_tree: TreeFactory, settled_now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(make_tree)
    _tick()
    memos = Memos()
    _remembered(root, memos)
    other = _remembered(root, memos, include=["*.go"])
    assert other == _fresh(root, include=["*.go"]) and memos.puts == 2
    elsewhere = make_tree({"sub/other.go": "package o\n"}, "elsewhere")
    _tick()
    found = []
    for folder in (root, elsewhere, root, elsewhere):  # "sub" under each: the same relative path
        monkeypatch.chdir(folder)
        found.append(pipeline.remembered_walk(["sub"], memos, max_size=1 << 20, kinds=KINDS, **OPTIONS))
        assert found[-1] == walk(["sub"], **OPTIONS)
    assert found[0] != found[1] and memos.puts == 4


def _memo(**doc: object) -> bytes:
    base = {"witnesses": [], "shown": ["a"], "full": {}, "real": {}, "flags": [2], "before": [0]}
    return zlib.compress(json.dumps({**base, "skips": [], "warnings": [], "nested": [], **doc}).encode())


@pytest.mark.parametrize(
    "doc",
    [
        b"",
        b"not zlib",
        b"x\x9c\x03\x00\x00\x00\x00\x01",
        _memo(full=[]),
        _memo(real={"-1": "b"}),
        _memo(full={"1": "b"}),
        _memo(flags=[-1]),
        _memo(flags=[32]),
        _memo(before=[]),
    ],
    ids=["empty", "junk", "zlib", "full-a-list", "negative-place", "place-past-end", "flags-1", "flags-32", "short"],
)
def test_a_memo_that_cannot_be_read_is_not_used(make_tree: TreeFactory, settled_now: None, doc: bytes) -> None:
    root = _tree(make_tree)
    _tick()
    memos = Memos()
    _remembered(root, memos)
    for key in memos.docs:
        memos.docs[key] = doc
    assert _remembered(root, memos) == _fresh(root)


def _settled_go_tree(make_tree: TreeFactory) -> Path:
    rng = random.Random(7)
    base = go_file(rng, 6)
    root = make_tree({f"f{i}.go": render_go(near_copy(base, rng, 1)) for i in range(4)})
    old = time.time() - 3600
    for path in [*root.iterdir(), root]:
        os.utime(path, (old, old))
    return root


def test_a_warm_scan_of_a_settled_tree_needs_no_file_key(
    make_tree: TreeFactory, settled_now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its result is found by the files' stats (codec.stats_key), kept by the scan before.
    root = _settled_go_tree(make_tree)
    _tick()
    config = Config(cache=True, jobs=1, threshold=0.3)
    cold = scan([str(root)], config)
    listed = _listings(monkeypatch)

    def no_keys(*args: Any) -> Any:
        raise AssertionError("file keys computed")

    monkeypatch.setattr(cached, "file_keys", no_keys)
    warm = scan([str(root)], config)
    assert warm.stats.cache["result"] == 1 and listed == []
    assert warm.pairs == cold.pairs and warm.skips == cold.skips


def test_files_just_written_are_not_found_by_their_stats(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stat taken within RACY_SECONDS of a write may not show the next one: such files' keys are
    # computed again (read and digested), and the result is found by them, never by the stats.
    root = make_tree({f"f{i}.go": render_go(go_file(random.Random(i), 6)) for i in range(3)})
    config = Config(cache=True, jobs=1, threshold=0.3)
    scan([str(root)], config)
    calls: list[int] = []
    real = cached.file_keys

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(cached, "file_keys", counted)
    for _ in range(2):
        assert scan([str(root)], config).stats.cache["result"] == 1
    assert calls == [1, 1]


def test_a_warm_scan_imports_no_glob_compiler(make_tree: TreeFactory, tmp_path: Path) -> None:
    # Most of what a warm scan of an unchanged tree costs is imports: pathspec with RE2 and
    # hashlib's OpenSSL are left to the runs that compile a glob or hash what no memo holds, the
    # baseline's module (and its clustering) to the runs that read or write a baseline; the
    # walk, its rules files and the per-file stage to the runs that list the tree or lex.
    root = _settled_go_tree(make_tree)
    _tick()
    code = (  # settled once a tick has passed, as under settled_now (utime just set the ctimes)
        "import sys, minhashdup; from minhashdup.source import witnesses; witnesses.RACY_SECONDS = 0.0;"
        " r = minhashdup.scan(sys.argv[1], include=['*.go'], exclude=['vendor/'],"
        " cache_dir=sys.argv[2], jobs=1, threshold=0.3); print(r.stats.cache['result'], len(r.pairs),"
        " [m for m in ('pathspec', 're2', 'hashlib', 'tomllib', 'minhashdup.ci.baseline', 'minhashdup.source.walk',"
        " 'minhashdup.source.rules.ignore', 'minhashdup.source.rules.attributes', 'minhashdup.source.extracted',"
        " 'minhashdup.engine.local') if m in sys.modules])"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code, str(root), str(tmp_path / "cache")], capture_output=True, text=True)
        for _ in range(2)
    ]
    cold, warm = (run.stdout.split(" ", 2) for run in runs)
    assert cold[0] == "0" and "'pathspec'" in cold[2] and "'minhashdup.source.walk'" in cold[2]  # it walked, lexed
    assert warm[:2] == ["1", cold[1]] and warm[2].strip() == "[]"


def test_an_edited_file_is_seen_by_a_warm_scan(make_tree: TreeFactory, settled_now: None) -> None:
    root = _settled_go_tree(make_tree)
    _tick()
    config = Config(cache=True, jobs=1, threshold=0.3)
    scan([str(root)], config)
    (root / "f1.go").write_text((root / "f0.go").read_text())  # now a copy of f0.go
    warm = scan([str(root)], config)
    fresh = scan([str(root)], Config(cache=False, jobs=1, threshold=0.3))
    assert warm.pairs == fresh.pairs and warm.stats.cache["result"] == 0
    assert any(p.jaccard == 1.0 for p in warm.pairs)


def test_a_root_given_as_a_link_is_followed_where_it_leads_now(
    make_tree: TreeFactory, settled_now: None, tmp_path: Path
) -> None:
    first = make_tree({"a.go": "package a\n", "sub/b.go": "package b\n"}, "first")
    second = make_tree({"c.go": "package c\n", "sub/b.go": "package b\n"}, "second")
    link = tmp_path / "current"
    os.symlink(first, link)
    _tick()
    memos = Memos()
    before = pipeline.remembered_walk([str(link)], memos, max_size=1 << 20, kinds=KINDS, **OPTIONS)
    os.unlink(link)
    os.symlink(second, link)
    after = pipeline.remembered_walk([str(link)], memos, max_size=1 << 20, kinds=KINDS, **OPTIONS)
    assert after == walk([str(link)], **OPTIONS) != before


def test_a_link_that_resolves_through_a_link_outside_the_tree_is_followed_anew(
    make_tree: TreeFactory, settled_now: None, tmp_path: Path
) -> None:
    # Nothing in the tree changes when a link outside it is retargeted: the link's own witness
    # (where it resolves to) tells.
    root = _tree(make_tree)
    outside = tmp_path / "outside"
    os.symlink(root / "sub", outside)
    os.symlink(outside, root / "via")
    _tick()
    memos = Memos()
    before = _remembered(root, memos)
    os.unlink(outside)
    os.symlink(root / "gen", outside)
    now = _fresh(root)
    assert _remembered(root, memos) == now != before


def test_a_named_file_that_became_a_folder_is_walked(make_tree: TreeFactory, settled_now: None, tmp_path: Path) -> None:
    root = make_tree({"x.go": "package x\n"})
    _tick()
    memos = Memos()
    named = pipeline.remembered_walk([str(root / "x.go")], memos, max_size=1 << 20, kinds=KINDS, **OPTIONS)
    (root / "x.go").unlink()
    (root / "x.go").mkdir()
    (root / "x.go" / "y.go").write_text("package y\n")
    again = pipeline.remembered_walk([str(root / "x.go")], memos, max_size=1 << 20, kinds=KINDS, **OPTIONS)
    assert again == walk([str(root / "x.go")], **OPTIONS) != named
    assert [f.path for f in again.files] == [str(root / "x.go" / "y.go")]


def test_a_files_own_skip_keeps_its_place_among_the_walks(make_tree: TreeFactory) -> None:
    # The files' stats come after the walk (Found.result): each skip they make goes where the
    # file was found, as when the walk stat'ed each file as it went.
    root = make_tree({"a0/c.go": "package c\n", "a1.go": "x" * 500, "b/c.go": "package c\n", "d.go": "package d\n"})
    found = walk([str(root)], include=["*.go"], exclude=["a0", "b"], max_size=100)
    skips = [(Path(s.path).name, s.reason.value) for s in found.skips]
    assert skips == [("a0", "excluded"), ("a1.go", "too-large"), ("b", "excluded")]


# The fork server starts where lexing is likely, so that its start overlaps the walk (no cache)
# or the digests (a result not found by the files' stats), and not for a scan that replays.


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real_walk, real_keys = pipeline.remembered_walk, cached.file_keys
    monkeypatch.setattr(parallel, "start_early", lambda workers: seen.append(f"early {workers}"))

    def walk_seen(*args: Any, **kwargs: Any) -> Any:
        seen.append("walk")
        return real_walk(*args, **kwargs)

    def keys_seen(*args: Any) -> Any:
        seen.append("keys")
        return real_keys(*args)

    monkeypatch.setattr(pipeline, "remembered_walk", walk_seen)
    monkeypatch.setattr(cached, "file_keys", keys_seen)
    return seen


def test_without_a_cache_the_fork_server_starts_before_the_walk(make_tree: TreeFactory, events: list[str]) -> None:
    scan([str(_settled_go_tree(make_tree))], Config(cache=False, jobs=2, threshold=0.3))
    assert events == ["early 2", "walk"]


def test_with_a_cache_it_starts_before_the_digests_unless_the_stats_find_the_result(
    make_tree: TreeFactory, settled_now: None, events: list[str]
) -> None:
    root = _settled_go_tree(make_tree)
    _tick()
    config = Config(cache=True, jobs=2, threshold=0.3)
    scan([str(root)], config)
    assert events == ["walk", "early 2", "keys"]
    events.clear()
    scan([str(root)], config)
    assert events == ["walk"]


@pytest.mark.parametrize(("workers", "cores", "started"), [(1, 4, 0), (2, 1, 0), (2, 2, 1), (0, 2, 0)])
def test_start_early_starts_a_fork_server_only_for_a_pool_of_several(
    monkeypatch: pytest.MonkeyPatch, workers: int, cores: int, started: int
) -> None:
    calls: list[None] = []
    monkeypatch.setattr(parallel, "usable_cores", lambda: cores)
    monkeypatch.setattr(parallel, "_start_fork_server", lambda: calls.append(None))
    parallel.start_early(workers)
    assert len(calls) == started


def test_who_walks_is_part_of_the_key(
    make_tree: TreeFactory, settled_now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A folder another group may list is "unreadable" to a user outside it, whatever the tree.
    root = _tree(make_tree)
    _tick()
    memos = Memos()
    _remembered(root, memos)
    monkeypatch.setattr(os, "getgroups", lambda: [4242])
    _remembered(root, memos)
    assert memos.puts == 2


def test_without_a_current_folder_the_walk_is_not_remembered(
    make_tree: TreeFactory, settled_now: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = _tree(make_tree)
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    memos = Memos()
    assert _remembered(root, memos) == _fresh(root) and memos.puts == 0


@pytest.mark.parametrize("path", ["no\0such", "bad\ud800name"], ids=["nul", "surrogate"])
def test_an_impossible_path_is_refused_as_without_a_memo(path: str) -> None:
    from minhashdup.errors import InputPathError

    with pytest.raises(InputPathError):
        walk([path])
    with pytest.raises(InputPathError):
        pipeline.remembered_walk([path], Memos(), max_size=1 << 20, kinds=KINDS)


def test_a_gitignore_past_the_nesting_limit_is_witnessed(make_tree: TreeFactory, settled_now: None) -> None:
    # One nested under IGNORE_NESTING_LIMIT others is not read, only named in a warning: it is
    # probed all the same, and one added there is a change.
    from minhashdup.source.rules.ignore import IGNORE_NESTING_LIMIT

    deep = "/".join(f"d{i}" for i in range(IGNORE_NESTING_LIMIT + 1))
    files = {
        f"{'/'.join(f'd{i}' for i in range(k))}/.gitignore".lstrip("/"): "x\n" for k in range(IGNORE_NESTING_LIMIT)
    }
    files[f"{deep}/a.go"] = "package a\n"
    root = make_tree(files)
    _tick()
    memos = Memos()
    before = _remembered(root, memos)
    (root / deep / ".gitignore").write_text("y\n")
    now = _fresh(root)
    assert now.warnings != before.warnings
    assert _remembered(root, memos) == now


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_result_found_again_gives_the_warnings_of_its_own_walk(make_tree: TreeFactory, settled_now: None) -> None:
    # An ignore file above the root changes what the walk warns of, not which files it walks: the
    # result found again carries the warnings of this run's walk, not those of the run that kept it.
    rng = random.Random(3)
    base = go_file(rng, 6)
    top = make_tree({".gitignore": "sub/\n", **{f"sub/f{i}.go": render_go(near_copy(base, rng, 1)) for i in range(3)}})
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    root, config = [str(top / "sub")], Config(cache=True, jobs=1, threshold=0.3)
    _tick()
    first = scan(root, config)
    assert len([w for w in first.warnings if "scanned as named" in w]) == 1 and first.pairs
    (top / ".gitignore").write_text("*.txt\n")
    _tick()
    warm, cold = scan(root, config), scan(root, Config(cache=False, jobs=1, threshold=0.3))
    assert warm.stats.cache["result"] == 1 and warm.warnings == cold.warnings == []
    assert warm.pairs == cold.pairs == first.pairs
    (top / ".gitignore").write_text("sub/\n")
    _tick()
    again = scan(root, config)
    assert again.stats.cache["result"] == 1 and again.warnings == first.warnings
