"""Query segments linked to source passages, each text one query: retrieval from an
index, then the reranker (if any) and the link threshold, for ``intertext match`` and
the evaluation protocols. ``intertext_matcher`` (and so ``analyze``) links a sentence
and its units (``units.unit_links``) with the same threshold rule
(``link_threshold``)."""

from typing import Any, Dict, List, Optional, Sequence

from .index import IntertextIndex
from .null import null_threshold
from .rerank import FeatureReranker


def link_threshold(
    reranker: Optional[FeatureReranker],
    threshold: Optional[float],
    index: Optional[IntertextIndex] = None,
) -> Optional[float]:
    """The threshold in force: the one given, else the reranker's, else the index's
    default threshold (``null.null_threshold``; a similarity that unrelated source
    segments rarely reach). None: every retrieved candidate is a link (no index given,
    or one too small to estimate its default).

    reranker (Optional[FeatureReranker]): the reranker, if any.
    threshold (Optional[float]): an explicit threshold.
    index (Optional[IntertextIndex]): the index, for its default threshold.
    RETURNS (Optional[float]): the threshold.
    """
    if threshold is not None:
        return threshold
    if reranker is not None:
        return reranker.threshold
    return null_threshold(index) if index is not None else None


def link_segments(
    index: IntertextIndex,
    texts: Sequence[str],
    reranker: Optional[FeatureReranker] = None,
    k: int = 10,
    pool: int = 100,
    threshold: Optional[float] = None,
) -> List[List[Dict[str, Any]]]:
    """Rank the source candidates of each query text and mark the links.

    With a reranker the candidates are ordered by its probability and a link is a
    candidate whose probability reaches the threshold (by default the reranker's);
    without one they keep the retrieval order and the threshold (by default the index's
    own, see ``link_threshold``) applies to the cosine similarity (dense index) or else
    the lexical score.

    index (IntertextIndex): the source index.
    texts (Sequence[str]): the query texts.
    reranker (Optional[FeatureReranker]): the trained reranker, if any.
    k (int): candidates per query.
    pool (int): candidates per retrieval channel before fusion.
    threshold (Optional[float]): the link threshold (see ``link_threshold``).
    RETURNS (List[List[Dict[str, Any]]]): per text, its top ``k`` candidates in rank
        order: source_id, source_text, retrieval_score, lexical, similarity,
        probability, rank and link (whether it is a link).
    """
    cut = link_threshold(reranker, threshold, index)
    dense = index.embeddings is not None
    linked = []
    for text, candidates in zip(texts, index.search(list(texts), k, pool)):
        if reranker is not None:
            candidates = reranker.rerank(index, text, candidates)
        rows = []
        for rank, c in enumerate(candidates, start=1):
            if reranker is not None:
                value = c.probability
            else:
                value = c.dense if dense else c.lexical
            rows.append(
                {
                    "source_id": index.ids[c.row],
                    "source_text": index.texts[c.row],
                    "retrieval_score": c.score,
                    "lexical": c.lexical,
                    "similarity": c.dense,
                    "probability": c.probability,
                    "rank": rank,
                    "link": cut is None or value >= cut,
                }
            )
        linked.append(rows)
    return linked
