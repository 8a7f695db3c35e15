"""The segmentation of docs into cola that every figure rule shares."""

import pytest
import spacy
from spacy.tokens import Doc

from spacy_rhetoric.figures.segment import segment


def _cola(doc, clauses="auto"):
    seg = segment(doc, clauses)
    return [doc[s:e].text for s, e in zip(seg.starts, seg.ends)], seg


@pytest.fixture(scope="module")
def en():
    return spacy.blank("en")


def test_punctuation_closes_cola(en):
    cola, seg = _cola(
        en("Nihil agis, nihil moliris; nihil cogitas: quod non ego. Veni! Vidi? Vici…")
    )
    assert cola == [
        "Nihil agis",
        "nihil moliris",
        "nihil cogitas",
        "quod non ego",
        "Veni",
        "Vidi",
        "Vici",
    ]
    assert seg.sentence.tolist() == [0, 0, 0, 0, 1, 2, 3]
    assert seg.colon_of.tolist()[:3] == [0, 0, -1]


def test_dashes_line_breaks_and_cjk():
    en = spacy.blank("en")
    cola, _ = _cola(en("one two – three four\nfive six"))
    assert cola == ["one two", "three four", "five six"]
    zh = spacy.blank("zh")
    cola, seg = _cola(zh("名不正，则言不顺；桃、李。好"))
    assert cola == ["名不正", "则言不顺", "桃", "李", "好"]
    assert seg.sentence.tolist() == [0, 0, 0, 0, 1]


def test_sentences_from_the_doc_when_set(en):
    doc = en("a b c d")
    doc[2].is_sent_start = True
    for token in doc[1:]:
        if token.i != 2:
            token.is_sent_start = False
    cola, seg = _cola(doc)
    assert cola == ["a b", "c d"]
    assert seg.sentence.tolist() == [0, 1]


def test_parse_splits_before_a_clause_conjunction():
    words = ["I", "came", "and", "I", "saw"]
    doc = Doc(
        spacy.blank("en").vocab,
        words=words,
        heads=[1, 1, 4, 4, 1],
        deps=["nsubj", "ROOT", "cc", "nsubj", "conj"],
        pos=["PRON", "VERB", "CCONJ", "PRON", "VERB"],
    )
    assert _cola(doc)[0] == ["I came", "and I saw"]
    assert _cola(doc, "punct")[0] == ["I came and I saw"]


def test_parse_required_gives_a_clear_error(en):
    with pytest.raises(ValueError, match="figure_finder: clauses = 'parse' needs token.dep"):
        segment(en("no parse here"), "parse")
    with pytest.raises(ValueError, match="clauses must be one of"):
        segment(en("x"), "commas")


def test_empty_and_punctuation_only(en):
    cola, seg = _cola(en(""))
    assert cola == [] and len(seg.colon_of) == 0
    cola, seg = _cola(en(", ; ."))
    assert cola == [] and seg.colon_of.tolist() == [-1, -1, -1]
    cola, _ = _cola(en("word"))
    assert cola == ["word"]
