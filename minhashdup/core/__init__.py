"""Pure algorithms over numpy arrays: no I/O, no processes.

Where to look: ``hashing`` (the one 64-bit mixing function), ``shingles`` (k-token shingles
as sorted hashes), ``signature`` (MinHash signatures), ``bands`` (LSH banding and the S-curve
maths), ``runs`` (pairs inside runs of equal keys), ``exact`` (exact Jaccard, the lossless
prefix-filter search), ``cluster`` (pairs into families), ``pairs`` (a corpus of sets to
identical groups, listed pairs and clusters: the stages of a scan after lexing),
``substrings`` (shared runs of two sequences), ``sketch`` (``MinHash`` and ``LSHIndex`` for
any sets, the library's own).

Nothing here imports another layer of the package (tests/test_shape.py checks).
"""
