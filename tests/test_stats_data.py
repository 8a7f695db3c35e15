"""`stats` over the converted real datasets reproduces the published counts."""

import pytest

from spacy_rhetoric.corpora import convert
from spacy_rhetoric.corpora.stats import corpus_stats

PUBLISHED = {
    "asp": {
        "documents": 80,
        "sections": 477,
        "tokens": 134_956,
        "parallelisms": 2_062,
        "nested_parallelisms": 14,
        "branches": 4_651,
        "nested_branches": 39,
    },
    "pse": {
        "documents": 409,
        "sections": 3_855,
        "tokens": 241_203,
        "parallelisms": 786,
        "branches": 2_153,
        "nested_parallelisms": 0,
    },
}
GERMAN_LABELS = {
    "x": 242, "fp": 76, "a": 39, "c": 31, "ap": 23, "fsp": 22, "fc": 7, "fa": 3,
    "ffp": 2, "fap": 2, "empty": 2, "a?": 1,
}  # fmt: skip


@pytest.mark.parametrize("name,folder", [("asp", "asp"), ("pse", "pse-i")])
def test_published_parallelism_counts(data_dir, name, folder):
    stats = corpus_stats(convert(name, data_dir(folder)).docs())
    assert {key: stats[key] for key in PUBLISHED[name]} == PUBLISHED[name]


def test_german_chiasmus_counts(data_dir):
    stats = corpus_stats(convert("chiasmus-de", data_dir("german-chiasmus")).docs())
    assert stats["chiasmus_candidates"] == 450
    assert stats["chiasmus_labels"] == GERMAN_LABELS


def test_loci_similes_links(data_dir):
    stats = corpus_stats(convert("loci-similes", data_dir("loci-similes")).docs())
    assert stats["links"] == 545
