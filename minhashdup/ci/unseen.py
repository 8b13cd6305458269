"""What a gate on a change under review cannot see: changed files the scan left out, and when it
fails closed for them (exit 4, :data:`minhashdup.errors.ExitCode.UNCHECKED`).

A change can mark its own copy as generated or data, or give it a name no lexer takes: those are
named in a warning (:func:`unchecked_changes`). A copy left out for what it holds (padded past
``--max-size``, a NUL byte, text its lexer fails on) that a scan would compare as code fails the
gate (:func:`not_compared`), as does a bucket too big to pair (:func:`fails`).
"""

from __future__ import annotations

import os

from minhashdup.ci import git as project
from minhashdup.errors import ExitCode
from minhashdup.result import Result, Skip, SkipReason


def verdict(result: Result, limit: int | None) -> ExitCode:
    """The gate at ``limit`` new pairs (``None``: no gate): ``PAIRS_FOUND`` for more new pairs
    reported, else ``UNCHECKED`` for what it cannot vouch for, a changed file not compared
    (``stats.changes["unchecked"]``) or one in a bucket too big to pair (``["unpaired"]``;
    without changed files, any such bucket: ``stats.oversize_buckets``), else ``OK``."""
    changes = result.stats.changes
    if limit is None:
        return ExitCode.OK
    if result.stats.new_pairs > limit:
        return ExitCode.PAIRS_FOUND
    blind = changes.get("unchecked", 0) + changes.get("unpaired", result.stats.oversize_buckets)
    return ExitCode.UNCHECKED if blind else ExitCode.OK


def fails(result: Result, limit: int | None) -> bool:
    """Whether the gate at ``limit`` fails (:func:`verdict`)."""
    return verdict(result, limit) != ExitCode.OK


#: Skips that a repository decides by its own files (a header, a name, .gitattributes).
_DECLARED = {SkipReason.GENERATED, SkipReason.NOT_CODE}


def unchecked_changes(result: Result, changed: set[str]) -> list[str]:
    """Warnings for changed files the scan left out because of what they say they are
    (generated, data) or of their names (no lexer takes them): a change can mark or name its
    own copy so, and the gate would not see it."""
    out = []
    for reasons, advice in _UNSEEN:
        skipped = [s for s in result.skips if s.reason in reasons and project.real(s.path) in changed]
        if skipped:
            first, more = skipped[0], f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
            out.append(f"{first.path}{more}: changed but not compared, skipped as {first.message}; {advice}")
    return out


#: What :func:`unchecked_changes` warns of, and the advice it gives.
_UNSEEN = (
    (
        _DECLARED,
        "the gate does not see them (on untrusted changes run it with --include-generated,"
        " and --include the data files to check)",
    ),
    ({SkipReason.NO_LEXER}, "the gate does not see them (no lexer takes their names)"),
)


#: Skips a change decides by what a file holds (its size, a NUL byte, text its lexer fails on or
#: takes too long over): a changed file left out so that would be compared as code is a copy the
#: gate did not see, and the gate fails (:func:`not_compared`).
_UNCHECKED = {SkipReason.TOO_LARGE, SkipReason.BINARY, SkipReason.LEX_ERROR, SkipReason.UNREADABLE}


def not_compared(result: Result, changed: set[str]) -> list[Skip]:
    """The changed files left out for what they hold (:data:`_UNCHECKED`) that a scan would
    compare as code (:func:`_code`): not an image, not a lockfile, data or prose."""
    return [s for s in result.skips if s.reason in _UNCHECKED and project.real(s.path) in changed and _code(s.path)]


def _code(path: str) -> bool:
    """Whether the file at ``path`` would be compared as code: the lexer a scan picks for it
    (:func:`~minhashdup.source.tokens.lexer_for`, by its name or by the shebang or modeline in
    its first and last 4 KiB) is one, and the file is no lockfile, data or prose."""
    from minhashdup.source.kinds import not_code  # pygments' index: only for a gate's skips
    from minhashdup.source.safeio import read_ends
    from minhashdup.source.tokens import NoLexerError, lexer_for

    try:
        ends = read_ends(path, 4096)
    except OSError:  # gone, unreadable: the name alone decides
        ends = b""
    try:
        found = lexer_for(os.path.basename(path), ends.decode("utf-8", "replace"))
    except NoLexerError:
        return False
    return not not_code(os.path.basename(path), found.name)


def not_compared_warning(missed: list[Skip], crowded: list[str]) -> list[str]:
    """What the gate fails on, named: the changed files not compared (``missed``) and those in a
    bucket too big to pair (``crowded``), five of each at most."""

    def named(paths: list[str]) -> str:
        return "; ".join(paths[:5]) + (f"; and {len(paths) - 5} more" if len(paths) > 5 else "")

    out = []
    if missed:
        out.append(
            f"changed but not compared: {named([f'{s.path}: {s.message}' for s in missed])}; the gate fails, as it"
            " cannot tell whether they are copies (--exclude them, or raise --max-size / --lex-timeout)"
        )
    if crowded:
        out.append(
            f"changed but in a bucket too big to pair: {named(crowded)}; the gate fails, as it cannot tell whether"
            " they are copies (raise --max-bucket)"
        )
    return out
