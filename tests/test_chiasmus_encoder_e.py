"""E features from the multilingual encoder (spacy-rhetoric.ChiasmusScorer.v2)."""

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.util import registry
from test_chiasmus_component import input_docs, make_examples
from thinc.api import fix_random_seed

from spacy_rhetoric.chiasmus import metrics as chiasmus_metrics  # noqa: F401  (registers)
from spacy_rhetoric.chiasmus.crossval import (
    choose_l2,
    chooses_l2,
    fit_logistic,
    fit_network,
    settings_for_fold,
    settings_from_config,
)
from spacy_rhetoric.chiasmus.eval_english_mb import grouped_folds, near_duplicate_groups
from spacy_rhetoric.chiasmus.features import (
    D_FEATURES,
    E_FEATURES,
    E_LAYER_FEATURES,
    L_FEATURES,
    candidate_features,
    encoder_e_features,
    encoder_e_names,
    feature_names,
)
from spacy_rhetoric.chiasmus.model import TrainingFeatureCache

V2 = "spacy-rhetoric.ChiasmusScorer.v2"


def test_encoder_e_names():
    assert feature_names(["D", "L", "E"], encoder_layers=[0, 8]) == list(
        D_FEATURES + L_FEATURES
    ) + [f"{name}@{layer}" for layer in (0, 8) for name in E_LAYER_FEATURES]
    assert feature_names(["D", "E"]) == list(D_FEATURES + E_FEATURES)  # v1 names
    assert encoder_e_names([12])[0] == "cos_a_a2@12"


def test_encoder_e_features_by_hand():
    # 6 tokens, 2 layers, 3 dims; candidate A=0, B=1, B'=3, A'=5
    states = numpy.zeros((6, 2, 3), dtype="float32")
    states[:, 0] = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0], [0, 0, 1], [1, 0, 0]]
    states[:, 1] = [[1, 1, 0], [0, 1, 0], [1, 0, 1], [0, 2, 0], [1, 1, 1], [2, 2, 0]]
    values = encoder_e_features(states, numpy.asarray([[0, 1, 3, 5]]), [0, 8])
    assert values.shape == (1, 2 * len(E_LAYER_FEATURES))
    row = dict(zip(encoder_e_names([0, 8]), values[0].tolist()))
    assert row["cos_a_a2@0"] == pytest.approx(1.0)  # the same vector
    assert row["cos_b_b2@0"] == pytest.approx(1.0)
    assert row["cos_a_b@0"] == pytest.approx(0.0)
    # mean(A, B) = (.5, .5, 0) vs mean(B', token 4, A') = (1, 1, 1) / 3
    assert row["cos_halves@0"] == pytest.approx(numpy.sqrt(2 / 3))
    assert row["cos_inner@0"] == pytest.approx(0.0)  # A (nothing inside A..B) vs token 4
    assert row["cos_diff_parallel@0"] == pytest.approx(1.0)  # A - B vs A' - B'
    assert row["cos_diff_inverted@0"] == pytest.approx(-1.0)  # A - B vs B' - A'
    assert row["cos_a_a2@8"] == pytest.approx(1.0)  # scale does not matter
    assert row["cos_b_b2@8"] == pytest.approx(1.0)
    assert row["cos_a_b@8"] == pytest.approx(1 / numpy.sqrt(2))
    with pytest.raises(ValueError):
        encoder_e_features(states[:4], numpy.asarray([[0, 1, 3, 5]]), [0, 8])


@pytest.fixture(scope="module")
def repeated_doc():
    nlp = spacy.blank("en")
    words = "East is West and West is East".split()
    return Doc(
        nlp.vocab,
        words=words,
        pos="PROPN AUX PROPN CCONJ PROPN AUX PROPN".split(),
        lemmas=[w.lower() for w in words],
    )


def test_encoder_e_features_of_a_doc(repeated_doc):
    from spacy_rhetoric.chiasmus.model import encoder_states

    settings = {"name": "multilingual-e5-small", "layers": [0, 8], "window": 256, "stride": 192}
    (states,) = encoder_states(settings, [repeated_doc])
    assert states.shape == (7, 2, 384)
    cands = numpy.asarray([[0, 2, 4, 6], [0, 1, 5, 6]])
    X = candidate_features(
        repeated_doc, cands, groups=["L", "E"], encoder_states=states, encoder_layers=[0, 8]
    )
    assert X.shape == (2, len(L_FEATURES) + 2 * len(E_LAYER_FEATURES))
    row = dict(zip(feature_names(["L", "E"], [0, 8]), X[0].tolist()))
    # the same word: layer 0 (no context) differs only by the position embedding
    assert row["cos_a_a2@0"] > 0.9 and row["cos_b_b2@0"] > 0.9
    assert row["cos_a_a2@0"] > row["cos_a_b@0"]
    assert row["cos_a_a2@8"] > row["cos_a_b@8"]
    assert numpy.all(numpy.abs(X[:, len(L_FEATURES) :]) <= 1.0 + 1e-5)


def make_v2_nlp(**model):
    nlp = spacy.blank("en")
    config = {"@architectures": V2, "encoder_layers": [0], **model}
    nlp.add_pipe("chiasmus_finder", config={"model": config})
    return nlp


def test_v1_config_still_loads():
    nlp = spacy.blank("en")
    finder = nlp.add_pipe(
        "chiasmus_finder",
        config={"model": {"@architectures": "spacy-rhetoric.ChiasmusScorer.v1"}},
    )
    assert "encoder" not in finder.model.layers[0].attrs
    assert finder.model.attrs["feature_names"][-1] == "has_vectors"
    assert registry.architectures.get(V2) is not None


def test_switch_without_e_loads_no_encoder():
    nlp = make_v2_nlp(feature_groups=["D", "L"])
    featurizer = nlp.get_pipe("chiasmus_finder").model.layers[0]
    assert "encoder" not in featurizer.attrs
    assert featurizer.get_dim("nO") == len(D_FEATURES) + len(L_FEATURES)
    nlp = make_v2_nlp(feature_groups=["D", "L", "E"], encoder_layers=[0, 8])
    featurizer = nlp.get_pipe("chiasmus_finder").model.layers[0]
    assert featurizer.attrs["encoder"]["layers"] == [0, 8]
    assert featurizer.get_dim("nO") == len(D_FEATURES) + len(L_FEATURES) + 20
    nlp = make_v2_nlp(feature_groups=["D", "E"], encoder=None, vectors="auto")
    assert "encoder" not in nlp.get_pipe("chiasmus_finder").model.layers[0].attrs
    with pytest.raises(ValueError):
        make_v2_nlp(encoder_layers=[8, 8])


def test_v2_training_and_round_trip(tmp_path):
    fix_random_seed(0)
    nlp = make_v2_nlp(feature_groups=["L", "E"], encoder_layers=[0])
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.05
    first = None
    for _ in range(30):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        first = losses["chiasmus_finder"] if first is None else first
    assert losses["chiasmus_finder"] < first / 2
    docs = [nlp(doc) for doc in input_docs(nlp)]
    assert nlp.evaluate(examples)["chiasmus_ap"] == 1.0
    nlp.to_disk(tmp_path)
    # the encoder is referenced by name, not written into the pipeline
    size = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert size < 1_000_000
    loaded = spacy.load(tmp_path)
    assert loaded.config["components"]["chiasmus_finder"]["model"]["@architectures"] == V2
    again = [loaded(doc) for doc in input_docs(loaded)]
    for old, new in zip(docs, again):
        assert [s._.chiasmus_score for s in old.spans["chiasmus_candidates"]] == pytest.approx(
            [s._.chiasmus_score for s in new.spans["chiasmus_candidates"]], abs=1e-6
        )


def test_training_cache_matches_features():
    nlp = make_v2_nlp(feature_groups=["D", "L"])
    model = nlp.get_pipe("chiasmus_finder").model
    featurizer = model.layers[0]
    docs = input_docs(nlp)
    cands = [
        numpy.asarray([[1, 4, 7, 10]]) if len(d) > 7 else numpy.asarray([[0, 2, 4, 6]])
        for d in docs
    ]
    plain, _ = featurizer((docs, cands), is_train=False)
    cached, _ = featurizer((docs, cands), is_train=True)
    again, _ = featurizer((docs, cands), is_train=True)
    assert numpy.array_equal(plain, cached) and numpy.array_equal(plain, again)
    cache = featurizer.attrs["training_cache"]
    assert len(cache.entries) == len(docs)
    # a changed annotation is a new key
    changed = docs[0].copy()
    changed[0].pos_ = "NOUN"
    assert cache.key(changed, cands[0]) != cache.key(docs[0], cands[0])
    small = TrainingFeatureCache(max_rows=2)
    for i in range(3):
        small.put(str(i), numpy.zeros((1, 3)))
    assert list(small.entries) == ["1", "2"]


def test_fit_logistic_separates():
    rng = numpy.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=200) > 0
    predict = fit_logistic(X, y, C=1.0)
    assert ((predict(X) > 0.5) == y).mean() > 0.95


def test_near_duplicate_groups_and_grouped_folds():
    texts = [
        "East is West, and West is East.",
        "east is west and west is east",
        "He said: East is West, and West is East, and never the twain shall meet.",
        "Ask not what your country can do for you.",
        "A completely different sentence about cats and dogs.",
    ]
    groups = near_duplicate_groups(texts)
    assert groups[0] == groups[1] == groups[2]
    assert len({groups[0], groups[3], groups[4]}) == 3
    folds = grouped_folds(groups, [True, True, True, True, False], n_folds=2, seed=0)
    assert folds[0] == folds[1] == folds[2]
    assert folds[3] != folds[0]


def _network_settings(epochs: int = 40) -> dict:
    settings = settings_from_config()
    return {**settings, "epochs": epochs, "batch_size": 50, "learn_rate": 0.01}


def _noisy_problem(n: int = 300, seed: int = 0):
    rng = numpy.random.default_rng(seed)
    X = rng.normal(size=(n, 6)).astype("float32")
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n)) > 1.0
    return X, y


def test_fit_network_learns_and_its_l2_shrinks_it():
    from spacy_rhetoric.chiasmus.metrics import average_precision

    X, y = _noisy_problem()
    settings = _network_settings()
    weak = fit_network(X, y, settings, L2=0.0, seed=0)
    assert average_precision(weak(X), y) > 0.9
    strong = fit_network(X, y, settings, L2=1000.0, seed=0)
    # a heavy penalty flattens the scores towards one value
    assert numpy.ptp(strong(X)) < numpy.ptp(weak(X))
    # the same seed trains the same network
    assert numpy.allclose(weak(X), fit_network(X, y, settings, L2=0.0, seed=0)(X))


def test_chooses_l2_only_for_a_network_with_a_coupled_l2():
    settings = settings_from_config()  # configs/chiasmus/de.cfg: 64 ReLUs, coupled L2
    assert chooses_l2(settings)
    assert not chooses_l2({**settings, "model": {**settings["model"], "hidden_width": 0}})
    assert not chooses_l2({**settings, "L2_is_weight_decay": True})
    assert not chooses_l2({**settings, "l2_grid": []})


def test_l2_is_chosen_on_the_training_rows_only():
    from spacy_rhetoric.chiasmus.crossval import FeatureTable

    X, y = _noisy_problem(200)
    settings = {**_network_settings(epochs=10), "l2_grid": [0.1, 100.0], "inner_folds": 3}
    settings["model"] = {**settings["model"], "feature_groups": ["D"], "encoder": None}
    table = FeatureTable.__new__(FeatureTable)
    table.layers, table.blocks = [], {"D": X}
    rows = numpy.arange(150)
    chosen, details = settings_for_fold(settings, table, rows, y[rows], seed=0)
    assert chosen["L2"] in (0.1, 100.0) and details["L2"] == chosen["L2"]
    assert set(details["inner_ap_l2"]) == {"0.1", "100.0"}
    # scrambling the rows outside the training part changes nothing
    table.blocks = {"D": numpy.vstack([X[:150], X[150:][::-1] * -3.0])}
    again, _ = settings_for_fold(settings, table, rows, y[rows], seed=0)
    assert again["L2"] == chosen["L2"]
    best, scores = choose_l2(X[rows], y[rows], settings, seed=0)
    assert best == chosen["L2"] and scores == details["inner_ap_l2"]
