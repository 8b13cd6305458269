"""Renamed copies (issue 15): recall, false pairs and time of minhashdup and jscpd on copies whose
local names were changed by third-party tools, run by hand:

    python bench/renamed.py                  # builds bench/.data/renamed once (npm, pip), then runs
    python bench/renamed.py --lang python --originals 150 --runs 3 --rebuild

The corpus (bench/renamed_corpus.py): per language, real files (``orig/``), each one's copy through
a renaming tool (``copy/``, same file name: the true pair) and as many other real files of the same
projects (``other/``). Python: standard library modules through python-minifier (rename_locals
only); JavaScript: eslint's and webpack's sources through terser (mangle, no compress, beautified).
Every copy parses. A true pair is an original and its own copy; every other reported pair is false.

On each language's folder, side by side: ``minhashdup scan DIR -f json`` (defaults, and with
``--ignore-identifiers``, ``--ignore-literals`` and both when ``scan --help`` lists them), each run
with a fresh ``--cache-dir``; and jscpd 5.3.2 ``--ignore-identifiers --reporters json`` (its
``node_modules/.bin/jscpd``, what npx runs). jscpd reports cloned fragments: a file pair counts as
found when any fragment joins the two files, and "found at 50%" when its fragments cover at least
half the lines of the smaller file. Each tool runs ``--runs`` times; the median wall time is shown.
Also shown: the exact Jaccard of every true pair as ``minhashdup.compare`` sees it today, and which
token kinds the tools changed (pygments tokens, comments and whitespace left out, aligned by difflib).
"""

from __future__ import annotations

import argparse
import collections
import difflib
import inspect
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pygments.lexers import get_lexer_for_filename
from pygments.token import Comment, Name, Text
from renamed_corpus import DATA, TOOLS, build, install_tools

import minhashdup

LANGS = ("python", "javascript")
THRESHOLD = 0.5  # minhashdup's default, stated so the report says what it measured
TARGETS = {"python": 0.8, "javascript": 0.9}
MAX_FALSE = 20


def timed(command: list[str], cwd: Path) -> tuple[float, str]:
    """Run ``command``; returns (wall seconds, stdout). Exit 0 or 1 (clones found) are success."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(command[:4])} ... failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return seconds, done.stdout


def minhashdup_variants() -> list[list[str]]:
    """The flag sets to compare: defaults, and the normalisations this CLI offers."""
    help_text = subprocess.run(
        [sys.executable, "-m", "minhashdup", "scan", "--help"], capture_output=True, text=True, check=True
    ).stdout
    flags = [flag for flag in ("--ignore-identifiers", "--ignore-literals") if flag in help_text]
    variants = [[], *([flag] for flag in flags)]
    return [*variants, flags] if len(flags) == 2 else variants


def run_minhashdup(folder: Path, flags: list[str], runs: int) -> tuple[float, dict[frozenset[str], dict]]:
    """Median seconds of ``runs`` cold scans (fresh cache each) and the pairs found, by file pair."""
    times, out = [], ""
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="renamed-cache-") as cache:
            command = [sys.executable, "-m", "minhashdup", "scan", ".", "-f", "json", "-t", str(THRESHOLD)]
            command += ["--no-config", "--no-gitignore", "-q", "--cache-dir", cache, *flags]
            seconds, out = timed(command, folder)
        times.append(seconds)
    pairs = {frozenset((_rel(p["a"]), _rel(p["b"]))): p for p in json.loads(out)["pairs"]}
    return statistics.median(times), pairs


def _rel(path: str) -> str:
    return path.removeprefix("./")


def run_jscpd(folder: Path, runs: int) -> tuple[float, dict[frozenset[str], list]]:
    """Median seconds of ``runs`` jscpd runs and, per file pair, its clones' line ranges."""
    times, report = [], {}
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="renamed-jscpd-") as out:
            command = [str(TOOLS / "node_modules" / ".bin" / "jscpd"), str(folder), "--ignore-identifiers"]
            command += ["--reporters", "json", "--output", out, "--silent", "--no-gitignore", "--absolute"]
            seconds, _ = timed(command, TOOLS)
            report = json.loads((Path(out) / "jscpd-report.json").read_text())
        times.append(seconds)
    pairs: dict[frozenset[str], list] = collections.defaultdict(list)
    for clone in report["duplicates"]:
        ends = [
            (str(Path(f["name"]).relative_to(folder)), f["start"], f["end"])
            for f in (clone["firstFile"], clone["secondFile"])
        ]
        if ends[0][0] != ends[1][0]:
            pairs[frozenset(end[0] for end in ends)].append(ends)
    return statistics.median(times), pairs


def covers_half(folder: Path, clones: list) -> bool:
    """Whether the clones of one file pair cover at least half the lines of the smaller file."""
    lines = {name: (folder / name).read_text(encoding="utf-8").count("\n") + 1 for name, _, _ in clones[0]}
    smaller = min(lines, key=lambda name: lines[name])
    covered = {
        line for ends in clones for name, start, end in ends if name == smaller for line in range(start, end + 1)
    }
    return len(covered) >= lines[smaller] / 2


def quartiles(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    q1, q2, q3 = statistics.quantiles(values, n=4)
    return f"min {min(values):.3f} q1 {q1:.3f} median {q2:.3f} q3 {q3:.3f} max {max(values):.3f}"


def false_kinds(pairs: set[frozenset[str]]) -> str:
    """Which roles the false pairs join (orig-other, copy-copy, ...)."""
    kinds = collections.Counter("-".join(sorted(name.split("/")[0] for name in pair)) for pair in pairs)
    return ", ".join(f"{kind} {count}" for kind, count in kinds.most_common()) or "none"


def score(truth: set[frozenset[str]], found: set[frozenset[str]]) -> tuple[float, set[frozenset[str]]]:
    return len(truth & found) / len(truth), found - truth


def report_minhashdup(folder: Path, truth: set[frozenset[str]], flags: list[str], runs: int) -> None:
    seconds, pairs = run_minhashdup(folder, flags, runs)
    recall, false = score(truth, set(pairs))
    label = "minhashdup " + (" ".join(flags) or "(defaults)")
    print(f"  {label:<52} recall {recall:6.1%}  false pairs {len(false):4}  {seconds:6.2f} s  ({false_kinds(false)})")
    for key in ("jaccard", "jaccard_verbatim"):
        values = {
            kind: [pairs[p][key] for p in group if key in pairs[p]]
            for kind, group in (("true", truth & set(pairs)), ("false", false))
        }
        if any(values.values()):
            print(f"      {key} of true pairs found: {quartiles(values['true'])}")
            print(f"      {key} of false pairs:      {quartiles(values['false'])}")


def report_jscpd(folder: Path, truth: set[frozenset[str]], runs: int) -> None:
    seconds, pairs = run_jscpd(folder, runs)
    recall, false = score(truth, set(pairs))
    half = {pair for pair, clones in pairs.items() if covers_half(folder, clones)}
    recall_half, false_half = score(truth, half)
    label = "jscpd 5.3.2 --ignore-identifiers (any clone)"
    print(f"  {label:<52} recall {recall:6.1%}  false pairs {len(false):4}  {seconds:6.2f} s  ({false_kinds(false)})")
    label = "jscpd 5.3.2 --ignore-identifiers (clones >= 50%)"
    print(f"  {label:<52} recall {recall_half:6.1%}  false pairs {len(false_half):4}")


def exact_jaccards(folder: Path, names: list[str]) -> None:
    """The exact Jaccard of each original and its copy, as ``minhashdup.compare`` gives it."""
    parameters = inspect.signature(minhashdup.compare).parameters
    offered = [name for name in ("ignore_identifiers", "ignore_literals") if name in parameters]
    modes = [{}, *({name: True} for name in offered)] + ([dict.fromkeys(offered, True)] if len(offered) == 2 else [])
    for mode in modes:
        values = [minhashdup.compare(folder / "orig" / n, folder / "copy" / n, **mode).jaccard for n in names]
        found = sum(value >= THRESHOLD for value in values) / len(values)
        label = ", ".join(mode) or "verbatim"
        print(f"  exact J of a copy ({label}): {quartiles(values)}; at or above {THRESHOLD}: {found:.1%}")


def _tokens(path: Path) -> list[tuple[str, str]]:
    """(kind, text) of each token pygments gives, comments and whitespace left out."""
    lexer = get_lexer_for_filename(path.name)
    tokens = []
    for ttype, text in lexer.get_tokens(path.read_text(encoding="utf-8")):
        if ttype in Comment or ttype in Text or not text.strip():
            continue
        kind = "Name" if ttype in Name else ".".join(str(ttype).split(".")[1:3])
        tokens.append((kind, text))
    return tokens


def _align(a: list[tuple[str, str]], b: list[tuple[str, str]], counts: dict[str, collections.Counter]) -> None:
    """Add to ``counts`` the tokens of ``a`` whose text changed in ``b`` (same kind), dropped and added.

    Names are aligned by kind alone (any name matches any name), other tokens by kind and text.
    """
    keys_a, keys_b = ([(kind, "" if kind == "Name" else text) for kind, text in seq] for seq in (a, b))
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False).get_opcodes():
        old, new = a[i1:i2], b[j1:j2]
        if op == "equal" or (op == "replace" and [k for k, _ in old] == [k for k, _ in new]):
            counts["changed"].update(x[0] for x, y in zip(old, new, strict=True) if x[1] != y[1])
            continue
        counts["dropped"].update(kind for kind, _ in old)
        counts["added"].update(kind for kind, _ in new)
        counts["texts"].update(
            [f"-{text}" for _, text in old if len(text) <= 3] + [f"+{text}" for _, text in new if len(text) <= 3]
        )


def token_changes(folder: Path, names: list[str]) -> None:
    """Which token kinds the renaming tool changed: same kind, other text; dropped; added."""
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for name in names:
        a, b = _tokens(folder / "orig" / name), _tokens(folder / "copy" / name)
        counts["total"].update(kind for kind, _ in a)
        _align(a, b, counts)
    print("  token kinds the tool changed (share of the originals' tokens of that kind):")
    for kind, total in counts["total"].most_common(8):
        shares = "  ".join(f"{what} {counts[what][kind] / total:6.1%}" for what in ("changed", "dropped", "added"))
        print(f"      {kind:<22} {total:7}  {shares}")
    common = counts["texts"].most_common(10)
    print("      most dropped (-) and added (+) short tokens: " + ", ".join(f"{t!r} {c}" for t, c in common))


def report_language(lang: str, args: argparse.Namespace, variants: list[list[str]]) -> None:
    manifest = build(lang, args.originals, args.rebuild)
    folder, kept = DATA / lang, manifest["kept"]
    truth = {frozenset((f"orig/{n}", f"copy/{n}")) for n in kept}
    print(f"\n{lang}: {len(kept)} originals and their copies, {len(manifest['others'])} distractors")
    print(f"  pool {manifest['pool']} files, {manifest['pool_near_copies']} left out (skipped or near copies)")
    reasons = collections.Counter(why.split(":")[0] for why in manifest["drops"].values())
    print(f"  copies dropped: {len(manifest['drops'])} of {manifest['tried']} made ({dict(reasons)})")
    for source, why in manifest["drops"].items():
        print(f"      {Path(source).name}: {why}")
    exact_jaccards(folder, kept)
    token_changes(folder, kept)
    for flags in variants:
        report_minhashdup(folder, truth, flags, args.runs)
    report_jscpd(folder, truth, args.runs)
    print(f"  targets: recall >= {TARGETS[lang]:.0%}, false pairs <= {MAX_FALSE}, beating jscpd")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=LANGS, action="append", help="a language (repeatable; default both)")
    parser.add_argument("--originals", type=int, default=160, help="originals to copy per language (default 160)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each tool, the median time is shown")
    parser.add_argument("--rebuild", action="store_true", help="build the corpus again")
    args = parser.parse_args()
    install_tools()
    variants = minhashdup_variants()
    python = sys.version.split()[0]
    print(f"minhashdup {minhashdup.__version__}, Python {python}, threshold {THRESHOLD}, {args.runs} runs of each tool")
    pins = json.loads((TOOLS / "package.json").read_text())["dependencies"]
    pins |= dict(line.split("==") for line in (TOOLS / "requirements.txt").read_text().split() if "==" in line)
    print("tools: " + ", ".join(f"{name} {version}" for name, version in sorted(pins.items())))
    for lang in args.lang or LANGS:
        report_language(lang, args, variants)


if __name__ == "__main__":
    main()
