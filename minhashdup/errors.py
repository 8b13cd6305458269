"""Domain errors and exit codes.

The core raises these small exceptions; only :mod:`minhashdup.cli` turns them into
messages and exit codes, once, at the edge.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Process exit codes, documented in the README and asserted in the tests."""

    OK = 0
    """The scan ran (pairs may or may not have been found)."""
    PAIRS_FOUND = 1
    """The gate failed: new pairs with ``--fail-on-pairs``, or more than ``--max-pairs``."""
    USAGE = 2
    """Bad option value, missing path, or the report could not be written (an unwritable or
    full ``--output`` or stdout): nothing was scanned, or its report is not complete."""
    INTERNAL = 3
    """A bug in minhashdup; the message asks for a report."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C (SIGINT)."""
    TERMINATED = 143
    """Stopped by SIGTERM (128 + 15): workers were stopped, no partial ``--output`` was left."""


class MinhashdupError(Exception):
    """Base class of every error minhashdup raises on purpose."""


class ConfigError(MinhashdupError, ValueError):
    """An option value is out of range; the message says how to fix it."""


class InputPathError(MinhashdupError):
    """A PATH given by the user does not exist or cannot be listed."""


class ScanLimitError(MinhashdupError):
    """A scan would hold more verified pairs than ``--max-verified`` allows."""
