"""Tests of the parallelism tag schemes: exact tags per tagset, round trips, imperfect
output, transition masks (property tests and brute force) and the real datasets."""

import itertools
import time
from functools import cache
from typing import List, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_rhetoric.corpora.parallelisms import assign_strata
from spacy_rhetoric.parallelism.tag_codec import (
    LOCAL_PROBLEMS,
    decode,
    decode_strata,
    encode,
    encode_strata,
    tag_problems,
)
from spacy_rhetoric.parallelism.tag_constraints import is_allowed, transition_constraints
from spacy_rhetoric.parallelism.tags import (
    LINK_TYPES,
    LINKED_BEGIN,
    TAGSETS,
    TagScheme,
    all_schemes,
    join_link,
    link_values,
    parse_tag,
    split_link,
    structure_vocabulary,
    tag_vocabulary,
)

SCHEMES = all_schemes()
MAX_LENGTH = 30

# --- strategies --------------------------------------------------------------------


@st.composite
def strata_rows(draw, length: int) -> List[List[Tuple[int, int]]]:
    """One stratum: non-overlapping branches grouped into parallelisms of >= 2."""
    branches = []
    pos = 0
    while pos < length:
        pos += draw(st.integers(0, 3))
        if pos >= length:
            break
        size = draw(st.integers(1, min(4, length - pos)))
        branches.append((pos, pos + size))
        pos += size
    if len(branches) < 2:
        return []
    n_groups = draw(st.integers(1, max(1, len(branches) // 2)))
    labels = draw(
        st.lists(st.integers(0, n_groups - 1), min_size=len(branches), max_size=len(branches))
    )
    groups = {}
    for branch, label in zip(branches, labels, strict=True):
        groups.setdefault(label, []).append(branch)
    return canonical([g for g in groups.values() if len(g) >= 2])


@st.composite
def flat_sets(draw):
    length = draw(st.integers(0, MAX_LENGTH))
    return length, draw(strata_rows(length))


@st.composite
def nested_sets(draw):
    """Random strata, each non-overlapping: (length, [(branches, stratum)])."""
    length = draw(st.integers(0, MAX_LENGTH))
    n_strata = draw(st.integers(1, 3))
    items = []
    for stratum in range(1, n_strata + 1):
        items.extend((p, stratum) for p in draw(strata_rows(length)))
    return length, n_strata, sorted(items, key=lambda item: (item[0][0], item[1]))


def canonical(parallelisms):
    return sorted(sorted(tuple(b) for b in p) for p in parallelisms)


# --- schemes and single tags -------------------------------------------------------


def test_schemes_names_round_trip():
    assert len(SCHEMES) == 16
    assert {s.tagset for s in SCHEMES} == set(TAGSETS)
    assert {s.link for s in SCHEMES} == set(LINK_TYPES)
    for scheme in SCHEMES:
        assert TagScheme.from_name(scheme.name) == scheme
    assert TagScheme("biomje", "branch").name == "biomje-branch"
    assert TagScheme.from_name("BIOJE-Token") == TagScheme("bioje", "token")
    scheme = TagScheme("biomje", "token")
    assert scheme.has_middle and scheme.has_joint and scheme.has_end
    assert not any((TagScheme("bio", "token").has_middle, TagScheme("bioe", "token").has_joint))


@pytest.mark.parametrize("name", ["bio", "biox-token", "bio-tokens", "", "bioem-token", "-token"])
def test_scheme_bad_names(name):
    with pytest.raises(ValueError):
        TagScheme.from_name(name)


def test_scheme_bad_fields_name_the_problem():
    with pytest.raises(ValueError, match="tagset 'bmo'"):
        TagScheme("bmo", "token")
    with pytest.raises(ValueError, match="link type 'words'"):
        TagScheme("bio", "words")


def test_parse_split_join():
    assert parse_tag("O") == ("O", None)
    assert parse_tag("B") == ("B", None)
    assert parse_tag("B-12") == ("B", 12)
    assert parse_tag("E") == ("E", None)
    assert split_link("B-3") == (LINKED_BEGIN, 3)
    assert split_link("J") == ("J", None)
    for tag in ["O", "M", "B", "B-1", "B-40", "I", "J", "E"]:
        assert join_link(*split_link(tag)) == tag
    for bad in ["X", "B-0", "B-", "B-x", "b", "B-1-2", "I-1", "B--1", "B-٣"]:
        with pytest.raises(ValueError):
            parse_tag(bad)
    with pytest.raises(ValueError):
        join_link(LINKED_BEGIN, None)
    with pytest.raises(ValueError):
        join_link(LINKED_BEGIN, 0)
    with pytest.raises(ValueError):
        join_link("I", 2)
    with pytest.raises(ValueError):
        join_link("Q", None)
    assert link_values(["B", "I", "O", "B-4", "B-1"]) == [4, 1]


def test_vocabularies():
    assert tag_vocabulary("bio-token", 2) == ["O", "B", "B-1", "B-2", "I"]
    assert tag_vocabulary("biomje-branch", 1) == ["O", "M", "B", "B-1", "I", "J", "E"]
    assert tag_vocabulary("bioe-token", 0) == ["O", "B", "I", "E"]
    assert structure_vocabulary("biomje-token") == ["O", "M", "B", "B-*", "I", "J", "E"]
    assert structure_vocabulary("bioj-branch") == ["O", "B", "B-*", "I", "J"]
    with pytest.raises(ValueError):
        tag_vocabulary("bio-token", -1)


# --- exact tags --------------------------------------------------------------------

# Tokens 0..12. P1 = (1,3), (9,12); P2 = (4,5), (6,8) lies in P1's gap. Outside tokens
# 3, 5, 8 fall while a parallelism is incomplete (M); 0 and 12 do not.
# Token links: P2's second branch starts at 6, P2's first ends on token 4 -> 2; P1's
# second starts at 9, its first ends on token 2 -> 7. Branch links: 1 and 3.
EXAMPLE = [[(1, 3), (9, 12)], [(4, 5), (6, 8)]]
EXPECTED = {
    "bio": "O B I O B O B-2 I O B-7 I I O",
    "bioe": "O B E O B O B-2 E O B-7 I E O",
    "bioj": "O B I O B O B-2 J O B-7 J J O",
    "biom": "O B I M B M B-2 I M B-7 I I O",
    "bioje": "O B E O B O B-2 E O B-7 J E O",
    "biome": "O B E M B M B-2 E M B-7 I E O",
    "biomj": "O B I M B M B-2 J M B-7 J J O",
    "biomje": "O B E M B M B-2 E M B-7 J E O",
}


@pytest.mark.parametrize("tagset", TAGSETS)
def test_exact_tags_per_tagset(tagset):
    token = EXPECTED[tagset].split()
    branch = [{"B-2": "B-1", "B-7": "B-3"}.get(t, t) for t in token]
    assert encode(EXAMPLE, 13, TagScheme(tagset, "token")) == token
    assert encode(EXAMPLE, 13, TagScheme(tagset, "branch")) == branch
    for link, tags in (("token", token), ("branch", branch)):
        assert decode(tags, TagScheme(tagset, link)) == canonical(EXAMPLE)
        assert tag_problems(tags, TagScheme(tagset, link)) == []


def test_paper_style_examples():
    # "tamquam dominum timetis , tamquam patrem diligitis ." (Augustine, ASP)
    assert " ".join(encode([[(0, 3), (4, 7)]], 8, "biomj-token")) == "B I I M B-2 J J O"
    # Four branches separated by one comma each; adjacent branches link with 1.
    four = [[(0, 2), (3, 5), (6, 8), (9, 11)]]
    assert " ".join(encode(four, 11, "biomj-token")) == "B I M B-2 J M B-2 J M B-2 J"
    assert " ".join(encode(four, 11, "biomj-branch")) == "B I M B-1 J M B-1 J M B-1 J"
    assert " ".join(encode([[(0, 2), (2, 4)]], 5, "bioje-token")) == "B E B-1 E O"
    # one-token branches: no E, and single B can be followed by M
    assert " ".join(encode([[(0, 1), (2, 3)]], 4, "biomje-token")) == "B M B-2 O"


def test_branch_links_count_other_parallelisms():
    # A, B, A, B interleaved: each later branch is 2 branches back, 1 token gap apart.
    interleaved = [[(0, 1), (2, 3)], [(1, 2), (3, 4)]]
    assert encode(interleaved, 4, "bio-branch") == ["B", "B", "B-2", "B-2"]
    assert encode(interleaved, 4, "bio-token") == ["B", "B", "B-2", "B-2"]
    chiastic = [[(0, 1), (3, 4)], [(1, 2), (2, 3)]]  # A B B' A'
    assert encode(chiastic, 4, "bio-branch") == ["B", "B", "B-1", "B-3"]
    assert encode(chiastic, 4, "bio-token") == ["B", "B", "B-1", "B-3"]
    assert encode(chiastic, 5, "biom-token") == ["B", "B", "B-1", "B-3", "O"]


def test_encode_strata_nested():
    outer = [(0, 4), (5, 9)]
    inner = [(0, 2), (2, 4)]
    rows = encode_strata([(outer, 1), (inner, 2)], 10, "biomje-token", 2)
    assert rows == [
        "B I I E M B-2 J J E O".split(),
        "B E B-1 E O O O O O O".split(),
    ]
    # sorted by first branch, then stratum (as spans.get_parallelisms)
    assert decode_strata(rows, "biomje-token") == [(inner, 2), (outer, 1)]
    assert encode_strata([], 3, "bio-token", 2) == [["O"] * 3, ["O"] * 3]


def test_encode_strata_accepts_doc_parallelisms():
    from spacy.tokens import Doc
    from spacy.vocab import Vocab

    from spacy_rhetoric.corpora.parallelisms import get_parallelisms, set_parallelisms

    doc = Doc(Vocab(), words="a b c d e f g h i j".split())
    set_parallelisms(doc, [([(0, 4), (5, 9)], "parallelism", 1), ([(0, 2), (2, 4)], "chiastic", 2)])
    rows = encode_strata(get_parallelisms(doc), len(doc), "bio-token", 2)
    assert rows == ["B I I I O B-2 I I I O".split(), "B I B-1 I O O O O O O".split()]


def test_encode_errors_name_the_problem():
    with pytest.raises(ValueError, match="overlap"):
        encode([[(0, 2), (4, 6)], [(1, 3), (7, 8)]], 10, "bio-token")
    with pytest.raises(ValueError, match="at least 2 branches"):
        encode([[(0, 2)]], 5, "bio-token")
    with pytest.raises(ValueError, match="outside the row"):
        encode([[(0, 2), (4, 7)]], 6, "bio-token")
    with pytest.raises(ValueError, match="empty"):
        encode([[(0, 0), (2, 3)]], 6, "bio-token")
    with pytest.raises(ValueError, match="overlap"):
        encode([[(0, 2), (0, 2)]], 6, "bio-token")
    with pytest.raises(ValueError, match="stratum 3"):
        encode_strata([([(0, 1), (1, 2)], 3)], 4, "bio-token", 2)
    with pytest.raises(ValueError, match="same length"):
        decode_strata([["O"], ["O", "O"]], "bio-token")


# --- imperfect output --------------------------------------------------------------


def kinds(tags, scheme, **kwargs):
    return [p.kind for p in tag_problems(tags, scheme, **kwargs)]


def test_decode_orphan_inside_starts_branch():
    tags = "O I I O B-2 I".split()
    assert decode(tags, "bio-token") == [[(1, 3), (4, 6)]]
    assert kinds(tags, "bio-token") == ["orphan"]
    # J right after an E: the E closed the branch, the J starts a new one.
    tags = "B E J O B-3 J".split()
    assert decode(tags, "bioje-token") == [[(0, 2), (4, 6)]]
    assert "orphan" in kinds(tags, "bioje-token")


def test_decode_unclosed_and_mismatched_insides():
    tags = "B I O B-2 E".split()  # first branch lacks its E
    assert decode(tags, "bioe-token") == [[(0, 2), (3, 5)]]
    assert kinds(tags, "bioe-token") == ["unclosed"]
    tags = "B J O B-2 I".split()  # J in a first branch, I in a later one
    assert decode(tags, "bioj-token") == [[(0, 2), (3, 5)]]
    assert kinds(tags, "bioj-token") == ["inside_mismatch", "inside_mismatch"]


def test_decode_tags_outside_tagset_read_by_meaning():
    tags = "B I M B-2 J E O".split()
    assert decode(tags, "bio-token") == [[(0, 2), (3, 6)]]
    assert set(kinds(tags, "bio-token")) == {"tag_not_in_tagset"}


def test_decode_links():
    # token link 5 from token 4 points before the row: unresolved, both branches single
    tags = "B I O O B-5 I".split()
    assert decode(tags, "bio-token") == []
    assert kinds(tags, "bio-token") == ["single_branch", "link_unresolved", "single_branch"]
    with pytest.raises(ValueError, match="link_unresolved|single_branch"):
        decode(tags, "bio-token", strict=True)
    # link into a gap; snapping attaches to the nearest earlier branch end
    tags = "B I O O O B-2 I".split()
    assert decode(tags, "bio-token") == []
    assert decode(tags, "bio-token", snap_links=True) == [[(0, 2), (5, 7)]]
    assert "link_unresolved" in kinds(tags, "bio-token", snap_links=True)
    # link into the interior of a branch
    tags = "B I I O B-3 I".split()
    assert decode(tags, "bio-token") == []
    # branch link overshooting
    tags = "B O B-2".split()
    assert decode(tags, "bio-branch") == []
    assert decode(tags, "bio-branch", snap_links=True) == [[(0, 1), (2, 3)]]
    assert decode(["B-1"], "bio-branch", snap_links=True) == []
    # a link to a branch that already has a successor still joins its parallelism
    tags = "B B-1 B-2".split()
    assert decode(tags, "bio-token") == [[(0, 1), (1, 2), (2, 3)]]
    assert kinds(tags, "bio-token") == ["link_reused"]
    assert decode("B B-1 B-2".split(), "bio-branch") == [[(0, 1), (1, 2), (2, 3)]]


def test_decode_drops_single_branches_and_checks_middle():
    assert decode("B I O".split(), "bio-token") == []
    assert kinds("B I O".split(), "bio-token") == ["single_branch"]
    tags = "B M B-2 M O".split()  # M after the last branch
    assert decode(tags, "biom-token") == [[(0, 1), (2, 3)]]
    assert kinds(tags, "biom-token") == ["middle_mismatch"]
    tags = "B O B-2".split()  # O inside the parallelism's gap
    assert kinds(tags, "biom-token") == ["middle_mismatch"]


def test_decode_is_total_and_strict_raises():
    assert decode([], "biomje-branch") == []
    with pytest.raises(ValueError, match="Not a parallelism tag"):
        decode(["O", "X"], "bio-token")
    with pytest.raises(ValueError, match="token 1"):
        decode(["O", "E"], "bio-token", strict=True)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_decode_total_on_random_tags(data):
    scheme = data.draw(st.sampled_from(SCHEMES))
    # all prefixes, including ones outside the tagset
    vocab = ["O", "M", "B", "B-1", "B-2", "B-3", "I", "J", "E"]
    tags = data.draw(st.lists(st.sampled_from(vocab), max_size=20))
    parallelisms = decode(tags, scheme, snap_links=data.draw(st.booleans()))
    flat = sorted(b for p in parallelisms for b in p)
    assert all(len(p) >= 2 and p == sorted(p) for p in parallelisms)
    assert all(e1 <= s2 for (_, e1), (s2, _) in zip(flat, flat[1:], strict=False))
    # no problems exactly when the row is the encoding of its decoding
    clean = tag_problems(tags, scheme) == []
    assert clean == (encode(decode(tags, scheme), len(tags), scheme) == tags)


# --- round trips -------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(flat_sets())
def test_roundtrip_flat(example):
    length, parallelisms = example
    for scheme in SCHEMES:
        tags = encode(parallelisms, length, scheme)
        assert len(tags) == length
        assert decode(tags, scheme) == parallelisms
        assert tag_problems(tags, scheme) == []
        # the split representation round-trips too
        assert [join_link(*split_link(t)) for t in tags] == tags


@settings(max_examples=100, deadline=None)
@given(nested_sets())
def test_roundtrip_strata(example):
    length, n_strata, items = example
    for scheme in SCHEMES:
        rows = encode_strata(items, length, scheme, n_strata)
        assert len(rows) == n_strata
        assert decode_strata(rows, scheme) == items


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_roundtrip_assigned_strata(data):
    """Arbitrary (overlapping) parallelisms, layered with spans.assign_strata."""
    length = data.draw(st.integers(2, MAX_LENGTH))
    groups = []
    for _ in range(data.draw(st.integers(0, 4))):
        starts = data.draw(
            st.lists(st.integers(0, length - 1), min_size=2, max_size=4, unique=True)
        )
        starts.sort()
        bounds = starts + [length]
        groups.append(
            [(s, data.draw(st.integers(s + 1, bounds[i + 1]))) for i, s in enumerate(starts)]
        )
    strata = assign_strata(groups)
    items = sorted(zip(groups, strata, strict=True), key=lambda x: (x[0][0], x[1]))
    n_strata = max(strata, default=1)
    for scheme in SCHEMES:
        rows = encode_strata(items, length, scheme, n_strata)
        assert decode_strata(rows, scheme) == items


# --- transition masks --------------------------------------------------------------


@cache
def masks_for(name: str, max_link: int, structure: bool):
    labels = structure_vocabulary(name) if structure else tag_vocabulary(name, max_link)
    return labels, transition_constraints(labels, name)


@settings(max_examples=150, deadline=None)
@given(flat_sets())
def test_gold_sequences_are_allowed(example):
    length, parallelisms = example
    for scheme in SCHEMES:
        tags = encode(parallelisms, length, scheme)
        labels, masks = masks_for(scheme.name, MAX_LENGTH, False)
        assert is_allowed(tags, labels, masks), (scheme.name, tags)
        labels, masks = masks_for(scheme.name, 0, True)
        assert is_allowed([split_link(t)[0] for t in tags], labels, masks), (scheme.name, tags)


def test_masks_shapes_and_examples():
    labels = tag_vocabulary("biomje-token", 2)
    start, trans, end = transition_constraints(labels, "biomje-token")
    assert (
        start.dtype == bool and trans.shape == (len(labels), len(labels)) and end.shape == (7 + 1,)
    )
    ix = {label: i for i, label in enumerate(labels)}
    assert not trans[ix["O"], ix["I"]]  # no O -> I
    assert not trans[ix["I"], ix["O"]]  # an E must close
    assert not trans[ix["E"], ix["J"]]
    assert not trans[ix["O"], ix["M"]] and not trans[ix["M"], ix["O"]]
    assert not trans[ix["B"], ix["O"]]  # a first branch leaves its parallelism open
    assert not trans[ix["O"], ix["B-2"]] and trans[ix["M"], ix["B-2"]]
    assert not trans[ix["M"], ix["B-1"]] and trans[ix["E"], ix["B-1"]]
    assert not trans[ix["B"], ix["J"]] and trans[ix["B-1"], ix["J"]]
    assert not start[ix["M"]] and not start[ix["B-1"]] and start[ix["B"]]
    assert not end[ix["M"]] and not end[ix["B"]] and end[ix["E"]] and end[ix["B-2"]]
    with pytest.raises(ValueError, match="not part of tagset bio"):
        transition_constraints(["O", "B", "M"], "bio-token")
    empty = transition_constraints([], "bio-token")
    assert [m.shape for m in empty] == [(0,), (0, 0), (0,)]


def _allowed_paths(labels, masks, length):
    """Depth-first enumeration of all mask-allowed paths of a given length."""
    start, trans, end = masks
    successors = [np.flatnonzero(row).tolist() for row in trans]

    def extend(path):
        if len(path) == length:
            if end[path[-1]]:
                yield [labels[i] for i in path]
            return
        for j in successors[path[-1]]:
            yield from extend(path + [j])

    for i in np.flatnonzero(start).tolist():
        yield from extend([i])


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
def test_masks_brute_force(scheme):
    """Tiny lengths: every allowed path decodes without local repairs; every clean
    row (= every gold encoding) is allowed; structure masks agree."""
    labels = tag_vocabulary(scheme, 2)
    masks = transition_constraints(labels, scheme)
    s_labels = structure_vocabulary(scheme)
    s_masks = transition_constraints(s_labels, scheme)
    for length in range(1, 6):
        allowed = set()
        for tags in _allowed_paths(labels, masks, length):
            allowed.add(tuple(tags))
            problems = tag_problems(tags, scheme)
            assert not [p for p in problems if p.kind in LOCAL_PROBLEMS], (tags, problems)
            parallelisms = decode(tags, scheme)
            assert all(len(p) >= 2 for p in parallelisms)
            assert is_allowed([split_link(t)[0] for t in tags], s_labels, s_masks)
        if length <= 4:
            for tags in itertools.product(labels, repeat=length):
                clean = tag_problems(list(tags), scheme) == []
                assert clean == (encode(decode(tags, scheme), length, scheme) == list(tags))
                if clean:
                    assert tags in allowed, tags
        else:  # every gold row is allowed, via all flat sets of this length
            for tags in _all_gold_rows(length, scheme):
                assert tuple(tags) in allowed or max(link_values(tags), default=0) > 2


def _all_gold_rows(length, scheme):
    segments = [(s, e) for s in range(length) for e in range(s + 1, length + 1)]
    for n in range(2, length + 1):
        for chosen in itertools.combinations(segments, n):
            if any(e1 > s2 for (_, e1), (s2, _) in zip(chosen, chosen[1:], strict=False)):
                continue
            for labels in itertools.product(range(n // 2), repeat=n):
                groups = {}
                for branch, label in zip(chosen, labels, strict=True):
                    groups.setdefault(label, []).append(branch)
                if all(len(g) >= 2 for g in groups.values()):
                    yield encode(list(groups.values()), length, scheme)


# --- linear time -------------------------------------------------------------------


def test_linear_time_on_long_rows():
    length = 200_000
    parallelisms = [[(i, i + 3), (i + 4, i + 7), (i + 8, i + 9)] for i in range(0, length, 10)]
    scheme = TagScheme("biomje", "token")
    began = time.perf_counter()
    tags = encode(parallelisms, length, scheme)
    assert decode(tags, scheme) == parallelisms
    assert time.perf_counter() - began < 5.0


# --- real data ---------------------------------------------------------------------


def _strata_of(doc):
    from spacy_rhetoric.corpora.parallelisms import get_parallelisms

    by_stratum = {}
    for p in get_parallelisms(doc):
        by_stratum.setdefault(p.stratum, []).append(sorted(p.offsets))
    return {s: canonical(ps) for s, ps in by_stratum.items()}


@pytest.mark.parametrize("corpus,folder", [("asp", "asp"), ("pse", "pse-i")])
def test_roundtrip_real_data(corpus, folder, data_dir):
    pytest.importorskip(f"spacy_rhetoric.corpora.{corpus}")
    from spacy_rhetoric.corpora import convert

    conversion = convert(corpus, data_dir(folder))
    docs = list(conversion.docs())
    assert docs
    strata = [(_strata_of(doc), len(doc)) for doc in docs]
    n_parallelisms = sum(len(ps) for by_stratum, _ in strata for ps in by_stratum.values())
    assert n_parallelisms > 0
    largest = {}
    began = time.perf_counter()
    for scheme in SCHEMES:
        for by_stratum, length in strata:
            for stratum, parallelisms in by_stratum.items():
                tags = encode(parallelisms, length, scheme)
                assert decode(tags, scheme) == parallelisms, (scheme.name, stratum)
                largest[scheme.link] = max([largest.get(scheme.link, 0), *link_values(tags)])
    elapsed = time.perf_counter() - began
    print(
        f"{corpus}: {len(docs)} docs, {n_parallelisms} parallelisms, largest links {largest}, "
        f"16 schemes in {elapsed:.1f}s"
    )
    assert elapsed < 30
