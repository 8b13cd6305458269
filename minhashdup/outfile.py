"""Writing a report file whole or not at all.

Opening ``-o report.json`` for writing truncates the previous report at once; a full disk,
a crash or a Ctrl-C then leaves a cut file that a later step may believe. :func:`replaced`
writes beside the file and renames over it only when everything was written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from typing import TextIO


@contextlib.contextmanager
def replaced(path: str) -> Iterator[TextIO]:
    """A text stream (UTF-8) whose content replaces the file at ``path`` if the block succeeds.

    The text goes to a hidden temporary file in the same folder, flushed to disk, then
    renamed over ``path`` in one step: readers see the old file or the new one, never a
    part. If the block raises (a write error, ``KeyboardInterrupt``), the temporary file is
    removed and ``path`` is left as it was. A symlink is written through (its target is
    replaced); a path that exists but is not a regular file (``/dev/stdout``, a FIFO) is
    written directly, as it cannot be renamed over. A replaced file keeps its permissions.

    Raises:
        OSError: the folder cannot be written to, the disk is full, and the like.

    Example:
        >>> with replaced(f"{tmp}/report.json") as out:  # tmp: a scratch folder
        ...     _ = out.write("{}\\n")
        >>> open(f"{tmp}/report.json").read()
        '{}\\n'
    """
    target = os.path.realpath(path)
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(target, "w", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            yield handle
        return
    fd, temporary = _create_beside(target)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            if mode is not None:
                os.chmod(temporary, stat.S_IMODE(mode))
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _create_beside(target: str) -> tuple[int, str]:
    """A new file ``.NAME.XXXXXXXX.tmp`` beside ``target``, mode 0o666 less the umask."""
    folder, name = os.path.split(target)
    while True:
        temporary = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temporary
        except FileExistsError:
            continue
