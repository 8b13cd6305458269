"""ruff (format and check) and strict mypy are part of the test suite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def lint_python() -> str:
    """The Python the linters run under: ``[tool.mypy] python_version`` in pyproject.toml."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["python_version"])


LINT_PYTHON = lint_python()
HERE = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.skipif(
    HERE != LINT_PYTHON,
    reason=f"ruff and mypy run once, under Python {LINT_PYTHON} (pyproject.toml [tool.mypy]), not on {HERE}",
)
@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "format", "--check", "."],
        ["ruff", "check", "."],
        [sys.executable, "-m", "mypy"],
    ],
    ids=["ruff-format", "ruff-check", "mypy"],
)
def test_linters_pass(command: list[str]) -> None:
    if command[0] == "ruff":
        ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
        command = [ruff, *command[1:]]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
