"""The author prior of benchmarks/intertext_reranker_models.py (``--models author``): each
candidate's source author as a one-hot beside the shipped reranker's features."""

from types import SimpleNamespace

import numpy as np
import pytest


@pytest.fixture(scope="module")
def models(load_benchmark):
    return load_benchmark("intertext_reranker_models")


def test_author_of_a_citation(models):
    assert models.author_of("verg. g. 4.564") == "verg"
    assert models.author_of("cic. off. 1.1") == "cic"
    assert models.author_of("ov") == "ov"


def test_author_onehot_rows(models):
    onehot = models.author_onehot(["verg. a. 1.1", "cic. off. 1.1", "verg. g. 1.2", "ov. met. 1.1"])
    # authors in sorted order: cic, ov, verg
    expected = [[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]]
    np.testing.assert_array_equal(onehot, np.asarray(expected, dtype=np.float32))
    assert onehot.dtype == np.float32


def test_author_fold_appends_each_candidates_author(models, monkeypatch):
    seen = {}

    def shipped(fold, fused, feats, settings, record):
        seen.update(feats)
        return "fitted"

    monkeypatch.setattr(models, "SHIPPED_RERANK_FOLD", shipped)
    onehot = models.author_onehot(["a. 1", "b. 1", "a. 2"])
    fit = models.author_rerank_fold_for(onehot)
    fused = {"q1": [SimpleNamespace(row=2), SimpleNamespace(row=1)], "q2": []}
    feats = {"q1": np.asarray([[0.5], [0.25]], dtype=np.float32), "q2": np.zeros((0, 1), "f")}
    assert fit(0, fused, feats, {}, {}) == "fitted"
    np.testing.assert_array_equal(seen["q1"], [[0.5, 1.0, 0.0], [0.25, 0.0, 1.0]])
    assert seen["q2"].shape == (0, 3)
