"""Query-based evaluation against hand-annotated sentences (tests/fixtures/treebank/):
diagnostics_gold.conllu follows UD English-EWT conventions; diagnostics_pred.conllu has
the same tokens with five deliberate parse errors (see the expected values below)."""

import pytest
import srsly
from spacy.tokens import DocBin

from spacy_rhetoric.treebank.io import read_docs
from spacy_rhetoric.treebank.queries import (
    QueryFileError,
    aggregate_folds,
    bundled_queries,
    evaluate_queries,
    load_queries,
    pair_fold_files,
    run_query_evaluation,
)

# sent_id -> the queries whose gold instance it holds (hand-checked)
GOLD_HITS = {
    "neg-decl-do-1": {"neg_decl_do"},
    "neg-decl-do-2": {"neg_decl_do"},
    "neg-decl-aux-1": {"neg_decl_no_do"},
    "neg-decl-aux-2": {"neg_decl_no_do"},
    "neg-decl-aux-3": {"neg_decl_no_do"},
    "neg-decl-cop-1": {"neg_decl_no_do"},
    "neg-imp-1": {"neg_imperative"},
    "neg-imp-2": {"neg_imperative"},
    "q-do-1": {"question_do_support"},
    "q-do-2": {"question_do_support"},
    "q-do-3": {"question_do_support"},
    "q-inv-1": {"question_inversion"},
    "q-inv-2": {"question_inversion"},
    "q-inv-3": {"question_inversion"},
    "q-inv-4": {"question_inversion"},
    "control-1": set(),
}
# anchor level: (gold_hits, matches, correct)
EXPECTED_ANCHOR = {
    "neg_decl_do": (2, 1, 1),  # "not" attached to "did": missed
    "neg_decl_no_do": (4, 4, 3),  # "has" made the head: anchor moved, miss + false alarm
    "neg_imperative": (2, 1, 1),  # Mood=Imp lost on "do": missed
    "question_do_support": (3, 2, 2),  # "you" labelled obj: missed
    "question_inversion": (4, 4, 3),  # "is" made the head: miss + false alarm
}


@pytest.fixture(scope="module")
def queries():
    return load_queries("en_diagnostics")


@pytest.fixture(scope="module")
def gold(fixtures_dir):
    return read_docs(fixtures_dir / "treebank" / "diagnostics_gold.conllu")


@pytest.fixture(scope="module")
def pred(fixtures_dir):
    return read_docs(fixtures_dir / "treebank" / "diagnostics_pred.conllu")


def test_bundled_file(queries):
    assert [p.name for p in bundled_queries()] == ["en_diagnostics.yml"]
    assert [q.name for q in queries] == [
        "neg_decl_do",
        "neg_decl_no_do",
        "neg_imperative",
        "question_do_support",
        "question_inversion",
    ]
    assert all(q.description for q in queries)


def test_gold_hits_are_the_hand_checked_ones(queries, gold):
    results = evaluate_queries(queries, gold, gold, level="sentence")
    for name, result in results.items():
        # gold as predictions: everything correct
        assert result.misses == [] and result.false_alarms == []
        assert result.precision == result.recall == result.f1 == 1.0
        assert result.gold_hits == sum(name in hits for hits in GOLD_HITS.values())
    found = {}
    for doc in gold:
        single = evaluate_queries(queries, [doc], [doc], level="sentence")
        found[doc.user_data["sent_id"]] = {name for name, r in single.items() if r.gold_hits}
    assert found == GOLD_HITS


def test_anchor_level_scores(queries, gold, pred):
    results = evaluate_queries(queries, gold, pred)
    for name, (gold_hits, matches, correct) in EXPECTED_ANCHOR.items():
        r = results[name]
        assert (r.gold_hits, r.matches, r.correct) == (gold_hits, matches, correct), name
        assert len(r.misses) == gold_hits - correct
        assert len(r.false_alarms) == matches - correct
        assert r.precision == pytest.approx(correct / matches)
        assert r.recall == pytest.approx(correct / gold_hits)
    assert results["neg_decl_do"].f1 == pytest.approx(2 / 3)
    assert results["question_do_support"].f1 == pytest.approx(0.8)
    miss = results["neg_decl_no_do"].misses[0]
    alarm = results["neg_decl_no_do"].false_alarms[0]
    assert (miss["sent_id"], miss["anchor"], miss["token"]) == ("neg-decl-aux-1", "arrived", 3)
    assert (alarm["sent_id"], alarm["anchor"], alarm["token"]) == ("neg-decl-aux-1", "has", 1)


def test_sentence_level_forgives_moved_anchors(queries, gold, pred):
    results = evaluate_queries(queries, gold, pred, level="sentence")
    assert results["neg_decl_no_do"].f1 == 1.0
    assert results["question_inversion"].f1 == 1.0
    assert results["neg_decl_do"].recall == 0.5
    assert results["neg_decl_do"].misses[0]["sent_id"] == "neg-decl-do-1"


@pytest.mark.filterwarnings("ignore:\\[W102\\]")
def test_alignment_is_by_tokens_not_docs(queries, gold, pred):
    from spacy.tokens import Doc

    merged = Doc.from_docs(list(pred[:8])), Doc.from_docs(list(pred[8:]))
    a = evaluate_queries(queries, gold, pred)
    b = evaluate_queries(queries, gold, list(merged))
    assert {k: v.to_dict() for k, v in a.items()} == {k: v.to_dict() for k, v in b.items()}
    with pytest.raises(ValueError, match="tokens differ at token 0"):
        evaluate_queries(queries, gold[1:], pred[:-1])
    with pytest.raises(ValueError, match="gold has"):
        evaluate_queries(queries, gold, pred[:-1])


def test_undefined_scores_and_fold_aggregation(queries, gold, pred):
    control = [d for d in gold if d.user_data["sent_id"] == "control-1"]
    nothing = evaluate_queries(queries, control, control)
    assert nothing["neg_decl_do"].precision is None and nothing["neg_decl_do"].f1 is None
    folds = [
        evaluate_queries(queries, gold[:8], pred[:8]),
        evaluate_queries(queries, gold[8:], pred[8:]),
    ]
    summary = aggregate_folds(folds)
    entry = summary["question_do_support"]
    assert entry["gold_hits"] == 3 and entry["matches"] == 2 and entry["misses"] == 1
    # fold 1 (sentences 1-8) holds q-do-1 (missed) and q-do-2; fold 2 holds q-do-3
    assert entry["recall"]["mean"] == pytest.approx(0.75)
    assert entry["recall"]["sd"] == pytest.approx(0.3535533905932738)
    assert entry["precision"]["folds"] == 2
    # no negative imperative in fold 2: its scores are undefined there and left out
    assert summary["neg_imperative"]["precision"] == {"mean": 1.0, "sd": None, "folds": 1}
    single = aggregate_folds(folds[:1])
    assert single["neg_decl_do"]["f1"]["sd"] is None


def test_query_file_errors(tmp_path):
    bad_yaml = tmp_path / "bad.yml"
    bad_yaml.write_text("queries: [ {name: x, patterns: [[{RIGHT_ID: a, RIGHT_ATTRS: {}}]]")
    with pytest.raises(QueryFileError, match="cannot parse"):
        load_queries(bad_yaml)
    (tmp_path / "empty.yml").write_text("queries: []\n")
    with pytest.raises(QueryFileError, match="non-empty list"):
        load_queries(tmp_path / "empty.yml")
    dup = {"queries": [{"name": "a", "pattern": [{"RIGHT_ID": "x", "RIGHT_ATTRS": {}}]}] * 2}
    srsly.write_json(tmp_path / "dup.json", dup)
    with pytest.raises(QueryFileError, match="duplicate"):
        load_queries(tmp_path / "dup.json")
    broken = {"queries": [{"name": "b", "pattern": [{"LEFT_ID": "x", "REL_OP": ">"}]}]}
    srsly.write_json(tmp_path / "broken.json", broken)
    with pytest.raises(QueryFileError, match="query 'b': invalid pattern"):
        load_queries(tmp_path / "broken.json")
    ok = {
        "queries": [
            {"name": "root", "pattern": [{"RIGHT_ID": "r", "RIGHT_ATTRS": {"DEP": "ROOT"}}]}
        ]
    }
    srsly.write_json(tmp_path / "ok.json", ok)
    assert load_queries(tmp_path / "ok.json")[0].patterns[0][0]["RIGHT_ID"] == "r"


def test_fold_directories(tmp_path, queries, gold, pred):
    for name, docs in (("gold", gold), ("pred", pred)):
        for fold, part in enumerate((docs[:8], docs[8:])):
            path = tmp_path / name / f"fold-{fold}" / "test.spacy"
            path.parent.mkdir(parents=True)
            DocBin(docs=part, store_user_data=True).to_disk(path)
    pairs = pair_fold_files(tmp_path / "gold", tmp_path / "pred")
    assert [p[0].parent.name for p in pairs] == ["fold-0", "fold-1"]
    folds, summary = run_query_evaluation(queries, pairs)
    assert summary["neg_decl_no_do"]["gold_hits"] == 4
    assert summary["question_do_support"]["recall"]["mean"] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="both be files"):
        pair_fold_files(tmp_path / "gold", pairs[0][1])
