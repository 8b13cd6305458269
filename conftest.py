"""What the doctests in ``minhashdup/`` run with (the tests' own fixtures are in tests/conftest.py).

The suite runs from the repository root, so examples may scan ``examples/``. Each doctest
also gets ``tmp``, a fresh folder for the files it writes, and a cache folder of its own
(``XDG_CACHE_HOME``): an example never writes to the repository or to the user's cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _doctest_sandbox(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not isinstance(request.node, pytest.DoctestItem):
        return
    folder: Path = tmp_path_factory.mktemp("doctest")
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder / "cache"))
    namespace: dict[str, Any] = request.getfixturevalue("doctest_namespace")
    namespace["tmp"] = str(folder / "tmp")
    (folder / "tmp").mkdir()
