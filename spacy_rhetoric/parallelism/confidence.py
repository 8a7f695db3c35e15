"""How sure the parallelism tagger is of what it finds, and what it leaves for review.

Every decoded branch gets three numbers from the head (``network.decode``):

* ``crf``: the posterior probability, under the decoding CRF (an ensemble's averaged
  one), that exactly these tokens form one branch: the mass of every tag path that opens
  a branch at its first token, continues it to its last and closes it there
  (``ConstrainedCRF.segment_log_probs``, forward-backward over the constrained lattice);
* ``agreement``: the mean of that probability under each ensemble member's own CRF
  (equal to ``crf`` for a single head);
* ``link``: for a later branch, the probability of the antecedent the linker chose
  (the softmax of the members' averaged log-probabilities over its candidates).

They are combined (the rule chosen on ASP and PSE-I dev, benchmarks/parallelism_review.py):

* a branch's raw confidence is the geometric mean of ``crf`` and ``agreement``;
* a parallelism's raw confidence is its weakest branch's raw confidence times its
  weakest link's probability (a parallelism is exact only if every branch and every
  link is).

A calibration map, fitted on dev data and stored in the tagger's cfg (``calibration``),
turns each raw confidence into a probability: for a branch, that it is exactly a gold
branch; for a parallelism, that it is exactly a gold parallelism (EPM). The map is
Platt scaling, ``sigmoid(a * logit(raw) + b)`` with ``a > 0`` (monotone), fitted with
``spacy_rhetoric.logistic``; uncalibrated pipelines report the raw confidences.

The review list: parallelisms that are not reported, from two sources (``SOURCES``):
the parallelisms of a second decode with a larger outside penalty (``review_penalty``,
a costlier "O": more and longer branches), and every two neighbouring branches of a
parallelism of three or more branches (reported or of the second decode) taken as a
parallelism of their own (the tagger often joins two gold parallelisms into one). Each
source has its own calibration map, so that their scores compare; the candidates are
ranked by calibrated score, kept down to ``review_min_score`` and at most
``review_per_1000`` per 1,000 tokens.
"""

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy

from ..logistic import LogisticRegression

# a raw confidence is clipped to [EPS, 1 - EPS] before its logit is taken
EPS = 1e-6
# without a calibration: the review decode's penalty and the lowest score kept
DEFAULT_REVIEW_PENALTY = 2.0
DEFAULT_REVIEW_MIN_SCORE = 0.0
# review candidates kept per 1,000 tokens at most (the component's default setting)
DEFAULT_REVIEW_PER_1000 = 40.0
N_BINS = 10

# how a review candidate was found: a parallelism of the review decode, or two
# neighbouring branches of a parallelism of three or more (reported or of the review
# decode) taken as a parallelism of their own
SOURCES = ("decode", "split")
# per branch: (crf, agreement, link or None)
BranchEvidence = Tuple[float, float, Optional[float]]


def branch_raw(evidence: BranchEvidence) -> float:
    """RETURNS (float): a branch's raw confidence, the geometric mean of its CRF
    probability and the members' agreement."""
    crf, agreement, _ = evidence
    return math.sqrt(max(crf, 0.0) * max(agreement, 0.0))


def parallelism_raw(evidence: Sequence[BranchEvidence]) -> float:
    """RETURNS (float): a parallelism's raw confidence: its weakest branch's raw
    confidence times its weakest link's probability (1 without links)."""
    links = [link for _, _, link in evidence if link is not None]
    return min(branch_raw(e) for e in evidence) * (min(links) if links else 1.0)


def _logit(values: Any) -> numpy.ndarray:
    p = numpy.clip(numpy.asarray(values, dtype="float64"), EPS, 1 - EPS)
    return numpy.log(p) - numpy.log1p(-p)


def fit_platt(raw: Sequence[float], gold: Sequence[bool]) -> Dict[str, float]:
    """Fit ``sigmoid(a * logit(raw) + b)`` to 0/1 outcomes (Platt scaling).

    raw (Sequence[float]): raw confidences in [0, 1].
    gold (Sequence[bool]): whether each was right.
    RETURNS (Dict[str, float]): {"a": slope, "b": intercept, "n": examples}.
    RAISES ValueError: fewer than two examples of either outcome, or a slope <= 0 (the
        raw confidence does not rank the outcomes: no monotone map fits).
    """
    y = numpy.asarray(gold, dtype="float64")
    if len(y) < 4 or y.sum() < 2 or (1 - y).sum() < 2:
        raise ValueError(
            f"calibration needs at least 2 right and 2 wrong predictions, got "
            f"{int(y.sum())} right of {len(y)}"
        )
    model = LogisticRegression(C=1e4).fit(_logit(raw)[:, None], y)
    a, b = model.linear_weights().tolist()
    if a <= 0:
        raise ValueError(f"calibration: the raw confidence does not rank the outcomes (a = {a})")
    return {"a": float(a), "b": float(b), "n": int(len(y))}


def apply_platt(platt: Optional[Dict[str, float]], raw: float) -> float:
    """RETURNS (float): the calibrated probability of a raw confidence (the raw
    confidence itself without a map)."""
    if not platt:
        return float(raw)
    z = platt["a"] * float(_logit([raw])[0]) + platt["b"]
    return float(1.0 / (1.0 + math.exp(-z))) if z > -700 else 0.0


def reliability(scores: Sequence[float], gold: Sequence[bool], n_bins: int = N_BINS) -> Dict:
    """The reliability table and expected calibration error of probabilities.

    scores (Sequence[float]): predicted probabilities in [0, 1].
    gold (Sequence[bool]): whether each was right.
    n_bins (int): equal-width bins over [0, 1].
    RETURNS (Dict): {"ece": ..., "n": ..., "bins": [{"lo", "hi", "n", "confidence",
        "accuracy"}, ...]} (empty bins listed with n = 0); ECE is the mean over
        predictions of |accuracy - confidence| of their bin.
    """
    p = numpy.asarray(scores, dtype="float64")
    y = numpy.asarray(gold, dtype="float64")
    index = numpy.minimum((p * n_bins).astype(int), n_bins - 1)
    bins, ece = [], 0.0
    for k in range(n_bins):
        chosen = index == k
        n = int(chosen.sum())
        row = {"lo": k / n_bins, "hi": (k + 1) / n_bins, "n": n}
        if n:
            row["confidence"] = round(float(p[chosen].mean()), 4)
            row["accuracy"] = round(float(y[chosen].mean()), 4)
            ece += n * abs(row["accuracy"] - row["confidence"])
        bins.append(row)
    return {"ece": round(ece / max(len(p), 1), 4), "n": int(len(p)), "bins": bins}


def review_bound(n_tokens: int, review_per_1000: Optional[float]) -> Optional[int]:
    """RETURNS (Optional[int]): how many review candidates a doc of ``n_tokens`` keeps
    at most (None: no bound)."""
    if review_per_1000 is None:
        return None
    return math.ceil(review_per_1000 * n_tokens / 1000 - 1e-9)


def calibration_settings(calibration: Optional[Dict[str, Any]]) -> Tuple[float, float]:
    """RETURNS (Tuple[float, float]): the review decode's penalty and the lowest
    calibrated score a review candidate may have, from a calibration (defaults without)."""
    calibration = calibration or {}
    return (
        float(calibration.get("review_penalty", DEFAULT_REVIEW_PENALTY)),
        float(calibration.get("review_min_score", DEFAULT_REVIEW_MIN_SCORE)),
    )


def score_parallelisms(
    items: Sequence[Tuple[Sequence[Tuple[int, int]], Sequence[BranchEvidence]]],
    calibration: Optional[Dict[str, Any]],
    source: Optional[str] = None,
) -> List[Tuple[float, List[float]]]:
    """Calibrated scores of parallelisms and their branches.

    items (Sequence): per parallelism, its branches and their evidence.
    calibration (Optional[Dict[str, Any]]): the tagger's ``calibration`` (or None).
    source (Optional[str]): None for reported parallelisms; for review candidates, how
        they were found (one of SOURCES): each source has its own map.
    RETURNS (List[Tuple[float, List[float]]]): per parallelism, its score and its
        branches' scores, each in [0, 1].
    """
    calibration = calibration or {}
    platt = calibration.get("parallelism")
    if source is not None:
        platt = (calibration.get("review") or {}).get(source, platt)
    result = []
    for _, evidence in items:
        branches = [apply_platt(calibration.get("branch"), branch_raw(e)) for e in evidence]
        score = apply_platt(platt, parallelism_raw(evidence))
        result.append((score, branches))
    return result


def evidence_for(
    table: Dict[int, List[Tuple[int, int, BranchEvidence]]],
    stratum: int,
    start: int,
    end: int,
) -> BranchEvidence:
    """The evidence of a decoded branch, found by its stratum and tokens: the branch
    itself, or the decoded branch that holds it (tidying trims whitespace tokens).

    table (Dict): per stratum, (start, end, evidence) of the decoded branches.
    RETURNS (BranchEvidence): (crf, agreement, link); (0, 0, None) if none holds it.
    """
    best = None
    for a, b, evidence in table.get(stratum, ()):
        if (a, b) == (start, end):
            return evidence
        if a <= start and end <= b and best is None:
            best = evidence
    return best if best is not None else (0.0, 0.0, None)
