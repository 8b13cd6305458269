"""Options from a config file: ``[tool.minhashdup]`` of the nearest ``pyproject.toml`` or a
TOML file given with ``--config``, turned into click's ``default_map`` so that command-line
flags win and every value goes through the same checks as a flag.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from minhashdup.config import find_config_file, read_config_file
from minhashdup.errors import ConfigError
from minhashdup.options import CONFIG_FILE_KEY, UsageFailure


def _option_names(command: click.Command) -> dict[str, str]:
    """``{key in a config file: parameter name}`` of a command's options (``format`` -> ``fmt``)."""
    out = {}
    for param in command.params:
        if isinstance(param, click.Option) and param.name and not param.is_eager:
            for opt in param.opts + param.secondary_opts:
                if opt.startswith("--"):
                    out[opt[2:].replace("-", "_")] = param.name
    return out


def _commands(group: click.Command) -> Iterator[tuple[str, click.Command]]:
    for name, command in getattr(group, "commands", {}).items():
        yield name, command
        yield from _commands(command)


def config_defaults(ctx: click.Context, settings: dict[str, Any], source: str) -> dict[str, Any]:
    """The ``default_map`` of ``ctx.command`` from a config table: keys valid for this command
    are taken, keys of other commands ignored, unknown keys refused with a suggestion.

    A sub-table named after a command (``[tool.minhashdup.scan]``) applies to that command only.

    Raises:
        ConfigError: an unknown key or command table.
    """
    commands = dict(_commands(ctx.find_root().command))
    known = {key for command in commands.values() for key in _option_names(command)}
    mine = _option_names(ctx.command)
    general: dict[str, Any] = {}
    specific: dict[str, Any] = {}  # the command's own table wins over the general keys
    for key, value in settings.items():
        norm = key.replace("-", "_")
        if isinstance(value, dict) and key in commands:
            if commands[key] is ctx.command:
                specific = _only_mine(value, mine, f"{source} [{key}]")
            continue
        if norm not in known:
            raise ConfigError(f"{source}: unknown option {key!r}{_did_you_mean(norm, known)}")
        if norm in mine:
            general[mine[norm]] = value
    return {**general, **specific}


def _only_mine(settings: dict[str, Any], mine: dict[str, str], source: str) -> dict[str, Any]:
    out = {}
    for key, value in settings.items():
        norm = key.replace("-", "_")
        if norm not in mine:
            raise ConfigError(f"{source}: {key!r} is not an option of this command{_did_you_mean(norm, mine)}")
        out[mine[norm]] = value
    return out


def _did_you_mean(key: str, names: Any) -> str:
    close = difflib.get_close_matches(key, sorted(names), n=1)
    return f" (did you mean {close[0].replace('_', '-')!r}?)" if close else "; see --help for the options"


def _load_config(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    try:
        path = Path(value) if value else find_config_file()
        if path is None:
            return None
        source = f"{path} [tool.minhashdup]" if path.name == "pyproject.toml" and not value else str(path)
        defaults = config_defaults(ctx, read_config_file(path), source)
    except ConfigError as err:
        raise UsageFailure(str(err)) from None
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    ctx.meta[CONFIG_FILE_KEY] = str(path)
    return str(path)


config_option = click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    is_eager=True,
    expose_value=False,
    callback=_load_config,
    metavar="FILE",
    help="Read options from this TOML file (default: [tool.minhashdup] of the nearest pyproject.toml);"
    " command-line flags win.",
)
