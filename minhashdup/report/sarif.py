"""SARIF 2.1.0 for code scanning (GitHub, GitLab, Azure DevOps, IDE viewers).

One result per verified pair (or per cluster with ``per="cluster"``). The first file is the
result's location, the other file(s) related locations linked from the message. A pair's
regions are the line ranges of the two files' longest shared token run, computed before
rendering (:func:`minhashdup.analysis.regions.pair_regions`); a family's files, a pair without
a run, and a file that no longer reads, get line 1. URIs are relative to the project root
(:class:`~minhashdup.analysis.regions.Project`, found by :func:`minhashdup.ci.git.locate`)
under the base id ``%SRCROOT%``, which ``originalUriBaseIds`` maps to an absolute ``file:``
URI. ``partialFingerprints`` come from the paths alone, so an alert keeps its identity when
either file is edited.

GitHub accepts at most 25,000 results per run and 10 MB per file: beyond either, the
strongest results are kept (pairs come sorted by similarity) and the truncation is stated in
the run's ``properties`` and by a warning, passed to the caller's ``warn`` before the log is
written (the result is left as it was).
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.parse
import warnings
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath
from typing import Any, TextIO

from minhashdup._version import __version__
from minhashdup.analysis.compare import Run
from minhashdup.analysis.regions import MAX_RESULTS, Project
from minhashdup.result import Cluster, Pair, Result

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
MAX_BYTES = 10_000_000
MAX_RELATED = 1_000  # GitHub: locations per result
MAX_LINKS = 10  # files named in a cluster's message
BASE_ID = "%SRCROOT%"
INFO_URI = "https://pypi.org/project/minhashdup/"

_PAIR_RULE = {
    "id": "minhashdup/near-duplicate-file",
    "name": "NearDuplicateFile",
    "shortDescription": {"text": "Near-duplicate file"},
    "fullDescription": {
        "text": "Two files share most of their code: the Jaccard similarity of their sets of k-token "
        "shingles (comments and whitespace ignored) is at or above the threshold."
    },
    "help": {
        "text": "Copies drift apart: a fix made in one is easily missed in the other. Merge them into "
        "one shared implementation, or record the pair in a baseline (--write-baseline) if the copy "
        "is intended (e.g. generated per-platform files)."
    },
    "defaultConfiguration": {"level": "warning"},
    "properties": {"tags": ["maintainability", "duplicate-code"], "precision": "very-high"},
}
_CLUSTER_RULE = {
    **_PAIR_RULE,
    "id": "minhashdup/near-duplicate-family",
    "name": "NearDuplicateFamily",
    "shortDescription": {"text": "Family of near-duplicate files"},
    "fullDescription": {
        "text": "Files joined by near-duplicate pairs (transitively): each pair's Jaccard similarity of "
        "k-token shingles is at or above the threshold."
    },
}


def level(jaccard: float) -> str:
    """Severity by similarity: ``error`` from 0.9, ``warning`` from 0.7, else ``note``.

    Example:
        >>> [level(j) for j in (1.0, 0.75, 0.5)]
        ['error', 'warning', 'note']
    """
    return "error" if jaccard >= 0.9 else "warning" if jaccard >= 0.7 else "note"


def render_sarif(
    result: Result,
    stream: TextIO,
    per: str = "pair",
    *,
    project: Project,
    regions: Sequence[Run | None] = (),
    warn: Callable[[str], object] | None = None,
) -> None:
    """Write ``result`` as a SARIF 2.1.0 log with one run (see the module docstring).

    Args:
        result: the scan's result.
        stream: where the log goes.
        per: ``"pair"`` (one result per pair) or ``"cluster"`` (one per family).
        project: where the files named are (:func:`minhashdup.ci.git.locate` of
            :func:`minhashdup.analysis.regions.shown_paths`).
        regions: the longest shared run of each pair, in order
            (:func:`minhashdup.analysis.regions.pair_regions`); pairs without one get line 1.
        warn: called with each warning for the user (that the log was cut to GitHub's limits),
            before anything is written; by default :func:`warnings.warn`.
    """
    log = _log(result, per, project)
    encoded = [json.dumps(item, ensure_ascii=False) for item in _results(result, per, project, regions)]
    kept = _fits(log, encoded)
    if kept < len(encoded):
        log["runs"][0]["properties"]["truncated"] = {
            "results": len(encoded),
            "kept": kept,
            "reason": f"GitHub code scanning accepts at most {MAX_RESULTS} results and {MAX_BYTES // 10**6} MB",
        }
        (warn or _warn)(
            f"SARIF truncated: {kept} of {len(encoded)} results kept (the most similar), within GitHub's limits "
            f"of {MAX_RESULTS} results and {MAX_BYTES // 10**6} MB; --sarif-per cluster or --baseline makes fewer"
        )
    skeleton = json.dumps(log, ensure_ascii=False, indent=1)
    head, _, tail = skeleton.rpartition('"results": []')  # the run's last key
    stream.write(head + '"results": [\n' + ",\n".join(encoded[:kept]) + "\n]" + tail + "\n")


def _warn(message: str) -> None:
    warnings.warn(message, stacklevel=3)


def _log(result: Result, per: str, project: Project) -> dict[str, Any]:
    """The log without its results (an empty list, the run's last key)."""
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "minhashdup",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFO_URI,
                "rules": [_CLUSTER_RULE if per == "cluster" else _PAIR_RULE],
            }
        },
        "originalUriBaseIds": {BASE_ID: {"uri": _dir_uri(project.root)}},
        "columnKind": "unicodeCodePoints",
        "properties": {"params": result.params, "pairs": len(result.pairs), "clusters": len(result.clusters)},
        "results": [],
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def _results(result: Result, per: str, project: Project, regions: Sequence[Run | None]) -> list[dict[str, Any]]:
    if per == "cluster":
        return [_cluster_result(c, result, project) for c in _strongest(result.clusters)]
    runs = list(regions[: len(result.pairs)]) + [None] * (len(result.pairs) - len(regions))
    return [_pair_result(p, r, project, _baselined(result)) for p, r in zip(result.pairs, runs, strict=True)]


def _fits(log: dict[str, Any], encoded: list[str]) -> int:
    """How many results (a prefix) keep the file within the limits."""
    budget = MAX_BYTES - len(json.dumps(log, ensure_ascii=False, indent=1).encode()) - 1024  # headroom
    kept = 0
    for text in encoded[:MAX_RESULTS]:
        size = len(text.encode("utf-8", "surrogateescape")) + 2
        if size > budget:
            break
        budget -= size
        kept += 1
    return kept


def _baselined(result: Result) -> bool:
    return bool(result.params.get("baseline"))


def _pair_result(pair: Pair, run: Run | None, project: Project, baselined: bool) -> dict[str, Any]:
    a = _location(pair.a, project, run.a_lines if run else None)
    b = _location(pair.b, project, run.b_lines if run else None)
    other = project.name(pair.b)
    where = ""
    if run:
        (a0, a1), (b0, b1) = run.a_lines, run.b_lines
        where = f" Longest shared run: {run.tokens} tokens, lines {a0}-{a1} here and {b0}-{b1} there."
    out: dict[str, Any] = {
        "ruleId": _PAIR_RULE["id"],
        "ruleIndex": 0,
        "level": level(pair.jaccard),
        "message": {
            "text": f"Near-duplicate of [{_escape(other)}](1): Jaccard similarity {pair.jaccard:.3f} "
            f"({pair.common} token shingles shared; {pair.shingles_a} here, {pair.shingles_b} there).{where}"
        },
        "locations": [a],
        "relatedLocations": [{"id": 1, **b, "message": {"text": other}}],
        "partialFingerprints": {"minhashdupPair/v1": _fingerprint(project.name(pair.a), other)},
        "properties": {
            "jaccard": round(pair.jaccard, 6),
            "estimate": round(pair.estimate, 6),
            "common": pair.common,
            "shingles": [pair.shingles_a, pair.shingles_b],
            "known": pair.known,
            "vendored": [pair.vendored_a, pair.vendored_b],  # this file, the other
        },
    }
    if pair.jaccard_verbatim is not None:
        out["properties"]["jaccard_verbatim"] = round(pair.jaccard_verbatim, 6)
    if run:
        out["properties"]["run"] = {"tokens": run.tokens, "lines": list(run.a_lines), "other_lines": list(run.b_lines)}
    if baselined:
        out["baselineState"] = "unchanged" if pair.known else "new"
    return out


def _cluster_result(cluster: Cluster, result: Result, project: Project) -> dict[str, Any]:
    names = [project.name(f) for f in cluster.files]
    related = [
        {"id": i, **_location(f, project), "message": {"text": names[i]}}
        for i, f in enumerate(cluster.files[1 : MAX_RELATED + 1], 1)
    ]
    links = ", ".join(f"[{_escape(names[r['id']])}]({r['id']})" for r in related[:MAX_LINKS])
    more = len(cluster.files) - 1 - min(len(related), MAX_LINKS)
    out: dict[str, Any] = {
        "ruleId": _CLUSTER_RULE["id"],
        "ruleIndex": 0,
        "level": level(cluster.jaccard_max),
        "message": {
            "text": f"One of {len(cluster.files)} near-duplicate files ({_count(cluster.pairs, 'pair')}, Jaccard "
            f"{cluster.jaccard_min:.3f} to {cluster.jaccard_max:.3f}) with {links}"
            + (f" and {more} more." if more > 0 else ".")
        },
        "locations": [_location(cluster.files[0], project)],
        "relatedLocations": related,
        "partialFingerprints": {"minhashdupFamily/v1": _fingerprint(*sorted(names))},
        "properties": {"files": len(cluster.files), "pairs": cluster.pairs},
    }
    if _baselined(result):
        members = set(cluster.files)
        new = any(p.a in members and not p.known for p in result.pairs)
        out["baselineState"] = "new" if new else "unchanged"
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _strongest(clusters: list[Cluster]) -> list[Cluster]:
    return sorted(clusters, key=lambda c: (-c.jaccard_max, -len(c.files), c.files))


def _location(path: str, project: Project, lines: tuple[int, int] | None = None) -> dict[str, Any]:
    name = project.name(path)
    region = {"startLine": lines[0], "endLine": lines[1]} if lines else {"startLine": 1}
    if name.startswith("../") or name == "..":
        artifact = {"uri": PurePosixPath(project.real[path]).as_uri()}  # outside the root: absolute, no base id
    else:
        artifact = {"uri": urllib.parse.quote(os.fsencode(name), safe="/"), "uriBaseId": BASE_ID}
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def _dir_uri(root: str) -> str:
    return PurePosixPath(root).as_uri().rstrip("/") + "/"


def _fingerprint(*names: str) -> str:
    digest = hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:32]


def _escape(text: str) -> str:
    """Escape the characters that end a Markdown link text in a SARIF message."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
