"""Reading a file of an untrusted tree: regular files only, never blocking, never unbounded.

A repository can hold anything where a source file or a ``.gitignore`` is expected: a FIFO
(``open`` waits forever for a writer), a link to ``/dev/zero`` (``read`` never ends), a file
that grows while it is read. :func:`read_regular` opens without blocking, checks what it
opened (not what the name pointed at a moment before) and reads at most ``limit`` bytes.
:func:`read_rules_file` reads a ``.gitignore`` or ``.gitattributes`` so, :func:`git_lines`
splits it as git does.
"""

from __future__ import annotations

import errno
import os
import stat

from minhashdup.source.witnesses import saw_stat

__all__ = [
    "IGNORE_FILE_LIMIT",
    "MIB",
    "NotRegularFileError",
    "TooLargeError",
    "git_lines",
    "kind_of",
    "read_ends",
    "read_regular",
    "read_regular_with_stat",
    "read_rules_file",
]

#: A mebibyte: the default most bytes read of one file (``max_size``), and the unit of limits.
MIB = 1024 * 1024

#: The most bytes read from one rules file (``.gitignore``, ``.gitattributes``, ``.git/info/exclude``).
#: Real ones hold a few hundred lines; a larger one is not read, with a warning.
IGNORE_FILE_LIMIT = MIB

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


class NotRegularFileError(OSError):
    """The path names a FIFO, a device, a socket or a folder, not a regular file."""


class TooLargeError(OSError):
    """The file holds more than the limit (it may have grown since it was listed)."""


def read_regular(path: str, limit: int, follow: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    Args:
        path: the file to read.
        limit: the most bytes accepted; a larger file raises :class:`TooLargeError`.
        follow: follow a symbolic link at ``path`` as ``open`` does; with ``False`` (for a
            path the walk resolved already) a link there is refused: the file was swapped for
            one after it was listed.

    Returns:
        The file's whole content.

    Raises:
        NotRegularFileError: ``path`` is not a regular file (checked on the open handle).
        TooLargeError: the file holds more than ``limit`` bytes.
        OSError: it cannot be opened or read.

    Example:
        >>> read_regular("/dev/null", 10)
        Traceback (most recent call last):
        ...
        minhashdup.source.safeio.NotRegularFileError: [Errno 22] not a regular file (character device): '/dev/null'
    """
    return read_regular_with_stat(path, limit, follow)[0]


def read_regular_with_stat(path: str, limit: int, follow: bool = True) -> tuple[bytes, os.stat_result]:
    """:func:`read_regular`, with the status of the open file taken after reading it.

    That status describes the file the bytes came from, even if the name was pointed at
    another file meanwhile: a cache may pair it with the bytes' digest when it equals the
    status seen before the read (nothing was written in between).

    Raises:
        NotRegularFileError, TooLargeError, OSError: as :func:`read_regular`.
    """
    try:
        fd = os.open(path, _FLAGS if follow else _FLAGS | getattr(os, "O_NOFOLLOW", 0))
    except OSError as err:
        if not follow and err.errno == errno.ELOOP and os.path.islink(path):
            raise NotRegularFileError(errno.ELOOP, "a symbolic link now (swapped after the walk)", path) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(errno.EINVAL, f"not a regular file ({kind_of(mode)})", path)
        chunks = []
        remaining = limit + 1  # one byte more than allowed tells a file over the limit
        while remaining > 0:
            chunk = os.read(fd, min(remaining, MIB))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise TooLargeError(errno.EFBIG, f"more than {limit} bytes", path)
    return data, after


def read_ends(path: str, size: int) -> bytes:
    """The first and last ``size`` bytes of the regular file at ``path`` (all of it when it is
    shorter than twice that), opened as :func:`read_regular` opens it: never waiting on a FIFO.

    Raises:
        NotRegularFileError, OSError: as :func:`read_regular`.
    """
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(errno.EINVAL, f"not a regular file ({kind_of(st.st_mode)})", path)
        head = os.read(fd, size)
        return head + os.pread(fd, size, max(len(head), st.st_size - size))
    finally:
        os.close(fd)


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words (for skip details and messages)."""
    for test, name in (
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISDIR, "folder"),
    ):
        if test(mode):
            return name
    return "special file"


def git_lines(text: str) -> list[str]:
    """The lines of a rules file as git reads them: split at ``\\n`` only (not at the other line
    breaks ``str.splitlines`` knows: ``\\r``, form feed, U+2028...), one ``\\r`` before it
    dropped, a byte-order mark at the start left out.

    Example:
        >>> git_lines("\\ufeffa.go\\r\\nb\\rc\\x0cd\\n\\ne")
        ['a.go', 'b\\rc\\x0cd', '', 'e']
    """
    lines = text.removeprefix("\ufeff").split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_rules_file(path: str, shown: str | None, warnings: list[str], follow: bool = False) -> str | None:
    """The text of a rules file of the tree (``.gitignore``, ``.gitattributes``); ``None`` when
    there is none, or with a warning when it is not usable.

    Only a regular file of at most :data:`IGNORE_FILE_LIMIT` bytes is read, without blocking;
    unless ``follow``, a file that is a symbolic link is not read either, as git (2.32 and later)
    does not follow links for a ``.gitignore`` of the tree. Not applying a file's rules scans
    more files, never fewer: the warning says so.
    """
    saw_stat(path, follow)  # before reading: an edit after it changes the stat
    try:
        if not follow and stat.S_ISLNK(os.lstat(path).st_mode):
            why = "a symbolic link, which git does not follow either"
        else:
            return read_regular(path, IGNORE_FILE_LIMIT).decode("utf-8", "surrogateescape")
    except (FileNotFoundError, NotADirectoryError):  # no such file (NotADirectory: .git is a file)
        return None
    except (NotRegularFileError, TooLargeError) as err:  # "not a regular file (FIFO)", "more than N bytes"
        why = err.strerror or str(err)
    except OSError as err:
        why = f"cannot read ({err.strerror or err})"
    warnings.append(f"{shown or path}: {why}; its rules are not applied, so the files it lists are scanned")
    return None
