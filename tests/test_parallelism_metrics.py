"""Bipartite parallelism metrics: worked examples, hand-computed cases, a brute-force
reference (token sets and enumerated matchings) and the spaCy scorer."""

import itertools
import random

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc
from spacy.training import Example

from spacy_rhetoric.corpora.parallelisms import CHIASTIC, SYNCHYSTIC, set_parallelisms
from spacy_rhetoric.parallelism.metrics import (
    METRICS,
    make_parallelism_scorer,
    match_counts,
    score_parallelism,
    score_parallelism_sets,
    score_types,
    weight_matrices,
)

SETTINGS = settings(max_examples=60, deadline=None)
KEYS = {f"{metric}_{part}" for metric in METRICS for part in "prf"}

# The example of the reference implementation's unit tests (Mythologos/pyrallelism,
# test/evaluation_tester.py; text from the Wikipedia article "Parallelism (rhetoric)"),
# as 0-based token offsets. Gold: four parallelisms with 12 branches and 82 words.
WIKI_GOLD = [
    [(51, 55), (56, 60), (62, 66)],  # to impress the ignorant, to perplex the dubious, ...
    [(104, 107), (108, 115), (116, 121)],  # nouns with nouns, infinitive verb phrases with ...
    [(152, 161), (162, 168), (169, 176), (176, 184)],  # I'll give my jewels for a set of beads
    [(230, 243), (245, 257)],  # Let the evildoer still do evil, ... and the righteous ...
]
WIKI_FLAWED = [
    [(51, 55), (56, 60), (62, 66)],  # exact
    [(104, 107), (116, 121)],  # the middle branch missed
    [(162, 165), (169, 172), (176, 179)],  # first branch missed, the others truncated
    [(237, 251), (257, 258)],  # misplaced boundaries
]


def prf(m, n_pred, n_gold):
    p = m / n_pred if n_pred else 0.0
    r = m / n_gold if n_gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def assert_metric(scores, metric, m, n_pred, n_gold):
    for part, value in zip("prf", prf(m, n_pred, n_gold), strict=True):
        assert scores[f"{metric}_{part}"] == pytest.approx(value), (metric, part)


# --- worked examples -------------------------------------------------------------------


def test_wikipedia_example_counts_match_reference_implementation():
    assert match_counts(WIKI_GOLD, WIKI_GOLD) == {
        "epm": (4, 4, 4),
        "mpbm": (12, 12, 12),
        "mbawo": (82, 82, 82),
        "mwo": (82, 82, 82),
    }
    assert match_counts(WIKI_GOLD, WIKI_FLAWED) == {
        "epm": (1, 4, 4),
        "mpbm": (5, 10, 12),
        "mbawo": (29, 44, 82),
        "mwo": (41, 44, 82),
    }
    scores = score_parallelism_sets([(WIKI_GOLD, WIKI_FLAWED)])
    assert scores["epm_p"] == scores["epm_r"] == scores["epm_f"] == 0.25
    assert (scores["mpbm_p"], scores["mpbm_r"]) == (0.5, 5 / 12)
    assert (scores["mbawo_p"], scores["mbawo_r"]) == (29 / 44, 29 / 82)
    assert (scores["mwo_p"], scores["mwo_r"]) == (41 / 44, 41 / 82)


def test_one_correct_one_spurious_parallelism():
    # gold: one parallelism; prediction: the same one plus a spurious one
    gold = [[(0, 3), (4, 7)]]
    pred = [[(0, 3), (4, 7)], [(8, 10), (11, 13)]]
    scores = score_parallelism_sets([(gold, pred)])
    assert (scores["epm_p"], scores["epm_r"]) == (0.5, 1.0)
    assert scores["epm_f"] == pytest.approx(2 / 3)
    assert_metric(scores, "mpbm", 2, 4, 2)
    assert_metric(scores, "mbawo", 6, 10, 6)
    assert_metric(scores, "mwo", 6, 10, 6)


# --- hand-computed cases ---------------------------------------------------------------


def test_partial_branch_overlap():
    # second branch one word short
    scores = score_parallelism_sets([([[(0, 3), (4, 7)]], [[(0, 3), (4, 6)]])])
    assert_metric(scores, "epm", 0, 1, 1)
    assert_metric(scores, "mpbm", 0, 2, 2)  # only one branch matches exactly
    assert_metric(scores, "mbawo", 5, 5, 6)
    assert_metric(scores, "mwo", 5, 5, 6)


def test_extra_branch():
    scores = score_parallelism_sets([([[(0, 2), (3, 5)]], [[(0, 2), (3, 5), (6, 8)]])])
    assert_metric(scores, "epm", 0, 1, 1)
    assert_metric(scores, "mpbm", 2, 3, 2)
    assert_metric(scores, "mbawo", 4, 6, 4)
    assert_metric(scores, "mwo", 4, 6, 4)


def test_split_branch():
    # the first gold branch is predicted as two adjacent branches
    scores = score_parallelism_sets([([[(0, 4), (5, 9)]], [[(0, 2), (2, 4), (5, 9)]])])
    assert_metric(scores, "epm", 0, 1, 1)
    assert_metric(scores, "mpbm", 0, 3, 2)
    assert_metric(scores, "mbawo", 6, 8, 8)  # (0,4)~(0,2) or (2,4): 2, plus (5,9): 4
    assert_metric(scores, "mwo", 8, 8, 8)


def test_a_single_shared_branch_scores_nothing_branch_aware():
    scores = score_parallelism_sets([([[(0, 3), (10, 13)]], [[(0, 3), (20, 23)]])])
    assert_metric(scores, "mpbm", 0, 2, 2)
    assert_metric(scores, "mbawo", 0, 6, 6)
    assert_metric(scores, "mwo", 3, 6, 6)


def test_branch_aware_tie_prefers_two_contributing_pairs():
    # branch overlaps: gold (1,4)~(0,3): 2, (1,4)~(3,6): 1, (0,1)~(0,3): 1, (0,1)~(3,6): 0.
    # Both inner matchings have overlap 2; one of them pairs two branches, so phi = 2.
    gold, pred = [[(0, 1), (1, 4)]], [[(0, 3), (3, 6)]]
    assert weight_matrices(gold, pred)["mbawo"].tolist() == [[2]]
    assert weight_matrices(gold, pred)["mwo"].tolist() == [[4]]


def test_matching_is_one_to_one():
    # two predictions of the same gold parallelism: only one can be matched
    gold = [[(0, 2), (3, 5)]]
    pred = [[(0, 2), (3, 5)], [(0, 2), (3, 5)]]
    scores = score_parallelism_sets([(gold, pred)])
    assert_metric(scores, "epm", 1, 2, 1)
    assert_metric(scores, "mpbm", 2, 4, 2)
    assert_metric(scores, "mwo", 4, 8, 4)


def test_matching_maximises_total_weight():
    # greedy would pair A with X (3) and leave B with Y (0); the optimum is A-Y + B-X = 4
    gold = [[(0, 3), (4, 6)], [(10, 12), (30, 31)]]  # A, B
    pred = [[(0, 3), (10, 12)], [(4, 6), (20, 21)]]  # X, Y
    assert weight_matrices(gold, pred)["mwo"].tolist() == [[3, 2], [2, 0]]
    assert match_counts(gold, pred)["mwo"] == (4, 8, 8)


def test_empty_documents():
    empty = score_parallelism_sets([([], [])])
    assert set(empty) == KEYS and all(v == 0.0 for v in empty.values())
    assert score_parallelism_sets([]) == empty
    only_pred = score_parallelism_sets([([], [[(0, 1), (2, 3)]])])
    assert all(v == 0.0 for v in only_pred.values())
    only_gold = score_parallelism_sets([([[(0, 1), (2, 3)]], [])])
    assert all(v == 0.0 for v in only_gold.values())


def test_micro_average_over_documents():
    doc1 = ([[(0, 2), (3, 5)]], [[(0, 2), (3, 5)]])  # perfect, 1 parallelism
    doc2 = ([[(0, 1), (2, 3)], [(4, 5), (6, 7)], [(8, 9), (10, 11)]], [])  # 3 missed
    doc3 = ([], [[(0, 1), (2, 3)]])  # 1 spurious
    scores = score_parallelism_sets([doc1, doc2, doc3])
    assert_metric(scores, "epm", 1, 2, 4)  # macro-averaging would give other values
    assert_metric(scores, "mpbm", 2, 4, 8)
    assert_metric(scores, "mwo", 4, 6, 10)
    assert match_counts(*doc1)["epm"] == (1, 1, 1)


def test_invalid_input():
    with pytest.raises(ValueError, match="gold parallelism 0 has no branches"):
        match_counts([[]], [])
    with pytest.raises(ValueError, match=r"predicted parallelism 1 has an invalid branch \(3, 3\)"):
        match_counts([], [[(0, 1), (2, 3)], [(3, 3), (4, 5)]])


# --- brute-force reference ---------------------------------------------------------------


def words(parallelism) -> set:
    return {i for s, e in parallelism for i in range(s, e)}


def best_matching(weight, n_rows, n_cols):
    """(total, number of positive pairs) of the lexicographically best matching."""
    best = (0, 0)
    small, large = min(n_rows, n_cols), max(n_rows, n_cols)
    for perm in itertools.permutations(range(large), small):
        pairs = [(i, j) if n_rows <= n_cols else (j, i) for i, j in enumerate(perm)]
        values = [weight(r, c) for r, c in pairs]
        best = max(best, (sum(values), sum(v > 0 for v in values)))
    return best


def brute_phi(metric, g, h) -> int:
    if metric == "epm":
        return int(set(g) == set(h))
    if metric == "mpbm":
        shared = len(set(g) & set(h))
        return shared if shared >= 2 else 0
    if metric == "mwo":
        return len(words(g) & words(h))
    gs, hs = sorted(set(g)), sorted(set(h))
    total, pairs = best_matching(
        lambda r, c: len(words([gs[r]]) & words([hs[c]])), len(gs), len(hs)
    )
    return total if pairs >= 2 else 0


def brute_counts(gold, pred):
    counts = {}
    for metric in METRICS:
        m = best_matching(
            lambda r, c, metric=metric: brute_phi(metric, gold[r], pred[c]), len(gold), len(pred)
        )
        sizes = []
        for side in (pred, gold):
            if metric == "epm":
                sizes.append(len(side))
            elif metric == "mpbm":
                sizes.append(sum(len(set(p)) for p in side))
            else:
                sizes.append(sum(len(words(p)) for p in side))
        counts[metric] = (m[0], *sizes)
    return counts


@st.composite
def parallelism(draw, length=24):
    points = sorted(draw(st.lists(st.integers(0, length), min_size=2, max_size=8, unique=True)))
    return [(points[i], points[i + 1]) for i in range(0, len(points) - 1, 2)]


@st.composite
def related_pair(draw):
    """Gold and predicted parallelisms of one doc; predictions often copy or perturb gold."""
    gold = draw(st.lists(parallelism(), max_size=4))
    pred = []
    for p in draw(st.lists(parallelism(), max_size=2)) + gold:
        action = draw(st.sampled_from(["copy", "drop_branch", "shift", "skip"]))
        if action == "copy":
            pred.append(list(p))
        elif action == "drop_branch" and len(p) > 1:
            pred.append(p[1:])
        elif action == "shift":
            pred.append([(s, e + 1) if i == 0 else (s, e) for i, (s, e) in enumerate(p)])
    return gold, pred[:4]


@SETTINGS
@given(related_pair())
def test_counts_match_brute_force(pair):
    gold, pred = pair
    counts = match_counts(gold, pred)
    assert counts == brute_counts(gold, pred)
    assert counts["mbawo"][0] <= counts["mwo"][0]
    for m, n_pred, n_gold in counts.values():
        assert 0 <= m <= min(n_pred, n_gold)


@SETTINGS
@given(st.lists(related_pair(), min_size=1, max_size=3), st.randoms())
def test_permutation_invariance(pairs, rnd: random.Random):
    expected = score_parallelism_sets(pairs)
    shuffled = []
    for gold, pred in pairs:
        gold = [rnd.sample(p, len(p)) for p in rnd.sample(gold, len(gold))]
        pred = [rnd.sample(p, len(p)) for p in rnd.sample(pred, len(pred))]
        shuffled.append((gold, pred))
    assert score_parallelism_sets(rnd.sample(shuffled, len(shuffled))) == expected
    swapped = score_parallelism_sets([(p, g) for g, p in pairs])
    for metric in METRICS:
        assert swapped[f"{metric}_p"] == pytest.approx(expected[f"{metric}_r"])
        assert swapped[f"{metric}_f"] == pytest.approx(expected[f"{metric}_f"])


@SETTINGS
@given(st.lists(st.lists(parallelism(), max_size=4), min_size=1, max_size=3))
def test_perfect_prediction_scores_one(docs):
    if not any(docs):
        docs = [[[(0, 1), (2, 3)]]]
    scores = score_parallelism_sets([(doc, [list(p) for p in doc]) for doc in docs])
    assert set(scores) == KEYS
    for key in KEYS:
        if key.startswith(("mpbm", "mbawo")) and any(len(p) < 2 for doc in docs for p in doc):
            continue  # a single-branch parallelism can never match branch-aware metrics
        assert scores[key] == pytest.approx(1.0), key


# --- the spaCy scorer ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("la")


TEXT = "ueni uidi uici et audiui uidi credidi sed non intellexi neque uidi"


def make_doc(nlp, parallelisms) -> Doc:
    doc = nlp.make_doc(TEXT)
    set_parallelisms(doc, parallelisms)
    return doc


def test_scorer_on_docs(nlp):
    gold = [
        ([(0, 1), (1, 2), (2, 3)], SYNCHYSTIC, 1),
        ([(4, 5), (5, 6), (6, 7)], CHIASTIC, 1),
        ([(4, 5), (6, 7)], SYNCHYSTIC, 2),
    ]
    pred = [
        ([(0, 1), (1, 2), (2, 3)], SYNCHYSTIC, 1),  # exact, right type
        ([(4, 5), (5, 6), (6, 7)], SYNCHYSTIC, 1),  # exact, wrong type
        ([(8, 10), (11, 12)], SYNCHYSTIC, 1),  # spurious
    ]
    example = Example(make_doc(nlp, pred), make_doc(nlp, gold))
    scores = score_parallelism([example])
    pooled = score_parallelism_sets([([p for p, _, _ in gold], [p for p, _, _ in pred])])
    for key, value in pooled.items():
        assert scores[f"parallelism_{key}"] == pytest.approx(value)
    assert scores["parallelism_epm_p"] == pytest.approx(2 / 3)
    assert scores["parallelism_epm_r"] == pytest.approx(2 / 3)
    assert scores["parallelism_type_acc"] == 0.5
    assert scores["parallelism_type_n"] == 2 and scores["parallelism_type_n_chiastic"] == 1
    assert scores["parallelism_s1_epm_r"] == 1.0 and scores["parallelism_s1_epm_p"] == 2 / 3
    assert scores["parallelism_s2_epm_r"] == 0.0
    assert all(isinstance(v, float) for v in scores.values())
    only_outer = score_parallelism([example], max_stratum=1)
    assert only_outer["parallelism_epm_r"] == 1.0 and "parallelism_s2_epm_r" not in only_outer
    # Pipe.score passes the component's cfg and labels: they are ignored
    assert score_parallelism([example], labels=("x",), n_strata=2) == scores


def test_scorer_other_spans_key_and_empty(nlp):
    doc = nlp.make_doc(TEXT)
    set_parallelisms(doc, [([(0, 1), (1, 2)], SYNCHYSTIC, None)], spans_key="par")
    example = Example(doc, doc.copy())
    assert score_parallelism([example], spans_key="par")["parallelism_epm_f"] == 1.0
    empty = score_parallelism([example])  # no "parallelism" group on either doc
    assert empty["parallelism_epm_f"] == 0.0 and empty["parallelism_type_acc"] == 0.0
    assert set(score_parallelism([])) == {f"parallelism_{k}" for k in KEYS} | {
        "parallelism_type_acc",
        "parallelism_type_n",
        "parallelism_type_n_chiastic",
        "parallelism_epm_f_macro",
    }


def test_score_types_by_hand():
    pairs = [(CHIASTIC, CHIASTIC), (CHIASTIC, SYNCHYSTIC), (SYNCHYSTIC, CHIASTIC)]
    pairs += [(SYNCHYSTIC, SYNCHYSTIC)] * 3
    scores = score_types(pairs)
    assert scores["n"] == 6 and scores["n_chiastic"] == 2
    assert scores["accuracy"] == pytest.approx(4 / 6) and scores["majority"] == pytest.approx(4 / 6)
    assert scores["chiastic_p"] == 0.5 and scores["chiastic_r"] == 0.5
    assert scores["chiastic_f"] == 0.5
    never = score_types([(CHIASTIC, SYNCHYSTIC), (SYNCHYSTIC, SYNCHYSTIC)])
    assert never["accuracy"] == 0.5 and never["chiastic_p"] == 0.0 and never["chiastic_r"] == 0.0
    assert score_types([])["accuracy"] == 0.0


def test_scorer_aligns_different_tokenizations(nlp):
    reference = Doc(
        nlp.vocab,
        words=["ueni", ",", "uidi", ",", "uici"],
        spaces=[False, True, False, True, False],
    )
    predicted = Doc(nlp.vocab, words=["ueni,", "uidi,", "uici"], spaces=[True, True, False])
    set_parallelisms(reference, [([(0, 1), (2, 3), (4, 5)], SYNCHYSTIC, 1)])
    set_parallelisms(predicted, [([(0, 1), (1, 2), (2, 3)], SYNCHYSTIC, 1)])
    scores = score_parallelism([Example(predicted, reference)])
    assert scores["parallelism_epm_f"] == 1.0 and scores["parallelism_type_acc"] == 1.0


def test_scorer_is_registered():
    assert make_parallelism_scorer() is score_parallelism
    maker = spacy.registry.scorers.get("spacy-rhetoric.parallelism_scorer.v1")
    assert maker() is score_parallelism


def test_macro_score_over_corpora(nlp):
    """Each corpus counts once in parallelism_epm_f_macro, however many branches it has;
    on one corpus the macro score is the pooled one."""
    found = ([(0, 1), (1, 2)], SYNCHYSTIC, 1)
    missed = ([(4, 5), (6, 7)], SYNCHYSTIC, 1)
    examples = []
    for corpus, gold, pred in (("a", [found], [found]), ("b", [found, missed], [])):
        reference = make_doc(nlp, gold)
        reference.user_data["corpus"] = corpus
        examples.append(Example(make_doc(nlp, pred), reference))
    scores = score_parallelism(examples)
    assert scores["parallelism_corpus_a_epm_f"] == 1.0
    assert scores["parallelism_corpus_b_epm_f"] == 0.0
    assert scores["parallelism_epm_f_macro"] == 0.5
    assert scores["parallelism_epm_f"] == pytest.approx(2 * (1 * 1 / 3) / (1 + 1 / 3))
    single = score_parallelism(examples[:1])
    assert single["parallelism_epm_f_macro"] == single["parallelism_epm_f"] == 1.0


def test_read_docbins_names_the_corpus_of_each_file(tmp_path, nlp):
    from spacy.tokens import DocBin

    from spacy_rhetoric.corpora.stats import read_docbins

    for name in ("asp", "pse"):
        DocBin(docs=[nlp.make_doc(f"{name} text")]).to_disk(tmp_path / f"{name}.spacy")
    docs = list(read_docbins([tmp_path], nlp.vocab))
    assert [doc.user_data["corpus"] for doc in docs] == ["asp", "pse"]
    single = list(read_docbins([tmp_path / "asp.spacy"], nlp.vocab))
    assert "corpus" not in single[0].user_data
