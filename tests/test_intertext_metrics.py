"""Intertext metrics on hand-computed counts, the reranker and threshold choice."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_rhetoric.intertext.metrics import (
    Confusion,
    error_rates,
    link_confusion,
    link_scores,
    mean_reciprocal_rank,
    precision_recall_f1,
    recall_at_k,
)
from spacy_rhetoric.intertext.rerank import FEATURES, FeatureReranker, choose_threshold


def test_confusion_and_rates_by_hand():
    # 3 queries x 10 sources. q1 gold {0, 1}; q2 gold {5}; q3 no gold.
    gold = {"q1": [{0}, {1}], "q2": [{5}]}
    predicted = {"q1": [0, 7], "q2": [], "q3": [2, 3]}
    per_query = link_confusion(predicted, gold, ["q1", "q2", "q3"], 10)
    assert per_query["q1"] == Confusion(tp=1, fp=1, fn=1, tn=7)
    assert per_query["q2"] == Confusion(tp=0, fp=0, fn=1, tn=9)
    assert per_query["q3"] == Confusion(tp=0, fp=2, fn=0, tn=8)
    scores = link_scores(per_query, gold)
    # micro P/R/F1 over queries with gold: tp 1, fp 1, fn 2
    assert scores["precision"] == pytest.approx(0.5)
    assert scores["recall"] == pytest.approx(1 / 3)
    assert scores["f1"] == pytest.approx(0.4)
    # macro: q1 P .5 R .5 F .5 ; q2 P 0 R 0 F 0
    assert scores["macro_f1"] == pytest.approx(0.25)
    # over all queries: q3's two links to nowhere are false positives too (tp 1, fp 3, fn 2)
    assert scores["all_precision"] == pytest.approx(0.25)
    assert scores["all_recall"] == pytest.approx(1 / 3)
    assert scores["all_f1"] == pytest.approx(2 * 0.25 * (1 / 3) / (0.25 + 1 / 3))
    # SMR/FPR/FNR over all 30 pairs: fp 3, fn 2
    assert scores["smr"] == pytest.approx(5 / 30)
    assert scores["fpr"] == pytest.approx(3 / 30)
    assert scores["fnr"] == pytest.approx(2 / 30)
    assert (scores["tp"], scores["fp"], scores["fn"], scores["tn"]) == (1, 3, 2, 24)


def test_multirow_gold_items_count_once():
    # a two-line verse passage {3, 4}: predicting both lines is one TP and no FP
    gold = {"q": [{3, 4}]}
    per_query = link_confusion({"q": [3, 4, 9]}, gold, ["q"], 20)
    assert per_query["q"].tp == 1 and per_query["q"].fp == 1 and per_query["q"].fn == 0


def test_recall_and_mrr_by_hand():
    gold = {"a": [{1}, {2}], "b": [{7}], "c": [{9}]}
    ranked = {"a": [5, 1, 3, 2], "b": [7], "c": [0, 1]}
    r = recall_at_k(ranked, gold, (1, 2, 4))
    assert r[1] == pytest.approx(1 / 4)
    assert r[2] == pytest.approx(2 / 4)
    assert r[4] == pytest.approx(3 / 4)
    assert mean_reciprocal_rank(ranked, gold) == pytest.approx((1 / 2 + 1 + 0) / 3)


def test_prf_and_rates_edge_cases():
    assert precision_recall_f1(Confusion()) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    scores = precision_recall_f1(Confusion(tp=2, fp=2, fn=1))
    assert scores == pytest.approx({"precision": 0.5, "recall": 2 / 3, "f1": 4 / 7})
    assert error_rates(Confusion()) == {"smr": 0.0, "fpr": 0.0, "fnr": 0.0}


@settings(max_examples=50, deadline=None)
@given(
    probs=st.lists(st.floats(0, 1), min_size=1, max_size=30),
    labels=st.lists(st.booleans(), min_size=30, max_size=30),
    extra=st.integers(0, 3),
)
def test_choose_threshold_is_f1_optimal(probs, labels, extra):
    p = np.asarray(probs)
    y = np.asarray(labels[: len(p)], dtype=float)
    n_gold = int(y.sum()) + extra
    t = choose_threshold([p], [y], n_gold)

    def f1(threshold):
        pred = p >= threshold
        tp = (pred & (y == 1)).sum()
        return 2 * tp / (pred.sum() + n_gold) if n_gold else 0.0

    best = max(f1(c) for c in np.r_[p, 2.0])
    if y.sum() > 0:
        assert f1(t) == pytest.approx(best)


def test_feature_reranker_learns_and_round_trips():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, len(FEATURES)))
    y = (X[:, 1] + 0.5 * X[:, 2] > 0.3).astype(float)
    model = FeatureReranker().fit(X, y)
    p = model.predict_proba(X)
    assert ((p >= 0.5) == (y == 1)).mean() > 0.9
    clone = FeatureReranker.from_dict(model.to_dict())
    np.testing.assert_allclose(clone.predict_proba(X), p, rtol=1e-6)
    with pytest.raises(ValueError, match="both linked and unlinked"):
        FeatureReranker().fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="not trained"):
        FeatureReranker().predict_proba(X)
    bad = model.to_dict()
    bad["features"] = ["x"]
    with pytest.raises(ValueError, match="retrain"):
        FeatureReranker.from_dict(bad)
