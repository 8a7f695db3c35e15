"""The default link threshold of an index without a reranker (intertext/null.py):
against brute force, where it applies, and how the CLI, the component and analyze use it."""

import json

import numpy as np
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from spacy_rhetoric.cli import app
from spacy_rhetoric.intertext.index import IntertextIndex
from spacy_rhetoric.intertext.link import link_segments, link_threshold
from spacy_rhetoric.intertext.null import (
    NULL_KEY,
    NULL_MIN_VALUES,
    estimate_null_threshold,
    null_threshold,
    work_of,
)
from spacy_rhetoric.intertext.rerank import FeatureReranker

runner = CliRunner()
WORDS = ["arma", "uirum", "cano", "troia", "oris", "decus", "uirgo", "aera", "uox", "mater"]


def _segments(works):
    return [
        (f"auctor.opus{w} {i + 1}", " ".join(words))
        for w, lines in enumerate(works)
        for i, words in enumerate(lines)
    ]


def test_work_of():
    assert work_of("vergil.aeneid 1.1") == "vergil.aeneid"
    assert work_of("verg. aen. 6.847") == "verg. aen."
    assert work_of("s12") == "s12"


@settings(max_examples=40, deadline=None)
@given(
    works=st.lists(
        st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), min_size=1, max_size=9),
        min_size=1,
        max_size=4,
    ),
    k=st.integers(1, 4),
    neighbours=st.integers(0, 3),
    quantile=st.sampled_from([0.5, 0.9, 0.99, 1.0]),
)
def test_null_threshold_matches_brute_force(works, k, neighbours, quantile):
    segments = _segments(works)
    index = IntertextIndex.build(segments, kind="form", dense=False)
    got = estimate_null_threshold(
        index, k=k, sample=len(segments), quantile=quantile, neighbours=neighbours
    )
    # brute force: each segment's best lexical score against the segments not near it
    words = [set(text.split()) for _, text in segments]
    n = len(segments)
    df = {w: sum(w in s for s in words) for w in WORDS}
    lengths = np.array([len(s) for s in words], dtype=np.float64)
    norm = 0.7 + 0.3 * lengths / lengths.mean()
    best = []
    for r in range(n):
        scores = [
            sum(np.log((n + 1) / (df[w] + 0.5)) for w in words[r] & words[s]) / norm[s]
            for s in range(n)
            if words[r] & words[s]
            and not (
                abs(s - r) <= neighbours and work_of(segments[s][0]) == work_of(segments[r][0])
            )
        ]
        if scores:
            best.append(max(scores))
    assert got["values"] == len(best) and got["sample"] == n and got["score"] == "lexical"
    if len(best) < NULL_MIN_VALUES:
        assert got["threshold"] is None
    else:
        assert got["threshold"] == pytest.approx(np.quantile(best, quantile), rel=1e-5)


def test_threshold_precedence_and_links():
    rng = np.random.default_rng(0)
    lines = [list(rng.choice(WORDS, size=4)) for _ in range(60)]
    index = IntertextIndex.build(_segments([lines[:30], lines[30:]]), kind="form", dense=False)
    default = null_threshold(index)
    assert default is not None and default == index.cfg[NULL_KEY]["threshold"]
    assert link_threshold(None, 0.25, index) == 0.25  # explicit first
    reranker = FeatureReranker(threshold=0.7)
    assert link_threshold(reranker, None, index) == 0.7  # then the reranker's
    assert link_threshold(None, None, index) == default  # then the index's
    assert link_threshold(None, None, None) is None
    queries = [" ".join(line) for line in lines[:10]]
    every = link_segments(index, queries, k=5, threshold=-1.0)
    chosen = link_segments(index, queries, k=5)
    assert all(row["link"] for rows in every for row in rows)
    for rows in chosen:
        assert [row["link"] for row in rows] == [row["lexical"] >= default for row in rows]


def test_cli_index_stores_the_default_and_match_honours_threshold(tmp_path):
    rng = np.random.default_rng(1)
    source = tmp_path / "sources.csv"
    rows = ["seg_id,text"] + [f"opus {i},{' '.join(rng.choice(WORDS, size=5))}" for i in range(40)]
    source.write_text("\n".join(rows) + "\n", encoding="utf8")
    index = tmp_path / "index"
    result = runner.invoke(
        app, ["intertext", "index", str(source), "-o", str(index), "--no-dense", "--terms", "form"]
    )
    assert result.exit_code == 0, result.output
    assert "Default link threshold without a reranker: lexical >= " in result.output
    meta = json.loads((index / "meta.json").read_text(encoding="utf8"))
    stored = meta[NULL_KEY]
    assert stored["values"] == 40 and stored["threshold"] > 0
    query = tmp_path / "query.csv"
    query.write_text("seg_id,text\nq1,arma uirum cano troia\nq2,decus uirgo aera\n", "utf8")
    counts = {}
    for threshold in (None, "-1", "1e9"):
        out = tmp_path / f"links-{threshold}.json"
        args = ["intertext", "match", str(query), "--index", str(index), "-o", str(out)]
        args += ["--no-packaged"]
        args += ["-k", "5"] + (["-t", threshold] if threshold else [])
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        links = json.loads(out.read_text(encoding="utf8"))
        counts[threshold] = sum(r["above_threshold"] == "Yes" for r in links)
        if threshold is None:
            assert all(
                (r["above_threshold"] == "Yes")
                == (r["lexical_score"] >= stored["threshold"] - 1e-6)
                for r in links
            )
    assert counts["-1"] == 10 and counts["1e9"] == 0
    assert 0 <= counts[None] <= 10
    # the component and analyze use the same default
    nlp = spacy.blank("la")
    nlp.add_pipe("sentencizer")
    config = {"index_path": str(index), "k": 5, "packaged_reranker": False}
    matcher = nlp.add_pipe("intertext_matcher", config=config)
    doc = nlp("arma uirum cano troia. decus uirgo aera.")
    linked = [link for _, links in doc._.intertext_links for link in links]
    assert len(linked) == counts[None]
    assert all(link["lexical"] >= matcher.index.cfg[NULL_KEY]["threshold"] for link in linked)
    from spacy_rhetoric.analysis.pipelines import build_analyzer

    analyzer = build_analyzer("la", index=index, packaged_reranker=False)
    note = next(n for n in analyzer.notes if n.component == "intertext")
    assert (
        "WARNING: the index has no reranker; links are the top 10 candidates with " in note.detail
    )
    assert f"lexical score >= {stored['threshold']:.3f}" in note.detail
    assert "1 % of its source segments" in note.detail
    assert analyzer.nlp.has_pipe("sentencizer") or analyzer.nlp.has_pipe("parser")


def test_cli_index_scores_long_segments_by_their_sentences_by_default(tmp_path):
    """`intertext index` splits segments of more than 40 words into sentences for the
    lexical channel unless told --split-words 0; short ones (verse lines) stay whole."""
    rng = np.random.default_rng(2)
    sentences = [" ".join(rng.choice(WORDS, size=12)) + "." for _ in range(5)]
    source = tmp_path / "sources.csv"
    rows = ["seg_id,text", f"prose 1,{' '.join(sentences)}"]
    rows += [f"versus {i},{' '.join(rng.choice(WORDS, size=6))}" for i in range(20)]
    source.write_text("\n".join(rows) + "\n", encoding="utf8")
    units = {}
    for extra, name in (([], "default"), (["--split-words", "0"], "whole")):
        out = tmp_path / name
        args = ["intertext", "index", str(source), "-o", str(out), "--no-dense"] + extra
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        meta = json.loads((out / "meta.json").read_text(encoding="utf8"))
        index = IntertextIndex.from_disk(out)
        units[name] = (meta["split_words"], index.lexical.matrix.shape[0], len(index))
    assert units["default"] == (40, 5 + 20, 21)
    assert units["whole"] == (None, 21, 21)
