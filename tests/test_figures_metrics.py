"""The figure metric (spacy_rhetoric.figures.metrics): what matches, the one-to-one
matching against brute force, the counts and scores; and the corpus thresholds chosen for
precision (spacy_rhetoric.figures.corpus.precision_thresholds)."""

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_rhetoric.figures.corpus import OFF, precision_thresholds
from spacy_rhetoric.figures.metrics import (
    FAMILIES,
    count_findings,
    is_match,
    match_findings,
    score_findings,
    support_units,
)


def test_support_units_fall_back_to_members():
    assert support_units({"members": [[0, 4], [6, 9]], "support": []}) == [(0, 4), (6, 9)]
    assert support_units({"members": [[0, 20]], "support": [[0, 4]]}) == [(0, 4)]


def test_is_match():
    anaphora = ("anaphora", [(0, 5), (10, 15), (20, 25)])
    assert is_match(anaphora, ("anaphora", [(0, 5), (10, 15)]))
    assert not is_match(anaphora, ("epiphora", [(0, 5), (10, 15)]))  # another label
    assert not is_match(anaphora, ("anaphora", [(0, 5), (40, 45)]))  # one shared word
    question = ("rhetorical_question", [(0, 30)])
    assert is_match(question, ("rhetorical_question", [(10, 50)]))  # one unit each
    assert not is_match(question, ("rhetorical_question", [(30, 50)]))  # touching only
    assert not is_match(("ploce", []), ("ploce", []))


def brute_force(reference, predicted):
    """The size of the largest one-to-one matching, by trying every assignment."""
    best = 0
    for size in range(min(len(reference), len(predicted)), 0, -1):
        for rows in itertools.combinations(range(len(reference)), size):
            for cols in itertools.permutations(range(len(predicted)), size):
                if all(is_match(reference[i], predicted[j]) for i, j in zip(rows, cols)):
                    return size
    return best


unit = st.tuples(st.integers(0, 8), st.integers(1, 3)).map(lambda t: (t[0], t[0] + t[1]))
finding = st.tuples(st.sampled_from(["anaphora", "ploce"]), st.lists(unit, min_size=1, max_size=3))


@settings(max_examples=200, deadline=None)
@given(st.lists(finding, max_size=4), st.lists(finding, max_size=4))
def test_matching_is_one_to_one_and_as_large_as_brute_force(reference, predicted):
    pairs = match_findings(reference, predicted)
    assert len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})
    assert all(is_match(reference[i], predicted[j]) for i, j in pairs)
    assert len(pairs) == brute_force(reference, predicted)


def test_counts_and_scores():
    anaphora = ("anaphora", [(0, 1), (5, 6)])
    documents = [
        ([anaphora, ("asyndeton", [(0, 1), (2, 3), (4, 5)])],
         [anaphora, anaphora, ("ploce", [(8, 9), (10, 11)])]),
        ([("antithesis", [(0, 3), (7, 9)])], []),
    ]  # fmt: skip
    counts = count_findings(documents)
    assert counts["anaphora"] == [1, 2, 1]  # a duplicate report is a false positive
    assert counts["asyndeton"] == [0, 0, 1] and counts["ploce"] == [0, 1, 0]
    scores = score_findings(counts)
    assert scores["figures"]["anaphora"]["p"] == 0.5 and scores["figures"]["anaphora"]["r"] == 1.0
    assert scores["all"]["matched"] == 1 and scores["all"]["predicted"] == 3
    assert scores["all"]["reference"] == 3
    assert set(scores["families"]) <= set(FAMILIES) and "thought" in scores["families"]


def test_precision_thresholds():
    def passage(gold_words, scored):
        gold = [("anaphora", [(w, w + 1), (w + 10, w + 11)]) for w in gold_words]
        found = [(s, ("anaphora", [(w, w + 1), (w + 10, w + 11)])) for s, w in scored]
        return gold, found

    # six gold anaphoras; candidates 0.9, 0.8, 0.7 right, 0.6 wrong, 0.5 right, 0.4 wrong x2
    passages = [
        passage([0, 20, 40, 60, 80, 100], [(0.9, 0), (0.8, 20), (0.7, 40), (0.6, 500), (0.5, 60)]),
        passage([], [(0.4, 700), (0.35, 800)]),
    ]
    thresholds, report = precision_thresholds(passages, ["anaphora", "epiphora"], target=0.8)
    # at 0.5: 4 of 5 right (0.8), the most found at that precision; midway to 0.4
    assert abs(thresholds["anaphora"] - 0.45) < 1e-9
    assert report["anaphora"]["dev_found"] == 4 and report["anaphora"]["dev_precision"] == 0.8
    assert thresholds["epiphora"] == OFF  # no dev instance
    thresholds, report = precision_thresholds(passages, ["anaphora"], target=0.8, min_instances=7)
    assert thresholds["anaphora"] == OFF and "fewer than 7" in report["anaphora"]["why"]
    # precision 0.8 never reached: the most precise threshold (here 1 of 2 at 0.8)
    weak = [passage([0, 20, 40, 60, 80], [(0.9, 500), (0.8, 0), (0.7, 600), (0.6, 700)])]
    thresholds, report = precision_thresholds(weak, ["anaphora"], target=0.8)
    assert (
        abs(thresholds["anaphora"] - 0.75) < 1e-9 and "never reached" in report["anaphora"]["why"]
    )
    assert report["anaphora"]["dev_precision"] == 0.5 and report["anaphora"]["dev_found"] == 1
    # no gold instance ever reported: off
    wrong = [passage([0, 20, 40, 60, 80], [(0.9, 500), (0.8, 600)])]
    thresholds, report = precision_thresholds(wrong, ["anaphora"], target=0.8)
    assert thresholds["anaphora"] == OFF and "never reported" in report["anaphora"]["why"]
