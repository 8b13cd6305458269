"""What a tree says of its own files, read as git reads it: ``.gitignore`` and
``.git/info/exclude`` (:mod:`.ignore`), the linguist attributes of ``.gitattributes``
(:mod:`.attributes`), and git's glob dialect where pathspec reads it otherwise (:mod:`.globs`)."""

from __future__ import annotations

from collections.abc import Iterable

#: The rules files a folder's entry may be, by its name's lower and its upper case.
_RULES_FILES = {n: n.lower() for name in (".gitignore", ".gitattributes") for n in (name, name.upper())}


def rules_files_in(names: Iterable[str]) -> frozenset[str]:
    """Which of ``.gitignore`` and ``.gitattributes`` a folder whose entries are ``names`` may
    hold: those that one of the names is, up to case (a file system that ignores case opens
    ``.GITIGNORE``, or a name whose upper case is ``.GITIGNORE``, by either name). The walk
    opens no other: one added later changes the folder's stat, the witness of the walk's memo
    (:mod:`.witnesses`), as any entry added does.

    Example:
        >>> sorted(rules_files_in([".GitIgnore", "a.go", ".gitattributes"]))
        ['.gitattributes', '.gitignore']
    """
    dotted = (name for name in names if name[:1] == ".")  # "." has no other case
    found = (_RULES_FILES.get(name.lower()) or _RULES_FILES.get(name.upper()) for name in dotted)
    return frozenset(name for name in found if name)
