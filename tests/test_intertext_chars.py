"""The character n-grams of the intertext index's lexical channel (``chars.py``): n-grams,
tf-idf cosine and the fused ranking against brute force; an index with them round-trips,
finds a prefixed form the stems miss, and the CLI rejects a malformed ``--chars``."""

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from spacy_rhetoric.cli import app
from spacy_rhetoric.corpora.loci_similes import read_segments_csv
from spacy_rhetoric.intertext.chars import MIN_DF, CharIndex, char_grams, fuse_rankings
from spacy_rhetoric.intertext.index import IntertextIndex
from spacy_rhetoric.intertext.lexical import forms

FIXTURES = Path(__file__).parent / "fixtures" / "intertext"
WORDS = ["arma", "virum", "cano", "a", "et", "spectare", "exspectat", "tulit", "abstulit", "ob"]
runner = CliRunner()


def _grams_brute(word: str, lo: int, hi: int):
    padded = f" {word} "
    if len(padded) <= lo:  # shorter than every n: the word once
        return [padded]
    out = []
    for n in range(lo, hi + 1):
        if len(padded) == n:  # as long as n: once, and no longer n-grams
            out.append(padded)
            break
        out.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return out


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=0, max_size=6),
    lo=st.integers(1, 4),
    width=st.integers(0, 3),
)
def test_char_grams_match_their_definition(words, lo, width):
    hi = lo + width
    # words are normalised first (u for v, lower case), as the lexical channel's are
    expected = [g for w in forms(" ".join(words)) for g in _grams_brute(w, lo, hi)]
    assert char_grams(" ".join(words), lo, hi) == expected


def _tfidf_brute(texts, queries, lo, hi):
    bags = [Counter(char_grams(t, lo, hi)) for t in texts]
    df = Counter(g for bag in bags for g in bag)
    vocab = sorted(g for g, n in df.items() if n >= MIN_DF)

    def vector(bag):
        v = np.array(
            [
                (1 + math.log(bag[g])) * (math.log((1 + len(texts)) / (1 + df[g])) + 1)
                if bag[g]
                else 0.0
                for g in vocab
            ]
        )
        norm = np.linalg.norm(v)
        return v / norm if norm else v

    sources = np.array([vector(b) for b in bags]).reshape(len(texts), len(vocab))
    qs = np.array([vector(Counter(char_grams(q, lo, hi))) for q in queries])
    return qs.reshape(len(queries), len(vocab)) @ sources.T


@settings(max_examples=40, deadline=None)
@given(
    sources=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), min_size=1, max_size=10
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    k=st.integers(1, 12),
)
def test_char_search_matches_brute_force_cosine(sources, query, k):
    texts = [" ".join(s) for s in sources]
    index = CharIndex.build(texts, (3, 5))
    brute = _tfidf_brute(texts, [" ".join(query)], 3, 5)[0]
    ((rows, vals),) = index.search([" ".join(query)], k, chunk=1)
    expected = sorted(
        ((i, v) for i, v in enumerate(brute) if v > 1e-6), key=lambda iv: (-iv[1], iv[0])
    )[:k]
    assert len(rows) == len(expected)
    np.testing.assert_allclose(vals, [v for _, v in expected], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(brute[rows], vals, rtol=1e-4, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    first=st.lists(st.integers(0, 30), max_size=12, unique=True),
    second=st.lists(st.integers(0, 30), max_size=12, unique=True),
    k=st.integers(1, 30),
)
def test_fused_ranking_matches_brute_force(first, second, k):
    def score(row):
        a = first.index(row) if row in first else len(first)
        b = second.index(row) if row in second else len(second)
        return 1 / (60 + a) + 1 / (60 + b)

    expected = sorted(set(first) | set(second), key=lambda r: (-score(r), r))[:k]
    got = fuse_rankings(np.asarray(first, np.int64), np.asarray(second, np.int64), k)
    assert got.tolist() == expected


def test_bad_ngram_range_fails():
    with pytest.raises(ValueError, match="character n-grams"):
        CharIndex.build(["arma virumque"], (4, 3))


def _segments():
    return read_segments_csv(FIXTURES / "sources.csv") + [
        ("extra.1", "spectare iuvat"),
        ("extra.2", "nunc spectare iuvat"),
    ]


def test_an_index_with_chars_finds_a_prefixed_form_the_stems_miss(tmp_path):
    query = ["exspectabat"]
    stems = IntertextIndex.build(_segments(), dense=False)
    assert stems.search(query, k=3, channels=("lexical",)) == [[]]
    index = IntertextIndex.build(_segments(), dense=False, chars=(3, 5))
    assert index.cfg["chars"] == [3, 5]
    found = index.search(query, k=3, channels=("lexical",))[0]
    assert {index.ids[c.row] for c in found[:2]} == {"extra.1", "extra.2"}
    # the character side is rebuilt from the texts on load: the same ranking
    index.to_disk(tmp_path / "index")
    again = IntertextIndex.from_disk(tmp_path / "index")
    assert again.cfg["chars"] == [3, 5]
    assert [c.row for c in again.search(query, k=3, channels=("lexical",))[0]] == [
        c.row for c in found
    ]


def test_without_chars_the_index_is_unchanged():
    index = IntertextIndex.build(_segments(), dense=False)
    assert index.cfg["chars"] is None and index.chars is None


@pytest.mark.parametrize("spec", ["5-3", "x", "3", "0-2", "3-11"])
def test_a_malformed_chars_option_fails_in_one_line(tmp_path, spec):
    result = runner.invoke(
        app,
        [
            "intertext", "index", str(FIXTURES / "sources.csv"), "-o", str(tmp_path / "i"),
            "--no-dense", "--chars", spec,
        ],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "--chars takes LO-HI" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "i").exists()


def test_a_reranker_trained_with_chars_keeps_its_feature_and_needs_them(tmp_path):
    from spacy_rhetoric.intertext.rerank import (
        CHAR_FEATURES,
        FEATURES,
        FeatureReranker,
        load_reranker,
        pair_features,
    )
    from spacy_rhetoric.intertext.train import train_reranker

    segments = read_segments_csv(FIXTURES / "sources.csv")
    IntertextIndex.build(segments, dense=False, chars=(3, 5)).to_disk(tmp_path / "chars")
    train_reranker(FIXTURES, tmp_path / "chars", k=5)
    reranker = load_reranker(tmp_path / "chars")
    assert reranker.features == FEATURES + CHAR_FEATURES
    again = FeatureReranker.from_dict(reranker.to_dict())
    assert again.features == reranker.features
    # the character column is the cosine of the two passages' n-gram vectors
    index = IntertextIndex.from_disk(tmp_path / "chars")
    query = "arma virumque cano"
    cands = index.search([query], k=5, channels=("lexical",))[0]
    column = pair_features(index, query, cands)[:, -1]
    brute = _tfidf_brute(index.texts, [query], 3, 5)[0]
    np.testing.assert_allclose(column, brute[[c.row for c in cands]], rtol=1e-4, atol=1e-6)
    # on an index without them it fails in one line; a reranker without them reads either
    stems = IntertextIndex.build(segments, dense=False)
    with pytest.raises(ValueError, match="trained on character n-grams"):
        reranker.rerank(stems, query, stems.search([query], k=5)[0])
    plain = pair_features(index, query, cands, names=FEATURES)
    assert plain.shape == (len(cands), len(FEATURES))
    np.testing.assert_array_equal(plain, pair_features(stems, query, cands))
    with pytest.raises(ValueError, match="unknown feature set"):
        pair_features(index, query, cands, names=("fused",))


def test_a_portable_reranker_with_chars_is_refused_for_an_index_without(tmp_path):
    from spacy_rhetoric.intertext.train import export_reranker, train_reranker

    segments = read_segments_csv(FIXTURES / "sources.csv")
    IntertextIndex.build(segments, dense=False, chars=(3, 5)).to_disk(tmp_path / "chars")
    summary = train_reranker(FIXTURES, tmp_path / "chars", k=5)
    export_reranker(tmp_path / "chars", tmp_path / "reranker.json", summary)
    IntertextIndex.build(segments, dense=False).to_disk(tmp_path / "stems")
    outputs = {}
    for index in ("stems", "chars"):
        result = runner.invoke(
            app,
            [
                "intertext", "pipeline", str(tmp_path / index), "-o", str(tmp_path / f"p-{index}"),
                "--reranker", str(tmp_path / "reranker.json"),
            ],
        )  # fmt: skip
        assert "Traceback" not in result.output
        outputs[index] = (result.exit_code, " ".join(result.output.split()))
    assert outputs["chars"][0] == 0 and (tmp_path / "p-chars").is_dir()
    assert outputs["stems"][0] == 1 and not (tmp_path / "p-stems").exists()
    assert "trained on character n-grams, which this index lacks" in outputs["stems"][1]
