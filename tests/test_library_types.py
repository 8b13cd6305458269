"""Review findings: a library call given a value of the wrong type is refused with a message
naming the parameter, before any file is lexed, instead of a silently wrong result (a string
of changed files read as its characters) or a stray TypeError from deep inside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import minhashdup
from minhashdup import ConfigError

from .conftest import TreeFactory


@pytest.fixture
def src(make_tree: TreeFactory) -> Path:
    text = "\n".join(f"def f{i}(a, b):\n    return a * {i} + b - {i}\n" for i in range(30))
    return make_tree({"a.py": text, "b.py": text})


def test_a_string_of_changed_files_is_refused_not_read_letter_by_letter(src: Path) -> None:
    assert len(minhashdup.scan(str(src), changed_files=[str(src / "a.py")]).pairs) == 1  # a list: as documented
    with pytest.raises(ConfigError, match=r"^changed_files takes a list of paths, not one string \(got '.*a\.py'\)$"):
        minhashdup.scan(str(src), changed_files=str(src / "a.py"))


@pytest.mark.parametrize("value", ["3", 1.5, True])
def test_max_pairs_must_be_a_whole_number(src: Path, lexed: list[str], value: Any) -> None:
    with pytest.raises(ConfigError, match=rf"^max_pairs must be a whole number \(got {value!r}\)$"):
        minhashdup.scan(str(src), max_pairs=value)
    assert lexed == []  # refused before any file is read


@pytest.mark.parametrize("name", ["baseline", "write_baseline"])
def test_a_baseline_path_must_be_a_path(src: Path, lexed: list[str], name: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{name} must be a path \(got 5\)$"):
        minhashdup.scan(str(src), **{name: 5})
    assert lexed == []


def test_cache_dir_must_be_a_path(src: Path, lexed: list[str]) -> None:
    with pytest.raises(ConfigError, match=r"^cache_dir must be a path \(got 123\)$"):
        minhashdup.scan(str(src), cache_dir=123)
    assert lexed == []


@pytest.mark.parametrize("name", ["exact", "gitignore", "new_only", "staged"])
def test_a_switch_must_be_true_or_false(src: Path, lexed: list[str], name: str) -> None:
    # gitignore="false" was truthy: the .gitignore files were honoured, and params echoed "false".
    with pytest.raises(ConfigError, match=rf"^{name} must be True or False \(got 'false'\)$"):
        minhashdup.scan(str(src), **{name: "false"})
    assert lexed == []


def test_own_files_must_be_a_list_of_paths(src: Path) -> None:
    with pytest.raises(ConfigError, match=r"^own_files takes a list of paths, not one string \(got 'a\.py'\)$"):
        minhashdup.scan(str(src), own_files="a.py")
