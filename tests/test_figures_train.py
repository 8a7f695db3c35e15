"""The figure scorer's fit and calibration (spacy_rhetoric.figures.train, .calibrate),
the shipped scorer.json with its per-language thresholds, and ``figures find``."""

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import Doc
from typer.testing import CliRunner

import spacy_rhetoric  # noqa: F401  (registers figure_finder)
from spacy_rhetoric.cli import app
from spacy_rhetoric.figures.calibrate import choose_thresholds, rate, spare_threshold
from spacy_rhetoric.figures.component import FIGURES
from spacy_rhetoric.figures.features import COLUMN, FEATURES
from spacy_rhetoric.figures.model import SCORER_PATH, FigureScorer, load_scorer
from spacy_rhetoric.figures.train import (
    cross_validate,
    fit_figure,
    scorer_spec,
    weighted_average_precision,
)
from spacy_rhetoric.figures.training_data import (
    LANGUAGES,
    FigureData,
    matches,
    read_gold,
    support_ranges,
    training_weights,
)

runner = CliRunner()


def test_packaged_scorer_has_thresholds_per_language():
    assert SCORER_PATH.is_file()
    data = srsly.read_json(SCORER_PATH)
    assert data["features"] == list(FEATURES)
    scorer = load_scorer()
    assert scorer.source == "file"
    for figure in ("anaphora", "epizeuxis", "asyndeton"):
        for lang in LANGUAGES:
            assert "threshold" in data["figures"][figure]["languages"][lang]
            assert scorer.threshold(figure, lang) == pytest.approx(
                data["figures"][figure]["languages"][lang]["threshold"]
            )
    # the languages differ somewhere: thresholds are calibrated per language
    assert len({scorer.threshold("anaphora", lang) for lang in LANGUAGES}) > 1


def test_per_language_thresholds_apply(tmp_path):
    data = FigureScorer.prior().to_dict()
    data["figures"]["epizeuxis"]["languages"] = {
        "en": {"threshold": 1.01},
        "de": {"threshold": 0.0},
    }
    data["figures"]["anaphora"]["languages"] = {"de": {"weights": {"bias": 0.0}, "bias": -30.0}}
    path = tmp_path / "scorer.json"
    srsly.write_json(path, data)
    found = {}
    for lang, text in (("en", "Words, words, words."), ("de", "Worte, Worte, Worte.")):
        nlp = spacy.blank(lang)
        nlp.add_pipe("figure_finder", config={"scorer_path": str(path)})
        doc = nlp(text)
        found[lang] = {s.label_ for s in doc.spans["figures"]}
    assert "epizeuxis" not in found["en"] and "epizeuxis" in found["de"]
    scorer = load_scorer(path)
    X = numpy.zeros((1, len(FEATURES)))
    assert scorer("anaphora", X, "de")[0] < 1e-6 < scorer("anaphora", X, "en")[0]


def test_packaged_scorer_for_tagged_docs_prior_for_untagged():
    nlp = spacy.blank("en")
    finder = nlp.add_pipe("figure_finder")
    untagged = nlp("Words, words, words.")
    assert untagged.spans["figures"].attrs["figure_scorer"] == "prior"
    words = ["Words", ",", "words", ",", "words", "."]
    pos = ["NOUN", "PUNCT", "NOUN", "PUNCT", "NOUN", "PUNCT"]
    tagged = finder(Doc(nlp.vocab, words=words, pos=pos))
    assert tagged.spans["figures"].attrs["figure_scorer"] == "file"


def _synthetic(n=60, seed=0):
    rng = numpy.random.default_rng(seed)
    data = FigureData()
    for i in range(n):
        for label in (0, 1):
            x = numpy.zeros(len(FEATURES))
            x[COLUMN["bias"]] = 1.0
            x[COLUMN["extra_members"]] = rng.normal(3.0 if label else 0.0, 0.7)
            x[COLUMN["stop"]] = float(rng.random() < (0.1 if label else 0.7))
            lang = LANGUAGES[i % len(LANGUAGES)]
            data.add("anaphora", x, label, 1.0, lang, f"doc{i}", "gold")
        x = numpy.zeros(len(FEATURES))
        x[COLUMN["extra_members"]] = rng.normal(0.0, 0.7)
        data.add("anaphora", x, 0, 0.1, "en", f"run{i}", "running")
    return data


def test_training_separates_positives_from_negatives():
    arrays = _synthetic().arrays("anaphora")
    w = training_weights(arrays)
    y = arrays["y"]
    assert w[y == 1].sum() == pytest.approx(w[y == 0].sum())
    assert w[arrays["source"] == "running"].max() <= 0.1 + 1e-9
    for variant in ("shared", "per_language"):
        model = fit_figure(arrays, variant, 1.0)
        scores = model.scores(arrays["X"], arrays["lang"])
        assert scores[y == 1].mean() > 0.8 > 0.2 > scores[y == 0].mean()
        assert weighted_average_precision(scores, y, numpy.ones_like(y)) > 0.95
    assert model.weights["*"][COLUMN["extra_members"]] > 0
    mean, sd = cross_validate(arrays, "shared", 1.0, k=3, seeds=(0,))
    assert mean > 0.9 and sd >= 0
    spec = scorer_spec(
        {"anaphora": fit_figure(arrays, "shared", 1.0)}, {"en": {"anaphora": 0.7}}, "test"
    )
    scorer = FigureScorer.from_dict(spec)
    assert scorer.threshold("anaphora", "en") == pytest.approx(0.7)
    assert set(spec["figures"]) == set(FIGURES)


def test_weighted_average_precision():
    assert weighted_average_precision([0.9, 0.8, 0.1], [1, 1, 0], [1, 1, 1]) == pytest.approx(1.0)
    assert weighted_average_precision([0.9, 0.8], [0, 1], [1, 1]) == pytest.approx(0.5)
    # a negative of weight 0.1 above the positive costs a tenth as much
    assert weighted_average_precision([0.9, 0.8], [0, 1], [0.1, 1]) == pytest.approx(1 / 1.1)


def test_calibration_keeps_a_tiny_text_within_its_budget():
    nlp = spacy.blank("en")
    finder = nlp.add_pipe("figure_finder")
    text = (
        "We met, we talked, we agreed. The report, the plan and the budget were read. "
        "Sales rose and rose. Bob said that Bob would come. Big bold brave bears. " * 4
    )
    doc = nlp.make_doc(text)
    candidates, _, scores = finder.find(doc)
    n_tokens = len(doc)
    running = {}
    for cand, score in zip(candidates, scores):
        running.setdefault(cand.figure, []).append(float(score))
    running = {f: numpy.asarray(v) for f, v in running.items()}
    positives = [
        ("anaphora", "edges", 0.95),
        ("epizeuxis", "in place", 0.9),
        ("alliteration", "sound", 0.2),
        ("asyndeton", "conjunction", None),
    ]
    budget = 1000 * 3 / n_tokens  # three reports
    chosen = choose_thresholds(running, n_tokens, positives, budget=budget)
    total = sum(
        rate(running.get(f, numpy.zeros(0)), t, n_tokens) for f, t in chosen["thresholds"].items()
    )
    assert total <= budget + 1e-9
    assert chosen["total_per_1000"] == pytest.approx(total, abs=1e-3)
    # a figure without dev positives reports at most the spare rate
    assert rate(running["ploce"], chosen["thresholds"]["ploce"], n_tokens) <= 0.05 + 1e-9
    # an ample budget finds every positive that has a score
    ample = choose_thresholds(running, n_tokens, positives, budget=1e6)
    assert ample["dev_found"]["anaphora"] == [1, 1] and ample["dev_found"]["alliteration"] == [1, 1]
    assert ample["dev_found"]["asyndeton"] == [0, 1]
    # a preferred score (an issue example) is a preference, not a constraint: no budget,
    # nothing reported
    none = choose_thresholds(running, n_tokens, positives, budget=0.0, preferred={"epizeuxis": 0.9})
    assert none["total_per_1000"] == 0.0
    # a cap per figure: no figure reports more than its cap
    capped = choose_thresholds(running, n_tokens, positives, budget=1e6, figure_cap=budget / 3)
    for figure, value in capped["rates"].items():
        assert value <= budget / 3 + 1e-9 or figure == "ploce"
    # few dev positives (one each here): the few cap applies
    few = choose_thresholds(running, n_tokens, positives, budget=1e6, few_cap=0.0)
    assert all(few["rates"][f] == 0.0 for f in ("anaphora", "epizeuxis", "alliteration"))


def test_preferred_example_wins_a_tie():
    running = {"anaphora": numpy.asarray([0.5, 0.4]), "epiphora": numpy.asarray([0.5, 0.4])}
    positives = [("anaphora", "edges", 0.45), ("epiphora", "edges", 0.45)]
    # room for one report: the figure holding the example gets it
    chosen = choose_thresholds(
        running, 1000, positives, budget=1.0, figures=("anaphora", "epiphora"),
        preferred={"epiphora": 0.45},
    )  # fmt: skip
    assert chosen["dev_found"]["epiphora"] == [1, 1] and chosen["dev_found"]["anaphora"] == [0, 1]


def test_spare_threshold():
    scores = numpy.asarray([0.9, 0.8, 0.7, 0.1])
    assert rate(scores, spare_threshold(scores, 1000, 2.0), 1000) == pytest.approx(2.0)
    assert rate(scores, spare_threshold(scores, 1000, 0.0), 1000) == 0.0


def test_gold_support_matching():
    rows = read_gold()
    assert {r["split"] for r in rows} == {"dev", "test"}
    text = "nihil agis, nihil moliris, nihil cogitas"
    assert support_ranges(text, ["nihil", "nihil"], "la") == [(0, 5), (12, 17)]
    nlp = spacy.blank("la")
    finder = nlp.add_pipe("figure_finder")
    doc = nlp.make_doc(text)
    candidates, _, _ = finder.find(doc)
    gold = support_ranges(text, ["nihil", "nihil", "nihil"], "la")
    assert any(c.figure == "anaphora" and matches(doc, c, gold) for c in candidates)
    members = support_ranges(text, ["agis", "moliris", "cogitas"], "la")
    assert any(c.figure == "asyndeton" and matches(doc, c, members) for c in candidates)
    assert not any(matches(doc, c, []) for c in candidates)


def test_read_gold_names_the_bad_line(tmp_path):
    path = tmp_path / "examples.jsonl"
    path.write_text('{"id": "x"}\nnot json\n', encoding="utf8")
    with pytest.raises(ValueError, match="line 1: missing"):
        read_gold(path)
    path.write_text("not json\n", encoding="utf8")
    with pytest.raises(ValueError, match="line 1: not JSON"):
        read_gold(path)


def test_figures_find_cli(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("Words, words, words. Nothing will come of nothing.\n", encoding="utf8")
    result = runner.invoke(app, ["figures", "find", str(path), "--lang", "en", "--json"])
    assert result.exit_code == 0, result.output
    found = srsly.json_loads(result.output)
    assert any(i["figure"] == "epizeuxis" and not i["review"] for i in found)
    for item in found:
        assert {"figure", "score", "review", "support", "context", "start_char"} <= set(item)
    result = runner.invoke(app, ["figures", "find", str(path), "--lang", "en"])
    assert result.exit_code == 0 and "epizeuxis" in result.output


@pytest.mark.parametrize("content", [None, "", "  \n"])
def test_figures_find_bad_input(tmp_path, content):
    path = tmp_path / "text.txt"
    if content is not None:
        path.write_text(content, encoding="utf8")
    result = runner.invoke(app, ["figures", "find", str(path), "--lang", "en"])
    assert result.exit_code == 1
    message = " ".join(result.output.split())  # one message (wasabi wraps long lines)
    assert message.count("✘") == 1 and "Traceback" not in result.output
    assert ("is empty" if content is not None else "not found") in message


def test_figures_find_unknown_language(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("Words, words, words.", encoding="utf8")
    result = runner.invoke(app, ["figures", "find", str(path), "--lang", "xx"])
    assert result.exit_code == 1 and "Unknown language" in result.output
