"""The zero-training default of chiasmus_finder: hand-weighted rules over antimetaboles,
candidates on forms without a tagger, lemma pairs across POS tags."""

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_rhetoric.chiasmus.rules import (
    RULE_WEIGHTS,
    build_chiasmus_rules,
    rule_features,
    rule_scores,
)
from spacy_rhetoric.chiasmus.suggester import build_chiasmus_suggester

ASK_NOT = (
    "And so, my fellow Americans: ask not what your country can do for you; "
    "ask what you can do for your country."
)


def supports(doc, key="chiasmus_candidates"):
    return [[t.text for t in span._.chiasmus_support] for span in doc.spans[key]]


def test_blank_pipeline_ranks_the_antimetabole_first():
    nlp = spacy.blank("en")
    nlp.add_pipe("chiasmus_finder")
    doc = nlp(ASK_NOT)
    ranked = list(doc.spans["chiasmus_candidates"])
    assert supports(doc)[0] == ["country", "you", "you", "country"]
    assert ranked[0].label_ == "antimetabole" and ranked[0]._.is_antimetabole
    assert ranked[0]._.chiasmus_score == max(s._.chiasmus_score for s in ranked)
    # without POS only repeated forms pair up: every candidate is an antimetabole
    assert all(span.label_ == "antimetabole" for span in ranked)
    assert len(nlp("").spans["chiasmus_candidates"]) == 0


def test_hand_computed_score():
    nlp = spacy.blank("en")
    doc = nlp("Fair is foul and foul is fair")
    # central size 1 (-1), identical outer segments "is"/"is" (+5), one shared lemma
    # (+1), relative 1.0 (+1), a conjunction between B and B' (+2)
    assert rule_scores(doc, numpy.asarray([[0, 2, 4, 6]])).tolist() == [8.0]
    # "fair"/"is" do not repeat crosswise: two -20 penalties on top
    score = rule_scores(doc, numpy.asarray([[0, 1, 4, 6]]))[0]
    assert score < -30
    with pytest.raises(ValueError, match="unknown feature weights"):
        build_chiasmus_rules(weights={"nonsense": 1.0})
    model = build_chiasmus_rules(bias=8.0, weights={"has_conjunction": 0.0})
    probs = model.predict(([doc], [numpy.asarray([[0, 2, 4, 6]])]))
    assert float(probs[0, 0]) == pytest.approx(1 / (1 + numpy.exp(2.0)))
    assert set(model.attrs["weights"]) == set(RULE_WEIGHTS)


def test_stop_words_tagged_as_content_words():
    vocab = spacy.blank("en").vocab
    words = ["first", "the", "last", "and", "the", "last", "first"]
    pos = ["ADJ", "DET", "ADJ", "CCONJ", "DET", "ADJ", "ADJ"]
    tagged = Doc(vocab, words=words, pos=pos, lemmas=words)
    candidates = numpy.asarray([[0, 2, 5, 6], [1, 2, 5, 4]])
    values = rule_features(tagged, candidates)
    # "first", "last" are in spaCy's English stop list and tagged ADJ; "the" is a DET
    assert values["stop_a"].tolist() == [1.0, 1.0]
    assert values["stop_content_a"].tolist() == [1.0, 0.0]
    assert values["stop_content_b"].tolist() == [1.0, 1.0]
    # weight 0 by default: today's scores; a weight relieves only content stop words
    relieved = rule_scores(tagged, candidates, {"stop_content_a": 10.0})
    assert (relieved - rule_scores(tagged, candidates)).tolist() == [10.0, 0.0]
    # without POS no token counts as a content word
    blank = Doc(vocab, words=words)
    assert rule_features(blank, candidates)["stop_content_a"].tolist() == [0.0, 0.0]


def test_lemmas_case_insensitive_and_across_pos():
    vocab = spacy.blank("en").vocab
    words = ["Cold", "hearts", "and", "hearts", "cold"]
    doc = Doc(
        vocab,
        words=words,
        pos=["PROPN", "NOUN", "CCONJ", "NOUN", "ADJ"],
        lemmas=["Cold", "heart", "and", "heart", "cold"],
    )
    strict = build_chiasmus_suggester().suggest(doc)
    assert strict.indices.tolist() == []
    nlp = spacy.blank("en")
    finder = nlp.add_pipe("chiasmus_finder")
    candidates = finder.suggester.suggest(doc)
    assert candidates.indices.tolist() == [[0, 1, 3, 4]]
    assert candidates.antimetabole.tolist() == [True]
    finder(doc)
    assert doc.spans["chiasmus_candidates"][0]._.is_antimetabole


def scores(nlp, text):
    doc = nlp(text)
    return [span._.chiasmus_score for span in doc.spans["chiasmus_candidates"]]


def test_no_training_needed_and_serialisation(tmp_path):
    nlp = spacy.blank("en")
    finder = nlp.add_pipe("chiasmus_finder", config={"review_per_1000": None})
    doc = nlp.make_doc(ASK_NOT)
    optimizer = nlp.initialize(lambda: [Example(doc, doc.copy())])
    before = scores(nlp, ASK_NOT)
    assert len(before) > 3
    nlp.update([Example(nlp.make_doc(ASK_NOT), nlp.make_doc(ASK_NOT))], sgd=optimizer)
    assert scores(nlp, ASK_NOT) == before
    nlp.to_disk(tmp_path / "rules")
    loaded = spacy.load(tmp_path / "rules")
    assert scores(loaded, ASK_NOT) == before
    assert finder.model.attrs["needs_pos"] is False


def test_trained_scorer_still_needs_pos():
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "chiasmus_finder", config={"model": {"@architectures": "spacy-rhetoric.ChiasmusScorer.v1"}}
    )
    with pytest.raises(ValueError, match="needs token.pos_"):
        nlp(ASK_NOT)


def test_whitespace_never_takes_part():
    vocab = spacy.blank("en").vocab
    words = ["eat", "to", "live", "\n\n", "live", "to", "eat", "\n\n"]
    doc = Doc(
        vocab,
        words=words,
        spaces=[True, True, False, False, True, True, False, False],
        pos=["VERB", "PART", "VERB", "ADJ", "VERB", "PART", "VERB", "ADJ"],  # a tagger's slip
        lemmas=["eat", "to", "live", "\n\n", "live", "to", "eat", "\n\n"],
    )
    nlp = spacy.blank("en")
    finder = nlp.add_pipe("chiasmus_finder", config={"suggester": {"allowed_pos": None}})
    rows = finder.suggester.suggest(doc).indices.tolist()
    assert [0, 2, 4, 6] in rows
    assert not any(i in (3, 7) for row in rows for i in row)
