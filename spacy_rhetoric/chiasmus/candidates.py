"""Chiasmus candidate search: every crosswise inversion A B B' A' of matching pairs.

A *candidate* of depth 2 is a quadruple of token positions ``a < b < b' < a'`` whose
pairs (a, a') and (b, b') *match*, with ``a' - a < window``. A pair (i, j) matches when

* both positions are eligible (their part of speech in the allow list, if one is given,
  and not in the deny list) and ``pos[i] == pos[j]``; or
* ``lemma_pairs`` is set, both are eligible and ``lemmas[i] == lemmas[j]``, whatever
  their parts of speech (a tagger that reads one word as ADJ once and NOUN once must not
  hide the antimetabole); or
* ``forms`` are given, ``forms[i] == forms[j]`` and both positions are eligible or have
  a part of speech in ``form_pos`` (not denied): e.g. numerals and pronouns take part
  only where the pair repeats its form; or
* ``stems`` are given, both are eligible and their stems are one word up to an ending
  (``stems.same_stem``: "glücklichen" / "glücklich", "amor" / "amoris"), whatever their
  parts of speech and lemmas.

Further conditions:

* optionally, ``a`` and ``a'`` (and so everything between them) in the same sentence,
* optionally (``antimetabole_only``), ``lemma[a] == lemma[a']`` and ``lemma[b] == lemma[b']``
  (with ``stems``: or the pair repeats its stem);
* optionally (``distinct``), ``lemma[a] != lemma[b]`` and ``lemma[b'] != lemma[a']``;
* optionally (``binomials``), no pair is a fixed binomial: one word form on both sides
  of a single preposition ("hand in hand", "side by side", "day after day", "Schritt
  für Schritt", "Auge um Auge"; "more and more"; ``fixed_binomials``) is an idiom, not
  half of an inversion ("Europe ... work hand in hand ... support Europe" is no
  antimetabole).

A candidate of depth 3 is a sextuple ``a < b < c < c' < b' < a'`` with the same conditions
on each of the three pairs. Candidates are arrays of positions in role order
``A, B, (C, C',) B', A'``; the output of a search is sorted lexicographically in that order,
so it equals the nested loops of the definition exactly. A candidate is an *antimetabole*
when every pair also repeats its lemma (with ``stems``: its lemma or its stem).

The search never enumerates quadruples it will not keep: it groups the positions
into matching pairs (at most ``window - 1`` apart, O(n * window) of them), and
nests the pairs inside each other with vectorised range expansion. It streams: anchors
``a`` are processed in blocks whose output is bounded (``batch_size`` candidates, plus at
most one anchor's worth), so a whole novel is searched in bounded memory.
"""

from typing import Iterable, Iterator, List, NamedTuple, Optional, Sequence, Union

import numpy

from ..stems import StemPairs

DEFAULT_WINDOW = 30
# the prepositions joining the halves of a fixed binomial X-p-X by their form (lower
# case), where the doc has no POS; with POS any preposition (ADP) joins too
BINOMIAL_JOINERS = frozenset(
    "in by to after for upon on over against "  # English
    "für an um in zu auf nach über gegen "  # German
    "ad post per in".split()  # Latin
)
BINOMIAL_JOINER_POS = "ADP"
# "and" joins a fixed binomial of these words only ("more and more", "again and again",
# "wieder und wieder"): elsewhere X-and-X is the centre of an inversion ("Cold hearts
# and hearts cold")
BINOMIAL_AND = frozenset(["and", "und", "et"])
BINOMIAL_AND_WORDS = frozenset("more less again over round through mehr immer wieder magis".split())
ROLES_BY_DEPTH = {2: ("A", "B", "B'", "A'"), 3: ("A", "B", "C", "C'", "B'", "A'")}
_ANCHOR_BLOCK = 2048


class Candidates(NamedTuple):
    """A batch of candidates.

    indices (numpy.ndarray): [k, 2 * depth] token positions in role order A, B, ..., B', A'.
    antimetabole (numpy.ndarray): [k] bool, True where every pair also repeats its lemma.
    characters (Optional[numpy.ndarray]): [k, 2 * depth] the character offsets of the
        roles in the doc's text, where the candidates were found on characters (Chinese,
        see ``characters``; ``indices`` are then the tokens that hold them); else None.
    """

    indices: numpy.ndarray
    antimetabole: numpy.ndarray
    characters: Optional[numpy.ndarray] = None


def roles(depth: int) -> Sequence[str]:
    """depth (int): 2 (A B B' A') or 3 (A B C C' B' A').
    RETURNS (Sequence[str]): the role names of the columns of a candidate array.
    """
    if depth not in ROLES_BY_DEPTH:
        raise ValueError(f"chiasmus candidates: depth must be 2 or 3, got {depth}")
    return ROLES_BY_DEPTH[depth]


def empty_candidates(depth: int = 2) -> Candidates:
    """RETURNS (Candidates): a batch without candidates."""
    return Candidates(
        numpy.zeros((0, len(roles(depth))), dtype=numpy.int64), numpy.zeros(0, dtype=bool)
    )


def _codes(values: Union[Sequence, numpy.ndarray]) -> numpy.ndarray:
    """Integer codes of arbitrary hashable labels (equal labels, equal codes)."""
    if isinstance(values, numpy.ndarray) and values.dtype.kind in "iu":
        return values.astype(numpy.int64, copy=False)
    index: dict = {}
    return numpy.fromiter(
        (index.setdefault(v, len(index)) for v in values), dtype=numpy.int64, count=len(values)
    )


def _eligible(
    pos: Sequence,
    allowed_pos: Optional[Iterable] = None,
    denied_pos: Optional[Iterable] = None,
) -> numpy.ndarray:
    values = numpy.asarray([str(p) for p in pos], dtype=object)
    mask = numpy.ones(len(values), dtype=bool)
    if allowed_pos is not None:
        mask &= numpy.isin(values, numpy.asarray(list(allowed_pos), dtype=object))
    if denied_pos is not None:
        mask &= ~numpy.isin(values, numpy.asarray(list(denied_pos), dtype=object))
    return mask


class _Matching(NamedTuple):
    """What decides whether two positions form a pair (see the module docstring)."""

    pos: numpy.ndarray
    eligible: numpy.ndarray
    lemmas: Optional[numpy.ndarray]  # pairs may match by lemma (lemma_pairs)
    forms: Optional[numpy.ndarray]  # pairs may match by form
    form_eligible: Optional[numpy.ndarray]
    required: Optional[numpy.ndarray]  # every pair must repeat this (antimetabole_only)
    stems: Optional[StemPairs]  # pairs may match by stem; a stem repetition counts as required
    binomials: Optional[numpy.ndarray] = None  # [n] bool: (i, i + 2) is a fixed binomial


def _pairs(start: int, stop: int, match: _Matching, window: int) -> numpy.ndarray:
    """All matching pairs (i, j), start <= i < j < stop, j - i < window, sorted by (i, j).

    RETURNS (numpy.ndarray): [m, 2] positions.
    """
    firsts, seconds = [], []
    eligible = match.eligible
    for gap in range(1, min(window, stop - start)):
        i = numpy.arange(start, stop - gap)
        j = i + gap
        both = eligible[i] & eligible[j]
        same = match.pos[i] == match.pos[j]
        if match.lemmas is not None:
            same |= match.lemmas[i] == match.lemmas[j]
        keep = both & same
        if match.forms is not None:
            fe = match.form_eligible
            keep |= fe[i] & fe[j] & (match.forms[i] == match.forms[j])
        stem = None
        if match.stems is not None:
            stem = numpy.zeros(len(i), dtype=bool)
            # pairs kept already need no answer unless every pair must repeat itself
            ask = numpy.flatnonzero(both if match.required is not None else both & ~keep)
            stem[ask] = match.stems(i[ask], j[ask])
            keep |= stem
        if match.required is not None:
            repeated = match.required[i] == match.required[j]
            keep &= repeated if stem is None else repeated | stem
        if gap == 2 and match.binomials is not None:
            keep &= ~match.binomials[i]
        firsts.append(i[keep])
        seconds.append(j[keep])
    if not firsts:
        return numpy.zeros((0, 2), dtype=numpy.int64)
    pairs = numpy.stack((numpy.concatenate(firsts), numpy.concatenate(seconds)), axis=1)
    return pairs[numpy.lexsort((pairs[:, 1], pairs[:, 0]))]


def fixed_binomials(forms: Sequence[str], pos: Optional[Sequence[str]] = None) -> numpy.ndarray:
    """The fixed binomials X-p-X of a token sequence: one word form (holding a letter)
    on both sides of a single preposition (``pos`` ADP where tagged, or a form in
    ``BINOMIAL_JOINERS``: "hand in hand", "side by side", "face to face", "year after
    year", "one by one", "Schritt für Schritt", "Hand in Hand", "Seite an Seite", "Auge
    um Auge"), or of "and" where X is one of ``BINOMIAL_AND_WORDS`` ("more and more").
    Not "Cold hearts and hearts cold" (the centre of an inversion), nor Latin "manus
    manum lavat" (two forms, no joining word).

    forms (Sequence[str]): one lower-case form per token.
    pos (Optional[Sequence[str]]): one coarse POS per token (None: untagged).
    RETURNS (numpy.ndarray): [n] bool, True at the first X of each binomial: the pair
        (i, i + 2) is an idiom, no pair of an inversion.
    """
    n = len(forms)
    found = numpy.zeros(n, dtype=bool)
    if n < 3:
        return found
    values = numpy.asarray([str(f) for f in forms], dtype=object)
    joiner = numpy.isin(values, numpy.asarray(sorted(BINOMIAL_JOINERS), dtype=object))
    if pos is not None:
        joiner |= numpy.asarray([str(p) for p in pos], dtype=object) == BINOMIAL_JOINER_POS
    conjunction = numpy.isin(values, numpy.asarray(sorted(BINOMIAL_AND), dtype=object))
    fixed = numpy.isin(values, numpy.asarray(sorted(BINOMIAL_AND_WORDS), dtype=object))
    same = values[:-2] == values[2:]
    found[:-2] = same & (joiner[1:-1] | (conjunction[1:-1] & fixed[:-2]))
    for i in numpy.flatnonzero(found).tolist():
        found[i] = any(ch.isalpha() for ch in values[i])
    return found


def _expand(lo: numpy.ndarray, hi: numpy.ndarray) -> numpy.ndarray:
    """Ragged ranges [lo_r, hi_r) -> (row of each element, element) as [total, 2]."""
    counts = numpy.maximum(hi - lo, 0)
    total = int(counts.sum())
    rows = numpy.repeat(numpy.arange(len(lo)), counts)
    offsets = numpy.arange(total) - numpy.repeat(numpy.cumsum(counts) - counts, counts)
    return numpy.stack((rows, lo[rows] + offsets), axis=1)


def _nest(frames: numpy.ndarray, pairs: numpy.ndarray, first_of: numpy.ndarray) -> numpy.ndarray:
    """Insert every pair nested strictly inside the innermost pair of each frame.

    frames (numpy.ndarray): [k, 2L] candidates of L levels (A.., ..A').
    pairs (numpy.ndarray): [m, 2] pairs sorted by (first, second).
    first_of (numpy.ndarray): first_of[p] = index of the first pair whose first position >= p
        (positions relative to the region the pairs were built on).
    RETURNS (numpy.ndarray): [k', 2L + 2] candidates of L + 1 levels, in frame order.
    """
    levels = frames.shape[1] // 2
    left, right = frames[:, levels - 1], frames[:, levels]
    # pairs whose first position lies in (left, right - 1): a contiguous range of `pairs`
    lo = first_of[left + 1]
    hi = first_of[numpy.maximum(right - 1, left + 1)]
    rows_and_pairs = _expand(lo, hi)
    rows, chosen = rows_and_pairs[:, 0], rows_and_pairs[:, 1]
    keep = pairs[chosen, 1] < right[rows]
    rows, chosen = rows[keep], chosen[keep]
    inner = pairs[chosen]
    return numpy.concatenate((frames[rows, :levels], inner, frames[rows, levels:]), axis=1).astype(
        numpy.int64
    )


def _antimetabole(
    indices: numpy.ndarray, lemmas: Optional[numpy.ndarray], stems: Optional[StemPairs] = None
) -> numpy.ndarray:
    if lemmas is None or len(indices) == 0:
        return numpy.zeros(len(indices), dtype=bool)
    width = indices.shape[1]
    values = lemmas[indices]
    flag = numpy.ones(len(indices), dtype=bool)
    for level in range(width // 2):
        repeated = values[:, level] == values[:, width - 1 - level]
        if stems is not None:
            repeated |= stems(indices[:, level], indices[:, width - 1 - level])
        flag &= repeated
    return flag


def _distinct(indices: numpy.ndarray, lemmas: numpy.ndarray) -> numpy.ndarray:
    """[k] bool: no two neighbouring roles of a half share their lemma."""
    values = lemmas[indices]
    width = indices.shape[1]
    keep = numpy.ones(len(indices), dtype=bool)
    for level in range(width // 2 - 1):
        keep &= values[:, level] != values[:, level + 1]
        keep &= values[:, width - 1 - level] != values[:, width - 2 - level]
    return keep


def _sorted(frames: numpy.ndarray, window: int) -> numpy.ndarray:
    """Sort block-local candidates lexicographically in role order, by one packed key
    (positions relative to A are < window) where it fits in 62 bits."""
    width = frames.shape[1]
    if (_ANCHOR_BLOCK + window) * window ** (width - 1) >= 1 << 62:
        return frames[numpy.lexsort(frames.T[::-1])]
    key = frames[:, 0].copy()
    for column in range(1, width):
        key = key * window + (frames[:, column] - frames[:, 0])
    return frames[numpy.argsort(key)]


def iter_candidates(
    pos: Sequence,
    *,
    lemmas: Optional[Sequence] = None,
    window: int = DEFAULT_WINDOW,
    depth: int = 2,
    allowed_pos: Optional[Iterable] = None,
    denied_pos: Optional[Iterable] = None,
    sentences: Optional[Sequence[int]] = None,
    antimetabole_only: bool = False,
    lemma_pairs: bool = False,
    forms: Optional[Sequence] = None,
    form_pos: Optional[Iterable] = None,
    distinct: bool = False,
    stems: Optional[Sequence[str]] = None,
    binomials: Optional[Sequence[bool]] = None,
    batch_size: int = 1 << 18,
) -> Iterator[Candidates]:
    """Stream the chiasmus candidates of a token sequence (see the module docstring).

    pos (Sequence): one part-of-speech label (str or int) per token.
    lemmas (Optional[Sequence]): one lemma (str or int) per token, for the antimetabole flag.
    window (int): a' - a < window.
    depth (int): 2 (A B B' A') or 3 (A B C C' B' A').
    allowed_pos (Optional[Iterable]): if given, only tokens with these labels take part.
    denied_pos (Optional[Iterable]): tokens with these labels never take part.
    sentences (Optional[Sequence[int]]): one sentence id per token; if given, a candidate
        never crosses a sentence boundary.
    antimetabole_only (bool): keep only candidates whose pairs also repeat their lemma.
    lemma_pairs (bool): two eligible positions with the same lemma are a pair whatever
        their parts of speech (needs ``lemmas``).
    forms (Optional[Sequence]): one form (e.g. the lower-case text) per token: two
        positions repeating their form are a pair if both are eligible or have a part of
        speech in ``form_pos``.
    form_pos (Optional[Iterable]): labels that take part only in pairs repeating their form.
    distinct (bool): drop candidates whose neighbouring roles share their lemma (A and B,
        B' and A'; at depth 3 also B and C, C' and B'): "the ... the ... the ... the" is
        repetition, not inversion (needs ``lemmas``).
    stems (Optional[Sequence[str]]): one lower-case form per token: two eligible positions
        whose forms are one word up to an ending (``stems.same_stem``) are a pair, and the
        pair counts as repeating its lemma (antimetabole flag, ``antimetabole_only``).
    binomials (Optional[Sequence[bool]]): one flag per token, True where the token and
        the one two on are a fixed binomial (``fixed_binomials``): that pair never matches.
    batch_size (int): soft bound on the candidates of one yielded batch.
    YIELDS (Candidates): batches in lexicographic order of the role tuples.
    """
    roles(depth)
    if window < 1:
        raise ValueError(f"chiasmus candidates: window must be >= 1, got {window}")
    n = len(pos)
    codes = _codes(pos)
    eligible = _eligible(pos, allowed_pos, denied_pos)
    lemma_codes = _codes(lemmas) if lemmas is not None else None
    if lemma_codes is not None and len(lemma_codes) != n:
        raise ValueError(f"chiasmus candidates: {len(lemma_codes)} lemmas for {n} tokens")
    if (antimetabole_only or lemma_pairs or distinct) and lemma_codes is None:
        raise ValueError(
            "chiasmus candidates: antimetabole_only, lemma_pairs and distinct need lemmas"
        )
    form_codes = form_eligible = None
    if forms is not None:
        form_codes = _codes(forms)
        if len(form_codes) != n:
            raise ValueError(f"chiasmus candidates: {len(form_codes)} forms for {n} tokens")
        form_eligible = eligible | (
            _eligible(pos, form_pos, denied_pos) if form_pos is not None else False
        )
    elif form_pos is not None:
        raise ValueError("chiasmus candidates: form_pos needs forms")
    stem_pairs = None
    if stems is not None:
        if len(stems) != n:
            raise ValueError(f"chiasmus candidates: {len(stems)} stems for {n} tokens")
        stem_pairs = StemPairs([str(s) for s in stems])
    sentence_ids = None
    if sentences is not None:
        sentence_ids = numpy.asarray(sentences, dtype=numpy.int64)
        if len(sentence_ids) != n:
            raise ValueError(
                f"chiasmus candidates: {len(sentence_ids)} sentence ids for {n} tokens"
            )
    binomial_flags = None
    if binomials is not None:
        binomial_flags = numpy.asarray(binomials, dtype=bool)
        if len(binomial_flags) != n:
            raise ValueError(
                f"chiasmus candidates: {len(binomial_flags)} binomial flags for {n} tokens"
            )
    match = _Matching(
        codes,
        eligible,
        lemma_codes if lemma_pairs else None,
        form_codes,
        form_eligible,
        lemma_codes if antimetabole_only else None,
        stem_pairs,
        binomial_flags,
    )
    for start in range(0, n, _ANCHOR_BLOCK):
        stop = min(n, start + _ANCHOR_BLOCK)
        region_stop = min(n, stop + window - 1)
        pairs = _pairs(start, region_stop, match, window)
        if len(pairs) == 0:
            continue
        # first_of[p - start]: index of the first pair whose first position >= p
        first_of = numpy.searchsorted(pairs[:, 0], numpy.arange(start, region_stop + 1))
        outer = pairs[pairs[:, 0] < stop]
        outer = outer[outer[:, 1] - outer[:, 0] >= 2 * depth - 1]
        if sentence_ids is not None:
            outer = outer[sentence_ids[outer[:, 0]] == sentence_ids[outer[:, 1]]]
        if len(outer) == 0:
            continue
        local = pairs - start
        # bound the output per yielded batch: cut between anchors at multiples of
        # batch_size of the first expansion's size (an upper bound of its output)
        size = (
            first_of[numpy.maximum(outer[:, 1] - 1 - start, 0)] - first_of[outer[:, 0] + 1 - start]
        )
        group = numpy.cumsum(numpy.maximum(size, 0)) // max(1, batch_size)
        anchors_change = numpy.r_[True, outer[1:, 0] != outer[:-1, 0]]
        # the group of an anchor is that of its first outer pair
        group = numpy.maximum.accumulate(numpy.where(anchors_change, group, 0))
        cuts = numpy.flatnonzero(numpy.r_[True, group[1:] != group[:-1]])
        for lo, hi in zip(cuts, numpy.r_[cuts[1:], len(outer)]):
            frames = outer[lo:hi] - start
            for _ in range(depth - 1):
                frames = _nest(frames, local, first_of)
            if len(frames) == 0:
                continue
            frames = _sorted(frames, window) + start
            if distinct:
                frames = frames[_distinct(frames, lemma_codes)]
                if len(frames) == 0:
                    continue
            yield Candidates(frames, _antimetabole(frames, lemma_codes, stem_pairs))


def find_candidates(pos: Sequence, **kwargs) -> Candidates:
    """All chiasmus candidates of a token sequence in one batch; takes the arguments of
    ``iter_candidates``.

    RETURNS (Candidates): the candidates, sorted lexicographically in role order.
    """
    batches: List[Candidates] = list(iter_candidates(pos, **kwargs))
    if not batches:
        return empty_candidates(kwargs.get("depth", 2))
    return Candidates(
        numpy.concatenate([b.indices for b in batches]),
        numpy.concatenate([b.antimetabole for b in batches]),
    )


def count_candidates(pos: Sequence, **kwargs) -> int:
    """The number of candidates, counted batch by batch (bounded memory); takes the
    arguments of ``iter_candidates``."""
    return sum(len(batch.indices) for batch in iter_candidates(pos, **kwargs))
