"""The figure_finder component: add_pipe on blank and trained pipelines, its outputs
and extensions, settings and their errors, serialization, pickling, multiprocessing."""

import pickle

import pytest
import spacy
import srsly
from spacy.language import Language

import spacy_rhetoric  # noqa: F401  (registers figure_finder)
from spacy_rhetoric.figures.component import FIGURES, FigureFinder
from spacy_rhetoric.figures.features import FEATURES, candidate_features
from spacy_rhetoric.figures.model import PRIOR, FigureScorer, load_scorer
from spacy_rhetoric.figures.render import displacy_colors

TEXTS = {
    "la": "Nihil agis, nihil moliris, nihil cogitas. Veni, vidi, vici.",
    "en": "Words, words, words. We have ships and men and money and stores.",
    "de": "Das Wasser rauscht', das Wasser schwoll. Es regnet und stürmt und hagelt und schneit.",
    "zh": "名不正，则言不顺；言不顺，则事不成；事不成，则礼乐不兴。",
}
EXPECTED = {
    "la": {"anaphora", "asyndeton", "alliteration"},
    "en": {"epizeuxis", "polysyndeton"},
    "de": {"anaphora", "polysyndeton"},
    "zh": {"gradatio"},
}


def _output(doc):
    return [
        (
            s.label_,
            s.start,
            s.end,
            round(s._.figure_score, 6),
            [(w.start, w.end) for w in s._.figure_support],
        )
        for key in ("figures", "figure_candidates")
        for s in doc.spans[key]
    ]


@pytest.mark.parametrize("lang", ["la", "en", "de", "zh"])
def test_add_pipe_on_blank(lang):
    nlp = spacy.blank(lang)
    finder = nlp.add_pipe("figure_finder")
    assert isinstance(finder, FigureFinder)
    doc = nlp(TEXTS[lang])
    group = doc.spans["figures"]
    assert {s.label_ for s in group} == EXPECTED[lang]
    assert sum(group.attrs["figure_counts"].values()) == len(group)
    for span in group:
        assert 0.5 <= span._.figure_score <= 1.0
        assert span._.figure_support and span._.figure_members
        assert span._.figure_members[0].start == span.start
        assert span._.figure_members[-1].end <= span.end
    starts = [s.start for s in group]
    assert starts == sorted(starts)  # text order
    review = [s._.figure_score for s in doc.spans["figure_candidates"]]
    assert review == sorted(review, reverse=True) and all(r < 0.5 for r in review)


def test_after_a_trained_pipeline():
    nlp = spacy.load("en_rhetoric_base")
    nlp.add_pipe("figure_finder")
    doc = nlp(
        "that government of the people, by the people, for the people, shall not perish "
        "from the earth. Words, words, words."
    )
    found = {(s.label_, tuple(w.text for w in s._.figure_support)) for s in doc.spans["figures"]}
    assert ("epiphora", ("the people", "the people", "the people")) in found
    assert ("epizeuxis", ("Words", "words", "words")) in found
    assert doc.spans["figures"].attrs["figure_scorer"] in ("prior", "file")


def test_empty_doc_and_single_word():
    nlp = spacy.blank("en")
    nlp.add_pipe("figure_finder")
    for text in ("", "word", "   ", "."):
        doc = nlp(text)
        assert len(doc.spans["figures"]) == 0 and len(doc.spans["figure_candidates"]) == 0


def test_settings():
    nlp = spacy.blank("en")
    nlp.add_pipe("figure_finder", config={"figures": ["polysyndeton"], "threshold": 0.0,
                                          "review_per_1000": 0, "candidates_key": ""})  # fmt: skip
    doc = nlp(TEXTS["en"])
    assert {s.label_ for s in doc.spans["figures"]} == {"polysyndeton"}
    assert "figure_candidates" not in doc.spans
    nlp = spacy.blank("en")
    nlp.add_pipe("figure_finder", config={"threshold": 1.0, "review_per_1000": 1000})
    doc = nlp(TEXTS["en"])
    assert len(doc.spans["figures"]) == 0 and len(doc.spans["figure_candidates"]) >= 2


@pytest.mark.parametrize(
    "config,message",
    [
        ({"figures": ["anaphora", "zeugma"]}, "figure_finder: unknown figures \\['zeugma'\\]"),
        ({"threshold": 1.5}, "threshold must be in"),
        ({"review_per_1000": -1}, "review_per_1000 must be >= 0"),
        ({"max_candidates": -1}, "max_candidates must be >= 0"),
        ({"clauses": "commas"}, "clauses must be one of"),
        (
            {"scorer_path": "/nonexistent/scorer.json"},
            "scorer_path /nonexistent/scorer.json does not exist",
        ),
    ],
)
def test_bad_settings_name_the_component(config, message):
    with pytest.raises(ValueError, match=message):
        spacy.blank("en").add_pipe("figure_finder", config=config)


def test_missing_parse_is_a_one_line_error():
    nlp = spacy.blank("en")
    nlp.add_pipe("figure_finder", config={"clauses": "parse"})
    with pytest.raises(
        ValueError, match="^figure_finder: clauses = 'parse' needs token.dep: add a parser"
    ):
        nlp("Veni, vidi, vici.")


def test_scorer_file_and_prior(tmp_path):
    assert set(PRIOR) == set(FIGURES)
    scorer = load_scorer(None)
    assert isinstance(scorer, FigureScorer)
    data = FigureScorer.prior().to_dict()
    data["figures"]["epizeuxis"] = {"weights": {"bias": 0.0}, "bias": -20.0, "threshold": 0.5,
                                    "languages": {"de": {"bias": 20.0}}}  # fmt: skip
    data["source"] = "test"
    path = tmp_path / "scorer.json"
    srsly.write_json(path, data)
    nlp = spacy.blank("en")
    nlp.add_pipe("figure_finder", config={"scorer_path": str(path)})
    doc = nlp("Words, words, words.")
    assert "epizeuxis" not in {s.label_ for s in doc.spans["figures"]}
    assert doc.spans["figures"].attrs["figure_scorer"] == "test"
    with pytest.raises(ValueError, match="unknown features"):
        FigureScorer({"anaphora": {"weights": {"no_such_feature": 1.0}}})


def test_features_have_named_columns():
    nlp = spacy.blank("en")
    finder = nlp.add_pipe("figure_finder")
    doc = nlp.make_doc("Nihil agis, nihil moliris, nihil cogitas.")
    candidates, X, scores = finder.find(doc)
    assert X.shape == (len(candidates), len(FEATURES)) and len(scores) == len(candidates)
    row = X[[c.figure for c in candidates].index("anaphora")]
    column = dict(zip(FEATURES, row))
    assert column["bias"] == 1 and column["members"] == 3 and column["length_ratio"] == 1
    assert column["whole_cola"] == 1 and column["tagged"] == 0 and column["sentence_start"] == 1
    assert candidate_features(doc, None, None, []).shape == (0, len(FEATURES))


def test_to_disk_round_trip(tmp_path):
    nlp = spacy.blank("de")
    nlp.add_pipe("figure_finder", config={"review_per_1000": 50.0})
    before = _output(nlp(TEXTS["de"]))
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.get_pipe("figure_finder").cfg["review_per_1000"] == 50.0
    assert _output(loaded(TEXTS["de"])) == before
    restored = spacy.blank("de")
    restored.add_pipe("figure_finder").from_bytes(nlp.get_pipe("figure_finder").to_bytes())
    assert _output(restored(TEXTS["de"])) == before


def test_pickling():
    nlp = spacy.blank("la")
    nlp.add_pipe("figure_finder")
    before = _output(nlp(TEXTS["la"]))
    assert _output(pickle.loads(pickle.dumps(nlp))(TEXTS["la"])) == before
    doc = pickle.loads(pickle.dumps(nlp(TEXTS["la"])))
    assert _output(doc) == before


def test_pipe_with_two_processes():
    nlp = spacy.blank("en")
    nlp.add_pipe("figure_finder")
    texts = [
        TEXTS["en"],
        "Veni, vidi, vici.",
        "",
        "Peace brings us together, peace keeps us together.",
    ] * 2
    single = [_output(doc) for doc in nlp.pipe(texts)]
    assert [_output(doc) for doc in nlp.pipe(texts, n_process=2, batch_size=2)] == single


def test_factory_and_displacy_colors():
    assert "figure_finder" in Language.factories
    colors = displacy_colors()
    assert set(colors) == {f.upper() for f in FIGURES}
    nlp = spacy.blank("en")
    nlp.add_pipe("figure_finder")
    html = spacy.displacy.render(nlp("Words, words, words."), style="span",
                                 options={"spans_key": "figures"})  # fmt: skip
    assert colors["EPIZEUXIS"] in html
