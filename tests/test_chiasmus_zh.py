"""chiasmus_finder for Chinese (回环): the character view, the search on characters, the
shipped calibration, and the finder after the Chinese base pipeline."""

import numpy
import pytest
import spacy
from spacy.tokens import Doc

from spacy_rhetoric.chiasmus import calibrate as calibrate_module
from spacy_rhetoric.chiasmus.calibration import LANGUAGE_WEIGHTS, load_calibrations
from spacy_rhetoric.chiasmus.characters import CHARACTERS_ATTR, best_per_words, character_view


def _zh_doc(nlp, words, pos=None):
    return Doc(nlp.vocab, words=words, spaces=[False] * len(words), pos=pos)


def test_character_view_splits_han_words_and_maps_back():
    nlp = spacy.blank("zh")
    doc = _zh_doc(nlp, ["信言不美", "，", "美言不信", "。", "GDP", "2024"])
    view = character_view(doc)
    assert [t.text for t in view.doc] == list("信言不美，美言不信。") + ["GDP", "2024"]
    assert view.token_of.tolist() == [0] * 4 + [1] + [2] * 4 + [3, 4, 5]
    assert [doc.text[i] for i in view.offsets[:10]] == list("信言不美，美言不信。")
    assert view.doc[2].is_stop and not view.doc[0].is_stop  # 不: spaCy's Chinese stop list


def test_best_per_words_keeps_the_best_candidate_on_the_same_words():
    rows = numpy.asarray([[0, 0, 2, 2], [0, 0, 2, 2], [0, 1, 1, 2]])
    assert best_per_words(rows, numpy.asarray([1.0, 3.0, 0.0])).tolist() == [1, 2]
    assert best_per_words(rows[:0], numpy.zeros(0)).tolist() == []


def test_blank_chinese_pipeline_finds_the_antimetabole_inside_words():
    nlp = spacy.blank("zh")
    finder = nlp.add_pipe("chiasmus_finder")
    doc = finder(_zh_doc(nlp, ["信言不美", "，", "美言不信", "。"]))
    assert [s.text for s in doc.spans["chiasmus"]] == ["信言不美，美言不信"]
    best = doc.spans["chiasmus"][0]
    chars = doc.spans["chiasmus"].attrs[CHARACTERS_ATTR][best.id_]
    assert "".join(doc.text[i] for i in chars) == "信美美信"
    assert best._.is_antimetabole and best.label_ == "antimetabole"
    support = [s.text for s in best._.chiasmus_support]
    assert support == ["信言不美"] * 2 + ["美言不信"] * 2
    # on tokens, the two words never repeat: nothing to invert
    tokens = spacy.blank("zh").add_pipe("chiasmus_finder", config={"units": "tokens"})
    assert len(tokens(_zh_doc(nlp, ["信言不美", "，", "美言不信", "。"])).spans["chiasmus"]) == 0


def test_units_are_checked():
    with pytest.raises(ValueError, match="units must be one of"):
        spacy.blank("zh").add_pipe("chiasmus_finder", config={"units": "words"})


def test_shipped_chinese_calibration_is_read():
    entry = load_calibrations()["zh"]
    assert entry["weights"] == pytest.approx(LANGUAGE_WEIGHTS["zh"])
    assert entry["sources"]["calibration"] == "UD Chinese-GSD dev"
    assert entry["sources"]["held_out"] == "UD Chinese-GSD test"
    assert entry["calibration"]["reported_per_1000_tokens"] <= 1.0
    assert entry["positives"]["n"] == len(entry["famous"]) == 15
    finder = spacy.blank("zh").add_pipe("chiasmus_finder")
    assert finder.model.attrs["calibrated_for"] == "zh"
    assert finder.model.attrs["bias"] == entry["bias"]
    assert "zh" in calibrate_module.CALIBRATED_LANGUAGES


@pytest.fixture(scope="module")
def zh_base():
    try:
        nlp = spacy.load("zh_rhetoric_base")
    except OSError:
        pytest.skip("zh_rhetoric_base is not installed")
    nlp.add_pipe("chiasmus_finder")
    return nlp


def test_base_pipeline_reports_the_daodejing(zh_base):
    doc = zh_base("信言不美，美言不信。")
    found = doc.spans["chiasmus"]
    assert [s.text for s in found] == ["信言不美，美言不信"]
    chars = found.attrs[CHARACTERS_ATTR][found[0].id_]
    assert "".join(doc.text[i] for i in chars) == "信美美信"
    assert found[0]._.chiasmus_score > 0.99


def test_base_pipeline_ignores_a_plain_repetition(zh_base):
    doc = zh_base("我们今天去学校，明天也去学校。")
    assert len(doc.spans["chiasmus"]) == 0
    # a repeated word is proposed nowhere as an inversion
    assert all(s._.chiasmus_score < 0.5 for s in doc.spans["chiasmus_candidates"])
