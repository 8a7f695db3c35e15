import pytest
import spacy

from spacy_rhetoric.corpora.latin import normalize_latin
from spacy_rhetoric.encoders.floret import tokenized_corpus, train_floret_vectors


def test_normalize_and_tokenize(tmp_path):
    tess = tmp_path / "virgil.tess"
    tess.write_text(
        "<verg. aen. 1.1>\tArma virumque cano, Troiae qui primus ab oris\n", encoding="utf8"
    )
    assert normalize_latin("Iulius Juvenalis") == "iulius iuuenalis"
    assert list(tokenized_corpus([tmp_path])) == ["arma uirumque cano , troiae qui primus ab oris"]


def test_train_floret_vectors(tmp_path):
    pytest.importorskip("floret")
    text = tmp_path / "text.txt"
    text.write_text("arma uirumque cano troiae qui primus ab oris .\n" * 200, encoding="utf8")
    output = tmp_path / "vectors.floret"
    counts = train_floret_vectors(
        [text], output, dim=8, epochs=1, bucket=1000, min_count=1, threads=1
    )
    assert counts == {"lines": 200, "tokens": 1800}
    from spacy.training.initialize import convert_vectors

    nlp = spacy.blank("la")
    convert_vectors(nlp, output, truncate=0, prune=-1, name=None, mode="floret")
    assert nlp.vocab.vectors.shape == (1000, 8)
    # floret vectors exist for unseen words too (subword hashing)
    assert nlp.vocab["uirumque"].has_vector and nlp("arrma")[0].has_vector
