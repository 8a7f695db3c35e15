import random

import numpy
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_rhetoric.parallelism.features import (
    N_BUCKETS,
    N_FEATURES,
    language_features,
    nearest_repeats,
    repetition_features,
)


def brute_force(keys):
    n = len(keys)
    back = [next((i - j for j in range(i - 1, -1, -1) if keys[j] == keys[i]), 0) for i in range(n)]
    ahead = [next((j - i for j in range(i + 1, n) if keys[j] == keys[i]), 0) for i in range(n)]
    return numpy.array([back, ahead])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=40))
def test_nearest_repeats_matches_brute_force(keys):
    keys = numpy.array(keys, dtype="uint64")
    assert (nearest_repeats(keys) == brute_force(list(keys))).all()


def test_repetition_features_values():
    nlp = spacy.blank("la")
    doc = nlp("amare debetis , ut amare possitis .")
    features = repetition_features(doc)
    assert features.shape == (len(doc), N_FEATURES)
    # "amare" at 4 repeats "amare" at 0: distance 4 -> bucket 2 (3-4) of the form/back block
    assert features[4, 2] == 1.0 and features[4, :N_BUCKETS].sum() == 1.0
    # ... and 0 sees it ahead (form/ahead block)
    assert features[0, N_BUCKETS + 2] == 1.0
    # "debetis" / "possitis": no shared form, but the ending block marks "tis" ahead at distance 4
    assert features[1, : 2 * N_BUCKETS].sum() == 0.0
    assert features[1, 3 * N_BUCKETS + 2] == 1.0
    # punctuation flag
    assert features[2, -1] == 1.0 and features[0, -1] == 0.0
    assert repetition_features(nlp("")).shape == (0, N_FEATURES)


def test_language_features():
    nlp = spacy.blank("xx")
    docs = [nlp("a b c"), nlp("d e"), nlp("f"), nlp("")]
    docs[0].user_data["lang"] = "la"
    docs[1].user_data["lang"] = "zh"
    docs[2].user_data["lang"] = "en"  # not one of the head's: unknown, all zeros
    rows = language_features(docs, ["la", "zh"])
    assert [r.shape for r in rows] == [(3, 2), (2, 1 + 1), (1, 2), (0, 2)]
    assert rows[0].tolist() == [[1.0, 0.0]] * 3
    assert rows[1].tolist() == [[0.0, 1.0]] * 2
    assert rows[2].tolist() == [[0.0, 0.0]]
    # doc.lang_ where the doc states no language
    assert language_features([spacy.blank("zh")("天")], ["la", "zh"])[0].tolist() == [[0.0, 1.0]]
    # dropped: every doc reads as unknown; a fraction of the docs at 0 < drop < 1
    assert all(not r.any() for r in language_features(docs, ["la", "zh"], drop=1.0))
    random.seed(0)
    many = [nlp("a")] * 2000
    for doc in many:
        doc.user_data["lang"] = "la"
    kept = sum(r.any() for r in language_features(many, ["la", "zh"], drop=0.3))
    assert 1300 < kept < 1500
