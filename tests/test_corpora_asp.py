import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import srsly
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_rhetoric.corpora import CorpusFormatError, convert, write_conversion
from spacy_rhetoric.corpora.asp import (
    SKIP_ARM_TYPE,
    SKIP_BRAT_ONLY,
    SKIP_CROSS_SECTION,
    SKIP_DISCONTINUOUS_ARM,
    SKIP_GROUPING,
    SKIP_MIXED,
    SKIP_NOT_IN_SPLIT,
    SKIP_STRATUM,
    SKIP_UNALIGNED_WORD,
    SKIP_UNCOVERED_TEXT,
    SKIP_UNLINKED,
    SKIP_UNTYPED,
    SKIP_XML_ONLY,
    convert_asp,
)
from spacy_rhetoric.corpora.asp_align import align_words
from spacy_rhetoric.corpora.parallelisms import get_parallelisms
from spacy_rhetoric.corpora.util import doc_language

XML_147 = "xml/tokenized/147_annotated.xml"
XML_254 = "xml/tokenized/254_annotated.xml"
ANN_147 = "brat/147.ann"
ANN_254 = "brat/254.ann"


@pytest.fixture(scope="module")
def asp_fixture(fixtures_dir) -> Path:
    return fixtures_dir / "asp"


@pytest.fixture(scope="module")
def converted(asp_fixture):
    return convert_asp(asp_fixture)


@pytest.fixture
def asp_copy(asp_fixture, tmp_path) -> Path:
    """A writable copy of the fixture, to break."""
    return Path(shutil.copytree(asp_fixture, tmp_path / "asp"))


def _docs(conversion):
    return {(d.user_data["doc_id"], d.user_data["section_id"]): d for d in conversion.docs()}


def _summary(par):
    return (par.offsets, par.label, par.stratum, [b.text for b in par.branches])


def _edit(path: Path, old: str, new: str, count: int = 1) -> None:
    """Replace the first ``count`` occurrences of ``old`` (-1: all of them)."""
    text = path.read_text(encoding="utf8")
    assert old in text, old
    path.write_text(text.replace(old, new, count), encoding="utf8")


def _line_of(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf8").split("\n")
    return next(n for n, line in enumerate(lines, 1) if needle in line)


# --- the fixture ------------------------------------------------------------------


def test_asp_splits_and_user_data(converted):
    assert {split: len(docs) for split, docs in converted.splits.items()} == {
        "train": 1,
        "dev": 0,
        "opt": 0,
        "test": 2,
    }
    assert [d.user_data for d in converted.splits["test"]] == [
        {"dataset": "asp", "lang": "la", "doc_id": "254", "section_id": "1", "split": "test"},
        {"dataset": "asp", "lang": "la", "doc_id": "254", "section_id": "4", "split": "test"},
    ]
    assert converted.splits["train"][0].user_data == {
        "dataset": "asp",
        "lang": "la",
        "doc_id": "147",
        "section_id": "1",
        "split": "train",
    }
    assert converted.skipped == []


def test_asp_words_are_the_xml_words(converted, asp_fixture):
    docs = _docs(converted)
    for (sermon, section), doc in docs.items():
        xml = (asp_fixture / f"xml/tokenized/{sermon}_annotated.xml").read_text(encoding="utf8")
        block = xml.split(f'<section id="{section}">')[1].split("</section>")[0]
        assert [t.text for t in doc] == re.findall(r'cont="([^"]*)"', block)
    assert [len(d) for d in docs.values()] == [138, 119, 294]
    doc = docs[("147", "1")]
    assert [t.text for t in doc[:6]] == ["apostolum", "petrum", "primum", "omnium"] + [
        "apostolorum",
        "meministis",
    ]
    assert [t.text for t in doc[51:55]] == [",", "cum", "te", "ero"]
    assert [t.text for t in doc[76:80]] == ["?", "ame", "-ne", "dico"]


def test_asp_spaces_reproduce_the_brat_text(converted, asp_fixture):
    docs = _docs(converted)
    text = (asp_fixture / "brat/147.txt").read_text(encoding="utf8")
    expected = " ".join(text.split("\n", 1)[1].split()).lower()
    # the two tokenizer rewrites of this section: words of one text word are glued
    expected = expected.replace("tecum", "cumte").replace("amen dico", "ame-ne dico")
    doc = docs[("147", "1")]
    assert doc.text == expected
    assert doc.text.startswith("apostolum petrum primum omnium apostolorum meministis in")
    assert [t.whitespace_ for t in doc[10:14]] == ["", " ", " ", " "]  # "turbatum. a se"
    text = (asp_fixture / "brat/254.txt").read_text(encoding="utf8")
    sections = re.split(r"<254 \d+>\n", text)[1:]
    assert docs[("254", "1")].text == " ".join(sections[0].split()).lower()
    assert docs[("254", "4")].text == " ".join(sections[1].split()).lower()
    assert docs[("254", "4")].text.endswith("hoc doleamus, hinc tristes simus.")


def test_asp_parallelisms_147(converted):
    doc = _docs(converted)[("147", "1")]
    pars = get_parallelisms(doc)
    assert [_summary(p) for p in pars] == [
        (((12, 15), (17, 20)), "synchystic", 1, ["a se turbatum", "a christo innouatum"]),
        (
            ((23, 26), (28, 33)),
            "synchystic",
            1,
            ["prius audax praesumptor", "postea factus est timidus negator"],
        ),
        (
            ((34, 39), (42, 47)),
            "synchystic",
            1,
            ["promiserat se pro domino moriturum", "pro illo esset dominus moriturus"],
        ),
        (((97, 100), (101, 104)), "synchystic", 1, ["deus erat christus", "homo autem petrus"]),
        (((132, 134), (135, 137)), "synchystic", 1, ["uerax christus", "mendax petrus"]),
    ]
    # brat's arm "postea factus est timidus negator." includes the full stop; the XML
    # branch (and so the Doc) does not
    assert doc[33].text == "."


def test_asp_stratum_two(converted):
    doc = _docs(converted)[("254", "1")]
    pars = get_parallelisms(doc)
    assert [p.stratum for p in pars] == [1, 1, 2, 1, 1]
    outer, inner = pars[1], pars[2]
    assert inner.offsets == ((90, 93), (95, 98))
    assert [b.text for b in inner.branches] == ["de meritis nostris", "de gratia saluatoris"]
    assert inner.label == "synchystic"
    # the stratum-2 parallelism lies inside the second branch of a stratum-1 one
    assert outer.offsets == ((68, 80), (81, 98))
    assert outer.branches[1].start <= 90 and 98 <= outer.branches[1].end
    assert len(pars[0]) == 3


def test_asp_chiasm(converted):
    doc = _docs(converted)[("254", "4")]
    pars = get_parallelisms(doc)
    assert len(pars) == 10
    assert Counter(p.label for p in pars) == {"synchystic": 9, "chiastic": 1}
    chiasm = next(p for p in pars if p.label == "chiastic")
    assert _summary(chiasm) == (
        ((63, 65), (68, 70)),
        "chiastic",
        1,
        ["fructus nullus", "magna pernicies"],
    )
    assert [len(p) for p in pars] == [2, 2, 2, 2, 3, 2, 2, 2, 4, 2]


def test_asp_docbin_round_trip(converted, tmp_path):
    paths = write_conversion(converted, tmp_path)
    assert sorted(paths) == ["dev", "opt", "test", "train"]
    assert not (tmp_path / "skipped.json").exists()
    docs = list(DocBin().from_disk(paths["test"]).get_docs(Vocab()))
    originals = converted.splits["test"]
    assert len(docs) == 2
    for doc, original in zip(docs, originals, strict=True):
        assert doc.text == original.text
        assert [t.text for t in doc] == [t.text for t in original]
        assert doc.user_data == original.user_data
        assert [_summary(p) for p in get_parallelisms(doc)] == [
            _summary(p) for p in get_parallelisms(original)
        ]
    assert [p.stratum for p in get_parallelisms(docs[0])] == [1, 1, 2, 1, 1]


def test_asp_generic_entry_point_and_vocab(asp_fixture):
    vocab = Vocab()
    conversion = convert("asp", asp_fixture, vocab=vocab)
    assert all(doc.vocab is vocab for doc in conversion.docs())
    assert convert_asp(asp_fixture).splits["train"][0].vocab.lang == "la"


# --- the aligner ------------------------------------------------------------------


def test_align_words_rewrites():
    text = "<1 1>\ndicebat, tecum ero; amen. quod &lt; <...> maxime uirumque\n"
    start = text.index("\n") + 1
    words = ["dicebat", ",", "cum", "te", "ero", ";", "ame", "-ne", ".", "quod", "&lt;"]
    words += ["&", "lt", ";", "...", "&", "gt", ";", "maxime", "uirum", "-que"]
    alignment = align_words(words, text, start, len(text))
    assert alignment.unaligned == [] and alignment.uncovered == []
    assert alignment.offsets[2] == (text.index("cum"), text.index("cum") + 3)
    assert alignment.offsets[3] == (text.index("tecum"), text.index("tecum") + 2)
    spaced = "".join(w + (" " if s else "") for w, s in zip(words, alignment.spaces, strict=True))
    assert spaced == "dicebat, cumte ero; ame-ne. quod &lt; &lt;...&gt; maxime uirum-que"


def test_align_words_reports_what_does_not_align():
    text = "alpha beta gamma delta epsilon zeta"
    alignment = align_words(["alpha", "XXX", "beta", "gamma", "zeta"], text, 0, len(text))
    assert alignment.unaligned == [1]
    assert alignment.uncovered == [(text.index("delta"), text.index("zeta"))]
    assert alignment.offsets[4] == (text.index("zeta"), len(text))
    assert alignment.spaces == [True, True, True, True, False]


# --- disagreements and other reported skips ----------------------------------------


def test_asp_relation_removed(asp_copy):
    _edit(asp_copy / ANN_147, "R1\tParallel Arg1:T1 Arg2:T2\t\n", "")
    conversion = convert_asp(asp_copy)
    assert conversion.skip_summary() == {SKIP_UNLINKED: 2, SKIP_XML_ONLY: 2, SKIP_UNTYPED: 1}
    doc = _docs(conversion)[("147", "1")]
    first = get_parallelisms(doc)[0]
    assert (first.offsets, first.label) == (((12, 15), (17, 20)), "parallelism")
    assert len(get_parallelisms(doc)) == 5
    where = {(Path(s.path).name, s.where) for s in conversion.skipped}
    assert ("147.ann", 1) in where and ("147_annotated.xml", 16) in where


def test_asp_mixed_group_majority_rule(asp_copy):
    # 254 section 1: arms T1 - T2 - T3, linked by R1 and R2; make R2 a Chiasm
    _edit(asp_copy / ANN_254, "R2\tParallel Arg1:T2", "R2\tChiasm Arg1:T2")
    conversion = convert_asp(asp_copy)
    assert conversion.skip_summary() == {SKIP_MIXED: 1, SKIP_ARM_TYPE: 1}
    pars = get_parallelisms(_docs(conversion)[("254", "1")])
    assert [p.label for p in pars] == ["chiastic", "synchystic", "synchystic"] + [
        "synchystic",
        "synchystic",
    ]
    # with two Parallel links against one Chiasm the majority wins
    r2 = "R2\tChiasm Arg1:T2 Arg2:T3\t\n"
    _edit(asp_copy / ANN_254, r2, r2 + "R9\tParallel Arg1:T1 Arg2:T3\t\n")
    pars = get_parallelisms(_docs(convert_asp(asp_copy))[("254", "1")])
    assert pars[0].label == "synchystic"


def test_asp_grouping_disagreement(asp_copy):
    # one brat relation joins the first two parallelisms of 147 into one group
    r1 = "R1\tParallel Arg1:T1 Arg2:T2\t\n"
    _edit(asp_copy / ANN_147, r1, r1 + "R9\tParallel Arg1:T2 Arg2:T3\t\n")
    conversion = convert_asp(asp_copy)
    assert conversion.skip_summary() == {SKIP_GROUPING: 2}
    assert len(get_parallelisms(_docs(conversion)[("147", "1")])) == 5


def test_asp_branch_extent_disagreement(asp_copy):
    # the XML branch loses its last word: brat's arm "a christo innouatum" matches nothing
    xml = asp_copy / XML_147
    _edit(xml, 'cont="innouatum" parallelism_id_1="1" branch_id_1="2"', 'cont="innouatum"')
    conversion = convert_asp(asp_copy)
    assert conversion.skip_summary() == {SKIP_BRAT_ONLY: 1, SKIP_XML_ONLY: 1, SKIP_GROUPING: 1}
    first = get_parallelisms(_docs(conversion)[("147", "1")])[0]
    assert (first.offsets, first.label) == (((12, 15), (17, 19)), "synchystic")


def test_asp_stratum_disagreement(asp_copy):
    xml = asp_copy / XML_147
    _edit(xml, 'parallelism_id_1="5" branch_id_1', 'parallelism_id_2="5" branch_id_2', count=-1)
    conversion = convert_asp(asp_copy)
    assert conversion.skip_summary() == {SKIP_STRATUM: 1}
    last = get_parallelisms(_docs(conversion)[("147", "1")])[-1]
    assert (last.offsets, last.stratum) == (((132, 134), (135, 137)), 2)


def test_asp_discontinuous_arm(asp_copy):
    # fragments separated by whitespace only are one span, as brat splits at line ends
    _edit(asp_copy / ANN_147, "T1\tParallelArm 98 111\t", "T1\tParallelArm 98 99;100 111\t")
    assert convert_asp(asp_copy).skipped == []
    # a real gap is reported; the arm is read from its first to its last fragment
    _edit(asp_copy / ANN_147, "98 99;100 111\ta se turbatum", "98 99;103 111\ta turbatum")
    conversion = convert_asp(asp_copy)
    assert conversion.skip_summary() == {SKIP_DISCONTINUOUS_ARM: 1}
    first = get_parallelisms(_docs(conversion)[("147", "1")])[0]
    assert first.offsets == ((12, 15), (17, 20))


def test_asp_unaligned_word_and_file_in_no_split(asp_copy):
    _edit(asp_copy / XML_147, 'cont="petrum"', 'cont="paulum"')
    splits = srsly.read_json(asp_copy / "splits/splits.json")
    splits["test"] = []
    srsly.write_json(asp_copy / "splits/splits.json", splits)
    conversion = convert_asp(asp_copy)
    assert conversion.skip_summary() == {
        SKIP_NOT_IN_SPLIT: 1,
        SKIP_UNALIGNED_WORD: 1,
        SKIP_UNCOVERED_TEXT: 1,
    }
    doc = conversion.splits["train"][0]
    assert doc.text.startswith("apostolum paulum primum omnium")
    assert [(Path(s.path).name, s.where) for s in conversion.skipped] == [
        ("254_annotated.xml", None),
        ("147_annotated.xml", 5),
        ("147.txt", 2),
    ]


def _write_mini(root: Path, xml_sections: str, text: str, ann: str) -> Path:
    for sub in ("brat", "xml/tokenized", "splits"):
        (root / sub).mkdir(parents=True)
    xml = f'<?xml version="1.0" ?>\n<sermon id="9">\n{xml_sections}</sermon>\n'
    (root / "xml/tokenized/9_annotated.xml").write_text(xml, encoding="utf8")
    (root / "brat/9.txt").write_text(text, encoding="utf8")
    (root / "brat/9.ann").write_text(ann, encoding="utf8")
    splits = {"training": [], "validation": ["9_annotated.xml"], "optimization": [], "test": []}
    srsly.write_json(root / "splits/splits.json", splits)
    return root


def test_asp_parallelism_across_sections(tmp_path):
    def word(i, cont, tags=""):
        return f'    <word id="{i}" cont="{cont}"{tags}/>\n'

    tag = ' parallelism_id_1="1" branch_id_1="{}"'
    xml = '  <section id="1">\n' + word(1, "alpha", tag.format(1)) + word(2, "beta")
    xml += word(3, ".") + '  </section>\n  <section id="2">\n'
    xml += word(1, "gamma", tag.format(2)) + word(2, "delta") + "  </section>\n"
    text = "<9 1>\nAlpha beta.\n<9 2>\nGamma delta\n"
    ann = "T1\tParallelArm 6 11\tAlpha\nT2\tParallelArm 24 29\tGamma\n"
    ann += "R1\tParallel Arg1:T1 Arg2:T2\t\n"
    conversion = convert_asp(_write_mini(tmp_path, xml, text, ann))
    assert conversion.skip_summary() == {SKIP_CROSS_SECTION: 1}
    docs = conversion.splits["dev"]
    assert [d.text for d in docs] == ["alpha beta.", "gamma delta"]
    record = {
        "id": "9:1",
        "label": "synchystic",
        "stratum": 1,
        "branches": [
            {"section_id": "1", "start": 0, "end": 1},
            {"section_id": "2", "start": 0, "end": 1},
        ],
    }
    for doc in docs:
        assert get_parallelisms(doc) == []
        assert doc.user_data["cross_section_parallelisms"] == [record]


# --- malformed input -----------------------------------------------------------------


@pytest.mark.parametrize(
    "old,new,line,message",
    [
        ("T1\tParallelArm 98 111\t", "T1\tParallelArm 98\t", 1, "cannot parse"),
        ("R1\tParallel Arg1:T1 Arg2:T2", "R1\tParallel Arg1:T1", 3, "cannot parse brat relation"),
        ("R1\tParallel Arg1:T1 Arg2:T2", "R1\tParallel Arg1:T1 Arg2:T77", 3, "undefined arm T77"),
        ("R1\tParallel Arg1:T1", "R1\tParallelogram Arg1:T1", 3, "unknown relation type"),
        ("T2\tParallelArm 117 136\t", "T2\tParallelArm 118 136\t", 2, ".ann and .txt do not match"),
        ("T1\tParallelArm", "T1\tParallelBranch", 1, "unknown arm type"),
        ("T3\t", "T1\t", 4, "duplicate annotation id T1"),
    ],
)
def test_asp_malformed_brat(asp_copy, old, new, line, message):
    _edit(asp_copy / ANN_147, old, new)
    with pytest.raises(CorpusFormatError, match=re.escape(message)) as err:
        convert_asp(asp_copy)
    assert str(err.value).startswith(f"{asp_copy / ANN_147}:{line}: ")
    assert err.value.where == line


W14 = '<word id="14" cont="se" parallelism_id_1="1" branch_id_1="1"/>'


@pytest.mark.parametrize(
    "old,new,needle,message",
    [
        # branch 2 of parallelism 1 loses its tags: branch 1 has no partner
        (' parallelism_id_1="1" branch_id_1="2"', "", 'id="13"', "has no partner"),
        (W14, '<word id="14" cont="se"/>', 'id="15"', "is not contiguous"),
        (W14, W14.replace(' cont="se"', ""), 'id="14"', "without a cont attribute"),
        (W14, W14.replace('_1="1" b', '_1="x" b'), 'id="14"', "is not a positive integer"),
        (W14, W14.replace("/>", ' colour="red"/>'), 'id="14"', "unknown attribute colour"),
        (W14, W14.replace(' branch_id_1="1"', ""), 'id="14"', "needs both"),
        (W14, W14.replace('"14"', '"41"'), 'id="41"', "expected '14'"),
        (W14, W14.replace("<word", "<wort"), 'id="14"', "unexpected element <wort>"),
        (W14, W14.replace('cont="se"', "cont=se"), 'id="14"', "malformed XML"),
    ],
)
def test_asp_malformed_xml(asp_copy, old, new, needle, message):
    xml = asp_copy / XML_147
    _edit(xml, old, new, count=-1)
    line = _line_of(xml, needle)
    with pytest.raises(CorpusFormatError, match=re.escape(message)) as err:
        convert_asp(asp_copy)
    assert str(err.value).startswith(f"{xml}:{line}: ")
    assert err.value.where == line


def test_asp_malformed_sections_and_splits(asp_copy):
    txt = asp_copy / "brat/254.txt"
    _edit(txt, "<254 4>", "<254 5>")
    with pytest.raises(CorpusFormatError, match="header <254 5>") as err:
        convert_asp(asp_copy)
    assert err.value.path == str(txt) and err.value.where == 10
    splits = srsly.read_json(asp_copy / "splits/splits.json")
    splits["test"].append("999_annotated.xml")
    srsly.write_json(asp_copy / "splits/splits.json", splits)
    with pytest.raises(CorpusFormatError, match="999_annotated.xml is not in"):
        convert_asp(asp_copy)


# --- the full dataset -------------------------------------------------------------------


def test_asp_full_dataset_counts(data_dir):
    conversion = convert_asp(data_dir("asp"))
    docs = list(conversion.docs())
    sermons = {
        split: {d.user_data["doc_id"] for d in ds} for split, ds in conversion.splits.items()
    }
    assert {split: len(s) for split, s in sermons.items()} == {
        "train": 55,
        "dev": 9,
        "opt": 7,
        "test": 9,
    }
    assert len(set.union(*sermons.values())) == 80
    assert len(docs) == 477
    assert sum(len(d) for d in docs) == 134_956
    pars = [p for d in docs for p in get_parallelisms(d)]
    cross = {r["id"]: r for d in docs for r in d.user_data.get("cross_section_parallelisms", [])}
    # one parallelism (sermon 179, sections 4-5) crosses a section boundary
    assert list(cross) == ["179:22"]
    strata = Counter(p.stratum for p in pars) + Counter(r["stratum"] for r in cross.values())
    assert strata == {1: 2048, 2: 14}
    branches = Counter(p.stratum for p in pars for _ in p.branches)
    branches += Counter(r["stratum"] for r in cross.values() for _ in r["branches"])
    assert branches == {1: 4612, 2: 39}
    assert sum(strata.values()) == 2062 and sum(branches.values()) == 4651
    assert Counter(p.label for p in pars) == {"synchystic": 2020, "chiastic": 41}
    # brat and XML agree everywhere; the only reports are 11 arms that no relation
    # links (so the XML has no branch for them) and the cross-section parallelism
    assert conversion.skip_summary() == {SKIP_UNLINKED: 11, SKIP_CROSS_SECTION: 1}
    assert all(d.user_data["dataset"] == "asp" and doc_language(d) == "la" for d in docs)
