"""Where the command's output goes: a report to stdout or ``--output``, progress and notices to
stderr, and what happens when either cannot be written."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO

from minhashdup.cli.options import UsageFailure
from minhashdup.engine.pipeline import ProgressBar, ProgressFactory
from minhashdup.report.outfile import check_writable, replaced, tree_link

#: What to do when stdout cannot be written, for the commands without --output.
NO_OUTPUT = "redirect stdout to a file on a disk with room"


@contextlib.contextmanager
def stderr_may_close() -> Iterator[None]:
    """Notices to stderr whose reader may have gone (``2>&1 | head``): the rest of them is
    dropped, and the scan ends with the exit code it decided (a gate must never pass because
    its messages could not be shown)."""
    try:
        yield
    except BrokenPipeError:
        silence(sys.stderr)


def silence(stream: TextIO) -> None:
    """Point ``stream``'s file at the null device: what is still buffered is dropped, not retried."""
    try:
        fileno = stream.fileno()
    except (OSError, ValueError):  # not a real file (e.g. captured in tests)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


def write(
    renderer: Callable[[TextIO], object], output: str | None, hint: str = "write it to a file with --output"
) -> None:
    """The report to ``output`` (whole or not at all, see :func:`replaced`) or to stdout.

    A write error (a full disk, a closed terminal) is one line and exit 2, never a cut file
    that exits 0. A reader that went away (``| head``) is not an error: the rest of stdout
    is dropped and the scan ends as it would have (the gate still decides the exit code).
    """
    if output is None:
        try:
            renderer(sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:
            silence(sys.stdout)
        except OSError as err:
            silence(sys.stdout)
            raise UsageFailure(f"cannot write the report to stdout: {err.strerror or err}; {hint}") from None
        return
    try:
        with replaced(output) as handle:
            renderer(handle)
    except OSError as err:
        raise UsageFailure(f"cannot write {output}: {err.strerror or err}; choose another --output") from None


def refuse_unwritable(targets: Iterable[tuple[str, str | None]]) -> None:
    """Refuse, before the scan, a file to write that could not be written after it: each target
    is an option's name and its value (``("--output", "dups.json")``), ``None`` when not given.
    A scan of a large tree must not run for minutes to fail at its last step.

    Raises:
        UsageFailure: naming the file, why it cannot be written and the option to change.
    """
    for option, target in targets:
        if target is None:
            continue
        try:
            check_writable(target)
        except OSError as err:
            raise UsageFailure(f"cannot write {target}: {err.strerror or err}; choose another {option}") from None


def refuse_tree_links(targets: Iterable[str | None], roots: Iterable[str]) -> None:
    """Refuse a file to write (``--output``, ``--write-baseline``) whose way goes through a link
    to a folder inside a tree being scanned (:func:`.outfile.tree_link`).

    Raises:
        UsageFailure: naming the link.
    """
    roots = list(roots)
    for target in targets:
        link = None if target is None else tree_link(target, roots)
        if link is not None:
            raise UsageFailure(
                f"cannot write {target}: {link} is a link inside the tree scanned, which would choose"
                " where the file goes; write it to a folder that is not a link"
            )


def progress_factory(quiet: bool) -> ProgressFactory | None:
    """Progress bars on stderr (drawn only on a terminal); none with ``--quiet``."""
    if quiet:
        return None

    def factory(stage: str, total: int) -> ProgressBar:
        from tqdm import tqdm  # only when there is something to lex

        bar: ProgressBar = tqdm(
            total=total, desc=stage, unit="file", file=sys.stderr, leave=False, disable=not sys.stderr.isatty()
        )
        return bar

    return factory
