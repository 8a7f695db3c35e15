"""The zero-training chiasmus scorer (``spacy-rhetoric.ChiasmusRules.v1``) on the German
and English chiasmus protocols, and how many annotated candidates the strict and the
relaxed suggesters propose.

German (GerDraCor, 450 annotated candidates, the dataset's POS and lemmas): AP over all
candidates, and per fold of the same stratified 5-fold splits (fold seeds 0-4) that
``chiasmus evaluate de`` uses, so the mean +- sd stands beside the trained scorers'.
English (Dubremetz & Nivre): AP on the test split, with the tagger's POS and lemmas
(``--tagger``) and on a blank pipeline (forms only); the F1-optimal threshold of the
raw score on the training split, which sets the rules' default bias.

    python benchmarks/chiasmus_rules.py --tagger en_rhetoric_base \
        --output benchmarks/results/chiasmus_rules.json
"""

import argparse
import os
import time
from pathlib import Path

import numpy
import spacy
import srsly

from spacy_rhetoric.chiasmus.crossval import (
    first_annotated,
    rank_rules,
    stratified_folds,
    suggested,
    suggested_aps,
)
from spacy_rhetoric.chiasmus.eval_english import (
    ENGLISH_DUPLICATES,
    ENGLISH_POSITIVE,
    english_examples,
)
from spacy_rhetoric.chiasmus.eval_german import (
    GERMAN_FP,
    GERMAN_FP_REMOVED,
    GERMAN_FULL,
    german_examples,
)
from spacy_rhetoric.chiasmus.metrics import average_precision
from spacy_rhetoric.chiasmus.rules import DEFAULT_BIAS
from spacy_rhetoric.logistic import f1_threshold

DATA = Path(os.environ.get("SPACY_RHETORIC_DATA", "../shared/data"))


def summary(values):
    return {"mean": float(numpy.mean(values)), "sd": float(numpy.std(values, ddof=1))}


def german(seeds, n_folds=5):
    examples = german_examples(DATA / "german-chiasmus", spacy.blank("de"))
    labels = [label for _, label in first_annotated(examples)]
    scores = rank_rules(examples)
    masks = suggested(examples)
    result = {}
    for name, positive, removed in (
        ("full", GERMAN_FULL, ()),
        ("fp_removed", GERMAN_FP_REMOVED, GERMAN_FP),
    ):
        keep = numpy.asarray([label not in removed for label in labels])
        truth = numpy.asarray([label in positive for label in labels])[keep]
        kept_scores = scores[keep]
        kept_masks = {key: mask[keep] for key, mask in masks.items()}
        folds, found = [], {key: [] for key in masks}
        for seed in seeds:
            assignment = stratified_folds(list(truth), n_folds, seed)
            for fold in range(n_folds):
                rows = assignment == fold
                folds.append(average_precision(kept_scores[rows], truth[rows]))
                fold_masks = {key: mask[rows] for key, mask in kept_masks.items()}
                for key, ap in suggested_aps(kept_scores[rows], truth[rows], fold_masks).items():
                    found[key].append(ap)
        result[name] = {
            "n_candidates": int(keep.sum()),
            "n_positive": int(truth.sum()),
            "ap_all": average_precision(kept_scores, truth),
            "ap_folds": summary(folds),
            "n_positive_suggested": {k: int((m & truth).sum()) for k, m in kept_masks.items()},
            "ap_folds_suggested_only": {k: summary(v) for k, v in found.items()},
        }
    return result


def english(tagger):
    nlp = spacy.load(tagger) if tagger else spacy.blank("en")
    data = english_examples(DATA / "chiasmus-dubremetz-nivre", nlp)
    result = {"tagger": str(tagger) if tagger else None}
    for name, removed in (("all_negative", ()), ("duplicates_removed", ENGLISH_DUPLICATES)):
        split = {}
        for part in ("train", "test"):
            kept = [
                eg
                for eg, (_, lab) in zip(data[part], first_annotated(data[part]))
                if lab not in removed
            ]
            truth = numpy.asarray([lab in ENGLISH_POSITIVE for _, lab in first_annotated(kept)])
            split[part] = (kept, truth, rank_rules(kept))
        test, truth, scores = split["test"]
        masks = suggested(test)
        result[name] = {
            "n_test": len(test),
            "n_test_positive": int(truth.sum()),
            "ap_test": average_precision(scores, truth),
            "f1_threshold_train": f1_threshold(split["train"][2], split["train"][1]),
            "n_positive_suggested": {k: int((m & truth).sum()) for k, m in masks.items()},
            "ap_test_suggested_only": suggested_aps(scores, truth, masks),
        }
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tagger", help="English pipeline with POS and lemmas (path or package)")
    parser.add_argument("--seeds", default="0,1,2,3,4", help="German fold seeds")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    seeds = [int(s) for s in args.seeds.split(",")]
    results = {
        "default_bias": DEFAULT_BIAS,
        "german": german(seeds),
        "english_blank": english(None),
    }
    if args.tagger:
        results["english_tagger"] = english(args.tagger)
    results["seconds"] = time.perf_counter() - start
    print(srsly.json_dumps(results, indent=2))
    if args.output:
        srsly.write_json(args.output, results)


if __name__ == "__main__":
    main()
