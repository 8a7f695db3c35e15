import numpy
import spacy

from spacy_rhetoric.parallelism.types import (
    fit_type_classifier,
    inversion_features,
    predict_type,
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
