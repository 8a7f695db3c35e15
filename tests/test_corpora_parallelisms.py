import itertools

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import DocBin

from spacy_rhetoric.corpora.parallelisms import (
    CHIASTIC,
    SYNCHYSTIC,
    assign_strata,
    get_parallelisms,
    set_parallelisms,
)


@pytest.fixture
def doc():
    nlp = spacy.blank("la")
    return nlp("non in fabricis parietibus , non in nitore marmorum , sed in hominibus fidelibus")


def test_set_get_roundtrip(doc):
    set_parallelisms(doc, [([(0, 4), (5, 9)], SYNCHYSTIC, 1), ([(1, 3), (6, 8)], CHIASTIC, 2)])
    found = get_parallelisms(doc)
    assert [p.offsets for p in found] == [((0, 4), (5, 9)), ((1, 3), (6, 8))]
    assert [p.label for p in found] == [SYNCHYSTIC, CHIASTIC]
    assert [p.stratum for p in found] == [1, 2]
    assert found[0].branches[1].text == "non in nitore marmorum"
    assert doc._.parallelisms == found


def test_docbin_keeps_grouping_and_strata(doc):
    set_parallelisms(doc, [([(0, 4), (5, 9)], SYNCHYSTIC, 1), ([(1, 3), (6, 8)], CHIASTIC, 2)])
    doc_bin = DocBin(store_user_data=True, docs=[doc])
    restored = next(DocBin().from_bytes(doc_bin.to_bytes()).get_docs(doc.vocab))
    assert [(p.offsets, p.label, p.stratum) for p in get_parallelisms(restored)] == [
        (p.offsets, p.label, p.stratum) for p in get_parallelisms(doc)
    ]


def test_missing_strata_are_derived(doc):
    set_parallelisms(
        doc, [([(0, 4), (5, 9)], SYNCHYSTIC, None), ([(1, 3), (6, 8)], SYNCHYSTIC, None)]
    )
    # a plain list assignment drops the attrs: strata come from layering
    doc.spans["parallelism"] = list(doc.spans["parallelism"])
    assert [p.stratum for p in get_parallelisms(doc)] == [1, 2]


def test_no_group_means_no_parallelisms(doc):
    assert get_parallelisms(doc) == []
    assert get_parallelisms(doc, "other") == []


def _overlaps(a, b):
    return any(s < e2 and s2 < e for s, e in a for s2, e2 in b)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 30), st.integers(1, 5)), min_size=2, max_size=4),
        max_size=6,
    )
)
def test_assign_strata_never_overlaps_within_a_stratum(raw):
    groups = [[(s, s + n) for s, n in group] for group in raw]
    # a parallelism's own branches do not overlap each other
    groups = [
        g for g in groups if not any(_overlaps([a], [b]) for a, b in itertools.combinations(g, 2))
    ]
    strata = assign_strata(groups)
    assert len(strata) == len(groups)
    for (g1, s1), (g2, s2) in itertools.combinations(zip(groups, strata), 2):
        if s1 == s2:
            assert not _overlaps(g1, g2)
    # strata are dense: 1..max all used
    if strata:
        assert set(strata) == set(range(1, max(strata) + 1))
