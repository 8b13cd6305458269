"""``--format html``: one self-contained page (inline SVG, CSS and script; nothing loaded from
the network) with the chord diagram, the S-curve, the clusters and pairs, and each pair side
by side.

Paths and source lines reach the page either escaped by :func:`html.escape` (tables, SVG
titles) or inside JSON that the script reads and inserts with ``textContent``; the JSON is
written so that no ``<``, ``>`` or ``&`` appears in it literally, so it cannot end its
``<script>`` element.
"""

from __future__ import annotations

import importlib.resources
import json
from html import escape
from typing import Any, TextIO

from minhashdup._version import __version__
from minhashdup.analysis.evaluate import Evaluation
from minhashdup.analysis.regions import SideBySide
from minhashdup.report import folders, svg
from minhashdup.report.evaluation import three_places
from minhashdup.result import Pair, Result

#: Most rejected candidates drawn (faintly) in the chord diagram.
MAX_REJECTED = 20_000
#: More verified pairs than this and the chord diagram joins folders: a chord per pair would be a
#: solid disc (the four Go releases side by side have 71,696 pairs; the Go tree alone 2,278).
CHORD_LIMIT = 3_000


def render_html(
    result: Result, stream: TextIO, sources: SideBySide | None = None, chord_limit: int = CHORD_LIMIT
) -> None:
    """Write the report page of ``result``.

    Args:
        result: the scan's result.
        stream: where the page goes.
        sources: the texts and shared runs of the side-by-side view, computed before
            (:func:`minhashdup.analysis.regions.side_by_side`); without them the page holds
            no file text and no run.
        chord_limit: with more pairs than this, chords join folders (the page's script draws
            them and opens a folder on a click) instead of files.
    """
    lay = svg.layout(list(set(result.files) | {p.a for p in result.pairs} | {p.b for p in result.pairs}))
    index = {name: i for i, name in enumerate(lay.files)}
    pairs = [(index[p.a], index[p.b]) for p in result.pairs]
    low = float(result.params.get("threshold", 0.5))
    colours = [svg.colour(p.jaccard, low) for p in result.pairs]
    left_out = sources.left_out if sources else len({i for p in pairs for i in p})
    data = _data(result, lay.files, pairs, colours, sources)
    if len(pairs) > chord_limit:
        data["view"] = folders.folder_view(lay.files)
        data["gid"] = _group_ids(result, index)
        chord = _folder_panel(result, data["view"], chord_limit)
    else:
        chord = _file_panel(result, lay, pairs, colours, index)
    texts = {str(index[path]): text for path, text in sources.texts.items()} if sources else {}
    body = [
        _header(result, len(lay.files), left_out),
        '<main><div class="panels">',
        chord,
        _scurve_panel(result),
        "</div>",
        _clusters_table(result),
        _pairs_table(result),
        "</main>",
        _dialog(),
        '<div id="tip"></div>',
        f'<script type="application/json" id="data">{_json(data)}</script>',
        f'<script type="application/json" id="sources">{_json(texts)}</script>',
        f"<script>{_asset('report.js')}</script>",
        f"<script>{_asset('chords.js')}</script>" if "view" in data else "",
    ]
    stream.write(_page("minhashdup report", "".join(body)))


def _file_panel(
    result: Result, lay: svg.Layout, pairs: list[tuple[int, int]], colours: list[str], index: dict[str, int]
) -> str:
    """The chord diagram drawn here, a chord per pair."""
    rejected = [(index[a], index[b]) for a, b in result.rejected[:MAX_REJECTED] if a in index and b in index]
    chord = svg.chord_svg(
        lay, [(a, b, p.jaccard) for (a, b), p in zip(pairs, result.pairs, strict=True)], colours, rejected
    )
    return (
        '<section class="panel wide"><h2>Where the copies sit</h2>'
        f'<p class="muted" id="chord-view">{len(pairs):,} pairs: every compared file on the circle in path order, '
        "folders marked on the rim; a chord per verified pair, coloured by exact Jaccard. Hover for paths, click a "
        f"file to highlight its pairs, click a chord to see the two files side by side.</p>{chord}"
        f"{svg.legend_svg(float(result.params.get('threshold', 0.5)))}"
        f'<label><input type="checkbox" id="show-rejected"> show the {len(rejected)} candidates that failed the exact '
        "check (dashed)</label></section>"
    )


def _folder_panel(result: Result, view: dict[str, Any], limit: int) -> str:
    """The chord diagram by folders: an empty picture that the page's script draws (chords.js),
    and the sentence that says why."""
    joined = " (small neighbours under one folder taken together)" if view["fine"] > view["depth"] else ""
    return (
        '<section class="panel wide"><h2>Where the copies sit</h2>'
        f'<p class="muted" id="chord-view">{len(result.pairs):,} pairs, more than the {limit:,} a chord per pair can '
        f"show: chords join folders, {len(view['arcs'])} arcs on the rim of folders at depth {view['fine']}{joined}, "
        "in path order. A chord is as wide as its pairs are many (a group of identical files counts once) and "
        "coloured by their median Jaccard; an arc with pairs inside takes their colour. Click a chord to list its "
        "pairs, an arc to open it.</p>"
        '<p class="chord-nav"><button id="chord-up" hidden>up one level</button> <span id="chord-where"></span></p>'
        # Room around the circle for the labels of folders, longer than a file view's.
        f'<svg id="chord" class="folders" viewBox="-70 -50 {svg.SIZE + 140} {svg.SIZE + 100}" role="img" '
        'aria-label="Chord diagram of near-duplicate pairs between folders"><g id="rim"></g><g id="chords"></g></svg>'
        f"{svg.legend_svg(float(result.params.get('threshold', 0.5)))}</section>"
    )


def _group_ids(result: Result, index: dict[str, int]) -> list[int]:
    """For each file, 1 + the index of its group of identical files, or 0."""
    ids = [0] * len(index)
    for k, group in enumerate(result.groups):
        for name in group.files:
            if name in index:
                ids[index[name]] = k + 1
    return ids


def _v(pair: Pair) -> int:
    """Which side of ``pair`` is vendored: 1 the first, 2 the second, 3 both."""
    return int(pair.vendored_a) + 2 * int(pair.vendored_b)


def _verbatim(pair: Pair) -> list[float]:
    """The pair's verbatim Jaccard, with names or literals normalised (a 10th element of its
    row); else nothing, so that a default report's data is as before."""
    return [] if pair.jaccard_verbatim is None else [round(pair.jaccard_verbatim, 6)]


def _data(
    result: Result, files: list[str], pairs: list[tuple[int, int]], colours: list[str], sources: SideBySide | None
) -> dict[str, Any]:
    """The page's data: what its script draws the tables and the side-by-side view from."""
    index = {name: i for i, name in enumerate(files)}
    runs = sources.runs if sources else {}
    return {
        "files": files,
        "pairs": [
            [
                a,
                b,
                round(p.jaccard, 6),
                round(p.estimate, 6),
                p.common,
                p.shingles_a,
                p.shingles_b,
                int(p.known),
                _v(p),
                *_verbatim(p),
            ]
            for (a, b), p in zip(pairs, result.pairs, strict=True)
        ],
        "clusters": [
            [len(c.files), c.pairs, round(c.jaccard_min, 6), round(c.jaccard_max, 6), [index[f] for f in c.files]]
            for c in result.clusters
        ],
        "colours": colours,
        "runs": {str(k): [[*r.a_lines, *r.b_lines, r.tokens] for r in found] for k, found in sorted(runs.items())},
        "params": result.params,
    }


def render_evaluation_html(ev: Evaluation, stream: TextIO) -> None:
    """``evaluate --format html``: the S-curve with the measured recall per bin, and the bins."""
    p = ev.params
    measured = [(b.low, b.high, b.recall, b.pairs) for b in ev.bins if b.recall is not None]
    curve = svg.scurve_svg(p["bands"], p["rows"], p["bits"], p["threshold"], [], measured)
    completing = ev.completes
    rows = "".join(
        f'<tr><td>{b.low:.1f}-{b.high:.1f}</td><td class="num">{b.pairs}</td><td class="num">{b.found}</td>'
        f'<td class="num">{three_places(b.recall)}</td>'
        + (f'<td class="num">{three_places(b.recall_completed)}</td>' if completing else "")
        + f'<td class="num">{three_places(b.predicted)}</td></tr>'
        for b in ev.bins
    )
    pairs, found = ev.at_least(p["threshold"])
    completed = ev.completed_at_least(p["threshold"])
    seeds = "1 seed" if p["repeats"] == 1 else f"mean of {p['repeats']} seeds"
    more = (
        f" With family completion ({ev.completion_checks} more exact checks), {completed} were found."
        if completing
        else ""
    )
    body = (
        f"<header><h1>LSH {p['bands']} x {p['rows']} against the exact all-pairs</h1>"
        f'<p class="summary">{found} of the {pairs} pairs of similarity {p["threshold"]:g} and up were found by LSH,'
        f" in {ev.candidates} candidates of {ev.all_pairs} pairs of distinct files.{more}</p></header>"
        f'<main><div class="panels"><section class="panel"><h2>Predicted and measured</h2>'
        f'<p class="muted">The curve is P(s); red squares are the measured recall of LSH per bin.</p>{curve}</section>'
        '<section class="panel"><h2>Bins</h2><table><thead><tr><th>similarity</th><th>true pairs</th>'
        f"<th>found (seed {p['seed']})</th><th>recall ({seeds})</th>"
        + (f"<th>with completion ({seeds})</th>" if completing else "")
        + f"<th>predicted</th></tr></thead><tbody>{rows}</tbody></table></section></div></main>"
    )
    stream.write(_page("minhashdup evaluate", body))


def _header(result: Result, files: int, left_out: int) -> str:
    s, p = result.stats, result.params
    mode = "exact mode (no LSH)" if p.get("exact") else f"{p.get('bands')} x {p.get('rows')} bands x rows"
    completion = (
        f", {s.completion_checks} family completion checks ({s.completion_pairs} pairs found)"
        if p.get("completion")
        else ""
    )
    note = (
        f'<details id="no-text"><summary>{left_out:,} paired files have no side-by-side text in this page (it '
        "embeds source up to a size cap); <code>minhashdup compare A B</code> shows any pair side by side.</summary>"
        '<pre class="names"></pre></details>'
        if left_out
        else ""
    )
    return (
        "<header><h1>Near-duplicate files</h1>"
        f'<p class="summary">{files} files compared, {len(result.pairs)} pairs at Jaccard &ge; '
        f"{float(p.get('threshold', 0.5)):g} in {len(result.clusters)} clusters; {mode}, {s.candidates} candidates"
        f"{completion}. minhashdup {escape(__version__)}.</p>{note}</header>"
    )


def _scurve_panel(result: Result) -> str:
    p = result.params
    if p.get("exact"):
        return ""
    curve = svg.scurve_svg(
        int(p["bands"]),
        int(p["rows"]),
        int(p.get("bits", 64)),
        float(p["threshold"]),
        [x.jaccard for x in result.pairs],
    )
    return (
        '<section class="panel"><h2>The S-curve of this setting</h2><p class="muted">Probability that a pair of '
        "similarity s becomes a candidate, P(s) = 1 - (1 - s<sup>r</sup>)<sup>b</sup>; the bars count the verified "
        "pairs by exact Jaccard (identical pairs apart, at 1): where they sit on the curve says how surely "
        f"LSH finds pairs like them.</p>{curve}</section>"
    )


def _table(table_id: str, title: str, note: str, columns: list[tuple[str, str]]) -> str:
    """An empty sortable table: the script fills it from the page's data a page of rows at a time
    (a page of tens of thousands of rows loads slowly), sorting all of them; the chord diagram
    may narrow it to some rows (``unfilter`` shows them all again)."""
    heads = "".join(
        f'<th data-col="{i}" data-kind="{kind}">{escape(name)}</th>' for i, (name, kind) in enumerate(columns)
    )
    return (
        f'<h2>{escape(title)}</h2><p class="muted">{escape(note)}</p><div class="scroll"><table id="{table_id}">'
        f"<thead><tr>{heads}</tr></thead><tbody></tbody></table></div>"
        f'<p class="pager" data-table="{table_id}"><button data-go="prev">previous</button> '
        '<span class="where"></span> <button data-go="next">next</button> '
        '<button data-go="unfilter" hidden>show all rows</button></p>'
    )


def _clusters_table(result: Result) -> str:
    cols = [("#", "num"), ("files", "num"), ("pairs", "num"), ("jaccard", "num"), ("members", "text")]
    return _table(
        "clusters", f"Clusters ({len(result.clusters)})", "Families joined by pairs. Click a header to sort.", cols
    )


def _pairs_table(result: Result) -> str:
    cols = [("jaccard", "num"), ("estimate", "num"), ("file a", "text"), ("file b", "text"), ("common", "num")]
    cols.append(("baseline", "text"))
    note = "Click a header to sort, a row to see the two files side by side."
    return _table("pairs", f"Pairs ({len(result.pairs)})", note, cols)


def _dialog() -> str:
    return (
        '<dialog id="sbs"><div class="bar"><strong id="sbs-title"></strong><span class="grow"></span>'
        '<span class="muted">highlighted: lines of shared token runs</span><button id="sbs-close">close</button></div>'
        '<div class="sides"><div class="side" id="sbs-a"></div><div class="side" id="sbs-b"></div></div></dialog>'
    )


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _asset(name: str) -> str:
    return (importlib.resources.files("minhashdup.report") / "assets" / name).read_text(encoding="utf-8")


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # Nothing may be fetched: the page must work offline and as a CI attachment.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{escape(title)}</title><style>{_asset('report.css')}</style></head><body>{body}</body></html>\n"
    )
