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
