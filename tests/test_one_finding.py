"""One finding per passage: the chiasmus finder's and the figure finder's variants.

The greedy merges (``chiasmus.passages.passage_heads``, ``figures.component.merge_variants``)
against a brute-force reference of their definitions, their properties (no two kept
findings are one passage; every merged candidate is a variant of a kept one that scores
at least as high), and both components on real text.
"""

from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

import spacy_rhetoric  # noqa: F401  (registers the finders)
from spacy_rhetoric.chiasmus import passages as chiasmus_passages
from spacy_rhetoric.chiasmus.passages import passage_heads
from spacy_rhetoric.figures import component as figures_component
from spacy_rhetoric.figures.component import merge_variants

CHIASMUS_SHARE = Fraction(str(chiasmus_passages.VARIANT_SHARE))
FIGURE_SHARE = Fraction(str(figures_component.VARIANT_SHARE))


def _share(a: Tuple[int, int], b: Tuple[int, int]) -> Fraction:
    """The tokens two spans [start, end) share over the smaller one's tokens, by sets."""
    tokens_a, tokens_b = set(range(*a)), set(range(*b))
    return Fraction(len(tokens_a & tokens_b), min(len(tokens_a), len(tokens_b)))


def _one_chiasmus_passage(x: Sequence[int], y: Sequence[int]) -> bool:
    """The definition of one chiasmus passage, written out on token sets."""
    middle = len(x) // 2
    return (
        _share((x[0], x[-1] + 1), (y[0], y[-1] + 1)) >= CHIASMUS_SHARE
        or len(set(x) & set(y)) >= len(x) - 1
        or (x[middle - 1], x[middle]) == (y[middle - 1], y[middle])
    )


def _one_figure_passage(x: Tuple[str, int, int], y: Tuple[str, int, int]) -> bool:
    return x[0] == y[0] and _share(x[1:], y[1:]) >= FIGURE_SHARE


def _reference_heads(
    rows: Sequence[Sequence[int]], n_above: int, review: int, bound: Optional[int]
) -> Tuple[List[int], Dict[int, List[int]]]:
    """Brute force of ``passage_heads``: each examined candidate against every head so
    far; every candidate above the threshold examined, below it until ``review`` heads
    are found (none once more than ``bound`` heads are above it)."""
    heads: List[int] = []
    variants: Dict[int, List[int]] = {}
    for rank, row in enumerate(rows):
        below = sum(h >= n_above for h in heads)
        if rank >= n_above and (below >= review or (bound is not None and len(heads) > bound)):
            break
        head = next((h for h in heads if _one_chiasmus_passage(rows[h], row)), None)
        if head is None:
            heads.append(rank)
        else:
            variants.setdefault(head, []).append(rank)
    return heads, variants


def _reference_variants(
    items: Sequence[Tuple[str, int, int]],
    order: Sequence[int],
    n_first: Optional[int],
    limit: Optional[int],
) -> Tuple[List[int], Dict[int, List[int]]]:
    """Brute force of ``merge_variants``."""
    first = len(order) if n_first is None else n_first
    heads: List[int] = []
    variants: Dict[int, List[int]] = {}
    for k, item in enumerate(order):
        later = sum(order.index(h) >= first for h in heads)
        if k >= first and limit is not None and later >= limit:
            break
        head = next((h for h in heads if _one_figure_passage(items[h], items[item])), None)
        if head is None:
            heads.append(item)
        else:
            variants.setdefault(head, []).append(item)
    return heads, variants


def _check_merge(heads, variants, scores, one_passage, items, examined):
    """The properties of any greedy merge by score: kept items are pairwise not one
    passage; each variant is one passage with its head (the first such head) and scores
    no higher; every examined item is kept or a variant, once."""
    for i, h in enumerate(heads):
        for g in heads[i + 1 :]:
            assert not one_passage(items[h], items[g])
    for head, merged in variants.items():
        assert head in heads
        for v in merged:
            assert scores[v] <= scores[head]
            assert one_passage(items[head], items[v])
            first = next(h for h in heads if one_passage(items[h], items[v]))
            assert first == head
    flat = list(heads) + [v for merged in variants.values() for v in merged]
    assert sorted(flat) == sorted(set(flat)) == sorted(examined)


@st.composite
def chiasmus_candidates(draw):
    """Candidates of depth 2 or 3 (positions in role order), best first, with scores:
    many cross at one of a few inner pairs (as the readings of one passage do) or move
    one term of an earlier candidate, others are any positions."""
    depth = draw(st.sampled_from([2, 3]))
    inner_pairs = draw(
        st.lists(st.tuples(st.integers(depth, 20), st.integers(1, 4)), min_size=1, max_size=3)
    )
    rows = []
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["any", "inner", "moved"] if rows else ["any", "inner"]))
        if kind == "moved":  # an earlier candidate with one term at another position
            terms = list(draw(st.sampled_from(rows)))
            del terms[draw(st.integers(0, 2 * depth - 1))]
            moved = draw(st.sampled_from([i for i in range(41) if i not in terms]))
            rows.append(sorted(terms + [moved]))
            continue
        if kind == "any":
            terms = st.lists(
                st.integers(0, 30), min_size=2 * depth, max_size=2 * depth, unique=True
            )
            rows.append(sorted(draw(terms)))
            continue
        start, gap = draw(st.sampled_from(inner_pairs))
        left = st.lists(
            st.integers(0, start - 1), min_size=depth - 1, max_size=depth - 1, unique=True
        )
        right = st.lists(
            st.integers(start + gap + 1, start + gap + 20),
            min_size=depth - 1,
            max_size=depth - 1,
            unique=True,
        )
        rows.append(sorted(draw(left)) + [start, start + gap] + sorted(draw(right)))
    grades = st.sampled_from([0.1, 0.4, 0.6, 0.9])
    scores = draw(st.lists(grades, min_size=len(rows), max_size=len(rows)))
    return 2 * depth, rows, sorted(scores, reverse=True)


@settings(max_examples=300, deadline=None)
@given(
    chiasmus_candidates(),
    st.integers(0, 6),
    st.one_of(st.none(), st.integers(0, 6)),
)
def test_passage_heads_equal_brute_force(candidates, review, bound):
    width, rows, scores = candidates
    n_above = sum(s >= 0.5 for s in scores)
    indices = numpy.asarray(rows, dtype=numpy.int64).reshape(-1, width)
    heads, variants = passage_heads(indices, n_above, review, bound)
    expected = _reference_heads(rows, n_above, review, bound)
    assert (heads.tolist(), variants) == expected
    examined = sorted(heads.tolist() + [v for m in variants.values() for v in m])
    assert examined == list(range(len(examined)))  # a prefix of the ranking
    assert len(examined) >= n_above  # every candidate above the threshold
    assert sum(h >= n_above for h in heads.tolist()) <= review
    _check_merge(heads.tolist(), variants, scores, _one_chiasmus_passage, rows, examined)


@st.composite
def figure_findings(draw):
    """(label, start, end) items and their scores, with the examination order."""
    span = st.tuples(st.integers(0, 40), st.integers(1, 12)).map(lambda t: (t[0], t[0] + t[1]))
    item = st.tuples(st.sampled_from(["anaphora", "epiphora"]), span)
    items = [(label, s, e) for label, (s, e) in draw(st.lists(item, max_size=40))]
    scores = draw(st.lists(st.floats(0, 1, width=32), min_size=len(items), max_size=len(items)))
    order = [int(i) for i in numpy.argsort(-numpy.asarray(scores), kind="stable")]
    return items, scores, order


@settings(max_examples=300, deadline=None)
@given(
    figure_findings(),
    st.one_of(st.none(), st.integers(0, 40)),
    st.one_of(st.none(), st.integers(0, 6)),
)
def test_figure_variants_equal_brute_force(findings, n_first, limit):
    items, scores, order = findings
    heads, variants = merge_variants(items, order, n_first, limit)
    assert (heads, variants) == _reference_variants(items, order, n_first, limit)
    examined = order[: len(heads) + sum(map(len, variants.values()))]
    assert len(examined) >= min(len(order), len(order) if n_first is None else n_first)
    _check_merge(heads, variants, scores, _one_figure_passage, items, examined)


# --- the components on real text --------------------------------------------------------

# "quo veniat in me deus meus, quo deus veniat in me" (Augustine, Confessions 1.2.2), POS
# and lemmas as la_rhetoric_base gives them: 0.8.0 reported it as two chiasmi, veniat /
# deus / deus / veniat and me / deus / deus / me (their spans share 7 of 9 tokens)
WORDS = "quo veniat in me deus meus , quo deus veniat in me".split()
POS = "PRON VERB ADP PRON NOUN ADJ PUNCT PRON NOUN VERB ADP PRON".split()
LEMMAS = "qui venio in ego deus meus , qui deus venio in ego".split()


def test_one_chiasmus_for_one_passage():
    finder = spacy.blank("la").add_pipe("chiasmus_finder")
    doc = finder(Doc(finder.vocab, words=WORDS, pos=POS, lemmas=LEMMAS))
    chiasmi = doc.spans["chiasmus"]
    assert [(s.start, s.end) for s in chiasmi] == [(1, 10)]
    assert [w.text for w in chiasmi[0]._.chiasmus_support] == ["veniat", "deus", "deus", "veniat"]
    assert chiasmi.attrs["chiasmus_above_threshold"] == 1
    variants = chiasmi.attrs["chiasmus_variants"][chiasmi[0].id_]
    assert variants[0][:2] == [3, 12] and variants[0][2] >= 0.5  # me / deus / deus / me
    assert all(v[2] <= chiasmi[0]._.chiasmus_score for v in variants)
    review = doc.spans["chiasmus_candidates"]
    assert list(review)[:1] == list(chiasmi)
    assert (3, 12) not in {(s.start, s.end) for s in review}
    assert review.attrs["chiasmus_variants"][chiasmi[0].id_] == variants


def test_evaluation_still_ranks_every_candidate():
    finder = spacy.blank("la").add_pipe("chiasmus_finder", config={"review_per_1000": None})
    doc = finder(Doc(finder.vocab, words=WORDS, pos=POS, lemmas=LEMMAS))
    candidates, _ = finder.predict([Doc(finder.vocab, words=WORDS, pos=POS, lemmas=LEMMAS)])
    assert len(doc.spans["chiasmus"]) == 1
    assert len(doc.spans["chiasmus_candidates"]) == len(candidates[0].indices) >= 2
    assert "chiasmus_variants" not in doc.spans["chiasmus_candidates"].attrs


def test_one_figure_for_one_passage():
    # two anaphora candidates on "qua ... qua ... qua": from "aut" (3-16) and from the
    # second "qua" (7-17), sharing 9 of the smaller one's 10 tokens
    nlp = spacy.blank("la")
    finder = nlp.add_pipe("figure_finder")
    text = (
        "Quis enim aut qua vi vocis, qua gravitate verborum, qua arte dicendi haec dicere potest?"
    )
    doc = nlp(text)
    candidates, _, _ = finder.find(nlp.make_doc(text))
    proposed = [(c.start, c.end) for c in candidates if c.figure == "anaphora"]
    assert sorted(proposed) == [(3, 16), (7, 17)]
    figures = doc.spans["figures"]
    anaphora = [s for s in figures if s.label_ == "anaphora"]
    assert [(s.start, s.end) for s in anaphora] == [(3, 16)]
    variants = figures.attrs["figure_variants"][anaphora[0].id_]
    assert [v[:2] for v in variants] == [[7, 17]] and variants[0][2] <= anaphora[0]._.figure_score
    assert figures.attrs["figure_counts"]["anaphora"] == 1
    for key in ("figures", "figure_candidates"):
        spans = list(doc.spans[key])
        for i, x in enumerate(spans):
            for y in spans[i + 1 :]:
                one = (x.label_, x.start, x.end), (y.label_, y.start, y.end)
                assert not _one_figure_passage(*one)
    reported = [(s.label_, s.start, s.end) for s in figures]
    for s in doc.spans["figure_candidates"]:
        assert not any(_one_figure_passage(r, (s.label_, s.start, s.end)) for r in reported)
