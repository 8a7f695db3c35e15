import shutil
from collections import Counter
from pathlib import Path

import pytest
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_rhetoric.corpora import CorpusFormatError, convert, write_conversion
from spacy_rhetoric.corpora.loci_similes import (
    UNUSED_SEGMENTS,
    convert_loci_similes,
    read_links_csv,
    read_segments_csv,
    split_citation,
)


@pytest.fixture(scope="module")
def labels(fixtures_dir):
    return convert_loci_similes(fixtures_dir / "loci-similes")


@pytest.fixture(scope="module")
def toy(fixtures_dir):
    return convert_loci_similes(fixtures_dir / "loci-similes" / "toy")


@pytest.fixture
def toy_copy(fixtures_dir, tmp_path) -> Path:
    return Path(shutil.copytree(fixtures_dir / "loci-similes" / "toy", tmp_path / "toy"))


def _lists(value):
    """DocBin gives user_data's lists back as tuples; compare them as lists."""
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def _links(conversion):
    return [
        (doc.user_data["seg_id"], link["source_id"], link["pair_id"], link["fold"])
        for split, docs in conversion.splits.items()
        if split != "sources"
        for doc in docs
        for link in doc.user_data["links"]
    ]


# --- labels.csv --------------------------------------------------------------------


def test_labels_splits(labels):
    assert {k: len(v) for k, v in labels.splits.items()} == {
        "sources": 3,
        "fold0": 2,
        "fold2": 1,
        "fold3": 1,
        "fold4": 1,
    }
    assert [d.user_data["seg_id"] for d in labels.splits["sources"]] == [
        "verg. ecl. 4.60.1",
        "verg. aen. 6.847.1",
        "verg. aen. 7.112.1",
    ]
    assert labels.skipped == []


def test_labels_links(labels):
    assert sorted(_links(labels)) == [
        ("hier. epist. 117.7.1.1", "verg. aen. 6.847.1", 1, 4),
        ("hier. epist. 117.7.1.1", "verg. aen. 6.847.1", 134, 4),
        ("hier. epist. 21.2.5.1", "verg. ecl. 4.60.1", 0, 0),
        ("hier. epist. 21.2.5.1", "verg. ecl. 4.60.1", 144, 2),
        ("hier. epist. 66.11.1.2", "verg. aen. 7.112.1", 2, 0),
        ("hier. epist. 66.11.1.2", "verg. aen. 7.112.1", 135, 3),
    ]
    # a query in two folds is in both splits, each with that fold's link only
    fold0, fold2 = labels.splits["fold0"][0], labels.splits["fold2"][0]
    assert fold0.user_data["seg_id"] == fold2.user_data["seg_id"] == "hier. epist. 21.2.5.1"
    assert fold0.user_data["links"] == [
        {"pair_id": 0, "source_id": "verg. ecl. 4.60.1", "fold": 0, "label": 1}
    ]
    assert fold2.user_data["links"] == [
        {"pair_id": 144, "source_id": "verg. ecl. 4.60.1", "fold": 2, "label": 1}
    ]


def test_labels_docs(labels):
    doc = labels.splits["fold4"][0]
    assert doc.user_data == {
        "dataset": "loci-similes",
        "seg_id": "hier. epist. 117.7.1.1",
        "role": "query",
        "author": "hier",
        "work": "hier. epist.",
        "split": "fold4",
        "links": [
            {"pair_id": 1, "source_id": "verg. aen. 6.847.1", "fold": 4, "label": 1},
            {"pair_id": 134, "source_id": "verg. aen. 6.847.1", "fold": 4, "label": 1},
        ],
    }
    source = labels.splits["sources"][0]
    assert source.text == (
        "Incipe, parve puer, risu cognoscere matrem, / matri longa decem tulerunt fastidia menses."
    )
    assert [t.text for t in source[:5]] == ["Incipe", ",", "parve", "puer", ","]
    assert source.user_data == {
        "dataset": "loci-similes",
        "seg_id": "verg. ecl. 4.60.1",
        "role": "source",
        "author": "verg",
        "work": "verg. ecl.",
        "split": "sources",
    }
    assert source.vocab.lang == "la"


def test_labels_docbin_round_trip(labels, tmp_path):
    paths = write_conversion(labels, tmp_path)
    for split, docs in labels.splits.items():
        loaded = list(DocBin().from_disk(paths[split]).get_docs(Vocab()))
        for old, new in zip(docs, loaded, strict=True):
            assert [t.text for t in new] == [t.text for t in old]
            assert _lists(new.user_data) == old.user_data


def _labels_copy(fixtures_dir, tmp_path) -> Path:
    path = tmp_path / "labels.csv"
    shutil.copy(fixtures_dir / "loci-similes" / "labels.csv", path)
    return path


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), "utf8")


@pytest.mark.parametrize(
    "old,new,line,message",
    [
        ("\n1,alle_Zitate", "\nx,alle_Zitate", 3, "pair_id 'x' is not an integer"),
        ("\n1,alle_Zitate", "\n0,alle_Zitate", 3, "duplicate pair_id 0 (first on line 2)"),
        ("<hier. epist. 21.2.5.1>", "<>", 2, "empty position_query"),
        (",4\n", ",4,extra\n", 3, "14 columns; expected 13"),
        (",4\n", ",four\n", 3, "fold_id 'four' is not an integer"),
        ("fold_id", "folds", 1, "missing columns: fold_id"),
    ],
)
def test_labels_malformed(fixtures_dir, tmp_path, old, new, line, message):
    path = _labels_copy(fixtures_dir, tmp_path)
    _replace(path, old, new)
    with pytest.raises(CorpusFormatError) as info:
        convert("loci-similes", path)
    assert info.value.path == str(path)
    assert info.value.where == line
    assert message in str(info.value)


def test_labels_inconsistent_text(fixtures_dir, tmp_path):
    path = _labels_copy(fixtures_dir, tmp_path)
    lines = path.read_text("utf8").split("\n")
    # line 7 (pair 144) repeats the query of line 2 (pair 0) with its text
    assert lines[6].startswith("144,")
    lines[6] = lines[6].replace("quae autem potest", "quae tandem potest", 1)
    path.write_text("\n".join(lines), "utf8")
    with pytest.raises(CorpusFormatError, match="has another text on line 2") as info:
        convert_loci_similes(path)
    assert info.value.where == 7


# --- the locisimiles package format ------------------------------------------------


def test_toy_directory(toy, fixtures_dir):
    assert {k: len(v) for k, v in toy.splits.items()} == {"sources": 3, "queries": 3}
    assert [(Path(s.path).name, s.reason) for s in toy.skipped] == [
        ("hieronymus_sentencized.csv", UNUSED_SEGMENTS)
    ]
    query = toy.splits["queries"][1]
    assert query.text == "O decus Italiae, uirgo!"
    assert query.user_data == {
        "dataset": "loci-similes",
        "seg_id": "hier. adv. iovin. 1.41",
        "role": "query",
        "author": "hier",
        "work": "hier. adv. iovin.",
        "links": [{"pair_id": 1, "source_id": "verg. aen. 11.508", "fold": None, "label": 1}],
        "split": "queries",
    }
    assert [d.user_data["seg_id"] for d in toy.splits["sources"]] == [
        "verg. aen. 10.636",
        "verg. aen. 11.508",
        "verg. aen. 4.172",
    ]
    assert all(d.user_data["role"] == "source" for d in toy.splits["sources"])


def test_read_segments_csv(fixtures_dir):
    segments = read_segments_csv(fixtures_dir / "loci-similes" / "toy" / "vergil_samples.csv")
    assert segments[1] == (
        "verg. aen. 11.508",
        "o decus Italiae uirgo, quas dicere grates quasue referre parem?",
    )
    assert len(segments) == 3


def test_read_links_csv(fixtures_dir):
    path = fixtures_dir / "loci-similes" / "toy" / "ground_truth.csv"
    assert read_links_csv(path)[0] == ("hier. adv. iovin. 1.1", "verg. aen. 10.636", 1)
    with pytest.raises(CorpusFormatError, match="unknown source_id 'verg. aen. 10.636'") as info:
        read_links_csv(path, source_ids={"verg. aen. 11.508"})
    assert info.value.where == 2


@pytest.mark.parametrize(
    "content,line,message",
    [
        ("seg_id,text\na,one\nb,two,three\n", 3, "3 columns; expected 2"),
        ('seg_id,text\na,one\n"",two\n', 3, "empty seg_id"),
        ('seg_id,text\na,"one\nmore"\na,two\n', 4, "duplicate seg_id 'a' (first on line 2)"),
        ("id,text\na,one\n", 1, "header id,text; expected seg_id,text"),
        ('seg_id,text\na,"one\n', 2, "malformed CSV record: unexpected end of data"),
        ('seg_id,text\na,"one"x\n', 2, "malformed CSV record: ',' expected after '\"'"),
    ],
)
def test_read_segments_csv_malformed(tmp_path, content, line, message):
    path = tmp_path / "segments.csv"
    path.write_text(content, "utf8")
    with pytest.raises(CorpusFormatError) as info:
        read_segments_csv(path)
    assert info.value.path == str(path)
    assert info.value.where == line
    assert message in str(info.value)


def test_toy_unknown_id_in_ground_truth(toy_copy):
    truth = toy_copy / "ground_truth.csv"
    _replace(truth, '"verg. aen. 4.172",1', '"verg. aen. 4.999",1')
    with pytest.raises(CorpusFormatError, match="unknown source_id 'verg. aen. 4.999'") as info:
        convert_loci_similes(toy_copy)
    assert info.value.path == str(truth)
    assert info.value.where == 4


def test_toy_bad_label(toy_copy):
    truth = toy_copy / "ground_truth.csv"
    _replace(truth, '"verg. aen. 4.172",1', '"verg. aen. 4.172",yes')
    with pytest.raises(CorpusFormatError, match="label 'yes'; expected 0 or 1") as info:
        convert_loci_similes(toy_copy)
    assert info.value.where == 4


def test_toy_duplicate_segment(toy_copy):
    path = toy_copy / "vergil_samples.csv"
    with path.open("a", encoding="utf8") as file_:
        file_.write('"verg. aen. 11.508","o decus"\n')
    with pytest.raises(CorpusFormatError, match="duplicate seg_id 'verg. aen. 11.508'") as info:
        convert_loci_similes(toy_copy)
    assert info.value.where == 5


def test_nothing_to_read(tmp_path):
    with pytest.raises(CorpusFormatError, match="neither labels.csv nor ground_truth.csv"):
        convert_loci_similes(tmp_path)


def test_split_citation():
    assert split_citation("hier. adv. iovin. 1.1") == ("hier", "hier. adv. iovin.")
    assert split_citation("verg. aen. 10.636") == ("verg", "verg. aen.")
    assert split_citation("hier. in ion. 1126d.1") == ("hier", "hier. in ion.")


# --- the full dataset -------------------------------------------------------------


@pytest.mark.data
def test_loci_similes_published_counts(data_dir):
    conversion = convert("loci-similes", data_dir("loci-similes"))
    assert list(conversion.splits) == ["sources", "fold0", "fold1", "fold2", "fold3", "fold4"]
    links = _links(conversion)
    assert len(links) == 545
    assert len({(query, source) for query, source, _, _ in links}) == 540
    assert Counter(fold for _, _, _, fold in links) == {f: 109 for f in range(5)}
    assert sorted(pair for _, _, pair, _ in links) == list(range(545))
    queries = Counter(
        d.user_data["seg_id"]
        for split, ds in conversion.splits.items()
        if split != "sources"
        for d in ds
    )
    assert len(queries) == 463
    assert sum(n > 1 for n in queries.values()) == 54
    assert len(conversion.splits["sources"]) == 408
    authors = Counter(d.user_data["author"] for d in conversion.splits["sources"])
    assert sum(authors.values()) == 408 and authors["verg"] > 0 and authors["cic"] > 0
    assert conversion.skipped == []


@pytest.mark.data
def test_loci_similes_examples(data_dir):
    conversion = convert("loci-similes", data_dir("loci-similes") / "examples")
    assert {k: len(v) for k, v in conversion.splits.items()} == {"sources": 10, "queries": 11}
    assert sum(len(d.user_data["links"]) for d in conversion.splits["queries"]) == 10
    assert conversion.skip_summary() == {UNUSED_SEGMENTS: 1}
