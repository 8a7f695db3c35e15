"""The narrower encoder of benchmarks/encoder_distill.py: a layer cut to some of its
feed-forward units computes exactly those units' share (brute force), all units leave
it unchanged, and a saved student loads back to the same states."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def distill(load_benchmark):
    return load_benchmark("encoder_distill")


@pytest.fixture(scope="module")
def bert():
    config = transformers.BertConfig(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=12,
        max_position_embeddings=40,
    )
    torch.manual_seed(0)
    return transformers.BertModel(config).eval()


def _inputs():
    ids = torch.tensor([[1, 5, 9, 7, 2, 0], [1, 3, 4, 8, 6, 2]])
    return ids, (ids != 0).long()


def _states(model, ids, mask):
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states


def test_all_units_change_nothing(distill, bert):
    ids, mask = _inputs()
    student = distill.with_layers(bert, distill.cut_layers(bert, [range(12)] * 3))
    for full, cut in zip(_states(bert, ids, mask), _states(student, ids, mask)):
        assert torch.allclose(full, cut, atol=1e-6)


def test_cut_layer_is_the_kept_units_share(distill, bert):
    layer = bert.encoder.layer[0]
    keep = [0, 3, 4, 10]
    (cut,) = distill.cut_layers(bert, [keep])
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        got = cut.output.dense(cut.intermediate(x))
        w_in, b_in = layer.intermediate.dense.weight, layer.intermediate.dense.bias
        w_out, b_out = layer.output.dense.weight, layer.output.dense.bias
        expected = b_out.clone().expand(2, 5, 16).clone()
        for unit in keep:  # brute force, one unit at a time
            activation = torch.nn.functional.gelu(x @ w_in[unit] + b_in[unit])
            expected += activation.unsqueeze(-1) * w_out[:, unit]
    assert torch.allclose(got, expected, atol=1e-5)
    assert cut.intermediate.dense.out_features == len(keep)
    # the original layer is untouched
    assert layer.intermediate.dense.out_features == 12


def test_saved_student_loads_back(distill, bert, tmp_path):
    ids, mask = _inputs()
    keep = [[0, 1, 2, 3], [5, 6, 7, 8, 9], [11, 2]]
    layers = distill.cut_layers(bert, keep)
    with torch.no_grad():  # a trained student differs from the teacher's weights
        for p in layers[1].parameters():
            p.add_(0.01)
    path = tmp_path / "student.pt"
    distill.save_student(path, layers, keep, steps=3)
    loaded = distill.load_student(path, bert)
    before = _states(distill.with_layers(bert, layers), ids, mask)
    after = _states(loaded, ids, mask)
    assert len(after) == 4
    for a, b in zip(before, after):
        assert torch.allclose(a, b, atol=1e-6)
    # the full model still runs all its own layers
    assert len(bert.encoder.layer) == 3
    assert _states(bert, ids, mask)[2].shape == before[2].shape
