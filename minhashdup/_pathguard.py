"""``python -m minhashdup`` puts the current folder first on ``sys.path`` and imports the package
before its ``__main__``: in a scanned repository, a ``dataclasses.py`` or a lexer plugin
(``*.dist-info``) there would be imported by the package's own imports. The package imports this
module first, which drops the folder (``os`` and ``sys`` are loaded at every start). While ``-m``
imports the package, and only then, ``sys.argv[0]`` is ``"-m"``: a program that imports the
library keeps its ``sys.path``. A ``minhashdup`` folder in the current folder is still what ``-m``
runs: that is what ``-m`` means.

The package's imports then run with the cyclic garbage collector paused (:func:`collector_paused`).
"""

import os
import sys

if sys.argv[:1] == ["-m"]:
    sys.path[:] = [entry for entry in sys.path if entry not in ("", ".", os.getcwd())]

# isort: split
# Only now: a contextlib.py in the folder left out would have been imported instead of Python's.
import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The block (the package's imports, the command's) runs with automatic collection off; it is
    back on after if it was on before, so a program that imports the library keeps its settings.
    When it was on, the caller's young garbage is collected first, and after the block the
    objects left (the caller's, all live, and those the block made) join the oldest generation.

    The imports make ~15,000 objects (modules, classes, functions) that live as long as the
    process, and few cycles to free. At Python's default pace the collector ran about 30 times
    while they were made, walking them each time: ~5 ms of a warm scan of the Go tree (0.15 s).

    Example:
        >>> import gc
        >>> with collector_paused():
        ...     gc.isenabled()
        False
        >>> gc.isenabled()
        True
    """
    was_on = gc.isenabled()
    if was_on:
        gc.collect(1)  # the caller's young garbage, freed now rather than promoted below
    gc.disable()
    try:
        yield
    finally:
        # Re-enabled as they are, the objects made would all be walked at the next allocation, as
        # young ones (~1 ms each time). freeze() moves every tracked object out of the
        # generations and unfreeze() puts them back into the oldest, which a collection walks
        # only once much else has been made: unless a caller froze objects of its own, which
        # unfreeze() would free too, or turned the collector off (then nothing is walked anyway).
        if was_on:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
