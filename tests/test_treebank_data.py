"""Data tests over the real UD treebanks of the mirror (../shared/data/ud)."""

import math
import re
from pathlib import Path
from typing import Dict

import numpy
import pytest

from spacy_rhetoric.corpora.conllu import read_conllu_docs
from spacy_rhetoric.treebank.displacement import (
    compare,
    corpus_med,
    from_docs,
    read_conllu,
)

SPLIT = re.compile(r"-ud-(train|dev|test)\.conllu$")
WORD_LINE = re.compile(r"^\d+\t", re.M)


def splits_of(treebank: Path) -> Dict[str, Path]:
    return {SPLIT.search(f.name).group(1): f for f in treebank.glob("*-ud-*.conllu")}


def test_reader_counts_every_sentence_and_word(data_dir):
    for file in sorted(data_dir("ud").glob("*/*.conllu")):
        text = file.read_text(encoding="utf8")
        data = read_conllu(file)
        assert data.n_sentences == len(text.strip().split("\n\n")), file.name
        assert data.n_tokens == len(WORD_LINE.findall(text)), file.name
        # one root per sentence in UD
        assert data.n_edges == data.n_tokens - data.n_sentences, file.name


def test_reader_agrees_with_spacy_converter(data_dir):
    path = data_dir("ud") / "UD_Latin-UDante" / "la_udante-ud-dev.conllu"
    fast = read_conllu(path)
    docs = from_docs(read_conllu_docs(path))
    assert numpy.array_equal(fast.values, docs.values)
    assert numpy.array_equal(fast.offsets, docs.offsets)


def test_edv_between_splits_of_every_treebank(data_dir):
    """EDV train<->test (dev<->test without train; the two halves of test where test is
    the only split). Sanity: both variants positive and in the expected ranges, each
    corpus compared with itself gives 0, shares of clipped edges are small."""
    table = {}
    for treebank in sorted(p for p in data_dir("ud").iterdir() if p.is_dir()):
        files = splits_of(treebank)
        assert "test" in files, treebank.name
        test = read_conllu(files["test"])
        if "train" in files or "dev" in files:
            a = read_conllu(files.get("train", files.get("dev")))
            b = test
        else:
            half = test.n_sentences // 2
            a, b = (
                test.select(numpy.arange(half)),
                test.select(numpy.arange(half, test.n_sentences)),
            )
        result = compare(a, b)
        table[treebank.name] = result
        assert 0.01 < result["edv_support"] < 1.0, treebank.name
        assert 1e-4 < result["edv_samples"] < 5e-3, treebank.name
        assert result["binned_edv_support"] >= 0 and not math.isnan(result["binned_edv_support"])
        assert result["slv_support"] >= 0
        for side in ("a", "b"):
            assert result[side]["clipped_share"] < 0.03, treebank.name
            assert -3 < result[side]["med"] < 3, treebank.name
        self_compare = compare(a, a)
        assert self_compare["edv_support"] == 0 and self_compare["edv_samples"] == 0
    assert len(table) == 9
    # English EWT: train and test are large samples of one treebank, and close
    assert table["UD_English-EWT"]["edv_support"] < 0.3
    assert corpus_med(read_conllu(splits_of(data_dir("ud") / "UD_English-EWT")["train"])) > 0


@pytest.mark.parametrize("treebank", ["UD_Chinese-GSD", "UD_German-GSD"])
def test_head_final_treebanks_have_negative_med(data_dir, treebank):
    # Chinese and German put many heads after their dependents (nouns after modifiers,
    # verb-final clauses): more negative displacement than English
    files = splits_of(data_dir("ud") / treebank)
    english = splits_of(data_dir("ud") / "UD_English-EWT")
    assert corpus_med(read_conllu(files["test"])) < 0 < corpus_med(read_conllu(english["test"]))
