"""Does the MinHash family behave as the S-curve assumes, on pairs that are independent?

Makes ``--pairs`` pairs of random sets with Jaccard exactly ``--jaccard`` (no two pairs share
an element), signs them with the scan's family (``mix64(x ^ seed_i)``) and counts, per seed,
the share of agreeing minima (expected: J), of agreeing bands (J^rows) and of pairs sharing
at least one band (P(J) = 1 - (1 - J^rows)^bands). On a real tree the pairs are not
independent, which is why one seed's recall there strays further (see bench/go_tree.py).

    python bench/hash_family.py --pairs 20000 --jaccard 0.45 --seeds 1 2 3
"""

from __future__ import annotations

import argparse

import numpy as np

from minhashdup.core.bands import candidate_probability
from minhashdup.core.signature import hash_seeds, signatures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--jaccard", type=float, default=0.45)
    parser.add_argument("--union", type=int, default=100, help="|A u B| of each pair")
    parser.add_argument("--bands", type=int, default=12)
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    common = round(args.jaccard * args.union)
    own_a = (args.union - common) // 2
    own_b = args.union - common - own_a
    jaccard = common / args.union
    rng = np.random.default_rng(7)
    # Distinct random 64-bit values, so that no element is shared by accident.
    values = np.unique(rng.integers(0, 2**63, size=int(args.pairs * (args.union + common) * 1.01), dtype=np.uint64))
    values = rng.permutation(values)[: args.pairs * (args.union + common)].reshape(args.pairs, -1)
    shared, a_own, b_own = np.split(values[:, : args.union], [common, common + own_a], axis=1)
    sets = np.concatenate([np.hstack([shared, a_own]), np.hstack([shared, b_own])], axis=1).ravel()
    size_a, size_b = common + own_a, common + own_b
    offsets = np.r_[0, np.cumsum(np.tile([size_a, size_b], args.pairs))]
    expected = float(candidate_probability(jaccard, args.bands, args.rows))
    print(
        f"{args.pairs} independent pairs, J = {jaccard:.3f}, {args.bands} x {args.rows}: "
        f"expected row agreement {jaccard:.4f}, band {jaccard**args.rows:.4f}, candidate {expected:.4f} "
        f"(binomial sd {np.sqrt(expected * (1 - expected) / args.pairs):.4f})"
    )
    for seed in args.seeds:
        sig = signatures(sets, offsets, hash_seeds(seed, args.bands * args.rows))
        same = (sig[0::2] == sig[1::2]).reshape(args.pairs, args.bands, args.rows)
        bands = same.all(axis=2)
        found = bands.any(axis=1).mean()
        print(f"  seed {seed}: rows {same.mean():.4f}, bands {bands.mean():.4f}, candidates {found:.4f}")


if __name__ == "__main__":
    main()
