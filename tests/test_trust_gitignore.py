"""The walk keeps what git keeps: each path judged by the last ignore line that matches it.

pathspec ranked a file pattern's match over a later folder pattern's (``*`` over ``!*/``: the
whitelist idiom left every folder out) and let a negation of a folder re-include what a line
inside it left out; it read ``\\`` in a bracket set as a member where git escapes the next
character. The cases below are git's answers (``git ls-files -o --exclude-standard``, git 2.39),
and a seeded comparison runs git itself where it is installed.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from minhashdup.errors import ExitCode
from minhashdup.source.rules.globs import git_sets
from minhashdup.source.walk import walk

from .conftest import TreeFactory, run

GO = "package x\n"
TREE = {name: GO for name in ("a.go", "a.txt", "sub/b.go", "sub/b.txt", "sub/deeper/c.go", "b/a/a/x.go", "b/x.go")}


def _kept(root: Path, **options: object) -> list[str]:
    return sorted(os.path.relpath(f.path, root) for f in walk([str(root)], **options).files)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rules", "kept"),
    [
        # the whitelist: every folder walked, only Go files kept
        ("*\n!*/\n!*.go\n", ["a.go", "b/a/a/x.go", "b/x.go", "sub/b.go", "sub/deeper/c.go"]),
        # b/a/a is left out by the first line; !/b/ names b, not b/a/a
        ("[ab]/[ab]/a*\n!/b/\n", [".gitignore", "a.go", "a.txt", "b/x.go", "sub/b.go", "sub/b.txt", "sub/deeper/c.go"]),
        # a folder's negation after a line that leaves out files in it brings none back
        ("*.txt\n!sub/\n", [".gitignore", "a.go", "b/a/a/x.go", "b/x.go", "sub/b.go", "sub/deeper/c.go"]),
        # the last line that names the folder itself wins
        (
            "sub/\n!sub/\nsub/*.txt\n",
            [".gitignore", "a.go", "a.txt", "b/a/a/x.go", "b/x.go", "sub/b.go", "sub/deeper/c.go"],
        ),
    ],
)
def test_each_path_is_judged_by_the_last_line_that_matches_it(
    make_tree: TreeFactory, rules: str, kept: list[str]
) -> None:
    root = make_tree({".gitignore": rules, **TREE})
    assert _kept(root) == kept


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_whitelist_above_the_root_leaves_the_root_in_without_a_warning(make_tree: TreeFactory) -> None:
    top = make_tree({".gitignore": "*\n!*/\n!*.go\n", **TREE})
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    result = walk([str(top / "sub")])
    assert sorted(os.path.relpath(f.path, top) for f in result.files) == ["sub/b.go", "sub/deeper/c.go"]
    assert not [w for w in result.warnings if "scanned as named" in w]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_root_inside_an_ignored_folder_is_still_named_in_a_warning(make_tree: TreeFactory) -> None:
    # sub/ is left out; the root sub/deeper lies inside it (a match of its folder, not of itself)
    top = make_tree({".gitignore": "sub/\n", **TREE})
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    result = walk([str(top / "sub" / "deeper")])
    assert [os.path.basename(f.path) for f in result.files] == ["c.go"]
    assert len([w for w in result.warnings if "scanned as named" in w and "'sub/'" in w]) == 1


@pytest.mark.parametrize(
    ("rules", "names", "kept"),
    [
        ("[a\\]b].go\n", ["a.go", "].go", "b.go", "\\.go", "c.go"], ["\\.go", "c.go"]),  # \] is a member
        ("x[\\]]\n", ["x]", "x\\", "xa"], ["x\\", "xa"]),
        ("[a\\]\n", ["a", "\\", "b"], ["\\", "a", "b"]),  # a set git never closes: the line matches nothing
        ("[a/]x\n", ["ax", "sub/ax"], ["sub/ax"]),  # git's sets never match /, which still anchors the line
        ("a\\\n*.go\n", ["a", "a\\", "b.go"], ["a", "a\\"]),  # a last \: that line matches nothing, not the file
        ("[\\!#]*\n", ["!x", "#y", "main.go", "src/a.go"], ["main.go", "src/a.go"]),  # ! is a member, not a negation
        ("x[!a]y\n", ["xby", "xay", "x/y"], ["x/y", "xay"]),  # no set matches /, a negated one neither
        ("a[/.-0]\n", ["a/x", "a0", "a.", "ab"], ["a/x", "ab"]),  # nor a range across it
        ("x[+-/]y\n", ["x+y", "x.y", "x/y", "xay"], ["x/y", "xay"]),  # nor one that ends at it
        ("#[a/]\n# notes [see docs/x]\n", ["#a", "# notes s", "b"], ["#a", "# notes s", "b"]),  # comments
        ("[\\a-\\c]x\n", ["ax", "bx", "dx"], ["dx"]),  # a range to an escaped character
        ("[b-a]x\n*.txt\n", ["ax", "bx", "n.txt"], ["ax"]),  # a reversed range: its first character
        ("a \\  \n", ["a  ", "a ", "a"], ["a", "a "]),  # trailing spaces dropped, an escaped one kept
        # negated sets: a - or ] first, a ^ after the !, stay members with / left out
        ("x[!-a]y\n", ["x-y", "x0y", "x^y", "xay", "x]y", "x!y", "xzy"], ["x-y", "xay"]),
        ("x[!\\^]y\n", ["x-y", "x0y", "x^y", "xay", "x]y", "x!y", "xzy"], ["x^y"]),
        ("x[!\\^-]y\n", ["x-y", "x0y", "x^y", "xay", "x]y", "x!y", "xzy"], ["x-y", "x^y"]),
        ("x[^]]y\n", ["x-y", "x0y", "x^y", "xay", "x]y", "x!y", "xzy"], ["x]y"]),
    ],
)
def test_a_backslash_in_a_bracket_set_escapes_as_in_git(
    make_tree: TreeFactory, rules: str, names: list[str], kept: list[str]
) -> None:
    root = make_tree({".gitignore": rules, **{name: GO for name in names}})
    result = walk([str(root)])
    assert sorted(os.path.relpath(f.path, root) for f in result.files) == sorted([".gitignore", *kept])
    assert result.warnings == []


def test_a_glob_git_matches_nothing_with_is_refused_on_the_command_line(make_tree: TreeFactory) -> None:
    root = make_tree({"a.go": GO})
    code, _, err = run("scan", str(root), "--no-config", "--include", "[a\\]")
    assert code == ExitCode.USAGE and "a set git never closes" in err and "Traceback" not in err
    assert git_sets("x[\\]].go") == "x\\].go"


# A seeded comparison with git itself: random ignore files (nested ones too) over one tree,
# the walk from the top or from a folder below it.
_NAMES = ["a", "b", "x.go", "]", "*"]
_SEGMENTS = ["a", "b", "*", "**", "x.go", "*.go", "?", "[ab]", "[!a]", "a*", "[a\\]]", "\\*", "[\\]a]", "[a\\]", "[]]"]


def _pattern(rng: random.Random) -> str:
    pattern = "/".join(rng.choice(_SEGMENTS) for _ in range(rng.choice([1, 1, 2, 3])))
    pattern = ("/" if rng.random() < 0.3 else "") + pattern + ("/" if rng.random() < 0.3 else "")
    return ("!" if rng.random() < 0.35 else "") + pattern


def _fill(folder: Path, depth: int) -> None:
    for name in _NAMES:
        if depth < 3 and name in ("a", "b"):
            (folder / name).mkdir()
            _fill(folder / name, depth + 1)
        else:
            (folder / name).write_text(GO)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_walk_keeps_what_git_keeps_on_random_ignore_files(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    _fill(root, 0)
    rng, compared, homes = random.Random(7), 0, ["", "a", "b/a", "a/b/a"]
    for _ in range(120):
        for home in homes:
            path = root / home / ".gitignore"
            if rng.random() < (0.9 if not home else 0.4):
                path.write_text("".join(_pattern(rng) + "\n" for _ in range(rng.choice([1, 2, 3, 4]))))
            elif path.exists():
                path.unlink()
        start = root / rng.choice(["", "", "a", "b/a"])
        listed = subprocess.run(
            ["git", "-C", str(start), "ls-files", "-o", "--exclude-standard", "-z"], capture_output=True, check=True
        ).stdout.decode()
        result = walk([str(start)])
        if any("scanned as named" in w for w in result.warnings):
            continue  # a root git leaves out is scanned on purpose
        ours = {os.path.relpath(f.path, start) for f in result.files}
        rules = {
            home: (root / home / ".gitignore").read_text() for home in homes if (root / home / ".gitignore").exists()
        }
        assert ours == set(listed.split("\0")) - {""}, rules
        compared += 1
    assert compared > 80
