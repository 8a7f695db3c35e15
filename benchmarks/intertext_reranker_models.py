"""Is the intertext reranker's model the limit (#27)? The grouped 5-fold CV of `intertext
evaluate --pool full` with the reranker's logistic regression replaced, everything else
(index, candidates, features, fusion, inner-fold thresholds) as in the shipped recipe:

- ``logistic``: the shipped model (an L2 logistic regression over the pair features);
- ``quadratic``: the same logistic regression over the features and all their pairwise
  products (still linear in its weights, so it would serialise as today's);
- ``boosted``: scikit-learn's histogram gradient boosting (200 trees of at most 15
  leaves, learning rate 0.05, L2 1.0, seed 0; fixed before any run, not tuned), an upper
  bound on what a nonlinear model of these features can do.

    python benchmarks/intertext_reranker_models.py --index training/intertext/full-index \
        --models logistic,quadratic,boosted \
        --output benchmarks/results/intertext_reranker_models.json

Needs scikit-learn for ``boosted`` (installed with sentence-transformers).
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from spacy_rhetoric.intertext import evaluate as ev

SHIPPED = ev.FeatureReranker


def _pairwise(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    i, j = np.triu_indices(X.shape[1])
    return np.hstack([X, X[:, i] * X[:, j]])


class QuadraticReranker(SHIPPED):
    """The shipped logistic regression over the features and their pairwise products."""

    def fit(self, X, y):
        return super().fit(_pairwise(X), y)

    def predict_proba(self, X):
        if len(X) == 0:
            return np.zeros(0, dtype=np.float32)
        return super().predict_proba(_pairwise(X))


class BoostedReranker(SHIPPED):
    """Histogram gradient boosting over the same features."""

    def fit(self, X, y):
        from sklearn.ensemble import HistGradientBoostingClassifier

        y = np.asarray(y)
        if len(y) == 0 or y.min() == y.max():
            raise ValueError("boosted reranker: needs both classes")
        self.model = HistGradientBoostingClassifier(
            max_iter=200, learning_rate=0.05, max_leaf_nodes=15, l2_regularization=1.0,
            random_state=0,
        ).fit(X, y)  # fmt: skip
        return self

    def predict_proba(self, X):
        if len(X) == 0:
            return np.zeros(0, dtype=np.float32)
        return self.model.predict_proba(X)[:, 1].astype(np.float32)


MODELS = {"logistic": SHIPPED, "quadratic": QuadraticReranker, "boosted": BoostedReranker}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("assets"))
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--models", default="logistic,quadratic,boosted")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = set(names) - set(MODELS)
    if unknown:
        parser.error(f"unknown models {sorted(unknown)}; choose from {sorted(MODELS)}")
    results = {}
    for name in names:
        ev.FeatureReranker = MODELS[name]
        start = time.perf_counter()
        try:
            out = ev.evaluate(
                args.data / "loci-similes" / "labels.csv",
                args.data / "latin-corpora" / "tesserae" / "texts" / "la",
                "full",
                ("grouped",),
                index_dir=args.index,
                model="multilingual-e5-small",
            )
        finally:
            ev.FeatureReranker = SHIPPED
        grouped = out["grouped"]
        results[name] = {
            "seconds": time.perf_counter() - start,
            "grouped": grouped,
        }
        summary = {
            "reranked_top100_recall@10": grouped["rerank@100"]["ranking"]["recall@10"],
            **{f"all_f1@{k}": grouped[f"rerank@{k}"]["all_f1"] for k in ev.KS},
        }
        results[name]["summary"] = summary
        print(name, json.dumps(summary), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"index": str(args.index), "models": results}, indent=1))


if __name__ == "__main__":
    main()
