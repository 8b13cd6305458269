"""Every example in the package's docstrings runs, from the repository root (so examples may
scan ``examples/``), each module's examples with ``tmp`` (a fresh folder for the files they
write) and a cache folder of their own: an example writes neither to the repository nor to the
user's cache. Run here rather than by ``--doctest-modules``, whose fixtures would need a
conftest.py at the top of the repository."""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil
from pathlib import Path

import pytest

import minhashdup

ROOT = Path(__file__).resolve().parent.parent

#: The package (the library's calls) and every module of it but ``__main__`` (the CLI) and
#: ``_workerstart`` (which sets the importing process's SIGINT handler: for the fork server only).
MODULES = [
    "minhashdup",
    *sorted(
        info.name
        for info in pkgutil.walk_packages(minhashdup.__path__, "minhashdup.")
        if not info.name.endswith(("__main__", "_workerstart"))  # the CLI; the fork server's own setup
    ),
]


def test_the_package_has_examples_to_run() -> None:
    found = sum(len(doctest.DocTestFinder().find(importlib.import_module(name))) for name in MODULES)
    assert found >= 20  # a finder that finds nothing would pass every test below


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "tmp").mkdir()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = io.StringIO()
    for test in doctest.DocTestFinder().find(importlib.import_module(name)):
        test.globs["tmp"] = str(tmp_path / "tmp")
        runner.run(test, out=report.write)
    assert runner.failures == 0, report.getvalue()
