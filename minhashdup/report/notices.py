"""What a scan tells on stderr besides its report: warnings, skipped files, the skip summary."""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from minhashdup.report.terminal import printable
from minhashdup.result import Result, SkipReason

#: Skipped files listed one by one without -v (at most :data:`NOTICE_LIMIT` of them).
ALWAYS_LISTED = ("unreadable", "lex-error")
NOTICE_LIMIT = 20


def render_notices(result: Result, stream: TextIO, quiet: bool = False, verbose: bool = False) -> None:
    """Warnings, then skipped files (all with ``verbose``; none with ``quiet``), then one summary line.

    Paths and messages are shown with control and bidi characters escaped (:func:`printable`).
    """
    for warning in result.warnings:
        stream.write(f"warning: {printable(warning)}\n")
    listed = [n for n in result.skips if verbose or n.reason in ALWAYS_LISTED]
    if not quiet:
        for notice in listed if verbose else listed[:NOTICE_LIMIT]:
            stream.write(printable(f"{notice.path}: {notice.message}") + "\n")
        if not verbose and len(listed) > NOTICE_LIMIT:
            stream.write(f"... and {len(listed) - NOTICE_LIMIT} more; -v lists them all\n")
    partial = partial_listing(result)
    if partial:
        stream.write(partial + "\n")
    line = skip_summary(result, verbose)
    if line:
        stream.write(line + "\n")
    stream.flush()


def skip_summary(result: Result, verbose: bool = False) -> str:
    """One line: files skipped by reason, then what the globs and .gitignore filtered out."""
    counts = Counter(n.reason.value for n in result.skips)
    filtered = {k: v for k, v in sorted(result.stats.skipped.items()) if SkipReason(k).is_filter}
    parts = []
    if counts:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        parts.append(f"skipped {sum(counts.values())} files: {reasons}" + ("" if verbose else " (-v lists them)"))
    if filtered:
        parts.append("filtered out: " + ", ".join(f"{k} {v}" for k, v in filtered.items()))
    return "; ".join(parts)


def partial_listing(result: Result) -> str:
    """One line when identical groups are listed in part (only JSON ``groups`` has them whole):
    how many groups, the pairs they stand for and the rows that list them; else ``""``."""
    partial = [g for g in result.groups if g.pairs_listed < g.pairs_total]
    if not partial:
        return ""
    total = sum(g.pairs_total for g in partial)
    listed = sum(g.pairs_listed for g in partial)
    groups = "1 identical group" if len(partial) == 1 else f"{len(partial):,} identical groups"
    return (
        f"{groups} of {total:,} pairs {'is' if len(partial) == 1 else 'are'} listed as {listed:,} pairs"
        " (first file with each other file); JSON 'groups' has them whole"
    )
