"""Issue 11, item 8: the library takes a string as one path, hashes only what it is given as
items or 64-bit hashes, and refuses to mix hash families or compare two empty sets."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minhashdup
from minhashdup import Config, LSHIndex, MinHash
from minhashdup.analysis.compare import compare_files
from minhashdup.ci.review import Review

from .conftest import GIT_ENV, TreeFactory

TEXT = "\n".join(f"def f{i}(x):\n    return x * {i + 3} + {i * 7}\n" for i in range(12))


@pytest.fixture
def project(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder ``src`` with two identical files, the current folder during the test."""
    root = make_tree({"src/a.py": TEXT, "src/b.py": TEXT, "s/decoy.py": TEXT})
    monkeypatch.chdir(root)
    return root


def test_a_string_is_one_path(project: Path) -> None:
    result = minhashdup.scan("src", Config(cache=False))
    assert [(p.a, p.b) for p in result.pairs] == [("src/a.py", "src/b.py")]
    assert minhashdup.collect("src", Config(cache=False)).paths == ["src/a.py", "src/b.py"]
    result = minhashdup.scan(Path("src"), Config(cache=False))
    assert [(p.a, p.b) for p in result.pairs] == [("src/a.py", "src/b.py")]
    absolute = str(project / "src")  # iterated, it walked "/"
    assert minhashdup.scan(absolute, Config(cache=False)).files == [f"{absolute}/a.py", f"{absolute}/b.py"]
    assert len(minhashdup.scan(["src", Path("s")], Config(cache=False)).files) == 3


@pytest.mark.parametrize(
    ("paths", "message"),
    [
        (b"src", r"paths must be a str or os\.PathLike, not bytes \(b'src'\); decode it with os\.fsdecode\(\)"),
        (5, r"paths must be a path \(str or os\.PathLike\) or a list of paths \(got int\)"),
        (None, r"paths must be a path \(str or os\.PathLike\) or a list of paths \(got NoneType\)"),
        (["src", 5], r"paths\[1\] must be a str or os\.PathLike \(got int: 5\)"),
    ],
)
def test_anything_else_is_a_clear_type_error(project: Path, paths: object, message: str) -> None:
    with pytest.raises(TypeError, match=f"^{message}$"):
        minhashdup.scan(paths, Config(cache=False))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=f"^{message}$"):
        minhashdup.collect(paths, Config(cache=False))  # type: ignore[arg-type]


def test_compare_takes_path_like_files(project: Path) -> None:
    assert compare_files(Path("src/a.py"), Path("src/b.py")).jaccard == 1.0
    with pytest.raises(TypeError, match=r"^b must be a str or os\.PathLike, not bytes"):
        compare_files("src/a.py", b"src/b.py")  # type: ignore[arg-type]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_review_changed_files_under_one_path_string(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)
    (project / "src" / "a.py").write_text(TEXT + "\n# edited\n")
    monkeypatch.chdir(project.parent)  # outside the repository: its characters were asked about "/"
    changed = Review(changed_since="HEAD").changed(str(project / "src"))
    assert changed == {os.path.realpath(project / "src" / "a.py")}


# MinHash and LSHIndex.


def test_a_string_of_items_is_refused_not_split_into_characters() -> None:
    with pytest.raises(TypeError, match=r"not one str .*wrap it in a list: \['abc'\]"):
        MinHash(16, items="abc")
    with pytest.raises(TypeError, match=r"not one bytes"):
        MinHash(16).update(b"abc")
    with pytest.raises(TypeError, match=r"an item is a str or bytes \(got int: 5\)"):
        MinHash(16).add(5)  # type: ignore[arg-type]
    assert MinHash(16, items=["abc"]) == MinHash(16, items=("abc",))


u64 = st.integers(0, 2**64 - 1)


@given(st.lists(u64, max_size=20))
def test_update_hashes_takes_python_ints_as_the_uint64_array(values: list[int]) -> None:
    a, b = MinHash(16), MinHash(16)
    a.update_hashes(values)
    b.update_hashes(np.array(values, dtype=np.uint64))
    assert a == b


@given(st.lists(u64, max_size=5), st.one_of(st.integers(max_value=-1), st.integers(min_value=2**64)))
def test_update_hashes_refuses_values_out_of_range(values: list[int], bad: int) -> None:
    mh = MinHash(16)
    with pytest.raises(ValueError, match=rf"^hashes must be from 0 to 2\*\*64 - 1 \(got {bad}\)$"):
        mh.update_hashes([*values, bad])
    assert mh.is_empty()  # nothing folded in


@pytest.mark.parametrize(
    ("hashes", "error", "message"),
    [
        ([1.0], TypeError, r"hashes must be integers \(got float: 1\.0\)"),
        ([2, True], TypeError, r"hashes must be integers \(got bool: True\)"),
        (np.array([1.5]), TypeError, r"hashes must be an array of unsigned integers \(got dtype float64\)"),
        (np.array([True]), TypeError, r"hashes must be an array of unsigned integers \(got dtype bool\)"),
        (np.array([3, -1]), ValueError, r"hashes must be from 0 to 2\*\*64 - 1 \(got -1\)"),
        ("12", TypeError, r"hashes are integers, not a str"),
        (7, TypeError, r"hashes must be an array or an iterable of integers \(got int\)"),
    ],
)
def test_update_hashes_refuses_what_it_would_change(hashes: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        MinHash(16).update_hashes(hashes)  # type: ignore[arg-type]


def test_unsigned_and_non_negative_signed_arrays_are_the_same_hashes() -> None:
    a, b = MinHash(16), MinHash(16)
    a.update_hashes(np.array([[1, 2], [3, 4]], dtype=np.uint32))
    b.update_hashes(np.array([1, 2, 3, 4], dtype=np.int64))
    assert a == b


def test_two_empty_minhashes_have_no_similarity() -> None:
    with pytest.raises(ValueError, match=r"two empty MinHashes is undefined \(0 / 0\); check is_empty\(\)"):
        MinHash(16).jaccard(MinHash(16))
    assert MinHash(16).jaccard(MinHash(16, items=["x"])) == 0.0


sets = st.sets(st.sampled_from([f"t{i}" for i in range(20)]), min_size=1, max_size=12)


@given(sets, sets)
def test_jaccard_is_symmetric_one_on_itself_and_merge_is_union(a: set[str], b: set[str]) -> None:
    ma, mb = MinHash(32, items=a), MinHash(32, items=b)
    assert ma.jaccard(ma) == 1.0
    assert ma.jaccard(mb) == mb.jaccard(ma)
    assert ma.merge(mb) == MinHash(32, items=a | b)


def test_index_refuses_another_family_and_empty_minhashes() -> None:
    index = LSHIndex(bands=4, rows=4)
    index.insert("a", MinHash(16, seed=1, items=["x", "y"]))
    with pytest.raises(ValueError, match=r"holds MinHash\(num_hashes=16, seed=1\); a MinHash\(num_hashes=16, seed=2\)"):
        index.insert("b", MinHash(16, seed=2, items=["x", "y"]))
    with pytest.raises(ValueError, match=r"a MinHash\(num_hashes=32, seed=1\) is not comparable"):
        index.insert("c", MinHash(32, seed=1, items=["x", "y"]))
    with pytest.raises(ValueError, match=r"holds MinHash\(num_hashes=16, seed=1\)"):
        index.query(MinHash(16, seed=2, items=["x", "y"]))
    with pytest.raises(ValueError, match=r"the MinHash of key 'e' is empty \(no item added\)"):
        index.insert("e", MinHash(16))
    assert index.query(MinHash(16)) == []
    assert len(index) == 1 and "b" not in index and "e" not in index
    with pytest.raises(TypeError, match=r"holds MinHash objects \(got list\)"):
        index.insert("f", [1, 2])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: MinHash(16, seed=-1), ValueError, "seed must be between 0 and 18446744073709551615 (got -1)"),
        (lambda: MinHash(16, seed=2**64), ValueError, "seed must be between 0 and 18446744073709551615"),
        (lambda: MinHash(16, seed=1.5), TypeError, "seed must be a whole number (got float 1.5)"),
        (lambda: MinHash(16, seed=True), TypeError, "seed must be a whole number (got bool True)"),
        (lambda: LSHIndex(True, 4), TypeError, "bands must be a whole number (got bool True)"),
        (lambda: LSHIndex(4, 2.0), TypeError, "rows must be a whole number (got float 2.0)"),
        (lambda: LSHIndex(0, 4), ValueError, "bands must be between 1 and 65536 (got 0)"),
    ],
)
def test_seeds_bands_and_rows_are_whole_numbers_in_range(make: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        make()


def test_a_baseline_that_cannot_be_written_fails_before_the_scan(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the command does: the library's scan does not lex for minutes to fail at its last step,
    # nor write where a link inside the tree scanned would send the file.
    from minhashdup.ci.baseline import BaselineError
    from minhashdup.engine import pipeline

    def no_scan(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("scanned")

    monkeypatch.setattr(pipeline, "scan", no_scan)
    with pytest.raises(BaselineError, match=r"^write_baseline .*/missing/b\.json: cannot write \(No such file"):
        minhashdup.scan(".", write_baseline=str(tmp_path / "missing" / "b.json"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "reports").symlink_to(outside)
    with pytest.raises(BaselineError, match=r"reports is a link inside the tree scanned"):
        minhashdup.scan(".", write_baseline="reports/b.json")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("before", ["pass", "gc.disable()", "gc.freeze()", "gc.set_threshold(5, 3, 2)"])
def test_importing_the_library_leaves_the_garbage_collector_as_it_was(before: str) -> None:
    # The package's imports run with the collector paused (ms of a warm scan): a program that
    # imports the library keeps its collector on or off, its thresholds and what it froze, and
    # nothing of its own is left frozen by the import.
    probe = "print(gc.isenabled(), gc.get_threshold(), gc.get_freeze_count() > 0)"
    runs = [
        subprocess.run(
            [sys.executable, "-c", f"import gc; {before}; {load}; {probe}"], capture_output=True, text=True, check=True
        ).stdout
        for load in ("pass", "import minhashdup, minhashdup.cli")
    ]
    assert runs[1] == runs[0] != ""


def test_importing_the_library_leaves_the_callers_garbage_collectable_as_before() -> None:
    # What the caller made before the import is not hidden in the oldest generation: a cycle it
    # dropped is freed by a young collection after the import, as it would be without it.
    code = (  # a high threshold: no collection on the way to the import's own
        "import gc, weakref\ngc.set_threshold(10**6)\nclass C: pass\nc = C(); c.me = c; w = weakref.ref(c); del c\n"
        "import minhashdup, minhashdup.cli\ngc.collect(1)\nprint(w() is None)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
