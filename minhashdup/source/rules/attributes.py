"""The ``linguist-generated`` and ``linguist-vendored`` attributes of ``.gitattributes`` files.

GitHub's linguist reads these to leave generated and vendored files out of a repository's
statistics and diffs; a repository that sets them has said which files are not its own code.
The files are read as :mod:`.ignore` reads ``.gitignore`` files (regular files of at most
:data:`~minhashdup.source.safeio.IGNORE_FILE_LIMIT` bytes, no links, at most
:data:`~minhashdup.source.rules.ignore.IGNORE_NESTING_LIMIT` on a path), from the repository's top
and ``.git/info/attributes`` down to each folder, deeper files overriding shallower ones and
later lines earlier ones, as in git.

Patterns follow gitattributes(5): gitignore syntax, except that a pattern matches a path itself,
never the files under a folder it matches (``vendor/** linguist-vendored``, not ``vendor/``),
and negated patterns are not allowed. They are turned into regular expressions by pathspec, and
the lines of a file are matched together as one RE2 set: once per path and file, in time linear in
the path whatever the patterns hold (one regex per line cost every path every line: a 1 MiB file
took 37 ms a path, and 60 MiB of memory). A file whose set RE2 cannot build within its memory
bound is not applied, with a warning, as :mod:`.ignore` does for a ``.gitignore``.
"""

from __future__ import annotations

import os
from typing import NamedTuple, Protocol

from minhashdup.source.rules import GENERATED, VENDORED
from minhashdup.source.rules.globs import FOLDER_TAIL, git_sets, matchable, no_slash
from minhashdup.source.rules.ignore import prefix_of, repository_folders
from minhashdup.source.safeio import git_lines, read_rules_file

_WANTED = (GENERATED, VENDORED)


class _Matcher(Protocol):  # re2.Set, by RE2's names
    def Add(self, regex: str) -> int: ...
    def Match(self, text: str) -> list[int] | None: ...


class _Line(NamedTuple):
    regex: str
    values: tuple[tuple[str, bool | None], ...]  # attribute -> set (True), unset (False), unspecified (None)


class Lines(tuple[_Line, ...]):
    """The lines of one attributes file, and ``matcher``: the RE2 set of their patterns, whose
    indices are the lines'."""

    matcher: _Matcher | None = None


class Attributes(NamedTuple):
    """One ``.gitattributes`` file in force; paths relative to the root are matched as
    ``prefix + rel[strip:]`` (see :class:`minhashdup.source.rules.ignore.Ignore`)."""

    lines: Lines
    prefix: str
    strip: int
    last: bool = False  # ``.git/info/attributes``: applied after every file of the tree


def parse(text: str) -> Lines:
    """The lines of a ``.gitattributes`` text that set, unset or clear the linguist attributes.

    Raises:
        ValueError: RE2 cannot build the set of their patterns (too many, or too large).

    Example:
        >>> [dict(line.values) for line in parse("*.pb.go linguist-generated\\nvendor/** -linguist-vendored\\n")]
        [{'linguist-generated': True}, {'linguist-vendored': False}]
    """
    import re2  # type: ignore[import-untyped]  # google-re2, pathspec's linear-time backend; here: few trees need it

    out = []
    matcher = re2.Set.SearchSet()  # each regex is anchored at both ends already
    for raw in git_lines(matchable(text)):  # bytes that are not UTF-8 as U+FFFD, as in the paths
        fields = raw.split()
        if len(fields) < 2 or fields[0].startswith(("#", "[attr]", "!", '"')):
            continue  # comments, macros, negated (invalid) and quoted patterns
        values = tuple(v for v in (_value(f) for f in fields[1:]) if v is not None)
        regex = _regex(fields[0]) if values else None
        if regex is not None and _added(matcher, regex):  # its index in the set is its index in out
            out.append(_Line(regex, values))
    lines = Lines(out)
    if lines:
        try:
            matcher.Compile()
        except re2.error as err:
            raise ValueError(f"its {len(lines):,} patterns are more than RE2 can match together ({err})") from None
        lines.matcher = matcher
    return lines


def _added(matcher: _Matcher, regex: str) -> bool:
    """Whether RE2 took ``regex`` into the set (a line it rejects is left out, not its file)."""
    import re2

    try:
        matcher.Add(regex)
    except (re2.error, UnicodeError):
        return False
    return True


def _value(field: str) -> tuple[str, bool | None] | None:
    name, _, value = field.partition("=")
    if name.startswith(("-", "!")):
        state: bool | None = False if name[0] == "-" else None
        name = name[1:]
    else:
        state = value.lower() != "false" if value else True  # as linguist reads it: only "false" is false
    return (name, state) if name in _WANTED else None


def _regex(pattern: str) -> str | None:
    if pattern.endswith("/"):
        return None  # matches folders only: no file has the attribute (gitattributes(5))
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    read = git_sets(pattern)  # a \ in a set escapes, as in git; None: git's glob matches nothing
    if read is None:
        return None

    try:
        regex, _ = GitIgnoreSpecPattern.pattern_to_regex(read)
    except Exception:  # an invalid pattern: its line is left out
        return None
    if regex is None:
        return None
    regex = no_slash(str(regex))  # no set matches a /, as in git
    if regex.endswith(FOLDER_TAIL):  # a pattern that may match a folder: for attributes, the path
        regex = regex[: -len(FOLDER_TAIL)] + "$"
    return regex


def attribute_chain(root_real: str, warnings: list[str]) -> tuple[Attributes, ...]:
    """The attributes files from the enclosing repository's top down to ``root_real``, then
    ``.git/info/attributes`` (which git applies last)."""
    top, folders = repository_folders(root_real)
    chain = []
    for folder in folders:
        lines = _read(os.path.join(folder, ".gitattributes"), None, warnings)
        if lines:
            chain.append(Attributes(lines, prefix_of(root_real, folder), 0))
    info = _read(os.path.join(top, ".git", "info", "attributes"), None, warnings, follow=True)
    if info:
        chain.append(Attributes(info, prefix_of(root_real, top), 0, last=True))
    return tuple(chain)


def with_folder_attributes(
    chain: tuple[Attributes, ...], full: str, shown: str, rel: str, warnings: list[str], limit: int
) -> tuple[Attributes, ...]:
    """``chain`` and the ``.gitattributes`` of the folder at ``full`` (``rel`` under the root),
    when it has one and the chain is shorter than ``limit``."""
    if len(chain) >= limit:
        return chain
    lines = _read(os.path.join(full, ".gitattributes"), os.path.join(shown, ".gitattributes"), warnings)
    return (*chain, Attributes(lines, "", len(rel) + 1)) if lines else chain


def _read(path: str, shown: str | None, warnings: list[str], follow: bool = False) -> Lines:
    text = read_rules_file(path, shown, warnings, follow)
    try:
        return parse(text) if text else Lines()
    except ValueError as err:  # a hostile .gitattributes must not stop the scan
        warnings.append(f"{shown or path}: {err}; its attributes are not applied")
        return Lines()


def marks(rel: str, chain: tuple[Attributes, ...]) -> dict[str, bool]:
    """The linguist attributes set or unset on the file at ``rel`` (relative to the root).

    Example:
        >>> chain = (Attributes(parse("gen/** linguist-generated\\ngen/keep.go -linguist-generated"), "", 0),)
        >>> marks("gen/a.go", chain), marks("gen/keep.go", chain), marks("a.go", chain)
        ({'linguist-generated': True}, {'linguist-generated': False}, {})
    """
    found: dict[str, bool | None] = {}
    rel = matchable(rel)
    for attributes in sorted(chain, key=lambda a: a.last):  # stable: the tree's files in order, then info
        matcher = attributes.lines.matcher
        matched = matcher.Match(attributes.prefix + rel[attributes.strip :]) if matcher is not None else None
        for index in sorted(matched or ()):  # later lines override earlier ones
            found.update(attributes.lines[index].values)
    return {name: state for name, state in found.items() if state is not None}
