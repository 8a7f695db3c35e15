from itertools import combinations

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_rhetoric.chiasmus.candidates import (
    count_candidates,
    find_candidates,
    iter_candidates,
    roles,
)
from spacy_rhetoric.stems import StemPairs, same_stem


def brute_force(
    pos,
    lemmas=None,
    window=30,
    depth=2,
    allowed=None,
    denied=None,
    sentences=None,
    antimetabole_only=False,
    lemma_pairs=False,
    forms=None,
    form_pos=None,
    distinct=False,
    stems=None,
):
    """The definition, literally: nested loops over every increasing position tuple."""
    n = len(pos)

    def stem(i, j):
        return stems is not None and same_stem(stems[i], stems[j])

    def eligible(i):
        return (allowed is None or pos[i] in allowed) and (denied is None or pos[i] not in denied)

    def form_eligible(i):
        in_form_pos = form_pos is not None and pos[i] in form_pos
        return eligible(i) or (in_form_pos and (denied is None or pos[i] not in denied))

    def matches(i, j):
        if eligible(i) and eligible(j):
            if pos[i] == pos[j] or (lemma_pairs and lemmas[i] == lemmas[j]) or stem(i, j):
                return True
        return forms is not None and form_eligible(i) and form_eligible(j) and forms[i] == forms[j]

    found, flags = [], []
    for a in range(n):
        for b in range(a + 1, n):
            for b2 in range(b + 1, n):
                for a2 in range(b2 + 1, n):
                    middles = [()] if depth == 2 else combinations(range(b + 1, b2), 2)
                    for middle in middles:
                        t = (a, b, *middle, b2, a2)
                        if a2 - a >= window:
                            continue
                        if not all(matches(t[k], t[-1 - k]) for k in range(depth)):
                            continue
                        if sentences is not None and sentences[a] != sentences[a2]:
                            continue
                        if distinct and any(
                            lemmas[t[k]] == lemmas[t[k + 1]]
                            or lemmas[t[-1 - k]] == lemmas[t[-2 - k]]
                            for k in range(depth - 1)
                        ):
                            continue
                        am = lemmas is not None and all(
                            lemmas[t[k]] == lemmas[t[-1 - k]] or stem(t[k], t[-1 - k])
                            for k in range(depth)
                        )
                        if antimetabole_only and not am:
                            continue
                        found.append(t)
                        flags.append(am)
    # the nested loops run a, b, b', a' (depth 3: a, b, b', a', c, c'); sort to role order
    order = sorted(range(len(found)), key=lambda i: found[i])
    return [found[i] for i in order], [flags[i] for i in order]


@st.composite
def sequences(draw, max_size=22):
    n = draw(st.integers(0, max_size))
    pos = draw(st.lists(st.sampled_from("NVAD"), min_size=n, max_size=n))
    lemmas = draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n))
    breaks = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    sentences = list(numpy.cumsum(breaks)) if draw(st.booleans()) else None
    return pos, lemmas, sentences


@settings(max_examples=150, deadline=None)
@given(
    sequences(),
    st.integers(1, 14),
    st.sampled_from([None, {"N", "V", "A"}]),
    st.sampled_from([None, {"D"}]),
    st.booleans(),
    st.sampled_from([1, 7, 1 << 18]),
)
def test_depth2_equals_brute_force(data, window, allowed, denied, am_only, batch_size):
    pos, lemmas, sentences = data
    expected, flags = brute_force(
        pos, lemmas, window, 2, allowed, denied, sentences, antimetabole_only=am_only
    )
    found = find_candidates(
        pos,
        lemmas=lemmas,
        window=window,
        allowed_pos=allowed,
        denied_pos=denied,
        sentences=sentences,
        antimetabole_only=am_only,
        batch_size=batch_size,
    )
    assert found.indices.shape == (len(expected), 4)
    assert [tuple(map(int, row)) for row in found.indices] == expected
    assert found.antimetabole.tolist() == flags


@settings(max_examples=60, deadline=None)
@given(sequences(max_size=16), st.integers(1, 14), st.booleans(), st.booleans())
def test_depth3_equals_brute_force(data, window, am_only, distinct):
    pos, lemmas, sentences = data
    expected, flags = brute_force(
        pos,
        lemmas,
        window,
        3,
        sentences=sentences,
        antimetabole_only=am_only,
        distinct=distinct,
    )
    found = find_candidates(
        pos,
        lemmas=lemmas,
        window=window,
        depth=3,
        sentences=sentences,
        antimetabole_only=am_only,
        distinct=distinct,
        batch_size=3,
    )
    assert [tuple(map(int, row)) for row in found.indices] == expected
    assert found.antimetabole.tolist() == flags


@settings(max_examples=150, deadline=None)
@given(
    sequences(),
    st.lists(st.sampled_from("pqr"), min_size=22, max_size=22),
    st.integers(1, 14),
    st.sampled_from([None, {"N", "V"}]),
    st.sampled_from([None, {"D"}]),
    st.sampled_from([None, {"A"}, {"A", "D"}]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_relaxed_pairs_equal_brute_force(
    data, form_pool, window, allowed, denied, form_pos, lemma_pairs, am_only, distinct
):
    pos, lemmas, sentences = data
    forms = form_pool[: len(pos)] if form_pos is not None else None
    expected, flags = brute_force(
        pos,
        lemmas,
        window,
        2,
        allowed,
        denied,
        sentences,
        antimetabole_only=am_only,
        lemma_pairs=lemma_pairs,
        forms=forms,
        form_pos=form_pos,
        distinct=distinct,
    )
    found = find_candidates(
        pos,
        lemmas=lemmas,
        window=window,
        allowed_pos=allowed,
        denied_pos=denied,
        sentences=sentences,
        antimetabole_only=am_only,
        lemma_pairs=lemma_pairs,
        forms=forms,
        form_pos=form_pos,
        distinct=distinct,
        batch_size=5,
    )
    assert [tuple(map(int, row)) for row in found.indices] == expected
    assert found.antimetabole.tolist() == flags


def test_lemma_pairs_across_pos_tags():
    # "good men and good ..." style: the tagger read the repeated word as ADJ, then NOUN
    pos = ["ADJ", "NOUN", "CCONJ", "NOUN", "NOUN"]
    lemmas = ["cold", "heart", "and", "heart", "cold"]
    strict = find_candidates(pos, lemmas=lemmas, allowed_pos={"NOUN", "ADJ"})
    assert strict.indices.tolist() == []
    relaxed = find_candidates(pos, lemmas=lemmas, allowed_pos={"NOUN", "ADJ"}, lemma_pairs=True)
    assert relaxed.indices.tolist() == [[0, 1, 3, 4]]
    # numerals take part only where the pair repeats its form
    pos = ["NUM", "NOUN", "NOUN", "NUM"]
    lemmas = ["one", "man", "man", "two"]
    assert find_candidates(pos, lemmas=lemmas, allowed_pos={"NOUN"}).indices.tolist() == []
    kwargs = dict(lemmas=lemmas, allowed_pos={"NOUN"}, form_pos={"NUM"})
    assert find_candidates(pos, forms=lemmas, **kwargs).indices.tolist() == []
    forms = ["one", "man", "man", "one"]
    assert find_candidates(pos, forms=forms, **kwargs).indices.tolist() == [[0, 1, 2, 3]]
    with pytest.raises(ValueError, match="form_pos needs forms"):
        find_candidates(pos, form_pos={"NUM"})
    with pytest.raises(ValueError, match="need lemmas"):
        find_candidates(pos, lemma_pairs=True)
    # repetition is no inversion: A and B share their lemma
    pos, lemmas = ["DET"] * 4, ["the"] * 4
    assert find_candidates(pos, lemmas=lemmas).indices.tolist() == [[0, 1, 2, 3]]
    assert find_candidates(pos, lemmas=lemmas, distinct=True).indices.tolist() == []


def test_anchor_blocks_and_batches():
    # longer than one anchor block (2048 tokens): block edges must lose nothing
    rng = numpy.random.default_rng(0)
    pos = rng.choice(list("NVADP"), size=5000).tolist()
    window = 9
    full = find_candidates(pos, window=window, batch_size=1 << 30)
    batches = list(iter_candidates(pos, window=window, batch_size=500))
    assert len(batches) > 10
    stacked = numpy.concatenate([b.indices for b in batches])
    assert numpy.array_equal(stacked, full.indices)
    assert count_candidates(pos, window=window) == len(full.indices)
    # all candidates are valid and sorted
    a, b, b2, a2 = full.indices.T
    assert ((a < b) & (b < b2) & (b2 < a2) & (a2 - a < window)).all()
    pos_array = numpy.asarray(pos)
    assert (pos_array[a] == pos_array[a2]).all() and (pos_array[b] == pos_array[b2]).all()
    keys = [tuple(row) for row in full.indices[:2000]]
    assert keys == sorted(keys)
    # every valid quadruple of the first 60 tokens is found
    head = find_candidates(pos[:60], window=window)
    assert [tuple(r) for r in head.indices] == brute_force(pos[:60], window=window)[0]


def test_example_and_errors():
    pos = ["NOUN", "AUX", "NOUN", "PUNCT", "CCONJ", "NOUN", "AUX", "NOUN"]
    lemmas = ["east", "be", "west", ",", "and", "west", "be", "east"]
    found = find_candidates(pos, lemmas=lemmas, allowed_pos={"NOUN"})
    assert found.indices.tolist() == [[0, 2, 5, 7]]
    assert found.antimetabole.tolist() == [True]
    assert find_candidates([]).indices.shape == (0, 4)
    assert find_candidates([], depth=3).indices.shape == (0, 6)
    assert roles(3) == ("A", "B", "C", "C'", "B'", "A'")
    with pytest.raises(ValueError, match="depth"):
        find_candidates(pos, depth=4)
    with pytest.raises(ValueError, match="need lemmas"):
        find_candidates(pos, antimetabole_only=True)
    with pytest.raises(ValueError, match="lemmas for"):
        find_candidates(pos, lemmas=lemmas[:3])


# forms chosen so that equal prefixes, shared stems and near misses all occur
STEM_FORMS = "amor amoris amorem blickst blickt haus hausaufgabe der des sein seit".split()


@settings(max_examples=150, deadline=None)
@given(
    sequences(),
    st.lists(st.sampled_from(STEM_FORMS), min_size=22, max_size=22),
    st.integers(1, 14),
    st.sampled_from([None, {"N", "V"}]),
    st.sampled_from([2, 3]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_stem_pairs_equal_brute_force(
    data, stem_pool, window, allowed, depth, lemma_pairs, am_only, distinct
):
    pos, lemmas, sentences = data
    if depth == 3:
        pos, lemmas = pos[:14], lemmas[:14]
        sentences = sentences[:14] if sentences is not None else None
    stems = stem_pool[: len(pos)]
    expected, flags = brute_force(
        pos,
        lemmas,
        window,
        depth,
        allowed,
        None,
        sentences,
        antimetabole_only=am_only,
        lemma_pairs=lemma_pairs,
        distinct=distinct,
        stems=stems,
    )
    found = find_candidates(
        pos,
        lemmas=lemmas,
        window=window,
        depth=depth,
        allowed_pos=allowed,
        sentences=sentences,
        antimetabole_only=am_only,
        lemma_pairs=lemma_pairs,
        distinct=distinct,
        stems=stems,
        batch_size=5,
    )
    assert [tuple(map(int, row)) for row in found.indices] == expected
    assert found.antimetabole.tolist() == flags


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(STEM_FORMS + ["a", "ab"]), min_size=1), st.data())
def test_stem_pairs_answer_same_stem(forms, data):
    index = st.integers(0, len(forms) - 1)
    left = data.draw(st.lists(index, max_size=40))
    right = data.draw(st.lists(index, min_size=len(left), max_size=len(left)))
    pairs = StemPairs(forms)
    expected = [same_stem(forms[i], forms[j]) for i, j in zip(left, right)]
    assert pairs(numpy.asarray(left), numpy.asarray(right)).tolist() == expected
    assert pairs(numpy.asarray(left), numpy.asarray(right)).tolist() == expected  # cached


def test_stem_pairs_find_an_inflected_antimetabole():
    # "Nicht die Glücklichen sind dankbar, sondern die Dankbaren sind glücklich": the
    # tagger reads each pair as NOUN once and ADJ once, with different lemmas
    forms = "glücklichen sind dankbar dankbaren sind glücklich".split()
    pos = ["NOUN", "AUX", "ADJ", "NOUN", "AUX", "ADJ"]
    kwargs = dict(lemmas=forms, allowed_pos={"NOUN", "ADJ"}, lemma_pairs=True, distinct=True)
    assert find_candidates(pos, **kwargs).indices.tolist() == []
    found = find_candidates(pos, stems=forms, **kwargs)
    assert found.indices.tolist() == [[0, 2, 3, 5]] and found.antimetabole.tolist() == [True]
    with pytest.raises(ValueError, match="stems for"):
        find_candidates(pos, stems=forms[:2], **kwargs)
