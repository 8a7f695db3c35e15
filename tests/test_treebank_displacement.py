import math

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance
from spacy.tokens import Doc

from spacy_rhetoric.corpora.conllu import read_conllu_docs
from spacy_rhetoric.corpora.util import CorpusFormatError
from spacy_rhetoric.treebank.displacement import (
    Displacements,
    binned_edv,
    compare,
    corpus_med,
    doc_displacements,
    edv,
    from_docs,
    histogram,
    length_histograms,
    load_displacements,
    parse_conllu,
    read_conllu,
    sentence_med,
    slv,
    wasserstein_unit,
)

# --- strategies ------------------------------------------------------------------------------


@st.composite
def trees(draw, max_len=12):
    """A random dependency tree as CoNLL-U heads (1-based, 0 = root)."""
    n = draw(st.integers(1, max_len))
    order = draw(st.permutations(list(range(1, n + 1))))
    heads = [0] * n
    for k in range(1, n):  # attach each node to one placed before it: a tree
        parent = order[draw(st.integers(0, k - 1))]
        heads[order[k] - 1] = parent
    return heads


corpora = st.lists(trees(), min_size=1, max_size=8).map(Displacements.from_heads)


def brute_edv(a: Displacements, b: Displacements, max_displacement: int = 30) -> float:
    """EDV straight from the definition: CDF difference summed over the integer support."""

    def pmf(data):
        edges = numpy.clip(data.edges, -max_displacement, max_displacement)
        return {v: numpy.mean(edges == v) for v in range(-max_displacement, max_displacement + 1)}

    pa, pb = pmf(a), pmf(b)
    total, cdf = 0.0, 0.0
    for v in range(-max_displacement, max_displacement):
        cdf += pa[v] - pb[v]
        total += abs(cdf)
    return total


def conllu(*sentences):
    """CoNLL-U text for sentences given as lists of heads."""
    blocks = []
    for heads in sentences:
        lines = [
            f"{i}\tw{i}\t_\tX\t_\t_\t{h}\t{'root' if h == 0 else 'dep'}\t_\t_"
            for i, h in enumerate(heads, 1)
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


# --- displacement and MED --------------------------------------------------------------------


def test_med_hand_computed():
    # "the cat sat on the mat": the->cat, cat->sat, sat root, on->mat, the->mat, mat->sat
    data = Displacements.from_heads([[2, 3, 0, 6, 6, 3]])
    assert data.values.tolist() == [-1, -1, 0, -2, -1, 3]
    # (-1 - 1 - 2 - 1 + 3) / (6 - 1)
    assert sentence_med(data).tolist() == [pytest.approx(-0.4)]
    assert corpus_med(data) == pytest.approx(-0.4)


def test_med_single_token_sentence_is_nan():
    data = Displacements.from_heads([[0], [2, 0]])
    med = sentence_med(data)
    assert math.isnan(med[0]) and med[1] == -1.0
    assert corpus_med(Displacements.from_heads([[0]])) is None


def test_corpus_med_weighs_edges():
    data = Displacements.from_heads([[0, 1], [0, 1, 1]])  # MEDs 1 and 1.5
    assert sentence_med(data).tolist() == [1.0, 1.5]
    assert corpus_med(data) == pytest.approx(4 / 3)


def test_select_and_concat():
    data = Displacements.from_heads([[0], [2, 0], [0, 1, 1]])
    part = data.select([2, 0])
    assert part.lengths.tolist() == [3, 1]
    assert part.values.tolist() == [0, 1, 2, 0]
    joined = Displacements.concat([data.select([0]), data.select([1, 2])])
    assert numpy.array_equal(joined.values, data.values)
    assert numpy.array_equal(joined.offsets, data.offsets)
    assert data.select(numpy.array([False, True, False])).values.tolist() == [-1, 0]


def test_doc_displacements_match_conllu():
    nlp = spacy.blank("en")
    doc = Doc(
        nlp.vocab, words=["a", "b", "c", "d"], heads=[1, 1, 1, 2], deps=["x", "ROOT", "y", "z"]
    )
    assert doc_displacements(doc).tolist() == [-1, 0, 1, 1]
    assert (
        from_docs([doc]).values.tolist() == Displacements.from_heads([[2, 0, 2, 3]]).values.tolist()
    )


def test_from_docs_requires_parse():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="no dependency parse"):
        from_docs([nlp("no parse here")])


# --- histograms ------------------------------------------------------------------------------


def test_histogram_clipping_counted():
    edges = numpy.array([-40, -3, -1, 1, 1, 2, 31, 5])
    hist = histogram(edges, max_displacement=30)
    assert hist.n_edges == 8 and hist.n_clipped == 2
    assert hist.clipped_share == pytest.approx(0.25)
    assert hist.counts[0] == 1 and hist.counts[-1] == 1  # clipped into the end bins
    assert hist.total == 8
    dropped = histogram(edges, max_displacement=30, overflow="drop")
    assert dropped.total == 6 and dropped.n_clipped == 2
    assert dropped.counts[0] == 0 and dropped.counts[-1] == 0
    small = histogram(edges, max_displacement=2)
    assert small.n_clipped == 4 and small.counts.tolist() == [2, 1, 0, 2, 3]


def test_histogram_ignores_roots_and_validates():
    assert histogram(numpy.array([0, 0, 1])).total == 1
    with pytest.raises(ValueError):
        histogram(numpy.array([1]), overflow="wrap")
    with pytest.raises(ValueError):
        _ = histogram(numpy.array([]), max_displacement=30).probabilities


def test_length_histograms():
    data = Displacements.from_heads([[0, 1, 1], [2, 0, 2], [0, 1]])
    rows = length_histograms(data, [2, 3], max_displacement=2)
    assert rows.tolist() == [[0, 0, 0, 1, 0], [0, 1, 0, 2, 1]]


# --- EDV ------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(corpora)
def test_edv_identical_is_zero(a):
    if a.n_edges:
        assert edv(a, a) == 0.0
        assert edv(a, a, variant="samples") == 0.0


@settings(max_examples=60, deadline=None)
@given(corpora, corpora)
def test_edv_symmetric_and_matches_direct_computation(a, b):
    if not (a.n_edges and b.n_edges):
        return
    for variant in ("support", "samples"):
        assert edv(a, b, variant=variant) == pytest.approx(edv(b, a, variant=variant), abs=1e-12)
    assert edv(a, b) == pytest.approx(brute_edv(a, b), abs=1e-9)
    # the fast CDF form used by the split search agrees with scipy
    pa, pb = histogram(a).probabilities, histogram(b).probabilities
    assert wasserstein_unit(pa, pb) == pytest.approx(edv(a, b), abs=1e-9)
    # and the "samples" variant is scipy on the probability vectors
    assert edv(a, b, variant="samples") == pytest.approx(wasserstein_distance(pa, pb))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-10, 10).filter(bool), min_size=1, max_size=30), st.integers(1, 5))
def test_edv_translation(edges, shift):
    edges = numpy.array([e for e in edges if e + shift != 0])  # shifted edges stay edges
    if len(edges) == 0:
        return
    moved = edges + shift
    # support variant: a translation by s moves every edge by s, distance exactly s
    assert edv(edges, moved) == pytest.approx(shift)
    # samples variant: it only compares bin heights, blind to the translation
    assert edv(edges, moved, variant="samples") == pytest.approx(0.0, abs=1e-12)


def test_edv_variants_on_a_small_example():
    a = numpy.array([-1, -1, 1, 2])
    b = numpy.array([-1, 1, 1, 2])
    # support: move 1/4 of the mass from -1 to 1 => 0.25 * 2
    assert edv(a, b) == pytest.approx(0.5)
    pa, pb = histogram(a).probabilities, histogram(b).probabilities
    assert edv(a, b, variant="samples") == pytest.approx(wasserstein_distance(pa, pb))
    with pytest.raises(ValueError):
        edv(a, b, variant="bogus")


def test_binned_edv_and_slv():
    a = Displacements.from_heads([[0, 1, 1], [0, 1, 1, 1]])
    b = Displacements.from_heads([[2, 0, 2], [0, 1, 1, 1]])
    binned = binned_edv(a, b, length_range=(3, 4))
    assert set(binned.per_length) == {3, 4}
    assert binned.per_length[4] == 0.0
    assert binned.per_length[3] == pytest.approx(edv(a.select([0]), b.select([0])))
    assert binned.mean == pytest.approx(binned.per_length[3] / 2)
    assert slv(a, b) == 0.0
    c = Displacements.from_heads([[0, 1, 1, 1, 1]])
    assert slv(a, c) == pytest.approx(1.5)
    assert slv(a, a, variant="samples") == 0.0
    result = compare(a, b, length_range=(3, 4))
    assert result["edv_support"] == pytest.approx(edv(a, b))
    assert result["a"]["sentences"] == 2 and result["b"]["edges"] == 5


# --- the CoNLL-U reader ----------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.lists(trees(), min_size=1, max_size=6))
def test_parse_conllu_matches_heads(sentences):
    data = parse_conllu(conllu(*sentences))
    expected = Displacements.from_heads(sentences)
    assert numpy.array_equal(data.values, expected.values)
    assert numpy.array_equal(data.offsets, expected.offsets)


def test_parse_conllu_skips_multiword_tokens_and_empty_nodes(fixtures_dir):
    data = read_conllu(fixtures_dir / "treebank" / "mwt_empty_nodes.conllu")
    assert data.lengths.tolist() == [6, 7, 1]
    assert data.sentence(0).tolist() == [-1, 0, -2, -1, 3, 4]
    assert data.sentence(1).tolist() == [-1, 0, 1, -1, 3, 1, 5]
    med = sentence_med(data)
    assert med[0] == pytest.approx(0.6) and med[1] == pytest.approx(4 / 3)
    assert math.isnan(med[2])
    # the same through spaCy's converter and Docs
    docs = read_conllu_docs(fixtures_dir / "treebank" / "mwt_empty_nodes.conllu")
    assert [len(doc) for doc in docs] == [6, 7, 1]
    assert numpy.array_equal(from_docs(docs).values, data.values)


def test_parse_conllu_errors_name_the_line():
    good = conllu([2, 0])
    assert parse_conllu(good).n_edges == 1
    with pytest.raises(CorpusFormatError, match=r":2: HEAD"):
        parse_conllu(good.replace("w2\t_\tX\t_\t_\t0", "w2\t_\tX\t_\t_\t_"))
    with pytest.raises(CorpusFormatError, match=r":1: a token line needs 10"):
        parse_conllu("1\tw\t_\n")
    with pytest.raises(CorpusFormatError, match=r":2: word IDs"):
        parse_conllu(conllu([0, 1]).replace("2\tw2", "3\tw2"))
    with pytest.raises(CorpusFormatError, match=r":1: HEAD points beyond"):
        parse_conllu(conllu([3, 0]))
    with pytest.raises(CorpusFormatError, match=r"bad ID"):
        parse_conllu(conllu([0]).replace("1\tw1", "1x\tw1"))
    assert parse_conllu("# just a comment\n").n_sentences == 0


def test_load_displacements_reads_files_dirs_and_docbins(tmp_path, fixtures_dir):
    from spacy.tokens import DocBin

    path = fixtures_dir / "treebank" / "mwt_empty_nodes.conllu"
    docs = read_conllu_docs(path)
    DocBin(docs=docs).to_disk(tmp_path / "x.spacy")
    from_bin = load_displacements(tmp_path / "x.spacy")
    assert numpy.array_equal(from_bin.values, read_conllu(path).values)
    both = load_displacements([path, tmp_path])
    assert both.n_sentences == 6
    with pytest.raises(FileNotFoundError):
        load_displacements(tmp_path / "missing.conllu")
