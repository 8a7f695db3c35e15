import shutil
from collections import Counter
from pathlib import Path

import pytest
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_rhetoric.corpora import CorpusFormatError, convert, write_conversion
from spacy_rhetoric.corpora.parallelisms import get_parallelisms
from spacy_rhetoric.corpora.pse import DANGLING_HEAD, convert_pse, read_pse_essay


@pytest.fixture(scope="module")
def pse_fixture(fixtures_dir) -> Path:
    return fixtures_dir / "pse"


@pytest.fixture(scope="module")
def converted(pse_fixture):
    return convert_pse(pse_fixture)


@pytest.fixture
def pse_copy(pse_fixture, tmp_path) -> Path:
    """A writable copy of the fixture, to break."""
    return Path(shutil.copytree(pse_fixture, tmp_path / "pse"))


def _docs(conversion):
    return {(d.user_data["doc_id"], d.user_data["section_id"]): d for d in conversion.docs()}


def _summary(par):
    return (par.offsets, par.label, par.stratum, [b.text for b in par.branches])


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf8")


def _line_of(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf8").split("\n")
    return next(n for n, line in enumerate(lines, 1) if needle in line)


def _word(i, cont, parent, relate="ATT", pos="n", ne="O", extra=""):
    return (
        f'<word id="{i}" cont="{cont}" pos="{pos}" ne="{ne}" parent="{parent}" '
        f'relate="{relate}" {extra}/>'
    )


def _essay(tmp_path: Path, paragraphs, doc_attrs='score="50" score1="" score3="NULL"') -> Path:
    """Write a small essay: paragraphs is a list of paragraphs, each a list of
    sentences, each a list of <word> lines; one element per line."""
    lines = ["<?xml version='1.0' encoding='utf-8'?>", f"<doc {doc_attrs}>"]
    for p, sentences in enumerate(paragraphs):
        lines.append(f'<para id="{p}">')
        for s, words in enumerate(sentences):
            lines.append(f'<sent id="{s}">')
            lines.extend(words)
            lines.append("</sent>")
        lines.append("</para>")
    lines.append("</doc>")
    path = tmp_path / "7.xml"
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


def _branch(pid, bid):
    return f'parallelism_id_1="{pid}" branch_id_1="{bid}" '


# --- the fixture ------------------------------------------------------------------


def test_pse_splits_and_user_data(converted):
    assert {split: len(docs) for split, docs in converted.splits.items()} == {
        "train": 6,
        "dev": 0,
        "opt": 0,
        "test": 17,
    }
    assert converted.skipped == []
    first = converted.splits["train"][0]
    assert first.user_data == {
        "dataset": "pse",
        "lang": "zh",
        "doc_id": "180",
        "section_id": "0",
        "split": "train",
        "essay": {
            "score": 29.0,
            "score1": 28.0,
            "score2": 30.0,
            "score3": None,
            "essayType": None,
            "type": None,
            "scrawl": {"add": 0, "remove": 0, "modify": 0, "error": 0},
        },
    }
    assert [d.user_data["section_id"] for d in converted.splits["test"]] == [
        str(i) for i in range(17)
    ]
    assert {d.user_data["doc_id"] for d in converted.splits["test"]} == {"370"}


def test_pse_words_tags_and_sentences(converted):
    doc = _docs(converted)[("180", "0")]
    assert [t.text for t in doc] == ["良心", "是", "要", "还", "的", "。"]
    assert doc.text == "良心是要还的。"
    assert all(t.whitespace_ == "" for t in doc)
    assert [t.tag_ for t in doc] == ["n", "v", "v", "v", "u", "wp"]
    doc = _docs(converted)[("370", "15")]
    assert [(s.start, s.end) for s in doc.sents] == [(0, 25), (25, 41)]
    assert [s.text for s in doc.sents] == [
        "我认为海明威干净而无抒情性的记叙是美的，而卡夫卡干涩郁抑的心理描写是不美的。",
        "马尔科斯的魔幻是美好的，而昆德拉的幽默是不美的。",
    ]


def test_pse_dependencies(converted):
    doc = _docs(converted)[("180", "0")]
    # parent ids: 1, -1, 3, 1, 3, 1
    assert [t.head.i for t in doc] == [1, 1, 3, 1, 3, 1]
    assert [t.dep_ for t in doc] == ["SBV", "HED", "ADV", "VOB", "RAD", "WP"]
    # heads are sentence-local: the second sentence's root heads itself
    doc = _docs(converted)[("370", "15")]
    roots = [t.i for t in doc if t.head.i == t.i]
    assert len(roots) == 2 and 0 <= roots[0] < 25 <= roots[1] < 41
    assert all(t.dep_ == "HED" for t in doc if t.head.i == t.i)
    assert all((t.i < 25) == (t.head.i < 25) for t in doc)


def test_pse_entities(converted):
    doc = _docs(converted)[("180", "2")]
    assert [(e.text, e.label_, e.start, e.end) for e in doc.ents] == [
        ("曹操", "Nh", 0, 1),
        ("曹操", "Nh", 26, 27),
        ("曹操", "Nh", 31, 32),
        ("刘备", "Nh", 46, 47),
        ("桃园三结义", "Ni", 52, 54),
    ]
    # B-Ni E-Ni -> one two-token entity
    assert [doc[52].ent_iob_, doc[53].ent_iob_] == ["B", "I"]
    assert doc[51].ent_iob_ == "O"


def test_pse_parallelisms(converted):
    doc = _docs(converted)[("180", "5")]
    assert [_summary(p) for p in get_parallelisms(doc)] == [
        (((3, 6), (7, 10), (11, 14)), "parallelism", 1, ["时代在发展", "社会在繁华", "科技在进步"])
    ]
    assert [s.id_ for s in doc.spans["parallelism"]] == ["1", "1", "1"]
    # a branch that crosses a sentence boundary inside its paragraph
    doc = _docs(converted)[("370", "4")]
    assert [(s.start, s.end) for s in doc.sents] == [(0, 22), (22, 59)]
    (par,) = get_parallelisms(doc)
    assert par.offsets == ((13, 33), (34, 44), (45, 58))
    assert par.branches[0].text == "感知“海纳百川，有容乃大；壁立千仞，无欲则刚”的震撼"
    # paragraphs without parallelisms still carry the (empty) span group
    assert len(_docs(converted)[("180", "0")].spans["parallelism"]) == 0


def test_pse_docbin_round_trip(converted, tmp_path):
    paths = write_conversion(converted, tmp_path)
    assert sorted(paths) == ["dev", "opt", "test", "train"]
    assert not (tmp_path / "skipped.json").exists()
    vocab = Vocab()
    for split, docs in converted.splits.items():
        loaded = list(DocBin().from_disk(paths[split]).get_docs(vocab))
        assert len(loaded) == len(docs)
        for old, new in zip(docs, loaded):
            assert new.text == old.text
            assert [t.tag_ for t in new] == [t.tag_ for t in old]
            assert [(t.head.i, t.dep_) for t in new] == [(t.head.i, t.dep_) for t in old]
            assert [s.start for s in new.sents] == [s.start for s in old.sents]
            assert [(e.start, e.end, e.label_) for e in new.ents] == [
                (e.start, e.end, e.label_) for e in old.ents
            ]
            assert [_summary(p) for p in get_parallelisms(new)] == [
                _summary(p) for p in get_parallelisms(old)
            ]
            assert new.user_data == old.user_data


def test_pse_layouts(pse_fixture):
    # one essay file: the split "all"
    single = convert_pse(pse_fixture / "augmented" / "full" / "180.xml")
    assert list(single.splits) == ["all"]
    assert len(single.splits["all"]) == 6
    # the XML directory finds ../../splits/splits.json
    by_dir = convert("pse", pse_fixture / "augmented" / "full", vocab=Vocab())
    assert {k: len(v) for k, v in by_dir.splits.items()} == {
        "train": 6,
        "dev": 0,
        "opt": 0,
        "test": 17,
    }


def test_pse_without_splits_file(pse_copy):
    (pse_copy / "splits" / "splits.json").unlink()
    conversion = convert_pse(pse_copy)
    assert list(conversion.splits) == ["all"]
    assert len(conversion.splits["all"]) == 23


# --- synthetic essays -------------------------------------------------------------


def test_pse_adjacent_branches_stay_apart(tmp_path):
    words = [
        _word(0, "我", 1, "SBV", extra=_branch(0, 1)),
        _word(1, "来", -1, "HED", pos="v", extra=_branch(0, 1)),
        _word(2, "我", 3, "SBV", extra=_branch(0, 2)),
        _word(3, "看", 1, "COO", pos="v", extra=_branch(0, 2)),
        _word(4, "我", 5, "SBV", extra=_branch(0, 3)),
        _word(5, "胜", 1, "COO", pos="v", extra=_branch(0, 3)),
    ]
    (doc,) = convert_pse(_essay(tmp_path, [[words]])).splits["all"]
    assert [_summary(p) for p in get_parallelisms(doc)] == [
        (((0, 2), (2, 4), (4, 6)), "parallelism", 1, ["我来", "我看", "我胜"])
    ]


def test_pse_bies_entities_and_scores(tmp_path):
    words = [
        _word(0, "北", 2, ne="B-Ns"),
        _word(1, "京", 2, ne="I-Ns"),
        _word(2, "城", -1, "HED", ne="E-Ns"),
        _word(3, "李", 2, ne="S-Nh"),
    ]
    (doc,) = convert_pse(_essay(tmp_path, [[words]])).splits["all"]
    assert [(e.text, e.label_) for e in doc.ents] == [("北京城", "Ns"), ("李", "Nh")]
    assert doc.user_data["essay"] == {"score": 50.0, "score1": None, "score2": None, "score3": None}
    assert doc.user_data["section_id"] == "0"


def test_pse_dangling_head_is_repaired_and_reported(tmp_path):
    words = [
        _word(0, "我", 1, "SBV"),
        _word(1, "来", -1, "HED", pos="v"),
        _word(3, "了", 2, "RAD", pos="u"),  # word 2 is gone from the sentence
    ]
    path = _essay(tmp_path, [[words]])
    conversion = convert_pse(path)
    (doc,) = conversion.splits["all"]
    assert [t.head.i for t in doc] == [1, 1, 1]
    assert doc[2].dep_ == "RAD"
    assert [(s.path, s.where, s.reason) for s in conversion.skipped] == [
        (str(path), _line_of(path, 'cont="了"'), DANGLING_HEAD)
    ]


def test_pse_read_pse_essay_several_sentences(tmp_path):
    sentences = [
        [_word(0, "天", 1, "SBV"), _word(1, "蓝", -1, "HED", pos="a", extra=_branch(0, 1))],
        [_word(0, "水", 1, "SBV", extra=_branch(0, 1)), _word(1, "清", -1, "HED", pos="a")],
        [_word(0, "山", 1, "SBV", extra=_branch(0, 2)), _word(1, "高", -1, "HED", pos="a")],
    ]
    (doc,) = read_pse_essay(_essay(tmp_path, [sentences]), Vocab())
    assert [s.text for s in doc.sents] == ["天蓝", "水清", "山高"]
    assert [t.head.i for t in doc] == [1, 1, 3, 3, 5, 5]
    # branch 1 runs over a sentence boundary
    assert [_summary(p) for p in get_parallelisms(doc)] == [
        (((1, 3), (4, 5)), "parallelism", 1, ["蓝水", "山"])
    ]
    assert "split" not in doc.user_data


@pytest.mark.parametrize(
    "words,needle,message",
    [
        ([_word(0, "我", "x")], 'cont="我"', "parent='x' is not an integer"),
        ([_word(0, "我", -1, extra='colour="red" ')], 'cont="我"', "unknown attribute 'colour'"),
        (
            [_word(0, "我", -1, extra='parallelism_id_1="0" ')],
            'cont="我"',
            "parallelism_id_1 without branch_id_1",
        ),
        (
            [_word(0, "我", -1, extra=_branch("a", 1))],
            'cont="我"',
            "parallelism_id_1='a' is not an integer",
        ),
        ([_word(0, "我", -1, ne="X-Nh")], 'cont="我"', "ne='X-Nh'"),
        ([_word(0, "我", -1, ne="I-Nh")], 'cont="我"', "does not continue an entity"),
        (
            [_word(0, "我", -1, ne="B-Nh"), _word(1, "们", 0)],
            'cont="们"',
            "entity Nh is not closed",
        ),
        ([_word(0, "", -1)], 'cont=""', "empty 'cont'"),
        ([_word(0, "我", -1), _word(1, "们", -1)], 'cont="我"', "2 root words"),
        ([_word(0, "我", 1), _word(1, "们", 0)], 'cont="我"', "0 root words"),
        ([_word(0, "我", -1), _word(0, "们", 0)], 'cont="们"', "duplicate <word id='0'>"),
        (
            [_word(0, "我", 1), _word(1, "们", 0), _word(2, "好", -1, "HED")],
            'cont="我"',
            "dependency cycle",
        ),
        (
            [
                _word(0, "我", -1, extra=_branch(0, 1)),
                _word(1, "们", 0, extra=_branch(0, 2)),
                _word(2, "好", 0, extra=_branch(0, 1)),
            ],
            'cont="好"',
            "branch 1 of parallelism 0 (stratum 1) is not contiguous",
        ),
        (
            [_word(0, "我", -1, extra=_branch(0, 1)), _word(1, "们", 0)],
            'cont="我"',
            "parallelism 0 (stratum 1) has a single branch",
        ),
    ],
)
def test_pse_malformed_words(tmp_path, words, needle, message):
    path = _essay(tmp_path, [[words]])
    with pytest.raises(CorpusFormatError) as info:
        convert_pse(path)
    assert info.value.path == str(path)
    assert info.value.where == _line_of(path, needle)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{path}:{info.value.where}: ")


def test_pse_parallelism_across_paragraphs(tmp_path):
    paragraphs = [
        [[_word(0, "我", -1, extra=_branch(0, 1)), _word(1, "们", 0, extra=_branch(0, 2))]],
        [[_word(0, "好", -1, extra=_branch(0, 3))]],
    ]
    path = _essay(tmp_path, paragraphs)
    with pytest.raises(CorpusFormatError, match="continues from paragraph 0") as info:
        convert_pse(path)
    assert info.value.where == _line_of(path, 'cont="好"')


def test_pse_bad_score(tmp_path):
    path = _essay(tmp_path, [[[_word(0, "我", -1)]]], doc_attrs='score="good"')
    with pytest.raises(CorpusFormatError, match="score='good'") as info:
        convert_pse(path)
    assert info.value.where == 2


def test_pse_malformed_fixture_file(pse_copy):
    path = pse_copy / "augmented" / "full" / "180.xml"
    _edit(path, 'cont="要" pos="v" ne="O" parent="3"', 'cont="要" pos="v" ne="O" parent="three"')
    with pytest.raises(CorpusFormatError) as info:
        convert_pse(pse_copy)
    assert info.value.path == str(path)
    assert info.value.where == 8
    assert "parent='three'" in str(info.value)


def test_pse_broken_xml(pse_copy):
    path = pse_copy / "augmented" / "full" / "370.xml"
    _edit(path, "</sent>", "</para>")
    with pytest.raises(CorpusFormatError, match="malformed XML: mismatched tag") as info:
        convert_pse(pse_copy)
    assert info.value.path == str(path)
    assert info.value.where == _line_of(path, "</para>")


def test_pse_unexpected_element(tmp_path):
    path = _essay(tmp_path, [[[_word(0, "我", -1)]]])
    _edit(path, '<sent id="0">', '<sent id="0">\n<span/>')
    with pytest.raises(CorpusFormatError, match=r"unexpected element <span> inside <sent>") as info:
        convert_pse(path)
    assert info.value.where == _line_of(path, "<span/>")


def test_pse_splits_file_errors(pse_copy):
    splits = pse_copy / "splits" / "splits.json"
    splits.write_text('{"training": ["180.xml"], "test": []}', encoding="utf8")
    with pytest.raises(CorpusFormatError, match="370.xml is in no split"):
        convert_pse(pse_copy)
    splits.write_text('{"training": ["180.xml", "9.xml"], "test": ["370.xml"]}', encoding="utf8")
    with pytest.raises(CorpusFormatError, match=r"9.xml \(train\) is not among the essay files"):
        convert_pse(pse_copy)
    splits.write_text('{"train": ["180.xml"], "test": ["370.xml"]}', encoding="utf8")
    with pytest.raises(CorpusFormatError, match="unknown split 'train'"):
        convert_pse(pse_copy)
    splits.write_text('{"training": ["180.xml"], "test": ["180.xml", "370.xml"]}', encoding="utf8")
    with pytest.raises(CorpusFormatError, match="180.xml is in both 'train' and 'test'"):
        convert_pse(pse_copy)


# --- the full dataset -------------------------------------------------------------


@pytest.mark.data
def test_pse_published_counts(data_dir):
    conversion = convert("pse", data_dir("pse-i"))
    docs = list(conversion.docs())
    essays = {split: {d.user_data["doc_id"] for d in ds} for split, ds in conversion.splits.items()}
    assert {split: len(ids) for split, ids in essays.items()} == {
        "train": 286,
        "dev": 40,
        "opt": 41,
        "test": 42,
    }
    assert len(set().union(*essays.values())) == 409
    assert len(docs) == 3855
    assert sum(len(d) for d in docs) == 241203
    assert sum(1 for d in docs for _ in d.sents) == 11580
    pars = [p for d in docs for p in get_parallelisms(d)]
    assert len(pars) == 786
    assert sum(len(p) for p in pars) == 2153
    assert sum(b.end - b.start for p in pars for b in p.branches) == 25529
    assert Counter(p.stratum for p in pars) == {1: 786}
    assert Counter(e.label_ for d in docs for e in d.ents) == {"Nh": 2521, "Ns": 863, "Ni": 70}
    # three words of 74.xml point at word ids the sentence no longer has
    assert conversion.skip_summary() == {DANGLING_HEAD: 3}
    assert {Path(s.path).name for s in conversion.skipped} == {"74.xml"}
