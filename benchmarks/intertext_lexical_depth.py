"""How deep in the lexical channel's ranking the Loci Similes links to the whole Latin
pool lie: recall@k of the lexical channel alone for k up to 3,000, over every located
gold link (a link counts at the best rank of its source rows). It bounds what a reranker
over a deeper candidate pool can reach (`intertext evaluate --depth`).

    python benchmarks/intertext_lexical_depth.py --index training/intertext/full-index \
        --output benchmarks/results/intertext_lexical_depth.json
"""

import argparse
import json
from pathlib import Path

import numpy as np

from spacy_rhetoric.intertext.benchmark import build_benchmark, gold_items
from spacy_rhetoric.intertext.index import IntertextIndex

KS = (1, 10, 100, 200, 500, 1000, 3000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("assets"))
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    bench, corpus = build_benchmark(
        args.data / "loci-similes" / "labels.csv",
        args.data / "latin-corpora" / "tesserae" / "texts" / "la",
        "full",
    )
    gold, _, _ = gold_items(bench, corpus)
    index = IntertextIndex.from_disk(args.index, mmap=True)
    if index.ids != bench.source_ids:
        raise SystemExit(f"{args.index} does not index the full pool; build it first")
    text_of = dict(zip(bench.query_ids, bench.query_texts))
    queries = [q for q in bench.query_ids if gold.get(q)]
    missing = len(index) + 1
    ranks = []
    for q, (rows, _) in zip(queries, index.lexical.search([text_of[q] for q in queries], max(KS))):
        position = {int(r): i for i, r in enumerate(rows)}
        ranks.extend(min(position.get(r, missing) for r in item) for item in gold[q])
    ranks = np.asarray(ranks)
    result = {
        "index": str(args.index),
        "links": len(ranks),
        "not_in_top_3000": int((ranks >= max(KS)).sum()),
        "lexical_recall": {f"recall@{k}": float((ranks < k).mean()) for k in KS},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result["lexical_recall"]))


if __name__ == "__main__":
    main()
