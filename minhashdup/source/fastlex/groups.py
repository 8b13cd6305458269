"""Capturing groups in a pattern's text: where they open, and the text with none.

A joined alternative needs no groups of its own where its rule is fast (the scan reads the
wrapper group only); the regex engine saves marks for each group it passes, so they go.
"""

from __future__ import annotations

import re


def group_opens(source: str) -> list[int]:
    """Where each capturing group of a pattern's text opens, in order (escapes and sets passed over).

    Example:
        >>> group_opens(r"(a)[(]\\((?:b)(c)")
        [0, 13]
    """
    opens, i = [], 0
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            j = i + 1
            j += source.startswith("^", j)
            j += source.startswith("]", j)
            while j < len(source) and source[j] != "]":
                j += 2 if source[j] == "\\" else 1
            i = j + 1
            continue
        if c == "(" and not source.startswith("?", i + 1):
            opens.append(i)
        i += 1
    return opens


def without_groups(source: str, flags: int) -> str | None:
    """``source`` with each capturing group made non-capturing, or ``None`` where unsure.

    Example:
        >>> without_groups(r"//(.*?)$|[(]\\(", 0)
        '//(?:.*?)$|[(]\\\\('
    """
    if flags & re.VERBOSE or "(?#" in source or "(?x" in source or "(?P" in source:
        return None  # comments and verbose spacing could hide brackets
    out, last = [], 0
    for at in group_opens(source):
        out += [source[last:at], "(?:"]
        last = at + 1
    text = "".join(out) + source[last:]
    try:
        return text if re.compile(text, flags).groups == 0 else None
    except re.error:
        return None
