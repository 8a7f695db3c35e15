"""Dubremetz & Nivre's rule weights for English, fitted on their training split.

The rules (``spacy-rhetoric.ChiasmusRules.v1``) keep the hand-set weights of Dubremetz &
Nivre (2015). Here the weights of their features (``FREE``: punctuation, stop words, the
segments' sizes and overlap, conjunction and negation, and the stop words tagged as
content words) are fitted by an L2 logistic regression on the annotated candidates of
the Dubremetz & Nivre TRAINING split (True positive, all else negative; POS and lemmas
from ``--tagger``), its C chosen by a 5-fold stratified CV on that split (fold seed 0).
The penalties the annotated antimetaboles hardly vary in (a pair that does not repeat
its lemma, A and B alike, paragraph breaks, stem repetitions) keep their rule weights.
The rules' AP on the same folds is the comparison; the test split is only measured.
The English bias is set afterwards on running text (``chiasmus calibrate en``).

    python benchmarks/chiasmus_en_fitted_weights.py --tagger en_rhetoric_base \\
        --output benchmarks/results/chiasmus_en_fitted_weights.json
"""

import time

import numpy
from chiasmus_en_stop_weights import annotated_parts, arguments, score, write

from spacy_rhetoric.chiasmus.crossval import stratified_folds
from spacy_rhetoric.chiasmus.metrics import average_precision
from spacy_rhetoric.chiasmus.rules import RULE_WEIGHTS
from spacy_rhetoric.logistic import LogisticRegression

FREE = (
    "punct_outer",
    "comma_outer",
    "punct_central",
    "stop_a",
    "stop_b",
    "repeat_a_inside",
    "repeat_b_inside",
    "size_difference",
    "central_size",
    "identical_outer",
    "shared_outer",
    "shared_outer_relative",
    "shared_bigrams_outer",
    "has_conjunction",
    "has_negation",
    "stop_content_a",
    "stop_content_b",
)
FIXED = tuple(name for name in RULE_WEIGHTS if name not in FREE)
GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
N_FOLDS = 5


def fitted_weights(values, truth, C):
    """The rule weights with FREE fitted (folded to raw features; FIXED kept)."""
    X = numpy.stack([values[name] for name in FREE], axis=1)
    model = LogisticRegression(C=C).fit(X, truth)
    linear = model.linear_weights()[:-1]
    return {**RULE_WEIGHTS, **{name: float(w) for name, w in zip(FREE, linear)}}


def subset(values, rows):
    return {name: v[rows] for name, v in values.items()}


def main():
    args = arguments(__doc__)
    start = time.perf_counter()
    parts = annotated_parts(args.tagger)
    values, truth = parts["train"]
    folds = stratified_folds(list(truth), N_FOLDS, 0)
    cv = {"rules": []}
    for fold in range(N_FOLDS):
        test_rows, train_rows = folds == fold, folds != fold
        held = subset(values, test_rows)
        cv["rules"].append(average_precision(score(held, RULE_WEIGHTS), truth[test_rows]))
        for C in GRID:
            weights = fitted_weights(subset(values, train_rows), truth[train_rows], C)
            ap = average_precision(score(held, weights), truth[test_rows])
            cv.setdefault(str(C), []).append(ap)
    means = {key: float(numpy.mean(aps)) for key, aps in cv.items()}
    best_C = max(GRID, key=lambda C: (means[str(C)], -C))
    weights = fitted_weights(values, truth, best_C)
    test_values, test_truth = parts["test"]
    result = {
        "tagger": args.tagger,
        "n_train": int(len(truth)),
        "n_train_positive": int(truth.sum()),
        "inner_cv_ap": {key: {"mean": means[key], "folds": aps} for key, aps in cv.items()},
        "chosen_C": best_C,
        "fitted_beats_rules_on_train_cv": means[str(best_C)] > means["rules"],
        "weights": {name: round(weights[name], 4) for name in FREE},
        "fixed": list(FIXED),
        "ap_train": {
            "fitted": average_precision(score(values, weights), truth),
            "rules": average_precision(score(values, RULE_WEIGHTS), truth),
        },
        "ap_test": {
            "fitted": average_precision(score(test_values, weights), test_truth),
            "rules": average_precision(score(test_values, RULE_WEIGHTS), test_truth),
        },
    }
    write(result, test_truth, start, args.output)


if __name__ == "__main__":
    main()
