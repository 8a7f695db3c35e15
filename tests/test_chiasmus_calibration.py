"""The per-language calibration of the chiasmus rules and the bounded review list:
the bias against brute force, the calibration never seeing the held-out part, the
shipped calibration file, review order and bounds, the bound on a repetitive text."""

import math
import os
from pathlib import Path

import numpy
import pytest
import spacy
import srsly
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_rhetoric.chiasmus import calibrate as calibrate_module
from spacy_rhetoric.chiasmus.calibration import (
    CALIBRATION_PATH,
    LANGUAGE_WEIGHTS,
    CalibrationError,
    calibrate,
    load_calibrations,
    rate_bias,
    write_calibrations,
)
from spacy_rhetoric.chiasmus.passages import kept_candidates
from spacy_rhetoric.stems import StemPairs, same_stem

REPO = Path(__file__).resolve().parents[1]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-30, 10), min_size=0, max_size=60),
    st.integers(1, 30000),
    st.sampled_from([0.0, 0.5, 1.0, 3.0]),
)
def test_rate_bias_is_the_lowest_bias_within_the_rate(scores, tokens, per_1000):
    scores = numpy.asarray(scores, dtype="float64")
    bias = rate_bias(scores, tokens, per_1000)
    allowed = math.floor(per_1000 * tokens / 1000 + 1e-9)
    assert (scores >= bias).sum() <= max(allowed, 0) or len(scores) == 0
    # brute force: no candidate value below the bias would also stay within the rate
    for value in sorted(set(scores.tolist())):
        if value < bias and (scores >= value).sum() <= allowed:
            raise AssertionError(f"bias {bias} too high: {value} also keeps the rate")


def test_rate_bias_rejects_bad_input():
    with pytest.raises(CalibrationError):
        rate_bias(numpy.zeros(3), 0)
    with pytest.raises(CalibrationError):
        rate_bias(numpy.zeros(3), 100, -1.0)


def test_calibration_never_sees_the_held_out_part():
    rng = numpy.random.default_rng(0)
    calibration = (rng.normal(-20, 5, 5000), 4000)
    held_out = (rng.normal(-20, 5, 5000) + 100, 4000)  # wildly different
    entry = calibrate("xx", calibration, held_out, {}, 1.0)
    again = calibrate("xx", calibration, (held_out[0] - 1000, 4000), {}, 1.0)
    assert entry["bias"] == again["bias"] == round(rate_bias(*calibration, 1.0), 4)
    assert entry["calibration"]["reported"] <= 4
    assert entry["held_out"]["reported"] == 5000  # measured, not tuned


def test_running_parts_are_disjoint(tmp_path):
    data = Path(
        os.environ.get(
            "SPACY_RHETORIC_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"
        )
    )
    if not (data / calibrate_module.GERMAN_LIT).is_file():
        pytest.skip("data mirror not found")
    for lang in ("de", "en", "la", "zh"):
        first, second, sources = calibrate_module.running_parts(lang, data)
        assert first and second and not set(first) & set(second), lang
        assert sources["calibration"] != sources["held_out"]


def test_shipped_calibration_covers_every_language_and_records_its_evidence():
    found = load_calibrations()
    assert set(found) >= {"de", "en", "la"}
    for _lang, entry in found.items():
        assert entry["calibration"]["reported_per_1000_tokens"] <= entry["per_1000"] + 1e-9
        assert entry["held_out"]["tokens"] > 10000
        assert entry["sources"]["calibration"] != entry["sources"]["held_out"]
    assert found["de"]["weights"]["comma_outer"] > -10  # German commas are grammatical
    for lang, weights in LANGUAGE_WEIGHTS.items():  # calibrated with today's weights
        assert found[lang]["weights"] == pytest.approx(weights)


def test_english_weights_are_the_ones_fitted_on_the_training_split():
    fitted = srsly.read_json(REPO / "benchmarks" / "results" / "chiasmus_en_fitted_weights.json")
    assert fitted["fitted_beats_rules_on_train_cv"]
    assert LANGUAGE_WEIGHTS["en"] == pytest.approx(fitted["weights"])
    assert not set(fitted["weights"]) & set(fitted["fixed"])


def test_default_rules_take_the_pipelines_language(tmp_path):
    found = load_calibrations()
    de = spacy.blank("de").add_pipe("chiasmus_finder")
    assert de.model.attrs["bias"] == found["de"]["bias"]
    assert de.model.attrs["calibrated_for"] == "de"
    fr = spacy.blank("fr").add_pipe("chiasmus_finder")  # no calibration: the English one
    assert fr.model.attrs["calibrated_for"] == "en"
    explicit = spacy.blank("de").add_pipe("chiasmus_finder", config={"model": {
        "@architectures": "spacy-rhetoric.ChiasmusRules.v2", "bias": 3.0,
        "weights": {"comma_outer": -7.0}}})  # fmt: skip
    assert explicit.model.attrs["bias"] == 3.0
    assert explicit.model.attrs["weights"]["comma_outer"] == -7.0
    assert explicit.model.attrs["weights"]["stop_a"] == found["de"]["weights"]["stop_a"]
    europarl = spacy.blank("de").add_pipe(
        "chiasmus_finder", config={"model": {"@architectures": "spacy-rhetoric.ChiasmusRules.v1"}}
    )
    assert europarl.model.attrs["bias"] == 0.23


def test_malformed_calibration_file_is_one_clear_error(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text('{"languages": {"de": {"bias": "x", "weights": {}}}}', encoding="utf8")
    with pytest.raises(CalibrationError, match="malformed"):
        load_calibrations(path)
    assert load_calibrations(tmp_path / "missing.json") == {}
    write_calibrations([{"lang": "xx", "bias": 1.0, "weights": {}}], tmp_path / "new.json")
    assert load_calibrations(tmp_path / "new.json")["xx"]["bias"] == 1.0
    assert CALIBRATION_PATH.is_file()


def test_same_stem():
    assert same_stem("blickst", "blickt") and same_stem("amor", "amoris")
    assert same_stem("the", "the") and not same_stem("haus", "hausaufgabe")
    assert not same_stem("sein", "seit")


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from("amor amoris blickst blickt haus hausaufgabe der".split()), min_size=1
    ),
    st.data(),
)
def test_stem_pairs_equal_same_stem_position_by_position(forms, data):
    index = st.integers(0, len(forms) - 1)
    left = numpy.asarray(data.draw(st.lists(index, max_size=30)), dtype=numpy.int64)
    right = numpy.asarray(data.draw(st.lists(index, min_size=len(left), max_size=len(left))))
    expected = [float(same_stem(forms[i], forms[j])) for i, j in zip(left, right)]
    assert StemPairs(forms)(left, right.astype(numpy.int64)).astype("float32").tolist() == expected


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0, 1), max_size=80),
    st.integers(0, 5000),
    st.floats(0.1, 0.9),
    st.one_of(st.none(), st.floats(0, 20)),
)
def test_kept_candidates_bounds(scores, tokens, threshold, review):
    ranked = numpy.sort(numpy.asarray(scores, dtype="float64"))[::-1]
    kept, findings = kept_candidates(ranked, tokens, threshold, review)
    above = int((ranked >= threshold).sum())
    if review is None:
        assert (kept, findings) == (len(ranked), above)
        return
    assert findings <= above and findings <= 20 + math.ceil(50 * tokens / 1000)
    assert kept - findings <= math.ceil(review * tokens / 1000)
    assert kept <= len(ranked)
    assert all(ranked[:findings] >= threshold)
    assert all(ranked[findings:kept] < threshold)  # the review list: below the threshold


def test_review_list_is_bounded_ordered_and_apart_from_the_chiasmi():
    nlp = spacy.blank("en")
    nlp.add_pipe("chiasmus_finder", config={"review_per_1000": 100.0, "threshold": 0.5})
    text = "Fair is foul, and foul is fair. " * 3 + "We eat to live and live to eat. " * 3
    doc = nlp(text)
    kept = list(doc.spans["chiasmus_candidates"])
    chiasmi = {s.id_ for s in doc.spans["chiasmus"]}
    review = [s for s in kept if s.id_ not in chiasmi]
    scores = [s._.chiasmus_score for s in kept]
    assert scores == sorted(scores, reverse=True)
    assert kept[: len(chiasmi)] == list(doc.spans["chiasmus"])
    assert all(s._.chiasmus_score < 0.5 for s in review)
    assert len(review) <= math.ceil(100.0 * len(doc) / 1000)
    assert all(len(s._.chiasmus_support) == 4 for s in review)


def test_candidates_stay_bounded_on_a_repetitive_text():
    nlp = spacy.blank("de")
    nlp.add_pipe("chiasmus_finder")
    doc = nlp(" ".join(["der Mann der Frau"] * 250))  # 1,000 tokens, ~500,000 candidates
    finder = nlp.get_pipe("chiasmus_finder")
    candidates, _ = finder.predict([nlp.make_doc(doc.text)])
    assert len(candidates[0].indices) > 100_000
    assert len(doc.spans["chiasmus_candidates"]) <= 20 + 50 + 5
    above = doc.spans["chiasmus"].attrs["chiasmus_above_threshold"]
    assert len(doc.spans["chiasmus"]) == min(above, 20 + 50)


def test_the_default_search_pairs_forms_that_share_a_stem():
    # POS and lemmas as the shipped small German tagger gives them: neither pair repeats
    # its POS or its lemma, so only the stem pairs propose the antimetabole
    words = "Nicht die Glücklichen sind dankbar , sondern die Dankbaren sind glücklich .".split()
    pos = "PART DET NOUN AUX ADJ PUNCT CCONJ DET NOUN AUX ADJ PUNCT".split()
    lemmas = [w if p != "DET" else "der" for w, p in zip(words, pos)]
    texts = []
    for stem_pairs in (True, False):
        nlp = spacy.blank("de")
        finder = nlp.add_pipe("chiasmus_finder", config={"suggester": {"stem_pairs": stem_pairs}})
        doc = finder(Doc(nlp.vocab, words=words, pos=pos, lemmas=lemmas))
        texts.append([s.text for s in doc.spans["chiasmus"]])
    assert texts[0] == ["Glücklichen sind dankbar , sondern die Dankbaren sind glücklich"]
    assert texts[1] == []


def test_a_doc_on_a_bare_vocab_gets_the_same_candidates():
    # Vocab() computes no lexical attributes: lower_ is "" for every token, which once
    # made every pair of a POS-less doc "repeat its form"
    from spacy.vocab import Vocab

    words = "We eat to live , and do not live to eat .".split()
    finder = spacy.blank("en").add_pipe("chiasmus_finder")
    found = [
        finder.suggester([Doc(vocab, words=words)])[0].indices.tolist()
        for vocab in (finder.vocab, Vocab())
    ]
    assert found[0] == found[1] and [1, 3, 8, 10] in found[0]


def test_symbols_never_take_part_whatever_their_pos():
    # the small Latin tagger reads the editorial brackets of "<ser>m<oni>" as ADV and VERB
    words = "multa < ser > m < oni > verba verba multa".split()
    pos = "NOUN ADV NOUN VERB NOUN ADV NOUN VERB NOUN NOUN NOUN".split()
    finder = spacy.blank("la").add_pipe("chiasmus_finder")
    found = finder.suggester([Doc(finder.vocab, words=words, pos=pos, lemmas=words)])[0]
    symbols = {i for i, w in enumerate(words) if w in "<>"}
    assert len(found.indices) and not symbols & set(found.indices.ravel().tolist())
