"""Which Loci Similes links to Virgil one broad reranker recipe finds and the other does
not: ``broad`` against ``broad_distractors`` (`intertext train --distractors`), each as
cross-validated by ``intertext_false_links.py`` (the fold rerankers it leaves in its
workdir, seed 0: per grouped fold, trained without the fold's queries against the full
index, applied to the fold's queries on the index of Virgil). A link is found if one of
its lines is linked (probability >= the fold reranker's threshold among the top 10).

    python benchmarks/intertext_recipe_diff.py --workdir training/intertext/false-links \
        --output benchmarks/results/intertext_recipe_diff.json

Run benchmark-intertext-false-links first (it writes the fold rerankers).
"""

import argparse
import os
from pathlib import Path
from typing import Dict, List

import srsly
from intertext_false_links import gold_items, paths, with_reranker

from spacy_rhetoric.intertext.index import IntertextIndex
from spacy_rhetoric.intertext.link import link_segments
from spacy_rhetoric.intertext.rerank import index_reranker

DATA = Path(os.environ.get("SPACY_RHETORIC_DATA", "../shared/data"))
# recipe -> the file stem of its fold rerankers in the workdir
RECIPES = {"broad": "broad", "broad_distractors": "broad-distractors"}
K = 10


def best_probabilities(workdir: Path, stem: str, query_text, queries, fold_of) -> Dict:
    """Per query, {row: (probability, is a link)} of its top K on the Virgil index, with
    the reranker of the recipe (``stem``) for the query's test fold."""
    out: Dict[str, Dict[int, tuple]] = {}
    for fold in sorted(set(fold_of[q] for q in queries)):
        file = workdir / f"reranker-{stem}-fold{fold}.json"
        copy = with_reranker(workdir / "virgil-index", file, workdir / "recipe-diff-copy-index")
        index = IntertextIndex.from_disk(copy)
        test = [q for q in queries if fold_of[q] == fold]
        ranked = link_segments(index, [query_text[q] for q in test], index_reranker(index, copy), K)
        for q, rows in zip(test, ranked):
            out[q] = {index.row_of[r["source_id"]]: (r["probability"], r["link"]) for r in rows}
    return out


def main(args: argparse.Namespace) -> None:
    labels = paths(args.data)["labels"]
    query_text, items, fold_of = gold_items(args.workdir / "virgil-index", labels)
    queries = sorted(q for q in query_text if q in items)
    found = {
        recipe: best_probabilities(args.workdir, stem, query_text, queries, fold_of)
        for recipe, stem in RECIPES.items()
    }
    index = IntertextIndex.from_disk(args.workdir / "virgil-index")
    links: List[Dict] = []
    for q in queries:
        for rows in items[q]:
            row = {"query": q, "query_text": query_text[q], "fold": fold_of[q]}
            row["source_id"] = index.ids[min(rows)]
            row["source_text"] = index.texts[min(rows)]
            for recipe in RECIPES:
                hits = [found[recipe][q][r] for r in rows if r in found[recipe][q]]
                row[f"{recipe}_probability"] = max((p for p, _ in hits), default=None)
                row[f"{recipe}_found"] = any(link for _, link in hits)
            links.append(row)
    a, b = (f"{r}_found" for r in RECIPES)
    result = {
        "links": len(links),
        "found_by_both": sum(r[a] and r[b] for r in links),
        "only_broad": [r for r in links if r[a] and not r[b]],
        "only_broad_distractors": [r for r in links if r[b] and not r[a]],
        "found_by_neither": sum(not r[a] and not r[b] for r in links),
    }
    srsly.write_json(args.output, result)
    print(
        f"{result['links']} links: both {result['found_by_both']}, only broad "
        f"{len(result['only_broad'])}, only broad_distractors "
        f"{len(result['only_broad_distractors'])}, neither {result['found_by_neither']}"
    )
    for r in result["only_broad"]:
        print(f"  {r['broad_probability']:.2f} -> {r['broad_distractors_probability'] or 0:.2f} "
              f"{r['source_id']}: {r['query_text'][:70]}")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="The data mirror or assets/")
    parser.add_argument("--workdir", type=Path, default=Path("training/intertext/false-links"))
    parser.add_argument(
        "--output", type=Path, default=Path("benchmarks/results/intertext_recipe_diff.json")
    )
    main(parser.parse_args())
