"""Narrow encoders (encoders/narrow.py): the units a cut keeps against brute force, the
file round trip within its int8 step, one-line errors for bad files, and a directory
built from a file that transformers loads with the cut width."""

import json

import numpy
import pytest
import srsly

from spacy_rhetoric.encoders.convert import INFO_FILE, EncoderError
from spacy_rhetoric.encoders.narrow import (
    FORMAT,
    build_narrow,
    cut_base,
    narrow_state_dict,
    read_narrow,
    serialize_narrow,
)

HIDDEN, UNITS = 6, 10
LAYER_SHAPES = {
    "attention.self.query.weight": (HIDDEN, HIDDEN),
    "attention.self.query.bias": (HIDDEN,),
    "attention.self.key.weight": (HIDDEN, HIDDEN),
    "attention.self.key.bias": (HIDDEN,),
    "attention.self.value.weight": (HIDDEN, HIDDEN),
    "attention.self.value.bias": (HIDDEN,),
    "attention.output.dense.weight": (HIDDEN, HIDDEN),
    "attention.output.dense.bias": (HIDDEN,),
    "attention.output.LayerNorm.weight": (HIDDEN,),
    "attention.output.LayerNorm.bias": (HIDDEN,),
    "intermediate.dense.weight": (UNITS, HIDDEN),
    "intermediate.dense.bias": (UNITS,),
    "output.dense.weight": (HIDDEN, UNITS),
    "output.dense.bias": (HIDDEN,),
    "output.LayerNorm.weight": (HIDDEN,),
    "output.LayerNorm.bias": (HIDDEN,),
}


def _base(n_layers=3, seed=0):
    rng = numpy.random.default_rng(seed)
    base = {
        "embeddings.word_embeddings.weight": rng.normal(size=(20, HIDDEN)).astype("f"),
        "embeddings.position_embeddings.weight": rng.normal(size=(12, HIDDEN)).astype("f"),
        "embeddings.token_type_embeddings.weight": rng.normal(size=(2, HIDDEN)).astype("f"),
        "embeddings.LayerNorm.weight": numpy.ones(HIDDEN, "f"),
        "embeddings.LayerNorm.bias": numpy.zeros(HIDDEN, "f"),
        "pooler.dense.weight": numpy.zeros((HIDDEN, HIDDEN), "f"),
        "pooler.dense.bias": numpy.zeros(HIDDEN, "f"),
    }
    for layer in range(n_layers):
        for name, shape in LAYER_SHAPES.items():
            base[f"encoder.layer.{layer}.{name}"] = rng.normal(size=shape).astype("f")
    return base


def _student(base, keep, seed=1):
    """The cut layers, trained: the base's kept weights plus a small change."""
    rng = numpy.random.default_rng(seed)
    return {
        name: cut_base(base, name, keep[int(name.split(".")[2])])
        + 0.05 * rng.normal(size=cut_base(base, name, keep[int(name.split(".")[2])]).shape)
        for name in base
        if name.startswith("encoder.layer.") and int(name.split(".")[2]) < len(keep)
    }


def test_cut_keeps_the_units_and_nothing_else():
    base = _base()
    keep = [1, 4, 7]
    assert numpy.array_equal(
        cut_base(base, "encoder.layer.1.intermediate.dense.weight", keep),
        base["encoder.layer.1.intermediate.dense.weight"][[1, 4, 7], :],
    )
    assert numpy.array_equal(
        cut_base(base, "encoder.layer.1.output.dense.weight", keep),
        base["encoder.layer.1.output.dense.weight"][:, [1, 4, 7]],
    )
    # the attention's output projection is not a feed-forward unit matrix
    for name in ("attention.output.dense.weight", "output.dense.bias", "attention.self.key.bias"):
        full = base[f"encoder.layer.1.{name}"]
        assert cut_base(base, f"encoder.layer.1.{name}", keep) is full


def test_feed_forward_of_the_cut_is_the_kept_units_share():
    base = _base()
    keep = [0, 2, 3, 9]
    x = numpy.random.default_rng(2).normal(size=(5, HIDDEN))
    w_in = cut_base(base, "encoder.layer.0.intermediate.dense.weight", keep)
    b_in = cut_base(base, "encoder.layer.0.intermediate.dense.bias", keep)
    w_out = cut_base(base, "encoder.layer.0.output.dense.weight", keep)
    got = numpy.maximum(x @ w_in.T + b_in, 0) @ w_out.T
    full_in = base["encoder.layer.0.intermediate.dense.weight"]
    full_b = base["encoder.layer.0.intermediate.dense.bias"]
    full_out = base["encoder.layer.0.output.dense.weight"]
    expected = sum(
        numpy.maximum(x @ full_in[u] + full_b[u], 0)[:, None] * full_out[:, u][None, :]
        for u in keep
    )
    assert numpy.allclose(got, expected)


def test_file_round_trip_within_the_int8_step():
    base = _base()
    keep = [[0, 1, 2, 3], [9, 8, 1, 5], [2, 3, 4, 6]]
    layers = _student(base, keep)
    msg = srsly.msgpack_loads(serialize_narrow(base, layers, keep, "abc"))
    weights = narrow_state_dict(base, msg)
    for name, array in layers.items():
        got = weights[name]
        assert got.shape == array.shape
        if array.ndim == 1:
            assert numpy.array_equal(got, array.astype("f"))
        else:  # int8 per row of the delta: at most half a step off
            step = numpy.abs(array - cut_base(base, name, keep[int(name.split(".")[2])])).max(1)
            assert (numpy.abs(got - array) <= step[:, None] / 127 / 2 + 1e-6).all()
    # the embeddings come from the base; no layer beyond the cut ones
    assert weights["embeddings.word_embeddings.weight"] is base["embeddings.word_embeddings.weight"]
    assert not any(name.startswith("encoder.layer.3.") for name in weights)
    assert weights["encoder.layer.2.intermediate.dense.weight"].shape == (4, HIDDEN)


def test_a_file_missing_a_parameter_is_refused():
    base = _base()
    keep = [[0, 1], [2, 3]]
    layers = _student(base, keep)
    del layers["encoder.layer.1.output.LayerNorm.bias"]
    msg = srsly.msgpack_loads(serialize_narrow(base, layers, keep, "abc"))
    with pytest.raises(EncoderError, match="1 parameters missing"):
        narrow_state_dict(base, msg)


@pytest.mark.parametrize(
    "damage",
    ["unknown name", "no scale", "wrong shape", "layer beyond keep"],
)
def test_a_malformed_parameter_fails_in_one_line(damage):
    base = _base()
    keep = [[0, 1], [2, 3]]
    msg = srsly.msgpack_loads(serialize_narrow(base, _student(base, keep), keep, "abc"))
    stored = msg["weights"]
    name = "encoder.layer.1.intermediate.dense.weight"
    if damage == "unknown name":
        stored["encoder.layer.1.nothing.weight"] = stored.pop(name)
    elif damage == "no scale":
        del stored[name]["scale"]
    elif damage == "wrong shape":
        stored[name]["int8"] = stored[name]["int8"][:, :3]
    else:
        stored["encoder.layer.5.intermediate.dense.weight"] = stored.pop(name)
    with pytest.raises(EncoderError) as info:
        narrow_state_dict(base, msg)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "content,message",
    [
        (None, "cannot read it"),
        (b"\x00\x01garbage\xff" * 10, "not a msgpack file"),
        (srsly.msgpack_dumps({"format": "something else"}), f"not a {FORMAT} file"),
        (srsly.msgpack_dumps({"format": FORMAT, "keep": [], "weights": {}}), "no layers"),
        (srsly.msgpack_dumps({"format": FORMAT, "keep": [[1], [1, 2]], "weights": {}}), "unequal"),
    ],
)
def test_bad_files_fail_in_one_line_naming_the_file(tmp_path, content, message):
    path = tmp_path / "narrow.msgpack"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(EncoderError, match=message) as info:
        read_narrow(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_built_directory_loads_with_the_cut_width(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from safetensors.numpy import save_file

    base = _base()
    base_dir = tmp_path / "base"
    base_dir.mkdir()
    save_file(base, str(base_dir / "model.safetensors"))
    config = transformers.BertConfig(
        vocab_size=20,
        hidden_size=HIDDEN,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=UNITS,
        max_position_embeddings=12,
    )
    config.save_pretrained(str(base_dir))
    (base_dir / INFO_FILE).write_text(json.dumps({"source_sha256": "base-sha"}))
    keep = [[0, 1, 2, 3], [5, 6, 7, 8]]
    layers = _student(base, keep)
    source = tmp_path / "narrow.msgpack"
    source.write_bytes(serialize_narrow(base, layers, keep, "base-sha"))
    out = build_narrow(source, base_dir, tmp_path / "narrow", "combined-sha")
    model = transformers.AutoModel.from_pretrained(str(out)).eval()
    assert model.config.num_hidden_layers == 2 and model.config.intermediate_size == 4
    assert json.loads((out / INFO_FILE).read_text())["source_sha256"] == "combined-sha"
    got = model.encoder.layer[1].output.dense.weight.detach().numpy()
    assert numpy.allclose(got, layers["encoder.layer.1.output.dense.weight"], atol=1e-2)
    with torch.no_grad():
        states = model(input_ids=torch.tensor([[1, 2, 3]]), output_hidden_states=True)
    assert len(states.hidden_states) == 3
    # a file cut from another base is refused, naming the file
    other = tmp_path / "other.msgpack"
    other.write_bytes(serialize_narrow(base, layers, keep, "another-sha"))
    with pytest.raises(EncoderError, match="cut from another") as info:
        build_narrow(other, base_dir, tmp_path / "narrow2", "x")
    assert str(other) in str(info.value)


def test_resolve_builds_once_then_rebuilds_for_another_file(tmp_path, monkeypatch):
    """``resolve_encoder(PATH)``: the directory is built on first use, found the second
    time, built anew when the file changes; other names go to ``encoder_path``; a
    missing file fails in one line naming it."""
    pytest.importorskip("transformers")
    from safetensors.numpy import save_file
    from transformers import BertConfig

    import spacy_rhetoric.encoders.narrow as narrow

    base = _base()
    base_dir = tmp_path / "base"
    base_dir.mkdir()
    save_file(base, str(base_dir / "model.safetensors"))
    BertConfig(
        vocab_size=20, hidden_size=HIDDEN, num_hidden_layers=3, num_attention_heads=2,
        intermediate_size=UNITS, max_position_embeddings=12,
    ).save_pretrained(str(base_dir))  # fmt: skip
    (base_dir / INFO_FILE).write_text(
        json.dumps({"source_sha256": "base-sha", "format_version": 2})
    )
    for name in ("tokenizer.json", "tokenizer_config.json"):  # copied along, not read here
        (base_dir / name).write_text("{}")
    asked = []
    monkeypatch.setattr(
        narrow, "encoder_path", lambda name, build=True: asked.append(name) or base_dir
    )
    monkeypatch.setattr(narrow, "cache_dir", lambda: tmp_path / "cache")
    keep = [[0, 1, 2], [3, 4, 5]]
    source = tmp_path / "student.msgpack"
    source.write_bytes(serialize_narrow(base, _student(base, keep), keep, "base-sha"))
    first = narrow.resolve_encoder(str(source))
    assert first.parent == tmp_path / "cache" and (first / "model.safetensors").is_file()
    stamp = (first / "model.safetensors").stat().st_mtime_ns
    assert narrow.resolve_encoder(source) == first
    assert (first / "model.safetensors").stat().st_mtime_ns == stamp  # not rebuilt
    source.write_bytes(serialize_narrow(base, _student(base, keep, seed=5), keep, "base-sha"))
    second = narrow.resolve_encoder(source)
    assert second != first and (second / "model.safetensors").is_file()
    assert narrow.resolve_encoder("some/model/dir") == base_dir  # not a narrow file
    assert asked[-1] == "some/model/dir"
    with pytest.raises(EncoderError, match="no such file") as info:
        narrow.resolve_encoder(tmp_path / "missing.msgpack")
    assert "missing.msgpack" in str(info.value)
