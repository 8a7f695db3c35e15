"""The default link threshold of an index without a reranker, estimated from the index
itself, without gold links.

Source segments are drawn at random and searched as queries against their own index;
the segment itself and the segments around it in the same work (continuous text) are
left out. What remains is what an unrelated text reaches by chance: the best similarity
among each sampled segment's top ``k`` other candidates. The threshold is a high
quantile of these best similarities (by default the 99th percentile, so about one
sampled segment in a hundred would get a link). It errs on the safe side: real
repetitions inside the sources (formulaic verses, one author echoing another) raise it.

The value compared is the one ``link.link_segments`` compares without a reranker: the
cosine similarity for an index with a dense channel, else the lexical score.
"""

from typing import Any, Dict, List, Optional

import numpy as np

from .index import IntertextIndex

NULL_SAMPLE = 1000  # source segments searched as queries
NULL_QUANTILE = 0.99
NULL_NEIGHBOURS = 5  # segments on either side in the same work left out
NULL_MIN_VALUES = 20  # fewer sampled segments with candidates: no estimate
NULL_KEY = "null_threshold"  # in meta.json


def work_of(seg_id: str) -> str:
    """The work of a segment id: a Tesserae id without its locus (``vergil.aeneid 1.1``
    -> ``vergil.aeneid``); an id without a space is its own work."""
    return seg_id.rsplit(" ", 1)[0] if " " in seg_id else seg_id


def estimate_null_threshold(
    index: IntertextIndex,
    k: int = 10,
    sample: int = NULL_SAMPLE,
    quantile: float = NULL_QUANTILE,
    neighbours: int = NULL_NEIGHBOURS,
    seed: int = 0,
) -> Dict[str, Any]:
    """Estimate the default link threshold of an index (see the module docstring).

    index (IntertextIndex): the index.
    k (int): candidates per sampled segment considered (analyze's default top k).
    sample (int): source segments drawn (all of them if the index is smaller).
    quantile (float): the quantile of the best chance similarities taken.
    neighbours (int): segments on either side in the same work that are left out.
    seed (int): the sampling seed.
    RETURNS (Dict[str, Any]): ``threshold`` (None if fewer than NULL_MIN_VALUES sampled
        segments had other candidates), ``score`` ("cosine" or "lexical"), ``quantile``,
        ``sample`` (segments searched) and ``values`` (how many had candidates).
    """
    n = len(index)
    score = "cosine" if index.has_dense else "lexical"
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, size=min(sample, n), replace=False)) if n else np.zeros(0)
    # searched as text, not by their stored vectors: those are passage embeddings, and a
    # query is encoded with the query prompt, so its similarities are what queries reach
    texts = [index.texts[r] for r in rows]
    hits = index.search(texts, k + 2 * neighbours + 1) if texts else []
    best: List[float] = []
    for row, candidates in zip(rows.tolist(), hits):
        work = work_of(index.ids[row])
        others = [
            c
            for c in candidates
            if not (abs(c.row - row) <= neighbours and work_of(index.ids[c.row]) == work)
        ][:k]
        if others:
            best.append(max(c.dense if index.has_dense else c.lexical for c in others))
    threshold: Optional[float] = None
    if len(best) >= NULL_MIN_VALUES:
        threshold = float(np.quantile(np.asarray(best, dtype=np.float64), quantile))
    return {
        "threshold": threshold,
        "score": score,
        "quantile": quantile,
        "sample": len(rows),
        "values": len(best),
        "k": k,
    }


def null_threshold(index: IntertextIndex) -> Optional[float]:
    """The index's default link threshold: the one stored in its meta.json by
    ``intertext index``, else estimated now (and kept in ``index.cfg``, not written).

    RETURNS (Optional[float]): the threshold (None: the index is too small to estimate it).
    """
    if NULL_KEY not in index.cfg:
        index.cfg[NULL_KEY] = estimate_null_threshold(index)
    return index.cfg[NULL_KEY]["threshold"]
