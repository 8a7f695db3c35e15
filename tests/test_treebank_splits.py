from collections import Counter, defaultdict

import numpy
import pytest
import spacy
import srsly
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, DocBin

from spacy_rhetoric.treebank.displacement import (
    Displacements,
    edv,
    from_docs,
    read_conllu,
    sentence_med,
)
from spacy_rhetoric.treebank.io import read_docs
from spacy_rhetoric.treebank.splits import (
    DEV,
    TEST,
    TRAIN,
    edv_split,
    kfold_split,
    length_bins,
    pairwise_edv,
    random_split,
    split_kfold,
    split_sentences,
    split_sizes,
    write_split,
)


def random_corpus(seed: int, n: int = 200) -> Displacements:
    """Random trees: every token attaches to an earlier-placed token."""
    rng = numpy.random.default_rng(seed)
    sentences = []
    for _ in range(n):
        length = int(rng.integers(1, 25))
        order = rng.permutation(length) + 1
        heads = [0] * length
        for k in range(1, length):
            heads[order[k] - 1] = int(order[rng.integers(k)])
        sentences.append(heads)
    return Displacements.from_heads(sentences)


@given(st.integers(0, 500), st.lists(st.floats(0.01, 1), min_size=1, max_size=5))
def test_split_sizes_sum(n, props):
    sizes = split_sizes(n, props)
    assert sum(sizes) == n and min(sizes) >= 0
    exact = numpy.array(props) / sum(props) * n
    assert numpy.all(numpy.abs(numpy.array(sizes) - exact) < 1)


def test_length_bins():
    bins = length_bins(numpy.array([1, 2, 3, 4, 30, 31, 40, 41, 55]), (3, 30), 10)
    assert bins.tolist() == [0, 0, 1, 2, 28, 29, 29, 30, 31]


def test_random_split_partition_and_seed():
    a = random_split(101, seed=3)
    assert Counter(a.tolist()) == {0: 61, 1: 20, 2: 20}
    assert numpy.array_equal(a, random_split(101, seed=3))
    assert not numpy.array_equal(a, random_split(101, seed=4))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["min", "max"]), st.integers(0, 300))
def test_edv_split_is_a_partition(seed, mode, n_refine):
    data = random_corpus(seed, n=60)
    result = edv_split(data, mode, seed=seed, n_refine=n_refine)
    assignment = result.assignment
    assert len(assignment) == data.n_sentences  # every sentence exactly once
    assert set(assignment.tolist()) <= {TRAIN, DEV, TEST}
    assert Counter(assignment.tolist()) == {TRAIN: 36, DEV: 12, TEST: 12}
    pairs = pairwise_edv(data, assignment)
    if mode == "min":
        assert result.objective_after <= result.objective_before + 1e-12
        total = sum(pair["support"] for pair in pairs.values())
        assert result.objective_after == pytest.approx(total)
    else:
        assert result.objective_after >= result.objective_before - 1e-12
        assert result.edv_after >= result.edv_before - 1e-12
    assert pairs["train-test"]["support"] == pytest.approx(result.edv_after)


def test_edv_split_keeps_lengths_balanced():
    data = random_corpus(0, n=500)
    for mode in ("min", "max"):
        assignment = edv_split(data, mode, seed=1).assignment
        bins = length_bins(data.lengths)
        for b in numpy.unique(bins):
            counts = numpy.bincount(assignment[bins == b], minlength=3)
            share = counts / counts.sum()
            if counts.sum() >= 20:
                assert abs(share[TRAIN] - 0.6) < 0.15


def test_edv_split_min_below_random_below_max():
    data = random_corpus(1, n=600)
    low = pairwise_edv(data, edv_split(data, "min", seed=0).assignment)["train-test"]["support"]
    high = pairwise_edv(data, edv_split(data, "max", seed=0).assignment)["train-test"]["support"]
    rand = pairwise_edv(data, random_split(data.n_sentences, seed=0))["train-test"]["support"]
    assert low < rand < high


def test_edv_split_real_treebank(data_dir):
    path = data_dir("ud") / "UD_Latin-UDante" / "la_udante-ud-dev.conllu"
    data = read_conllu(path)
    low = edv_split(data, "min", seed=0)
    high = edv_split(data, "max", seed=0)
    low_edv = pairwise_edv(data, low.assignment)["train-test"]
    high_edv = pairwise_edv(data, high.assignment)["train-test"]
    assert low_edv["support"] < high_edv["support"] / 10
    assert low_edv["samples"] < high_edv["samples"]
    # the max split puts low-MED sentences into train; reverse flips that
    med = sentence_med(data)
    reverse = edv_split(data, "max", seed=0, reverse=True, n_refine=0)
    for result, sign in ((high, 1), (reverse, -1)):
        train_med = numpy.nanmean(med[result.assignment == TRAIN])
        test_med = numpy.nanmean(med[result.assignment == TEST])
        assert sign * (test_med - train_med) > 0


def test_edv_split_validates():
    data = random_corpus(0, n=10)
    with pytest.raises(ValueError, match="mode"):
        edv_split(data, "middle")
    with pytest.raises(ValueError, match="at least 3"):
        edv_split(data.select([0, 1]))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 50), st.sampled_from("abc")), min_size=4, max_size=40),
    st.integers(2, 4),
    st.integers(0, 100),
)
def test_kfold_split_balances_strata(groups, k, seed):
    if len(groups) < k:
        return
    sizes = [size for size, _ in groups]
    strata = [stratum for _, stratum in groups]
    folds = kfold_split(sizes, strata, k=k, seed=seed)
    assert len(folds) == len(groups) and set(folds.tolist()) <= set(range(k))
    for stratum in set(strata):
        load = numpy.zeros(k)
        biggest = 0
        for size, s, fold in zip(sizes, strata, folds):
            if s == stratum:
                load[fold] += size
                biggest = max(biggest, size)
        assert load.max() - load.min() <= biggest


def test_kfold_split_validates():
    with pytest.raises(ValueError, match="cannot fill"):
        kfold_split([1, 2], k=3)
    with pytest.raises(ValueError, match="k must be"):
        kfold_split([1, 2], k=1)


def make_corpus(n_docs=12, sections=3):
    """Parsed docs: documents with several sections, each with a period."""
    vocab = spacy.blank("en").vocab
    docs = []
    for d in range(n_docs):
        for s in range(sections):
            words = ["w"] * (3 + (d + s) % 4)
            heads = [0] + [0] * (len(words) - 1)
            deps = ["ROOT"] + ["dep"] * (len(words) - 1)
            doc = Doc(vocab, words=words, heads=heads, deps=deps)
            doc.user_data.update({"doc_id": f"doc{d}", "period": ["early", "late"][d % 2]})
            docs.append(doc)
    return docs


def test_split_kfold_keeps_documents_whole_and_balances_period():
    docs = make_corpus()
    split = split_kfold(docs, k=3, seed=0, stratum_key="period")
    test_ids = [
        {doc.user_data["doc_id"] for doc in split.parts[f"fold-{i}/test"]} for i in range(3)
    ]
    all_ids = {doc.user_data["doc_id"] for doc in docs}
    assert set().union(*test_ids) == all_ids
    assert sum(len(ids) for ids in test_ids) == len(all_ids)  # folds disjoint
    for i in range(3):
        train = {id(d) for d in split.parts[f"fold-{i}/train"]}
        dev = {id(d) for d in split.parts[f"fold-{i}/dev"]}
        test = {id(d) for d in split.parts[f"fold-{i}/test"]}
        assert not (train & dev or train & test or dev & test)
        assert len(train | dev | test) == len(docs)
        # a document's sections all sit in one part
        for part in ("train", "dev", "test"):
            counts = Counter(d.user_data["doc_id"] for d in split.parts[f"fold-{i}/{part}"])
            assert set(counts.values()) == {3}
    strata = [fold["strata"] for fold in split.manifest["folds"]]
    assert strata == [{"early": 2, "late": 2}] * 3
    assert all("edv_train_test" in fold for fold in split.manifest["folds"])


def test_split_kfold_strata_mapping_and_errors():
    docs = make_corpus(n_docs=6, sections=1)
    mapping = {f"doc{i}": ("a" if i < 3 else "b") for i in range(6)}
    split = split_kfold(docs, k=3, strata=mapping, dev=False)
    assert [f["strata"] for f in split.manifest["folds"]] == [{"a": 1, "b": 1}] * 3
    assert not any(name.endswith("/dev") for name in split.parts)
    with pytest.raises(ValueError, match="missing from the strata map"):
        split_kfold(docs, k=3, strata={"doc0": "a"})
    with pytest.raises(ValueError, match="user_data\\['genre'\\]"):
        split_kfold(docs, k=3, stratum_key="genre")
    # without a group key, every doc is a document
    assert split_kfold(docs, k=2, group_key=None).manifest["group_key"] is None


def test_split_sentences_on_fixture(fixtures_dir, tmp_path):
    docs = read_docs(fixtures_dir / "treebank" / "diagnostics_gold.conllu")
    for method in ("edv-min", "edv-max", "random"):
        split = split_sentences(docs, method, seed=0, n_refine=100)
        records = split.manifest["assignment"]
        assert sorted(r["index"] for r in records) == list(range(len(docs)))
        by_split = defaultdict(set)
        for r in records:
            by_split[r["split"]].add(r["sent_id"])
        assert sum(len(v) for v in by_split.values()) == len(docs) == 16
        assert [len(split.parts[name]) for name in ("train", "dev", "test")] == [10, 3, 3]
        assert set(split.manifest["edv"]) == {"train-dev", "train-test", "dev-test"}
    paths = write_split(split, tmp_path / "out")
    manifest = srsly.read_json(paths["manifest"])
    assert manifest["method"] == "random"
    test_docs = list(DocBin().from_disk(paths["test"]).get_docs(spacy.blank("en").vocab))
    assert [d.user_data["sent_id"] for d in test_docs] == [
        r["sent_id"] for r in manifest["assignment"] if r["split"] == "test"
    ]
    assert from_docs(test_docs).n_sentences == 3


def test_split_sentences_cuts_multi_sentence_docs():
    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words=list("abcdef"), heads=[1, 1, 1, 4, 4, 4], deps=["d", "ROOT", "d"] * 2)
    doc.user_data["doc_id"] = "x"
    split = split_sentences([doc, doc, doc], "random", seed=0)
    assert sum(len(part) for part in split.parts.values()) == 6
    assert all(d.user_data["doc_id"] == "x" for part in split.parts.values() for d in part)
    with pytest.raises(ValueError, match="method"):
        split_sentences([doc], "alphabetical")
    unparsed = spacy.blank("en")("no parse")
    with pytest.raises(ValueError, match="dependency parse"):
        split_sentences([unparsed] * 3, "edv-min")


def test_pairwise_edv_matches_edv():
    data = random_corpus(5, n=50)
    assignment = random_split(50, seed=0)
    result = pairwise_edv(data, assignment)
    expected = edv(data.select(assignment == TRAIN), data.select(assignment == TEST))
    assert result["train-test"]["support"] == pytest.approx(expected)
