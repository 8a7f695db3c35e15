"""The one logistic regression of the package, and the F1-maximising threshold on its
scores: the chiasmus baseline, the intertext reranker and the parallelism typer all fit
this model.

L2-regularised logistic regression on standardised features (the loss of
scikit-learn's ``LogisticRegression(C=C)``, intercept not penalised), optionally with
balanced class weights, fitted with L-BFGS. It serialises to a plain dict and can be
folded into one weight vector over the raw features.
"""

from typing import Any, Dict, Optional

import numpy
from scipy.optimize import minimize
from scipy.special import expit

MIN_SCALE = 1e-6  # features with a smaller standard deviation are left unscaled


class LogisticRegression:
    """Binary logistic regression.

    C (float): the inverse regularisation strength.
    balanced (bool): weight each class by half the inverse of its frequency.
    """

    def __init__(self, C: float = 1.0, balanced: bool = False) -> None:
        if C <= 0:
            raise ValueError(f"LogisticRegression: C must be > 0, got {C}")
        self.C = C
        self.balanced = balanced
        self.mean: Optional[numpy.ndarray] = None
        self.scale: Optional[numpy.ndarray] = None
        self.weights: Optional[numpy.ndarray] = None
        self.bias = 0.0

    @property
    def is_fitted(self) -> bool:
        return self.weights is not None

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "LogisticRegression":
        """X (array [n, d]): features. y (array [n]): 0/1 or booleans.
        sample_weight (Optional[array [n]]): each example's loss term is multiplied by its
            weight (and the feature scaling is weighted alike); None: all 1.
        RETURNS (LogisticRegression): self.
        RAISES ValueError: no examples, or only one class.
        """
        X = numpy.asarray(X, dtype="float64")
        target = numpy.asarray(y, dtype="float64")
        if len(X) == 0 or target.min() == target.max():
            raise ValueError("LogisticRegression: training needs examples of both classes")
        if sample_weight is None:
            given = numpy.ones_like(target)
            self.mean = X.mean(0)
            std = X.std(0)
        else:
            given = numpy.asarray(sample_weight, dtype="float64")
            self.mean = numpy.average(X, axis=0, weights=given)
            std = numpy.sqrt(numpy.average((X - self.mean) ** 2, axis=0, weights=given))
        self.scale = numpy.where(std > MIN_SCALE, std, 1.0)
        Z = (X - self.mean) / self.scale
        if self.balanced:
            rate = target.mean()
            weight = given * numpy.where(target == 1, 0.5 / rate, 0.5 / (1 - rate))
        else:
            weight = given
        C = self.C

        def loss(theta: numpy.ndarray):
            w, b = theta[:-1], theta[-1]
            logits = Z @ w + b
            value = C * numpy.sum(weight * (numpy.logaddexp(0.0, logits) - target * logits))
            d = C * weight * (expit(logits) - target)
            return value + 0.5 * w @ w, numpy.concatenate((Z.T @ d + w, [d.sum()]))

        theta = minimize(loss, numpy.zeros(Z.shape[1] + 1), jac=True, method="L-BFGS-B").x
        self.weights, self.bias = theta[:-1], float(theta[-1])
        return self

    def decision_function(self, X: Any) -> numpy.ndarray:
        """X (array [n, d]). RETURNS (numpy.ndarray): [n] logits."""
        if self.weights is None:
            raise ValueError("LogisticRegression: not fitted (call fit or from_dict)")
        Z = (numpy.asarray(X, dtype="float64") - self.mean) / self.scale
        return Z @ self.weights + self.bias

    def predict_proba(self, X: Any) -> numpy.ndarray:
        """X (array [n, d]). RETURNS (numpy.ndarray): [n] probabilities of the class 1."""
        return expit(self.decision_function(X))

    def linear_weights(self) -> numpy.ndarray:
        """The model as one weight vector over the raw features plus the intercept last:
        ``X @ w[:-1] + w[-1]`` equals ``decision_function(X)``."""
        if self.weights is None:
            raise ValueError("LogisticRegression: not fitted (call fit or from_dict)")
        w = self.weights / self.scale
        return numpy.concatenate((w, [self.bias - self.mean @ w]))

    def to_dict(self) -> Dict[str, Any]:
        """RETURNS (Dict[str, Any]): JSON-serialisable settings and weights."""
        if self.weights is None:
            raise ValueError("LogisticRegression: not fitted (call fit or from_dict)")
        return {
            "C": self.C,
            "balanced": self.balanced,
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "weights": self.weights.tolist(),
            "bias": self.bias,
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "LogisticRegression":
        """data (Dict[str, Any]): what ``to_dict`` wrote. RETURNS (LogisticRegression)."""
        model = cls(C=data.get("C", 1.0), balanced=data.get("balanced", False))
        model.mean = numpy.asarray(data["mean"], dtype="float64")
        model.scale = numpy.asarray(data["scale"], dtype="float64")
        model.weights = numpy.asarray(data["weights"], dtype="float64")
        model.bias = float(data["bias"])
        return model


def f1_threshold(
    scores: Any, labels: Any, n_gold: Optional[int] = None, floor: Optional[float] = None
) -> float:
    """The threshold on ``scores`` that maximises F1 when ``score >= threshold`` is
    predicted positive: the midpoint between the last score kept and the next lower
    one (cuts fall only between distinct scores).

    scores (array [n]): the scores of the examples.
    labels (array [n]): 1 for positives.
    n_gold (Optional[int]): all positives, including those never scored (for example
        gold links a retriever missed); None: the positives among ``labels``.
    floor (Optional[float]): the lowest score possible (0.0 for probabilities), the
        lower end of the cut when every example is kept; None: one below the lowest.
    RETURNS (float): the threshold (0.5 if there is no positive to find).
    """
    p = numpy.asarray(scores, dtype="float64").ravel()
    y = numpy.asarray(labels, dtype="float64").ravel()
    n_gold = int(y.sum()) if n_gold is None else n_gold
    if len(p) == 0 or y.sum() == 0 or n_gold == 0:
        return 0.5
    order = numpy.argsort(-p, kind="stable")
    p, y = p[order], y[order]
    tp = numpy.cumsum(y)
    f1 = 2 * tp / (numpy.arange(1, len(p) + 1) + n_gold)
    f1 = numpy.where(numpy.r_[p[1:] != p[:-1], True], f1, -1.0)
    best = int(numpy.argmax(f1))
    lowest = p[best] - 1.0 if floor is None else floor
    below = p[best + 1] if best + 1 < len(p) else lowest
    midpoint = (p[best] + below) / 2.0
    # the midpoint can round onto ``below`` (denormal scores): cut at p[best] then
    return float(midpoint if below < midpoint <= p[best] else p[best])
