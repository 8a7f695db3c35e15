import json

import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

import spacy_rhetoric.cli
from spacy_rhetoric.treebank.displacement import edv, read_conllu

runner = CliRunner()


@pytest.fixture
def treebank(fixtures_dir):
    return fixtures_dir / "treebank"


def invoke(*args):
    """``python -m spacy_rhetoric treebank ARGS``."""
    return runner.invoke(spacy_rhetoric.cli.app, ["treebank", *(str(a) for a in args)])


def test_commands_registered():
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("edv", "split", "queries", "base-corpus", "evaluate", "study", "plots"):
        assert command in result.output


def test_edv_json(treebank):
    gold, other = treebank / "diagnostics_gold.conllu", treebank / "mwt_empty_nodes.conllu"
    result = invoke("edv", gold, other, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["edv_support"] == pytest.approx(edv(read_conllu(gold), read_conllu(other)))
    assert data["a"]["sentences"] == 16 and data["b"]["sentences"] == 3
    assert set(data) >= {"edv_samples", "binned_edv_support", "slv_support", "max_displacement"}


def test_edv_table_docbins_and_dirs(treebank, tmp_path):
    from spacy_rhetoric.treebank.io import read_docs

    DocBin(docs=read_docs(treebank / "diagnostics_pred.conllu")).to_disk(tmp_path / "p.spacy")
    result = invoke("edv", treebank, tmp_path / "p.spacy", "--output", tmp_path / "edv.json")
    assert result.exit_code == 0, result.output
    assert "edv_support" in result.output
    data = json.loads((tmp_path / "edv.json").read_text())
    assert data["a"]["sentences"] == 16 + 16 + 3


def test_edv_errors(tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tw\t_\n")
    result = invoke("edv", bad, bad)
    assert result.exit_code == 1
    assert "bad.conllu:1" in result.output


def test_split_commands(treebank, tmp_path):
    gold = treebank / "diagnostics_gold.conllu"
    for method in ("edv-min", "edv-max", "random"):
        out = tmp_path / method
        result = invoke("split", method, gold, out, "--seed", 1, "--refine", 50)
        assert result.exit_code == 0, result.output
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["method"] == method
        assert {r["split"] for r in manifest["assignment"]} == {"train", "dev", "test"}
        sizes = [len(DocBin().from_disk(out / f"{n}.spacy")) for n in ("train", "dev", "test")]
        assert sizes == [10, 3, 3]
    result = invoke("split", "random", gold, tmp_path / "r", "--proportions", "0.5,0.5,0")
    assert result.exit_code == 0, result.output
    assert len(DocBin().from_disk(tmp_path / "r" / "test.spacy")) == 0
    assert invoke("split", "random", gold, tmp_path / "x", "--proportions", "1,2").exit_code == 1
    assert invoke("split", "shuffle", gold, tmp_path / "x").exit_code == 1


def test_split_kfold_with_strata(tmp_path):
    from spacy.tokens import Doc

    vocab = spacy.blank("en").vocab
    docs = []
    for i in range(6):
        doc = Doc(vocab, words=["a", "b"], heads=[1, 1], deps=["dep", "ROOT"])
        doc.user_data["doc_id"] = f"d{i}"
        docs.append(doc)
    DocBin(docs=docs, store_user_data=True).to_disk(tmp_path / "in.spacy")
    (tmp_path / "strata.json").write_text(json.dumps({f"d{i}": i % 2 for i in range(6)}))
    out = tmp_path / "folds"
    args = ("split", "kfold", tmp_path / "in.spacy", out, "--k", 3, "--strata")
    result = invoke(*args, tmp_path / "strata.json", "--no-dev")
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert [f["strata"] for f in manifest["folds"]] == [{"0": 1, "1": 1}] * 3
    assert (out / "fold-2" / "test.spacy").exists() and not (out / "fold-0" / "dev.spacy").exists()
    assert len(DocBin().from_disk(out / "fold-0" / "train.spacy")) == 4


def test_queries_command(treebank, tmp_path):
    gold, pred = treebank / "diagnostics_gold.conllu", treebank / "diagnostics_pred.conllu"
    result = invoke("queries", "en_diagnostics", gold, pred, "--json", "--instances")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    neg = data["folds"][0]["results"]["neg_decl_do"]
    assert (neg["gold_hits"], neg["matches"], neg["misses"], neg["false_alarms"]) == (2, 1, 1, 0)
    assert neg["miss_instances"][0]["sent_id"] == "neg-decl-do-1"
    assert data["summary"]["question_inversion"]["f1"]["mean"] == pytest.approx(0.75)
    table = invoke("queries", "en_diagnostics", gold, pred, "--level", "sentence")
    assert table.exit_code == 0 and "question_inversion" in table.output
    missing = invoke("queries", tmp_path / "nope.yml", gold, pred)
    assert missing.exit_code != 0
