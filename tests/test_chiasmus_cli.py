import json

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry
from thinc.api import fix_random_seed
from typer.testing import CliRunner

import spacy_rhetoric.cli as cli
from spacy_rhetoric.chiasmus.crossval import cross_validate, stratified_folds
from spacy_rhetoric.chiasmus.eval_german import GERMAN_FULL, german_examples
from spacy_rhetoric.chiasmus.find import find_in_text
from spacy_rhetoric.corpora.chiasmus import set_candidate
from spacy_rhetoric.textio import text_chunks

runner = CliRunner()
LEXICON = {
    "man": ("NOUN", "man"),
    "woman": ("NOUN", "woman"),
    "loves": ("VERB", "love"),
    "love": ("VERB", "love"),
    "cat": ("NOUN", "cat"),
    "dog": ("NOUN", "dog"),
    "sees": ("VERB", "see"),
    "the": ("DET", "the"),
    "a": ("DET", "a"),
    "and": ("CCONJ", "and"),
    ",": ("PUNCT", ","),
    ".": ("PUNCT", "."),
}
TRAIN = [
    (
        "a man loves a woman , a woman loves a man .",
        {(1, 4, 7, 10): "True", (1, 2, 8, 10): "False"},
    ),
    ("the cat sees the dog and the man sees the woman .", {(1, 4, 7, 10): "False"}),
]

SCORER_V1 = "spacy-rhetoric.ChiasmusScorer.v1"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A pipeline whose attribute_ruler sets POS and lemmas, and a trained finder."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    nlp.add_pipe("chiasmus_finder", config={"model": {"@architectures": SCORER_V1}})

    def add_patterns():  # initialize() clears the ruler
        for word, (pos, lemma) in LEXICON.items():
            ruler.add([[{"LOWER": word}]], {"POS": pos, "LEMMA": lemma})

    add_patterns()
    examples = []
    for text, candidates in TRAIN:
        predicted = nlp.get_pipe("attribute_ruler")(nlp.make_doc(text))
        reference = predicted.copy()
        for i, (positions, label) in enumerate(candidates.items()):
            set_candidate(reference, positions, label, span_id=f"g{i}")
        examples.append(Example(predicted, reference))
    optimizer = nlp.initialize(lambda: examples)
    add_patterns()
    optimizer.learn_rate = 0.01
    for _ in range(40):
        nlp.update(examples, sgd=optimizer)
    path = tmp_path_factory.mktemp("chiasmus-model")
    nlp.to_disk(path)
    return path


def test_text_chunks():
    text = "a b\n\nc d\n\n" + "x " * 30 + "\ny"
    chunks = list(text_chunks(text, max_chars=20))
    assert "".join(chunks) == text
    assert all(len(c) <= 20 for c in chunks)
    assert chunks[:2] == ["a b\n\n", "c d\n\n"]


def test_chiasmus_command(model_dir, tmp_path):
    text = "a woman loves a man , a man loves a woman .\n\nthe dog sees the cat .\n"
    path = tmp_path / "text.txt"
    path.write_text(text, encoding="utf8")
    result = runner.invoke(
        cli.app, ["chiasmus", "find", str(path), "--model", str(model_dir), "--top", "3", "--json"]
    )
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert 1 <= len(found) <= 3
    best = found[0]
    assert best["words"] == {"A": "woman", "B": "man", "B'": "man", "A'": "woman"}
    assert text[best["start_char"] : best["end_char"]] == best["text"]
    assert best["type"] == "antimetabole"
    assert "[woman]A" in best["context"]
    scores = [item["score"] for item in found]
    assert scores == sorted(scores, reverse=True)
    result = runner.invoke(cli.app, ["chiasmus", "find", str(path), "--model", str(model_dir)])
    assert result.exit_code == 0, result.output
    assert "antimetabole" in result.output
    # find_in_text directly: all candidates, spans offset into the whole text
    nlp = spacy.load(model_dir)
    everything = find_in_text(nlp, text, top=0)
    assert len(everything) >= len(found)


def test_chiasmus_eval_command(fixtures_dir, tmp_path):
    output = tmp_path / "metrics" / "chiasmus-de.json"
    result = runner.invoke(
        cli.app,
        [
            "chiasmus",
            "evaluate",
            "de",
            str(fixtures_dir / "chiasmus-de"),
            "--folds",
            "2",
            "--output",
            str(output),
        ],
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(output.read_text())
    assert metrics["full"]["n_candidates"] == 3 and len(metrics["full"]["ap_per_fold"]) == 2
    assert "fp_removed" in metrics and "settings" in metrics
    result = runner.invoke(cli.app, ["chiasmus", "evaluate", "fr", str(fixtures_dir)])
    assert result.exit_code == 1


def test_stratified_folds():
    positive = [True] * 10 + [False] * 40
    folds = stratified_folds(positive, 5, seed=0)
    for fold in range(5):
        members = folds == fold
        assert members.sum() == 10 and sum(p for p, m in zip(positive, members) if m) == 2
    assert (stratified_folds(positive, 5, seed=0) == folds).all()


@pytest.mark.data
def test_german_one_fold(data_dir):
    nlp = spacy.blank("de")
    examples = german_examples(data_dir("german-chiasmus"), nlp)
    assert len(examples) == 450
    result = cross_validate(examples, "de", GERMAN_FULL, folds=[0])
    assert result["n_candidates"] == 450 and result["n_positive"] == 80
    (ap,) = result["ap_per_fold"]
    assert 0.4 < ap <= 1.0  # the positive rate is 0.18
    # the input docs keep the dataset's tagging
    doc = examples[0].predicted
    assert doc.has_annotation("POS") and doc.has_annotation("LEMMA") and "dep" in doc.user_data
    assert isinstance(doc, Doc)


def test_chiasmus_corpus_reader(fixtures_dir, tmp_path):
    from spacy_rhetoric.corpora import convert, write_conversion

    paths = write_conversion(convert("chiasmus-de", fixtures_dir / "chiasmus-de"), tmp_path)
    reader = registry.readers.get("spacy-rhetoric.chiasmus_corpus.v1")
    nlp = spacy.blank("de")
    examples = list(reader(paths["all"])(nlp))
    assert len(examples) == 3
    assert examples[0].predicted.has_annotation("POS") and "dep" in examples[0].predicted.user_data
    assert not examples[0].predicted.spans
    bare = list(reader(paths["all"], keep_annotations=False)(nlp))
    assert not bare[0].predicted.has_annotation("POS")
    train = list(reader(paths["all"], n_folds=2, fold=0, part="train")(nlp))
    dev = list(reader(paths["all"], n_folds=2, fold=0, part="dev")(nlp))
    assert len(train) + len(dev) == 3 and train and dev
    with pytest.raises(ValueError):
        reader(paths["all"], part="test")


def test_protocol_settings_come_from_the_training_config(tmp_path):
    from spacy_rhetoric.chiasmus.crossval import default_config_path, settings_from_config

    settings = settings_from_config()
    assert settings["epochs"] == 150 and settings["batch_size"] == 200
    assert settings["learn_rate"] == 0.001 and settings["L2"] == 1.0
    assert settings["L2_is_weight_decay"] is False
    assert settings["model"]["@architectures"] == "spacy-rhetoric.ChiasmusScorer.v2"
    assert settings["model"]["encoder_layers"] == [0, 8]
    assert settings["model"]["hidden_width"] == 64
    # a changed config changes the protocol: one recipe, read from one place
    text = default_config_path().read_text().replace("max_epochs = 150", "max_epochs = 7")
    (tmp_path / "de.cfg").write_text(text)
    assert settings_from_config(tmp_path / "de.cfg")["epochs"] == 7
    with pytest.raises(ValueError, match="not found"):
        settings_from_config(tmp_path / "missing.cfg")
