import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, SpanGroup
from spacy.training import Example

from spacy_rhetoric.chiasmus.metrics import (
    average_precision,
    chiasmus_ranking,
    score_chiasmus,
)
from spacy_rhetoric.chiasmus.spans import POSITIONS_ATTR, SCORES_ATTR
from spacy_rhetoric.corpora.chiasmus import set_candidate


def test_average_precision_by_hand():
    # relevant at ranks 1 and 3 of 4: (1/1 + 2/3) / 2
    assert average_precision([0.9, 0.8, 0.7, 0.1], [1, 0, 1, 0]) == pytest.approx(5 / 6)
    # a third positive was never ranked: (1 + 2/3) / 3
    assert average_precision([0.9, 0.8, 0.7, 0.1], [1, 0, 1, 0], n_relevant=3) == pytest.approx(
        5 / 9
    )
    # order of the input does not matter, only the scores
    assert average_precision([0.1, 0.7, 0.8, 0.9], [0, 1, 0, 1]) == pytest.approx(5 / 6)
    # a tie is one step: positive and negative tied first -> P = 1/2 at R = 1
    assert average_precision([0.5, 0.5], [1, 0]) == pytest.approx(0.5)
    assert average_precision([], []) == 0.0
    assert average_precision([0.3], [0]) == 0.0
    with pytest.raises(ValueError):
        average_precision([0.3], [1, 0])
    with pytest.raises(ValueError):
        average_precision([0.3, 0.2], [1, 1], n_relevant=1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=1, max_size=30))
def test_average_precision_equals_sklearn(items):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    scores = [s / 5 for s, _ in items]
    labels = [r for _, r in items]
    if not any(labels):
        assert average_precision(scores, labels) == 0.0
        return
    expected = sklearn_metrics.average_precision_score(labels, scores)
    assert average_precision(scores, labels) == pytest.approx(expected)


def _example(vocab, gold, predicted):
    """gold: [(positions, label)]; predicted: [(positions, score)]"""
    words = [f"w{i}" for i in range(12)]
    reference = Doc(vocab, words=words)
    for i, (positions, label) in enumerate(gold):
        set_candidate(reference, positions, label, span_id=f"g{i}")
    doc = Doc(vocab, words=words)
    ids = [f"c{i}" for i in range(len(predicted))]
    doc.spans["chiasmus_candidates"] = SpanGroup(
        doc,
        attrs={
            SCORES_ATTR: {i: s for i, (_, s) in zip(ids, predicted)},
            POSITIONS_ATTR: {i: list(p) for i, (p, _) in zip(ids, predicted)},
        },
        spans=[doc[p[0] : p[-1] + 1] for p, _ in predicted],
    )
    return Example(doc, reference)


def test_score_chiasmus():
    vocab = spacy.blank("en").vocab
    examples = [
        _example(
            vocab,
            [((0, 1, 2, 3), "True"), ((4, 5, 6, 7), "False"), ((0, 2, 5, 9), "fa")],
            [((0, 1, 2, 3), 0.9), ((4, 5, 6, 7), 0.8), ((1, 2, 3, 4), 0.95), ((0, 2, 5, 9), 0.99)],
        ),
        # a positive that was never suggested, and one ranked low
        _example(
            vocab,
            [((0, 1, 2, 3), "c"), ((2, 3, 4, 5), "a"), ((3, 4, 5, 6), "x")],
            [((2, 3, 4, 5), 0.3), ((3, 4, 5, 6), 0.6)],
        ),
    ]
    # annotated only, fa positive: ranking fa .99 (+), T .9 (+), F .8, x .6, a .3 (+); 4 gold
    scores = score_chiasmus(examples, positive_labels=["True", "a", "c", "fa"])
    assert scores["chiasmus_ap"] == pytest.approx((1 + 1 + 3 / 5) / 4)
    assert scores["chiasmus_p"] == pytest.approx(2 / 4)  # >= 0.5: fa, T, F, x
    assert scores["chiasmus_r"] == pytest.approx(2 / 4)
    # fa ignored: T .9 (+), F .8, x .6, a .3 (+); 3 gold
    scores = score_chiasmus(examples, positive_labels=["True", "a", "c"], ignored_labels=["fa"])
    assert scores["chiasmus_ap"] == pytest.approx((1 + 2 / 4) / 3)
    # every suggested candidate ranked: (1,2,3,4) .95 is a negative
    _, relevant, n_gold = chiasmus_ranking(
        examples,
        positive_labels=["True", "a", "c"],
        ignored_labels=["fa"],
        evaluate_annotated_only=False,
    )
    assert relevant.tolist() == [True, False, False, True, False] and n_gold == 3
    assert set(scores) == {"chiasmus_ap", "chiasmus_p", "chiasmus_r", "chiasmus_f"}
    assert numpy.isfinite(list(scores.values())).all()
