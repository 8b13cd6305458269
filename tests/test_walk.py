from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minhashdup.config import PLAIN_GLOB_CHARS, check_globs
from minhashdup.errors import ConfigError, InputPathError
from minhashdup.result import SkipReason
from minhashdup.source.rules.ignore import compile_globs
from minhashdup.source.walk import _child, walk

from .conftest import TreeFactory

GO = "package x\n"


def _files(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.path for f in result.files]


def _skips(result) -> dict[str, SkipReason]:  # type: ignore[no-untyped-def]
    return {s.path: s.reason for s in result.skips}


def _relative(result, root: Path) -> tuple[list[str], dict[str, SkipReason]]:  # type: ignore[no-untyped-def]
    """Files (sorted) and skips, as paths relative to ``root`` without a folder's trailing slash."""
    files = sorted(os.path.relpath(p, root) for p in _files(result))
    return files, {os.path.relpath(p.rstrip("/"), root): r for p, r in _skips(result).items()}


def test_globs_match_names_folders_and_rooted_paths(make_tree: TreeFactory) -> None:
    root = make_tree(
        {
            "a.go": GO,
            "a_test.go": GO,
            "pkg/b.go": GO,
            "pkg/testdata/c.go": GO,
            "cmd/go/main.go": GO,
            "vendor/cmd/go/keep.go": GO,
            "notes.md": "# hi",
        }
    )
    result = walk([str(root)], exclude=["*_test.go", "testdata", "/cmd/go"], include=["*.go"])
    files, skips = _relative(result, root)
    assert files == ["a.go", "pkg/b.go", "vendor/cmd/go/keep.go"]
    assert skips == {
        "a_test.go": SkipReason.EXCLUDED,
        "pkg/testdata": SkipReason.EXCLUDED,
        "cmd/go": SkipReason.EXCLUDED,
        "notes.md": SkipReason.NOT_INCLUDED,
    }


def test_paths_are_shown_under_the_path_given(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_tree({"sub/a.go": GO})
    monkeypatch.chdir(root.parent)
    assert _files(walk(["tree"])) == ["tree/sub/a.go"]
    assert _files(walk(["./tree/"])) == ["./tree/sub/a.go"]


def test_gitignore_chain_negation_and_info_exclude(make_tree: TreeFactory) -> None:
    repo = make_tree(
        {
            ".git/info/exclude": "secret.go\n",
            ".gitignore": "build/\n*.gen.go\n",
            "src/.gitignore": "!keep.gen.go\n",
            "src/a.go": GO,
            "src/x.gen.go": GO,
            "src/keep.gen.go": GO,
            "src/secret.go": GO,
            "src/build/out.go": GO,
            "build/top.go": GO,
        },
        root="repo",
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # git is asked which files it tracks
    assert (repo / ".git" / "info" / "exclude").read_text() == "secret.go\n"
    # Scanning a subfolder still honours the repository's top-level rules.
    result = walk([str(repo / "src")])
    assert sorted(Path(p).name for p in _files(result)) == [".gitignore", "a.go", "keep.gen.go"]
    reasons = {Path(p.rstrip("/")).name: r for p, r in _skips(result).items()}
    assert reasons == {
        "x.gen.go": SkipReason.GITIGNORED,
        "secret.go": SkipReason.GITIGNORED,
        "build": SkipReason.GITIGNORED,
    }
    everything = walk([str(repo)], gitignore=False)
    assert len(everything.files) == 8  # six .go files and two .gitignore files
    assert _skips(everything) == {str(repo / ".git") + "/": SkipReason.VCS}


def test_a_gitlink_file_is_version_control_metadata_not_source(make_tree: TreeFactory) -> None:
    # A linked worktree or a submodule holds a file named .git ("gitdir: ..."): git never
    # tracks it, so it is skipped like the .git folder, not lexed as a source file. Another VCS's
    # name is left out unless git tracks files there: this git cannot answer (the gitdir named
    # is not there), so it is scanned, and a warning says why (tests/test_trust_unchecked.py).
    root = make_tree({"a.go": GO, ".git": "gitdir: /elsewhere/.git/worktrees/x\n", "sub/.hg": "x\n"})
    walked = walk([str(root)])
    files, skips = _relative(walked, root)
    assert files == ["a.go", "sub/.hg"]
    assert skips == {".git": SkipReason.VCS}
    assert [w for w in walked.warnings if "cannot list the files git tracks" in w]
    plain = make_tree({"a.go": GO, "sub/.hg": "x\n"}, "plain")  # in no repository: another VCS's metadata
    assert _relative(walk([str(plain)]), plain) == (["a.go"], {"sub/.hg": SkipReason.VCS})


def test_too_large_and_special_files(make_tree: TreeFactory) -> None:
    root = make_tree({"big.go": "x" * 2000, "small.go": GO})
    os.mkfifo(root / "pipe.go")
    result = walk([str(root)], max_size=1000)
    assert [Path(p).name for p in _files(result)] == ["small.go"]
    assert {Path(p).name: r for p, r in _skips(result).items()} == {
        "big.go": SkipReason.TOO_LARGE,
        "pipe.go": SkipReason.SPECIAL,
    }


def test_symlinks_stay_inside_the_root_and_each_file_is_scanned_once(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree({"real/a.go": GO, "real/deep/b.go": GO})
    outside = tmp_path / "outside.go"
    outside.write_text(GO)
    os.symlink(root / "real" / "a.go", root / "alias.go")  # link to a file walked anyway
    os.symlink(root / "real", root / "again")  # folder link to a folder walked anyway: not walked again
    os.symlink(root, root / "real" / "deep" / "loop")  # link to an ancestor: a cycle
    os.symlink(outside, root / "escape.go")
    os.symlink(root / "missing.go", root / "dangling.go")
    os.symlink("self.go", root / "self.go")  # a link to itself
    result = walk([str(root)])
    files, skips = _relative(result, root)
    assert files == ["real/a.go", "real/deep/b.go"]
    assert skips == {
        "alias.go": SkipReason.DUPLICATE,
        "again": SkipReason.DUPLICATE,
        "real/deep/loop": SkipReason.CYCLE,
        "escape.go": SkipReason.OUTSIDE,
        "dangling.go": SkipReason.DANGLING,
        "self.go": SkipReason.CYCLE,
    }


def test_link_to_a_file_not_otherwise_walked_is_scanned(make_tree: TreeFactory) -> None:
    root = make_tree({"hidden/a.go": GO, "b.go": GO})
    os.symlink(root / "hidden" / "a.go", root / "link.go")
    result = walk([str(root)], exclude=["hidden"])
    assert sorted(Path(p).name for p in _files(result)) == ["b.go", "link.go"]


def test_named_files_and_overlapping_roots(make_tree: TreeFactory) -> None:
    root = make_tree({"a.go": GO, "sub/b.go": GO, "a_test.go": GO})
    result = walk([str(root / "a_test.go"), str(root), str(root / "sub")], exclude=["*_test.go"])
    # A file named on the command line is scanned even though it matches --exclude.
    assert _files(result) == [str(root / "a_test.go"), str(root / "a.go"), str(root / "sub" / "b.go")]
    assert [(Path(s.path).name, s.reason) for s in result.skips] == [
        ("a_test.go", SkipReason.EXCLUDED),
        ("b.go", SkipReason.DUPLICATE),
    ]


def test_unreadable_folder_is_reported(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_tree({"ok/a.go": GO, "locked/b.go": GO})
    real_scandir = os.scandir

    def scandir(path: str) -> Any:  # root can read anything: refuse like a locked folder would
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = walk([str(root)])
    assert [Path(p).name for p in _files(result)] == ["a.go"]
    assert _skips(result) == {str(root / "locked"): SkipReason.UNREADABLE}


def test_missing_path_and_bad_glob_are_errors(make_tree: TreeFactory) -> None:
    root = make_tree({"a.go": GO})
    with pytest.raises(InputPathError, match="no such file or folder"):
        walk([str(root / "nope")])
    with pytest.raises(ConfigError, match=r"^exclude: invalid glob"):  # named as Config names it
        walk([str(root)], exclude=["\\"])


@given(st.lists(st.text(alphabet="ab_.-/*09", min_size=1, max_size=40), min_size=1, max_size=3))
def test_a_plain_glob_passed_unchecked_compiles(globs: list[str]) -> None:
    # Config checks plain globs without compiling them (so that a warm scan needs no pathspec):
    # that is only right if every one of them compiles.
    check_globs(globs, "include")
    assert compile_globs(globs, "include") is not None


@pytest.mark.parametrize(
    "globs", [["*a" * 512], ["*a" * 128] * 4, ["**/" * 341], [f"x{i}" + "*a" * 62 for i in range(8)]]
)
def test_the_largest_plain_globs_passed_unchecked_compile(globs: list[str]) -> None:
    assert sum(map(len, globs)) <= PLAIN_GLOB_CHARS
    assert compile_globs(globs, "include") is not None


def test_plain_globs_past_the_bound_are_compiled_to_be_checked() -> None:
    # Each compiles alone; together they are more than RE2 builds into one set.
    globs = [(str(i) + "*a" * 128)[:256] for i in range(61)]
    with pytest.raises(ConfigError, match=r"^exclude: invalid glob \(failed to compile Set"):
        check_globs(globs, "exclude")


@pytest.mark.parametrize("glob", ["!", "\\", "a\\", "x[a\\]", "x" * 300 + "\\"])
def test_a_glob_that_is_not_plain_is_compiled_to_be_checked(glob: str) -> None:
    with pytest.raises(ConfigError, match=r"^--exclude: invalid glob"):
        check_globs(["*.go", glob], "--exclude")


def test_walk_order_is_files_by_name_then_folders(make_tree: TreeFactory) -> None:
    root = make_tree({"b.go": GO, "a/z.go": GO, "a/y/x.go": GO, "c.go": GO, "a/b.go": GO})
    rel = [os.path.relpath(p, root) for p in _files(walk([str(root)]))]
    assert rel == ["b.go", "c.go", "a/b.go", "a/z.go", "a/y/x.go"]


@pytest.mark.parametrize("globs", [["*.yaml", "a/b/"], ["conf/"], ["*"], ["*.yaml", "!a/b/c/"], ["a/*/c/"]])
def test_names_file_with_a_walks_memo_answers_as_without(globs: list[str]) -> None:
    from minhashdup.source.kinds import names_file
    from minhashdup.source.rules.ignore import compile_globs

    spec = compile_globs(globs, "include")
    assert spec is not None
    paths = ["a/b/c/x.yaml", "a/b/y.yaml", "a/z/x.yaml", "a/z/c/x.yaml", "conf/x.yaml", "x.yaml", "a/b/c/d/e.yaml"]
    memo: dict[str, bool] = {}
    for path in paths + paths[::-1]:  # folders met in either order, the memo shared
        expected = names_file(spec, path)
        assert names_file(spec, path, memo) == expected
        if spec.match_file(path):
            assert names_file(spec, path, memo, matched=True) == expected
    assert memo  # the folders were remembered


@given(st.text(alphabet="/a.\udcff ", max_size=6), st.text(alphabet="a.\udcff ", min_size=1, max_size=4))
def test_a_child_path_is_the_one_os_path_join_makes(folder: str, name: str) -> None:
    """The walk joins a folder and a listed name (never empty, no "/") by hand, twice an entry."""
    assert _child(folder, name) == os.path.join(folder, name)


def _named_root_repo(make_tree: TreeFactory, top_rules: str) -> Path:
    repo = make_tree(
        {
            ".gitignore": top_rules,
            ".git/info/exclude": "/vendor/\n",
            "build/sub/a.go": GO,
            "build/sub/x.tmp": GO,
            "build/sub/build/deep.go": GO,
            "vendor/lib/v.go": GO,
            "src/a.go": GO,
            "src/data.bin": GO,
        },
        root="repo",
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def test_a_named_folder_that_ignore_rules_leave_out_is_scanned(make_tree: TreeFactory) -> None:
    # As a file named on the command line is scanned, so is a folder (ripgrep does the same): the
    # rules that leave out the root or a folder above it are not applied under it, with a warning.
    repo = _named_root_repo(make_tree, "/build\n*.tmp\nbuild/\n")
    result = walk([str(repo / "build" / "sub")])
    files, skips = _relative(result, repo / "build" / "sub")
    assert files == ["a.go"]
    # As in ripgrep, the name rule build/ still leaves out a build/ inside the root, and other rules apply.
    assert skips == {"x.tmp": SkipReason.GITIGNORED, "build": SkipReason.GITIGNORED}
    assert [w for w in result.warnings if "scanned as named" in w] == [
        f"{os.path.realpath(repo / 'build' / 'sub')}: scanned as named on the command line, though ignore"
        f" rules '/build' in {os.path.realpath(repo / '.gitignore')} and 1 more leave it out"
    ]
    vendored = walk([str(repo / "vendor" / "lib")])  # .git/info/exclude's rules too
    assert _relative(vendored, repo / "vendor" / "lib")[0] == ["v.go"]
    assert any(".git/info/exclude" in w for w in vendored.warnings)
    # From the top, nothing changes: the folders are left out, without that warning.
    top = walk([str(repo)])
    assert _relative(top, repo)[1]["build"] == SkipReason.GITIGNORED
    assert not [w for w in top.warnings if "scanned as named" in w]


def test_a_named_folder_that_no_rule_leaves_out_is_walked_by_every_rule(make_tree: TreeFactory) -> None:
    # The rules above src/ do not leave src/ itself out ('*.bin' names files), and its own
    # .gitignore ('*' then '!*.go') lies in it, not above it: every rule applies, no warning.
    repo = _named_root_repo(make_tree, "*.bin\n")
    (repo / "src" / "only.txt").write_text("text\n")
    (repo / "src" / ".gitignore").write_text("*.txt\n")
    result = walk([str(repo / "src")])
    skips = {"data.bin": SkipReason.GITIGNORED, "only.txt": SkipReason.GITIGNORED}
    assert _relative(result, repo / "src") == ([".gitignore", "a.go"], skips)
    assert not [w for w in result.warnings if "scanned as named" in w]


def test_a_named_root_is_checked_against_the_rules_above_it_by_re2(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python's re backtracks for minutes on this rule against a deep path (a pattern's own
    # match_file uses it); RE2, which the walk's specs use, matches in linear time.
    from pathspec.pattern import RegexPattern

    def backtracking(self: Any, file: str) -> None:
        raise AssertionError(f"{self.pattern!r} matched by Python's re")

    monkeypatch.setattr(RegexPattern, "match_file", backtracking)
    deep = "/".join(["a"] * 40)
    repo = make_tree({".gitignore": "a/\n" + "**/a/" * 10 + "b\n", f"{deep}/x.go": GO}, root="repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    result = walk([str(repo / deep)])
    assert _relative(result, repo / deep)[0] == ["x.go"]


def test_a_named_root_whose_name_is_not_utf8_is_walked(make_tree: TreeFactory) -> None:
    repo = make_tree({".gitignore": "*.tmp\n"}, root="repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    odd = os.path.join(os.fsencode(repo), b"src\xfe")
    os.mkdir(odd)
    Path(os.fsdecode(odd), "a.go").write_text(GO)
    assert [Path(p).name for p in _files(walk([os.fsdecode(odd)]))] == ["a.go"]
