"""Metrics of intertext retrieval and linking (Loci Similes, Schelb et al.).

Gold links are given per query as a list of *gold items*; each item is the set of
source rows that count as that link (one row for a segment-level benchmark; several
consecutive lines when a multi-line verse passage is matched against a line-level
corpus). A gold item is found when any of its rows is retrieved / predicted.

* recall@k: found gold items in the top k / all gold items (micro over links).
* MRR: mean over queries with gold links of 1 / rank of the first correct source.
* P/R/F1 at the threshold: TP = found gold items, FN = the others, FP = predicted
  pairs that match no gold item. "micro" pools the counts over the queries that have
  gold links; "macro" averages per-query values over those queries; "all" pools the
  counts over every query, so that links predicted for queries without gold links
  (distractors) count as false positives.
* SMR, FPR, FNR (error rates over *all* query x source pairs, all queries, including
  those without gold links): SMR = (FP + FN) / total, FPR = FP / total,
  FNR = FN / total, where total = n_queries * n_sources and TN = total - TP - FP - FN.
"""

from dataclasses import dataclass
from typing import Any, Callable, Dict, Hashable, Iterable, List, Mapping, Sequence, Set

from spacy.scorer import PRFScore
from spacy.util import registry

Gold = Mapping[Hashable, Sequence[Set[int]]]


@dataclass
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


def precision_recall_f1(confusion: "Confusion") -> Dict[str, float]:
    """RETURNS (Dict[str, float]): precision, recall, f1 of a confusion (0.0 when
    undefined), through spaCy's PRFScore."""
    score = PRFScore(tp=confusion.tp, fp=confusion.fp, fn=confusion.fn)
    return {"precision": score.precision, "recall": score.recall, "f1": score.fscore}


def error_rates(confusion: Confusion) -> Dict[str, float]:
    """RETURNS (Dict[str, float]): smr, fpr, fnr over all pairs of the confusion."""
    total = confusion.total
    if total == 0:
        return {"smr": 0.0, "fpr": 0.0, "fnr": 0.0}
    return {
        "smr": (confusion.fp + confusion.fn) / total,
        "fpr": confusion.fp / total,
        "fnr": confusion.fn / total,
    }


def _found(items: Sequence[Set[int]], rows: Iterable[int]) -> int:
    rows = set(rows)
    return sum(1 for item in items if item & rows)


def recall_at_k(
    ranked: Mapping[Hashable, Sequence[int]], gold: Gold, ks: Iterable[int]
) -> Dict[int, float]:
    """Link-level recall of the top k.

    ranked (Mapping): query -> source rows, best first (a missing query retrieved nothing).
    gold (Gold): query -> gold items.
    ks (Iterable[int]): the cut-offs.
    RETURNS (Dict[int, float]): k -> recall@k.
    """
    n_links = sum(len(items) for items in gold.values())
    out = {}
    for k in ks:
        found = sum(_found(items, list(ranked.get(q, []))[:k]) for q, items in gold.items())
        out[k] = found / n_links if n_links else 0.0
    return out


def mean_reciprocal_rank(ranked: Mapping[Hashable, Sequence[int]], gold: Gold) -> float:
    """RETURNS (float): MRR over the queries with gold links (0 for a miss)."""
    total = 0.0
    queries = [q for q, items in gold.items() if items]
    for q in queries:
        rows: Set[int] = set().union(*gold[q])
        for rank, row in enumerate(ranked.get(q, []), start=1):
            if row in rows:
                total += 1.0 / rank
                break
    return total / len(queries) if queries else 0.0


def link_confusion(
    predicted: Mapping[Hashable, Iterable[int]],
    gold: Gold,
    queries: Sequence[Hashable],
    n_sources: int,
) -> Dict[Hashable, Confusion]:
    """Per-query confusion counts of predicted links.

    predicted (Mapping): query -> predicted source rows.
    gold (Gold): query -> gold items.
    queries (Sequence): every query of the evaluation (with or without gold links).
    n_sources (int): the number of source segments (pairs per query).
    RETURNS (Dict[Hashable, Confusion]): per query.
    """
    out = {}
    for q in queries:
        items = list(gold.get(q, []))
        rows = set(predicted.get(q, []))
        tp = _found(items, rows)
        gold_rows: Set[int] = set().union(*items) if items else set()
        fp = len(rows - gold_rows)
        fn = len(items) - tp
        out[q] = Confusion(tp, fp, fn, n_sources - tp - fp - fn)
    return out


def link_scores(per_query: Mapping[Hashable, Confusion], gold: Gold) -> Dict[str, float]:
    """Aggregate per-query confusions as the Loci Similes evaluator does.

    per_query (Mapping): query -> Confusion (all queries).
    gold (Gold): query -> gold items.
    RETURNS (Dict[str, float]): precision/recall/f1 (micro, over queries with gold),
        macro_precision/macro_recall/macro_f1, all_precision/all_recall/all_f1 (micro,
        over all queries), smr/fpr/fnr (all queries), and the pooled tp/fp/fn/tn.
    """
    with_gold = [q for q in per_query if gold.get(q)]
    micro = Confusion()
    for q in with_gold:
        c = per_query[q]
        micro.tp, micro.fp, micro.fn = micro.tp + c.tp, micro.fp + c.fp, micro.fn + c.fn
    out = dict(precision_recall_f1(micro))
    macro: List[Dict[str, float]] = [precision_recall_f1(per_query[q]) for q in with_gold]
    for name in ("precision", "recall", "f1"):
        out[f"macro_{name}"] = sum(m[name] for m in macro) / len(macro) if macro else 0.0
    pooled = Confusion()
    for c in per_query.values():
        pooled.tp += c.tp
        pooled.fp += c.fp
        pooled.fn += c.fn
        pooled.tn += c.tn
    out.update({f"all_{k}": v for k, v in precision_recall_f1(pooled).items()})
    out.update(error_rates(pooled))
    out.update({"tp": pooled.tp, "fp": pooled.fp, "fn": pooled.fn, "tn": pooled.tn})
    return out


SCORE_KS = (1, 5, 10)


def _gold_sources(doc: Any) -> Set[str]:
    return {
        str(link["source_id"])
        for link in doc.user_data.get("links", [])
        if int(link.get("label", 1)) == 1
    }


def _predicted_ranks(doc: Any, spans_key: str) -> Dict[str, int]:
    """The best rank of each source linked from any span of the doc."""
    ranks: Dict[str, int] = {}
    for span in doc.spans[spans_key] if spans_key in doc.spans else []:
        for link in span._.intertext_links or []:
            source = str(link["source_id"])
            ranks[source] = min(ranks.get(source, link["rank"]), link["rank"])
    return ranks


def score_intertext(
    examples: Iterable[Any],
    spans_key: str = "intertext",
    ks: Sequence[int] = SCORE_KS,
    **cfg: Any,
) -> Dict[str, float]:
    """Score predicted intertext links against the gold links of the reference docs
    (``user_data["links"]``, label 1, as the Loci Similes reader writes them).

    P/R/F1 (spaCy's PRFScore) count (query, source) pairs over all examples; recall@k
    and MRR are over the queries with gold links, a gold source counting as found at
    the rank of its link (a source that is not linked is not found).

    examples (Iterable[Example]): predicted docs with ``intertext_matcher``'s spans.
    spans_key (str): the matcher's span group.
    ks (Sequence[int]): the cut-offs of recall@k.
    cfg: the component's other settings (ignored).
    RETURNS (Dict[str, float]): intertext_p, intertext_r, intertext_f, intertext_mrr
        and intertext_recall@K per cut-off.
    """
    prf = PRFScore()
    found: Dict[int, int] = {k: 0 for k in ks}
    n_gold = 0
    reciprocal: List[float] = []
    for eg in examples:
        gold = _gold_sources(eg.reference)
        ranks = _predicted_ranks(eg.predicted, spans_key)
        prf.tp += len(gold & set(ranks))
        prf.fp += len(set(ranks) - gold)
        prf.fn += len(gold - set(ranks))
        if not gold:
            continue
        n_gold += len(gold)
        for k in ks:
            found[k] += sum(1 for source in gold if ranks.get(source, k + 1) <= k)
        best = min((ranks[source] for source in gold if source in ranks), default=None)
        reciprocal.append(1.0 / best if best else 0.0)
    scores = {
        "intertext_p": prf.precision,
        "intertext_r": prf.recall,
        "intertext_f": prf.fscore,
        "intertext_mrr": sum(reciprocal) / len(reciprocal) if reciprocal else 0.0,
    }
    for k in ks:
        scores[f"intertext_recall@{k}"] = found[k] / n_gold if n_gold else 0.0
    return scores


@registry.scorers("spacy-rhetoric.intertext_scorer.v1")
def make_intertext_scorer() -> Callable:
    """RETURNS (Callable): the intertext scorer, ``score_intertext``."""
    return score_intertext
