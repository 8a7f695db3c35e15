"""Confidence of the parallelism tagger: segment probabilities against brute-force
enumeration, scores on spans, the review list's bound, the calibration kept through
serialization, and ``parallelism find``."""

import itertools
import json
import math
import re
from typing import Dict, Tuple

import numpy
import pytest
import spacy
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import DocBin
from spacy.training import Example
from thinc.api import fix_random_seed
from typer.testing import CliRunner

import spacy_rhetoric.cli as cli
from spacy_rhetoric import set_parallelisms
from spacy_rhetoric.parallelism.calibrate import choose_review, fit_maps, outcomes, review_outcome
from spacy_rhetoric.parallelism.confidence import (
    apply_platt,
    branch_raw,
    fit_platt,
    parallelism_raw,
    reliability,
    review_bound,
)
from spacy_rhetoric.parallelism.crf import ConstrainedCRF
from spacy_rhetoric.parallelism.ensemble import assemble
from spacy_rhetoric.parallelism.find import find_in_text

runner = CliRunner()
TEXTS = [
    "non in fabricis parietibus , non in nitore marmorum , sed in hominibus fidelibus .",
    "ex toto corde suo et ex tota anima sua et ex tota mente sua .",
    "discite ergo quod amare debetis , ut amare possitis .",
    "sermo habitus in regione tertia in basilica .",
]
GOLD = [
    [([(0, 4), (5, 9)], "synchystic", 1)],
    [([(0, 4), (5, 9), (10, 14)], "synchystic", 1)],
    [([(3, 5), (7, 9)], "chiastic", 1)],
    [],
]
SMALL_MODEL = {
    "hidden_width": 32,
    "linker_width": 16,
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "pretrained_vectors": None,
        "width": 32,
        "depth": 2,
        "embed_size": 500,
        "window_size": 1,
        "maxout_pieces": 3,
        "subword_features": True,
    },
}
CALIBRATION = {
    "method": "platt",
    "branch": {"a": 0.75, "b": -0.5, "n": 10},
    "parallelism": {"a": 0.625, "b": -1.0, "n": 10},
    "review_penalty": 6.0,
    "review_min_score": 0.0,
    "data": "test",
}


# --- segment probabilities against enumeration -------------------------------------


def enumerate_paths(crf: ConstrainedCRF, emissions: torch.Tensor) -> Dict[Tuple[int, ...], float]:
    """Score of every allowed path of one sequence ([T, K]), from the raw parameters."""
    start, trans, end = (
        p.detach() for p in (crf.start_scores, crf.transition_scores, crf.end_scores)
    )
    length, num_tags = emissions.shape
    scores = {}
    for path in itertools.product(range(num_tags), repeat=length):
        if not (crf.start_allowed[path[0]] and crf.end_allowed[path[-1]]):
            continue
        pairs = list(zip(path[:-1], path[1:]))
        if not all(crf.trans_allowed[a, b] for a, b in pairs):
            continue
        score = start[path[0]] + end[path[-1]] + sum(emissions[t, k] for t, k in enumerate(path))
        scores[path] = float(score + sum(trans[a, b] for a, b in pairs))
    return scores


@settings(max_examples=40, deadline=None)
@given(
    num_tags=st.integers(2, 4),
    lengths=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    seed=st.integers(0, 10_000),
    density=st.sampled_from([0.5, 0.8, 1.0]),
    split=st.integers(1, 3),
)
def test_segment_probabilities_match_enumeration(num_tags, lengths, seed, density, split):
    rng = numpy.random.default_rng(seed)
    start = rng.random(num_tags) < density
    trans = rng.random((num_tags, num_tags)) < density
    end = rng.random(num_tags) < density
    start[0] = end[0] = trans[0, 0] = True  # an all-"O" path is always allowed
    crf = ConstrainedCRF(num_tags, start, trans, end).double()
    with torch.no_grad():
        for param in crf.parameters():
            param.copy_(torch.from_numpy(rng.normal(size=tuple(param.shape))))
    width = max(lengths)
    emissions = torch.from_numpy(rng.normal(size=(len(lengths), width, num_tags)) * 2)
    mask = torch.tensor([[t < n for t in range(width)] for n in lengths])
    split = min(split, num_tags - 1)
    openers = list(range(1, split + 1))
    continuers = list(range(split + 1, num_tags))
    segments = [
        (b, s, e) for b, n in enumerate(lengths) for s in range(n) for e in range(s + 1, n + 1)
    ]
    got = crf.segment_log_probs(emissions, mask, segments, openers, continuers).exp()
    for (b, s, e), value in zip(segments, got.tolist()):
        n = lengths[b]
        paths = enumerate_paths(crf, emissions[b, :n])
        top = max(paths.values())
        z = sum(math.exp(v - top) for v in paths.values())
        expected = sum(
            math.exp(v - top) / z
            for path, v in paths.items()
            if path[s] in openers
            and all(path[t] in continuers for t in range(s + 1, e))
            and (e == n or path[e] not in continuers)
        )
        assert value == pytest.approx(expected, abs=1e-8)


def test_forward_backward_gives_the_marginals():
    fix_random_seed(1)
    crf = ConstrainedCRF(4).double()
    emissions = torch.randn(2, 5, 4, dtype=torch.float64)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    with torch.no_grad():
        alphas, betas, log_z = crf.forward_backward(emissions, mask)
        marginals = crf.marginals(emissions, mask)
        partition = crf.log_partition(emissions, mask)
    numpy.testing.assert_allclose(
        torch.exp(alphas + betas - log_z[:, None, None])[0].numpy(),
        marginals[0].numpy(),
        atol=1e-10,
    )
    numpy.testing.assert_allclose(log_z.numpy(), partition.numpy())


def test_segment_probabilities_reject_bad_segments():
    crf = ConstrainedCRF(3)
    emissions = torch.zeros(1, 4, 3)
    with pytest.raises(ValueError, match="segment"):
        crf.segment_log_probs(emissions, None, [(0, 2, 6)], [1], [2])
    assert crf.segment_log_probs(emissions, None, [], [1], [2]).shape == (0,)


# --- the combination, the maps, the tables --------------------------------------------


def test_combination_and_platt_map():
    assert branch_raw((0.81, 0.25, None)) == pytest.approx(0.45)
    evidence = [(0.9, 0.9, None), (0.4, 0.4, 0.5), (0.8, 0.8, 0.9)]
    assert parallelism_raw(evidence) == pytest.approx(0.4 * 0.5)
    assert parallelism_raw([(0.5, 0.5, None), (0.6, 0.6, None)]) == pytest.approx(0.5)
    rng = numpy.random.default_rng(0)
    raw = rng.random(400)
    right = rng.random(400) < raw**2  # overconfident raw scores
    platt = fit_platt(raw, right)
    assert platt["a"] > 0
    mapped = [apply_platt(platt, r) for r in raw]
    assert all(0.0 <= m <= 1.0 for m in mapped)
    order = numpy.argsort(raw)
    assert numpy.all(numpy.diff(numpy.asarray(mapped)[order]) >= -1e-12)  # monotone
    assert reliability(mapped, right)["ece"] < reliability(raw, right)["ece"]
    assert apply_platt(None, 0.3) == 0.3
    with pytest.raises(ValueError, match="right and 2 wrong"):
        fit_platt([0.5, 0.6], [True, False])


def test_reliability_table():
    table = reliability([0.05, 0.15, 0.95, 0.95], [False, True, True, False])
    assert table["n"] == 4 and len(table["bins"]) == 10
    assert table["bins"][9] == {"lo": 0.9, "hi": 1.0, "n": 2, "confidence": 0.95, "accuracy": 0.5}
    assert table["ece"] == pytest.approx((0.05 + 0.85 + 2 * 0.45) / 4, abs=1e-4)
    assert review_bound(1000, 5.0) == 5 and review_bound(1001, 5.0) == 6
    assert review_bound(10, 0.0) == 0 and review_bound(10, None) is None


def test_choose_review_keeps_the_list_within_three_times_the_reports():
    def item(score, right, source="decode"):
        return {
            "offsets": ((0, 1), (2, int(score * 1000) + 3)),
            "score": score,
            "right": right,
            "source": source,
            "branches": [(score, right)] * 2,
        }

    reports = [item(0.9, True), item(0.8, False), item(0.7, True), item(0.3, False)]
    collected = {
        "docs": [{"tokens": 1000, "gold": 8}],
        "reports": [reports],
        "review": {
            1.0: [[item(0.3, True), item(0.2, False), item(0.25, True)] + [item(0.01, False)] * 4],
            2.0: [
                [item(0.2, True), item(0.1, True), item(0.15, False), item(0.12, True)]
                + [item(0.001, False)] * 20
            ],
        },
    }
    choice = choose_review(collected, review_per_1000=None)
    assert choice["outcome"]["review_ratio"] <= 3.0
    assert (
        choice["outcome"]["recall"]
        >= review_outcome(collected, 1.0, fit_maps(collected, 1.0), 0.0, None)["recall"]
    )
    maps = fit_maps(collected, 2.0)
    assert maps["branch"]["a"] > 0 and maps["review"]["decode"]["a"] > 0
    bounded = review_outcome(collected, 2.0, maps, 0.0, review_per_1000=2.0)
    assert bounded["review"] == 2 and bounded["review_per_1000"] == 2.0
    rows = outcomes(collected, 2.0, maps, 0.0, 2.0)
    assert len(rows["review"]) == 2 and len(rows["branches"]) == 8
    assert [s for s, _ in rows["review"]] == sorted((s for s, _ in rows["review"]), reverse=True)


# --- the component --------------------------------------------------------------------


def train(seed: int):
    fix_random_seed(seed)
    nlp = spacy.blank("la")
    nlp.add_pipe("parallelism_tagger", config={"model": SMALL_MODEL, "n_strata": 1})
    examples = []
    for text, gold in zip(TEXTS, GOLD):
        reference = nlp.make_doc(text)
        set_parallelisms(reference, gold)
        examples.append(Example(nlp.make_doc(text), reference))
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(40):
        nlp.update(examples, sgd=optimizer)
    return nlp


@pytest.fixture(scope="module")
def nlp():
    return train(0)


@pytest.fixture(scope="module")
def model_dir(nlp, tmp_path_factory):
    path = tmp_path_factory.mktemp("parallelism") / "model"
    nlp.get_pipe("parallelism_tagger").cfg["calibration"] = dict(CALIBRATION)
    nlp.to_disk(path)
    nlp.get_pipe("parallelism_tagger").cfg["calibration"] = None
    return path


def scored(doc, key):
    return [(s._.parallelism_score, s._.parallelism_branch_score) for s in doc.spans[key]]


def test_scores_on_spans(nlp):
    docs = list(nlp.pipe(TEXTS))
    assert any(len(doc.spans["parallelism"]) for doc in docs)
    for doc in docs:
        for key in ("parallelism", "parallelism_candidates"):
            for score, branch in scored(doc, key):
                assert 0.0 <= score <= 1.0 and 0.0 <= branch <= 1.0
        for parallelism_id in {s.id_ for s in doc.spans["parallelism"]}:
            values = {
                s._.parallelism_score for s in doc.spans["parallelism"] if s.id_ == parallelism_id
            }
            assert len(values) == 1  # one score per parallelism
    # a span no tagger scored
    assert docs[1][0:2]._.parallelism_score is None
    # the scores survive a DocBin round trip
    again = list(DocBin(docs=docs, store_user_data=True).get_docs(nlp.vocab))
    for doc, copy in zip(docs, again):
        assert scored(copy, "parallelism") == scored(doc, "parallelism")
        assert scored(copy, "parallelism_candidates") == scored(doc, "parallelism_candidates")


def test_ensemble_scores(nlp):
    ensemble = assemble([nlp, train(1)])
    doc = ensemble(TEXTS[1])
    for score, branch in scored(doc, "parallelism") + scored(doc, "parallelism_candidates"):
        assert 0.0 <= score <= 1.0 and 0.0 <= branch <= 1.0


def test_review_list_bounded_per_1000_tokens(nlp):
    tagger = nlp.get_pipe("parallelism_tagger")
    text = " ".join(TEXTS * 10)
    saved = tagger.cfg["calibration"], tagger.review_per_1000
    try:
        tagger.cfg["calibration"] = {"review_penalty": 40.0, "review_min_score": 0.0}
        tagger.review_per_1000 = None
        doc = nlp(text)
        unbounded = len({s.id_ for s in doc.spans["parallelism_candidates"]})
        assert unbounded > 2
        tagger.review_per_1000 = 5.0
        doc = nlp(text)
        assert len(doc) == 480
        ids = [s.id_ for s in doc.spans["parallelism_candidates"]]
        assert len(set(ids)) == review_bound(len(doc), 5.0) == 3  # ceil(5 * 480 / 1000)
        scores = [
            doc.spans["parallelism_candidates"].attrs["parallelism_scores"][i]
            for i in dict.fromkeys(ids)
        ]
        assert scores == sorted(scores, reverse=True)  # best first
        reported = {
            tuple(sorted((s.start, s.end) for s in doc.spans["parallelism"] if s.id_ == i))
            for i in {s.id_ for s in doc.spans["parallelism"]}
        }
        for i in set(ids):
            branches = tuple(
                sorted((s.start, s.end) for s in doc.spans["parallelism_candidates"] if s.id_ == i)
            )
            assert branches not in reported  # the review list holds what is not reported
        tagger.review_per_1000 = 0.0
        assert len(nlp(text).spans["parallelism_candidates"]) == 0
    finally:
        tagger.cfg["calibration"], tagger.review_per_1000 = saved


def test_no_review_list_without_candidates_key(nlp):
    tagger = nlp.get_pipe("parallelism_tagger")
    tagger.candidates_key = None
    try:
        doc = nlp(TEXTS[1])
        assert "parallelism_candidates" not in doc.spans
        assert all(0 <= s._.parallelism_score <= 1 for s in doc.spans["parallelism"])
    finally:
        tagger.candidates_key = "parallelism_candidates"
    with pytest.raises(ValueError, match="review_per_1000"):
        spacy.blank("la").add_pipe("parallelism_tagger", config={"review_per_1000": -1})


def test_serialization_keeps_the_calibration(nlp, model_dir):
    loaded = spacy.load(model_dir)
    tagger = loaded.get_pipe("parallelism_tagger")
    assert tagger.cfg["calibration"] == CALIBRATION
    assert (
        spacy.load(model_dir)
        .from_bytes(loaded.to_bytes())
        .get_pipe("parallelism_tagger")
        .cfg["calibration"]
        == CALIBRATION
    )
    raw = [scored(doc, "parallelism") for doc in nlp.pipe(TEXTS)]
    calibrated = [scored(doc, "parallelism") for doc in loaded.pipe(TEXTS)]
    assert [len(r) for r in raw] == [len(c) for c in calibrated]
    for raw_doc, doc in zip(raw, calibrated):
        for (_, raw_branch), (_, branch) in zip(raw_doc, doc):
            assert branch == pytest.approx(apply_platt(CALIBRATION["branch"], raw_branch), abs=1e-5)


# --- parallelism find ----------------------------------------------------------------


def test_find_in_text(nlp):
    text = TEXTS[1] + "\n\n" + TEXTS[0]
    found = find_in_text(nlp, text, language="la")
    assert found["tokens"] == len(nlp.make_doc(TEXTS[1] + "\n\n")) + len(nlp.make_doc(TEXTS[0]))
    assert found["parallelisms"]
    for item in found["parallelisms"] + found["review"]:
        for branch in item["branches"]:
            assert text[branch["start_char"] : branch["end_char"]] == branch["text"]
    scores = [item["score"] for item in found["review"]]
    assert scores == sorted(scores, reverse=True)


def test_find_cli(model_dir, tmp_path):
    path = tmp_path / "text.txt"
    path.write_text(TEXTS[1] + "\n\n" + TEXTS[2] + "\n", encoding="utf-8")
    result = runner.invoke(cli.app, ["parallelism", "find", str(path), "--model", str(model_dir)])
    assert result.exit_code == 0, result.output
    assert "Parallelisms" in result.output and "For review" in result.output
    result = runner.invoke(
        cli.app, ["parallelism", "find", str(path), "--model", str(model_dir), "--json"]
    )
    assert result.exit_code == 0
    found = json.loads(result.output)
    assert set(found) == {"parallelisms", "review", "tokens"}
    assert all(0 <= item["score"] <= 1 for item in found["parallelisms"])


def one_line(output: str) -> str:
    """The runner's output without wasabi's colours and line wrapping (one message)."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", output).strip()
    assert sum(line.startswith("✘") for line in plain.splitlines()) == 1, plain
    return " ".join(plain.split())


def test_find_cli_bad_input(model_dir, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    for args, expected in (
        ([str(empty), "--model", str(model_dir)], "is empty"),
        ([str(tmp_path / "missing.txt"), "--model", str(model_dir)], "not found"),
        ([str(empty)], "Give --model"),
    ):
        result = runner.invoke(cli.app, ["parallelism", "find", *args])
        assert result.exit_code == 1
        assert one_line(result.output).startswith("✘") and expected in one_line(result.output)
    path = tmp_path / "text.txt"
    path.write_text(TEXTS[1], encoding="utf-8")
    result = runner.invoke(
        cli.app, ["parallelism", "find", str(path), "--model", str(tmp_path / "no-model")]
    )
    assert result.exit_code == 1
    assert "Pipeline not found" in one_line(result.output)
