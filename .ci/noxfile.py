"""The test suite on every CPython that minhashdup supports (3.10 to 3.13) found on this machine.

    pip install nox && nox -f .ci/noxfile.py      # each version found (PATH, pyenv, ...); the others are skipped
    nox -f .ci/noxfile.py -s tests-3.12           # one version
    nox -f .ci/noxfile.py -p 3.10 3.13 -- -x -q   # some versions; what follows -- goes to pytest

Each session installs '.[test]' in a fresh virtual environment, as the README's Quick start
does, and runs pytest. ruff and mypy run once, under the Python pinned in pyproject.toml
(``[tool.mypy] python_version``): tests/test_lint.py skips them on the others. .ci/run
runs this after the Quick start, for the versions other than its own.
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

#: The repository (this file lives in .ci/; nox runs sessions from the noxfile's folder).
ROOT = Path(__file__).resolve().parent.parent

#: CPython versions the project supports: requires-python ">=3.10" up to the newest tested.
PYTHONS = ["3.10", "3.11", "3.12", "3.13"]

nox.options.sessions = ["tests"]
nox.options.error_on_missing_interpreters = False  # a version this machine lacks is skipped, not an error
nox.options.download_python = "never"  # only the machine's own interpreters: nothing is fetched


def _every_pyenv_version_active() -> None:
    """Let nox find each Python that pyenv installed, not only its active ones.

    pyenv's shims (``python3.10``) answer only for the versions named in ``PYENV_VERSION``,
    ``.python-version`` or the global ``version`` file; ``PYENV_VERSION`` may list several,
    separated by colons. The ones already active stay first, so ``python3`` is unchanged.
    """
    root = os.environ.get("PYENV_ROOT")
    if not root or not os.path.isdir(os.path.join(root, "versions")):
        return
    active = os.environ.get("PYENV_VERSION", "").split(":")
    if active == [""]:
        try:
            with open(os.path.join(root, "version"), encoding="utf-8") as handle:
                active = handle.read().split()
        except OSError:
            active = []
    installed = sorted(os.listdir(os.path.join(root, "versions")))
    os.environ["PYENV_VERSION"] = ":".join(dict.fromkeys([*active, *installed]))


_every_pyenv_version_active()


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """pip install -e '.[test]' && pytest, on one Python."""
    session.chdir(ROOT)
    session.install("--quiet", "-e", ".[test]")
    session.run("pytest", *session.posargs)
