import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_rhetoric.corpora import CorpusFormatError, convert, write_conversion
from spacy_rhetoric.corpora.chiasmus import (
    DUPLICATE_FILE,
    NO_OFFSET_BASE,
    SPANS_KEY,
    SUPPORT_KEY,
    UNALIGNED,
    UNION_FILE,
    convert_chiasmus_de,
    convert_chiasmus_en,
    german_spaces,
)


@pytest.fixture(scope="module")
def german(fixtures_dir):
    return convert_chiasmus_de(fixtures_dir / "chiasmus-de")


@pytest.fixture(scope="module")
def dubremetz(fixtures_dir):
    return convert_chiasmus_en(fixtures_dir / "chiasmus-en-dubremetz")


@pytest.fixture(scope="module")
def meyer(fixtures_dir):
    return convert_chiasmus_en(fixtures_dir / "chiasmus-en-meyer")


def _candidate(doc):
    """(A..A' text, label, span_id) and the supporting (text, role, token) triples."""
    (span,) = doc.spans[SPANS_KEY]
    support = [(s.text, s.label_, s.start) for s in doc.spans[SUPPORT_KEY]]
    assert all(len(s) == 1 and s.id_ == span.id_ for s in doc.spans[SUPPORT_KEY])
    return (span.text, span.label_, span.id_), support


def _lists(value):
    """DocBin gives user_data's lists back as tuples; compare them as lists."""
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def _write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf8")
    return path


# --- German ------------------------------------------------------------------------


def test_chiasmus_de_docs(german):
    assert list(german.splits) == ["all"]
    docs = german.splits["all"]
    assert len(docs) == 3
    doc = docs[0]
    assert doc.text == "Man soll essen, um zu leben,\nund nicht leben, um zu essen."
    assert doc[8].text == "\n" and doc[8].pos_ == "SPACE"
    assert [t.pos_ for t in doc[:4]] == ["PRON", "AUX", "VERB", "PUNCT"]
    assert [t.lemma_ for t in doc[:3]] == ["man", "sollen", "essen"]
    assert _candidate(doc) == (
        ("essen, um zu leben,\nund nicht leben, um zu essen", "a", "c0"),
        [("essen", "A", 2), ("leben", "B", 6), ("leben", "B'", 11), ("essen", "A'", 15)],
    )
    assert doc.user_data == {
        "dataset": "chiasmus-de",
        "doc_id": "candidates/erfunden-stueck-eins_candidates_pos.pickle",
        "candidate": 0,
        "annotation": "a",
        "dep": ["sb", "ROOT", "oc", "punct", "cp", "pm", "oc", "punct", "ROOT"]
        + ["cd", "ng", "cj", "punct", "cp", "pm", "oc", "punct"],
        "split": "all",
    }
    # no parse is invented from head-less labels
    assert not doc.has_annotation("DEP")


def test_chiasmus_de_empty_code_and_quotes(german):
    doc = german.splits["all"][1]
    assert _candidate(doc)[0] == (
        "Herr lobt den Knecht und der Knecht lobt den Herrn",
        "empty",
        "c0",
    )
    assert doc.user_data["annotation"] == ""
    assert doc.text == "Der Herr lobt den Knecht und der Knecht lobt den Herrn!\n\n"
    doc = german.splits["all"][2]
    assert doc.text == "„Gut ist böse, und böse ist gut“"
    assert _candidate(doc)[1] == [
        ("Gut", "A", 1),
        ("böse", "B", 3),
        ("böse", "B'", 6),
        ("gut", "A'", 8),
    ]
    assert doc.user_data["candidate"] == 2


def test_german_spaces():
    assert german_spaces(["a", ",", "b", "\n", "(", "c", ")", "."]) == [
        False,
        True,
        False,
        False,
        False,
        False,
        False,
        False,
    ]
    assert german_spaces([]) == []


def test_chiasmus_de_docbin_round_trip(german, tmp_path):
    paths = write_conversion(german, tmp_path)
    loaded = list(DocBin().from_disk(paths["all"]).get_docs(Vocab()))
    for old, new in zip(german.splits["all"], loaded, strict=True):
        assert new.text == old.text
        assert [t.pos_ for t in new] == [t.pos_ for t in old]
        assert [t.lemma_ for t in new] == [t.lemma_ for t in old]
        assert _candidate(new) == _candidate(old)
        assert _lists(new.user_data) == old.user_data


def test_chiasmus_de_file_path(fixtures_dir):
    conversion = convert("chiasmus-de", fixtures_dir / "chiasmus-de" / "data_example.json")
    assert len(conversion.splits["all"]) == 3


def _records(fixtures_dir):
    return json.loads((fixtures_dir / "chiasmus-de" / "data_example.json").read_text("utf8"))


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda r: r.pop("annotation"), "missing field 'annotation'"),
        (lambda r: r.update(ids="1,2,3,4"), "field 'ids' is not a list"),
        (lambda r: r["pos"].pop(), "'pos' must be 10 strings, one per token (got 9)"),
        (lambda r: r.update(cont_ids=[7, 20]), "span 14 tokens, not 10"),
        (lambda r: r.update(ids=[8, 10, 13, 30]), "lie outside 'cont_ids'"),
        (lambda r: r.update(ids=[8, 13, 10, 15]), "not in increasing order"),
        (lambda r: r.update(ids=[8, 10, 13]), "'ids' must be four integers"),
        (lambda r: r["pos"].__setitem__(0, "PUNC"), "bad token annotation"),
        (lambda r: r["tokens"].__setitem__(0, ""), "'tokens' must be non-empty strings"),
    ],
)
def test_chiasmus_de_malformed_record(fixtures_dir, tmp_path, change, message):
    records = _records(fixtures_dir)
    change(records[2])
    path = _write_json(tmp_path / "data.json", records)
    with pytest.raises(CorpusFormatError) as info:
        convert_chiasmus_de(tmp_path)
    assert info.value.path == str(path)
    assert info.value.where == "record 2"
    assert message in str(info.value)


def test_chiasmus_de_bad_json(tmp_path):
    path = tmp_path / "data.json"
    path.write_text('[\n {"tokens": []},\n {"tokens": ]\n]', encoding="utf8")
    with pytest.raises(CorpusFormatError, match="invalid JSON") as info:
        convert_chiasmus_de(path)
    assert info.value.where == 3
    _write_json(path, {"tokens": []})
    with pytest.raises(CorpusFormatError, match="expected a JSON list"):
        convert_chiasmus_de(path)
    with pytest.raises(CorpusFormatError, match="no data.json or data_example.json"):
        convert_chiasmus_de(tmp_path / "..")


# --- English: Dubremetz & Nivre ----------------------------------------------------


def test_dubremetz_splits_and_skips(dubremetz, fixtures_dir):
    assert {k: len(v) for k, v in dubremetz.splits.items()} == {"train": 4, "test": 2}
    train = dubremetz.splits["train"]
    assert [d.user_data["category"] for d in train] == ["True", "True", "Borderline", "Duplicate"]
    path = fixtures_dir / "chiasmus-en-dubremetz" / "annotated0t16M_i_0t16J.xml"
    assert [(s.path, s.where, s.reason) for s in dubremetz.skipped] == [(str(path), 44, UNALIGNED)]
    assert [d.user_data["category"] for d in dubremetz.splits["test"]] == ["True", "False"]


def test_dubremetz_candidate(dubremetz):
    doc = dubremetz.splits["train"][0]
    assert doc.text == "One for all and all for one, said the member."
    assert _candidate(doc) == (
        ("One for all and all for one", "True", "c0"),
        [("One", "A", 0), ("all", "B", 2), ("all", "B'", 4), ("one", "A'", 6)],
    )
    assert doc.user_data == {
        "dataset": "chiasmus-en",
        "corpus": "dubremetz-nivre",
        "doc_id": "annotated0t16M_i_0t16J:0",
        "candidate": 0,
        "category": "True",
        "lemmas": ["one", "all"],
        "sentence_ids": ["7", "7", "7", "7"],
        "offset_base": 100,
        "offset_base_recovered": False,
        "merged_tokens": 0,
        "split": "train",
    }


def test_dubremetz_hyphenated_words_are_merged(dubremetz):
    doc = dubremetz.splits["train"][1]
    assert [t.text for t in doc] == [
        "Non-voters",
        "blame",
        "voters",
        "and",
        "voters",
        "blame",
        "non-voters",
        ".",
    ]
    assert _candidate(doc)[1] == [
        ("Non-voters", "A", 0),
        ("voters", "B", 2),
        ("voters", "B'", 4),
        ("non-voters", "A'", 6),
    ]
    assert doc.user_data["merged_tokens"] == 2


def test_dubremetz_recovered_offset_base(dubremetz):
    doc = dubremetz.splits["train"][2]
    assert doc.user_data["offset_base_recovered"] is True
    assert doc.user_data["offset_base"] == 2000
    assert _candidate(doc) == (
        ("work to live and not live to work", "Borderline", "c0"),
        [("work", "A", 2), ("live", "B", 4), ("live", "B'", 7), ("work", "A'", 9)],
    )


def test_dubremetz_newline_marks(dubremetz):
    doc = dubremetz.splits["train"][3]
    assert doc.text == "Ask not what the Union can do for you.\nAsk what you can do for the Union."
    assert _candidate(doc)[1] == [
        ("Union", "A", 4),
        ("you", "B", 8),
        ("you", "B'", 13),
        ("Union", "A'", 18),
    ]
    assert doc.user_data["sentence_ids"] == ["9", "9", "10", "10"]


def test_dubremetz_docbin_round_trip(dubremetz, tmp_path):
    paths = write_conversion(dubremetz, tmp_path)
    skipped = json.loads((tmp_path / "skipped.json").read_text("utf8"))
    assert skipped["summary"] == {UNALIGNED: 1}
    for split, docs in dubremetz.splits.items():
        loaded = list(DocBin().from_disk(paths[split]).get_docs(Vocab()))
        for old, new in zip(docs, loaded, strict=True):
            assert [t.text for t in new] == [t.text for t in old]
            assert _candidate(new) == _candidate(old)
            assert _lists(new.user_data) == old.user_data


def _dubremetz_copy(fixtures_dir, tmp_path) -> Path:
    return Path(shutil.copytree(fixtures_dir / "chiasmus-en-dubremetz", tmp_path / "dn"))


def test_dubremetz_extra_files(fixtures_dir, tmp_path):
    root = _dubremetz_copy(fixtures_dir, tmp_path)
    shutil.copy(root / "annotated0t16M_i_0t16J.xml", root / "annotated0t16_i_0t16J.xml")
    shutil.copy(root / "annotated16t24M_i_16t24J.xml", root / "annotated0t16J.xml")
    text = (root / "annotated0t16J.xml").read_text("utf8")
    (root / "annotated0t16J.xml").write_text(text.replace("synthetic_test", "J"), "utf8")
    conversion = convert_chiasmus_en(root)
    assert list(conversion.splits) == ["train", "test", "train_annotator_j"]
    assert len(conversion.splits["train_annotator_j"]) == 2
    assert [(Path(s.path).name, s.reason) for s in conversion.skipped] == [
        ("annotated0t16M_i_0t16J.xml", UNALIGNED),
        ("annotated0t16_i_0t16J.xml", DUPLICATE_FILE),
    ]
    # one file on its own: split by its known name
    single = convert_chiasmus_en(root / "annotated16t24M_i_16t24J.xml")
    assert list(single.splits) == ["test"]


def test_dubremetz_unrecoverable_offset_base(fixtures_dir, tmp_path):
    root = _dubremetz_copy(fixtures_dir, tmp_path)
    path = root / "annotated0t16M_i_0t16J.xml"
    text = path.read_text("utf8")
    path.write_text(text.replace("<extract>work to live", "<extract>toil to live"), "utf8")
    conversion = convert_chiasmus_en(root)
    assert [(s.where, s.reason) for s in conversion.skipped] == [
        (24, NO_OFFSET_BASE),
        (44, UNALIGNED),
    ]
    assert len(conversion.splits["train"]) == 3


@pytest.mark.parametrize(
    "old,new,line,message",
    [
        ('begB="108"', 'begB="10x"', 8, "<wB> has begB='10x': expected an integer"),
        ('<wB begB="108" endB="111" ', '<wB begB="108" ', 8, "<wB> lacks 'endB'"),
        ("<extract>One for all", "<extract><b>One</extract>", 9, "malformed XML: mismatched tag"),
        ('<category name="True">', "<category>", 5, "<category> lacks 'name'"),
        (
            '<sent idA="7" idB="7" idC="7" idD="7" ibeg="100" iend="145">'
            "One for all and all for one, said the member.</sent>",
            "",
            6,
            "<chi> lacks <sent>",
        ),
    ],
)
def test_dubremetz_malformed(fixtures_dir, tmp_path, old, new, line, message):
    root = _dubremetz_copy(fixtures_dir, tmp_path)
    path = root / "annotated0t16M_i_0t16J.xml"
    text = path.read_text("utf8")
    assert old in text
    path.write_text(text.replace(old, new, 1), "utf8")
    with pytest.raises(CorpusFormatError) as info:
        convert_chiasmus_en(root)
    assert info.value.path == str(path)
    assert info.value.where == line
    assert message in str(info.value)


# --- English: Meyer / Berthomet ----------------------------------------------------


def test_meyer_splits_and_user_data(meyer):
    assert {k: len(v) for k, v in meyer.splits.items()} == {
        "non-chiasmi": 1,
        "salient-chiasmi": 2,
        "tiny-chiasmi": 2,
    }
    doc = meyer.splits["salient-chiasmi"][0]
    assert [t.text for t in doc] == ["One", "for", "all", ",", "and", "all", "for", "one", "."]
    assert doc.user_data == {
        "dataset": "chiasmus-en",
        "corpus": "meyer-berthomet",
        "doc_id": "salient-chiasmi:0",
        "record": 0,
        "category": "Antimetabole",
        "source": "Invented for the tests",
        "originalauthor": "Anonymous",
        "split": "salient-chiasmi",
    }
    assert SPANS_KEY not in doc.spans
    assert [d.user_data["category"] for d in meyer.splits["tiny-chiasmi"]] == [
        "Antimetabole",
        "NotAChiasmus",
    ]
    assert meyer.skipped == []


def test_meyer_union_files_are_skipped(fixtures_dir, tmp_path):
    root = Path(shutil.copytree(fixtures_dir / "chiasmus-en-meyer", tmp_path / "m"))
    shutil.copy(root / "non-chiasmi.json", root / "all-data.json")
    conversion = convert_chiasmus_en(root)
    assert [(Path(s.path).name, s.reason) for s in conversion.skipped] == [
        ("all-data.json", UNION_FILE)
    ]
    assert "all-data" not in conversion.splits
    single = convert("chiasmus-en", root / "non-chiasmi.json")
    assert list(single.splits) == ["non-chiasmi"]


@pytest.mark.parametrize(
    "record,message",
    [
        ({"text": "Work to live."}, "missing field 'category'"),
        ({"text": 3, "category": "NotAChiasmus"}, "non-string field 'text'"),
        (["Work to live."], "expected an object"),
    ],
)
def test_meyer_malformed_record(tmp_path, record, message):
    path = _write_json(tmp_path / "x.json", [{"text": "a", "category": "b"}, record])
    with pytest.raises(CorpusFormatError) as info:
        convert_chiasmus_en(tmp_path)
    assert info.value.path == str(path)
    assert info.value.where == "record 1"
    assert message in str(info.value)


def test_chiasmus_en_nothing_to_read(tmp_path):
    with pytest.raises(CorpusFormatError, match="no chiasmus files"):
        convert_chiasmus_en(tmp_path)


# --- the full datasets -------------------------------------------------------------


@pytest.mark.data
def test_chiasmus_de_published_counts(data_dir):
    conversion = convert("chiasmus-de", data_dir("german-chiasmus"))
    docs = conversion.splits["all"]
    assert len(docs) == 450
    codes = Counter(d.user_data["annotation"] for d in docs)
    assert codes == {
        "x": 242,
        "fp": 76,
        "a": 39,
        "c": 31,
        "ap": 23,
        "fsp": 22,
        "fc": 7,
        "fa": 3,
        "ffp": 2,
        "fap": 2,
        "": 2,
        "a?": 1,
    }
    labels = Counter(d.spans[SPANS_KEY][0].label_ for d in docs)
    assert labels["empty"] == 2 and "" not in labels
    # the candidates pair equal parts of speech: pos[A] == pos[A'], pos[B] == pos[B']
    mismatches = 0
    for doc in docs:
        a, b, b2, a2 = (s.start for s in doc.spans[SUPPORT_KEY])
        mismatches += doc[a].pos_ != doc[a2].pos_ or doc[b].pos_ != doc[b2].pos_
    assert mismatches == 0
    assert sum(code in ("a", "fa", "c", "fc") for code in codes.elements()) == 80


@pytest.mark.data
def test_chiasmus_en_dubremetz_counts(data_dir):
    conversion = convert("chiasmus-en", data_dir("chiasmus-dubremetz-nivre"))
    counts = {
        split: dict(Counter(d.user_data["category"] for d in docs))
        for split, docs in conversion.splits.items()
    }
    assert counts == {
        "train": {
            "True": 31,
            "False": 149,
            "Borderline": 22,
            "Duplicate": 43,
            "DuplicateOfBorderline": 49,
            "Other": 2,
        },
        "test": {
            "True": 13,
            "False": 486,
            "Borderline": 8,
            "Duplicate": 14,
            "DuplicateOfBorderline": 4,
            "Other": 8,
        },
        "train_annotator_m": {
            "True": 46,
            "False": 2801,
            "Borderline": 40,
            "Duplicate": 73,
            "DuplicateOfBorderline": 66,
            "Other": 35,
        },
        "train_annotator_j": {
            "True": 37,
            "False": 135,
            "Borderline": 22,
            "Duplicate": 65,
            "DuplicateOfBorderline": 37,
        },
    }
    # the published train (296) and test (533) sets convert completely
    skipped = Counter((Path(s.path).name, s.reason) for s in conversion.skipped)
    assert skipped == {
        ("annotated0t16M.xml", NO_OFFSET_BASE): 3,
        ("annotated0t16M.xml", UNALIGNED): 1,
    }
    recovered = Counter(
        d.user_data["split"] for d in conversion.docs() if d.user_data["offset_base_recovered"]
    )
    assert recovered == {"train": 61, "train_annotator_m": 658, "train_annotator_j": 69}


@pytest.mark.data
def test_chiasmus_en_meyer_counts(data_dir):
    conversion = convert("chiasmus-en", data_dir("chiasmus-english-meyer-berthomet"))
    counts = {
        split: dict(Counter(d.user_data["category"] for d in docs))
        for split, docs in conversion.splits.items()
    }
    assert counts == {
        "dubremetz-antimetaboles": {"Antimetabole": 21},
        "non-chiasmi": {"NotAChiasmus": 1387},
        "nonsalient-antimetaboles": {"NonSalientAntimetabole": 2720},
        "salient-chiasmi": {"Antimetabole": 657, "SemanticChiasmus": 98, "PhoneticChiasmus": 9},
        "dracula-chiasmi": {"NotAChiasmus": 1385, "Antimetabole": 10, "SemanticChiasmus": 2},
        "frankenstein_chiasmi": {"NotAChiasmus": 572, "Antimetabole": 4},
    }
    assert conversion.skipped == []
