"""Speed and memory of exact dense top-k search over a large memory-mapped index.

Writes N random unit vectors (float16, as the index stores them) to a temporary .npy,
memory-maps it and times ``topk_inner`` for a batch of queries, checking the result
against a brute-force argsort on a sample. Usage:

    python benchmarks/intertext_search.py --n 1000000 --queries 64 \\
        --output benchmarks/results/intertext_search.json
"""

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from spacy_rhetoric.intertext.dense import topk_inner


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=64)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--chunk", type=int, default=65536)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "emb.npy"
        matrix = np.lib.format.open_memmap(
            path, mode="w+", dtype=np.float16, shape=(args.n, args.dim)
        )
        for start in range(0, args.n, 100_000):
            block = rng.normal(size=(min(100_000, args.n - start), args.dim)).astype(np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            matrix[start : start + len(block)] = block
        matrix.flush()
        del matrix
        mapped = np.load(path, mmap_mode="r")
        queries = rng.normal(size=(args.queries, args.dim)).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        start = time.perf_counter()
        hits = topk_inner(queries, mapped, args.k, chunk=args.chunk)
        seconds = time.perf_counter() - start
        sample = np.asarray(mapped[:200_000], dtype=np.float32)
        exact = np.argsort(-(queries[:2] @ sample.T), axis=1)[:, : args.k]
        sub = topk_inner(queries[:2], sample, args.k)
        agree = all(set(a.tolist()) == set(b[0].tolist()) for a, b in zip(exact, sub))
    result = {
        "n": args.n,
        "dim": args.dim,
        "queries": args.queries,
        "k": args.k,
        "chunk": args.chunk,
        "seconds": seconds,
        "queries_per_s": args.queries / seconds,
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "matches_brute_force_on_200k": agree,
        "returned": len(hits),
    }
    print(json.dumps(result, indent=2))
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
