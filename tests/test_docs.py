"""The docs stay true: help texts, exit codes, the S-curve table and the Quick start."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from minhashdup.cli import cli
from minhashdup.core.bands import candidate_probability
from minhashdup.errors import ExitCode
from minhashdup.result import SkipReason

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group = cli) -> list[click.Command]:
    out: list[click.Command] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None and command.name == name  # a lazy command is found by its name
        out.append(command)
        if isinstance(command, click.Group):
            out.extend(_commands(command))
    return out


@pytest.mark.parametrize("command", _commands(), ids=lambda c: c.name)
def test_every_command_and_option_has_help(command: click.Command) -> None:
    assert command.help and command.help.strip()
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help and param.help.strip(), f"{command.name} {param.opts} has no help"


def test_help_states_the_defaults_that_matter() -> None:
    text = cli.commands["scan"].get_help(click.Context(cli.commands["scan"], info_name="scan"))
    assert "[default: (1MiB)]" in text
    assert re.search(r"--min-shingles INTEGER.*?\[default:\s+20\]", text, re.S)


def test_readme_exit_code_table_matches_the_enum() -> None:
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \|", README, re.M)
    assert [(int(code), name) for code, name in rows] == [(c.value, c.name) for c in ExitCode]


def test_readme_lists_every_skip_reason() -> None:
    for reason in SkipReason:
        assert f"`{reason.value}`" in README, reason


def test_readme_s_curve_table_is_the_formula() -> None:
    table = README.split("<!-- s-curve 12x4")[1]
    s_row = re.search(r"^\| similarity s \|(.*)$", table, re.M)
    p_row = re.search(r"^\| P\(candidate\) \|(.*)$", table, re.M)
    assert s_row and p_row
    sims = [float(x) for x in s_row.group(1).split("|") if x.strip()]
    probs = [float(x) for x in p_row.group(1).split("|") if x.strip()]
    assert probs == [round(float(candidate_probability(s, 12, 4)), 3) for s in sims]


def test_quick_start_is_two_commands_and_ci_runs_them() -> None:
    block = README.split("<!-- quickstart")[1].split("```sh\n")[1].split("```")[0]
    lines = block.strip().splitlines()
    assert lines == ["pip install . && minhashdup scan examples", "pip install -e '.[test]' && pytest"]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert all(line in ci for line in lines)  # CI runs exactly what the README tells a newcomer
