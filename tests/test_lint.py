"""ruff (format and check) and strict mypy are part of the test suite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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
