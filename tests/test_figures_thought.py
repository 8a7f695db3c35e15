"""The figures of thought (``figures.thought``): antithesis and rhetorical questions
proposed by their rules, their features, and figure_finder reporting them on tagged
text."""

import time

import numpy
import pytest
import spacy

import spacy_rhetoric  # noqa: F401  (registers figure_finder)
from spacy_rhetoric.figures import thought
from spacy_rhetoric.figures.component import FigureFinder
from spacy_rhetoric.figures.features import COLUMN, FEATURES, THOUGHT_FEATURES
from spacy_rhetoric.figures.model import FigureScorer
from spacy_rhetoric.figures.segment import segment
from spacy_rhetoric.figures.words import colon_words, doc_words


def _candidates(doc, wanted=thought.FIGURES):
    seg = segment(doc, "auto")
    words = doc_words(doc)
    cw = colon_words(words.is_word, seg.colon_of, len(seg))
    found, shapes = thought.thought_candidates(doc, words, seg, cw, set(wanted))
    return found, shapes, words, seg


def _texts(doc, ranges):
    return [doc[s:e].text for s, e in ranges]


@pytest.fixture(scope="module")
def en():
    return spacy.load("en_rhetoric_base")


def test_corrective_antithesis(en):
    doc = en("We observe today not a victory of party, but a celebration of freedom.")
    found, shapes, _, _ = _candidates(doc, ["antithesis"])
    corrective = [c for c, s in zip(found, shapes) if s == "corrective"]
    assert len(corrective) == 1
    # each side's content words: the opposed words are among them
    assert _texts(doc, corrective[0].support) == ["victory", "party", "celebration", "freedom"]


@pytest.mark.parametrize(
    "text",
    [
        "He is not only brave but also wise.",
        "They came not merely to watch but to help.",
    ],
)
def test_not_only_but_also_is_no_antithesis(en, text):
    found, shapes, _, _ = _candidates(en(text), ["antithesis"])
    assert "corrective" not in shapes


def test_latin_corrective_and_german_sondern():
    la = spacy.blank("la")
    doc = la("Non ministeriis illos aestimabo sed moribus.")
    found, shapes, _, _ = _candidates(doc, ["antithesis"])
    assert shapes == ["corrective"]
    assert _texts(doc, found[0].support) == ["ministeriis illos aestimabo", "moribus"]
    de = spacy.blank("de")
    doc = de("Ich suche nicht den Ruhm, sondern die Wahrheit.")
    found, shapes, _, _ = _candidates(doc, ["antithesis"])
    assert "corrective" in shapes
    doc = de("Er ist nicht nur klug, sondern auch tapfer.")
    assert "corrective" not in _candidates(doc, ["antithesis"])[1]


def test_antonyms_in_parallel_cola(en):
    doc = en("In time of peace we prepare; in time of war we fight.")
    found, shapes, _, _ = _candidates(doc, ["antithesis"])
    pairs = [_texts(doc, c.support) for c, s in zip(found, shapes) if s == "antonyms"]
    assert ["peace", "war"] in pairs


def test_negative_prefix_opposes():
    la = spacy.blank("la")
    doc = la("Felix est qui sapit, infelix qui desipit.")
    found, shapes, _, _ = _candidates(doc, ["antithesis"])
    pairs = [_texts(doc, c.support) for c, s in zip(found, shapes) if s == "antonyms"]
    assert ["Felix", "infelix"] in pairs


def test_no_antonyms_far_apart(en):
    filler = " ".join(["The committee met on Tuesday and adjourned."] * 6)
    doc = en(f"The peace was signed. {filler} The war had ended long before.")
    found, shapes, _, _ = _candidates(doc, ["antithesis"])
    assert "antonyms" not in shapes


def test_one_question_candidate_per_question_mark(en):
    doc = en("Who restrained him? Nobody. Why am I called upon to speak here today? I do not know.")
    found, shapes, _, _ = _candidates(doc, ["rhetorical_question"])
    assert shapes == ["question", "question"]
    assert [doc[c.start : c.end].text for c in found] == [
        "Who restrained him?",
        "Why am I called upon to speak here today?",
    ]


def test_latin_questions_split_at_each_mark():
    la = spacy.blank("la")
    doc = la("Quid censes? Quid agis? Nonne vides?")
    found, _, _, _ = _candidates(doc, ["rhetorical_question"])
    assert len(found) == 3


def test_question_features():
    la = spacy.blank("la")
    doc = la("Nonne vides quid agatur? Video. Quid tum?")
    found, shapes, words, seg = _candidates(doc, ["rhetorical_question"])
    X = numpy.zeros((len(found), len(FEATURES)), dtype="float32")
    thought.thought_features(X, doc, words, seg, found, shapes)
    assert X[0, COLUMN["q_particle"]] == 1.0
    assert X[0, COLUMN["q_answer"]] == 1.0  # "Video." follows
    assert X[1, COLUMN["q_interrogative"]] == 1.0
    assert X[0, COLUMN["q_series"]] > 0


def test_a_question_another_speaker_answers_is_dialogue():
    de = spacy.blank("de")
    doc = de("ZRINY. Seid ihr alle versammelt?\nPAPRUTOWITSCH. Sie sind's, mein Graf!")
    found, shapes, words, seg = _candidates(doc, ["rhetorical_question"])
    X = numpy.zeros((len(found), len(FEATURES)), dtype="float32")
    thought.thought_features(X, doc, words, seg, found, shapes)
    assert X[0, COLUMN["q_dialogue"]] == 1.0


def test_thought_columns_stay_zero_for_other_figures():
    nlp = spacy.blank("la")
    finder = FigureFinder(nlp.vocab, scorer=FigureScorer.prior())
    doc = nlp("Nihil agis, nihil moliris, nihil cogitas. Quid agis? Non verbis sed factis.")
    found, X, _ = finder.find(doc)
    columns = [COLUMN[name] for name in THOUGHT_FEATURES]
    for cand, row in zip(found, X):
        if cand.figure not in thought.FIGURES:
            assert not row[columns].any()
    assert {"antithesis", "rhetorical_question"} <= {c.figure for c in found}


def test_chinese_gets_no_figures_of_thought():
    nlp = spacy.blank("zh")
    nlp.add_pipe("figure_finder")
    doc = nlp("这难道不是真的吗？不是失败，而是成功。")
    labels = {s.label_ for key in ("figures", "figure_candidates") for s in doc.spans[key]}
    assert labels.isdisjoint(thought.FIGURES)


def test_reported_on_a_speech(en):
    en.add_pipe("figure_finder")
    try:
        doc = en(
            "Ask not what your country can do for you; ask what you can do for your "
            "country. Shall we falter now? Shall we turn back? We observe today not a "
            "victory of party, but a celebration of freedom."
        )
    finally:
        en.remove_pipe("figure_finder")
    labels = {s.label_ for s in doc.spans["figures"]}
    assert "rhetorical_question" in labels
    questions = [s for s in doc.spans["figures"] if s.label_ == "rhetorical_question"]
    assert [s.text for s in questions] == ["Shall we falter now?", "Shall we turn back?"]


@pytest.mark.parametrize(
    "text",
    [
        "good bad " * 20_000,
        "good, bad, " * 20_000,
        "why? " * 20_000,
        "not good but bad " * 10_000,
        "Why did he go? " * 8_000,
    ],
)
def test_repetition_of_any_length_stays_fast_and_small(text):
    nlp = spacy.blank("en")
    nlp.add_pipe("figure_finder", config={"figures": list(thought.FIGURES)})
    start = time.perf_counter()
    doc = nlp(text)
    assert time.perf_counter() - start < 10  # linear: quadratic work takes minutes
    assert doc.spans["figures"].attrs["figure_found"] <= 10


def test_a_question_asked_again_later_is_another_candidate():
    la = spacy.blank("la")
    assert len(_candidates(la("Quid? Nihil dicis. Quid? Taces."), ["rhetorical_question"])[0]) == 2
    assert len(_candidates(la("Quid? Quid? Quid?"), ["rhetorical_question"])[0]) == 1


@pytest.mark.parametrize(
    "text",
    [
        "We seek friendship with all nations, large and small.",
        "It binds the North and South alike.",
        "Threats external or internal will not move us.",
    ],
)
def test_a_merism_is_no_antithesis(en, text):
    found, shapes, _, _ = _candidates(en(text), ["antithesis"])
    assert "antonyms" not in shapes


def test_latin_merism_with_enclitic():
    la = spacy.blank("la")
    doc = la("Omnia publici privatique iuris contempsit.")
    assert "antonyms" not in _candidates(doc, ["antithesis"])[1]


def test_additive_sed_etiam_is_no_contrast():
    la = spacy.blank("la")
    doc = la("Non solum salvi erunt, sed etiam honesti.")
    assert _candidates(doc, ["antithesis"])[1] == []
    doc = la("Illi perierunt, sed nos vivimus.")
    assert "contrast" in _candidates(doc, ["antithesis"])[1]


def test_exceptive_but_is_no_correction(en):
    doc = en("They had no appeal but to force.")
    assert "corrective" not in _candidates(doc, ["antithesis"])[1]
