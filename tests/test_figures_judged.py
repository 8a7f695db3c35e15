"""The running-text guard (spacy_rhetoric.figures.judged): judged reports read back,
matched to the rules' candidates, and thresholds raised only where fewer than 60 % of
the judged reports above them are figures; checked against brute force and on the
repository's judged samples."""

import json
import random

import pytest

from spacy_rhetoric.figures.judged import (
    GUARD_LANGUAGES,
    GUARD_SHARE,
    guard_threshold,
    guard_thresholds,
    judged_dirs,
    read_judged,
    score_judged,
)


def _holds(value, scored):
    above = [p for s, p in scored if s >= value]
    return not above or (sum(above) + 1) / (len(above) + 2) >= GUARD_SHARE


def test_guard_keeps_a_threshold_that_holds():
    scored = [(0.9, True), (0.8, True), (0.75, True), (0.7, False), (0.4, False)]
    assert guard_threshold(0.5, scored) == 0.5


def test_guard_raises_past_the_wrong_reports():
    scored = [(0.95, True), (0.9, False), (0.8, False), (0.7, False), (0.6, True)]
    raised = guard_threshold(0.5, scored)
    assert raised > 0.5
    # above the raised threshold: no report, or >= 60 % figures (Laplace)
    assert _holds(raised, scored)
    assert guard_threshold(raised, scored) == raised


@pytest.mark.parametrize("seed", range(40))
def test_guard_is_the_lowest_threshold_that_holds(seed):
    """Brute force: no threshold between the old one and the raised one holds."""
    rng = random.Random(seed)
    scored = [(round(rng.random(), 3), rng.random() < 0.35) for _ in range(rng.randint(0, 12))]
    start = round(rng.random() * 0.6, 3)
    raised = guard_threshold(start, scored)
    assert raised >= start
    assert _holds(raised, scored)
    grid = sorted({start} | {s for s, _ in scored} | {s + 1e-6 for s, _ in scored})
    assert not any(start <= v < raised and _holds(v, scored) for v in grid)


def test_guard_thresholds_leave_off_figures_off_and_report():
    scored = [
        {"lang": "en", "figure": "polyptoton", "score": s, "positive": p}
        for s, p in [(0.7, False), (0.65, False), (0.6, True), (0.55, False)]
    ] + [{"lang": "en", "figure": "ploce", "score": 0.9, "positive": False}] * 3
    thresholds = {"polyptoton": 0.5, "ploce": 1.000001, "anaphora": 0.6}
    out, report = guard_thresholds(thresholds, scored, "en")
    assert out["polyptoton"] > 0.7  # one right of four: above them all
    assert out["ploce"] == 1.000001 and out["anaphora"] == 0.6
    assert report["polyptoton"]["raised"] and report["polyptoton"]["reported_before"] == 4
    assert report["polyptoton"]["right_or_partly_before"] == 0.25
    assert "anaphora" not in report


def test_read_judged_counts_what_it_skips(tmp_path):
    folder = tmp_path / "figures-judged-x"
    folder.mkdir()
    items = {
        "1": {"lang": "en", "label": "anaphora", "tokens": [0, 3], "doc_text": "a b c"},
        "2": {"lang": "en", "label": "ploce", "tokens": [0, 1]},
        "3": {"lang": "en", "label": "ploce", "tokens": [0, 1], "doc_text": "a"},
        "4": {"lang": "la", "label": "ploce", "tokens": [0, 1], "doc_text": "a"},
    }
    (folder / "key.json").write_text(json.dumps({"items": items}), encoding="utf8")
    (folder / "labels.json").write_text(
        json.dumps({"1": "Partly", "2": "wrong", "3": "", "4": "right"}), encoding="utf8"
    )
    got, skipped = read_judged(judged_dirs(tmp_path, ["figures-judged-x"]))
    assert [(i["figure"], i["positive"]) for i in got] == [("anaphora", True)]
    assert skipped == {"no_doc_text": 1, "unlabelled": 1}
    with pytest.raises(FileNotFoundError, match="figures-judged-y"):
        judged_dirs(tmp_path, ["figures-judged-x", "figures-judged-y"])
    (folder / "labels.json").write_text("{", encoding="utf8")
    with pytest.raises(ValueError, match="not JSON"):
        read_judged([folder])


def test_repository_samples_are_readable():
    """The judged samples the shipped scorer's guard read: every English and German
    item labelled and with its doc text, which holds the judged extent."""
    dirs = judged_dirs()
    assert not any(d.name.startswith("figures-judged-0.8") for d in dirs)  # the test samples
    items, skipped = read_judged(dirs, GUARD_LANGUAGES)
    assert skipped == {"no_doc_text": 0, "unlabelled": 0}
    assert {i["lang"] for i in items} == set(GUARD_LANGUAGES)
    assert len(items) >= 100
    assert all(0 <= i["tokens"][0] < i["tokens"][1] for i in items)


def test_score_judged_matches_a_candidate():
    import spacy

    from spacy_rhetoric.figures.component import FigureFinder
    from spacy_rhetoric.figures.model import FigureScorer

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    text = (
        "We shall fight on the beaches, we shall fight on the hills, we shall fight in the fields."
    )
    doc = nlp(text)
    finder = FigureFinder(nlp.vocab, scorer=FigureScorer.prior())
    cands, _, _ = finder.find(doc)
    anaphora = [c for c in cands if c.figure == "anaphora"]
    assert anaphora
    item = {
        "lang": "en",
        "figure": "anaphora",
        "tokens": (anaphora[0].start, anaphora[0].end),
        "doc_text": text,
        "positive": True,
    }
    gone = dict(item, figure="epiphora")
    scored = score_judged([item, gone], {"en": nlp}, {"en": finder}, FigureScorer.prior())
    assert 0.0 < scored[0]["score"] <= 1.0
    assert scored[1]["score"] is None
