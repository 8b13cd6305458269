"""A repository's contents cannot make the walk unbounded (issue 11, item 5).

Links that multiply the walk, ignore files that never end or never open, special files where
sources are expected, trees too deep to recurse: each ends in bounded work, with a skip or a
warning that says what was left out.
"""

from __future__ import annotations

import errno
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pathspec
import pytest

from minhashdup.errors import ExitCode
from minhashdup.source.rules.ignore import IGNORE_NESTING_LIMIT, compile_globs
from minhashdup.source.safeio import IGNORE_FILE_LIMIT
from minhashdup.source.walk import Skip, SkipReason, WalkResult, walk

from .conftest import TreeFactory, go_file, render_go, run

GO = "package x\n"
NOT_APPLIED = "its rules are not applied, so the files it lists are scanned"


def _rel(result: WalkResult, root: Path) -> tuple[list[str], dict[str, tuple[SkipReason, str]]]:
    """Files in walk order and skips (reason, detail), as paths relative to ``root``."""
    files = [os.path.relpath(f.path, root) for f in result.files]
    skips = {os.path.relpath(s.path, root) + ("/" if s.path.endswith("/") else ""): _why(s) for s in result.skips}
    return files, skips


def _why(skip: Skip) -> tuple[SkipReason, str]:
    return skip.reason, skip.detail


class Blocked(Exception):
    """Not an OSError: the code under test must not be able to catch it as a read failure."""


@pytest.fixture
def hang_guard() -> Iterator[None]:
    """Turn a walk that does not end (blocked opening a FIFO, or backtracking in a regex) into a
    failure after 30 s; the walks under test take milliseconds."""

    def interrupt(signum: int, frame: Any) -> None:
        raise Blocked("the walk did not end in 30 s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.alarm(30)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _count_listings(monkeypatch: pytest.MonkeyPatch, limit: int) -> list[str]:
    """Record the folders the walk lists; fail as soon as it lists more than ``limit``."""
    listed: list[str] = []
    real_scandir = os.scandir

    def scandir(path: str) -> Any:
        listed.append(path)
        if len(listed) > limit:
            raise AssertionError(f"the walk listed more than {limit} folders: {listed[-3:]} ...")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return listed


# --- links -------------------------------------------------------------------------------------


def test_symlink_ladder_lists_each_folder_once(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # d0/{a,b} -> d1, d1/{a,b} -> d2, ...: following every link lists d20 2**20 times.
    levels = 20
    root = make_tree({f"d{i:02}/f.go": GO for i in range(levels + 1)})
    for i in range(levels):
        for name in "ab":
            os.symlink(root / f"d{i + 1:02}", root / f"d{i:02}" / name)
    listed = _count_listings(monkeypatch, limit=10 * levels)
    files, skips = _rel(walk([str(root)]), root)
    assert len(listed) == levels + 2  # the root and each real folder, once
    assert files == [f"d{i:02}/f.go" for i in range(levels + 1)]
    assert skips == {
        f"d{i:02}/{name}/": (SkipReason.DUPLICATE, f"same folder as {root / f'd{i + 1:02}'}")
        for i in range(levels)
        for name in "ab"
    }


def test_nested_ladder_reached_only_through_links_is_walked_once(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real folders are excluded: each is walked under the first link to it, by name.
    levels = 20
    root = make_tree({f"real/d{i}/f.go": GO for i in range(levels + 1)})
    os.symlink(root / "real" / "d0", root / "start")
    for i in range(levels):
        for name in "ba":  # created in reverse: the listing is sorted, not in creation order
            os.symlink(root / "real" / f"d{i + 1}", root / "real" / f"d{i}" / name)
    listed = _count_listings(monkeypatch, limit=10 * levels)
    files, skips = _rel(walk([str(root)], exclude=["/real"]), root)
    assert len(listed) == levels + 2
    walked_as = ["start"]
    for _ in range(levels):
        walked_as.append(walked_as[-1] + "/a")
    assert files == [f"{folder}/f.go" for folder in walked_as]
    assert skips == {
        "real/": (SkipReason.EXCLUDED, ""),
        **{f"{folder}/b/": (SkipReason.DUPLICATE, f"same folder as {root / folder}/a") for folder in walked_as[:-1]},
    }


def test_folder_is_shown_under_its_path_without_links(make_tree: TreeFactory) -> None:
    # "a_link" sorts before "z_real": the path without a link still wins.
    root = make_tree({"z_real/f.go": GO, "z_real/sub/g.go": GO})
    os.symlink(root / "z_real", root / "a_link")
    os.symlink(root / "z_real" / "sub", root / "b_link")
    files, skips = _rel(walk([str(root)]), root)
    assert files == ["z_real/f.go", "z_real/sub/g.go"]
    assert skips == {
        "a_link/": (SkipReason.DUPLICATE, f"same folder as {root / 'z_real'}"),
        "b_link/": (SkipReason.DUPLICATE, f"same folder as {root / 'z_real' / 'sub'}"),
    }


def test_folder_reached_again_inside_a_linked_folder_is_a_duplicate(make_tree: TreeFactory) -> None:
    # hidden/ is excluded; "a" leads to hidden/inner, then "b" to hidden, which holds inner again.
    root = make_tree({"hidden/top.go": GO, "hidden/inner/f.go": GO})
    os.symlink(root / "hidden" / "inner", root / "a")
    os.symlink(root / "hidden", root / "b")
    files, skips = _rel(walk([str(root)], exclude=["/hidden"]), root)
    assert files == ["a/f.go", "b/top.go"]
    assert skips == {
        "hidden/": (SkipReason.EXCLUDED, ""),
        "b/inner/": (SkipReason.DUPLICATE, f"same folder as {root / 'a'}"),
    }


def test_file_reached_through_two_links_is_scanned_once(make_tree: TreeFactory) -> None:
    root = make_tree({"hidden/a.go": GO})
    os.symlink(root / "hidden" / "a.go", root / "l2.go")
    os.symlink(root / "hidden" / "a.go", root / "l1.go")
    files, skips = _rel(walk([str(root)], exclude=["hidden"]), root)
    assert files == ["l1.go"]
    assert skips == {
        "hidden/": (SkipReason.EXCLUDED, ""),
        "l2.go": (SkipReason.DUPLICATE, f"same file as {root / 'l1.go'}"),
    }


def test_link_out_of_the_root_and_link_to_an_ancestor(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree({"sub/a.go": GO})
    tmp_real, root_real = os.path.realpath(tmp_path), os.path.realpath(root)
    os.symlink(tmp_path, root / "out")
    os.symlink(root, root / "sub" / "up")
    files, skips = _rel(walk([str(root)]), root)
    assert files == ["sub/a.go"]
    assert skips == {
        "out": (SkipReason.OUTSIDE, f"points to {tmp_real}"),
        "sub/up/": (SkipReason.CYCLE, f"points to its own ancestor {root_real}"),
    }


# --- ignore files ------------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_gitignore_linked_to_dev_zero_is_not_read(make_tree: TreeFactory) -> None:
    root = make_tree({"a.go": GO, "sub/b.go": GO})
    os.symlink("/dev/zero", root / ".gitignore")
    os.symlink("/dev/zero", root / "sub" / ".gitignore")
    result = walk([str(root)])
    files, skips = _rel(result, root)
    assert files == ["a.go", "sub/b.go"]
    assert skips == {
        ".gitignore": (SkipReason.OUTSIDE, "points to /dev/zero"),
        "sub/.gitignore": (SkipReason.OUTSIDE, "points to /dev/zero"),
    }
    link = "a symbolic link, which git does not follow either"
    assert result.warnings == [
        f"{os.path.realpath(root)}/.gitignore: {link}; {NOT_APPLIED}",
        f"{root / 'sub' / '.gitignore'}: {link}; {NOT_APPLIED}",
    ]


def test_gitignore_linked_inside_the_tree_is_not_applied_as_in_git(make_tree: TreeFactory) -> None:
    root = make_tree({"rules.txt": "*.gen.go\n", "x.gen.go": GO})
    os.symlink("rules.txt", root / ".gitignore")
    result = walk([str(root)])
    assert _rel(result, root)[0] == ["rules.txt", "x.gen.go"]  # .gitignore: a duplicate of rules.txt
    assert result.warnings == [
        f"{os.path.realpath(root)}/.gitignore: a symbolic link, which git does not follow either; {NOT_APPLIED}"
    ]


@pytest.mark.usefixtures("hang_guard")
def test_fifo_gitignore_is_not_opened(make_tree: TreeFactory) -> None:
    root = make_tree({"a.go": GO, "sub/b.go": GO})
    os.mkfifo(root / ".gitignore")
    os.mkfifo(root / "sub" / ".gitignore")
    result = walk([str(root)])
    files, skips = _rel(result, root)
    assert files == ["a.go", "sub/b.go"]
    assert skips == {
        ".gitignore": (SkipReason.SPECIAL, "FIFO"),
        "sub/.gitignore": (SkipReason.SPECIAL, "FIFO"),
    }
    assert result.warnings == [
        f"{os.path.realpath(root)}/.gitignore: not a regular file (FIFO); {NOT_APPLIED}",
        f"{root / 'sub' / '.gitignore'}: not a regular file (FIFO); {NOT_APPLIED}",
    ]


@pytest.mark.usefixtures("hang_guard")
def test_fifo_info_exclude_is_not_opened(make_tree: TreeFactory) -> None:
    repo = make_tree({".git/info/.keep": "", "a.go": GO}, root="repo")
    os.mkfifo(repo / ".git" / "info" / "exclude")
    result = walk([str(repo)])
    assert _rel(result, repo)[0] == ["a.go"]
    assert result.warnings == [f"{os.path.realpath(repo)}/.git/info/exclude: not a regular file (FIFO); {NOT_APPLIED}"]


def test_gitignore_over_the_limit_is_not_applied(make_tree: TreeFactory) -> None:
    padding = "# padding\n" * (IGNORE_FILE_LIMIT // 10)
    root = make_tree({"sub/.gitignore": "*.gen.go\n" + padding, "sub/x.gen.go": GO, "sub/ok/.gitignore": "y.go\n"})
    (root / "sub" / "ok" / "y.go").write_text(GO)
    result = walk([str(root)])
    files, _ = _rel(result, root)
    assert files == ["sub/x.gen.go", "sub/ok/.gitignore"]  # y.go: the small one applies
    path = root / "sub" / ".gitignore"
    assert result.warnings == [f"{path}: more than {IGNORE_FILE_LIMIT} bytes; {NOT_APPLIED}"]


def test_git_worktree_file_is_not_a_warning(make_tree: TreeFactory) -> None:
    # In a linked worktree .git is a file: there is no .git/info/exclude to read, and nothing to say
    # of it. Its gitdir is gone here, so git cannot say whether b.gen.go is tracked: it is scanned,
    # and that is the warning.
    repo = make_tree({".git": "gitdir: /elsewhere/.git/worktrees/x\n", ".gitignore": "*.gen.go\n", "a.go": GO})
    (repo / "b.gen.go").write_text(GO)
    result = walk([str(repo)])
    assert _rel(result, repo)[0] == [".gitignore", "a.go", "b.gen.go"]  # the .git file is metadata, not source
    assert result.warnings == [
        f"{repo}: cannot list the files git tracks (git rev-parse in {repo} failed: fatal: not a git repository:"
        " /elsewhere/.git/worktrees/x); what .gitignore names is scanned too"
    ]


def test_gitignore_nested_past_the_limit_is_not_applied(make_tree: TreeFactory) -> None:
    # Every ignore file is matched against every path under it: their nesting is bounded.
    depth = IGNORE_NESTING_LIMIT + 3
    chain = "/".join(["d"] * depth)
    tree = {"/".join(["d"] * i + [".gitignore"]): f"x{i}.go\n" for i in range(depth + 1)}
    root = make_tree({**tree, f"{chain}/x0.go": GO, f"{chain}/x{depth}.go": GO, f"{chain}/keep.go": GO})
    result = walk([str(root)])
    scanned = [os.path.basename(p) for p in _rel(result, root)[0] if p.endswith(".go")]
    assert scanned == ["keep.go", f"x{depth}.go"]  # x0.go: the root's rules apply; the deepest's do not
    first = root / "/".join(["d"] * IGNORE_NESTING_LIMIT) / ".gitignore"
    assert result.warnings == [
        f"{first} and 3 more .gitignore files lie under {IGNORE_NESTING_LIMIT} other ignore files; "
        "their rules are not applied, so the files they list are scanned"
    ]


@pytest.mark.usefixtures("hang_guard")
def test_gitignore_pattern_that_would_backtrack_is_applied_in_linear_time(make_tree: TreeFactory) -> None:
    # Python's re tries the ways to share a/a/.../a among the six **: 40 folders took 2.8 s,
    # 60 took 41 s, 80 did not end. RE2 matches it at once, and the pattern still applies.
    hostile = "/".join(["**", "a"] * 6) + "/b"
    chain = "/".join(["a"] * 80)
    files: dict[str, str | bytes] = {".gitignore": f"*.gen.go\n{hostile}\n", "x.gen.go": GO, f"{chain}/c.go": GO}
    files[f"{chain}/b"] = GO
    root = make_tree(files)
    result = walk([str(root)])
    assert _rel(result, root)[0] == [".gitignore", f"{chain}/c.go"]
    assert result.warnings == []


@pytest.mark.usefixtures("hang_guard")
@pytest.mark.parametrize("glob", ["**/a/**/b", "a/**/b/**/c", "*-*-*.log", "*a*/*b*", "**/*a*a*b"])
def test_globs_with_many_wildcards_match_as_git_does(glob: str) -> None:
    spec = compile_globs([glob], "--exclude")
    python_re = pathspec.GitIgnoreSpec.from_lines([glob], backend="simple")
    assert spec is not None
    for path in ["a/x/b/y/c/z-y-x.log", "a/b", "ab/cb", "q/a-b-c.log", "aab", "x/c"]:
        assert spec.match_file(path) == python_re.match_file(path), path  # RE2 and re agree
    assert not spec.match_file("/".join(["a"] * 2000) + "/c")  # a long near miss ends at once


def test_common_ignore_patterns_compile() -> None:
    common = """
        # comments and blank lines

        *.py[cod]
        __pycache__/
        /build/
        dist/
        *.egg-info/
        .env
        !.env.example
        node_modules/
        **/node_modules
        **/build/**
        docs/**/*.md
        src/**/generated/
        **/*_pb2*.py
        *_test_*.go
        *.min.*
        .*.sw?
        *~
        [Dd]ebug/
        foo\\*bar*.txt
        a/*/b/*/c
    """
    assert compile_globs(common.splitlines(), "--exclude") is not None


# --- special files -----------------------------------------------------------------------------


def test_special_files_are_skipped_with_their_kind(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_tree({"a.go": GO})
    os.mkfifo(root / "pipe.go")
    os.symlink("pipe.go", root / "to_pipe.go")
    monkeypatch.chdir(root)  # a short path: a socket's path is limited to ~100 bytes
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind("sock.go")
        result = walk(["."])
    finally:
        server.close()
    assert [f.path for f in result.files] == ["./a.go"]
    assert {s.path: _why(s) for s in result.skips} == {
        "./pipe.go": (SkipReason.SPECIAL, "FIFO"),
        "./sock.go": (SkipReason.SPECIAL, "socket"),
        "./to_pipe.go": (SkipReason.SPECIAL, "FIFO"),
    }


# --- deep trees --------------------------------------------------------------------------------


def _chain(top: Path, depth: int) -> None:
    """``top/d/d/.../d`` (``depth`` folders), each holding f.go; built by handle, past PATH_MAX."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.close(os.open("f.go", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
            os.mkdir("d", dir_fd=fd)
            fd, parent = os.open("d", os.O_RDONLY, dir_fd=fd), fd
            os.close(parent)
    finally:
        os.close(fd)


def _flatten(top: Path) -> None:
    """Move each folder of the chain up to ``top``: too deep for a path, or for shutil.rmtree's recursion."""
    fd = os.open(top, os.O_RDONLY)
    level = 0
    while "d" in os.listdir(fd):
        os.rename("d", top / f"level{level}", src_dir_fd=fd)
        os.close(fd)
        fd = os.open(top / f"level{level}", os.O_RDONLY)
        level += 1
    os.close(fd)


def test_chain_of_5000_folders_ends_with_the_paths_too_long_reported(tmp_path: Path) -> None:
    top = tmp_path / "deep"
    top.mkdir()
    try:
        _chain(top, 5000)
        result = walk([str(top)])
    finally:
        _flatten(top)
    depths = [os.path.relpath(f.path, top).count("d/") for f in result.files]
    assert depths == list(range(len(depths)))  # every file above the cut, in order
    assert len(depths) > 1000
    too_long = "File name too long"
    assert {_why(s)[0] for s in result.skips} == {SkipReason.UNREADABLE}
    assert {_why(s)[1] for s in result.skips} <= {too_long, f"{too_long}; nothing in it is scanned"}  # a file, a folder
    assert all(len(os.fsencode(s.path)) >= 4000 for s in result.skips)


def test_a_gitignore_line_not_utf8_is_left_out_alone(make_tree: TreeFactory) -> None:
    # As git reads it, the file ignores b.go; the line of other bytes cannot be matched as written:
    # it alone is left out, with a warning, and b.go stays ignored.
    root = make_tree({"sub/a.go": GO, "sub/b.go": GO})
    (root / "sub" / ".gitignore").write_bytes(b"b.go\n\xff\xfe.go\n")
    result = walk([str(root)])
    files, skips = _rel(result, root)
    assert files == ["sub/.gitignore", "sub/a.go"] and skips["sub/b.go"][0] == SkipReason.GITIGNORED
    path = root / "sub" / ".gitignore"
    assert result.warnings == [f"{path}: line 2 not UTF-8; that rule is not applied, so the files it lists are scanned"]


def test_a_negation_not_utf8_leaves_the_whole_gitignore_out(make_tree: TreeFactory) -> None:
    # Leaving out "!..." alone could ignore what git keeps: the file's rules are not applied at all.
    root = make_tree({"sub/a.go": GO, "sub/b.go": GO})
    (root / "sub" / ".gitignore").write_bytes(b"*.go\n!\xff.go\n")
    result = walk([str(root)])
    files, _ = _rel(result, root)
    assert files == ["sub/.gitignore", "sub/a.go", "sub/b.go"]
    assert len(result.warnings) == 1 and result.warnings[0].endswith(NOT_APPLIED)


# git's answers (git status --ignored, git 2.39): [[:digit:]]*.go leaves out 1a.go, not ].go. pathspec
# read it as [[:digit:]\][^/]*.go, one set repeated: it left out ].go and kept 1a.go.
@pytest.mark.parametrize(
    ("rules", "kept", "why"),
    [
        ("*.log\n[[:digit:]]*.go\n", ["1a.go", "].go", "a.go"], "line 2 has a POSIX class"),
        ("*.log\n# [[:digit:]] is a class\n", ["1a.go", "].go", "a.go"], None),
        ("*.go\n![[:digit:]]*.go\n", ["1a.go", "].go", "a.go", "x.log"], "line 2 has a POSIX class"),
    ],
)
def test_a_gitignore_line_with_a_posix_class_is_left_out_with_one_warning(
    make_tree: TreeFactory, rules: str, kept: list[str], why: str | None
) -> None:
    root = make_tree({"sub/.gitignore": rules, **{f"sub/{name}": GO for name in ("1a.go", "].go", "a.go", "x.log")}})
    re.purge()  # re warns when it compiles a pattern, not when it finds it in its cache
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        result = walk([str(root)])
    assert [str(w.message) for w in heard] == []  # pathspec's "FutureWarning: Possible nested set" is not shown
    files, _ = _rel(result, root)
    assert sorted(files) == sorted(["sub/.gitignore", *(f"sub/{name}" for name in kept)])
    negation = rules.startswith("*.go")
    assert result.warnings == (
        []
        if why is None
        else [
            f"{root / 'sub' / '.gitignore'}: {why} (like [:alpha:]), which pathspec would read as another set"
            + (", in a negation; its rules are" if negation else "; that rule is")
            + " not applied, so the files it lists are scanned"
        ]
    )


def test_a_posix_class_in_a_gitignore_is_one_line_on_stderr(make_tree: TreeFactory) -> None:
    # A new process: re has not compiled the pattern yet, and pytest does not catch the warning.
    root = make_tree({".gitignore": "[[:space:]]*.tmp\n", "a/.gitignore": "[[:space:]]*.tmp\n", "a/x.go": GO})
    done = subprocess.run(
        [sys.executable, "-m", "minhashdup", "scan", str(root), "--no-cache", "-q"], capture_output=True, text=True
    )
    assert done.returncode == ExitCode.OK, done.stderr
    assert "Warning" not in done.stderr and "pattern.py" not in done.stderr
    notes = [line for line in done.stderr.splitlines() if "POSIX class" in line]
    named = [note.split(": line")[0] for note in notes]
    assert named == [f"warning: {root}/.gitignore", f"warning: {root}/a/.gitignore"]  # once per file


def _walked_names(root: Path, ignore: bytes, names: list[bytes]) -> tuple[set[bytes], list[str]]:
    """The files walked in ``root`` (names as bytes) with a .gitignore of ``ignore`` beside
    ``names``, and the walk's warnings."""
    (root / ".gitignore").write_bytes(ignore)
    for name in names:
        with open(os.path.join(bytes(root), name), "wb") as out:
            out.write(GO.encode())
    result = walk([str(root)])
    return {os.fsencode(os.path.basename(f.path)) for f in result.files}, result.warnings


@pytest.mark.parametrize(
    ("ignore", "names", "kept"),
    [
        # git's answers (git ls-files -o --exclude-standard, git 2.39) unless noted:
        (b"x\x0cb.go\r\nc.go\r\n", [b"x", b"b.go", b"x\x0cb.go", b"c.go"], {b"x", b"b.go"}),  # lines end at \n only
        (b"\xef\xbb\xbfb.go\n", [b"b.go", b"a.go"], {b"a.go"}),  # a byte-order mark is not part of the pattern
        # A negation that is not UTF-8, whole (a \r inside a line does not end it) or after another
        # such line: the whole file is left out (git keeps a\rb\xff.go, ignores z.go; we scan both).
        (b"*.go\n!a\rb\xff.go\n", [b"a\rb\xff.go", b"z.go"], {b"a\rb\xff.go", b"z.go"}),
        (b"b.go\n\xfe.go\n!\xff.go\n", [b"b.go", b"\xff.go"], {b"b.go", b"\xff.go"}),
    ],
)
def test_gitignore_lines_are_git_s_lines(tmp_path: Path, ignore: bytes, names: list[bytes], kept: set[bytes]) -> None:
    files, warnings = _walked_names(tmp_path, ignore, names)
    assert files - {b".gitignore"} == kept
    assert all(NOT_APPLIED in w for w in warnings) and (len(warnings) == 1) == (b"!" in ignore)


@pytest.mark.parametrize(
    ("rules", "kept"),
    [
        # git's answers (git ls-files -o --exclude-standard, git 2.39): what lies inside d, not d
        ("d/**\n!d/keep.go\n", ["d/keep.go"]),
        ("d/**/\n", ["d/keep.go", "d/x.go"]),  # folders inside d only
        ("d/**/\n!d/sub/\n", ["d/keep.go", "d/sub/y.go", "d/x.go"]),
        ("/d/**  \n!/d/sub/\n!/d/sub/*.go\n", ["d/sub/y.go"]),
    ],
)
def test_a_trailing_globstar_names_what_is_inside_a_folder_as_in_git(
    make_tree: TreeFactory, rules: str, kept: list[str]
) -> None:
    root = make_tree({".gitignore": rules, "x.go": GO, "d/x.go": GO, "d/keep.go": GO, "d/sub/y.go": GO})
    files, _ = _rel(walk([str(root)]), root)
    assert sorted(files) == sorted([".gitignore", "x.go", *kept])


def test_an_exclude_glob_reads_a_trailing_globstar_as_an_ignore_file_does(make_tree: TreeFactory) -> None:
    # The globs are gitignore syntax too: d/** leaves out what is inside d, so the negation after
    # it brings d/keep.go back, as the same two lines in a .gitignore do.
    root = make_tree({"x.go": GO, "d/x.go": GO, "d/keep.go": GO, "d/sub/y.go": GO})
    files, _ = _rel(walk([str(root)], exclude=["d/**", "!d/keep.go"]), root)
    assert sorted(files) == ["d/keep.go", "x.go"]


def _unreadable_file() -> str:
    """A file no one may read, root included (a kernel setting that is written only)."""
    path = "/proc/sys/vm/drop_caches"
    try:
        with open(path, "rb"):
            pass
    except PermissionError:
        return path
    except OSError:
        pass
    pytest.skip("no file here that even this user cannot read")


def test_an_unreadable_path_on_the_command_line_is_a_skip_not_the_end(make_tree: TreeFactory) -> None:
    # One bad file never loses the results of the others, named in a folder or on its own.
    text = render_go(go_file(random.Random(2), 6))
    root = make_tree({"a.go": text, "b.go": text})
    locked = _unreadable_file()
    code, out, err = run("scan", locked, str(root), "-q", "--no-cache", "-f", "json")
    assert code == ExitCode.OK, err
    doc = json.loads(out)
    assert len(doc["pairs"]) == 1 and doc["stats"]["skipped"] == {"unreadable": 1}
    # A gate, though, cannot vouch for what it cannot read.
    code, out, err = run("scan", locked, str(root), "-q", "--no-cache", "--fail-on-pairs", "--max-pairs", "5")
    assert code == ExitCode.USAGE and out == "" and f"cannot read {locked}: a gate cannot vouch for it" in err


def _lock(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``folder`` as after ``chmod 000`` for a user other than root (whom a mode does not stop):
    it cannot be listed, nor anything in it opened or stat'ed; the folder itself can be stat'ed."""
    inside = str(folder) + os.sep

    def refused(real: Any, whole: bool) -> Any:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            named = os.fspath(path) if isinstance(path, (str, os.PathLike)) else ""
            if named.startswith(inside) or (whole and named == str(folder)):
                raise PermissionError(errno.EACCES, "Permission denied", named)
            return real(path, *args, **kwargs)

        return call

    monkeypatch.setattr(os, "scandir", refused(os.scandir, True))
    for name in ("open", "lstat", "stat"):
        monkeypatch.setattr(os, name, refused(getattr(os, name), False))


@pytest.mark.parametrize("root_locked", [False, True])
def test_an_unreadable_folder_is_one_notice_not_a_warning_per_rules_file(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, root_locked: bool
) -> None:
    text = render_go(go_file(random.Random(2), 6))
    root = make_tree(
        {"a.go": text, "b.go": text, "locked/.gitignore": "*.go\n", "locked/.gitattributes": "", "locked/c.go": text}
    )
    locked = root / "locked"
    _lock(locked, monkeypatch)
    result = walk([str(locked if root_locked else root)])
    assert result.warnings == []  # were: its .gitignore and its .gitattributes "cannot read (Permission denied)"
    assert [(s.path, *_why(s)) for s in result.skips] == [
        (str(locked), SkipReason.UNREADABLE, "Permission denied; nothing in it is scanned")
    ]
    code, out, err = run("scan", str(root), "--no-cache", "-f", "json")
    assert code == ExitCode.OK and len(json.loads(out)["pairs"]) == 1
    assert err.splitlines() == [
        f"{locked}: unreadable (Permission denied; nothing in it is scanned)",
        "skipped 1 files: unreadable 1 (-v lists them)",
    ]
