"""Domain errors and exit codes.

The library raises these small exceptions; only :mod:`minhashdup.cli` turns them into
messages and exit codes, once, at the edge. A message names the parameters it is about as
Python spells them (``threshold``); the command line shows its flags instead (``--threshold``),
through :meth:`MinhashdupError.spelled`.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from typing import Any


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
    UNCHECKED = 4
    """The gate failed closed: no new pair beyond the limit, but a changed file named as code was
    not compared (too large, binary, its lexer failed or ran out of time)."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C (SIGINT)."""
    TERMINATED = 143
    """Stopped by SIGTERM (128 + 15): workers were stopped, no partial ``--output`` was left."""


class MinhashdupError(Exception):
    """Base class of every error minhashdup raises on purpose.

    Args:
        message: the text; with ``params`` or ``values``, a :meth:`str.format` template whose
            ``{0}``, ``{1}``... are the parameter names and whose named fields are ``values``
            (a user's value never goes through the template, so braces in a path are safe).
        params: the parameters the message is about, as the library's keywords name them.
        values: the values shown in the message.

    Example:
        >>> err = ConfigError("{0} must be 1 or more (got {value})", "max_hashes", value=0)
        >>> str(err), err.spelled(lambda name: "--" + name.replace("_", "-"))
        ('max_hashes must be 1 or more (got 0)', '--max-hashes must be 1 or more (got 0)')
    """

    def __init__(self, message: str, *params: str, **values: Any) -> None:
        self.template, self.params, self.values = message, params, values
        super().__init__(self.spelled())

    def spelled(self, name: Callable[[str], str] = str) -> str:
        """The message with each parameter named by ``name`` (the CLI gives its flag)."""
        if not self.params and not self.values:
            return self.template
        return self.template.format(*(name(p) for p in self.params), **self.values)


class ConfigError(MinhashdupError, ValueError):
    """An option value is out of range; the message says how to fix it."""


class InputPathError(MinhashdupError):
    """A PATH given by the user does not exist or cannot be listed."""


class ClusterError(MinhashdupError):
    """The Dask engine's cluster cannot be reached, or lost the run's work past its retries."""


class ScanLimitError(MinhashdupError):
    """A scan would hold more verified pairs than ``--max-verified`` allows."""


# The checks every layer shares: each raises a ConfigError naming the parameter.


def check_whole(name: str, value: object, low: int, high: int) -> None:
    """Refuse ``value`` unless it is an ``int`` (not a bool) from ``low`` to ``high``.

    Raises:
        ConfigError: naming the parameter ``name`` and the range.

    Example:
        >>> check_whole("repeats", 0, 1, 1000)
        Traceback (most recent call last):
        ...
        minhashdup.errors.ConfigError: repeats must be between 1 and 1000 (got 0)
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError("{0} must be a whole number (got {value!r})", name, value=value)
    if not low <= value <= high:
        raise ConfigError("{0} must be between {low} and {high} (got {value})", name, low=low, high=high, value=value)


def check_share(name: str, value: object) -> None:
    """Refuse ``value`` unless it is a number above 0 and below 1.

    Raises:
        ConfigError: naming the parameter ``name`` and the range.

    Example:
        >>> check_share("min_recall", 1.0)
        Traceback (most recent call last):
        ...
        minhashdup.errors.ConfigError: min_recall must be above 0 and below 1 (got 1)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError("{0} must be a number between 0 and 1 (got {value!r})", name, value=value)
    if not 0 < value < 1:  # NaN too
        raise ConfigError("{0} must be above 0 and below 1 (got {value:g})", name, value=value)


def check_threshold(value: object, name: str = "threshold") -> None:
    """Refuse a similarity threshold unless it is above 0 and at most 1; a percentage gets a hint.

    Raises:
        ConfigError: naming the parameter and, for 1 < value <= 100, the share it may have meant.

    Example:
        >>> check_threshold(80)
        Traceback (most recent call last):
        ...
        minhashdup.errors.ConfigError: threshold must be above 0 and at most 1 (got 80; did you mean 0.8?)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError("{0} must be a number between 0 and 1 (got {value!r})", name, value=value)
    if value != value:  # NaN
        raise ConfigError("{0} must be a number between 0 and 1 (got nan)", name)
    if not 0.0 < value <= 1.0:
        hint = f"; did you mean {value / 100:g}?" if 1 < value <= 100 else ""
        raise ConfigError("{0} must be above 0 and at most 1 (got {value:g}{hint})", name, value=value, hint=hint)


def check_switch(name: str, value: object) -> None:
    """Refuse ``value`` unless it is ``True`` or ``False`` (``"false"`` would be true).

    Raises:
        ConfigError: naming the parameter ``name``.
    """
    if not isinstance(value, bool):
        raise ConfigError("{0} must be True or False (got {value!r})", name, value=value)


def check_path(name: str, value: object) -> None:
    """Refuse ``value`` unless it is ``None``, a ``str`` or an ``os.PathLike`` (found when the
    call is made, not when the file is opened after minutes of lexing).

    Raises:
        ConfigError: naming the parameter ``name``.

    Example:
        >>> check_path("baseline", 5)
        Traceback (most recent call last):
        ...
        minhashdup.errors.ConfigError: baseline must be a path (got 5)
    """
    if value is not None and not isinstance(value, (str, os.PathLike)):
        raise ConfigError("{0} must be a path (got {value!r})", name, value=value)
