"""The shared logistic regression and its F1 threshold (spacy_rhetoric/logistic.py)."""

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_rhetoric.logistic import LogisticRegression, f1_threshold


def _data(seed: int = 0, n: int = 200):
    rng = numpy.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1]
    y = (X[:, 0] + X[:, 1] / 10 + rng.normal(scale=0.5, size=n)) > 0.8
    return X, y


def test_fit_separates_and_round_trips():
    X, y = _data()
    model = LogisticRegression(C=1.0).fit(X, y)
    p = model.predict_proba(X)
    assert p[y].mean() > 0.6 > p[~y].mean()
    copy = LogisticRegression.from_dict(model.to_dict())
    numpy.testing.assert_allclose(copy.predict_proba(X), p)


def test_linear_weights_equal_the_decision_function():
    X, y = _data(1)
    model = LogisticRegression(C=0.5, balanced=True).fit(X, y)
    w = model.linear_weights()
    numpy.testing.assert_allclose(X @ w[:-1] + w[-1], model.decision_function(X), atol=1e-9)


def test_balanced_weights_raise_the_rare_class():
    X, y = _data(2)
    y = y & (numpy.arange(len(y)) % 3 == 0)  # a rare positive class
    plain = LogisticRegression().fit(X, y).predict_proba(X).mean()
    balanced = LogisticRegression(balanced=True).fit(X, y).predict_proba(X).mean()
    assert balanced > plain


def test_errors():
    with pytest.raises(ValueError, match="both classes"):
        LogisticRegression().fit(numpy.zeros((3, 2)), [1, 1, 1])
    with pytest.raises(ValueError, match="not fitted"):
        LogisticRegression().predict_proba(numpy.zeros((1, 2)))
    with pytest.raises(ValueError):
        LogisticRegression(C=0)


def _f1_at(scores, labels, n_gold, t):
    predicted = scores >= t
    tp = float((predicted & (labels == 1)).sum())
    return 2 * tp / (predicted.sum() + n_gold) if n_gold else 0.0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.booleans()), min_size=1, max_size=25),
    st.integers(0, 3),
)
def test_f1_threshold_is_the_best_cut(items, missed):
    scores = numpy.array([s / 6 for s, _ in items])
    labels = numpy.array([int(b) for _, b in items])
    n_gold = int(labels.sum()) + missed
    t = f1_threshold(scores, labels, n_gold, floor=0.0)
    if labels.sum() == 0:
        assert t == 0.5
        return
    best = max(_f1_at(scores, labels, n_gold, c) for c in numpy.unique(scores))
    assert _f1_at(scores, labels, n_gold, t) == pytest.approx(best)
    assert (scores >= t).any()  # at least the best-scored item is kept
