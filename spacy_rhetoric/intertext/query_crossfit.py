"""Query vectors for one test fold of cross-validation, from query encoders that never
saw the queries they encode (``query_encoder``).

The fold's test queries are encoded by an encoder trained on every other fold. The
training queries need vectors too (the fusion and the reranker are fitted on their
candidates), and the vectors the fold's encoder gives its own training queries are
better than any it gives an unseen query: a reranker fitted on them would trust the
dense channel too much. So each training query is encoded by an inner encoder trained
on the folds other than the test fold and its own (cross-fitting): with 5 folds, 1 + 4
encoders per test fold, none of which saw the test fold's links.
"""

import time
from typing import Any, Dict, List, Optional, Sequence, Set

import numpy as np

from .query_encoder import QueryEncoder, QueryTraining


def _train_and_encode(
    encoder: QueryEncoder,
    states: Dict[str, Any],
    train: Sequence[str],
    gold_rows: Dict[str, Set[int]],
    encode: Sequence[str],
    passages: np.ndarray,
    training: QueryTraining,
    weights: Optional[Dict[str, float]] = None,
) -> Dict[str, np.ndarray]:
    encoder.reset()
    encoder.fit(
        [states[q] for q in train],
        [gold_rows.get(q, set()) for q in train],
        passages,
        training,
        weights=[weights.get(q, 1.0) for q in train] if weights is not None else None,
    )
    vectors = encoder.encode(list(encode), [states[q] for q in encode])
    return dict(zip(encode, vectors))


def out_of_fold_vectors(
    encoder: QueryEncoder,
    states: Dict[str, Any],
    by_fold: Sequence[Sequence[str]],
    gold_rows: Dict[str, Set[int]],
    passages: np.ndarray,
    training: QueryTraining,
    weights: Optional[Dict[str, float]] = None,
) -> Dict[str, np.ndarray]:
    """Each fold's queries encoded by an encoder trained on the other folds' links
    (``weights``: query -> its weight in the loss, default 1).

    RETURNS (Dict[str, np.ndarray]): query -> unit vector, for every query of the folds.
    """
    vectors: Dict[str, np.ndarray] = {}
    for held in range(len(by_fold)):
        train = [q for f, queries in enumerate(by_fold) if f != held for q in queries]
        vectors.update(
            _train_and_encode(
                encoder, states, train, gold_rows, by_fold[held], passages, training, weights
            )
        )
    return vectors


def _check_grouped(by_fold: Sequence[Sequence[str]]) -> None:
    seen: Dict[str, int] = {}
    for f, queries in enumerate(by_fold):
        for q in queries:
            if q in seen and seen[q] != f:
                raise ValueError(
                    "query encoder cross-fitting needs each query in one fold (the grouped "
                    f"protocol); '{q}' is in folds {seen[q]} and {f}"
                )
            seen[q] = f


def crossfit_vectors(
    encoder: QueryEncoder,
    states: Dict[str, Any],
    by_fold: List[List[str]],
    gold_rows: Dict[str, Set[int]],
    test_fold: int,
    passages: np.ndarray,
    training: QueryTraining,
    timings: Optional[Dict[str, float]] = None,
    weights: Optional[Dict[str, float]] = None,
) -> Dict[str, np.ndarray]:
    """Every query's vector for one test fold (see the module docstring).

    encoder (QueryEncoder): reset and retrained for each inner fold.
    states (Dict[str, Any]): query -> its ``lower_states``.
    by_fold (List[List[str]]): the queries of each fold (grouped: each query in one).
    gold_rows (Dict[str, Set[int]]): query -> the index rows of all its gold links.
    test_fold (int): the fold being evaluated.
    passages (np.ndarray): the index's unit vectors.
    training (QueryTraining): the training settings.
    timings (Optional[Dict[str, float]]): ``query_encoder_s`` is added to it.
    weights (Optional[Dict[str, float]]): query -> its weight in the loss (default 1).
    RETURNS (Dict[str, np.ndarray]): query -> unit vector, for every query of every fold.
    """
    _check_grouped(by_fold)
    start = time.perf_counter()
    others = [by_fold[f] for f in range(len(by_fold)) if f != test_fold]
    train = [q for queries in others for q in queries]
    vectors = _train_and_encode(
        encoder, states, train, gold_rows, by_fold[test_fold], passages, training, weights
    )
    vectors.update(
        out_of_fold_vectors(encoder, states, others, gold_rows, passages, training, weights)
    )
    if timings is not None:
        timings["query_encoder_s"] = timings.get("query_encoder_s", 0.0) + (
            time.perf_counter() - start
        )
    return vectors
