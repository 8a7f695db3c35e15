from itertools import combinations

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_rhetoric.corpora.parallelisms import CHIASTIC, SYNCHYSTIC, set_parallelisms
from spacy_rhetoric.parallelism.render import (
    displacy_colors,
    label_colors,
    parallelism_render_data,
    render,
)
from spacy_rhetoric.parallelism.types import (
    ALIGNMENT_FEATURES,
    N_ALIGNMENT_FEATURES,
    align,
    alignment_features,
    count_crossings,
    encoder_similarity,
    fit_type_classifier,
    inversion_features,
    lexical_matrices,
    order_scores,
    predict_type,
    type_features,
)


def test_inversion_features_order():
    nlp = spacy.blank("la")
    doc = nlp("rex magnus deus pius , pius deus magnus rex")
    chiastic = inversion_features([doc[0:4], doc[5:9]])
    doc2 = nlp("rex magnus deus pius , rex magnus deus pius")
    synchystic = inversion_features([doc2[0:4], doc2[5:9]])
    # 4 matched pairs each; all 6 comparisons discordant vs concordant
    assert list(chiastic[:3]) == [4, 0, 6] and chiastic[3] == 1.0 and chiastic[4] == 1.0
    assert list(synchystic[:3]) == [4, 6, 0] and synchystic[3] == -1.0 and synchystic[4] == 0.0


def test_fit_and_predict():
    nlp = spacy.blank("la")
    inverted = nlp("a b c , c b a")
    same = nlp("a b c , a b c")
    X = numpy.stack(
        [inversion_features([inverted[0:3], inverted[4:7]])] * 3
        + [inversion_features([same[0:3], same[4:7]])] * 10
    )
    y = numpy.array([True] * 3 + [False] * 10)
    weights = fit_type_classifier(X, y)
    assert predict_type(weights, [inverted[0:3], inverted[4:7]]) == "chiastic"
    assert predict_type(weights, [same[0:3], same[4:7]]) == "synchystic"
    assert fit_type_classifier(X, numpy.zeros(13, dtype=bool)) == []
    assert predict_type([], [same[0:3], same[4:7]]) == "synchystic"


def test_alignment_orders_hand_built_pairs():
    nlp = spacy.blank("la")
    chiastic = nlp("castis mentibus , mentibus castis")
    same = nlp("castis mentibus , castis mentibus")
    for doc, expected in ((chiastic, CHIASTIC), (same, SYNCHYSTIC)):
        first, second = doc[0:2], doc[3:5]
        identity, ending, pos = lexical_matrices(first, second)
        sim = identity + 0.5 * ending
        preserving, reversing = order_scores(sim)
        concordant, discordant = count_crossings(align(sim))
        if expected == CHIASTIC:
            assert (preserving, reversing) == (1.0, 2.0) and (concordant, discordant) == (0, 1)
        else:
            assert (preserving, reversing) == (2.0, 1.0) and (concordant, discordant) == (1, 0)
        features = dict(zip(ALIGNMENT_FEATURES, alignment_features([first, second])))
        sign = 1 if expected == CHIASTIC else -1
        assert features["lexical_margin"] == sign * 0.5 and features["tau"] == sign
        assert features["ends_crossed"] == sign * 2.0 and features["bias"] == 1.0


def test_alignment_uses_encoder_vectors():
    nlp = spacy.blank("la")
    doc = nlp("magna pernicies , fructus nullus")
    first, second = doc[0:2], doc[3:5]
    # noun-like and adjective-like directions: ADJ NOUN / NOUN ADJ is chiastic
    adj, noun = numpy.array([1.0, 0.0, 0.2]), numpy.array([0.0, 1.0, 0.2])
    vectors = [numpy.stack([adj, noun]), numpy.stack([noun, adj])]
    features = dict(zip(ALIGNMENT_FEATURES, alignment_features([first, second], vectors)))
    lexical = dict(zip(ALIGNMENT_FEATURES, alignment_features([first, second])))
    assert features["encoder_margin"] > 0 and features["ends_crossed"] > 0
    assert lexical["encoder_margin"] == 0.0 and lexical["tau"] == 0.0
    sim = encoder_similarity(first, second, *vectors)
    assert sim.shape == (2, 2) and sim[0, 1] > sim[0, 0]


def test_alignment_features_punctuation_and_more_branches():
    nlp = spacy.blank("la")
    doc = nlp("a b , ; , a b , a b")
    empty = alignment_features([doc[0:2], doc[2:5]])
    assert empty.shape == (N_ALIGNMENT_FEATURES,) and not empty[:9].any()
    three = dict(zip(ALIGNMENT_FEATURES, alignment_features([doc[0:2], doc[5:7], doc[8:10]])))
    assert three["more_branches"] == 1.0 and three["tau"] == -1.0


def _naive_crossings(pairs):
    concordant = discordant = 0
    for (i1, j1), (i2, j2) in combinations(pairs, 2):
        if i1 == i2 or j1 == j2:
            continue
        if (i1 < i2) == (j1 < j2):
            concordant += 1
        else:
            discordant += 1
    return concordant, discordant


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=12))
def test_count_crossings_matches_naive(pairs):
    assert count_crossings(pairs) == _naive_crossings(pairs)


def _naive_monotone(gain):
    n, m = gain.shape
    best = 0.0
    for k in range(1, min(n, m) + 1):
        for rows in combinations(range(n), k):
            for cols in combinations(range(m), k):
                best = max(best, sum(max(gain[i, j], 0.0) for i, j in zip(rows, cols)))
    return best


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.integers(1, 4).flatmap(
            lambda m: st.lists(
                st.floats(-1, 2, allow_nan=False), min_size=n * m, max_size=n * m
            ).map(lambda v: numpy.array(v).reshape(n, m))
        )
    )
)
def test_order_scores_match_enumeration(sim):
    preserving, reversing = order_scores(sim)
    assert abs(preserving - _naive_monotone(sim)) < 1e-9
    assert abs(reversing - _naive_monotone(sim[:, ::-1])) < 1e-9


def test_predict_type_dispatches_on_typer():
    nlp = spacy.blank("la")
    doc = nlp("a b c , c b a")
    branches = [doc[0:3], doc[4:7]]
    weights = numpy.zeros(N_ALIGNMENT_FEATURES)
    weights[ALIGNMENT_FEATURES.index("tau")] = 1.0
    assert predict_type(list(weights), branches) == CHIASTIC
    assert predict_type(list(weights), branches, typer="alignment") == CHIASTIC
    # six weights: the inversion typer of older pipelines
    assert predict_type([0, 0, 1.0, 0, 0, -0.5], branches) == CHIASTIC
    with pytest.raises(ValueError, match="typer"):
        type_features("other", branches)


def test_render_labels_and_colours():
    nlp = spacy.blank("la")
    doc = nlp("castis mentibus , affectibus sanctis ; in caelo , in terra")
    set_parallelisms(doc, [([(0, 2), (3, 5)], CHIASTIC, 1), ([(6, 8), (9, 11)], SYNCHYSTIC, 1)])
    labels = [span["label"] for span in parallelism_render_data(doc)["spans"]]
    assert labels == ["P1 chiastic", "P1 chiastic", "P2 synchystic", "P2 synchystic"]
    palette = displacy_colors()
    assert label_colors(labels) == {
        "P1 chiastic": palette["CHIASTIC"],
        "P2 synchystic": palette["SYNCHYSTIC"],
    }
    by_parallelism = label_colors(labels, "parallelism")
    assert by_parallelism["P1 chiastic"] != by_parallelism["P2 synchystic"]
    assert label_colors(["P3 parallelism"]) == {"P3 parallelism": palette["PARALLELISM"]}
    html = render(doc)
    assert "P1 chiastic" in html and palette["CHIASTIC"] in html
    with pytest.raises(ValueError, match="color_by"):
        label_colors(labels, "colour")
