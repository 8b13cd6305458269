"""The HTML report: self-contained, escaped, and working in a real browser (headless Chromium)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from minhashdup import Config, scan
from minhashdup.analysis.regions import side_by_side
from minhashdup.cli import cli
from minhashdup.errors import ExitCode
from minhashdup.report.folders import folder_view
from minhashdup.report.html import render_html
from minhashdup.report.svg import colour, layout

from .conftest import go_file, near_copy, render_go

HOSTILE = "<img src=x onerror=alert(1)>.go"
SCRIPT_LINE = "// </script><script>document.title='pwned'</script>"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Two folders of planted near-duplicates, one file named like markup, one line like a script."""
    rng = random.Random(4)
    root = tmp_path / "tree"
    base, other = go_file(rng, 10), go_file(rng, 10)
    files = {
        "pkg/a.go": render_go(base),
        "pkg/b.go": render_go(near_copy(base, rng, 1)),
        f"gen/{HOSTILE}": render_go(near_copy(base, rng, 2)).replace("package gen", f"package gen\n{SCRIPT_LINE}"),
        "gen/x.go": render_go(other),
        "gen/y.go": render_go(near_copy(other, rng, 2)),
        "lone/z.go": render_go(go_file(rng, 10)),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def report(tree: Path, *args: str) -> tuple[str, dict[str, object]]:
    out = tree.parent / "report.html"
    result = CliRunner().invoke(cli, ["scan", str(tree), "--exact", "-q", "-f", "html", "-o", str(out), *args])
    assert result.exit_code == ExitCode.OK, result.stderr
    text = out.read_text()
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', text, re.S)[1])  # type: ignore[index]
    return text, data


def test_report_is_self_contained_and_escapes_everything(tree: Path) -> None:
    text, data = report(tree)
    assert "<img src=x" not in text  # the file name only as escaped text or inside escaped JSON
    assert text.count("<script") == 3 and text.count("</script>") == 3  # data, sources, the page's script
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)  # nothing loaded from the network
    assert "default-src 'none'" in text
    assert len(data["pairs"]) == 4 and len(data["files"]) == 6  # type: ignore[arg-type]
    names = data["files"]
    assert any(n.endswith(HOSTILE) for n in names)  # type: ignore[union-attr]
    sources = json.loads(re.search(r'id="sources">(.*?)</script>', text, re.S)[1])  # type: ignore[index]
    assert any(SCRIPT_LINE in s for s in sources.values())  # the text itself survives, escaped in transit
    for k, runs in data["runs"].items():  # type: ignore[union-attr]
        a, b = data["pairs"][int(k)][:2]  # type: ignore[index]
        lines_a, lines_b = (sources[str(i)].count("\n") + 1 for i in (a, b))
        assert runs and all(1 <= r[0] <= r[1] <= lines_a and 1 <= r[2] <= r[3] <= lines_b for r in runs)


def test_layout_puts_files_in_path_order_with_folders() -> None:
    lay = layout(["./b/2.go", "./a/1.go", "./b/1.go", "./c/d/1.go"])
    assert lay.files == ["./a/1.go", "./b/1.go", "./b/2.go", "./c/d/1.go"]
    assert lay.angle == sorted(lay.angle) and lay.angle[-1] < 2 * 3.1416
    assert [f[0] for f in lay.folders] == ["a", "b", "c"]
    assert colour(0.5, 0.5) != colour(0.75, 0.5) != colour(1.0, 0.5)


def test_folder_view_of_four_releases_keeps_a_few_dozen_arcs_each_within_one_release() -> None:
    files = sorted(
        f"rel/go-1.{r}/src/p{p:02d}/s{s}/{f}.go" for r in range(4) for p in range(50) for s in range(2) for f in "ab"
    )
    view = folder_view(files)
    assert view["strip"] == len("rel/") and (view["depth"], view["fine"]) == (2, 3)  # 4 at go-1.r/src, 200 below
    arcs = view["arcs"]
    assert 30 <= len(arcs) <= 50  # about ARCS
    assert [a[0] for a in arcs] == [0] + [a[1] for a in arcs[:-1]] and arcs[-1][1] == len(files)  # every file once
    for first, last, label, folder in arcs:
        releases = {f.split("/")[1] for f in files[first:last]}
        assert len(releases) == 1 and label.startswith(releases.pop() + "/src/p") and folder == ""
    assert [a[1] - a[0] for a in arcs[:10]] == [a[1] - a[0] for a in arcs[10:20]]  # alike releases, alike arcs


def test_folder_view_cuts_a_flat_folder_into_ranges_of_files() -> None:
    files = [f"flat/f{n:04d}.go" for n in range(400)] + ["other/a.go"]
    arcs = folder_view(files)["arcs"]
    assert arcs[0] == [0, 10, "flat/f0000.go .. f0009.go", "flat"] and arcs[-1] == [400, 401, "other", "other"]
    assert len(arcs) == 41 and all(a[3] == "flat" and a[1] - a[0] == 10 for a in arcs[:-1])


def test_evaluate_html(tree: Path) -> None:
    result = CliRunner().invoke(cli, ["evaluate", str(tree), "-q", "-f", "html"])
    assert result.exit_code == ExitCode.OK
    assert result.stdout.startswith("<!DOCTYPE html>") and 'class="measured"' in result.stdout


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
FLAGS += ["--disable-dev-shm-usage", "--hide-scrollbars"]


def chromium(*args: str) -> str:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs it (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    done = subprocess.run([CHROMIUM, *FLAGS, *args], capture_output=True, text=True, timeout=120)
    return done.stdout


class _Dom(HTMLParser):
    """The elements of a dumped DOM that the test looks at."""

    def __init__(self) -> None:
        super().__init__()
        self.chords: list[dict[str, str | None]] = []
        self.dots: list[str | None] = []
        self.rows = 0
        self.shared_lines = 0
        self.root: dict[str, str | None] = {}
        self.dialog_open = False
        self.text: list[str] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "html":
            self.root = a
        elif tag == "path" and "data-p" in a:
            self.chords.append(a)
        elif tag == "circle" and "data-f" in a:
            self.dots.append(a["data-f"])
        elif tag == "tr" and "data-p" in a:
            self.rows += 1
        elif tag == "div" and a.get("class") == "ln shared":
            self.shared_lines += 1
        elif tag == "dialog" and "open" in a:
            self.dialog_open = True
        self._in_title = tag == "title" and not self.title  # the page's, not the SVG tooltips'

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_title:
            self.title += data


def test_report_in_headless_chromium(tree: Path) -> None:
    _, data = report(tree)
    page = tree.parent / "report.html"
    dom = _Dom()
    dom.feed(chromium("--dump-dom", f"{page.as_uri()}#pair=0"))
    assert dom.root.get("data-ready") and dom.root.get("data-loaded")  # the script ran to its end
    pairs = data["pairs"]
    assert sorted(int(c["data-p"] or -1) for c in dom.chords) == list(range(len(pairs)))  # type: ignore[arg-type]
    colours = data["colours"]
    assert all(c["stroke"] == colours[int(c["data-p"] or 0)] for c in dom.chords)  # type: ignore[index]
    paired = {i for p in pairs for i in p[:2]}  # type: ignore[union-attr, index]
    assert {int(d or -1) for d in dom.dots} == paired
    assert dom.rows == len(pairs)  # type: ignore[arg-type]
    assert dom.dialog_open and dom.shared_lines > 0  # #pair=0 opened the side-by-side view
    assert HOSTILE in "".join(dom.text)  # shown as text, not markup
    assert dom.title == "minhashdup report"  # the script-like source line ran nothing
    shot = tree.parent / "report.png"
    chromium("--window-size=1200,1000", f"--screenshot={shot}", page.as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


_DRIVER = """<script>
(function () {
  const root = document.documentElement.dataset;
  const chord = document.querySelector('#chords path[data-p="0"]');
  chord.dispatchEvent(new MouseEvent("mouseover", { bubbles: true, clientX: 5, clientY: 5 }));
  root.tip = document.getElementById("tip").textContent;
  const file = document.querySelector("#files circle");
  root.file = file.dataset.f;
  file.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  root.focus = document.getElementById("chord").classList.contains("focus");
  root.lit = Array.from(document.querySelectorAll("#chords path.on")).map((p) => p.dataset.p).join(",");
  document.querySelector('#pairs th[data-col="2"]').click();
  root.column = Array.from(document.querySelectorAll("#pairs tbody tr")).map((r) => r.cells[2].textContent).join("\\n");
  document.getElementById("show-rejected").click();
  root.rejectedShown = !document.getElementById("rejected").classList.contains("hidden");
})();
</script></body>"""


def test_hover_click_sort_and_toggle_in_chromium(tree: Path) -> None:
    # The page as a user drives it: events dispatched by a script appended to a copy of the report.
    _, data = report(tree)
    page = tree.parent / "report.html"
    driven = tree.parent / "driven.html"
    driven.write_text(page.read_text().replace("</body>", _DRIVER))
    dom = _Dom()
    dom.feed(chromium("--dump-dom", driven.as_uri()))
    files, pairs = data["files"], data["pairs"]
    a, b = pairs[0][:2]  # type: ignore[index]
    assert dom.root["data-tip"] == f"{files[a]}\n{files[b]}\nJaccard {pairs[0][2]:.3f}"  # type: ignore[index]
    f = int(dom.root["data-file"] or -1)
    assert dom.root["data-focus"] == "true"
    mine = sorted(k for k, p in enumerate(pairs) if f in p[:2])  # type: ignore[arg-type, index]
    assert sorted(int(k) for k in (dom.root["data-lit"] or "").split(",")) == mine
    column = (dom.root["data-column"] or "").split("\n")
    assert column == sorted(column, reverse=True) and len(column) == len(pairs)  # type: ignore[arg-type]
    assert dom.root["data-rejected-shown"] == "true"


@pytest.fixture
def releases(tmp_path: Path) -> Path:
    """Four releases of six packages: in each package two files identical in every release (a
    group of 8) and a third near-copied from release to release; 108 pairs, 24 package folders."""
    rng = random.Random(18)
    root = tmp_path / "releases"
    for p in range(6):
        same, moving = go_file(rng, 8), go_file(rng, 8)
        for r in range(4):
            folder = root / f"go-1.{r}" / "src" / f"pkg{p}"
            folder.mkdir(parents=True)
            for name in ("a.go", "b.go"):
                (folder / name).write_text(render_go(same))
            (folder / "c.go").write_text(render_go(near_copy(moving, rng, 1) if r else moving))
    return root


_FOLDER_DRIVER = """<script>
(function () {
  const root = document.documentElement.dataset;
  const chords = Array.from(document.querySelectorAll("#chords path.fchord"));
  root.before = root.arcs + " " + chords.length;
  root.tips = chords.map(function (c) {
    c.dispatchEvent(new MouseEvent("mouseover", { bubbles: true, clientX: 5, clientY: 5 }));
    return document.getElementById("tip").textContent;
  }).join("\\n\\n");
  const pager = document.querySelector('p.pager[data-table="pairs"]');
  const rows = () => document.querySelectorAll("#pairs tbody tr").length;
  const page = () => pager.querySelector(".where").textContent + " " + rows();
  root.pages = page();
  pager.querySelector('[data-go="next"]').click();
  root.pages += "; " + page();
  chords[chords.length - 1].dispatchEvent(new MouseEvent("click", { bubbles: true }));
  root.listed = Array.from(document.querySelectorAll("#pairs tbody tr")).map((r) => r.dataset.p).join(",");
  root.pager = document.querySelector('p.pager[data-table="pairs"] .where').textContent;
  const row = document.querySelector("#pairs tbody tr");
  root.clicked = row.dataset.p;
  row.click();
  root.missing = document.querySelector("#sbs-a .missing").textContent;
  document.getElementById("sbs-close").click();
  document.querySelector("#no-text summary").click();
  root.noText = document.querySelector("#no-text .names").textContent;
  const arc = document.querySelector('#rim path.node[data-n="0"]');
  arc.dispatchEvent(new MouseEvent("mouseover", { bubbles: true, clientX: 5, clientY: 5 }));
  root.opening = document.getElementById("tip").textContent.split("\\n")[0];
  arc.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  root.after = root.arcs + " " + document.querySelectorAll("#chords path.fchord").length;
  root.where = document.getElementById("chord-where").textContent;
  root.arcNames = Array.from(document.querySelectorAll("#rim path.node")).map(function (a) {
    a.dispatchEvent(new MouseEvent("mouseover", { bubbles: true, clientX: 5, clientY: 5 }));
    return document.getElementById("tip").textContent.split("\\n")[0];
  }).join("\\n");
  document.getElementById("chord-up").click();
  root.back = root.arcs + " " + document.querySelectorAll("#chords path.fchord").length;
})();
</script></body>"""


def test_folder_chords_past_the_limit_and_a_click_opens_a_folder_in_chromium(releases: Path) -> None:
    result = scan(str(releases), Config(exact=True, threshold=0.5, cache=False))
    assert len(result.pairs) == 6 * (28 + 6)  # per package: the group of 8 and the 4 near copies
    page = releases.parent / "folders.html"
    with page.open("w") as out:
        render_html(result, out, side_by_side(result, budget=0), chord_limit=100)  # and no text
    text = page.read_text()
    assert "<path data-p=" not in text and "more than the 100 a chord per pair can show" in text
    driven = releases.parent / "driven.html"
    driven.write_text(text.replace("</body>", _FOLDER_DRIVER))
    dom = _Dom()
    dom.feed(chromium("--dump-dom", driven.as_uri()))
    root = dom.root
    assert root.get("data-loaded") and root["data-view"] == "folders"
    assert root["data-before"] == "24 " + str(6 * 6)  # a chord between each package's folders of two releases
    for tip in (root["data-tips"] or "").split("\n\n"):  # 4 of the group's pairs and 1 near pair, the group once
        first, second, count = tip.split("\n")[:3]
        assert first.split("/")[2] == second.split("/")[2] and first.split("/")[0] != second.split("/")[0]
        assert count.startswith("5 pairs (2 counting each group of identical files once), median Jaccard ")
    data = json.loads(re.search(r'id="data">(.*?)</script>', text, re.S)[1])  # type: ignore[index]
    last = (root["data-tips"] or "").split("\n\n")[-1].split("\n")
    listed = sorted(int(k) for k in (root["data-listed"] or "").split(","))
    names = [last[0], last[1]]
    expected = [
        k
        for k, p in enumerate(data["pairs"])
        if sorted(_folder(data["files"][i], releases) for i in p[:2]) == sorted(n.rstrip("/") for n in names)
    ]
    assert listed == expected and len(expected) == 5
    assert root["data-pages"] == "1-200 of 204 rows 200; 201-204 of 204 rows 4"  # a page at a time
    assert (root["data-pager"] or "").startswith("pairs between ") and "1-5 of 5 rows" in (root["data-pager"] or "")
    a, b = (data["files"][i] for i in data["pairs"][int(root["data-clicked"] or -1)][:2])
    assert (root["data-missing"] or "").endswith(f"\n\nminhashdup compare {a} {b}")  # how to see it, quoted if need be
    paired = sorted({data["files"][i] for p in data["pairs"] for i in p[:2]})
    assert (root["data-no-text"] or "").split("\n") == paired and f"{len(paired)} paired files have no" in text
    assert root["data-opening"] == "go-1.0/src/pkg0/ (3 files)"
    # its three files each an arc of their own, with a chord to the package in each other release, and a to b
    assert root["data-after"] == f"{24 - 1 + 3} {6 * 6 - 3 + 3 * 3 + 1}"
    assert root["data-where"] == "opened: go-1.0/src/pkg0"
    names = (root["data-arc-names"] or "").split("\n")
    assert names[:4] == [f"go-1.0/src/pkg0/{f}.go (1 file)" for f in "abc"] + ["go-1.0/src/pkg1/ (3 files)"]
    assert root["data-back"] == root["data-before"]


def _folder(path: str, root: Path) -> str:
    return str(Path(path).parent.relative_to(root))
