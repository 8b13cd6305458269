"""Blind or consistent names (issue 15): which way of hiding names finds more renamed copies
with fewer false pairs, on bench/renamed.py's corpus, run by hand:

    python bench/renamed.py --runs 1             # builds bench/.data/renamed once
    python bench/renamed_modes.py                # both languages; --lang python, --no-scan
    python bench/renamed_modes.py --no-corpus --go-src /path/go/src

Both modes make every name one placeholder before shingling (:mod:`minhashdup.source.normalise`).
Blind: nothing else, ``x = x + y`` and ``x = y + z`` give the same shingle. Consistent (what
``--ignore-identifiers`` does): inside each shingle names are told apart by where they repeat
(:func:`minhashdup.core.shingles.name_links`), ``x = x + y`` reads ``$1 = $1 + $2``.

Each file's shingle set is made here by the library's own functions, as a scan makes it
(:func:`minhashdup.source.extract.extract_file`: fast lexer engine, 5-token shingles; files under
20 distinct shingles left out), once with the name links (checked equal to ``extract_file``'s set)
and once without. Then the exact Jaccard of every pair of files (a sparse product, no LSH): the
recall of the true pairs (an original and its own copy) and the number of false pairs (any other)
at J >= 0.5, the default threshold, and around it. Then, for the consistent mode, the real scan
(``minhashdup scan`` with the flags, LSH and all), which is what bench/renamed.py prints. With
``--go-src``, also how many pairs each mode gives on a Go tree (more pairs there are mostly not
copies: see bench/go_renamed.py), by ``scan --exact`` over each mode's sets.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from go_tree import exact_all_pairs
from renamed import DATA, LANGS, THRESHOLD, false_kinds, quartiles, run_minhashdup, score

from minhashdup import Config, collect, find_pairs
from minhashdup.core.shingles import name_links, shingle_set, token_hashes
from minhashdup.result import Stats
from minhashdup.source.extract import extract_file
from minhashdup.source.normalise import VERBATIM, Normalisation, normalised
from minhashdup.source.tokens import decode, lexer_for, token_texts_with_types

SHINGLE = 5
MIN_SHINGLES = 20
SWEEP = (0.3, 0.4, 0.5, 0.6, 0.7)
NORMS = {
    "verbatim": VERBATIM,
    "identifiers": Normalisation(identifiers=True),
    "identifiers + literals": Normalisation(identifiers=True, literals=True),
}


def shingles(path: Path, norm: Normalisation, consistent: bool) -> np.ndarray:
    """The file's shingle set as ``extract_file`` makes it; with names linked or not (``consistent``)."""
    text, _ = decode(path.read_bytes())
    lexer = lexer_for(path.name, text)
    texts, names, _ = normalised(*token_texts_with_types(lexer, text, "fast"), lexer.name, norm)
    links = name_links(names) if consistent and names is not None else None
    return shingle_set(token_hashes(texts), SHINGLE, links)


def corpus_sets(folder: Path, norm: Normalisation, consistent: bool) -> tuple[list[str], list[np.ndarray]]:
    """Names (``orig/x.py``) and shingle sets of the files a scan compares (>= MIN_SHINGLES)."""
    names, sets = [], []
    for path in sorted(folder.glob("*/*")):
        if path.parent.name not in ("orig", "copy", "other"):
            continue
        s = shingles(path, norm, consistent)
        if consistent:  # the scan's own extraction must give the same set
            scanned = extract_file(0, str(path), SHINGLE, norm=norm).shingles
            if not np.array_equal(s, scanned):
                sys.exit(f"{path}: the mirrored extraction differs from extract_file's")
        if len(s) >= MIN_SHINGLES:
            names.append(f"{path.parent.name}/{path.name}")
            sets.append(s)
    return names, sets


def mode_row(label: str, truth: set[frozenset[str]], found: dict[frozenset[str], float]) -> None:
    """One line: recall and false pairs at the threshold, then the sweep around it."""
    at = {t: {p for p, j in found.items() if j >= t} for t in SWEEP}
    recall, false = score(truth, at[THRESHOLD])
    sweep = "  ".join(f"{t}: {score(truth, at[t])[0]:5.1%}/{len(score(truth, at[t])[1])}" for t in SWEEP)
    print(f"    {label:<34} recall {recall:6.1%}  false pairs {len(false):4}   J>=t recall/false  {sweep}")
    if false:
        top = sorted(false, key=lambda p: -found[p])[:4]
        print(f"        false pairs: {false_kinds(false)}; the top: " + ", ".join(_pair(p, found) for p in top))


def _pair(pair: frozenset[str], found: dict[frozenset[str], float]) -> str:
    return " ~ ".join(sorted(pair)) + f" {found[pair]:.3f}"


def exact_modes(lang: str, truth: set[frozenset[str]]) -> None:
    """Blind against consistent, by the exact Jaccard of all pairs, for each normalisation."""
    folder = DATA / lang
    for norm_label, norm in NORMS.items():
        print(f"  {norm_label}:")
        at: dict[bool, set[frozenset[str]]] = {}
        for consistent in (False, True) if norm.identifiers else (True,):
            names, sets = corpus_sets(folder, norm, consistent)
            pairs = exact_all_pairs(sets, min(SWEEP))
            found = {frozenset((names[i], names[j])): jac for (i, j), jac in pairs.items()}
            true_j = [found.get(p, 0.0) for p in truth]
            mode = "exact J, " + ("consistent" if consistent else "blind") if norm.identifiers else "exact J"
            size = np.median([len(s) for s in sets])
            print(f"    {mode}: {len(sets)} files compared, median {size:.0f} shingles a file")
            print(f"      J of true pairs (0 when under {min(SWEEP)}): {quartiles(true_j)}")
            mode_row(mode, truth, found)
            at[consistent] = {p for p in truth if found.get(p, 0.0) >= THRESHOLD}
        if len(at) == 2:
            only = f"blind {len(at[False] - at[True])}, consistent {len(at[True] - at[False])}"
            print(f"    true pairs found by one mode only: {only}")


def scan_modes(lang: str, truth: set[frozenset[str]]) -> None:
    """The consistent mode through the real scan (LSH, exact check), as bench/renamed.py runs it."""
    for flags in (["--ignore-identifiers"], ["--ignore-identifiers", "--ignore-literals"]):
        seconds, pairs = run_minhashdup(DATA / lang, flags, runs=1)
        found = {p: float(v["jaccard"]) for p, v in pairs.items()}
        recall, false = score(truth, set(found))
        label = "scan " + " ".join(flags)
        print(f"    {label:<48} recall {recall:6.1%}  false pairs {len(false):4}  {seconds:5.2f} s")


def tree_modes(root: Path) -> None:
    """Blind against consistent on a real Go tree: pairs at J >= the threshold (``scan --exact``,
    no LSH miss), generated files skipped; the more pairs, the more the mode lets through."""
    for norm_label, norm in list(NORMS.items())[1:]:
        config = Config(
            include=("*.go",),
            exclude=("*_test.go", "testdata"),
            exact=True,
            cache=False,
            ignore_identifiers=norm.identifiers,
            ignore_literals=norm.literals,
        )
        consistent = collect([str(root)], config)
        found = {}
        for mode, sets in (
            ("blind", [shingles(Path(path), norm, consistent=False) for path in consistent.paths]),
            ("consistent", consistent.sets),
        ):
            corpus = dataclasses.replace(consistent, sets=sets, signatures=[], family=None, stats=Stats())
            found[mode] = {frozenset((p.a, p.b)) for p in find_pairs(corpus, config).pairs}
        both = len(found["blind"] & found["consistent"])
        counts = ", ".join(f"{mode} {len(pairs)}" for mode, pairs in found.items())
        print(f"  {norm_label}: pairs at J >= {THRESHOLD}: {counts} ({both} in both)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=LANGS, action="append", help="a language (repeatable; default both)")
    parser.add_argument("--no-corpus", action="store_true", help="leave out the renamed corpus (--go-src alone)")
    parser.add_argument("--no-scan", action="store_true", help="leave out the real scans")
    parser.add_argument("--go-src", type=Path, help="also count both modes' pairs on this Go tree (src)")
    args = parser.parse_args()
    print(f"shingles of {SHINGLE} tokens, files under {MIN_SHINGLES} left out, threshold {THRESHOLD}")
    for lang in [] if args.no_corpus else args.lang or LANGS:
        folder = DATA / lang
        if not (folder / "manifest.json").is_file():
            sys.exit(f"{folder}: no corpus; build it with python bench/renamed.py first")
        manifest = json.loads((folder / "manifest.json").read_text())
        truth = {frozenset((f"orig/{n}", f"copy/{n}")) for n in manifest["kept"]}
        print(f"\n{lang}: {len(truth)} originals and their copies, {len(manifest['others'])} distractors")
        exact_modes(lang, truth)
        if not args.no_scan:
            scan_modes(lang, truth)
    if args.go_src:
        print(f"\nthe Go tree {args.go_src}, *.go without tests and testdata, generated files skipped:")
        tree_modes(args.go_src.resolve())


if __name__ == "__main__":
    main()
