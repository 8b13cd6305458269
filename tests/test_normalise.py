"""Renamed clones: --ignore-identifiers and --ignore-literals, the verbatim Jaccard beside the
normalised one, and --max-df. Checked against an independent reference built here from
pygments' own tokens, and by properties (Hypothesis): a consistent renaming of every name
leaves the normalised shingles as they were; without the flags nothing changes."""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygments.lexers import get_lexer_for_filename
from pygments.token import Keyword, Literal, Name, Number, Operator, Punctuation, String

from minhashdup import Config, compare, scan
from minhashdup.core.pairs import drop_common
from minhashdup.errors import ExitCode
from minhashdup.source.extract import extract_file
from minhashdup.source.normalise import IDENTIFIER, LITERAL, NEWLINE_STATEMENTS, Normalisation, normalised

from .conftest import TreeFactory, go_file, near_copy, oracle_jaccard, oracle_tokens, render_go, run

KEPT = (Name.Builtin, Name.Exception, Name.Function.Magic, Name.Variable.Magic, Name.Tag, Name.Entity)
SEMICOLON_LAYOUT = {"Python", "Go", "JavaScript"}


def oracle_normalised(path: Path, identifiers: bool, literals: bool, k: int = 5) -> set[tuple[str, ...]]:
    """The normalised shingles as tuples, from their definition: names become ``$n``, numbered
    by first occurrence inside each shingle; a run of string tokens, or a number, becomes
    ``L``; a ``;`` is dropped in a language where a line break ends a statement."""
    tokens: list[tuple[str, str]] = []  # (text, name or "")
    lexer = get_lexer_for_filename(path.name, stripnl=False).name
    for ttype, value in oracle_tokens(path):
        if value == ";" and ttype in Punctuation and lexer in SEMICOLON_LAYOUT:
            continue
        if literals and ttype in Literal:
            if ttype in String and tokens and tokens[-1] == ("L", "string"):
                continue
            tokens.append(("L", "string" if ttype in String else ""))
        elif identifiers and _replaced(ttype):
            tokens.append(("$", value))
        else:
            tokens.append((value, ""))
    out = set()
    for i in range(len(tokens) - k + 1):
        seen: dict[str, int] = {}
        shingle = []
        for text, name in tokens[i : i + k]:
            shingle.append(f"${seen.setdefault(name, len(seen) + 1)}" if text == "$" else text)
        out.add(tuple(shingle))
    return out


def _oracle_jaccard(a: Path, b: Path, identifiers: bool = True, literals: bool = False) -> float:
    sa, sb = oracle_normalised(a, identifiers, literals), oracle_normalised(b, identifiers, literals)
    return len(sa & sb) / len(sa | sb)


def _replaced(ttype: object) -> bool:
    """A name that becomes a placeholder: not a builtin (but ``self``, ``cls``) nor a magic name."""
    return ttype in Name and (ttype in Name.Builtin.Pseudo or not any(ttype in kept for kept in KEPT))


def renamed(path: Path, mapping: dict[str, str]) -> str:
    """The file's text with every replaceable name renamed by ``mapping`` (consistently)."""
    text = path.read_text()
    lexer = get_lexer_for_filename(path.name, text, stripnl=False, ensurenl=False)
    return "".join(mapping.get(value, value) if _replaced(ttype) else value for ttype, value in lexer.get_tokens(text))


def _names(path: Path) -> list[str]:
    found = {v for t, v in oracle_tokens(path) if _replaced(t)}
    return sorted(found)


PYTHON = """import os


def total(values, scale=2):
    result = 0
    for value in values:
        if value > 10:
            result = result + value * scale
        else:
            result = result - value
    message = "total: %d" % result
    print(message, len(values))
    return result


class Counter:
    def __init__(self, start):
        self.count = start
        self.path = os.path.join("a", "b")

    def step(self, by):
        self.count = self.count + by
        return self.count
"""


def _norm_set(path: Path, identifiers: bool = True, literals: bool = False, engine: str = "fast") -> list[int]:
    item = extract_file(0, str(path), 5, engine=engine, norm=Normalisation(identifiers, literals))
    assert item.skip is None, item.detail
    return item.shingles.tolist()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), suffixes=st.lists(st.integers(0, 10**6), min_size=200, max_size=200, unique=True))
def test_a_consistent_renaming_leaves_the_normalised_shingles_unchanged(
    tmp_path: Path, seed: int, suffixes: list[int]
) -> None:
    for name, text in (("a.go", render_go(go_file(random.Random(seed), 4))), ("a.py", PYTHON)):
        original = tmp_path / name
        original.write_text(text)
        names = _names(original)
        mapping = {n: f"zq{s}" for n, s in zip(names, suffixes, strict=False)}
        copy = tmp_path / f"copy_{name}"
        copy.write_text(renamed(original, mapping))
        assert copy.read_text() != text
        for literals in (False, True):
            assert _norm_set(copy, literals=literals) == _norm_set(original, literals=literals)
        assert oracle_jaccard(original, copy) < 1.0  # verbatim, the copy differs


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), replace=st.integers(0, 4))
def test_normalised_jaccard_is_that_of_the_definition(tmp_path: Path, seed: int, replace: int) -> None:
    rng = random.Random(seed)
    blocks = go_file(rng, 6)
    (tmp_path / "a.go").write_text(render_go(blocks))
    (tmp_path / "b.go").write_text(render_go(near_copy(blocks, rng, min(replace, 6))))
    for identifiers, literals in ((True, False), (False, True), (True, True)):
        found = compare(tmp_path / "a.go", tmp_path / "b.go", ignore_identifiers=identifiers, ignore_literals=literals)
        expected = _oracle_jaccard(tmp_path / "a.go", tmp_path / "b.go", identifiers, literals)
        assert found.jaccard == pytest.approx(expected)
        assert found.jaccard_verbatim == pytest.approx(oracle_jaccard(tmp_path / "a.go", tmp_path / "b.go"))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000))
def test_without_the_flags_nothing_changes(make_tree: TreeFactory, seed: int) -> None:
    rng = random.Random(seed)
    blocks = go_file(rng, 8)
    root = make_tree({"a.go": render_go(blocks), "b.go": render_go(near_copy(blocks, rng, 2))}, root=f"t{seed}")
    result = scan([str(root)], Config(cache=False, threshold=0.1, exact=True))
    [pair] = result.pairs
    assert pair.jaccard == pytest.approx(oracle_jaccard(root / "a.go", root / "b.go"))  # verbatim tokens
    assert pair.jaccard_verbatim is None and "jaccard_verbatim" not in pair.to_dict()
    assert not {"ignore_identifiers", "ignore_literals", "max_df"} & set(result.params)
    assert "shingles_dropped" not in result.stats.to_dict()


def test_names_are_told_apart_by_where_they_repeat(tmp_path: Path) -> None:
    same = ["a = a + b", "x = x + y"]  # the same pattern, other names
    other = "x = y + x"  # another pattern
    for name, text in (("s1.py", same[0]), ("s2.py", same[1]), ("o.py", other)):
        (tmp_path / name).write_text((text + "\n") * 3)
    assert _norm_set(tmp_path / "s1.py") == _norm_set(tmp_path / "s2.py")
    assert _norm_set(tmp_path / "s1.py") != _norm_set(tmp_path / "o.py")


def test_a_semicolon_that_replaces_a_line_break_is_layout(tmp_path: Path) -> None:
    (tmp_path / "lines.py").write_text("a = f(1)\nb = g(a)\nc = a + b\nprint(c)\n")
    (tmp_path / "joined.py").write_text("a = f(1); b = g(a); c = a + b\nprint(c)\n")
    assert _norm_set(tmp_path / "lines.py") == _norm_set(tmp_path / "joined.py")
    assert oracle_jaccard(tmp_path / "lines.py", tmp_path / "joined.py") < 1.0


def test_ignore_literals_makes_strings_and_numbers_one_placeholder(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text('x = call("abc", 1, 2.5)\ny = "a\\nb" + x\nprint(x, y)\n')
    (tmp_path / "b.py").write_text("x = call('other text', 42, 7.0)\ny = \"z\" + x\nprint(x, y)\n")
    assert _norm_set(tmp_path / "a.py", identifiers=False, literals=True) == _norm_set(
        tmp_path / "b.py", identifiers=False, literals=True
    )
    assert _norm_set(tmp_path / "a.py", identifiers=True) != _norm_set(tmp_path / "b.py", identifiers=True)


def test_both_lexer_engines_normalise_alike(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(PYTHON)
    (tmp_path / "a.go").write_text(render_go(go_file(random.Random(3), 5)))
    for path in (tmp_path / "a.py", tmp_path / "a.go"):
        for identifiers, literals in ((True, False), (False, True), (True, True)):
            fast = _norm_set(path, identifiers, literals, engine="fast")
            assert fast == _norm_set(path, identifiers, literals, engine="pygments")


@pytest.fixture
def renamed_tree(make_tree: TreeFactory, tmp_path: Path) -> Path:
    source = tmp_path / "orig.py"
    source.write_text(PYTHON)
    mapping = {n: f"n{i}" for i, n in enumerate(_names(source))}
    return make_tree({"orig.py": PYTHON, "copy.py": renamed(source, mapping), "other.py": "x = 1\n" * 5})


def _scan_json(*args: str) -> dict:  # type: ignore[type-arg]
    code, out, err = run("scan", *args, "-f", "json", "-q", "--min-shingles", "5")
    assert code == ExitCode.OK, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_a_renamed_copy_is_found_with_both_similarities(renamed_tree: Path) -> None:
    plain = _scan_json(str(renamed_tree))
    assert plain["pairs"] == []
    doc = _scan_json(str(renamed_tree), "--ignore-identifiers")
    [pair] = doc["pairs"]
    assert pair["jaccard"] == 1.0 and pair["jaccard_verbatim"] < 0.5
    assert pair["jaccard_verbatim"] == pytest.approx(
        oracle_jaccard(renamed_tree / "copy.py", renamed_tree / "orig.py"), abs=1e-6
    )
    assert doc["params"]["ignore_identifiers"] is True and "ignore_literals" not in doc["params"]
    code, out, _ = run("scan", str(renamed_tree), "--ignore-identifiers", "-f", "csv", "-q", "--min-shingles", "5")
    assert code == ExitCode.OK and out.splitlines()[0].endswith(",jaccard_verbatim")
    code, out, _ = run("scan", str(renamed_tree), "--ignore-identifiers", "-q", "--min-shingles", "5")
    assert "jaccard / verbatim" in out and "1.000 / 0." in out and "identifiers as placeholders" in out


def test_the_cache_keeps_normalised_and_verbatim_shingles_apart(renamed_tree: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    first = _scan_json(str(renamed_tree), "--cache-dir", cache)
    normalised = _scan_json(str(renamed_tree), "--cache-dir", cache, "--ignore-identifiers", "--no-gitignore")
    again = _scan_json(str(renamed_tree), "--cache-dir", cache, "--exact")
    assert first["pairs"] == again["pairs"] == [] and len(normalised["pairs"]) == 1
    assert normalised["stats"]["cache"]["lexed"] == 3  # not the verbatim entries of the first scan


def test_max_df_leaves_boilerplate_out(make_tree: TreeFactory) -> None:
    rng = random.Random(4)
    shared = go_file(rng, 6)  # every file carries it: boilerplate
    files = {f"f{i}.go": render_go([*shared, *go_file(rng, 2)]) for i in range(8)}
    root = make_tree(files)
    plain = _scan_json(str(root))
    assert plain["stats"]["verified_pairs"] == 28  # all alike through the boilerplate
    doc = _scan_json(str(root), "--max-df", "0.5")
    assert doc["stats"]["verified_pairs"] == 0
    assert doc["stats"]["shingles_dropped"] > 100 and doc["params"]["max_df"] == 0.5
    for bad in ("0", "1.5", "nan"):
        code, _, err = run("scan", str(root), "--max-df", bad)
        assert code == ExitCode.USAGE and "max_df" in err.replace("-", "_") and "Traceback" not in err


def test_compare_and_evaluate_take_the_flags(renamed_tree: Path) -> None:
    code, out, err = run(
        "compare", str(renamed_tree / "orig.py"), str(renamed_tree / "copy.py"), "--ignore-identifiers", "-f", "json"
    )
    assert code == ExitCode.OK, err
    doc = json.loads(out)
    assert doc["jaccard"] == 1.0 and doc["jaccard_verbatim"] < 0.5 and doc["params"]["ignore_identifiers"] is True
    code, out, err = run(
        "evaluate",
        str(renamed_tree),
        "--ignore-identifiers",
        "--min-shingles",
        "5",
        "-f",
        "json",
        "-q",
        "--repeats",
        "2",
    )
    assert code == ExitCode.OK, err
    assert json.loads(out)["params"]["ignore_identifiers"] is True


def test_both_lexer_engines_type_c_library_types_alike(tmp_path: Path) -> None:
    # pygments' C lexer retypes size_t, int32_t ... from Name to Keyword.Type in its own loop:
    # the fast engine must too, or --ignore-identifiers makes them names there only.
    head = "#include <stdint.h>\n"
    (tmp_path / "a.c").write_text(head + "size_t f(int32_t x, FILE *fp) {\n  uint8_t y = x;\n  return y;\n}\n")
    (tmp_path / "b.c").write_text(head + "long f(long x, char *fp) {\n  long y = x;\n  return y;\n}\n")
    fast = _norm_set(tmp_path / "a.c", engine="fast")
    assert fast == _norm_set(tmp_path / "a.c", engine="pygments")
    assert fast != _norm_set(tmp_path / "b.c", engine="fast")  # int32_t keeps its text, as long does


def test_drop_common_leaves_out_exactly_the_shingles_of_too_many_compared_sets() -> None:
    rng = np.random.default_rng(5)
    sets = [np.unique(rng.integers(0, 60, int(rng.integers(0, 40))).astype(np.uint64)) for _ in range(30)]
    sets.append(np.array([2**64 - 1], dtype=np.uint64))  # above every common shingle
    among = list(range(0, 30, 2))  # the others are not compared: they count for nothing
    for max_df in (1e-9, 0.2, 0.5, 1.0):
        counts = Counter(int(v) for i in among for v in sets[i])
        common = {v for v, n in counts.items() if n > max_df * len(among)}
        kept, dropped = drop_common(sets, among, max_df)
        assert dropped == len(common)
        assert [k.tolist() for k in kept] == [[int(v) for v in s if int(v) not in common] for s in sets]


def test_the_html_report_carries_the_verbatim_jaccard_only_with_a_flag(renamed_tree: Path) -> None:
    import re

    rows = []
    for flags in ([], ["--ignore-identifiers"]):
        code, out, err = run("scan", str(renamed_tree), *flags, "-f", "html", "-q", "--min-shingles", "5", "-t", "0.1")
        assert code == ExitCode.OK, err
        page = re.search(r'<script type="application/json" id="data">(.*?)</script>', out, re.S)
        assert page is not None
        rows.append(json.loads(page[1])["pairs"])
    assert all(len(row) == 9 for row in rows[0])  # a default report: its data as before
    [row] = [r for r in rows[1] if r[2] == 1.0]
    assert len(row) == 10 and row[9] < 0.5  # the renamed copy: normalised 1.0, verbatim low


def test_the_verbatim_jaccard_needs_no_second_lex_with_the_cache(
    renamed_tree: Path, tmp_path: Path, lexed: list[str]
) -> None:
    config = Config(ignore_identifiers=True, min_shingles=5, jobs=1, cache_dir=str(tmp_path / "cache"))
    [pair] = scan([str(renamed_tree)], config).pairs
    assert lexed == []  # the normalised lex kept the verbatim shingles: token_texts never ran
    assert pair.jaccard_verbatim == pytest.approx(oracle_jaccard(renamed_tree / "copy.py", renamed_tree / "orig.py"))
    plain = scan(
        [str(renamed_tree)], dataclasses.replace(config, ignore_identifiers=False, threshold=0.001, exact=True)
    )
    assert lexed == [] and plain.stats.cache["lexed"] == 0  # a default scan finds them in the cache
    [p] = [p for p in plain.pairs if {Path(p.a).name, Path(p.b).name} == {"copy.py", "orig.py"}]
    assert p.jaccard == pytest.approx(pair.jaccard_verbatim)


_TYPED = [
    ("x", Name),
    ("self", Name.Builtin.Pseudo),
    ("len", Name.Builtin),
    ("f", Name.Function),
    ("if", Keyword),
    ('"', String),
    ("ab", String),
    ("\\n", String.Escape),
    ("12", Number),
    (";", Punctuation),
    (";", Operator),  # a ';' the lexer does not call punctuation is kept
    ("(", Punctuation),
]


def _by_the_rules(tokens: list[tuple[str, Any]], newline_statements: bool, norm: Normalisation) -> list[tuple]:
    # The rules as the docs state them, one token at a time: a ';' of punctuation is layout in
    # a newline-statement language; a run of string tokens is one literal, a number another;
    # a name (a pseudo-builtin such as self too, not a builtin such as len) becomes the
    # placeholder and keeps its own text as its name. (The token pool has no other kept kind.)
    out: list[tuple] = []
    previous_string = False
    for line, (text, ttype) in enumerate(tokens, 1):
        if newline_statements and text == ";" and ttype in Punctuation:
            continue
        is_string = ttype in String
        if norm.literals and (is_string or (ttype in Literal and not is_string)):
            if not (is_string and previous_string):
                out.append((LITERAL, "", line))
            previous_string = is_string
            continue
        previous_string = False
        builtin = ttype in Name.Builtin and ttype not in Name.Builtin.Pseudo  # len, print: kept as written
        named = norm.identifiers and ttype in Name and not builtin
        out.append((IDENTIFIER if named else text, text if named else "", line))
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_TYPED), max_size=40),
    st.sampled_from(["Go", "Java"]),
    st.sampled_from([Normalisation(identifiers=True), Normalisation(literals=True), Normalisation(True, True)]),
)
def test_normalised_follows_its_rules_token_by_token(
    tokens: list[tuple[str, Any]], lexer: str, norm: Normalisation
) -> None:
    texts, types = [t for t, _ in tokens], [k for _, k in tokens]
    got = normalised(texts, types, lexer, norm, list(range(1, len(tokens) + 1)))
    want = _by_the_rules(tokens, lexer in NEWLINE_STATEMENTS, norm)
    assert got.texts == [t for t, _, _ in want] and got.lines == [n for _, _, n in want]
    assert got.names == ([name for _, name, _ in want] if norm.identifiers else None)
    with pytest.raises(ValueError):  # a type for each token, or no answer
        normalised([*texts, "x"], types, lexer, norm)
