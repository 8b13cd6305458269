from __future__ import annotations

import itertools
import multiprocessing
import os
import random
import re
import signal
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from minhashdup import Config, collect, scan
from minhashdup.core import signature
from minhashdup.core.digest import content_digest
from minhashdup.core.sketch import MinHash
from minhashdup.engine import workers as workers_module
from minhashdup.errors import ConfigError
from minhashdup.source import extract as extract_module

from .conftest import TreeFactory, go_file, near_copy, oracle_jaccard, oracle_shingles, render_go


def planted_tree(make_tree: TreeFactory, seed: int = 5) -> Path:
    """Go files with near-copies at several edit distances, exact copies and unrelated files."""
    rng = random.Random(seed)
    files: dict[str, str | bytes] = {}
    for n in range(6):
        blocks = go_file(rng, 12)
        files[f"pkg{n}/orig.go"] = render_go(blocks)
        files[f"pkg{n}/copy/edited.go"] = render_go(near_copy(blocks, rng, n), package="copy")
    files["copies/one.go"] = files["pkg0/orig.go"]
    files["copies/two.go"] = files["pkg0/orig.go"]
    files["copies/three.go"] = files["pkg0/orig.go"].replace("package gen", "// a comment only\npackage gen")
    files["doc.go"] = "// Package gen is generated.\n//\n// Nothing but comments here.\npackage gen\n"
    files["doc2.go"] = "// Package gen2 is documented too.\npackage gen\n"
    files["empty.go"] = ""
    files["unrelated.go"] = render_go(go_file(rng, 10))
    return make_tree(files)


def _strip_timings(doc: dict[str, Any]) -> dict[str, Any]:
    for key in ("seconds", "cpu_seconds", "cache"):
        doc["stats"].pop(key)
    return doc


def test_every_true_pair_is_found_with_its_exact_jaccard(make_tree: TreeFactory) -> None:
    root = planted_tree(make_tree)
    config = Config(bands=32, rows=2, threshold=0.3, jobs=1)  # P(0.3) > 0.95: recall is not at stake here
    result = scan([str(root)], config)
    compared = sorted(p for p in map(str, root.rglob("*.go")) if len(oracle_shingles(Path(p))) >= 20)
    truth = {}
    for a, b in itertools.combinations(compared, 2):
        j = oracle_jaccard(Path(a), Path(b))
        if j >= 0.3:
            truth[(a, b)] = j
    found = {(p.a, p.b): p.jaccard for p in result.pairs}
    assert found.keys() == truth.keys()
    for key, j in truth.items():
        assert found[key] == pytest.approx(j, abs=1e-12)
    assert len(truth) >= 10  # the planted pairs span the threshold
    assert any(j < 0.6 for j in truth.values()) and any(j == 1.0 for j in truth.values())


@pytest.mark.parametrize("threshold", [0.2, 0.5, 0.9])
def test_exact_mode_finds_every_pair_the_oracle_finds(make_tree: TreeFactory, threshold: float) -> None:
    root = planted_tree(make_tree)
    result = scan([str(root)], Config(exact=True, threshold=threshold, jobs=1))
    compared = sorted(p for p in map(str, root.rglob("*.go")) if len(oracle_shingles(Path(p))) >= 20)
    truth = {
        (a, b): j
        for a, b in itertools.combinations(compared, 2)
        if (j := oracle_jaccard(Path(a), Path(b))) >= threshold
    }
    assert {(p.a, p.b): pytest.approx(p.jaccard) for p in result.pairs} == truth
    assert result.to_dict()["params"]["exact"] is True


def test_identical_files_are_one_group_and_all_their_pairs_are_reported(make_tree: TreeFactory) -> None:
    rng = random.Random(1)
    text = render_go(go_file(rng, 8))
    other = render_go(near_copy(go_file(random.Random(1), 8), rng, 1))
    files: dict[str, str | bytes] = {f"c{i:02}.go": text for i in range(40)}
    files["near.go"] = other
    result = scan([str(make_tree(files))], Config(jobs=1))
    assert result.stats.distinct_sets == 2
    assert result.stats.identical_groups == 1
    assert result.stats.candidates <= 1  # one representative per group goes to MinHash
    ones = [p for p in result.pairs if p.jaccard == 1.0]
    assert len(ones) == 40 * 39 // 2
    assert len(result.pairs) == 40 * 39 // 2 + 40  # every copy pairs with the near copy
    assert [len(c.files) for c in result.clusters] == [41]


def test_empty_and_comment_only_files_are_dropped_and_counted(make_tree: TreeFactory) -> None:
    result = scan([str(planted_tree(make_tree))], Config(jobs=1))
    paths = {p for pair in result.pairs for p in (pair.a, pair.b)}
    assert not any(p.endswith(("doc.go", "doc2.go", "empty.go")) for p in paths)
    assert result.stats.skipped["too-few-shingles"] == 3
    reasons = {Path(n.path).name: n.message for n in result.skips}
    assert reasons["doc.go"].startswith("too-few-shingles (0 distinct shingles")


def test_output_is_the_same_for_any_number_of_workers(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers_module, "_INLINE_BYTES", 0)  # use worker processes even for a small tree
    root = planted_tree(make_tree)
    docs = [_strip_timings(scan([str(root)], Config(jobs=j, cache=False)).to_dict()) for j in (1, 2, 3, 2)]
    assert docs[0]["pairs"]
    assert all(d == docs[0] for d in docs[1:])


def test_one_bad_file_does_not_lose_the_others(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = planted_tree(make_tree)
    (root / "pkg1" / "crash.go").write_text((root / "pkg1" / "orig.go").read_text() + "// CRASH_ME\n")
    real = extract_module.token_texts

    def flaky(lexer: Any, text: str, *args: Any) -> Any:
        if "CRASH_ME" in text:
            raise RuntimeError("lexer crashed")
        return real(lexer, text, *args)

    monkeypatch.setattr(extract_module, "token_texts", flaky)
    baseline = scan([str(root)], Config(jobs=1))
    crashed = [n for n in baseline.skips if n.message.startswith("lex-error")]
    assert [Path(n.path).name for n in crashed] == ["crash.go"]
    assert "RuntimeError: lexer crashed" in crashed[0].message
    assert baseline.pairs and baseline.stats.files_scanned == baseline.stats.files_walked - len(crashed)


def test_scan_signature_equals_the_minhash_object(make_tree: TreeFactory) -> None:
    root = planted_tree(make_tree)
    config = Config(jobs=1)
    corpus = collect([str(root)], config)
    sigs = signature.signatures_of_sets(corpus.sets[:3], signature.hash_seeds(config.seed, config.num_hashes))
    assert np.array_equal(np.stack(corpus.signatures[:3]), sigs)  # made while lexing, the same
    for row, shingles in zip(sigs, corpus.sets[:3], strict=True):
        mh = MinHash(config.num_hashes, seed=config.seed)
        mh.update_hashes(shingles)
        assert np.array_equal(mh.signature, row)


def test_empty_tree_is_a_valid_scan(tmp_path: Path) -> None:
    result = scan([str(tmp_path)], Config())
    assert result.pairs == [] and result.clusters == [] and result.stats.files_walked == 0


real_extract_batch, real_extract_alone = workers_module._extract_batch, workers_module._extract_alone
real_token_texts = extract_module.token_texts


def _die_when_lexing(lexer: Any, text: str, *args: Any) -> list[str]:
    """token_texts, except on a file holding ``KILL_WORKER``: the process dies, as a killed one."""
    if "KILL_WORKER" in text:
        os._exit(9)
    return real_token_texts(lexer, text, *args)


def _fail_when_lexing(lexer: Any, text: str, *args: Any) -> list[str]:
    """token_texts in the tests' own process: a file holding ``KILL_WORKER`` fails to lex there
    (a lex-error) instead of ending the tests."""
    if "KILL_WORKER" in text:
        raise AssertionError("a killer lexed in the main process")
    return real_token_texts(lexer, text, *args)


def _dying_lexer() -> None:
    # In a worker only: the tests' own process fails instead (kill_workers_on_marker)
    if multiprocessing.parent_process() is not None and extract_module.token_texts is real_token_texts:
        extract_module.token_texts = _die_when_lexing


def crash_on_marker(batch: Any, seen: Any = None) -> Any:
    """Stands in for the workers' batch function (pickled by name, it runs in the worker): the
    worker dies when it lexes a marked file."""
    _dying_lexer()
    return real_extract_batch(batch, seen)


def crash_alone_on_marker(task: Any) -> Any:
    """Stands in for the function that runs one file after a worker died, dying the same way."""
    _dying_lexer()
    return real_extract_alone(task)


def kill_workers_on_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers, even for a small tree, that die when they lex a file holding ``KILL_WORKER``;
    lexed in this process, such a file is a lex-error naming the main process."""
    monkeypatch.setattr(workers_module, "_INLINE_BYTES", 0)
    monkeypatch.setattr(workers_module, "_extract_batch", crash_on_marker)
    monkeypatch.setattr(workers_module, "_extract_alone", crash_alone_on_marker)
    monkeypatch.setattr(extract_module, "token_texts", _fail_when_lexing)


def test_a_file_that_kills_its_worker_is_isolated(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = planted_tree(make_tree)
    (root / "pkg2" / "killer.go").write_text((root / "pkg2" / "orig.go").read_text() + "// KILL_WORKER\n")
    expected = _strip_timings(scan([str(root)], Config(jobs=1, exclude=("killer.go",), cache=False)).to_dict())
    kill_workers_on_marker(monkeypatch)
    result = scan([str(root)], Config(jobs=2, cache=False))
    assert [(Path(n.path).name, n.message) for n in result.skips if n.reason == "lex-error"] == [
        ("killer.go", "lex-error (the worker process died on this file)")
    ]
    got = _strip_timings(result.to_dict())
    assert got["pairs"] == expected["pairs"] and got["clusters"] == expected["clusters"]


@pytest.mark.parametrize(
    ("layout", "killers", "lexed"),
    [
        ("AKAACC", ["b.go"], 3),  # the killer second: one copy before it, two after
        ("AAKACC", ["c.go"], 3),  # third: a copy on each side
        ("AKACKAC", ["b.go", "e.go"], 4),  # a second death in the batch handed back after the first
        ("AAKAC", ["c.go"], 3),  # with one death allowed: the rest is lexed here, after it
        ("AA|KCC|DD", ["c.go"], 4),  # three sizes, three batches: the killer first in the second
    ],
)
def test_copies_are_lexed_once_after_a_worker_died(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, layout: str, killers: list[str], lexed: int
) -> None:
    # Files named a.go, b.go, ... with contents A, C, D or a killer K, one size between two "|"
    # (a batch: a small tree's batches are its sizes). The batch dies whole and runs again one
    # file per task: a copy before a killer takes an earlier task's result, one after it the
    # results handed back with the rest of the batch.
    code = render_go(go_file(random.Random(11), 12))
    groups = layout.split("|")
    files = {}
    for g, group in enumerate(groups):
        wide = len("// KILL_WORKER0") + len(groups) - g  # one size a group, larger first
        for c in group:
            i = len(files)
            files[f"{chr(97 + i)}.go"] = (
                code + (f"// KILL_WORKER{i}" if c == "K" else f"// {c}").ljust(wide, ".") + "\n"
            )
    sizes = [len(t) for t in files.values()]
    assert len(set(sizes)) == len(groups) and sizes == sorted(sizes, reverse=True)
    kill_workers_on_marker(monkeypatch)
    if layout == "AAKAC":
        monkeypatch.setattr(workers_module, "MAX_WORKER_DEATHS", 1)
    result = scan([str(make_tree(files))], Config(jobs=2, cache=False))
    assert any("killed their worker process" in w for w in result.warnings) == (layout == "AAKAC")
    assert [Path(n.path).name for n in result.skips if n.reason == "lex-error"] == killers
    # Lexed: each killer (its task died) and one file of each content; the others copied.
    assert result.stats.cache == {"hits": 0, "lexed": lexed, "copies": len(files) - lexed, "result": 0}


@pytest.mark.parametrize(("deaths_allowed", "cache"), [(10, False), (1, False), (10, True)])
def test_copies_of_a_file_that_killed_its_worker_are_not_lexed(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, deaths_allowed: int, cache: bool
) -> None:
    # b.go kills its worker; d.go and e.go hold its very bytes. Lexed, each would kill one more
    # worker, or, once the scan gives up on workers (one death allowed), the scan itself. x.py
    # holds them too but is not alike (another lexer): it is lexed, and kills a worker of its own.
    # With the cache, the workers get the bytes read for the digests.
    code = render_go(go_file(random.Random(11), 12))
    kill, other = code + "// KILL_WORKER\n", code + "// one content\n"
    files = {"a.go": other, "b.go": kill, "c.go": other, "d.go": kill, "e.go": kill}
    root = make_tree({**files, "x.py": kill} if deaths_allowed > 1 else files)
    kill_workers_on_marker(monkeypatch)
    monkeypatch.setattr(workers_module, "MAX_WORKER_DEATHS", deaths_allowed)
    config = Config(jobs=2, **({"cache_dir": str(tmp_path / "cache")} if cache else {"cache": False}))
    result = scan([str(root)], config)
    errors = {Path(n.path).name: n.message for n in result.skips if n.reason == "lex-error"}
    died = "lex-error (the worker process died on this file)"
    assert errors.pop("b.go") == died
    assert errors.pop("x.py", died) == died
    same = f"lex-error (not lexed: the same bytes as {root / 'b.go'}, on which a worker process died)"
    assert errors == {"d.go": same, "e.go": same}
    lexed = 3 if deaths_allowed > 1 else 2  # a.go, b.go (and x.py)
    assert result.stats.cache == {"hits": 0, "lexed": lexed, "copies": 3, "result": 0}
    assert any("killed their worker process" in w for w in result.warnings) == (deaths_allowed == 1)
    assert not any("changed during the scan" in w for w in result.warnings)


class DyingPool:
    """Stands in for a pool of one process that runs tasks in order, finishes the first ``dies_on``
    and dies on the next; the pool notices it while task ``noticed`` is being sent."""

    def __init__(self, dies_on: int, noticed: int) -> None:
        self.dies_on, self.noticed, self.sent = dies_on, noticed, 0

    def submit(self, fn: Any, task: Any) -> Future[list[str]]:
        if self.sent >= self.noticed:
            raise BrokenProcessPool("noticed while sending")
        future: Future[list[str]] = Future()
        if self.sent < self.dies_on:
            future.set_result([f"file {task}"])
        else:
            future.set_exception(BrokenProcessPool("died"))
        self.sent += 1
        return future


@pytest.mark.parametrize(("dies_on", "noticed"), [(3, 4), (3, 5), (0, 1), (3, 3), (6, 6)])
def test_files_run_alone_give_every_result_taken_before_the_death(dies_on: int, noticed: int) -> None:
    # The caller blames the file after the results it got: it must get every one that finished,
    # also when the death is noticed while later files are still being sent (executor.map
    # sent them all first, raised there, and the first file was blamed).
    got: list[str] = []
    with pytest.raises(BrokenProcessPool) as raised:
        got.extend(workers_module._one_by_one(cast(Any, DyingPool(dies_on, noticed)), list(range(10))))
    assert got == [f"file {n}" for n in range(dies_on)]
    # Noticed with every file sent done: the file blamed never ran, and its bytes blame no copy.
    assert isinstance(raised.value, workers_module._DiedBetween) == (dies_on == noticed)


def test_a_killer_read_again_must_be_the_file_the_walk_saw(tmp_path: Path) -> None:
    path = tmp_path / "k.go"
    path.write_text("package k\n")
    st = path.stat()
    item = workers_module._Item(0, "src/k.go", str(path), None, True, True, st.st_size, st.st_mtime_ns, st.st_ino)
    done = workers_module._killer(item, 1 << 20)
    assert done is not None and done.result.digest == content_digest(path.read_bytes())
    assert done.result.detail == "not lexed: the same bytes as src/k.go, on which a worker process died"
    assert workers_module._killer(item._replace(mtime_ns=st.st_mtime_ns - 1), 1 << 20) is None  # changed since
    assert workers_module._killer(item._replace(real=str(tmp_path / "gone.go")), 1 << 20) is None
    given = workers_module._killer(item._replace(real=str(tmp_path / "gone.go"), data=b"package k\n"), 1 << 20)
    assert given is not None and given.result.digest == done.result.digest  # bytes given (a dataset's row): not read


def _runaway(lexer: Any, text: str, *args: Any) -> list[str]:
    """token_texts, except on marked files: a regex that backtracks for ages, as a lexer's can."""
    if "SLOW_LEXER" in text:
        re.match(r"(a+)+$", "a" * 28 + "b")  # ~2**28 steps: seconds, far past the 0.5 s deadline
    return real_token_texts(lexer, text, *args)


def runaway_batch(batch: Any) -> Any:
    """Stands in for the worker's batch function: lexes with :func:`_runaway` in the worker."""
    extract_module.token_texts = _runaway
    return workers_module._extract_batch(batch)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_that_lexes_too_long_is_a_lex_error_and_the_rest_is_kept(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    root = planted_tree(make_tree)
    (root / "pkg2" / "slow.go").write_text((root / "pkg2" / "orig.go").read_text() + "// SLOW_LEXER\n")
    expected = _strip_timings(scan([str(root)], Config(jobs=1, exclude=("slow.go",), cache=False)).to_dict())
    if jobs == 1:
        monkeypatch.setattr(extract_module, "token_texts", _runaway)
    else:
        monkeypatch.setattr(workers_module, "_INLINE_BYTES", 0)
        monkeypatch.setattr(workers_module, "_extract_batch", runaway_batch)
    result = scan([str(root)], Config(jobs=jobs, cache=False, lex_timeout=0.5))
    assert [(Path(n.path).name, n.message) for n in result.skips if n.reason == "lex-error"] == [
        ("slow.go", "lex-error (lexing took over 0.5 s (--lex-timeout); the lexer may be backtracking on this file)")
    ]
    got = _strip_timings(result.to_dict())
    assert got["pairs"] == expected["pairs"] and got["clusters"] == expected["clusters"]
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL  # the handler was put back


def test_lex_timeout_is_checked() -> None:
    for bad in (-1, 10**6, "5", True):
        with pytest.raises(ConfigError, match=r"^lex_timeout must be "):
            Config(lex_timeout=bad)  # type: ignore[arg-type]
    assert Config(lex_timeout=0).lex_timeout == 0  # no limit


def die_at_start() -> bool:
    """Stands in for the workers' start-up probe: as if workers could not start at all."""
    os._exit(3)


def test_workers_that_cannot_start_mean_lexing_here(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = planted_tree(make_tree)
    expected = _strip_timings(scan([str(root)], Config(jobs=1, cache=False)).to_dict())
    monkeypatch.setattr(workers_module, "_INLINE_BYTES", 0)
    monkeypatch.setattr(workers_module, "_ping", die_at_start)
    result = scan([str(root)], Config(jobs=2, cache=False))
    assert any("worker processes could not start" in w for w in result.warnings)
    got = _strip_timings(result.to_dict())
    assert got["pairs"] == expected["pairs"] and got["stats"] == expected["stats"]
