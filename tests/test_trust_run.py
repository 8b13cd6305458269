"""Nothing of the scanned tree is run: not even through ``python -m minhashdup`` started inside it,
whose current folder Python would otherwise put on ``sys.path`` (issue 11)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minhashdup.errors import ExitCode

from .conftest import TreeFactory

PLUGIN = {
    # A lexer "plugin" a repository can commit: pygments finds entry points on sys.path.
    "evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
    "evil-1.0.dist-info/entry_points.txt": "[pygments.lexers]\nevil = evil_mod:EvilLexer\n",
    "evil_mod.py": (
        "import pathlib\n"
        "pathlib.Path('RAN').write_text('the repository ran code')\n"
        "from pygments.lexer import RegexLexer\n"
        "class EvilLexer(RegexLexer):\n"
        "    name = 'evil'\n    aliases = ['evil']\n    filenames = ['*.evil']\n    tokens = {'root': []}\n"
    ),
    "a.evil": "x\n",
    "b.go": "package b\n\nfunc f() int { return 1 }\n",
}


def test_python_m_in_a_repository_loads_no_plugin_from_it(make_tree: TreeFactory) -> None:
    root = make_tree(PLUGIN)
    for command in (["compare", "a.evil", "b.go"], ["scan", ".", "-q", "--no-cache"]):
        done = subprocess.run(
            [sys.executable, "-m", "minhashdup", *command], cwd=root, capture_output=True, text=True, check=False
        )
        assert done.returncode in (ExitCode.OK, ExitCode.USAGE) and "Traceback" not in done.stderr, done.stderr
        assert not (Path(root) / "RAN").exists(), command  # before: compare ran evil_mod.py


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_python_m_with_workers_imports_nothing_from_the_repository(make_tree: TreeFactory, engine: str) -> None:
    # The package's own imports under -m (a dataclasses.py), and the fork server with the resource
    # tracker, new interpreters run with -c that put their folder first on sys.path (a
    # multiprocessing.py there; the lexer plugin again, through pygments' index of lexers).
    files: dict[str, str] = dict(PLUGIN)
    for name in ("multiprocessing", "dataclasses", "pygments"):
        files[f"{name}.py"] = f"import pathlib\npathlib.Path('RAN-{name}').write_text('ran')\n"
    for i in range(40):  # enough files for two workers
        files[f"g{i}.go"] = f"package g\n\nfunc F{i}(a, b int) int {{\n\treturn a*{i} + b - {i}\n}}\n"
    root = make_tree(files)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "minhashdup",
            "scan",
            ".",
            "-q",
            "--no-cache",
            "-j",
            "2",
            "-f",
            "json",
            "--engine",
            engine,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == ExitCode.OK and "Traceback" not in done.stderr, done.stderr
    assert sorted(p.name for p in Path(root).glob("RAN*")) == []
    stats = json.loads(done.stdout)["stats"]
    assert stats["files_scanned"] == 45 and stats["skipped"]["no-lexer"] == 2  # a.evil: no plugin lexer


def test_python_m_imports_no_module_of_the_current_folder(make_tree: TreeFactory) -> None:
    # Without site (-S), nothing imports __future__ or the like at start-up, as in a bare venv:
    # the package's first line must not either (a future statement imports __future__).
    import site

    import minhashdup

    shadows = ("__future__", "dataclasses", "typing", "json", "pathlib", "enum")  # not what runpy imports
    files = {f"{name}.py": f"import pathlib\npathlib.Path('RAN-{name}').write_text('ran')\n" for name in shadows}
    files["a.go"] = "package a\n\nfunc F(a, b int) int {\n\treturn a*2 + b - 1\n}\n"
    root = make_tree(files)
    package_root = str(Path(minhashdup.__file__).resolve().parents[1])
    env = {"PYTHONPATH": os.pathsep.join([package_root, *site.getsitepackages()]), "PATH": os.environ["PATH"]}
    for command in (["--version"], ["scan", ".", "-q", "--no-cache", "-j", "1"]):
        done = subprocess.run(
            [sys.executable, "-S", "-m", "minhashdup", *command], cwd=root, env=env, capture_output=True, text=True
        )
        assert done.returncode == ExitCode.OK, done.stderr
    assert sorted(p.name for p in Path(root).glob("RAN*")) == []


def test_children_started_outside_the_tree_do_not_put_their_folder_on_sys_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As multiprocessing starts them: in this process's folder, with its environment.
    from minhashdup.engine.parallel import outside_the_tree

    monkeypatch.chdir(tmp_path)
    probe = [sys.executable, "-c", "import os, sys, json; print(json.dumps([os.path.abspath(p) for p in sys.path]))"]
    before = os.environ.get("PYTHONSAFEPATH")
    assert str(tmp_path) in json.loads(subprocess.run(probe, capture_output=True, text=True, check=True).stdout)
    with outside_the_tree():
        paths = json.loads(subprocess.run(probe, capture_output=True, text=True, check=True).stdout)
    assert str(tmp_path) not in paths
    assert os.environ.get("PYTHONSAFEPATH") == before and Path.cwd() == tmp_path
