"""Base-pipeline corpora and configs, and the EDV study (splits, a tiny real training run,
scores, Spearman, plots) on fixture data. Real training runs are project commands."""

import shutil
from pathlib import Path

import numpy
import pytest
import spacy
import srsly
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import DocBin
from spacy.util import load_config, load_model_from_config
from typer.testing import CliRunner

from spacy_rhetoric.cli import app
from spacy_rhetoric.corpora.conllu import read_conllu_docs
from spacy_rhetoric.treebank.pipelines import (
    BASE_CORPORA,
    BaseCorpusSpec,
    build_base_corpus,
    evaluate_pipeline,
    group_sentences,
)
from spacy_rhetoric.treebank.study import (
    STUDY_METHODS,
    STUDY_TREEBANKS,
    StudySettings,
    plot_study,
    run_study,
    spearman,
    subsample,
    summarize,
)

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "configs" / "treebank"
GOLD = "diagnostics_gold.conllu"
PRED = "diagnostics_pred.conllu"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def ud_dir(tmp_path, fixtures_dir):
    """A UD directory of one fixture treebank (16 sentences per file)."""
    root = tmp_path / "ud"
    (root / "UD_Toy").mkdir(parents=True)
    shutil.copy(fixtures_dir / "treebank" / GOLD, root / "UD_Toy" / "toy-ud-train.conllu")
    shutil.copy(fixtures_dir / "treebank" / PRED, root / "UD_Toy" / "toy-ud-test.conllu")
    return root


@pytest.mark.parametrize("name", ["base_la.cfg", "base_de.cfg", "base_en.cfg", "study_parser.cfg"])
def test_configs_load_and_validate(name):
    config = load_config(CONFIGS / name)
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    assert "parser" in nlp.pipe_names and "morphologizer" in nlp.pipe_names
    if name in ("base_de.cfg", "base_en.cfg"):
        assert "tagger" in nlp.pipe_names
    if name.startswith("base"):
        assert "trainable_lemmatizer" in nlp.pipe_names
        assert nlp.lang == name[5:7]


def test_base_corpora_name_mirror_files(data_dir):
    ud = data_dir("ud")
    for spec in BASE_CORPORA.values():
        for file in (*spec.train, *spec.dev, *(f for _, f in spec.test)):
            assert (ud / file).exists(), file
    for files in STUDY_TREEBANKS.values():
        for file in files:
            assert (ud / file).exists(), file


def test_group_sentences(fixtures_dir):
    docs = read_conllu_docs(fixtures_dir / "treebank" / GOLD)
    grouped = group_sentences(docs, 5)
    assert [len(list(d.sents)) for d in grouped] == [5, 5, 5, 1]
    assert sum(len(d) for d in grouped) == sum(len(d) for d in docs)
    assert [t.dep_ for t in grouped[1]] == [t.dep_ for d in docs[5:10] for t in d]
    assert [t.head.i - t.i for t in grouped[1]] == [t.head.i - t.i for d in docs[5:10] for t in d]
    with pytest.raises(ValueError):
        group_sentences(docs, 0)


def test_build_base_corpus_held_out_dev(ud_dir, tmp_path):
    spec = BaseCorpusSpec(
        train=("UD_Toy/toy-ud-train.conllu",),
        test=(("toy", "UD_Toy/toy-ud-test.conllu"),),
        dev_every=5,
    )
    out = tmp_path / "corpus"
    manifest = build_base_corpus("xx", ud_dir, out, n_sents=4, spec=spec)
    assert manifest["train"][0]["sentences"] == 13
    assert manifest["dev"][0]["sentences"] == 3
    assert manifest["test"]["toy"]["sentences"] == 16
    nlp = spacy.blank("xx")
    train = list(DocBin().from_disk(out / "train.spacy").get_docs(nlp.vocab))
    dev = list(DocBin().from_disk(out / "dev.spacy").get_docs(nlp.vocab))
    assert len(train) == 4 and len(dev) == 3
    gold = read_conllu_docs(ud_dir / "UD_Toy" / "toy-ud-train.conllu")
    # sentences 5, 10 and 15 are held out; no sentence is in both
    assert [d.text for d in dev] == [gold[i].text for i in (4, 9, 14)]
    assert not {d.text for d in dev} & {s.text for d in train for s in d.sents}
    assert srsly.read_json(out / "manifest.json")["dev_every"] == 5


def test_build_base_corpus_unknown_lang(tmp_path):
    with pytest.raises(ValueError, match="no corpus"):
        build_base_corpus("tlh", tmp_path, tmp_path / "out")


def test_subsample_keeps_order_and_is_seeded():
    items = list(range(100))
    a = subsample(items, 30, seed=1)
    assert len(a) == 30 and a == sorted(a) and a == subsample(items, 30, seed=1)
    assert a != subsample(items, 30, seed=2)
    assert subsample(items, None) == items and subsample(items, 500) == items


def _ranks(values):
    """Average ranks (ties share the mean of their positions), by brute force."""
    values = list(values)
    return [
        sum(1 for w in values if w < v) + (sum(1 for w in values if w == v) + 1) / 2 for v in values
    ]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=3, max_size=12))
def test_spearman_matches_pearson_of_ranks(pairs):
    x, y = [float(a) for a, _ in pairs], [float(b) for _, b in pairs]
    result = spearman(x, y)
    assert result["n"] == len(pairs)
    if len(set(x)) < 2 or len(set(y)) < 2:
        assert result["rho"] is None
        return
    rx, ry = numpy.array(_ranks(x)), numpy.array(_ranks(y))
    expected = numpy.corrcoef(rx, ry)[0, 1]
    assert result["rho"] == pytest.approx(expected, abs=1e-9)


def test_spearman_skips_missing_values():
    assert spearman([1, 2, None, 4], [1, 2, 3, None]) == {"rho": None, "p": None, "n": 2}
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1])["rho"] == pytest.approx(-1.0)


def _record(las_min, las_max, edv_min, edv_max):
    split = lambda las, value: {  # noqa: E731
        "dep_las": las,
        "edv_train_test": {"support": value, "samples": value / 100},
    }
    return {
        "splits": {"edv-min": split(las_min, edv_min), "edv-max": split(las_max, edv_max)},
        "delta_las": las_max - las_min,
        "delta_edv": {"support": edv_max - edv_min, "samples": (edv_max - edv_min) / 100},
    }


def test_summarize():
    records = {
        "a": _record(0.80, 0.70, 0.1, 2.0),
        "b": _record(0.60, 0.62, 0.2, 1.0),
        "c": _record(0.70, 0.64, 0.1, 1.5),
    }
    summary = summarize(records)
    assert summary["median_las_edv-min"] == pytest.approx(0.70)
    assert summary["median_las_edv-max"] == pytest.approx(0.64)
    assert summary["mean_delta_las"] == pytest.approx((-0.10 + 0.02 - 0.06) / 3)
    assert summary["max_edv_worse"] == 2
    # the larger ΔEDV, the larger the drop: rho = -1
    assert summary["spearman_delta_las_delta_edv"]["support"]["rho"] == pytest.approx(-1.0)
    assert summary["spearman_las_edv"]["samples"]["n"] == 6


def test_study_end_to_end_tiny(ud_dir, tmp_path):
    """Split, a real (two-step) training run per split, scoring, summary and plots."""
    files = {
        "toy": [ud_dir / "UD_Toy" / "toy-ud-train.conllu", ud_dir / "UD_Toy" / "toy-ud-test.conllu"]
    }
    settings = StudySettings(
        config=str(CONFIGS / "study_parser.cfg"),
        max_sentences=25,
        n_refine=200,
        overrides={"training.max_steps": 2, "training.eval_frequency": 1},
    )
    output = tmp_path / "study.json"
    result = run_study(files, tmp_path / "work", settings, output=output, log=lambda _: None)
    written = srsly.read_json(output)
    assert written["summary"].keys() == result["summary"].keys()
    assert written["summary"]["mean_delta_las"] == pytest.approx(
        result["summary"]["mean_delta_las"]
    )
    record = result["treebanks"]["toy"]
    assert record["sentences_pooled"] == 32 and record["sentences_used"] == 25
    for method in STUDY_METHODS:
        split = record["splits"][method]
        assert split["sizes"]["train"]["docs"] == 15 and split["sizes"]["test"]["docs"] == 5
        assert 0.0 <= split["dep_las"] <= split["dep_uas"] <= 1.0
        assert (tmp_path / "work" / "toy" / method / "model" / "model-best").is_dir()
    edv_min = record["splits"]["edv-min"]["edv_train_test"]["support"]
    edv_max = record["splits"]["edv-max"]["edv_train_test"]["support"]
    assert edv_max > edv_min
    assert record["delta_edv"]["support"] == pytest.approx(edv_max - edv_min)
    assert record["delta_las"] == pytest.approx(
        record["splits"]["edv-max"]["dep_las"] - record["splits"]["edv-min"]["dep_las"]
    )
    plots = plot_study(result, tmp_path / "work", tmp_path / "plots")
    assert [p.name for p in plots] == ["edv-study-toy.png", "edv-study-deltas.png"]
    for path in plots:
        assert path.read_bytes()[:8] == PNG_MAGIC and path.stat().st_size > 5000
    plots2 = tmp_path / "plots2"
    cli = CliRunner().invoke(
        app, ["treebank", "plots", str(output), str(tmp_path / "work"), str(plots2)]
    )
    assert cli.exit_code == 0, cli.output
    assert sorted(p.name for p in plots2.iterdir()) == ["edv-study-deltas.png", "edv-study-toy.png"]

    # the trained model also goes through the base-pipeline evaluation
    nlp = spacy.load(tmp_path / "work" / "toy" / "edv-min" / "model" / "model-best")
    scores = evaluate_pipeline(
        nlp,
        [("gold", ud_dir / "UD_Toy" / "toy-ud-train.conllu"), ("pred", files["toy"][1])],
        train_path=tmp_path / "work" / "toy" / "edv-min" / "train.spacy",
    )
    assert list(scores) == ["gold", "pred", "pooled"]
    assert scores["pooled"]["tokens"] == scores["gold"]["tokens"] + scores["pred"]["tokens"]
    for mode in ("gold_tokens", "raw_text"):
        assert 0.0 <= scores["gold"][mode]["dep_las"] <= 1.0
    assert scores["gold"]["edv_train_test"]["support"] >= 0.0


def test_edv_study_cli_rejects_unknown_treebank(tmp_path):
    result = CliRunner().invoke(
        app, ["treebank", "study", str(tmp_path), str(tmp_path / "w"), "--treebanks", "xx_nope"]
    )
    assert result.exit_code == 1
    assert "Unknown treebanks" in result.output


def test_base_corpus_cli(ud_dir, tmp_path):
    result = CliRunner().invoke(
        app, ["treebank", "base-corpus", "tlh", str(ud_dir), str(tmp_path / "out")]
    )
    assert result.exit_code == 1 and "no corpus" in result.output
