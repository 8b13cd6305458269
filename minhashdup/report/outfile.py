"""Writing a report file whole or not at all.

Opening ``-o report.json`` for writing truncates the previous report at once; a full disk,
a crash or a Ctrl-C then leaves a cut file that a later step may believe. :func:`replaced`
writes beside the file and renames over it only when everything was written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from typing import TextIO

#: Where a path names a device or an open descriptor (``/dev/stdout``, ``/dev/null``): written
#: directly, as such a name cannot be renamed over. A scanned tree cannot put a file there.
DEVICES = ("/dev/", "/proc/self/fd/")


@contextlib.contextmanager
def replaced(path: str) -> Iterator[TextIO]:
    """A text stream (UTF-8) whose content replaces the file at ``path`` if the block succeeds.

    The text goes to a hidden temporary file in the same folder, flushed to disk, then
    renamed over ``path`` in one step: readers see the old file or the new one, never a
    part. If the block raises (a write error, ``KeyboardInterrupt``), the temporary file is
    removed and ``path`` is left as it was. Whatever stands at ``path`` is replaced, never
    written through: a symbolic link (a scanned repository may commit ``report.csv ->
    ~/.bashrc``) or a FIFO becomes the report; a regular file keeps its permissions. Only a
    path under ``/dev/`` or ``/proc/self/fd/`` (``/dev/stdout``) is written directly.

    Raises:
        OSError: the folder cannot be written to, the disk is full, ``path`` is a folder, and
            the like.

    Example:
        >>> import pathlib, tempfile
        >>> report = pathlib.Path(tempfile.mkdtemp(), "report.json")
        >>> with replaced(str(report)) as out:
        ...     _ = out.write("{}\\n")
        >>> report.read_text()
        '{}\\n'
    """
    if os.path.abspath(path).startswith(DEVICES):
        with open(path, "w", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            yield handle
        return
    try:
        before = os.lstat(path).st_mode
    except FileNotFoundError:
        before = 0
    fd, temporary = _create_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            if stat.S_ISREG(before):
                os.chmod(temporary, stat.S_IMODE(before))
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def check_writable(path: str) -> None:
    """Raise the :class:`OSError` that :func:`replaced` would meet at ``path`` for want of a place
    to write: its folder missing or not writable, or ``path`` a folder. A temporary file is made
    beside ``path`` and removed; ``path`` itself is neither created nor touched (a check before a
    scan must not leave an empty report). A device (``/dev/stdout``) is not checked.

    Raises:
        OSError: what :func:`replaced` would raise for want of a place to write.

    Example:
        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> check_writable(os.path.join(folder, "report.json")); os.listdir(folder)
        []
        >>> check_writable("/")
        Traceback (most recent call last):
        ...
        IsADirectoryError: [Errno 21] Is a directory: '/'
    """
    if os.path.abspath(path).startswith(DEVICES):
        return
    if os.path.isdir(path):  # replaced() would write it all, then fail to rename over the folder
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    fd, temporary = _create_beside(path)
    os.close(fd)
    os.unlink(temporary)


def _create_beside(target: str) -> tuple[int, str]:
    """A new file ``.NAME.XXXXXXXX.tmp`` beside ``target``, mode 0o666 less the umask."""
    folder, name = os.path.split(target)
    folder = folder or "."
    while True:
        temporary = os.path.join(folder, f".{name}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temporary
        except FileExistsError:
            continue


def tree_link(target: str, roots: Iterable[str]) -> str | None:
    """The folder on the way to ``target`` that is a link lying inside one of the trees ``roots``
    (``None``: none is): that tree, not whoever named ``target``, would choose where the file goes
    (a change under review can commit ``reports -> ~/.config``). A link at the file's own name is
    replaced, not followed (:func:`replaced`); a link above the trees is the user's own.
    """
    if os.path.abspath(target).startswith(DEVICES):  # written directly
        return None
    tops = [os.path.realpath(r).rstrip(os.sep) + os.sep for r in roots]
    folder = os.path.dirname(os.path.abspath(target))
    while os.path.dirname(folder) != folder:
        # Where the link itself lies, its way resolved: however the path was spelled.
        at = os.path.join(os.path.realpath(os.path.dirname(folder)), os.path.basename(folder))
        if os.path.islink(folder) and any(at.startswith(top) for top in tops):
            return folder
        folder = os.path.dirname(folder)
    return None
