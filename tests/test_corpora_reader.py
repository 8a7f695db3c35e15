import spacy

from spacy_rhetoric.corpora import reader as reader_module
from spacy_rhetoric.corpora.reader import create_corpus_reader


def test_corpus_reader_converts_once(fixtures_dir, monkeypatch):
    calls = []
    original = reader_module.convert

    def counting_convert(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(reader_module, "convert", counting_convert)
    nlp = spacy.blank("la")
    read = create_corpus_reader("asp", fixtures_dir / "asp", "test")
    first = [(eg.predicted.text, len(eg.reference._.parallelisms)) for eg in read(nlp)]
    second = [(eg.predicted.text, len(eg.reference._.parallelisms)) for eg in read(nlp)]
    assert len(calls) == 1
    assert first == second and len(first) == 2
    # predicted docs carry the gold tokens and no annotation
    example = next(iter(read(nlp)))
    assert [t.text for t in example.predicted] == [t.text for t in example.reference]
    assert len(example.predicted.spans) == 0
    # ... and the language the reference states, an input rather than an annotation
    assert example.predicted.user_data == {"lang": "la"}


def test_doc_language_and_carry_language():
    from spacy_rhetoric.corpora.util import carry_language, doc_language, gold_tokens_doc

    nlp = spacy.blank("xx")
    doc = nlp("ex toto corde")
    assert doc_language(doc) == "xx"  # nothing stated: the vocab's language
    assert doc_language(spacy.blank("de")("und")) == "de"
    doc.user_data["lang"] = "la"
    assert doc_language(doc) == "la"
    copy = gold_tokens_doc(spacy.blank("en").vocab, doc)
    assert doc_language(copy) == "la" and copy.lang_ == "en"
    part = carry_language(doc, doc[1:].as_doc())
    assert doc_language(part) == "la" and part.text == "toto corde"
    # a doc that states nothing passes nothing on
    plain = nlp("ex toto")
    assert "lang" not in gold_tokens_doc(nlp.vocab, plain).user_data
