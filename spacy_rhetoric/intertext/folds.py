"""Cross-validation folds over the Loci Similes benchmark (``benchmark``), under two
protocols of 5 folds each:

* ``shipped``: the fold ids of labels.csv. 54 queries have links in several folds, so
  a test query may have been seen in training with another link (leak).
* ``grouped``: every query segment in one fold only (the lowest fold id of its links),
  so no test query is ever trained on.

Distractor queries have no gold links and keep the fold the benchmark spread them
over. ``split_fold`` gives a test fold's queries and the training queries and links
beside them.
"""

from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Set

from .benchmark import N_FOLDS, Benchmark, Link


@dataclass
class Fold:
    """One test fold: its test queries and what may be trained on."""

    number: int
    test: List[str]
    train_queries: List[str]
    train_links: List[Any]
    train_gold: Dict[str, Set[int]]  # query -> rows of its training links
    train_items: Dict[str, List[Set[int]]]  # query -> its training links' rows, per link


def query_folds(links: Sequence[Link], protocol: str) -> Dict[str, Set[int]]:
    """The test folds of each gold query under a protocol."""
    folds: Dict[str, Set[int]] = {}
    for link in links:
        folds.setdefault(link.query, set()).add(link.fold)
    if protocol == "grouped":
        return {q: {min(f)} for q, f in folds.items()}
    if protocol == "shipped":
        return folds
    raise ValueError(f"intertext evaluate: unknown protocol '{protocol}'; use shipped or grouped")


def fold_queries(bench: Benchmark, protocol: str) -> List[List[str]]:
    """RETURNS (List[List[str]]): the queries of each fold (gold folds; distractors by
    their own fold)."""
    gold_folds = query_folds(bench.links, protocol)
    by_fold: List[List[str]] = [[] for _ in range(N_FOLDS)]
    for q in bench.query_ids:
        for f in gold_folds.get(q, {bench.query_fold["distractor"].get(q, 0)}):
            by_fold[f].append(q)
    return by_fold


def split_fold(
    bench: Benchmark,
    by_fold: List[List[str]],
    f: int,
    protocol: str,
    link_rows: Dict[int, Set[int]],
) -> Fold:
    """The test queries of fold ``f`` and the training queries and links beside them."""
    test = by_fold[f]
    others = {q for fq in range(N_FOLDS) if fq != f for q in by_fold[fq]}
    if protocol == "shipped":
        # the shipped folds: train on every link of the other folds, even when its
        # query is also a test query (the leak this protocol reports)
        train_links = [link for link in bench.links if link.fold != f]
        train_queries = sorted(others)
    else:
        train_queries = sorted(others - set(test))
        train_set = set(train_queries)
        train_links = [link for link in bench.links if link.query in train_set]
    train_gold: Dict[str, Set[int]] = {}
    for link in train_links:
        train_gold.setdefault(link.query, set()).update(link_rows[link.pair_id])
    train_items = {
        q: [link_rows[x.pair_id] for x in train_links if x.query == q] for q in train_queries
    }
    return Fold(f, test, train_queries, train_links, train_gold, train_items)
