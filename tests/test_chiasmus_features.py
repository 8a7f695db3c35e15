import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_rhetoric.chiasmus.features import (
    D_FEATURES,
    E_FEATURES,
    L_FEATURES,
    DocArrays,
    candidate_features,
    check_doc,
    feature_names,
    token_vectors,
)

WORDS = "We do not live to eat , but we eat to live .".split()
POS = "PRON AUX PART VERB PART VERB PUNCT CCONJ PRON VERB PART VERB PUNCT".split()
LEMMAS = "we do not live to eat , but we eat to live .".split()
HEADS = [3, 3, 3, 3, 5, 3, 3, 9, 9, 3, 11, 9, 3]
DEPS = "nsubj aux neg ROOT aux xcomp punct cc nsubj conj aux xcomp punct".split()
CANDIDATE = (3, 5, 9, 11)  # live eat , eat live


def make_doc(nlp, parsed=False, **kwargs):
    return Doc(
        nlp.vocab,
        words=WORDS,
        pos=POS,
        lemmas=LEMMAS,
        heads=HEADS if parsed else None,
        deps=DEPS if parsed else None,
        **kwargs,
    )


def features(doc, candidates=(CANDIDATE,), groups=("D", "L", "E"), **kwargs):
    matrix = candidate_features(doc, numpy.asarray(candidates), groups=groups, **kwargs)
    return [dict(zip(feature_names(groups), row.tolist())) for row in matrix]


def test_names_and_shapes():
    assert feature_names() == list(D_FEATURES + L_FEATURES + E_FEATURES)
    assert feature_names(["L"]) == list(L_FEATURES)
    with pytest.raises(ValueError):
        feature_names(["D", "D"])
    nlp = spacy.blank("en")
    doc = make_doc(nlp)
    assert candidate_features(doc, numpy.zeros((0, 4), dtype=int)).shape == (
        0,
        len(feature_names()),
    )


def test_d_and_l_features_by_hand():
    nlp = spacy.blank("en")
    (f,) = features(make_doc(nlp))
    assert f["size"] == 8
    assert f["central_size"] == 3  # , but we
    assert f["size_difference"] == 0
    assert f["comma_central"] == 1 and f["comma_outer"] == 0
    assert f["punct_outer"] == 0 and f["punct_central"] == 0
    assert f["conjunction_central"] == 1  # but
    assert f["negation_outer"] == 0 and f["negation_central"] == 0
    assert f["inversion_clue"] == 0
    assert f["identical_outer"] == 1  # "to" and "to"
    assert f["shared_outer"] == 1 and f["shared_outer_relative"] == 1.0
    assert f["repeat_a_inside"] == 0 and f["repeat_b_inside"] == 0
    assert f["repeat_context"] == 0
    assert f["adjacent_a_b"] == 0 and f["adjacent_b_b2"] == 0
    assert f["sentence_breaks"] == 0  # no sentence-final punctuation inside
    assert f["line_breaks"] == 0 and f["paragraph_breaks"] == 0
    assert f["same_pos_a_b"] == 1
    assert f["stop_a"] == 0.0
    # no parse, no labels
    assert f["has_dep_labels"] == 0 and f["has_heads"] == 0 and f["same_dep_a_b2"] == 0
    # lemma pairs: (A, A'), (B, B') equal, the cross pairs not
    assert [f[name] for name in L_FEATURES] == [1, 1, 0, 0, 0, 0, 1]
    # no vectors
    assert f["has_vectors"] == 0 and f["cos_a_a2"] == 0


def test_negation_and_breaks():
    nlp = spacy.blank("en")
    doc = make_doc(nlp)
    (f,) = features(doc, [(0, 3, 9, 11)])  # We ... live | we ... live (not an inversion)
    assert f["negation_outer"] == 1  # not, between A and B
    assert f["lemma_a_a2"] == 0 and f["lemma_a_b2"] == 0
    assert f["repeat_b_inside"] == 0
    # sentence boundaries from the doc when it has them
    starts = [True] + [False] * 6 + [True] + [False] * 5
    (g,) = features(make_doc(nlp, sent_starts=starts))
    assert g["sentence_breaks"] == 1 and g["sentence_breaks_central"] == 1
    # line and paragraph breaks
    words = ["a", "\n", "b", "\n\n", "b", "a"]
    doc = Doc(
        nlp.vocab, words=words, pos=["NOUN", "SPACE", "VERB", "SPACE", "VERB", "NOUN"], lemmas=words
    )
    (h,) = features(doc, [(0, 2, 4, 5)])
    assert (
        h["line_breaks"] == 2 and h["paragraph_breaks"] == 1 and h["paragraph_breaks_central"] == 1
    )


def test_dependency_features():
    nlp = spacy.blank("en")
    (f,) = features(make_doc(nlp, parsed=True))
    assert f["has_dep_labels"] == 1 and f["has_heads"] == 1
    assert f["same_dep_a_a2"] == 0  # ROOT, xcomp
    assert f["same_dep_b_b2"] == 0  # xcomp, conj
    assert f["same_head_b_a2"] == 0
    # labels without heads from user_data (as the German converter keeps them)
    doc = make_doc(nlp)
    doc.user_data["dep"] = ["x"] * 3 + ["oa", "x", "sb", "x", "x", "x", "sb", "x", "oa", "x"]
    (g,) = features(doc)
    assert g["has_dep_labels"] == 1 and g["has_heads"] == 0
    assert g["same_dep_a_a2"] == 1 and g["same_dep_b_b2"] == 1 and g["same_dep_a_b2"] == 0


def test_vectors():
    nlp = spacy.blank("en")
    for word, vector in (("live", [1, 0, 0]), ("eat", [0, 1, 0]), ("we", [1, 1, 0])):
        nlp.vocab.set_vector(word, numpy.asarray(vector, dtype="float32"))
    doc = make_doc(nlp)
    (f,) = features(doc)
    assert f["has_vectors"] == 1
    assert f["cos_a_a2"] == pytest.approx(1.0) and f["cos_a_b"] == pytest.approx(0.0)
    (g,) = features(doc, vectors="none")
    assert g["has_vectors"] == 0 and g["cos_a_a2"] == 0
    # the tensor source
    blank = spacy.blank("en")
    doc = make_doc(blank)
    doc.tensor = numpy.tile(numpy.asarray([[1.0, 0.0], [0.0, 1.0]], dtype="float32"), (7, 1))[
        : len(doc)
    ]
    (h,) = features(doc, vectors="tensor")
    assert h["has_vectors"] == 1 and h["cos_a_a2"] == pytest.approx(1.0)  # positions 3, 11: odd
    assert h["cos_a_b"] == pytest.approx(1.0)  # 3, 5
    assert token_vectors(doc, "static") is None
    with pytest.raises(ValueError):
        token_vectors(doc, "glove")


def test_vectorised_equals_one_by_one_and_depth3():
    nlp = spacy.blank("en")
    doc = make_doc(nlp, parsed=True)
    candidates = [(0, 3, 9, 11), (3, 5, 9, 11), (1, 2, 10, 12), (3, 4, 10, 11)]
    arrays = DocArrays(doc)
    together = candidate_features(doc, numpy.asarray(candidates), arrays=arrays)
    for row, candidate in zip(together, candidates):
        alone = candidate_features(doc, numpy.asarray([candidate]))
        numpy.testing.assert_allclose(row, alone[0])
    # depth 3: the outer four roles are used
    deep = candidate_features(doc, numpy.asarray([(3, 4, 5, 9, 10, 11)]))
    numpy.testing.assert_allclose(
        deep[0], candidate_features(doc, numpy.asarray([(3, 4, 10, 11)]))[0]
    )


def test_check_doc():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="needs token.pos_"):
        check_doc(nlp("live to eat"))
    with pytest.raises(ValueError, match="needs token.lemma_"):
        check_doc(Doc(nlp.vocab, words=["a"], pos=["NOUN"]), name="finder")
    check_doc(Doc(nlp.vocab, words=["a"], pos=["NOUN"]), lexical_attr="NORM")
    check_doc(nlp(""))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("a b c d e".split()), min_size=4, max_size=40), st.data())
def test_shared_outer_counts_against_brute_force(words, data):
    """shared_outer / shared_bigrams_outer (computed by binary search over occurrence
    keys) equal their definitions counted pair by pair."""
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=words, pos=["NOUN"] * len(words), lemmas=words)
    n = len(words)
    rows = []
    for _ in range(8):
        a, b, b2, a2 = sorted(data.draw(st.lists(st.integers(0, n - 1), min_size=4,
                                                  max_size=4, unique=True)))  # fmt: skip
        rows.append((a, b, b2, a2))
    got = features(doc, rows, groups=("D",))
    for (a, b, b2, a2), found in zip(rows, got):
        right = words[b2 + 1 : a2]
        shared = sum(w in right for w in words[a + 1 : b])
        right_bigrams = {tuple(words[p : p + 2]) for p in range(b2 + 1, a2 - 1)}
        bigrams = sum(tuple(words[p : p + 2]) in right_bigrams for p in range(a + 1, b - 1))
        assert found["shared_outer"] == shared
        assert found["shared_bigrams_outer"] == bigrams


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from("a b c d e f".split()), min_size=1, max_size=40), st.data())
def test_occurrence_lookup_equals_binary_search_and_brute_force(words, data):
    """DocArrays counts occurrences (of lexical and bigram codes) in [lo, hi) by a
    prefix table where it is small, else by binary search: both equal the count itself,
    for bounds outside the doc and empty ranges too."""
    from spacy_rhetoric.chiasmus import features as module

    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=words, pos=["NOUN"] * len(words), lemmas=words)
    n = len(words)
    arrays = module.DocArrays(doc)
    k = 12
    lo = numpy.asarray(data.draw(st.lists(st.integers(-5, n + 5), min_size=k, max_size=k)))
    hi = numpy.asarray(data.draw(st.lists(st.integers(-5, n + 5), min_size=k, max_size=k)))
    for codes, bigrams in ((arrays.lex_rank, False), (arrays.bigram, True)):
        top = max(int(codes.max()), 0)
        ranks = numpy.asarray(data.draw(st.lists(st.integers(0, top), min_size=k, max_size=k)))
        table = arrays.occurrences(ranks, lo, hi, bigrams)
        expected = [
            sum(codes[p] == r for p in range(max(a, 0), min(b, n)))
            for r, a, b in zip(ranks, lo, hi)
        ]
        assert table.tolist() == expected
        searched = module.DocArrays(doc)
        searched._tables = {False: None, True: None}  # as if the tables were too large
        assert searched.occurrences(ranks, lo, hi, bigrams).tolist() == expected
