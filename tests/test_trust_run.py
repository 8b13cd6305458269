"""Nothing of the scanned tree is run: not even through ``python -m minhashdup`` started inside it,
whose current folder Python would otherwise put on ``sys.path`` (issue 11)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
