"""What reports show beyond the result, computed before rendering (analysis/regions.py); and
renderers that only write: no lexing, no reading of sources, no git, no processes."""

from __future__ import annotations

import ast
import io
import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

import minhashdup.report
from minhashdup import Config, scan
from minhashdup.analysis import compare, regions
from minhashdup.analysis.regions import Project
from minhashdup.ci.git import locate
from minhashdup.engine import parallel
from minhashdup.report import render
from minhashdup.report.comparison import render_comparison_table
from minhashdup.report.html import render_html
from minhashdup.report.sarif import render_sarif
from minhashdup.result import Result
from minhashdup.source import tokens

from .conftest import TreeFactory, go_file, near_copy, render_go


@pytest.fixture
def families(make_tree: TreeFactory) -> Path:
    """Four families of three near copies each, and a file like none of them."""
    rng = random.Random(7)
    files: dict[str, str | bytes] = {}
    for f in range(4):
        blocks = go_file(rng, 6)
        for c in range(3):
            files[f"f{f}/c{c}.go"] = render_go(near_copy(blocks, rng, 1) if c else blocks)
    files["lone.go"] = render_go(go_file(rng, 6))
    return make_tree(files)


def _scan(tree: Path) -> Result:
    result = scan(str(tree), Config(exact=True, threshold=0.3, cache=False))
    assert len(result.pairs) == 12  # three per family
    return result


def test_regions_are_the_runs_compare_finds(families: Path) -> None:
    result = _scan(families)
    longest = regions.pair_regions(result)
    shown = regions.side_by_side(result)
    assert len(longest) == len(result.pairs) and sorted(shown.runs) == list(range(len(result.pairs)))
    for k, p in enumerate(result.pairs):
        found = compare.compare_files(p.a, p.b, Config(shingle=5)).runs  # the first 50, longest first
        assert found and longest[k] == found[0]
        assert shown.runs[k][: len(found)] == found
    paired = sorted({path for p in result.pairs for path in (p.a, p.b)})
    assert shown.texts == {path: Path(path).read_text() for path in paired}
    assert list(shown.texts) == paired and shown.left_out == 0
    assert regions.pair_regions(result, limit=2) == longest[:2]


def test_texts_fit_the_budget_a_pair_at_a_time_and_only_those_pairs_are_lexed(families: Path) -> None:
    result = _scan(families)
    size = {path: Path(path).stat().st_size for p in result.pairs for path in (p.a, p.b)}
    order = sorted(range(len(result.pairs)), key=lambda k: result.pairs[k].jaccard >= 1.0)
    first, second = (result.pairs[k] for k in order[:2])
    budget = sum(size[path] for path in {first.a, first.b, second.a, second.b}) - 1  # the second no longer fits
    shown = regions.side_by_side(result, budget=budget)
    fitting: set[str] = set()
    chosen, left = [], budget
    for k in order:  # greedy: a later pair that fits (or shares files already in) is still taken
        p = result.pairs[k]
        cost = sum(size[path] for path in {p.a, p.b} - fitting)
        if cost <= left:
            fitting |= {p.a, p.b}
            left -= cost
            chosen.append(k)
    assert order[0] in chosen and order[1] not in chosen
    assert list(shown.texts) == sorted(fitting) and shown.left_out == len(size) - len(fitting)
    everything = regions.side_by_side(result).runs
    assert shown.runs == {k: everything[k] for k in sorted(chosen)}  # runs of the pairs shown, as with all texts


def test_a_file_gone_since_the_scan_has_no_run_and_no_text(families: Path) -> None:
    result = _scan(families)
    gone = result.pairs[0].a
    Path(gone).unlink()
    longest = regions.pair_regions(result)
    shown = regions.side_by_side(result)
    touching = [k for k, p in enumerate(result.pairs) if gone in (p.a, p.b)]
    assert len(touching) == 2
    assert [k for k, r in enumerate(longest) if r is None] == touching
    assert sorted(set(range(len(result.pairs))) - set(shown.runs)) == touching
    assert gone not in shown.texts and shown.left_out == 1


def _forbid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lexing, reading a source, running a program or starting a pool now fails the test."""

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a renderer computed")

    monkeypatch.setattr(compare, "lex_text", forbidden)
    monkeypatch.setattr(compare, "read_source", forbidden)
    monkeypatch.setattr(regions, "lex_text", forbidden)
    monkeypatch.setattr(regions, "read_source", forbidden)
    monkeypatch.setattr(tokens, "lexer_for", forbidden)
    monkeypatch.setattr(subprocess, "run", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    monkeypatch.setattr(parallel, "process_pool", forbidden)


def _sources(page: str) -> dict[str, str]:
    found: dict[str, str] = json.loads(re.search(r'id="sources">(.*?)</script>', page, re.S)[1])  # type: ignore[index]
    return found


def _regions(log: str) -> list[dict[str, int]]:
    return [r["locations"][0]["physicalLocation"]["region"] for r in json.loads(log)["runs"][0]["results"]]


def test_renderers_only_write_what_was_computed_before(families: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _scan(families)
    project = locate(regions.shown_paths(result))
    longest = regions.pair_regions(result)
    shown = regions.side_by_side(result)
    before = json.dumps(result.to_dict()), list(result.warnings)
    _forbid(monkeypatch)
    for fmt in minhashdup.report.FORMATS:
        if fmt not in ("sarif", "html"):
            render(result, fmt, io.StringIO())
    bare, full = io.StringIO(), io.StringIO()
    render_html(result, bare)
    render_html(result, full, sources=shown)
    assert _sources(bare.getvalue()) == {} and "12 paired files have no side-by-side text" in bare.getvalue()
    assert sorted(_sources(full.getvalue()).values()) == sorted(shown.texts.values())
    bare, full = io.StringIO(), io.StringIO()
    render_sarif(result, bare, project=project)
    render_sarif(result, full, project=project, regions=longest)
    assert _regions(bare.getvalue()) == [{"startLine": 1}] * 12
    assert _regions(full.getvalue()) == [{"startLine": r.a_lines[0], "endLine": r.a_lines[1]} for r in longest if r]
    assert (json.dumps(result.to_dict()), result.warnings) == before  # the result is left as it was


def test_the_comparison_table_shows_the_texts_it_is_given(families: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pair = _scan(families).pairs[0]
    found = compare.compare_files(pair.a, pair.b)
    texts = {path: Path(path).read_text() for path in (pair.a, pair.b)}
    _forbid(monkeypatch)
    bare, full = io.StringIO(), io.StringIO()
    render_comparison_table(found, bare)
    render_comparison_table(found, full, texts=texts)
    run = found.runs[0]
    line = next(x.strip() for x in texts[pair.a].splitlines()[run.a_lines[0] - 1 :] if x.strip().startswith("func"))
    assert line not in bare.getvalue() and line[:30] in full.getvalue()  # a line of the longest run
    assert "╭" not in bare.getvalue() and full.getvalue().count("╭") == 2 * min(3, len(found.runs))  # the panels
    assert bare.getvalue() in full.getvalue()  # the side by side comes after the same summary and table


def test_project_names_files_relative_to_its_root(tmp_path: Path) -> None:
    inside, outside = tmp_path / "repo" / "src" / "a b.go", tmp_path / "far.go"
    project = Project.of(str(tmp_path / "repo"), {"x": str(inside), "y": str(outside)})
    assert (project.name("x"), project.name("y")) == ("src/a b.go", "../far.go")


def test_report_modules_import_no_source_engine_ci_or_cli() -> None:
    folder = Path(minhashdup.report.__file__).parent
    found = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            bad = [n for n in names if re.match(r"minhashdup\.(source|engine|ci|cli)\b|minhashdup$", n)]
            if bad:
                found[path.name] = bad
    assert found == {}
