"""Which scored candidates a doc keeps, and one entry per passage.

``kept_candidates``: the chiasmi (those scoring at least the threshold, at most
``MAX_FINDINGS_PER_1000`` per 1,000 tokens and always ``MIN_FINDINGS``) and, below them,
the review list (at most ``review_per_1000`` per 1,000 tokens).

``passage_heads``: a candidate that is one passage with a better one (``same_passage``:
their spans share at least ``VARIANT_SHARE`` of the smaller span's tokens, all their
terms but one are the same tokens, or they cross at the same inner pair) is a *variant*
of it, listed under it and not as an entry of its own.
"""

import math
from typing import Dict, List, Optional, Tuple

import numpy

# chiasmi kept per 1,000 tokens at most (50 times the calibrated rate of running text)
MAX_FINDINGS_PER_1000 = 50.0
MIN_FINDINGS = 20  # and always this many more (a short paragraph of antimetaboles)
# two candidates are one passage when their spans A..A' share at least this share of the
# smaller span's tokens (or see same_passage: all terms but one shared, or one inner pair)
VARIANT_SHARE = 0.8


def kept_candidates(
    ranked: numpy.ndarray,
    n_tokens: int,
    threshold: float,
    review_per_1000: Optional[float],
    max_findings_per_1000: float = MAX_FINDINGS_PER_1000,
) -> Tuple[int, int]:
    """How many of a doc's candidates, best first, a finder keeps: those scoring at
    least ``threshold`` (at most ``MIN_FINDINGS`` plus ``max_findings_per_1000`` per
    1,000 tokens: only a degenerate text such as "der Mann der Frau" repeated has more),
    then at most ``review_per_1000`` per 1,000 tokens for review (none where the chiasmi
    were cut).

    ranked (numpy.ndarray): the scores, in descending order.
    n_tokens (int): the doc's length.
    threshold (float): the chiasmus threshold.
    review_per_1000 (Optional[float]): None: keep all (no bound at all).
    max_findings_per_1000 (float): the bound on the chiasmi kept.
    RETURNS (Tuple[int, int]): the length of the kept prefix, and how many of the
        kept are chiasmi.
    """
    above = int((ranked >= threshold).sum())
    if review_per_1000 is None:
        return len(ranked), above
    findings = min(above, findings_bound(n_tokens, max_findings_per_1000))
    review = review_size(n_tokens, review_per_1000)
    if findings < above:  # past the bound the next best are chiasmi too: no review list
        review = 0
    return min(len(ranked), findings + review), findings


def findings_bound(n_tokens: int, max_findings_per_1000: float = MAX_FINDINGS_PER_1000) -> int:
    """RETURNS (int): how many chiasmi a doc of ``n_tokens`` tokens keeps at most."""
    return MIN_FINDINGS + math.ceil(max_findings_per_1000 * n_tokens / 1000 - 1e-9)


def review_size(n_tokens: int, review_per_1000: float) -> int:
    """RETURNS (int): how many candidates a doc of ``n_tokens`` tokens keeps for review
    at most."""
    return math.ceil(review_per_1000 * n_tokens / 1000 - 1e-9)


def same_passage(kept: numpy.ndarray, candidate: numpy.ndarray) -> numpy.ndarray:
    """Which of the kept candidates a candidate is one passage with: their spans A..A'
    share at least ``VARIANT_SHARE`` of the smaller span's tokens, or all their terms
    but one are the same tokens, or they cross at the same inner pair (B, B'; of depth
    3: C, C'). "quo veniat in me deus meus, quo deus veniat in me" read as veniat / deus
    / deus / veniat and as me / deus / deus / me is one passage by the last rule (their
    spans share 7 of 9 tokens).

    kept (numpy.ndarray): [m, 2 * depth] token positions in role order.
    candidate (numpy.ndarray): [2 * depth] token positions in role order.
    RETURNS (numpy.ndarray): [m] bool.
    """
    width = len(candidate)
    start, end = int(candidate[0]), int(candidate[-1]) + 1
    starts, ends = kept[:, 0], kept[:, -1] + 1
    shared = numpy.minimum(ends, end) - numpy.maximum(starts, start)
    smaller = numpy.minimum(ends - starts, end - start)
    overlap = shared >= VARIANT_SHARE * smaller - 1e-9
    terms = numpy.isin(kept, candidate).sum(axis=1)  # [m] the terms both have
    middle = width // 2
    inner = (kept[:, middle - 1] == candidate[middle - 1]) & (kept[:, middle] == candidate[middle])
    return overlap | (terms >= width - 1) | inner


def passage_heads(
    indices: numpy.ndarray, n_above: int, review: int = 0, bound: Optional[int] = None
) -> Tuple[numpy.ndarray, Dict[int, List[int]]]:
    """One candidate per passage, greedily best first: each candidate is a variant of
    the first head it is one passage with (``same_passage``), else a head itself. Every
    candidate above the threshold is examined; below it, candidates until ``review``
    heads below the threshold are found (none where more than ``bound`` heads are above
    it: the finder then keeps no review list).

    indices (numpy.ndarray): [k, 2 * depth] the candidates' token positions, best first.
    n_above (int): how many of them (the first) score at least the threshold.
    review (int): how many heads below the threshold to find.
    bound (Optional[int]): the most chiasmi kept (see ``findings_bound``); None: no bound.
    RETURNS (Tuple[numpy.ndarray, Dict[int, List[int]]]): the heads' ranks, ascending, and
        per head with variants the variants' ranks, ascending.
    """
    indices = numpy.asarray(indices, dtype=numpy.int64)
    kept = numpy.zeros((min(len(indices), 64), indices.shape[1]), dtype=numpy.int64)
    heads: List[int] = []
    variants: Dict[int, List[int]] = {}
    below = 0
    for rank, row in enumerate(indices):
        if rank >= n_above:
            if below >= review or (bound is not None and len(heads) > bound):
                break
        hits = numpy.flatnonzero(same_passage(kept[: len(heads)], row)) if heads else ()
        if len(hits):
            variants.setdefault(heads[int(hits[0])], []).append(rank)
            continue
        if len(heads) == len(kept):
            kept = numpy.concatenate([kept, numpy.zeros_like(kept)])
        kept[len(heads)] = row
        heads.append(rank)
        below += rank >= n_above
    return numpy.asarray(heads, dtype=numpy.int64), variants
