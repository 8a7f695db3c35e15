"""Is the intertext reranker's model the limit (#27)? The grouped 5-fold CV of `intertext
evaluate --pool full` with the reranker's logistic regression replaced, everything else
(index, candidates, features, fusion, inner-fold thresholds) as in the shipped recipe:

- ``logistic``: the shipped model (an L2 logistic regression over the pair features);
- ``quadratic``: the same logistic regression over the features and all their pairwise
  products (still linear in its weights, so it would serialise as today's);
- ``boosted``: scikit-learn's histogram gradient boosting (200 trees of at most 15
  leaves, learning rate 0.05, L2 1.0, seed 0; fixed before any run, not tuned), an upper
  bound on what a nonlinear model of these features can do;
- ``relative`` (2026-11-28): the shipped logistic regression with, per query, the fused,
  lexical and dense scores, the query coverage and Tesserae's score (and the n-gram
  cosine where the index has it) also given minus their maximum over that query's
  candidates: how a candidate stands among its rivals, not only how good it is.
- ``author`` (2026-11-28): the shipped logistic regression also reading a one-hot of each
  candidate's source author (the pool's ten), so that it can learn, per training fold,
  which authors the queries allude to (Loci Similes: Virgil 333 of 545 links from 13 % of
  the pool, Ovid 25 from 35 %). A prior of Jerome's and Lactantius' reading, not evidence
  about the pair.

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
from spacy_rhetoric.intertext.rerank import CHAR_FEATURES, FEATURES

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


# the columns of pair_features given relative to their query's best candidate
RELATIVE = ("fused", "lexical", "dense", "query_coverage", "tesserae", "chars")
SHIPPED_RERANK_FOLD = ev.rerank_fold


def _relative(X: np.ndarray, names) -> np.ndarray:
    columns = [names.index(n) for n in RELATIVE if n in names and names.index(n) < X.shape[1]]
    if not len(X):
        return np.zeros((0, X.shape[1] + len(columns)), dtype=X.dtype)
    return np.hstack([X, X[:, columns] - X[:, columns].max(axis=0, keepdims=True)])


def relative_rerank_fold(fold, fused, feats, settings, record):
    """``rerank_fold`` over each query's features with the relative columns appended."""
    names = FEATURES + CHAR_FEATURES
    feats = {q: _relative(X, names) for q, X in feats.items()}
    return SHIPPED_RERANK_FOLD(fold, fused, feats, settings, record)


def author_of(source_id: str) -> str:
    """The author of a pool segment, from its citation ("verg. g. 4.564" -> "verg")."""
    return source_id.split(".")[0].strip()


def author_onehot(source_ids) -> np.ndarray:
    """RETURNS (np.ndarray): (n_segments, n_authors) float32, each row the one-hot of its
    segment's author (authors in sorted order)."""
    authors = [author_of(i) for i in source_ids]
    names = sorted(set(authors))
    onehot = np.zeros((len(authors), len(names)), dtype=np.float32)
    onehot[np.arange(len(authors)), [names.index(a) for a in authors]] = 1.0
    return onehot


def author_rerank_fold_for(onehot: np.ndarray):
    """``rerank_fold`` over each query's features with its candidates' author one-hot
    appended (``onehot``: a row per pool segment, as ``author_onehot`` gives)."""

    def fit(fold, fused, feats, settings, record):
        feats = {
            q: np.hstack([X, onehot[[c.row for c in fused[q]]].astype(X.dtype)])
            for q, X in feats.items()
        }
        return SHIPPED_RERANK_FOLD(fold, fused, feats, settings, record)

    return fit


MODELS = {
    "logistic": SHIPPED,
    "quadratic": QuadraticReranker,
    "boosted": BoostedReranker,
    "relative": SHIPPED,
    "author": SHIPPED,
}
FOLD_FITTERS = {"relative": relative_rerank_fold}


def grouped_cv(data: Path, index: Path, reranker=SHIPPED, fit_fold=SHIPPED_RERANK_FOLD):
    """The grouped 5-fold CV of ``intertext evaluate --pool full`` with the reranker's
    class and its per-fold fitting swapped in (and put back after).

    RETURNS (Tuple[dict, dict]): the protocol's metrics and their summary (the reranked
    list's R@10 and R@100, F1 over all queries at each k).
    """
    ev.FeatureReranker, ev.rerank_fold = reranker, fit_fold
    try:
        out = ev.evaluate(
            data / "loci-similes" / "labels.csv",
            data / "latin-corpora" / "tesserae" / "texts" / "la",
            "full",
            ("grouped",),
            index_dir=index,
            model="multilingual-e5-small",
        )
    finally:
        ev.FeatureReranker, ev.rerank_fold = SHIPPED, SHIPPED_RERANK_FOLD
    grouped = out["grouped"]
    ranking = grouped["rerank@100"]["ranking"]
    summary = {
        "reranked_top100_recall@10": ranking["recall@10"],
        "reranked_top100_recall@100": ranking["recall@100"],
        **{f"all_f1@{k}": grouped[f"rerank@{k}"]["all_f1"] for k in ev.KS},
    }
    return grouped, summary


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
    fitters = dict(FOLD_FITTERS)
    if "author" in names:
        bench, _ = ev.build_benchmark(
            args.data / "loci-similes" / "labels.csv",
            args.data / "latin-corpora" / "tesserae" / "texts" / "la",
            "full",
        )
        # candidate rows are rows of the pool, the index's rows (built from the same sources)
        fitters["author"] = author_rerank_fold_for(author_onehot(bench.source_ids))
    results = {}
    for name in names:
        start = time.perf_counter()
        fit_fold = fitters.get(name, SHIPPED_RERANK_FOLD)
        grouped, summary = grouped_cv(args.data, args.index, MODELS[name], fit_fold)
        results[name] = {
            "seconds": time.perf_counter() - start,
            "grouped": grouped,
            "summary": summary,
        }
        print(name, json.dumps(summary), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"index": str(args.index), "models": results}, indent=1))


if __name__ == "__main__":
    main()
