"""The two rerankers trained against all ten source authors (``broad``, and
``broad_distractors``: `intertext train --distractors`) cross-validated as
``intertext_false_links.py`` does (grouped folds; per fold, trained without the fold's
queries against the full index and applied to the fold's queries on the index of Virgil
and on the five poets'), with several seeds of the inner folds that choose the threshold
(the only random choice in training: fusion and logistic regression are deterministic).
Reports, per recipe and index, recall, precision and precision and F1 over all queries:
pooled over the folds per seed, their mean and sd over the seeds, and the spread over the
five test folds. Seed 0 reproduces the false-link benchmark's ``<recipe>_reranker_cv``.

    python benchmarks/intertext_reranker_seeds.py --data assets \
        --workdir training/intertext/false-links --broad-index training/intertext/full-index \
        --output benchmarks/results/intertext_reranker_seeds.json

The workdir's indexes of Virgil and of the five poets are built if missing (as the
false-link benchmark builds them, about 17 min on one thread).
"""

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Dict, List

import srsly
from intertext_false_links import (
    INDEXES,
    build_index,
    exported_reranker,
    fold_labels,
    gold_items,
    link_counts,
    paths,
    summary,
    with_reranker,
)

DATA = Path(os.environ.get("SPACY_RHETORIC_DATA", "../shared/data"))
RECIPES = {"broad": False, "broad_distractors": True}
KEYS = ("recall", "precision", "precision_all_queries", "f1_all_queries")


def mean_sd(values: List[float]) -> Dict[str, float]:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": statistics.fmean(values), "sd": sd, "n": len(values)}


def main(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    files = paths(args.data)
    workdir = args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    for name, authors in INDEXES.items():
        build_index(workdir / f"{name}-index", files["tesserae"], authors)
    train_csv = fold_labels(files["labels"], workdir)
    gold = {name: gold_items(workdir / f"{name}-index", files["labels"]) for name in INDEXES}
    seeds = [int(s) for s in args.seeds.split(",")]
    runs: Dict = {}
    for recipe, distractors in RECIPES.items():
        for seed in seeds:
            rerankers = {
                fold: exported_reranker(
                    args.broad_index,
                    csv_file,
                    workdir,
                    workdir / f"reranker-{recipe}-seed{seed}-fold{fold}.json",
                    distractors,
                    seed,
                )
                for fold, csv_file in train_csv.items()
            }
            for name in INDEXES:
                query_text, items, fold_of = gold[name]
                queries = sorted(query_text)
                per_fold = []
                for fold, file in sorted(rerankers.items()):
                    copy = with_reranker(
                        workdir / f"{name}-index", file, workdir / f"seeds-{recipe}-copy-index"
                    )
                    test = [q for q in queries if fold_of[q] == fold]
                    per_fold.append(link_counts(copy, test, query_text, items, None, True))
                runs.setdefault(recipe, {}).setdefault(name, {})[str(seed)] = {
                    "pooled": summary(per_fold),
                    "folds": [summary([c]) for c in per_fold],
                }
                pooled = runs[recipe][name][str(seed)]["pooled"]
                print(recipe, "seed", seed, name,
                      {k: round(pooled[k], 3) for k in KEYS}, flush=True)  # fmt: skip
    result: Dict = {"seeds": seeds, "runs": runs, "over_seeds": {}, "over_folds_seed0": {}}
    for recipe, by_index in runs.items():
        for name, by_seed in by_index.items():
            result["over_seeds"].setdefault(recipe, {})[name] = {
                key: mean_sd([by_seed[str(s)]["pooled"][key] for s in seeds]) for key in KEYS
            }
            first = by_seed[str(seeds[0])]["folds"]
            result["over_folds_seed0"].setdefault(recipe, {})[name] = {
                key: mean_sd([f[key] for f in first]) for key in KEYS
            }
    result["seconds"] = time.perf_counter() - started
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(args.output, result)
    for recipe, by_index in result["over_seeds"].items():
        for name, row in by_index.items():
            text = ", ".join(f"{k} {v['mean']:.3f} +- {v['sd']:.3f}" for k, v in row.items())
            print(f"{recipe} {name} over seeds {seeds}: {text}")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="The data mirror or assets/")
    parser.add_argument("--workdir", type=Path, default=Path("training/intertext/false-links"))
    parser.add_argument("--broad-index", type=Path, default=Path("training/intertext/full-index"))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument(
        "--output", type=Path, default=Path("benchmarks/results/intertext_reranker_seeds.json")
    )
    main(parser.parse_args())
