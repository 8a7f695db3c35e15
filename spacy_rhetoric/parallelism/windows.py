"""How ``parallelism_tagger`` reads a doc, and how it batches docs for its head.

The head was trained on single ASP sections and PSE-I paragraphs, never on text with a
line break, and every annotated parallelism lies within one of them. So a doc is first
cut at its paragraph breaks (a blank line) and each paragraph is read on its own, as a
training section was: ``nlp(text)`` on sections joined by blank lines finds what the
sections find one by one. A parallelism never crosses a paragraph break.

The head (BiLSTM, self-attention, CRF, linker) saw at most about a thousand tokens at
once, and its self-attention costs memory in the square of the length it reads (8,000
tokens in one Doc: 3 GB). A long paragraph is therefore read in overlapping windows of
``window`` tokens that start every ``window - overlap`` tokens. The windows' *cores*
partition the paragraph: each core leaves ``overlap // 2`` tokens of context on each
inner side. A parallelism found in a window is kept only if the middle of its extent
lies in that window's core, so every parallelism comes from exactly one window, and one
that a window edge would cut (its middle near the edge) is taken from the neighbouring
window, which holds it whole when it is at most ``overlap`` tokens long.
"""

from typing import Iterable, List, Sequence, Tuple

from spacy.tokens import Doc

from ..corpora.util import carry_language

Offsets = Tuple[Tuple[int, int], ...]
Window = Tuple[int, int, int, int]  # start, end, core start, core end


def head_windows(n_tokens: int, window: int, overlap: int) -> List[Window]:
    """The windows over a doc of ``n_tokens`` tokens.

    n_tokens (int): tokens in the doc.
    window (int): tokens per window (> overlap).
    overlap (int): tokens shared by two neighbouring windows (>= 0).
    RETURNS (List[Tuple[int, int, int, int]]): per window (start, end, core start,
        core end); the cores are disjoint, in order and cover 0..n_tokens. A doc of at
        most ``window`` tokens is one window.
    """
    if window <= overlap or overlap < 0:
        raise ValueError(f"window ({window}) must be greater than overlap ({overlap}) >= 0")
    if n_tokens <= window:
        return [(0, n_tokens, 0, n_tokens)]
    stride = window - overlap
    half = overlap // 2
    starts = [0]
    while starts[-1] + window < n_tokens:
        starts.append(starts[-1] + stride)
    windows = []
    for k, start in enumerate(starts):
        end = min(start + window, n_tokens)
        core_start = 0 if k == 0 else start + half
        core_end = n_tokens if k == len(starts) - 1 else start + stride + half
        windows.append((start, end, core_start, core_end))
    return windows


def paragraphs(doc: Doc) -> List[Tuple[int, int]]:
    """The doc's paragraphs: the runs of tokens between paragraph breaks (a whitespace
    token with two line breaks, or a line break right after another).

    doc (Doc): the doc.
    RETURNS (List[Tuple[int, int]]): [start, end) per paragraph, in order; the breaks
        and paragraphs of whitespace only are left out.
    """
    if "\n" not in doc.text:  # no break: one paragraph, unless only whitespace
        return [(0, len(doc))] if doc.text.strip() else []
    units: List[Tuple[int, int]] = []
    start = 0
    previous_newline = False
    for token in doc:
        newlines = token.text.count("\n") if token.is_space else 0
        if newlines > 1 or (newlines == 1 and previous_newline):
            units.append((start, token.i))
            start = token.i + 1
        previous_newline = newlines > 0
    units.append((start, len(doc)))
    return [(a, b) for a, b in units if any(not doc[i].is_space for i in range(a, b))]


def doc_windows(doc: Doc, window: int, overlap: int) -> List[Window]:
    """The head's windows over a doc: each paragraph's windows (``head_windows``), in
    doc offsets.

    doc (Doc): the doc.
    window (int): tokens per window.
    overlap (int): tokens shared by neighbouring windows of one paragraph.
    RETURNS (List[Tuple[int, int, int, int]]): (start, end, core start, core end) per
        window, in order; a doc of one paragraph of at most ``window`` tokens is one
        window over the whole doc.
    """
    units = paragraphs(doc)
    if len(units) == 1 and units[0][1] - units[0][0] <= window:
        return [(0, len(doc), 0, len(doc))]
    return [
        (a + s, a + e, a + cs, a + ce)
        for a, b in units
        for s, e, cs, ce in head_windows(b - a, window, overlap)
    ]


def window_doc(doc: Doc, window: Window) -> Doc:
    """RETURNS (Doc): the window's tokens as a Doc, in the doc's stated language (the doc
    itself if it is all of it)."""
    start, end = window[:2]
    if (start, end) == (0, len(doc)):
        return doc
    return carry_language(doc, doc[start:end].as_doc())


def owner(windows: Sequence[Window], first: int, last: int) -> int:
    """RETURNS (int): the index of the window whose core holds the middle of the
    extent [first, last) (the rule of ``owned``)."""
    for k, window in enumerate(windows):
        if _in_core(window, first, last):
            return k
    return len(windows) - 1


def owned(
    items: Iterable[Tuple[Sequence[Tuple[int, int]], int]], window: Window
) -> List[Tuple[Offsets, int]]:
    """The parallelisms a window keeps, moved to doc offsets.

    items (Iterable): (branch offsets, stratum) found in the window, in window offsets.
    window (Tuple[int, int, int, int]): the window (see ``head_windows``).
    RETURNS (List[Tuple[Offsets, int]]): those whose middle lies in the window's core,
        in doc offsets.
    """
    start = window[0]
    kept = []
    for offsets, stratum in items:
        moved = tuple((a + start, b + start) for a, b in offsets)
        if _in_core(window, min(a for a, _ in moved), max(b for _, b in moved)):
            kept.append((moved, stratum))
    return kept


def _in_core(window: Window, first: int, last: int) -> bool:
    """Whether the middle of the extent [first, last) lies in the window's core."""
    return window[2] <= (first + last - 1) / 2 < window[3]


def without_clashes(items: Sequence[Tuple[Offsets, int]]) -> List[Tuple[Offsets, int]]:
    """Drop a parallelism whose branches overlap those of an earlier one on its stratum
    (two windows may each keep one of two overlapping finds near a core boundary; a
    stratum's tag row can hold only one).

    items (Sequence[Tuple[Offsets, int]]): (branch offsets, stratum), in doc order.
    RETURNS (List[Tuple[Offsets, int]]): the items that fit, in the same order.
    """
    taken: dict = {}
    kept = []
    for offsets, stratum in items:
        tokens = taken.setdefault(stratum, set())
        mine = {i for a, b in offsets for i in range(a, b)}
        if mine & tokens:
            continue
        tokens |= mine
        kept.append((offsets, stratum))
    return kept


def token_batches(lengths: Sequence[int], max_tokens: int) -> List[List[int]]:
    """Batches of doc indices for the head, at most ``max_tokens`` padded tokens each
    (a longer doc alone), docs of similar length together.

    lengths (Sequence[int]): tokens per doc.
    max_tokens (int): padded tokens (docs x longest doc) per batch.
    RETURNS (List[List[int]]): the batches; every index once, each batch in index order.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: List[List[int]] = []
    current: List[int] = []
    for i in order:
        # sorted by length: the doc being added is the batch's longest
        if current and (len(current) + 1) * lengths[i] > max_tokens:
            batches.append(sorted(current))
            current = []
        current.append(i)
    if current:
        batches.append(sorted(current))
    return batches
