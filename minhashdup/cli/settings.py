"""Options from a config file: ``[tool.minhashdup]`` of the nearest ``pyproject.toml`` or a
TOML file given with ``--config``, turned into click's ``default_map`` so that command-line
flags win and every value goes through the same checks as a flag.

The nearest ``pyproject.toml`` is found, not chosen: it belongs to the repository being
scanned, which nobody may have reviewed. It may shape the scan and the gate, but not say where
anything is written or read from outside the project (:data:`COMMAND_LINE_ONLY`, and a
``baseline`` outside its folder). A file given with ``--config`` was chosen by the user and
may set anything a flag may.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import click

from minhashdup.cli.options import CONFIG_FILE_KEY, UsageFailure
from minhashdup.cli.sizes import ByteSize
from minhashdup.config import Config, find_config_file, read_config_file
from minhashdup.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

#: Options that only the command line or a ``--config`` file may set: ``{key: what it names}``.
#: Each names a place to write (or a file to read) that a scanned repository must not choose.
COMMAND_LINE_ONLY = {
    "output": "a file to write",
    "write_baseline": "a file to write",
    "cache_dir": "the cache folder, written and then trusted",
    "files_from": "a file to read",
    "parquet": "a dataset to read",
    "engine": "where the files are sent and lexed",
    "scheduler": "a cluster to send the files to",
}


def _options(command: click.Command) -> dict[str, click.Option]:
    """``{key in a config file: option}`` of a command's options (``format`` -> ``fmt``)."""
    out = {}
    for param in command.params:
        if isinstance(param, click.Option) and param.name and not param.is_eager:
            for opt in param.opts + param.secondary_opts:
                if opt.startswith("--"):
                    out[opt[2:].replace("-", "_")] = param
    return out


def check_project_settings(settings: dict[str, Any], source: str, folder: Path) -> None:
    """Refuse what a config file found on its own (part of the scanned repository) may not set:
    the keys of :data:`COMMAND_LINE_ONLY`, and a ``baseline`` outside ``folder`` (its folder).

    Raises:
        ConfigError: such a key, in the main table or a command's table; the message says to
            pass it on the command line.
    """
    tables = [(source, settings)] + [(f"{source} [{k}]", v) for k, v in settings.items() if isinstance(v, dict)]
    for where, table in tables:
        for key, value in table.items():
            norm = key.replace("-", "_")
            flag = "--" + norm.replace("_", "-")
            if norm in COMMAND_LINE_ONLY:
                raise ConfigError(
                    f"{where}: {key!r} cannot be set by the scanned project (it names {COMMAND_LINE_ONLY[norm]});"
                    f" pass {flag} on the command line (or in a file given with --config)"
                )
            if norm == "baseline" and isinstance(value, str) and not _inside(value, folder):
                raise ConfigError(
                    f"{where}: {key!r} = {value!r} is outside the project folder {folder}; pass {flag}"
                    " on the command line (or in a file given with --config)"
                )


#: Bounds on the work a file may cost: a found config may tighten them, never loosen them (a
#: repository must not make its own scan unbounded). ``0`` turns the lexing deadline off.
TIGHTEN_ONLY = ("max_size", "max_bucket", "lex_timeout", "max_verified", "completion_cap")


def check_project_limits(ctx: click.Context, defaults: dict[str, Any], source: str) -> None:
    """Refuse a found config's value of a :data:`TIGHTEN_ONLY` bound above its default (or a
    lexing deadline of 0, none at all).

    Raises:
        ConfigError: naming the key, the value and the default; the message says to pass a
            larger bound on the command line.
    """
    fallback = Config()
    for option in ctx.command.params:
        if not isinstance(option, click.Option) or option.name not in TIGHTEN_ONLY or option.name not in defaults:
            continue
        try:
            value = option.type.convert(defaults[option.name], option, ctx)
        except click.BadParameter:
            continue  # click reports a value it cannot read, as for a flag
        default = getattr(fallback, option.name)
        unbounded = option.name == "lex_timeout" and value == 0
        if value > default or unbounded:
            flag = "--" + option.name.replace("_", "-")
            shown = f"{default:g} s" if isinstance(default, float) else str(default)
            raise ConfigError(
                f"{source}: {flag[2:]!r} = {defaults[option.name]!r} loosens a bound on the work a scan may do"
                f" (default {shown}); a scanned project may only lower it: pass {flag} on the command line"
                " (or in a file given with --config)"
            )


def _inside(path: str, folder: Path) -> bool:
    """Whether ``path`` (relative to the current folder, links resolved) is inside ``folder``."""
    from pathlib import Path

    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


def _commands(ctx: click.Context, group: click.Command) -> Iterator[tuple[str, click.Command]]:
    """Every command under ``group``, those it imports when first asked for included."""
    if isinstance(group, click.Group):
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if command is not None:
                yield name, command
                yield from _commands(ctx, command)


def config_defaults(ctx: click.Context, settings: dict[str, Any], source: str) -> dict[str, Any]:
    """The ``default_map`` of ``ctx.command`` from a config table: keys valid for this command
    are taken, keys of other commands ignored, unknown keys refused with a suggestion.

    A sub-table named after a command (``[tool.minhashdup.scan]``) applies to that command only.

    Raises:
        ConfigError: an unknown key or command table.
    """
    commands = dict(_commands(ctx, ctx.find_root().command))
    known = {key for command in commands.values() for key in _options(command)}
    mine = _options(ctx.command)
    general: dict[str, Any] = {}
    specific: dict[str, Any] = {}  # the command's own table wins over the general keys
    for key, value in settings.items():
        norm = key.replace("-", "_")
        if isinstance(value, dict) and key in commands:
            if commands[key] is ctx.command:
                specific = _only_mine(value, mine, f"{source} [{key}]")
            continue
        if norm == "config":
            raise ConfigError(f"{source}: a config file cannot name another; give --config FILE on the command line")
        if norm not in known:
            raise ConfigError(f"{source}: unknown option {key!r}{_did_you_mean(norm, known)}")
        if norm in mine:
            general[_name(mine[norm])] = _checked(mine[norm], key, value, source)
    return {**general, **specific}


def _only_mine(settings: dict[str, Any], mine: dict[str, click.Option], source: str) -> dict[str, Any]:
    out = {}
    for key, value in settings.items():
        norm = key.replace("-", "_")
        if norm not in mine:
            raise ConfigError(f"{source}: {key!r} is not an option of this command{_did_you_mean(norm, mine)}")
        out[_name(mine[norm])] = _checked(mine[norm], key, value, source)
    return out


def _name(option: click.Option) -> str:
    assert option.name is not None  # _options takes named options only
    return option.name


def _checked(option: click.Option, key: str, value: Any, source: str) -> Any:
    """``value`` if it is of a TOML type the option takes (then click checks it as a flag's
    text), else a :class:`ConfigError` naming the key and the type it needs.

    A string is always accepted where click converts text (``bands = "4"``); what click cannot
    convert (an array for a number, a number for a path) is refused here, not in click.
    """
    if option.multiple:
        ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
        need = "an array of strings"
    elif option.is_flag:
        ok, need = isinstance(value, (bool, str)), "true or false"
    elif isinstance(option.type, click.types.IntParamType):
        ok, need = isinstance(value, (int, str)) and not isinstance(value, bool), "an integer"
    elif isinstance(option.type, click.types.FloatParamType):
        ok, need = isinstance(value, (int, float, str)) and not isinstance(value, bool), "a number"
    elif isinstance(option.type, ByteSize):
        ok, need = isinstance(value, (int, str)) and not isinstance(value, bool), "a size (an integer or a string)"
    else:
        ok, need = isinstance(value, str), "a string"
    if not ok:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise ConfigError(f"{source}: {key!r} must be {need} (got {_toml_type(value)} {shown})")
    return value


def _toml_type(value: Any) -> str:
    """The TOML name of a parsed value's type."""
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "float"), (str, "string"), (list, "array")):
        if isinstance(value, kind):
            return name
    return "table" if isinstance(value, dict) else "date-time"


def _did_you_mean(key: str, names: Any) -> str:
    import difflib  # here: only a misspelt key needs it

    close = difflib.get_close_matches(key, sorted(names), n=1)
    return f" (did you mean {close[0].replace('_', '-')!r}?)" if close else "; see --help for the options"


NO_CONFIG_KEY = "minhashdup.no_config"


def _no_config(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # Eager and given on the command line, this runs before --config's callback (click runs
    # eager options in the order given, the ones not given after them).
    if value and ctx.meta.get(CONFIG_FILE_KEY):  # --config FILE came first and was read
        raise UsageFailure("--config and --no-config exclude each other; give one")
    if value:
        ctx.meta[NO_CONFIG_KEY] = True


def _load_config(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value and ctx.meta.get(NO_CONFIG_KEY):
        raise UsageFailure("--config and --no-config exclude each other; give one")
    if not value and ctx.meta.get(NO_CONFIG_KEY):
        return None
    # A ConfigError raised here ends the command as any other: one line, exit 2 (cli.exit_code).
    found = value or find_config_file()
    if found is None:
        return None
    from pathlib import Path  # here: most runs read no config file

    path = Path(found)
    source = f"{path} [tool.minhashdup]" if path.name == "pyproject.toml" and not value else str(path)
    settings = read_config_file(path)
    if not value:  # found, not chosen: part of the scanned repository
        check_project_settings(settings, source, path.parent)
    defaults = config_defaults(ctx, settings, source)
    if not value:
        check_project_limits(ctx, defaults, source)
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    ctx.meta[CONFIG_FILE_KEY] = str(path)
    return str(path)


def config_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--config FILE`` and ``--no-config``, for every command that reads options."""
    return _no_config_option(_config_option(command))


_no_config_option = click.option(
    "--no-config",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=_no_config,
    help="Read no config file: not even the nearest pyproject.toml (for CI on untrusted changes, where the"
    " scanned repository must not shape its own gate).",
)

_config_option = click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    is_eager=True,
    expose_value=False,
    callback=_load_config,
    metavar="FILE",
    help="Read options from this TOML file (default: [tool.minhashdup] of the nearest pyproject.toml, which may"
    " not set --output, --write-baseline, --cache-dir, --files-from or a --baseline outside its folder);"
    " command-line flags win.",
)
