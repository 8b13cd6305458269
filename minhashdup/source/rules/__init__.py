"""What a tree says of its own files, read as git reads it: ``.gitignore`` and
``.git/info/exclude`` (:mod:`.ignore`), the linguist attributes of ``.gitattributes``
(:mod:`.attributes`), and git's glob dialect where pathspec reads it otherwise (:mod:`.globs`)."""

from __future__ import annotations

from collections.abc import Iterable

#: The ``.gitattributes`` attributes read (:mod:`.attributes`), by the kind of file they mark.
GENERATED, VENDORED = "linguist-generated", "linguist-vendored"

#: The rules files by their names' upper case: the one case that every other spelling of them
#: has in common (``.gitIgnore``, and a name with a dotless i for its i, upper-case to ``.GITIGNORE``).
_RULES_FILES = {name.upper(): name for name in (".gitignore", ".gitattributes")}


def rules_files_in(names: Iterable[str]) -> frozenset[str]:
    """Which of ``.gitignore`` and ``.gitattributes`` a folder whose entries are ``names`` may
    hold: those that one of the names spells up to case, since a file system that ignores case
    opens ``.GitIgnore`` when asked for ``.gitignore``. The walk looks for no other: one added
    later changes the folder's stat, a witness of the walk's memo (:mod:`.witnesses`), as any
    entry added does.

    Example:
        >>> sorted(rules_files_in([".GitIgnore", "a.go", ".gitattributes"]))
        ['.gitattributes', '.gitignore']
    """
    dotted = (name.upper() for name in names if name[:1] == ".")  # "." has no other case
    return frozenset(_RULES_FILES[name] for name in dotted if name in _RULES_FILES)
