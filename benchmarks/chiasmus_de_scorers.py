"""Which scorer family ranks the German chiasmi best in the paper's protocol (a)? The
German 450 GerDraCor candidates plus 4,000 random inversions of running text, the
folds of ``chiasmus evaluate de --negatives assets/ud --seeds 0,1,2,3`` (stratified,
5 folds x fold seeds 0-3), scored by models fitted on the protocol's feature table
(D + L + the encoder's E, ``crossval.FeatureTable``). Every setting is chosen inside
each training part by an inner stratified 5-fold CV; the test fold is only measured:

- ``logreg_c1``: the package's L2 logistic regression at C = 1 (the protocol's plain
  baseline, here with E), encoder layers chosen by the inner CV (as the protocol does);
- ``logreg_nested``: encoder layers and C (0.01-1) chosen together by the inner CV;
- ``mlp_nested``: one hidden layer of 64 ReLUs (scikit-learn's ``MLPClassifier``, which
  comes with sentence-transformers), its L2 ``alpha`` (0.3-10) chosen by the inner CV on
  the layers of ``logreg_nested``.

AP over the annotated plus random candidates of each test fold ("a") and over the
annotated ones alone ("b"); mean +- sample sd over the 20 folds. About 10 min on one
thread (2 of them computing the encoder's states).

    python benchmarks/chiasmus_de_scorers.py assets \
        --output benchmarks/results/chiasmus_de_scorers.json
"""

import argparse
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy
import spacy
import srsly

from spacy_rhetoric.chiasmus.crossval import (
    FeatureTable,
    first_annotated,
    fit_logistic,
    grid_layers,
    inner_cv_ap,
    settings_from_config,
    stratified_folds,
)
from spacy_rhetoric.chiasmus.eval_german import GERMAN_FULL, german_examples, german_negatives
from spacy_rhetoric.chiasmus.metrics import average_precision

C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0)
ALPHA_GRID = (0.3, 1.0, 3.0, 10.0)


def logreg(C):
    return lambda X, y: fit_logistic(X, y, C)


def mlp(alpha, seed):
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def fit(X, y):
        model = MLPClassifier((64,), alpha=alpha, max_iter=1000, random_state=seed)
        fitted = make_pipeline(StandardScaler(), model).fit(X, y)
        return lambda Z: fitted.predict_proba(Z)[:, 1]

    return fit


def inner_ap(fit, X, y, seed):
    return inner_cv_ap(X, y, 5, seed + 1000, fit=fit)  # inner folds: seed + 1000


def summary(values):
    return {
        "per_fold": [round(v, 4) for v in values],
        "mean": round(float(numpy.mean(values)), 4),
        "sd": round(float(numpy.std(values, ddof=1)), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path, help="the data mirror (assets)")
    parser.add_argument("--seeds", default="0,1,2,3")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning)
    start = time.perf_counter()
    settings = settings_from_config()
    grid = [tuple(option) for option in settings["layer_grid"]]
    examples = german_examples(args.data / "german-chiasmus", spacy.blank("de"))
    negatives = german_negatives(args.data / "ud", settings, 4000, 0)
    kept = examples + negatives
    y = numpy.asarray([label in GERMAN_FULL for _, label in first_annotated(kept)])
    annotated = numpy.arange(len(kept)) < len(examples)
    encoder = settings["model"]["encoder"]
    table = FeatureTable(kept, ("D", "L", "E"), encoder, grid_layers(settings))
    X = {option: table.matrix(("D", "L", "E"), option) for option in grid}
    scores = {"logreg_c1": ([], []), "logreg_nested": ([], []), "mlp_nested": ([], [])}
    chosen = {"logreg_c1": [], "logreg_nested": [], "mlp_nested": []}
    for seed in [int(s) for s in args.seeds.split(",")]:
        folds = stratified_folds(list(y), 5, seed)
        for fold in range(5):
            train, test = folds != fold, folds == fold
            inner = {
                (option, C): inner_ap(logreg(C), X[option][train], y[train], seed)
                for option in grid
                for C in C_GRID
            }
            at_c1 = max(grid, key=lambda option: inner[(option, 1.0)])
            layers, C = max(inner, key=inner.get)
            alphas = {
                alpha: inner_ap(mlp(alpha, seed), X[layers][train], y[train], seed)
                for alpha in ALPHA_GRID
            }
            alpha = max(alphas, key=alphas.get)
            for name, option, fit, setting in (
                ("logreg_c1", at_c1, logreg(1.0), {"layers": list(at_c1)}),
                ("logreg_nested", layers, logreg(C), {"layers": list(layers), "C": C}),
                ("mlp_nested", layers, mlp(alpha, seed), {"layers": list(layers), "alpha": alpha}),
            ):
                predicted = fit(X[option][train], y[train])(X[option][test])
                own = annotated[test]
                scores[name][0].append(average_precision(predicted, y[test]))
                scores[name][1].append(average_precision(predicted[own], y[test][own]))
                chosen[name].append(setting)
            print(
                f"seed {seed} fold {fold}: "
                + ", ".join(f"{name} {values[0][-1]:.3f}" for name, values in scores.items()),
                flush=True,
            )
    result = {
        "protocol": "German 450 + 4,000 random inversions, positives a/c/fa/fc, 5 folds",
        "seeds": args.seeds,
        "n": len(kept),
        "n_positive": int(y.sum()),
        "C_grid": list(C_GRID),
        "alpha_grid": list(ALPHA_GRID),
        "layer_grid": [list(option) for option in grid],
        "models": {
            name: {
                "a_with_random": summary(values[0]),
                "b_annotated_only": summary(values[1]),
                "chosen": dict(Counter(str(setting) for setting in chosen[name])),
            }
            for name, values in scores.items()
        },
        "seconds": round(time.perf_counter() - start, 1),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(args.output, result)
    for name, row in result["models"].items():
        a, b = row["a_with_random"], row["b_annotated_only"]
        print(f"{name}: (a) {a['mean']:.3f} +- {a['sd']:.3f}, (b) {b['mean']:.3f} +- {b['sd']:.3f}")


if __name__ == "__main__":
    main()
