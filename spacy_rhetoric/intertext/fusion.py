"""What an index search returns, and how its two channels are fused into one ranking.

A ``Candidate`` is one retrieved source segment for one query, with both channels'
scores and ranks. ``fuse`` ranks candidates by weighted reciprocal rank fusion
``sum_c w_c / (rrf_k + rank_c)`` (a channel that did not return a candidate counts it
at rank ``pool``); ``choose_fusion`` picks the dense weight and the constant on queries
with known links.
"""

from dataclasses import dataclass
from typing import (
    Collection,
    Hashable,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
)

import numpy as np

from .metrics import mean_reciprocal_rank, recall_at_k


@dataclass
class Candidate:
    """One retrieved source segment for one query."""

    row: int  # source row in the index
    score: float  # fused retrieval score
    lexical: float  # shared-rarity score
    dense: float  # cosine similarity
    lexical_rank: int  # 0-based rank in the lexical channel (pool if not returned)
    dense_rank: int  # 0-based rank in the dense channel (pool if not returned)
    probability: Optional[float] = None  # link probability after reranking


def kept_rows(rows: np.ndarray, exclude: Collection[int], pool: int) -> List[int]:
    """RETURNS (List[int]): the first ``pool`` of a channel's ranked ``rows`` that are
    not in ``exclude``."""
    if not exclude:
        return [int(r) for r in rows[:pool]]
    if not isinstance(exclude, (set, frozenset)):
        exclude = set(exclude)
    kept: List[int] = []
    for r in rows.tolist():
        if r not in exclude:
            kept.append(int(r))
            if len(kept) == pool:
                break
    return kept


FUSION_WEIGHTS = (0.0, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0)
FUSION_KS = (2.0, 10.0, 60.0)


def choose_fusion(
    union: Mapping[Hashable, Sequence[Candidate]],
    items: Mapping[Hashable, Sequence[Set[int]]],
    pool: int = 100,
    weights: Sequence[float] = FUSION_WEIGHTS,
    rrf_ks: Sequence[float] = FUSION_KS,
) -> Tuple[float, float]:
    """Choose the dense weight (the lexical one is 1) and the fusion constant with the
    best recall@10, then MRR, on queries with known links. A small constant lets the
    top lexical ranks outweigh the dense channel; 60 (the usual default) lets a dense
    rank 1 lift a lexical rank 2 over a lexical rank 1.

    union (Mapping): query -> its candidates from both channels (``search`` with both).
    items (Mapping): query -> its gold items (sets of rows).
    pool (int): the ranking depth scored.
    weights (Sequence[float]): the dense weights tried (ties: the first).
    rrf_ks (Sequence[float]): the fusion constants tried (ties: the first).
    RETURNS (Tuple[float, float]): the dense weight and the fusion constant.
    """
    best, best_key = (0.0, rrf_ks[-1]), (-1.0, -1.0)
    for rrf_k in rrf_ks:
        for w in weights:
            ranking = {q: [c.row for c in fuse(union[q], (1.0, w), rrf_k)[:pool]] for q in items}
            key = (recall_at_k(ranking, items, (10,))[10], mean_reciprocal_rank(ranking, items))
            if key > best_key:
                best, best_key = (w, rrf_k), key
    return best


def fuse(
    candidates: Sequence[Candidate], weights: Tuple[float, float], rrf_k: float = 60.0
) -> List[Candidate]:
    """Rank candidates by weighted reciprocal rank fusion of their channel ranks.

    candidates (Sequence[Candidate]): candidates with lexical_rank and dense_rank set.
    weights (Tuple[float, float]): the lexical and dense weights.
    rrf_k (float): the fusion constant.
    RETURNS (List[Candidate]): new candidates with ``score`` set, best first.
    """
    w_lex, w_dense = weights
    out = [
        Candidate(
            c.row,
            w_lex / (rrf_k + c.lexical_rank) + w_dense / (rrf_k + c.dense_rank),
            c.lexical,
            c.dense,
            c.lexical_rank,
            c.dense_rank,
        )
        for c in candidates
    ]
    out.sort(key=lambda c: (-c.score, -c.lexical, -c.dense, c.row))
    return out
