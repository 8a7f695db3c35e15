import pickle

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc

from spacy_rhetoric.treebank.component import DisplacementAnalyzer  # noqa: F401  (registers)

WORDS = ["The", "cat", "sat", ".", "It", "slept", "."]
HEADS = [1, 2, 2, 2, 5, 5, 5]
DEPS = ["det", "nsubj", "ROOT", "punct", "nsubj", "ROOT", "punct"]


@Language.component("test_toy_parser")
def toy_parser(doc: Doc) -> Doc:
    """Stands in for a parser: the second token heads every other token."""
    n = len(doc)
    heads = [1] * n if n > 1 else [0] * n
    deps = ["ROOT" if i == heads[i] else "dep" for i in range(n)]
    return Doc(doc.vocab, words=[t.text for t in doc], heads=heads, deps=deps)


@pytest.fixture
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("displacement_analyzer")
    return nlp


def parsed_doc(nlp):
    return Doc(nlp.vocab, words=WORDS, heads=HEADS, deps=DEPS)


def test_add_pipe_and_annotations(nlp):
    analyzer = nlp.get_pipe("displacement_analyzer")
    assert isinstance(analyzer, DisplacementAnalyzer)
    doc = analyzer(parsed_doc(nlp))
    assert [t._.displacement for t in doc] == [-1, -1, None, 1, -1, None, 1]
    sents = list(doc.sents)
    assert [s._.med for s in sents] == [pytest.approx(-1 / 3), pytest.approx(0.0)]
    # edges: -1 -1 1 -1 1 => -1/5
    assert doc._.med == pytest.approx(-0.2)


def test_doc_med_by_sentences():
    nlp = spacy.blank("en")
    analyzer = nlp.add_pipe("displacement_analyzer", config={"doc_med": "sentences"})
    doc = analyzer(parsed_doc(nlp))
    assert doc._.med == pytest.approx((-1 / 3 + 0.0) / 2)
    with pytest.raises(ValueError, match="doc_med"):
        nlp.add_pipe("displacement_analyzer", name="bad", config={"doc_med": "tokens"})


def test_single_token_sentence(nlp):
    doc = Doc(nlp.vocab, words=["Hi", "."], heads=[0, 1], deps=["ROOT", "ROOT"])
    doc = nlp.get_pipe("displacement_analyzer")(doc)
    assert [s._.med for s in doc.sents] == [None, None]
    assert doc._.med is None
    assert [t._.displacement for t in doc] == [None, None]


def test_no_parse_error_names_component(nlp):
    with pytest.raises(ValueError, match="displacement_analyzer needs a dependency parse"):
        nlp("No parser here.")


def test_empty_doc(nlp):
    doc = nlp("")
    assert len(doc) == 0 and doc._.med is None


def test_pipeline_with_parser_and_pipe_n_process():
    nlp = spacy.blank("en")
    nlp.add_pipe("test_toy_parser")
    nlp.add_pipe("displacement_analyzer")
    texts = ["a b c", "x y", "one two three four"] * 4
    single = [[t._.displacement for t in doc] for doc in nlp.pipe(texts)]
    assert single[0] == [-1, None, 1]
    multi = [[t._.displacement for t in doc] for doc in nlp.pipe(texts, n_process=2)]
    assert multi == single
    meds = [doc._.med for doc in nlp.pipe(texts, n_process=2)]
    assert meds[:3] == [pytest.approx(0.0), pytest.approx(-1.0), pytest.approx(2 / 3)]


def test_pickling(nlp):
    analyzer = nlp.get_pipe("displacement_analyzer")
    restored = pickle.loads(pickle.dumps(analyzer))
    assert restored.cfg == analyzer.cfg and restored.name == analyzer.name
    doc = restored(parsed_doc(nlp))
    doc2 = pickle.loads(pickle.dumps(doc))
    assert [t._.displacement for t in doc2] == [-1, -1, None, 1, -1, None, 1]
    assert doc2._.med == pytest.approx(-0.2)
    nlp2 = pickle.loads(pickle.dumps(nlp))
    assert nlp2.pipe_names == ["displacement_analyzer"]


def test_to_disk_round_trip(nlp, tmp_path):
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.pipe_names == ["displacement_analyzer"]
    assert loaded.get_pipe("displacement_analyzer").cfg == {"doc_med": "edges"}
    assert loaded(parsed_doc(loaded))._.med == pytest.approx(-0.2)
