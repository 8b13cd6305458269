"""SVG pictures of a scan, drawn here (no plotting library): the chord diagram and the S-curve.

Every text that comes from the tree (paths, folder names) is escaped; interactive details
(tooltips, highlighting) are left to the page's script, which reads the same indices from
``data-`` attributes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from html import escape

import numpy as np

from minhashdup.core.bands import candidate_probability, knee

#: Colour stops of the similarity scale (a perceptually ordered blue-green-yellow ramp).
STOPS = ("#3b0f70", "#3e4a89", "#26828e", "#35b779", "#b5de2b", "#fde725")
SIZE = 920
RADIUS = 320
GAP = 0.004  # radians between folders


def colour(value: float, low: float, high: float = 1.0) -> str:
    """Hex colour of ``value`` on the similarity scale from ``low`` to ``high``.

    Example:
        >>> colour(1.0, 0.5), colour(0.5, 0.5)
        ('#fde725', '#3b0f70')
    """
    x = 0.0 if high <= low else min(1.0, max(0.0, (value - low) / (high - low)))
    pos = x * (len(STOPS) - 1)
    i = min(int(pos), len(STOPS) - 2)
    a, b = _rgb(STOPS[i]), _rgb(STOPS[i + 1])
    mix = [round(u + (v - u) * (pos - i)) for u, v in zip(a, b, strict=True)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16)


def folder_of(path: str, depth: int) -> str:
    """The first ``depth`` folders of a relative path (``.`` for a file at the top)."""
    parts = path.split("/")[:-1]
    return "/".join(parts[:depth]) or "."


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where each file sits on the circle: ``angle[i]`` for ``files[i]`` (sorted paths)."""

    files: list[str]
    angle: list[float]
    folders: list[tuple[str, int, int]]  # (name, first index, last index + 1), in order


def layout(files: Sequence[str]) -> Layout:
    """Files in path order around the circle, a small gap between folders.

    Folders are taken one level below the common prefix, or deeper while that gives a
    single folder (so a tree of one package still shows its subfolders).
    """
    names = sorted(files)
    rel = _relative(names)
    depth = 1
    while depth < 6 and len({folder_of(r, depth) for r in rel}) == 1 and any(r.count("/") > depth for r in rel):
        depth += 1
    folders = runs_of([folder_of(r, depth) for r in rel])
    span = 2 * math.pi - GAP * len(folders)
    step = span / max(1, len(names))
    angle, at = [], 0.0
    for _, first, last in folders:
        for _ in range(first, last):
            angle.append(at + step / 2)
            at += step
        at += GAP
    return Layout(names, angle, folders)


def _relative(names: Sequence[str]) -> list[str]:
    clean = [n.replace("\\", "/").removeprefix("./") for n in names]
    common = common_folders(clean)
    return ["/".join(c.split("/")[common:]) for c in clean]


def common_folders(clean: Sequence[str]) -> int:
    """How many leading folders all of the ``/``-separated paths ``clean`` share."""
    common = 0
    if clean:
        for parts in zip(*(c.split("/")[:-1] for c in clean), strict=False):
            if len(set(parts)) != 1:
                break
            common += 1
    return common


def _point(theta: float, r: float) -> tuple[float, float]:
    return SIZE / 2 + r * math.sin(theta), SIZE / 2 - r * math.cos(theta)


def chord_path(t1: float, t2: float) -> str:
    """A curve from angle ``t1`` to ``t2`` bending towards the centre the more the two are apart."""
    (x1, y1), (x2, y2) = _point(t1, RADIUS), _point(t2, RADIUS)
    apart = abs(math.atan2(math.sin(t1 - t2), math.cos(t1 - t2))) / math.pi  # 0 (same) .. 1 (opposite)
    mid = (t1 + t2) / 2 if abs(t1 - t2) <= math.pi else (t1 + t2) / 2 + math.pi
    cx, cy = _point(mid, RADIUS * (1 - apart) * 0.9)
    return f"M{x1:.1f},{y1:.1f}Q{cx:.1f},{cy:.1f} {x2:.1f},{y2:.1f}"


def chord_svg(
    lay: Layout,
    pairs: Sequence[tuple[int, int, float]],
    colours: Sequence[str],
    rejected: Sequence[tuple[int, int]],
    labels: int = 14,
) -> str:
    """The chord diagram: folder arcs (largest labelled), a dot per paired file, a chord per pair.

    ``pairs`` are ``(file index, file index, jaccard)``, ``colours`` their strokes (see
    :func:`colour`); chords are drawn weakest first so the strongest lie on top, each with
    ``data-p`` (its index in ``pairs``).
    """
    out = [
        f'<svg id="chord" viewBox="0 0 {SIZE} {SIZE}" role="img" aria-label="Chord diagram of near-duplicate pairs">'
    ]
    out.append(_rim(lay, labels))
    out.append('<g id="rejected" class="rejected hidden">')  # shown by the page's toggle
    for a, b in rejected:
        out.append(f'<path d="{chord_path(lay.angle[a], lay.angle[b])}"/>')
    out.append('</g><g id="chords">')
    order = sorted(range(len(pairs)), key=lambda k: (pairs[k][2], k))
    for k in order:
        a, b, _ = pairs[k]
        out.append(f'<path data-p="{k}" stroke="{colours[k]}" d="{chord_path(lay.angle[a], lay.angle[b])}"/>')
    out.append('</g><g id="files">')
    paired = sorted({i for a, b, _ in pairs for i in (a, b)})
    for i in paired:
        x, y = _point(lay.angle[i], RADIUS)
        out.append(f'<circle data-f="{i}" cx="{x:.1f}" cy="{y:.1f}" r="3"/>')
    out.append("</g></svg>")
    return "".join(out)


def _rim(lay: Layout, labels: int) -> str:
    parts = ['<g id="rim">']
    biggest = {f[0] for f in sorted(lay.folders, key=lambda f: f[1] - f[2])[:labels]}
    for n, (name, first, last) in enumerate(lay.folders):
        t1, t2 = lay.angle[first], lay.angle[last - 1]
        pad = (2 * math.pi / max(1, len(lay.files))) / 2
        parts.append(_arc(t1 - pad, t2 + pad, RADIUS + 8, 8, "odd" if n % 2 else "even", name, last - first))
        if name in biggest:
            parts.append(_label((t1 + t2) / 2, name, last - first))
    parts.append("</g>")
    return "".join(parts)


def _arc(t1: float, t2: float, r: float, width: float, cls: str, name: str, count: int) -> str:
    (x1, y1), (x2, y2) = _point(t1, r), _point(t2, r)
    large = 1 if t2 - t1 > math.pi else 0
    title = f"{escape(name)}/ ({count} file{'s' if count != 1 else ''})"
    return (
        f'<path class="arc {cls}" stroke-width="{width}" d="M{x1:.1f},{y1:.1f}A{r},{r} 0 {large} 1 {x2:.1f},{y2:.1f}">'
        f"<title>{title}</title></path>"
    )


def _label(theta: float, name: str, count: int) -> str:
    x, y = _point(theta, RADIUS + 18)
    degrees = math.degrees(theta) % 360
    flip = degrees > 180  # left half: turn the text so it reads left to right, ending at the rim
    anchor = "end" if flip else "start"
    rotate = degrees + 90 if flip else degrees - 90
    text = escape(name if len(name) <= 22 else "..." + name[-21:])
    return (
        f'<text class="label" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" dominant-baseline="middle" '
        f'transform="rotate({rotate:.1f} {x:.1f} {y:.1f})">{text} ({count})</text>'
    )


def legend_svg(low: float) -> str:
    """The colour scale of similarity from ``low`` to 1."""
    stops = "".join(f'<stop offset="{i / (len(STOPS) - 1):.2f}" stop-color="{c}"/>' for i, c in enumerate(STOPS))
    ticks = "".join(
        f'<text x="{20 + 260 * k / 4:.0f}" y="40" text-anchor="middle">{low + (1 - low) * k / 4:.2f}</text>'
        for k in range(5)
    )
    return (
        '<svg id="legend" viewBox="0 0 300 46" role="img" aria-label="Colour scale of Jaccard similarity">'
        f'<defs><linearGradient id="ramp">{stops}</linearGradient></defs>'
        f'<rect x="20" y="6" width="260" height="16" fill="url(#ramp)"/>{ticks}</svg>'
    )


def scurve_svg(
    bands: int,
    rows: int,
    bits: int,
    threshold: float,
    pairs: Sequence[float],
    measured: Sequence[tuple[float, float, float, int]] = (),
) -> str:
    """P(s) = 1 - (1 - s^r)^b over a histogram of the verified pairs by exact J (``pairs``), and,
    from ``evaluate``, measured recall per bin as ``(low, high, recall, pairs)``."""
    w, h, m = 520, 320, 44

    def sx(s: float) -> float:
        return m + s * (w - 2 * m)

    def sy(p: float) -> float:
        return h - m - p * (h - 2 * m)

    grid = np.linspace(0, 1, 201)
    curve = candidate_probability(grid, bands, rows, bits)
    points = " ".join(f"{sx(s):.1f},{sy(p):.1f}" for s, p in zip(grid.tolist(), curve.tolist(), strict=True))
    out = [f'<svg id="scurve" viewBox="0 0 {w} {h}" role="img" aria-label="S-curve of the LSH setting">']
    for k in range(6):
        v = k / 5
        out.append(f'<line class="grid" x1="{sx(0)}" y1="{sy(v):.1f}" x2="{sx(1)}" y2="{sy(v):.1f}"/>')
        out.append(f'<text x="{m - 6}" y="{sy(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
        out.append(f'<text x="{sx(v):.1f}" y="{h - m + 16}" text-anchor="middle">{v:.1f}</text>')
    out.append(f'<text x="{w / 2}" y="{h - 6}" text-anchor="middle">Jaccard similarity s</text>')
    out.append(f'<text x="12" y="{h / 2}" transform="rotate(-90 12 {h / 2})" text-anchor="middle">P(candidate)</text>')
    t = sx(threshold)
    out.append(f'<line class="threshold" x1="{t:.1f}" y1="{sy(0)}" x2="{t:.1f}" y2="{sy(1)}"/>')
    out.append(f'<text x="{t + 4:.1f}" y="{sy(1) + 12}">threshold {threshold:g}</text>')
    out.extend(_histogram(pairs, sx, sy))
    out.append(f'<polyline class="curve" points="{points}"/>')
    kn = knee(bands, rows)
    pk = float(candidate_probability(kn, bands, rows, bits))
    out.append(
        f'<circle class="knee" cx="{sx(kn):.1f}" cy="{sy(pk):.1f}" r="4"><title>knee (1/b)^(1/r) = {kn:.3f}</title>'
        "</circle>"
    )
    for low, high, recall, n in measured:
        mid = (low + high) / 2
        out.append(
            f'<rect class="measured" x="{sx(mid) - 4:.1f}" y="{sy(recall) - 4:.1f}" width="8" height="8">'
            f"<title>{low:.1f}-{high:.1f}: recall {recall:.3f} of {n} pairs</title></rect>"
        )
    out.append(f'<text class="caption" x="{w - m}" y="{sy(0) - 8:.1f}" text-anchor="end">{bands} x {rows}</text>')
    out.append("</svg>")
    return "".join(out)


#: Bins of exact Jaccard in the S-curve panel's histogram, each ``1 / BINS`` wide.
BINS = 50


def _histogram(jaccards: Sequence[float], sx: Callable[[float], float], sy: Callable[[float], float]) -> list[str]:
    """Bars of the pairs by exact J, ``1 / BINS`` wide, under the curve; the tallest bar of near pairs
    reaches the top and sets the scale (written top left). Identical pairs (J = 1) have a bar of
    their own, capped at the top: they often outnumber the rest."""
    if not jaccards:
        return []
    values = np.asarray(jaccards, dtype=np.float64)
    identical = int(np.count_nonzero(values >= 1.0))
    near = values[values < 1.0]
    counts = np.bincount(np.minimum((near * BINS).astype(np.int64), BINS - 1), minlength=BINS)
    top = int(counts.max()) or identical  # one of them is at least 1
    out = ['<g id="histogram">']
    for k, n in enumerate(counts.tolist()):
        if n:
            low, high = k / BINS, (k + 1) / BINS
            out.append(_bar(sx(low), sx(high), sy(n / top), sy(0), f"J {low:.2f}-{high:.2f}", n))
    if identical:
        half = 0.5 / BINS
        out.append(_bar(sx(1 - half), sx(1 + half), sy(min(1.0, identical / top)), sy(0), "J 1 (identical)", identical))
    lines = ["bars: verified pairs", f"per {1 / BINS:g} of J, tallest {top:,}"]
    lines += [f"J 1 (identical): {identical:,}"] if identical else []
    for k, line in enumerate(lines):  # top left, where the curve is low
        out.append(f'<text class="count" x="{sx(0) + 6:.1f}" y="{sy(1) + 12 + 13 * k:.1f}">{line}</text>')
    out.append("</g>")
    return out


def _bar(x1: float, x2: float, y: float, bottom: float, label: str, n: int) -> str:
    return (
        f'<rect class="bar" x="{x1:.1f}" y="{y:.1f}" width="{max(x2 - x1 - 1, 1):.1f}" height="{bottom - y:.1f}">'
        f"<title>{label}: {n:,} pair{'s' if n != 1 else ''}</title></rect>"
    )


def runs_of(keys: Sequence[str]) -> list[tuple[str, int, int]]:
    """Runs of equal neighbours in ``keys``: ``(key, first, last + 1)``.

    Example:
        >>> runs_of(["a", "a", "b"])
        [('a', 0, 2), ('b', 2, 3)]
    """
    runs: list[tuple[str, int, int]] = []
    for i, key in enumerate(keys):
        if runs and runs[-1][0] == key:
            runs[-1] = (key, runs[-1][1], i + 1)
        else:
            runs.append((key, i, i + 1))
    return runs
