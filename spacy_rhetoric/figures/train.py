"""The fit of the figure scorer (``model.FigureScorer``) on the training data of
``training_data``.

Each figure's scorer is one logistic model (``spacy_rhetoric.logistic``, here with
example weights) over the candidate features (``features.FEATURES``) plus one bias
column per language. Positives and negatives are balanced (both classes weigh the same
in total). The model of a figure is either **shared** (one weight vector, a bias per
language) or **per language** (separate weights where a language has
``MIN_PER_LANGUAGE`` positives and negatives, else the shared one); the variant and the
regularisation ``C`` are chosen per figure by grouped cross-validation
(``cross_validate``: documents, gold texts and running-text docs are the groups) on
weighted average precision. ``scorer_spec`` writes the fitted models as the scorer file.
"""

import hashlib
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import numpy
from scipy.special import expit

from ..logistic import LogisticRegression
from .component import FIGURES
from .features import COLUMN, FEATURES
from .model import PRIOR
from .training_data import LANGUAGES, RUNNING_WEIGHT, FigureData, training_weights

C_GRID = (0.01, 0.1, 1.0, 10.0)
VARIANTS = ("shared", "per_language")
MIN_PER_LANGUAGE = 10
N_FOLDS = 5
SEEDS = (0, 1)


def with_languages(X: numpy.ndarray, langs: numpy.ndarray) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): X with one 0/1 column per language of ``LANGUAGES``."""
    columns = numpy.stack([(langs == lang).astype("float64") for lang in LANGUAGES], axis=1)
    return numpy.hstack([X, columns]) if len(X) else numpy.zeros((0, X.shape[1] + len(LANGUAGES)))


@dataclass
class FittedFigure:
    """A fitted figure scorer: per language, raw weights over FEATURES and a bias."""

    variant: str
    C: float
    weights: Dict[str, numpy.ndarray]  # lang -> [len(FEATURES)]
    bias: Dict[str, float]

    def scores(self, X: numpy.ndarray, langs: Sequence[str]) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): [k] probabilities."""
        out = numpy.zeros(len(X))
        langs = numpy.asarray(langs, dtype=object)
        for lang in set(langs.tolist()):
            rows = langs == lang
            use = lang if lang in self.weights else "*"
            out[rows] = expit(X[rows] @ self.weights[use] + self.bias[use])
        return out


def _fit_shared(X, y, w, langs, C) -> Tuple[Dict[str, numpy.ndarray], Dict[str, float]]:
    model = LogisticRegression(C=C).fit(with_languages(X, langs), y, w)
    linear = model.linear_weights()
    d = len(FEATURES)
    base, lang_w, intercept = linear[:d].copy(), linear[d:-1], float(linear[-1])
    intercept += base[COLUMN["bias"]]
    base[COLUMN["bias"]] = 0.0
    weights = {"*": base}
    bias = {"*": intercept + float(lang_w.mean())}
    for lang, value in zip(LANGUAGES, lang_w):
        weights[lang] = base
        bias[lang] = intercept + float(value)
    return weights, bias


def fit_figure(
    arrays: Dict[str, numpy.ndarray],
    variant: str,
    C: float,
    weights: Optional[numpy.ndarray] = None,
) -> FittedFigure:
    """Fit one figure's model.

    arrays (Dict[str, numpy.ndarray]): ``FigureData.arrays``.
    variant (str): "shared" (a bias per language) or "per_language".
    C (float): inverse regularisation.
    weights (Optional[numpy.ndarray]): example weights (default ``training_weights``).
    RETURNS (FittedFigure): the model.
    """
    X, y, langs = arrays["X"], arrays["y"], arrays["lang"]
    w = training_weights(arrays) if weights is None else weights
    shared_w, shared_b = _fit_shared(X, y, w, langs, C)
    if variant == "shared":
        return FittedFigure(variant, C, shared_w, shared_b)
    per_w, per_b = {"*": shared_w["*"]}, {"*": shared_b["*"]}
    for lang in LANGUAGES:
        rows = langs == lang
        if (y[rows] == 1).sum() >= MIN_PER_LANGUAGE and (y[rows] == 0).sum() >= MIN_PER_LANGUAGE:
            model = LogisticRegression(C=C).fit(X[rows], y[rows], w[rows])
            linear = model.linear_weights()
            vector = linear[:-1].copy()
            per_b[lang] = float(linear[-1]) + vector[COLUMN["bias"]]
            vector[COLUMN["bias"]] = 0.0
            per_w[lang] = vector
        else:
            per_w[lang], per_b[lang] = shared_w[lang], shared_b[lang]
    return FittedFigure(variant, C, per_w, per_b)


def weighted_average_precision(scores: Any, labels: Any, weights: Any) -> float:
    """Average precision with example weights (precision and recall in weight)."""
    s = numpy.asarray(scores, dtype="float64")
    y = numpy.asarray(labels, dtype="float64")
    w = numpy.asarray(weights, dtype="float64")
    total = float((w * y).sum())
    if total <= 0:
        return float("nan")
    order = numpy.argsort(-s, kind="stable")
    s, y, w = s[order], y[order], w[order]
    tp = numpy.cumsum(w * y)
    kept = numpy.cumsum(w)
    last = numpy.r_[s[1:] != s[:-1], True]  # cut only between distinct scores
    precision = tp[last] / numpy.maximum(kept[last], 1e-12)
    recall = tp[last] / total
    return float(numpy.sum(numpy.diff(numpy.r_[0.0, recall]) * precision))


def grouped_folds(groups: Sequence[str], k: int, seed: int) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): [n] fold ids, whole groups to one fold (by a seeded hash)."""
    return numpy.asarray(
        [int(hashlib.sha1(f"{seed}:{g}".encode()).hexdigest(), 16) % k for g in groups]
    )


def out_of_fold(
    arrays: Dict[str, numpy.ndarray], variant: str, C: float, k: int = N_FOLDS, seed: int = 0
) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): [n] each row's probability under a model fitted without
    its fold (nan where a fold's training part lacks a class)."""
    folds = grouped_folds(arrays["group"], k, seed)
    w = training_weights(arrays)
    out = numpy.full(len(arrays["y"]), numpy.nan)
    for fold in range(k):
        test = folds == fold
        train = ~test
        if not test.any() or len(set(arrays["y"][train].tolist())) < 2:
            continue
        part = {name: value[train] for name, value in arrays.items()}
        model = fit_figure(part, variant, C, w[train])
        out[test] = model.scores(arrays["X"][test], arrays["lang"][test])
    return out


def cross_validate(
    arrays: Dict[str, numpy.ndarray],
    variant: str,
    C: float,
    k: int = N_FOLDS,
    seeds: Sequence[int] = SEEDS,
) -> Tuple[float, float]:
    """Grouped k-fold cross-validation, weighted average precision per fold (the
    example weights of ``training_weights`` before class balancing).

    RETURNS (Tuple[float, float]): mean and sd over folds and seeds.
    """
    values = []
    w = training_weights(arrays)
    base = arrays["w"].copy()
    running = arrays["source"] == "running"
    if running.any():
        base[running] = w[running] / max(w[running].max(), 1e-12) * RUNNING_WEIGHT
    for seed in seeds:
        folds = grouped_folds(arrays["group"], k, seed)
        for fold in range(k):
            test = folds == fold
            train = ~test
            if (arrays["y"][test] == 1).sum() == 0 or len(set(arrays["y"][train].tolist())) < 2:
                continue
            part = {name: value[train] for name, value in arrays.items()}
            model = fit_figure(part, variant, C, w[train])
            scores = model.scores(arrays["X"][test], arrays["lang"][test])
            values.append(weighted_average_precision(scores, arrays["y"][test], base[test]))
    if not values:
        return float("nan"), float("nan")
    return float(numpy.mean(values)), float(numpy.std(values))


def select_and_fit(
    data: FigureData,
    figures: Sequence[str] = FIGURES,
    c_grid: Sequence[float] = C_GRID,
    variants: Sequence[str] = VARIANTS,
    progress: Optional[Callable[[str], None]] = None,
) -> Tuple[Dict[str, FittedFigure], Dict[str, Any], Dict[str, numpy.ndarray]]:
    """Per figure: the variant and C with the best mean grouped-CV average precision,
    the model fitted on all its data, and its out-of-fold scores (seed 0).

    RETURNS: per figure the model, the CV table, the out-of-fold scores.
    """
    models: Dict[str, FittedFigure] = {}
    report: Dict[str, Any] = {}
    oof: Dict[str, numpy.ndarray] = {}
    for figure in figures:
        arrays = data.arrays(figure)
        y = arrays["y"]
        if (y == 1).sum() < 2 or (y == 0).sum() < 2:
            report[figure] = {
                "fitted": False,
                "why": "fewer than 2 positives or negatives",
                "positives": int((y == 1).sum()),
                "negatives": int((y == 0).sum()),
            }
            continue
        table = []
        for variant in variants:
            for C in c_grid:
                mean, sd = cross_validate(arrays, variant, C)
                table.append({"variant": variant, "C": C, "ap_mean": mean, "ap_sd": sd})
        valid = [t for t in table if not math.isnan(t["ap_mean"])]
        # ties: the shared variant, then the stronger regularisation (listed first)
        best = max(valid, key=lambda t: t["ap_mean"]) if valid else {"variant": "shared", "C": 1.0}
        models[figure] = fit_figure(arrays, best["variant"], best["C"])
        oof[figure] = out_of_fold(arrays, best["variant"], best["C"])
        report[figure] = {
            "fitted": True,
            "variant": best["variant"],
            "C": best["C"],
            "cv": table,
            "positives": int((y == 1).sum()),
            "negatives": int((y == 0).sum()),
        }
        if progress is not None:
            progress(
                f"{figure}: {best['variant']}, C={best['C']}, CV AP "
                f"{best.get('ap_mean', float('nan')):.3f} ± {best.get('ap_sd', float('nan')):.3f}"
                f" ({report[figure]['positives']} positives,"
                f" {report[figure]['negatives']} negatives)"
            )
    return models, report, oof


def scorer_spec(
    models: Dict[str, FittedFigure], thresholds: Dict[str, Dict[str, float]], source: str
) -> Dict[str, Any]:
    """The scorer.json form (``model.FigureScorer.from_dict``): per figure the shared
    weights, bias and threshold, per language the bias, threshold and (per-language
    variant) weights; figures without a model keep the prior's weights.

    thresholds (Dict[str, Dict[str, float]]): per language, per figure.
    RETURNS (Dict[str, Any]): the data.
    """
    figures: Dict[str, Any] = {}
    for figure in FIGURES:
        model = models.get(figure)
        if model is None:
            spec = dict(PRIOR[figure])
        else:
            spec = {
                "weights": _named(model.weights["*"]),
                "bias": round(model.bias["*"], 6),
                "variant": model.variant,
                "C": model.C,
            }
        languages = {}
        for lang in LANGUAGES:
            entry: Dict[str, Any] = {}
            if model is not None:
                entry["bias"] = round(model.bias[lang], 6)
                if (
                    model.variant == "per_language"
                    and model.weights[lang] is not model.weights["*"]
                ):
                    entry["weights"] = _named(model.weights[lang])
            if figure in thresholds.get(lang, {}):
                entry["threshold"] = round(float(thresholds[lang][figure]), 6)
            if entry:
                languages[lang] = entry
        spec["languages"] = languages
        figures[figure] = spec
    return {
        "version": 1,
        "source": "file",
        "trained": source,
        "features": list(FEATURES),
        "figures": figures,
    }


def _named(vector: numpy.ndarray) -> Dict[str, float]:
    return {name: round(float(v), 6) for name, v in zip(FEATURES, vector) if abs(v) > 1e-9}
