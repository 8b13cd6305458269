"""What a walk looked at in the tree, to tell later whether a walk would find the same: the
witnesses of a walk's memo (:func:`minhashdup.engine.pipeline.remembered_walk`; issue 17: a warm
scan lists no folder and matches no glob).

What a walk finds depends, beyond its roots and filters, on what it looks at in the tree: each
folder's listing, each rules file it reads (``.gitignore``, ``.gitattributes``, ``.git/info/``
``exclude`` and ``attributes``), whether ``.git`` exists above a root, where each link and each
root leads, and, where git was asked which files it tracks, its index and the ``GIT_`` variables.
A walk under :func:`recording` notes each of these as a *witness*: the path and
what it showed, which is a stat (device, inode, mode, size, and mtime and ctime in
nanoseconds), an existence, a resolved path or the variables; a walk that git could not answer
is not remembered. Adding, removing or renaming an entry changes
its folder's mtime and ctime, editing a rules file its own; ctime cannot be set back by a user.

A memo holds what the walk found before each file's own stat (:class:`.found.Found`) and its
witnesses. It is used only when every witness shows the same again; the files are then stat'ed
afresh as in a walk (size, kind), so an edited file is seen as edited. A walk that saw anything
changed less than :data:`RACY_SECONDS` before it started is not remembered: a change in the same
clock tick as a stat may leave the stat as it was (git's "racily clean"). A change during the walk
shows: each stat is taken before the listing or read it stands for.
A memo that cannot be read as one is not used.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from collections.abc import Iterator, Sequence
from typing import Any

#: Seconds within which a change may not show in a stat: a file or folder modified this recently
#: may change again within the same timestamp tick (git's "racily clean" rule). The stat cache's
#: rule too (:mod:`minhashdup.engine.cached`).
RACY_SECONDS = 2.0
#: A witness: what it is (``stat``, ``lstat``, ``exists``, ``real``, ``env``, ``unanswered``), the
#: path (for ``env``, a prefix of variables' names), what it showed.
Witness = tuple[str, str, Any]
_SEEN: contextvars.ContextVar[list[Witness] | None] = contextvars.ContextVar("walk_witnesses", default=None)


def stat_of(path: str, follow: bool) -> list[int]:
    """What a stat of ``path`` shows of it (``[-1, errno]`` when it fails)."""
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError as err:
        return [-1, err.errno or 0]
    except ValueError:  # a NUL in the path, or a lone surrogate: the walk refuses it alike
        return [-1, -1]
    return [st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError) as err:
        return f"\0{err}"


def _shown(kind: str, path: str) -> Any:
    """What the witness ``kind`` of ``path`` shows now."""
    if kind == "exists":
        return os.path.exists(path)
    if kind == "real":
        return _real(path)
    if kind == "env":  # path: a prefix of variables' names
        return sorted([name, value] for name, value in os.environ.items() if name.startswith(path))
    if kind == "unanswered":  # a question the walk could not have answered: never the same again
        return False
    return stat_of(path, follow=kind == "stat")


def saw_stat(path: str, follow: bool = True) -> None:
    """Note ``path``'s stat (``follow``: through a link), in a walk under :func:`recording`."""
    seen = _SEEN.get()
    if seen is not None:
        kind = "stat" if follow else "lstat"
        seen.append((kind, path, _shown(kind, path)))


def saw_exists(path: str) -> bool:
    """Whether ``path`` exists (``os.path.exists``), noted in a walk under :func:`recording`."""
    exists = os.path.exists(path)
    seen = _SEEN.get()
    if seen is not None:
        seen.append(("exists", path, exists))
    return exists


def saw_env(prefix: str) -> None:
    """Note the environment's variables named ``prefix...`` (``GIT_``: where git looks)."""
    seen = _SEEN.get()
    if seen is not None:
        seen.append(("env", prefix, _shown("env", prefix)))


def saw_unanswered(question: str) -> None:
    """Note that the walk could not answer ``question`` (git failed): its memo is never kept."""
    seen = _SEEN.get()
    if seen is not None:
        seen.append(("unanswered", question, True))


def saw_path(path: str) -> None:
    """Note all a link or a root shows: its own stat, its target's, and where it resolves to."""
    seen = _SEEN.get()
    if seen is not None:
        seen.extend((kind, path, _shown(kind, path)) for kind in ("lstat", "stat", "real"))


@contextlib.contextmanager
def recording() -> Iterator[list[Witness]]:
    """The witnesses the walk in this block notes (see the module's docstring)."""
    seen: list[Witness] = []
    token = _SEEN.set(seen)
    try:
        yield seen
    finally:
        _SEEN.reset(token)


def unchanged(witnesses: Sequence[Witness]) -> bool:
    """Whether every witness shows now what it showed."""
    return all(_shown(kind, path) == shown for kind, path, shown in witnesses)


def settled(witnesses: Sequence[Witness], started_ns: int) -> bool:
    """Whether nothing the witnesses stat'ed changed after ``started_ns`` - :data:`RACY_SECONDS`
    (nor does a time lie in the future): only then may a later stat be trusted to show a change."""
    if any(kind == "unanswered" for kind, _, _ in witnesses):
        return False
    limit = racy_limit(started_ns)
    stats = (shown for kind, _, shown in witnesses if kind in ("stat", "lstat") and shown[0] != -1)
    return all(settled_times(st[4], st[5], limit) for st in stats)


def racy_limit(now_ns: int | None = None) -> int:
    """The time (ns) before which a stat's mtime and ctime must lie for the stat to be trusted:
    :data:`RACY_SECONDS` before ``now_ns`` (default: now). The one rule of the walk's memo and of
    the stat cache (:func:`minhashdup.engine.cached.file_keys`)."""
    return (time.time_ns() if now_ns is None else now_ns) - int(RACY_SECONDS * 1e9)


def settled_times(mtime_ns: int, ctime_ns: int, limit_ns: int) -> bool:
    """Whether a stat's mtime and ctime both lie before ``limit_ns`` (:func:`racy_limit`)."""
    return mtime_ns < limit_ns and ctime_ns < limit_ns
