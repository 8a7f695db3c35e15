import pickle

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry
from thinc.api import fix_random_seed

from spacy_rhetoric.chiasmus import component as chiasmus_component
from spacy_rhetoric.chiasmus import metrics as chiasmus_metrics  # noqa: F401  (registers)
from spacy_rhetoric.chiasmus.component import SCORE_KEYS
from spacy_rhetoric.chiasmus.render import render
from spacy_rhetoric.chiasmus.spans import gold_candidates
from spacy_rhetoric.chiasmus.suggester import ChiasmusSuggester
from spacy_rhetoric.corpora.chiasmus import set_candidate

# (words, pos, lemmas, annotated candidates: (A, B, B', A') -> label)
DATA = [
    (
        "East is West and West is East".split(),
        "PROPN AUX PROPN CCONJ PROPN AUX PROPN".split(),
        "east be west and west be east".split(),
        {(0, 2, 4, 6): "True"},
    ),
    (
        "the cat saw the dog and the bird saw the fish".split(),
        "DET NOUN VERB DET NOUN CCONJ DET NOUN VERB DET NOUN".split(),
        "the cat see the dog and the bird see the fish".split(),
        {(1, 4, 7, 10): "False", (1, 2, 8, 10): "False"},
    ),
    (
        "a man loves a woman , a woman loves a man".split(),
        "DET NOUN VERB DET NOUN PUNCT DET NOUN VERB DET NOUN".split(),
        "a man love a woman , a woman love a man".split(),
        {(1, 4, 7, 10): "True", (1, 2, 8, 10): "False"},
    ),
    (
        "the king rules the land and the queen rules the sea".split(),
        "DET NOUN VERB DET NOUN CCONJ DET NOUN VERB DET NOUN".split(),
        "the king rule the land and the queen rule the sea".split(),
        {(1, 4, 7, 10): "False"},
    ),
]
POSITIVES = [(0, (0, 2, 4, 6)), (2, (1, 4, 7, 10))]


def make_doc(vocab, words, pos, lemmas, with_pos=True):
    return Doc(
        vocab,
        words=words,
        pos=pos if with_pos else None,
        lemmas=lemmas if with_pos else None,
    )


def make_examples(nlp):
    examples = []
    for words, pos, lemmas, candidates in DATA:
        reference = make_doc(nlp.vocab, words, pos, lemmas)
        for i, (positions, label) in enumerate(candidates.items()):
            set_candidate(reference, positions, label, span_id=f"g{i}")
        examples.append(Example(make_doc(nlp.vocab, words, pos, lemmas), reference))
    return examples


def input_docs(nlp):
    return [make_doc(nlp.vocab, w, p, lem) for w, p, lem, _ in DATA]


# the default scorer is the hand-weighted rules: the training tests use a trained one
TRAINABLE = {"@architectures": "spacy-rhetoric.ChiasmusScorer.v1"}


def make_nlp(**config):
    nlp = spacy.blank("en")
    config.setdefault("review_per_1000", None)  # every candidate, as in training
    nlp.add_pipe("chiasmus_finder", config={"model": TRAINABLE, **config})
    return nlp


def test_add_pipe_defaults():
    nlp = spacy.blank("en")
    finder = nlp.add_pipe("chiasmus_finder")
    assert finder.cfg["spans_key"] == "chiasmus"
    assert finder.cfg["support_key"] == "chiasmus_support"
    assert finder.cfg["candidates_key"] == "chiasmus_candidates"
    assert finder.cfg["positive_labels"] == ["a", "c", "fa", "fc", "True"]
    assert finder.cfg["threshold"] == 0.5
    assert isinstance(finder.suggester, ChiasmusSuggester)
    assert finder.suggester.window == 30
    weights = nlp.get_pipe_meta("chiasmus_finder").default_score_weights
    assert weights == {"chiasmus_ap": 1.0, "chiasmus_p": 0.0, "chiasmus_r": 0.0, "chiasmus_f": 0.0}
    suggester = registry.misc.get("spacy-rhetoric.chiasmus_suggester.v1")(window=9, depth=3)
    assert (suggester.window, suggester.depth) == (9, 3)


def test_bad_settings():
    with pytest.raises(ValueError, match="training_candidates"):
        make_nlp(training_candidates="everything")
    with pytest.raises(ValueError, match="both positive and ignored"):
        make_nlp(positive_labels=["a"], ignored_labels=["a"])
    with pytest.raises(ValueError, match="threshold"):
        make_nlp(threshold=1.5)
    with pytest.raises(ValueError, match="feature groups"):
        make_nlp(
            model={"@architectures": "spacy-rhetoric.ChiasmusScorer.v1", "feature_groups": ["X"]}
        )


def test_no_labels_raises():
    nlp = make_nlp()
    doc = make_doc(nlp.vocab, *DATA[0][:3])
    with pytest.raises(ValueError, match="no labels"):
        nlp.initialize(lambda: [Example(doc, doc.copy())])


def test_implicit_and_explicit_labels():
    nlp = make_nlp()
    nlp.initialize(lambda: make_examples(nlp))
    finder = nlp.get_pipe("chiasmus_finder")
    assert finder.labels == ("False", "True")
    assert finder.label_data == ["False", "True"]
    finder.initialize(lambda: make_examples(nlp), labels=["True", "Borderline", "False"])
    assert finder.labels == ("Borderline", "False", "True")


def test_missing_pos_and_lemma_errors():
    nlp = make_nlp()
    nlp.initialize(lambda: make_examples(nlp))
    words, pos, lemmas, _ = DATA[0]
    with pytest.raises(
        ValueError, match="chiasmus_finder needs token.pos_: add a tagger or morphologizer"
    ):
        nlp("East is West and West is East")
    with pytest.raises(ValueError, match="needs token.lemma_: add a lemmatizer"):
        nlp(Doc(nlp.vocab, words=words, pos=pos))
    # NORM needs no lemmatizer
    nlp2 = make_nlp(
        model={"@architectures": "spacy-rhetoric.ChiasmusScorer.v1", "lexical_attr": "NORM"}
    )
    nlp2.initialize(lambda: make_examples(nlp2))
    doc = nlp2(Doc(nlp2.vocab, words=words, pos=pos))
    assert len(doc.spans["chiasmus_candidates"]) == 1


def test_gold_candidates():
    nlp = spacy.blank("en")
    example = make_examples(nlp)[2]
    assert gold_candidates(example.reference) == [((1, 4, 7, 10), "True"), ((1, 2, 8, 10), "False")]
    assert gold_candidates(example.predicted) == []


@pytest.mark.parametrize("training_candidates", ["annotated", "suggested"])
def test_overfitting_IO(tmp_path, training_candidates):
    fix_random_seed(0)
    nlp = make_nlp(
        training_candidates=training_candidates,
        model={"@architectures": "spacy-rhetoric.ChiasmusScorer.v1", "hidden_width": 8},
    )
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    first = None
    for _ in range(60):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        first = losses["chiasmus_finder"] if first is None else first
    assert losses["chiasmus_finder"] < first / 3
    docs = [nlp(doc) for doc in input_docs(nlp)]
    found = [[(s.start, s.end, s.label_) for s in doc.spans["chiasmus"]] for doc in docs]
    assert found[0] == [(0, 7, "antimetabole")]
    assert (1, 11, "antimetabole") in found[2]
    assert all(start != 1 for start, _, _ in found[1] + found[3])  # the parallelisms
    # every candidate is scored, best first, and the positives rank above the negatives
    ranked = docs[2].spans["chiasmus_candidates"]
    assert [s.id_ for s in ranked] == [f"c{i}" for i in range(len(ranked))]
    scores = [s._.chiasmus_score for s in ranked]
    assert scores == sorted(scores, reverse=True)
    best = ranked[0]
    assert [(w.text, w.label_) for w in best._.chiasmus_support] == [
        ("man", "A"),
        ("woman", "B"),
        ("woman", "B'"),
        ("man", "A'"),
    ]
    assert best._.is_antimetabole is True
    by_support = {
        tuple(w.start for w in s._.chiasmus_support): s._.chiasmus_score
        for s in docs[1].spans["chiasmus_candidates"]
    }
    assert by_support[(1, 4, 7, 10)] < 0.5 and by_support[(1, 2, 8, 10)] < 0.5
    scores_ = nlp.evaluate(examples)
    for key in SCORE_KEYS:
        assert key in scores_
    assert scores_["chiasmus_ap"] == 1.0
    # disk round trip
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    again = [loaded(doc) for doc in input_docs(loaded)]
    for old, new in zip(docs, again):
        assert [s._.chiasmus_score for s in old.spans["chiasmus_candidates"]] == pytest.approx(
            [s._.chiasmus_score for s in new.spans["chiasmus_candidates"]]
        )
    # pickling
    unpickled = pickle.loads(pickle.dumps(nlp))
    doc = unpickled(input_docs(unpickled)[0])
    assert [(s.start, s.end) for s in doc.spans["chiasmus"]] == [(0, 7)]
    # two processes
    multi = list(loaded.pipe(input_docs(loaded) * 2, n_process=2, batch_size=2))
    assert [[(s.start, s.end, s.label_) for s in d.spans["chiasmus"]] for d in multi[:4]] == found
    # displaCy
    html = render(docs[0])
    assert "C1 antimetabole" in html and "C1 B" in html and "West" in html


def test_empty_doc_and_threshold():
    fix_random_seed(0)
    nlp = make_nlp(threshold=1.0, max_candidates=2, candidates_key=None)
    nlp.initialize(lambda: make_examples(nlp))
    empty = nlp(Doc(nlp.vocab, words=[]))
    assert len(empty.spans["chiasmus"]) == 0
    assert "chiasmus_candidates" not in empty.spans
    docs = list(nlp.pipe([Doc(nlp.vocab, words=[]), input_docs(nlp)[1]]))
    assert len(docs[1].spans["chiasmus"]) == 0
    assert len(docs[1].spans["chiasmus_support"]) == 0


def test_depth3_suggester():
    fix_random_seed(0)
    nlp = make_nlp(
        suggester={"@misc": "spacy-rhetoric.chiasmus_suggester.v1", "depth": 3, "allowed_pos": None}
    )
    words = "a b c c b a".split()
    doc = Doc(
        nlp.vocab, words=words, pos=["NOUN", "VERB", "ADJ", "ADJ", "VERB", "NOUN"], lemmas=words
    )
    reference = doc.copy()
    set_candidate(reference, (0, 1, 4, 5), "x")  # a depth-2 annotation: not a depth-3 candidate
    finder = nlp.get_pipe("chiasmus_finder")
    finder.initialize(lambda: [Example(doc, reference)])
    out = nlp(doc.copy())
    (span,) = out.spans["chiasmus_candidates"]
    assert [w.label_ for w in span._.chiasmus_support] == ["A", "B", "C", "C'", "B'", "A'"]
    assert span.label_ == "antimetabole"


def test_score_candidates_matches_predict():
    fix_random_seed(0)
    nlp = make_nlp()
    nlp.initialize(lambda: make_examples(nlp))
    finder = nlp.get_pipe("chiasmus_finder")
    docs = input_docs(nlp)
    candidates, scores = finder.predict(docs)
    again = finder.score_candidates(docs, [c.indices for c in candidates], batch_size=1)
    for a, b in zip(scores, again):
        numpy.testing.assert_allclose(a, b, rtol=1e-5)
    assert chiasmus_component.CHIASMUS == "chiasmus"
