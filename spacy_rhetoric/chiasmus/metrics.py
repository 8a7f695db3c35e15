"""Chiasmus metrics: average precision of the candidate ranking, and precision, recall
and F1 of the candidates at the threshold.

Average precision follows the step-wise definition (as scikit-learn's
``average_precision_score``): with the candidates ranked by score and ties forming one
step, ``AP = sum_i (R_i - R_{i-1}) * P_i`` over the distinct scores. The recall counts
every gold chiasmus, including those that were never ranked (not suggested), so a
missed chiasmus lowers AP instead of vanishing from it.
"""

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.scorer import PRFScore
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from .component import DEFAULT_POSITIVE_LABELS
from .spans import POSITIONS_ATTR, SCORES_ATTR, gold_candidates

Positions = Tuple[int, ...]


def average_precision(
    scores: Sequence[float], relevant: Sequence[bool], n_relevant: Optional[int] = None
) -> float:
    """Average precision of a ranking.

    scores (Sequence[float]): one score per ranked item (higher first).
    relevant (Sequence[bool]): whether each item is relevant.
    n_relevant (Optional[int]): the number of relevant items in all, ranked or not
        (default: those in ``relevant``).
    RETURNS (float): the AP; 0.0 when there is nothing relevant.
    """
    scores = numpy.asarray(scores, dtype="float64").reshape(-1)
    relevant = numpy.asarray(relevant, dtype=bool).reshape(-1)
    if len(scores) != len(relevant):
        raise ValueError(f"average_precision: {len(scores)} scores but {len(relevant)} labels")
    total = int(relevant.sum()) if n_relevant is None else int(n_relevant)
    if total < int(relevant.sum()):
        raise ValueError(f"average_precision: n_relevant={total} < {int(relevant.sum())} ranked")
    if total == 0 or len(scores) == 0:
        return 0.0
    order = numpy.argsort(-scores, kind="stable")
    scores, relevant = scores[order], relevant[order]
    # the last position of every run of equal scores closes one step
    ends = numpy.flatnonzero(numpy.r_[scores[1:] != scores[:-1], True])
    hits = numpy.cumsum(relevant)[ends]
    precision = hits / (ends + 1)
    recall = hits / total
    return float(numpy.sum(numpy.diff(numpy.r_[0.0, recall]) * precision))


def _to_predicted(positions: Positions, reference: Doc, predicted: Doc) -> Optional[Positions]:
    """Map reference token positions to the predicted doc (via character offsets)."""
    if reference is predicted or (
        len(reference) == len(predicted)
        and all(a.idx == b.idx and len(a) == len(b) for a, b in zip(reference, predicted))
    ):
        return positions
    mapped = []
    for i in positions:
        token = reference[i]
        span = predicted.char_span(token.idx, token.idx + len(token), alignment_mode="expand")
        if span is None or len(span) != 1:
            return None
        mapped.append(span.start)
    return tuple(mapped)


def _scored(doc: Doc, keys: Sequence[Optional[str]]) -> List[Tuple[Positions, float]]:
    for key in keys:
        if key and key in doc.spans and SCORES_ATTR in doc.spans[key].attrs:
            attrs = doc.spans[key].attrs
            scores, positions = attrs[SCORES_ATTR], attrs[POSITIONS_ATTR]
            return [(tuple(positions[i]), float(s)) for i, s in scores.items()]
    return []


def chiasmus_ranking(
    examples: Iterable[Example],
    spans_key: str = "chiasmus",
    support_key: str = "chiasmus_support",
    candidates_key: Optional[str] = "chiasmus_candidates",
    positive_labels: Iterable[str] = DEFAULT_POSITIVE_LABELS,
    ignored_labels: Iterable[str] = (),
    evaluate_annotated_only: bool = True,
) -> Tuple[numpy.ndarray, numpy.ndarray, int]:
    """The pooled ranking of the predicted candidates of all examples.

    A predicted candidate is relevant if its supporting positions equal those of a gold
    candidate with a positive label. Candidates matching a gold candidate with an
    ignored label are left out; with ``evaluate_annotated_only``, so are candidates
    that match no gold candidate at all.

    RETURNS (Tuple[numpy.ndarray, numpy.ndarray, int]): scores, relevance and the
        number of gold positives.
    """
    positive = set(positive_labels)
    ignored = set(ignored_labels)
    scores: List[float] = []
    relevant: List[bool] = []
    n_gold = 0
    for eg in examples:
        gold: Dict[Positions, str] = {}
        for positions, label in gold_candidates(eg.reference, spans_key, support_key):
            mapped = _to_predicted(positions, eg.reference, eg.predicted)
            if mapped is not None:
                # a candidate annotated twice counts once, positive if either is
                if gold.get(mapped) not in positive:
                    gold[mapped] = label
            elif label in positive:
                n_gold += 1  # cannot be found: counts as missed
        n_gold += sum(label in positive for label in gold.values())
        for positions, score in _scored(eg.predicted, (candidates_key, spans_key)):
            label = gold.get(positions)
            if label in ignored or (evaluate_annotated_only and label is None):
                continue
            scores.append(score)
            relevant.append(label in positive)
    return numpy.asarray(scores, dtype="float64"), numpy.asarray(relevant, dtype=bool), n_gold


def score_chiasmus(
    examples: Iterable[Example],
    spans_key: str = "chiasmus",
    support_key: str = "chiasmus_support",
    candidates_key: Optional[str] = "chiasmus_candidates",
    positive_labels: Iterable[str] = DEFAULT_POSITIVE_LABELS,
    ignored_labels: Iterable[str] = (),
    threshold: float = 0.5,
    evaluate_annotated_only: bool = True,
    **kwargs: Any,
) -> Dict[str, float]:
    """Score predicted chiasmus candidates against the annotated ones.

    examples (Iterable[Example]): predicted docs from chiasmus_finder, reference docs
        with annotated candidates.
    spans_key, support_key, candidates_key (str): the component's span groups.
    positive_labels (Iterable[str]): the gold labels of chiasmi.
    ignored_labels (Iterable[str]): gold labels left out of the evaluation.
    threshold (float): the score from which a candidate counts as predicted.
    evaluate_annotated_only (bool): rank only the candidates annotated in the gold data.
    RETURNS (Dict[str, float]): ``chiasmus_ap``, ``chiasmus_p``, ``chiasmus_r``, ``chiasmus_f``.
    """
    scores, relevant, n_gold = chiasmus_ranking(
        examples,
        spans_key,
        support_key,
        candidates_key,
        positive_labels,
        ignored_labels,
        evaluate_annotated_only,
    )
    chosen = scores >= threshold
    hits = int((chosen & relevant).sum())
    prf = PRFScore(tp=hits, fp=int(chosen.sum()) - hits, fn=n_gold - hits)
    p, r, f = prf.precision, prf.recall, prf.fscore
    return {
        "chiasmus_ap": average_precision(scores, relevant, n_gold),
        "chiasmus_p": p,
        "chiasmus_r": r,
        "chiasmus_f": f,
    }


@registry.scorers("spacy-rhetoric.chiasmus_scorer.v1")
def make_chiasmus_scorer():
    """RETURNS (Callable): the chiasmus scorer, ``score_chiasmus``."""
    return score_chiasmus
