"""The blind judging of running-text parallelism reports (benchmarks/parallelism_judge.py):
reports pooled across models, a sheet that names no model, every report counted for each
model that made it."""

import json
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "parallelism_judge.py"


@pytest.fixture(scope="module")
def judge(load_benchmark):
    return load_benchmark("parallelism_judge")


def _result(reports_by_lang):
    """A ``parallelism_famous.py --reports`` file."""
    return {
        "languages": {
            lang: {
                "tokens": 2000,
                "reports": [
                    {
                        "doc": doc,
                        "offsets": offsets,
                        "branches": [f"b{s}" for s, _ in offsets],
                        "context": f"doc {doc}",
                    }
                    for doc, offsets in reports
                ],
            }
            for lang, reports in reports_by_lang.items()
        }
    }


def test_pool_shares_reports_and_hides_models(judge):
    shared = (0, [[1, 3], [4, 6]])
    a = _result({"en": [shared, (1, [[0, 2], [3, 5]])], "de": [(0, [[2, 4], [5, 7]])]})
    b = _result({"en": [shared, (2, [[0, 1], [2, 3]])], "de": []})
    sheet, key = judge.pool({"a": a, "b": b}, seed=0)
    assert len(sheet) == 4  # the shared report is one item
    assert all(set(item) == {"id", "lang", "context", "branches"} for item in sheet)
    models = sorted(tuple(item["models"]) for item in key["items"].values())
    assert models == [("a",), ("a",), ("a", "b"), ("b",)]
    again, _ = judge.pool({"a": a, "b": b}, seed=0)
    assert again == sheet


def test_score_counts_each_models_reports(judge):
    a = _result({"en": [(0, [[1, 3], [4, 6]]), (1, [[0, 2], [3, 5]])]})
    b = _result({"en": [(0, [[1, 3], [4, 6]])]})
    sheet, key = judge.pool({"a": a, "b": b}, seed=1)
    shared = next(i for i, item in key["items"].items() if len(item["models"]) == 2)
    labels = {int(i): ("right" if i == shared else "wrong") for i in key["items"]}
    scores = judge.score(key, labels)
    assert scores["a"]["en"]["reports"] == 2 and scores["a"]["en"]["right"] == 1
    assert scores["a"]["en"]["precision_right"] == 0.5
    assert scores["b"]["en"]["precision_right"] == 1.0
    assert scores["b"]["en"]["right_per_1000_tokens"] == 0.5


def test_score_refuses_missing_or_unknown_labels(judge):
    a = _result({"en": [(0, [[1, 3], [4, 6]]), (1, [[0, 2], [3, 5]])]})
    _, key = judge.pool({"a": a}, seed=0)
    with pytest.raises(ValueError, match="1 items not judged"):
        judge.score(key, {0: "right"})
    with pytest.raises(ValueError, match="labels not in"):
        judge.score(key, {0: "right", 1: "maybe"})


def test_still_counts_only_the_reports_a_filtered_model_keeps(judge, tmp_path):
    kept, dropped = (0, [[1, 3], [4, 6]]), (1, [[0, 2], [3, 5]])
    a = _result({"en": [kept, dropped]})
    _, key = judge.pool({"a": a, "b": _result({"en": [dropped]})}, seed=0)
    labels = {int(i): "wrong" for i in key["items"]}
    path = tmp_path / "a-filtered.json"
    path.write_text(json.dumps(_result({"en": [kept]})))
    scores = judge.score(judge.restricted(key, {"a": judge.reported(path)}), labels)
    assert scores["a"]["en"]["reports"] == 1
    assert scores["b"]["en"]["reports"] == 1  # not named: counted as judged
    path.write_text(json.dumps(_result({"en": [kept, (2, [[0, 1], [2, 3]])]})))
    with pytest.raises(ValueError, match="1 reports were never judged"):
        judge.restricted(key, {"a": judge.reported(path)})


def test_score_still_fails_in_one_line(tmp_path):
    import subprocess
    import sys

    folder = tmp_path / "judged"
    folder.mkdir()
    key = {"tokens": {"a": {"en": 10}}, "items": {}}
    (folder / "key.json").write_text(json.dumps(key))
    (folder / "judgements.jsonl").write_text("")
    for still in ("a=" + str(tmp_path / "missing.json"), "b=x.json", "no-equals"):
        result = subprocess.run(
            [sys.executable, str(PATH), "score", "--dir", str(folder), "--output",
             str(tmp_path / "out.json"), "--still", still],
            capture_output=True, text=True,
        )  # fmt: skip
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.startswith("parallelism_judge:")


@pytest.fixture(scope="module")
def famous(load_benchmark):
    return load_benchmark("parallelism_famous")


def test_running_text_can_be_named_per_language(famous):
    corpora = famous.running_corpora("en=ud/a.conllu, de=ud/b.conllu")
    assert corpora == {"en": "ud/a.conllu", "de": "ud/b.conllu"}
    assert famous.running_corpora(None) == famous.RUNNING
    assert famous.running_corpora("de=x.conllu")["en"] == famous.RUNNING["en"]


@pytest.mark.parametrize("spec", ["en", "en=", "=x.conllu", "en=a.conllu,de"])
def test_a_malformed_running_text_fails_in_one_line(famous, spec):
    with pytest.raises(ValueError, match="LANG=PATH"):
        famous.running_corpora(spec)


def test_running_text_is_cut_at_whole_docs(famous):
    """``--running-tokens``: the first whole docs in order until the count is reached
    (the doc that reaches it kept), against a brute-force prefix search."""
    import spacy

    vocab = spacy.blank("en").vocab
    lengths = [5, 3, 7, 1, 4]
    docs = [spacy.tokens.Doc(vocab, words=["w"] * n) for n in lengths]
    for cap in range(1, sum(lengths) + 3):
        kept = famous.first_tokens(docs, cap)
        n = next((i + 1 for i in range(len(lengths)) if sum(lengths[: i + 1]) >= cap), len(lengths))
        assert [len(d) for d in kept] == lengths[:n], cap
    assert famous.first_tokens(docs, None) == docs
    with pytest.raises(ValueError, match="--running-tokens"):
        famous.first_tokens(docs, 0)


def test_running_tokens_below_one_fail_in_one_line(tmp_path):
    import subprocess
    import sys

    famous_path = PATH.parent / "parallelism_famous.py"
    result = subprocess.run(
        [
            sys.executable,
            str(famous_path),
            "x",
            "--output",
            str(tmp_path / "o.json"),
            "--running-tokens",
            "0",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "--running-tokens must be >= 1" in result.stderr.strip().splitlines()[-1]
