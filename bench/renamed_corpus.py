"""The corpus of bench/renamed.py: real files, their copies renamed by third-party tools, distractors.

Built once into ``bench/.data/renamed/`` (git-ignored), never committed:

    tools/              the pinned tools of bench/renamed_tools/ (npm install, pip install --target)
    <lang>/orig/NAME    an original, a real project's file
    <lang>/copy/NAME    the same original through the renaming tool (same NAME: the true pair)
    <lang>/other/NAME   a distractor: another file of the same projects
    <lang>/manifest.json  what was picked, what was dropped and why

Python: modules of the standard library of the running interpreter, copied through python-minifier
with only ``rename_locals`` on. JavaScript: the CommonJS sources of eslint and webpack (npm,
pinned), copied through terser (mangle on, compress off, beautified output, original quotes and
numbers). Every copy is checked to parse (``ast.parse``; ``node --check``) and dropped if not.
"""

from __future__ import annotations

import ast
import collections
import json
import random
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from pygments.lexers import get_lexer_for_filename
from pygments.token import Name

BENCH = Path(__file__).resolve().parent
DATA = BENCH / ".data" / "renamed"
TOOLS = DATA / "tools"
TOOL_FILES = ("package.json", "requirements.txt", "mangle.js")
SEED = 15
LINES = (40, 600)
#: Real files that already share this much (verbatim) with another file of the pool are left out:
#: a project's own near-copies would count as false pairs though no tool made them.
POOL_THRESHOLD = 0.3
PY_SKIP = {"test", "tests", "idle_test", "site-packages", "encodings", "pydoc_data", "__phello__"}
JS_ROOTS = ("eslint/lib", "webpack/lib")
MINIFIER_OPTIONS = {  # rename_locals alone: every other transform that changes tokens is off
    "rename_locals": True,
    "rename_globals": False,
    "remove_annotations": False,
    "remove_pass": False,
    "remove_literal_statements": False,
    "combine_imports": False,
    "hoist_literals": False,
    "remove_object_base": False,
    "convert_posargs_to_args": False,
    "remove_asserts": False,
    "remove_debug": False,
    "remove_explicit_return_none": False,
    "remove_builtin_exception_brackets": False,
    "constant_folding": False,
    "remove_dead_branches": False,
    "preserve_shebang": True,
}


def install_tools() -> None:
    """Install the pinned tools into ``TOOLS`` once (again when a pin in bench/renamed_tools changes)."""
    stamp = "".join((BENCH / "renamed_tools" / name).read_text() for name in TOOL_FILES)
    if (TOOLS / "stamp").is_file() and (TOOLS / "stamp").read_text() == stamp:
        return
    TOOLS.mkdir(parents=True, exist_ok=True)
    for name in TOOL_FILES:
        shutil.copy(BENCH / "renamed_tools" / name, TOOLS / name)
    npm = ["npm", "install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"]
    subprocess.run(npm, cwd=TOOLS, check=True)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--upgrade", "--target", str(TOOLS / "py")]
    subprocess.run([*pip, "-r", str(TOOLS / "requirements.txt")], check=True)
    (TOOLS / "stamp").write_text(stamp)


def flat_name(rel: Path) -> str:
    """``email/mime/text.py`` -> ``email__mime__text.py``: one folder per role, the name tells the source."""
    return "__".join(rel.parts)


def _line_count_ok(path: Path) -> bool:
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.count("\n")
    # A real source file, not a bundle: a minified line would be thousands of characters.
    return LINES[0] <= lines <= LINES[1] and max(map(len, text.splitlines()), default=0) < 400


def python_pool() -> dict[str, Path]:
    """The standard library's modules of 40-600 lines, tests, codecs and data tables left out."""
    root = Path(sysconfig.get_paths()["stdlib"])
    pool = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if not PY_SKIP.intersection(rel.parts) and not rel.parts[0].startswith("config-") and _line_count_ok(path):
            pool[flat_name(rel)] = path
    return pool


def javascript_pool() -> dict[str, Path]:
    """eslint's and webpack's own CommonJS sources of 40-600 lines."""
    modules = TOOLS / "node_modules"
    pool = {}
    for top in JS_ROOTS:
        for path in sorted((modules / top).rglob("*.js")):
            if _line_count_ok(path):
                pool[flat_name(path.relative_to(modules))] = path
    return pool


def near_copies(paths: list[Path]) -> set[Path]:
    """Files of ``paths`` a default scan skips, or that share ``POOL_THRESHOLD`` verbatim with another."""
    command = [sys.executable, "-m", "minhashdup", "scan", *map(str, paths), "-f", "json", "--exact", "-v"]
    command += ["-t", str(POOL_THRESHOLD), "--no-config", "--no-gitignore", "--no-cache"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"minhashdup failed on the pool: {done.stderr.strip()}")
    out = {Path(pair[key]) for pair in json.loads(done.stdout)["pairs"] for key in ("a", "b")}
    skipped = re.findall(r"^(.+): [a-z-]+ \(", done.stderr, re.M)
    return {path.resolve() for path in out | {Path(p) for p in skipped}}


def minify_python(jobs: list[tuple[Path, Path]]) -> dict[str, str]:
    """Write each copy through python-minifier; returns {original: why it was dropped}."""
    sys.path.insert(0, str(TOOLS / "py"))
    import python_minifier

    drops = {}
    for source, target in jobs:
        text = source.read_text(encoding="utf-8")
        try:
            copy = python_minifier.minify(text, filename=str(source), **MINIFIER_OPTIONS)
        except Exception as error:  # the minifier's own failure: a drop, reported
            drops[str(source)] = f"python-minifier: {type(error).__name__}: {error}"[:160]
            continue
        try:
            ast.parse(copy)
        except SyntaxError as error:
            drops[str(source)] = f"copy does not parse: {error.msg} (line {error.lineno})"
            continue
        target.write_text(copy, encoding="utf-8")
    return drops


def mangle_javascript(jobs: list[tuple[Path, Path]]) -> dict[str, str]:
    """Write each copy through terser (one node process), then ``node --check`` it."""
    listing = DATA / "mangle-jobs.json"
    listing.write_text(json.dumps([[str(a), str(b)] for a, b in jobs]))
    done = subprocess.run(["node", str(TOOLS / "mangle.js"), str(listing)], capture_output=True, text=True, check=True)
    drops = {source: f"terser: {why}" for source, why in json.loads(done.stdout)["errors"].items()}
    for source, target in jobs:
        if str(source) in drops:
            continue
        check = subprocess.run(["node", "--check", str(target)], capture_output=True, text=True, check=False)
        if check.returncode:
            drops[str(source)] = "copy does not parse: " + check.stderr.strip().splitlines()[-1][:120]
            target.unlink()
    return drops


def names(path: Path) -> collections.Counter[str]:
    """The identifiers of a file (pygments ``Name`` tokens), counted."""
    lexer = get_lexer_for_filename(path.name)
    return collections.Counter(
        text for ttype, text in lexer.get_tokens(path.read_text(encoding="utf-8")) if ttype in Name
    )


def renamed_nothing(jobs: list[tuple[Path, Path]], drops: dict[str, str]) -> None:
    """Drop the copies whose identifiers are those of their original: no local name to rename."""
    for source, target in jobs:
        if str(source) not in drops and names(source) == names(target):
            drops[str(source)] = "nothing renamed (no local names)"
            target.unlink()


def make_copies(lang: str, pool: dict[str, Path], names: list[str], wanted: int) -> tuple[list[str], dict, int]:
    """Copy ``names`` in order until ``wanted`` copies are kept; returns (kept, drops, names tried)."""
    make = minify_python if lang == "python" else mangle_javascript
    kept: list[str] = []
    drops: dict[str, str] = {}
    tried = 0
    while len(kept) < wanted and tried < len(names):
        batch = names[tried : tried + wanted - len(kept)]
        tried += len(batch)
        jobs = [(pool[name], DATA / lang / "copy" / name) for name in batch]
        new_drops = make(jobs)
        renamed_nothing(jobs, new_drops)
        drops |= new_drops
        kept += [name for name in batch if str(pool[name]) not in new_drops]
    return kept, drops, tried


def build(lang: str, originals: int, rebuild: bool = False) -> dict:
    """Build ``DATA/lang`` (or reuse it) and return its manifest."""
    folder = DATA / lang
    manifest_path = folder / "manifest.json"
    if manifest_path.is_file() and not rebuild:
        manifest = json.loads(manifest_path.read_text())
        if manifest["asked"] == originals:
            return manifest
    pool = python_pool() if lang == "python" else javascript_pool()
    excluded = near_copies(list(pool.values()))
    names = [name for name, path in pool.items() if path.resolve() not in excluded]
    random.Random(SEED).shuffle(names)
    shutil.rmtree(folder, ignore_errors=True)
    for role in ("orig", "copy", "other"):
        (folder / role).mkdir(parents=True)
    kept, drops, tried = make_copies(lang, pool, names, originals)
    others = names[tried : tried + len(kept)]
    if len(kept) < originals or len(others) < len(kept):
        found = f"{len(kept)} copies and {len(others)} others"
        sys.exit(f"{lang}: the pool of {len(names)} files gives {found} (lower --originals)")
    for role, chosen in (("orig", kept), ("other", others)):
        for name in chosen:
            shutil.copy(pool[name], folder / role / name)
    manifest = {"asked": originals, "tried": tried, "pool": len(pool), "pool_near_copies": len(pool) - len(names)}
    manifest |= {"kept": kept, "others": others, "drops": drops}
    manifest_path.write_text(json.dumps(manifest, indent=1))
    return manifest
