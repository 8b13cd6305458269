"""Shared fixtures: a tmp_path tree factory and generators of source code with planted similarity."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import settings
from pygments.lexers import get_lexer_for_filename
from pygments.token import Comment, Text, Whitespace

# CI machines are shared: no per-example deadline (properties, not timings, are under test).
settings.register_profile("minhashdup", deadline=None)
settings.load_profile("minhashdup")

TreeFactory = Callable[[dict[str, "str | bytes"]], Path]

#: git's identity and no user or system config, for the repositories the tests make.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """``minhashdup ARGS`` in this process (click's runner): exit code, stdout, stderr."""
    from minhashdup.cli import cli  # imported late: the module-level import would slow collection

    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "count",
    "total",
    "index",
    "value",
    "buffer",
    "reader",
    "writer",
    "node",
    "edge",
    "left",
    "right",
    "parent",
    "child",
    "queue",
    "stack",
    "item",
    "key",
    "name",
    "size",
    "limit",
    "offset",
    "cursor",
    "token",
    "state",
    "result",
    "error",
]


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own cache folder: none writes to the user's cache."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder / "minhashdup"


@pytest.fixture
def lexed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the lexer is called on (in this process: use jobs=1)."""
    from minhashdup.source import extract as extract_module

    calls: list[str] = []
    real = extract_module.token_texts

    def counting(lexer: Any, text: str, *args: Any) -> Any:
        calls.append(text)
        return real(lexer, text, *args)

    monkeypatch.setattr(extract_module, "token_texts", counting)
    return calls


@pytest.fixture
def make_tree(tmp_path: Path) -> TreeFactory:
    """Write ``{relative path: text or bytes}`` under a fresh folder and return it."""

    def make(files: dict[str, str | bytes], root: str = "tree") -> Path:
        base = tmp_path / root
        base.mkdir(parents=True, exist_ok=True)
        for rel, content in files.items():
            path = base / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return base

    return make


def go_function(rng: random.Random) -> list[str]:
    """One random Go function, a list of lines."""
    name = rng.choice(_WORDS).title() + rng.choice(_WORDS).title() + str(rng.randrange(1000))
    a, b = rng.sample(_WORDS, 2)
    lines = [f"func {name}({a} int, {b} []int) int {{"]
    for _ in range(rng.randrange(4, 9)):
        c = rng.choice(_WORDS)
        op = rng.choice(["+", "-", "*", "^"])
        lines.append(
            rng.choice(
                [
                    f"\t{a} = {a} {op} {rng.randrange(100)}",
                    f"\tif {a} > {rng.randrange(50)} {{\n\t\t{a} -= len({b})\n\t}}",
                    f"\tfor _, {c} := range {b} {{\n\t\t{a} += {c} {op} {rng.randrange(9)}\n\t}}",
                    f"\t{b} = append({b}, {a} {op} {rng.randrange(7)})",
                ]
            )
        )
    lines.append(f"\treturn {a}\n}}")
    return lines


def go_file(rng: random.Random, functions: int = 12) -> list[str]:
    """A random Go file as a list of function blocks (each a string)."""
    return ["\n".join(go_function(rng)) for _ in range(functions)]


def render_go(blocks: list[str], package: str = "gen") -> str:
    return f"package {package}\n\n" + "\n\n".join(blocks) + "\n"


def near_copy(blocks: list[str], rng: random.Random, replace: int) -> list[str]:
    """A copy of ``blocks`` with ``replace`` of them swapped for new random functions."""
    out = list(blocks)
    for i in rng.sample(range(len(out)), replace):
        out[i] = "\n".join(go_function(rng))
    return out


def oracle_tokens(path: Path) -> list[tuple[Any, str]]:
    """The significant tokens (type, text), straight from pygments: an independent reference."""
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    lexer = get_lexer_for_filename(path.name, text, stripnl=False)
    kept = []
    for ttype, value in lexer.get_tokens(text):
        if ttype in Comment and ttype not in Comment.Preproc and ttype not in Comment.PreprocFile:
            continue
        if ttype in Whitespace or ((ttype in Text or ttype in Comment) and not value.strip()):
            continue
        kept.append((ttype, value))
    return kept


def oracle_shingles(path: Path, k: int = 5) -> set[tuple[str, ...]]:
    """Shingles as tuples of token texts, straight from pygments: an independent reference."""
    kept = [value for _, value in oracle_tokens(path)]
    return {tuple(kept[i : i + k]) for i in range(len(kept) - k + 1)}


def oracle_jaccard(a: Path, b: Path, k: int = 5) -> float:
    sa, sb = oracle_shingles(a, k), oracle_shingles(b, k)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def result_doc(result: Any) -> dict[str, Any]:
    """A result as JSON data without what differs between equal runs (timings, cache counters)."""
    doc: dict[str, Any] = result.to_dict()
    for key in ("seconds", "cpu_seconds", "cache"):
        doc["stats"].pop(key)
    return doc
