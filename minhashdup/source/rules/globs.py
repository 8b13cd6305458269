"""git's glob dialect where pathspec reads a pattern otherwise.

pathspec turns a gitignore line into a regular expression; RE2 matches it. These helpers mend
what that reading gets wrong against git (git 2.39's answers, ``git ls-files -o
--exclude-standard``), each where the pattern is compiled:

- :func:`inside`: ``X/**`` names what lies inside ``X``, not ``X``;
- :func:`as_git`: each path is judged by the last line that matches that path itself (an
  ignore file's whitelist, ``*`` then ``!*/``, keeps every folder), and no set matches a ``/``;
- :func:`git_sets`: ``\\`` inside a bracket set escapes the next character, and a set git
  cannot close makes the line match nothing;
- :func:`posix_class`: a POSIX class (``[:alpha:]``), which pathspec reads as another set, is found.
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pathspec.pattern import RegexPattern

    Pattern = TypeVar("Pattern", bound=RegexPattern)

#: pathspec's endings of a pattern's regular expression that may match a folder: the folder's
#: own ``/`` and everything under it (a folder-only pattern), or that or the end.
FOLDER_MARK = "(?P<ps_d>/)"
FOLDER_TAIL = f"(?:{FOLDER_MARK}|$)"


def inside(pattern: str) -> str:
    """A line without its trailing spaces (:func:`git_spaces`), and ``X/**`` as ``X/**/*``, ``X/**/``
    as ``X/**/*/``: the same paths in git, what lies inside
    ``X`` (folders only with the trailing ``/``), not ``X``. pathspec matches the folder ``X``
    itself with both forms, and with the second the files in it: ``X`` was left out whole, and a
    negation inside it (``!X/keep.go``, which git applies) was never reached.

    Example:
        >>> [inside(p) for p in ("build/**", "!build/**/", "build/**  ", "**", "a/b**", "#x/**")]
        ['build/**/*', '!build/**/*/', 'build/**/*', '**', 'a/b**', '#x/**/*']
    """
    body = git_spaces(pattern)  # git drops trailing spaces that are not escaped
    if body.endswith("/**"):
        return body + "/*"
    if body.endswith("/**/"):
        return body + "*/"
    return body


def as_git(patterns: list[Pattern], per_path: bool = True) -> list[Pattern]:
    """``patterns`` (pathspec's) with no bracket set matching a ``/`` (:func:`no_slash`) and, with
    ``per_path`` (an ignore file's), matching a path only where they match that path itself, as
    git judges each entry of a folder it walks: the walk asks of a folder before entering it, so
    a match of what lies under a folder (``vendor/`` on ``vendor/x.go``) is never the question.
    With no such matches, pathspec's gitignore ranking leaves the last matching line the winner,
    as in git; with them it ranked a file-pattern match over a later folder-pattern one (``*``
    over ``!*/``), and a negation of a folder re-included what a later-judged line inside it left out.

    Raises:
        ValueError: a pattern's expression marks a folder where this does not know the form.

    Example:
        >>> from pathspec import GitIgnoreSpec
        >>> kept = GitIgnoreSpec(as_git(list(GitIgnoreSpec.from_lines(["*", "!*/", "!*.go"]).patterns)))
        >>> [kept.match_file(p) for p in ("sub/", "sub/a.go", "sub/a.txt")]
        [False, False, True]
    """
    out = []
    for pattern in patterns:
        if pattern.include is None or pattern.regex is None:
            continue  # a comment or a blank line
        regex = no_slash(str(pattern.regex.pattern))
        if per_path and regex.endswith(FOLDER_TAIL):
            regex = regex[: -len(FOLDER_TAIL)] + "/?$"  # the path itself, a file or a folder
        elif per_path and regex.endswith(FOLDER_MARK):
            regex = regex[: -len(FOLDER_MARK)] + "/$"  # the folder itself
        if per_path and "ps_d" in regex:
            raise ValueError(f"cannot read the pattern {pattern.pattern!r} for one path alone")
        copied = copy.copy(pattern)
        copied.regex = re.compile(regex)
        out.append(copied)
    return out


def no_slash(regex: str) -> str:
    """``regex`` (pathspec's, of a glob) with no bracket set matching a ``/``, as none does in git:
    a negated one leaves it out too, a range across it is cut in two.

    Example:
        >>> no_slash("^x[^a]y$"), no_slash("^a[.-0]$"), no_slash("^[^/]*[ab]$"), no_slash("[^-a]")
        ('^x[^/a]y$', '^a[.-.0-0]$', '^[^/]*[ab]$', '[^/\\\\-a]')
    """
    if "[" not in regex:
        return regex
    out, i, end = [], 0, len(regex)
    while i < end:
        if regex[i] == "\\":
            out.append(regex[i : i + 2])
            i += 2
            continue
        if regex[i] != "[":
            out.append(regex[i])
            i += 1
            continue
        negated = regex.startswith("^", i + 1)
        j = start = i + 1 + negated
        j += regex.startswith("]", j)  # first in a set, ] is a member
        while j < end and regex[j] != "]":
            j += 2 if regex[j] == "\\" else 1
        body = regex[start:j]
        if body.startswith(("]", "-")):  # first, a member: escaped, as it is first no longer
            body = "\\" + body
        out.append(("[^/" + body.removeprefix("/") if negated else "[" + _cut(body)) + "]")
        i = j + 1
    return "".join(out)


def _cut(body: str) -> str:
    """A set's members (RE2's) with each range across ``/`` cut in two around it."""
    atoms, k = [], 0
    while k < len(body):
        width = 2 if body[k] == "\\" else 1
        atoms.append(body[k : k + width])
        k += width
    out, k = [], 0
    while k < len(atoms):
        if k + 2 < len(atoms) and atoms[k + 1] == "-":
            low, high = atoms[k][-1], atoms[k + 2][-1]
            if low <= "/" <= high:
                out += [f"{atoms[k]}-." if low < "/" else "", f"0-{atoms[k + 2]}" if high > "/" else ""]
            else:
                out.append(f"{atoms[k]}-{atoms[k + 2]}")
            k += 3
        else:
            out.append(atoms[k])
            k += 1
    return "".join(out)


def git_sets(glob: str) -> str | None:
    """``glob`` with each bracket set that holds a ``\\`` written as pathspec reads it the way git
    does (pathspec keeps a ``\\`` in a set as a member and ends the set at the first ``]``; git
    escapes the next character), and each that holds a ``/`` (which git's sets never match, and
    where pathspec cuts the pattern) without it; ``None`` where git's glob matches nothing: a set
    git does not close or that holds only ``/``, or a last ``\\``. A set with a range to or from
    an escaped character or a POSIX class is left as it is.

    Example:
        >>> [git_sets(g) for g in ("[a\\\\]b].go", "x[\\\\]]", "[a\\\\]", "a\\\\", "[a-c].go", "\\\\[x]")]
        ['[]ab].go', 'x\\\\]', None, None, '[a-c].go', '\\\\[x]']
    """
    if "\\" not in glob and ("[" not in glob or ("/" not in glob and "-" not in glob)):
        return glob
    out, i, end = [], 0, len(glob)
    while i < end:
        if glob[i] == "\\":
            if i + 1 == end:
                return None
            out.append(glob[i : i + 2])
            i += 2
        elif glob[i] == "[":
            j, members = _git_set(glob, i)
            if j < 0:
                return None
            out.append(members if members is not None else glob[i:j])
            i = j
        else:
            out.append(glob[i])
            i += 1
    text = "".join(out)
    if _anchored(glob) and not _anchored(text):  # a / in a set still anchored the line in git
        return "!/" + text[1:] if text.startswith("!") else "/" + text
    return text


def _anchored(glob: str) -> bool:
    """Whether git matches the line from its file's folder: a ``/`` before its end."""
    return "/" in glob.removeprefix("!").rstrip("/")


def git_spaces(line: str) -> str:
    """``line`` without the trailing spaces git drops: those not escaped by a ``\\`` (pathspec
    refuses ``a \\  ``, a space, an escaped one and another).

    Example:
        >>> b = chr(92)  # a backslash
        >>> git_spaces("a.go  "), git_spaces("a" + b + "  ") == "a" + b + " ", git_spaces("a" + 2 * b) == "a" + 2 * b
        ('a.go', True, True)
    """
    body = line.rstrip(" ")
    if len(body) == len(line):
        return line
    escapes = len(body) - len(body.rstrip("\\"))
    return body + " " if escapes % 2 else body


def _git_set(glob: str, start: int) -> tuple[int, str | None]:
    """The set at ``start`` as git's wildmatch reads it: where it ends (-1: never) and how
    pathspec is to read it (``None``: as written)."""
    i, end = start + 1, len(glob)
    negated = glob.startswith(("!", "^"), i)
    i += negated
    chars, ranges, rewrite, prev, first = list[str](), list[str](), False, "", True
    while i < end and (first or glob[i] != "]"):  # first in a set, ] is a member
        first, char = False, glob[i]
        if char == "\\":
            if i + 1 == end:
                return -1, None
            i, rewrite = i + 1, True
            prev = glob[i]
            chars.append(prev)
        elif char == "-" and prev and i + 1 < end and glob[i + 1] != "]":  # a range from prev
            i += 1 + (glob[i + 1] == "\\")  # to an escaped character: that character
            if i == end:
                return -1, None
            low, high = chars.pop(), glob[i]
            if low in "]\\^[-!" or high in "]\\[":
                return _set_end(glob, i), None
            rewrite |= "/" in (low, high) or glob[i - 1] == "\\" or low > high  # pathspec reads these otherwise
            if low <= high:
                ranges.append(f"{'0' if low == '/' else low}-{'.' if high == '/' else high}")
            else:  # git's reversed range matches its first character alone
                chars.append(low)
            prev = ""
        elif glob.startswith("[:", i):
            return _set_end(glob, i), None  # a class: left to posix_class
        else:
            prev = char
            chars.append(char)
        i += 1
    if i >= end:
        return -1, None
    if not rewrite and "/" not in chars:
        return i + 1, None
    chars = [c for c in chars if c != "/"]  # a set never matches a / (pathspec would cut it there)
    ranges = [r for r in ranges if r[0] <= r[2]]  # "/-/" is none
    if not chars and not ranges:
        return (i + 1, "?") if negated else (-1, None)
    if not negated and not ranges and len(set(chars)) == 1:
        return i + 1, "\\" + chars[0]  # one character: itself, outside any set
    items = [c for c in dict.fromkeys(chars) if c not in "]-"] + ranges + (["-"] if "-" in chars else [])
    if not negated and "]" not in chars:  # first in the set: no member read as a negation
        lead = next((n for n, item in enumerate(items) if item[0] not in "!^"), None)
        if lead is None:
            return _set_end(glob, start), None
        items.insert(0, items.pop(lead))
    return i + 1, "[" + ("!" if negated else "") + ("]" if "]" in chars else "") + "".join(items) + "]"


def _set_end(glob: str, i: int) -> int:
    """Where git ends the set that ``i`` lies in (-1: never)."""
    while i < len(glob) and glob[i] != "]":
        i += 2 if glob[i] == "\\" else 1
    return i + 1 if i < len(glob) else -1


def posix_class(glob: str) -> bool:
    """Whether ``glob`` holds a POSIX class (``[:alpha:]``) in a bracket set, which pathspec
    reads as another set. Outside a set, as in git, ``\\`` makes the next character literal:
    ``\\[[:x:]]`` is ``[``, the set of ``:`` and ``x``, then ``]``. In a set, ``\\[:alpha:]``
    counts: git reads ``[`` there, but RE2 a backslash and the class.

    Example:
        >>> posix_class("[[:alpha:]]*.py"), posix_class("x[!][:digit:]]"), posix_class("\\\\[[:x:]]")
        (True, True, False)
    """
    if "[:" not in glob:  # the common case: no class can start
        return False
    i, end = 0, len(glob)
    while i < end:
        if glob[i] != "[":
            i += 2 if glob[i] == "\\" else 1
            continue
        i += 2 if glob.startswith(("[!", "[^"), i) else 1
        i += glob.startswith("]", i)  # first in a set, ] is a member
        while i < end and glob[i] != "]":  # up to git's end of the set (pathspec's is there or before)
            i += glob[i] == "\\"
            if _POSIX_CLASS.match(glob, i):
                return True
            i += 1
        i += 1
    return False


#: A POSIX class where it starts.
_POSIX_CLASS = re.compile(r"\[:[a-z]+:\]")


def matchable(path: str) -> str:
    """``path`` as RE2 can match it: a name that is not UTF-8 (its bytes decoded as lone
    surrogates) with each such byte as U+FFFD, which ``*`` and ``?`` match like any letter.

    Example:
        >>> matchable("caf\\udce9.go") == "caf\\ufffd.go"
        True
    """
    if path.isascii():
        return path
    try:
        data = path.encode("utf-8", "surrogateescape")  # the bytes of the name, as the OS gave them
    except UnicodeEncodeError:  # a surrogate that no byte decoded to
        data = path.encode("utf-8", "surrogatepass")
    return data.decode("utf-8", "replace")
