"""Typing parallelisms as synchystic (A B / A' B': the corresponding words come in the
same order) or chiastic (A B / B' A': inverted), the distinction ASP's brat
annotation keeps.

Corresponding words are approximated by shared lowercase forms or shared 3-letter
endings between the first and the last branch; the order of the matched pairs is
compared (concordant vs discordant pairs, as in Kendall's tau). A logistic
regression over these counts, fitted on the training parallelisms with balanced
class weights, scores them; the decision threshold is the one with the best
chiastic F1 on the training parallelisms (folded into the bias weight).
"""

from itertools import combinations
from typing import List, Optional, Sequence

import numpy
from spacy.tokens import Span

from .spans import CHIASTIC, SYNCHYSTIC

N_TYPE_FEATURES = 6


def inversion_features(branches: Sequence[Span]) -> numpy.ndarray:
    """Order features of a parallelism's first and last branch.

    branches (Sequence[Span]): the branches, in text order.
    RETURNS (numpy.ndarray): [matched pairs, concordant, discordant, (discordant -
        concordant) / comparisons, inversion of the first and last matched word, bias].
    """
    first, last = branches[0], branches[-1]
    pairs = []
    for i, a in enumerate(first):
        for j, b in enumerate(last):
            if a.is_punct or b.is_punct:
                continue
            if a.lower == b.lower or (len(a) > 3 and len(b) > 3 and a.lower_[-3:] == b.lower_[-3:]):
                pairs.append((i, j))
    concordant = discordant = 0
    for (i1, j1), (i2, j2) in combinations(pairs, 2):
        if i1 != i2 and j1 != j2:
            if (i1 < i2) == (j1 < j2):
                concordant += 1
            else:
                discordant += 1
    comparisons = max(concordant + discordant, 1)
    crossed = 0.0
    if len(pairs) >= 2:
        ends = sorted(pairs)
        crossed = float(ends[0][1] > ends[-1][1])
    return numpy.array(
        [len(pairs), concordant, discordant, (discordant - concordant) / comparisons, crossed, 1.0],
        dtype="float64",
    )


def fit_type_classifier(
    features: numpy.ndarray, chiastic: numpy.ndarray, steps: int = 500, l2: float = 0.01
) -> List[float]:
    """Fit logistic regression weights (balanced classes) by gradient descent.

    features (numpy.ndarray): [N, N_TYPE_FEATURES].
    chiastic (numpy.ndarray): [N] booleans.
    RETURNS (List[float]): the weights (score > 0 means chiastic), or [] if a class
        is missing.
    """
    y = chiastic.astype("float64")
    if len(y) == 0 or y.min() == y.max():
        return []
    scale = numpy.maximum(numpy.abs(features).max(0), 1.0)
    x = features / scale
    weight = numpy.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    w = numpy.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + numpy.exp(-x @ w))
        w -= 0.5 * (x.T @ (weight * (p - y)) / len(y) + l2 * w)
    w = w / scale
    scores = features @ w
    best_f1, best_threshold = -1.0, 0.0
    for threshold in numpy.unique(scores):
        predicted = scores > threshold
        tp = float(numpy.sum(predicted & (y == 1)))
        f1 = 2 * tp / (2 * tp + numpy.sum(predicted != (y == 1))) if tp else 0.0
        if f1 > best_f1:
            best_f1, best_threshold = f1, float(threshold)
    w[-1] -= best_threshold
    return w.tolist()


def predict_type(weights: Optional[Sequence[float]], branches: Sequence[Span]) -> str:
    """RETURNS (str): "chiastic" or "synchystic" (synchystic without weights)."""
    if not weights:
        return SYNCHYSTIC
    score = float(inversion_features(branches) @ numpy.asarray(weights))
    return CHIASTIC if score > 0 else SYNCHYSTIC
