"""A real race against the cache (issue 11, item 1): 300 of 3,000 generated Go files are
rewritten again and again while a cached scan runs, then restored; the cached rescan and the
replayed result must equal a scan without the cache.

    python bench/cache_race.py [WORKDIR]      (default: a temporary folder)

Before the fix the cached rescan reported other pairs than --no-cache (1,486 against 1,500 in
one run) and the result cache replayed them; the tests make the same race deterministic.
"""

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

work = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="minhashdup-race-")
root = os.path.join(work, "tree")
cache = os.path.join(work, "cache")
shutil.rmtree(root, ignore_errors=True)
shutil.rmtree(cache, ignore_errors=True)
rng = random.Random(7)
words = [f"v{i}" for i in range(400)]


def body(seed):
    r = random.Random(seed)
    return "package p\n" + "".join(
        f"func f{j}() int {{ {r.choice(words)} := {r.randint(0, 9)}; return {r.choice(words)} + {j} }}\n"
        for j in range(60)
    )


orig = {}
for i in range(3000):
    p = f"{root}/d{i % 30}/f{i}.go"
    os.makedirs(os.path.dirname(p), exist_ok=True)
    text = body(i // 2)  # pairs of identical-ish families
    if i % 2:
        text = text.replace("return", "return 1 +", 3)
    orig[p] = text
    Path(p).write_text(text)
victims = sorted(orig)[::10]


def scan(*extra):
    out = subprocess.run(
        [sys.executable, "-m", "minhashdup", "scan", root, "-f", "json", "-q", "--cache-dir", cache, *extra],
        capture_output=True,
        text=True,
    )
    d = json.loads(out.stdout)
    return {(p["a"], p["b"]): p["jaccard"] for p in d["pairs"]}, d["stats"]["cache"], out.stderr


stop = False


def churn():
    k = 0
    while not stop:
        for p in victims:
            Path(p).write_text(body(10_000 + k))
            k += 1
        for p in victims:
            Path(p).write_text(orig[p])


t = threading.Thread(target=churn)
t.start()
pairs1, c1, err1 = scan()
stop = True
t.join()
for p in victims:
    Path(p).write_text(orig[p])
cached, c2, _ = scan()
fresh, _, _ = scan("--no-cache")
again, c3, _ = scan()
print("during:", len(pairs1), c1, [line for line in err1.splitlines() if "changed" in line][:2])
print("after restore, cached:", len(cached), c2, "no-cache:", len(fresh), "equal:", cached == fresh)
print("third (result cache):", len(again), c3, "equal:", again == fresh)
