"""The parallelism tagger's head windows and batches: property tests against brute
force, and a trained tagger on a doc built so that a parallelism straddles a window edge."""

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc
from test_parallelism_component import TEXTS, make_examples, make_nlp
from thinc.api import Model, fix_random_seed

from spacy_rhetoric import get_parallelisms
from spacy_rhetoric.parallelism.windows import (
    head_windows,
    owned,
    owner,
    paragraphs,
    token_batches,
    without_clashes,
)


@st.composite
def sizes(draw):
    overlap = draw(st.integers(0, 40))
    window = draw(st.integers(overlap + 1, overlap + 60))
    return draw(st.integers(0, 400)), window, overlap


@settings(max_examples=300, deadline=None)
@given(sizes())
def test_cores_partition_the_doc(args):
    n, window, overlap = args
    windows = head_windows(n, window, overlap)
    assert windows[0][0] == 0 and windows[-1][1] == n
    covered = []
    for start, end, core_start, core_end in windows:
        assert 0 <= start <= core_start <= core_end <= end <= n
        assert end - start <= window
        covered.extend(range(core_start, core_end))
    assert covered == list(range(n))  # disjoint, in order, complete
    for (s1, e1, _, _), (s2, _, c2, _) in zip(windows, windows[1:]):
        assert s2 - s1 == window - overlap and e1 - s2 == overlap and c2 - s2 == overlap // 2


@settings(max_examples=300, deadline=None)
@given(sizes(), st.data())
def test_every_short_parallelism_is_owned_once_and_whole(args, data):
    """Brute force: a parallelism of at most ``overlap`` tokens (any window holds it whole
    when it is the doc) is kept by exactly one window, one that holds all of it."""
    n, window, overlap = args
    if n < 2:
        return
    length = data.draw(st.integers(2, max(2, min(n, overlap))))
    first = data.draw(st.integers(0, n - length))
    split = data.draw(st.integers(first + 1, first + length - 1))
    offsets = ((first, split), (split, first + length))
    windows = head_windows(n, window, overlap)
    keepers = []
    for k, (start, end, _, _) in enumerate(windows):
        if start <= first and first + length <= end:  # the window sees it whole
            local = tuple((a - start, b - start) for a, b in offsets)
            if owned([(local, 1)], windows[k]):
                keepers.append(k)
    if length <= overlap or len(windows) == 1:
        assert keepers == [owner(windows, first, first + length)]
    else:
        assert len(keepers) <= 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 300), max_size=40), st.integers(1, 1000))
def test_token_batches(lengths, max_tokens):
    batches = token_batches(lengths, max_tokens)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        assert batch == sorted(batch)
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= max_tokens


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 30), st.integers(1, 5), st.integers(1, 8), st.integers(1, 2)),
        max_size=8,
    )
)
def test_without_clashes_against_brute_force(raw):
    items = [(((a, a + w), (a + w + g, a + 2 * w + g)), s) for a, w, g, s in raw]
    kept = without_clashes(items)
    # brute force: walk in order, keep an item iff none of its tokens is held on its stratum
    expected, held = [], set()
    for offsets, stratum in items:
        tokens = {(stratum, i) for a, b in offsets for i in range(a, b)}
        if not tokens & held:
            held |= tokens
            expected.append((offsets, stratum))
    assert kept == expected


def test_bad_window_settings():
    with pytest.raises(ValueError, match="window"):
        head_windows(10, 4, 4)
    with pytest.raises(ValueError, match="window_overlap"):
        make_nlp(window=16, window_overlap=16)
    with pytest.raises(ValueError, match="batch_tokens"):
        make_nlp(batch_tokens=0)


def _trained(**config):
    fix_random_seed(0)
    nlp = make_nlp(**config)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    return nlp


def test_a_window_edge_never_splits_a_parallelism(monkeypatch):
    """A doc built so that the tricolon of TEXTS[1] straddles the first window's edge:
    with windows of 32 tokens it is found whole, as in the whole-doc reading, and the
    head never sees more than 32 tokens or more than batch_tokens padded tokens."""
    nlp = _trained()
    tagger = nlp.get_pipe("parallelism_tagger")
    filler = TEXTS[3].split()  # 8 tokens, no parallelism
    tricolon = TEXTS[1].split()  # branches at 0-4, 5-9, 10-14
    words = filler * 3 + ["ergo", "ergo"] + tricolon + filler * 6
    start = 26  # the first window is 0..32: it cuts the tricolon
    assert words[start : start + len(tricolon)] == tricolon and len(words) > 64
    expected = ((26, 30), (31, 35), (36, 40))
    whole = [p.offsets for p in get_parallelisms(nlp(Doc(nlp.vocab, words=words)))]
    assert expected in whole
    tagger.cfg.update(window=32, window_overlap=16, batch_tokens=64)
    seen = []
    predict = Model.predict

    def spy(model, inputs):
        if model is tagger.model:
            seen.append([len(doc) for doc in inputs[0]])
        return predict(model, inputs)

    monkeypatch.setattr(Model, "predict", spy)
    windowed = [p.offsets for p in get_parallelisms(nlp(Doc(nlp.vocab, words=words)))]
    assert expected in windowed
    assert all(max(lengths) <= 32 and len(lengths) * max(lengths) <= 64 for lengths in seen)
    assert sum(len(lengths) for lengths in seen) == len(head_windows(len(words), 32, 16))
    for offsets in windowed:  # whole branches, in the doc
        assert all(0 <= a < b <= len(words) for a, b in offsets)


def test_windows_survive_serialization(tmp_path):
    nlp = _trained(window=48, window_overlap=12)
    nlp.to_disk(tmp_path)
    cfg = spacy.load(tmp_path).get_pipe("parallelism_tagger").cfg
    assert (cfg["window"], cfg["window_overlap"]) == (48, 12)


def test_paragraphs():
    nlp = spacy.blank("en")
    doc = nlp("One two.\n\nThree four.\nFive.\n\n\nSix\n \n")
    texts = [doc[a:b].text for a, b in paragraphs(doc)]
    assert texts == ["One two.", "Three four.\nFive.", "Six"]
    assert paragraphs(nlp("\n\n")) == [] and paragraphs(nlp("")) == []
    assert paragraphs(nlp("no break at all")) == [(0, 4)]


def test_sections_joined_by_blank_lines_get_what_each_gets_alone():
    """nlp(text) on several sections as one doc, one paragraph each, predicts each
    section's own parallelisms, moved to the doc's offsets; with windows larger than
    the doc too (a paragraph is never read with its neighbours)."""
    nlp = _trained()
    alone = [[p.offsets for p in get_parallelisms(nlp(text))] for text in TEXTS]
    assert any(alone)
    doc = nlp("\n\n".join(TEXTS))
    expected, base = [], 0
    for text, found in zip(TEXTS, alone):
        expected += [tuple((a + base, b + base) for a, b in o) for o in found]
        base += len(nlp.make_doc(text)) + 1
    assert [p.offsets for p in get_parallelisms(doc)] == expected
    nlp.get_pipe("parallelism_tagger").cfg["window"] = 100_000
    assert [p.offsets for p in get_parallelisms(nlp("\n\n".join(TEXTS)))] == expected
