"""Calibrate a parallelism tagger's scores and choose its review list on dev data.

``collect`` runs a pipeline over gold docs with its calibration taken away (so the
scores it writes are the raw confidences of confidence.py) and the review list
unbounded, once per review penalty, and records for every reported and every review
parallelism its raw score and whether it is exactly a gold one. ``fit_maps`` fits the
Platt maps (branches, reported parallelisms, each review source), ``choose_review``
picks the review decode's penalty and the lowest calibrated score (the operating point);
``calibrate`` does both and returns what goes into the tagger's cfg (``calibration``).
"""

import copy
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from ..corpora.parallelisms import get_parallelisms
from .component import ParallelismTagger
from .confidence import SOURCES, apply_platt, fit_platt, reliability, review_bound
from .evaluate import predict_docs
from .metrics import score_parallelism
from .scores import BRANCH_SCORES_ATTR, SCORES_ATTR, SOURCES_ATTR

# the review decode's penalties tried, the lowest raw scores tried and the bound on the
# review list's length relative to the reports (the target)
PENALTY_GRID = (0.5, 1.0, 2.0, 4.0)
MIN_SCORE_GRID = (0.0, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.2)
MAX_REVIEW_RATIO = 3.0

Offsets = Tuple[Tuple[int, int], ...]


def tagger_of(nlp: Language, component: Optional[str] = None) -> ParallelismTagger:
    """RETURNS (ParallelismTagger): the pipeline's parallelism tagger.
    RAISES ValueError: the pipeline has none."""
    for name, pipe in nlp.pipeline:
        if component in (None, name) and isinstance(pipe, ParallelismTagger):
            return pipe
    raise ValueError(f"the pipeline {nlp.pipe_names} has no parallelism_tagger")


def _found(doc: Doc, key: str, gold: set, gold_branches: set) -> List[Dict[str, Any]]:
    """The scored parallelisms of one group, in its order, with their outcomes."""
    if key not in doc.spans:
        return []
    group = doc.spans[key]
    scores = group.attrs.get(SCORES_ATTR, {})
    branches = group.attrs.get(BRANCH_SCORES_ATTR, {})
    sources = group.attrs.get(SOURCES_ATTR, {})
    rows = []
    for pid, score in scores.items():
        offsets = tuple((int(a), int(b)) for a, b, _ in branches[pid])
        rows.append(
            {
                "offsets": offsets,
                "score": float(score),
                "right": tuple(sorted(offsets)) in gold,
                "source": sources.get(pid),
                "branches": [
                    (float(v), (int(a), int(b)) in gold_branches) for a, b, v in branches[pid]
                ],
            }
        )
    return rows


def collect(
    nlp: Language,
    gold: Sequence[Doc],
    penalties: Iterable[float] = PENALTY_GRID,
    component: Optional[str] = None,
) -> Dict[str, Any]:
    """Raw scores and outcomes of the reported and review parallelisms on gold docs.

    nlp (Language): the pipeline.
    gold (Sequence[Doc]): gold docs (their parallelisms in the tagger's spans key).
    penalties (Iterable[float]): review penalties to decode with.
    component (Optional[str]): the tagger's name (None: the first tagger).
    RETURNS (Dict[str, Any]): {"docs": per doc {"tokens", "gold"}, "scores": the
        reports' EPM P/R/F1 (percent), "reports": per doc
        the reported parallelisms, "review": {penalty: per doc the review parallelisms,
        best first}}; each parallelism {"offsets", "score" (raw), "right" (exactly a
        gold parallelism), "branches": [(raw score, exactly a gold branch)]}.
    """
    tagger = tagger_of(nlp, component)
    saved = (copy.deepcopy(tagger.cfg.get("calibration")), tagger.review_per_1000)
    key, candidates_key = tagger.cfg["spans_key"], tagger.candidates_key or "parallelism_candidates"
    golds = []
    for doc in gold:
        parallelisms = get_parallelisms(doc, key)
        golds.append(
            (
                {tuple(sorted(p.offsets)) for p in parallelisms},
                {b for p in parallelisms for b in p.offsets},
            )
        )
    result: Dict[str, Any] = {
        "docs": [{"tokens": len(doc), "gold": len(g[0])} for doc, g in zip(gold, golds)],
        "review": {},
    }
    try:
        tagger.candidates_key = candidates_key
        tagger.review_per_1000 = None
        for penalty in penalties:
            tagger.cfg["calibration"] = {
                "review_penalty": float(penalty),
                "review_min_score": 0.0,
            }
            predicted = predict_docs(nlp, list(gold))
            if "reports" not in result:
                examples = [Example(p, g) for p, g in zip(predicted, gold, strict=True)]
                scores = score_parallelism(examples, spans_key=key)
                result["scores"] = {
                    part: round(100 * scores[f"parallelism_epm_{part}"], 2) for part in "prf"
                }
                result["reports"] = [
                    _found(doc, key, *g) for doc, g in zip(predicted, golds, strict=True)
                ]
            result["review"][float(penalty)] = [
                _found(doc, candidates_key, *g) for doc, g in zip(predicted, golds, strict=True)
            ]
    finally:
        tagger.cfg["calibration"], tagger.review_per_1000 = saved
    return result


def fit_maps(collected: Dict[str, Any], penalty: float) -> Dict[str, Any]:
    """The Platt maps of one review penalty's collected data: branches (on the reported
    branches), parallelisms (on the reported parallelisms) and, per review source, the
    review candidates (all of them, before any bound); a source with too few right or
    wrong candidates gets none (it then uses the parallelisms' map)."""
    reports = [r for doc in collected["reports"] for r in doc]
    branches = [b for r in reports for b in r["branches"]]
    maps: Dict[str, Any] = {
        "branch": fit_platt([s for s, _ in branches], [r for _, r in branches]),
        "parallelism": fit_platt([r["score"] for r in reports], [r["right"] for r in reports]),
        "review": {},
    }
    for source in SOURCES:
        found = [r for doc in collected["review"][penalty] for r in doc if r["source"] == source]
        try:
            maps["review"][source] = fit_platt(
                [r["score"] for r in found], [r["right"] for r in found]
            )
        except ValueError:
            continue
    return maps


def ranked_review(
    collected: Dict[str, Any],
    penalty: float,
    maps: Dict[str, Any],
    min_score: float,
    review_per_1000: Optional[float],
) -> List[List[Dict[str, Any]]]:
    """Per doc, the review list the tagger writes with these maps: the candidates
    ranked by calibrated score ("calibrated"), kept down to ``min_score`` and within
    the bound."""
    kept = []
    for doc, review in zip(collected["docs"], collected["review"][penalty], strict=True):
        scored = [
            {
                **r,
                "calibrated": apply_platt(
                    maps["review"].get(r["source"], maps["parallelism"]), r["score"]
                ),
            }
            for r in review
        ]
        scored.sort(key=lambda r: (-r["calibrated"], r["offsets"]))
        scored = [r for r in scored if r["calibrated"] >= min_score]
        bound = review_bound(doc["tokens"], review_per_1000)
        kept.append(scored if bound is None else scored[:bound])
    return kept


def review_outcome(
    collected: Dict[str, Any],
    penalty: float,
    maps: Dict[str, Any],
    min_score: float,
    review_per_1000: Optional[float],
) -> Dict[str, float]:
    """What a review list of this operating point gives on collected data.

    RETURNS (Dict[str, float]): reports, review (counts), gold, report_recall,
        recall (of reports + review, exact matches), review_per_1000 (tokens),
        review_ratio (review / reports).
    """
    kept = ranked_review(collected, penalty, maps, min_score, review_per_1000)
    n_reports = sum(len(r) for r in collected["reports"])
    n_review = sum(len(r) for r in kept)
    n_gold = sum(doc["gold"] for doc in collected["docs"])
    tokens = sum(doc["tokens"] for doc in collected["docs"])
    right_reports = sum(r["right"] for doc in collected["reports"] for r in doc)
    right_review = sum(r["right"] for doc in kept for r in doc)
    return {
        "reports": n_reports,
        "review": n_review,
        "gold": n_gold,
        "report_recall": right_reports / max(n_gold, 1),
        "recall": (right_reports + right_review) / max(n_gold, 1),
        "review_per_1000": 1000 * n_review / max(tokens, 1),
        "review_ratio": n_review / max(n_reports, 1),
    }


def choose_review(
    collected: Dict[str, Any],
    review_per_1000: Optional[float],
    max_ratio: float = MAX_REVIEW_RATIO,
) -> Dict[str, Any]:
    """The review operating point: among the penalties and lowest calibrated scores,
    the one with the highest recall of reports + review whose review list is at most
    ``max_ratio`` times the reports (ties: the shorter list, then the smaller penalty).

    RETURNS (Dict[str, Any]): {"review_penalty", "review_min_score", "maps",
        "outcome", "grid"}.
    """
    grid, maps_of = [], {}
    for penalty in collected["review"]:
        maps_of[penalty] = fit_maps(collected, penalty)
        for min_score in MIN_SCORE_GRID:
            outcome = review_outcome(
                collected, penalty, maps_of[penalty], min_score, review_per_1000
            )
            grid.append({"review_penalty": penalty, "review_min_score": min_score, **outcome})
    allowed = [row for row in grid if row["review_ratio"] <= max_ratio] or grid
    best = max(allowed, key=lambda r: (r["recall"], -r["review"], -r["review_penalty"]))
    return {
        "review_penalty": best["review_penalty"],
        "review_min_score": best["review_min_score"],
        "maps": maps_of[best["review_penalty"]],
        "outcome": best,
        "grid": grid,
    }


def outcomes(
    collected: Dict[str, Any],
    penalty: float,
    maps: Dict[str, Any],
    min_score: float,
    review_per_1000: Optional[float],
) -> Dict[str, List[Tuple[float, bool]]]:
    """(calibrated score, right) of the reported branches, the reported parallelisms
    and the kept review parallelisms at an operating point."""
    reports = [r for doc in collected["reports"] for r in doc]
    kept = ranked_review(collected, penalty, maps, min_score, review_per_1000)
    return {
        "branches": [
            (apply_platt(maps["branch"], s), right) for r in reports for s, right in r["branches"]
        ],
        "parallelisms": [
            (apply_platt(maps["parallelism"], r["score"]), r["right"]) for r in reports
        ],
        "review": [(r["calibrated"], r["right"]) for doc in kept for r in doc],
    }


def reliability_of(rows: Dict[str, List[Tuple[float, bool]]]) -> Dict[str, Dict]:
    """Reliability tables (and ECE) of calibrated scores, per population."""
    return {
        name: reliability([s for s, _ in found], [r for _, r in found])
        for name, found in rows.items()
    }


def calibrate(
    nlp: Language,
    gold: Sequence[Doc],
    data: str,
    penalties: Iterable[float] = PENALTY_GRID,
    component: Optional[str] = None,
) -> Dict[str, Any]:
    """Choose the review list's operating point and fit the score maps on dev docs.

    nlp (Language): the pipeline.
    gold (Sequence[Doc]): the dev docs.
    data (str): what they are, for the record (e.g. "ASP dev").
    RETURNS (Dict[str, Any]): {"calibration": what goes into the tagger's cfg,
        "collected": the raw data, "choice": ``choose_review``'s result,
        "reliability": per population its table on the dev docs}.
    """
    tagger = tagger_of(nlp, component)
    collected = collect(nlp, gold, penalties, component)
    choice = choose_review(collected, tagger.review_per_1000)
    maps = choice["maps"]
    rows = outcomes(
        collected,
        choice["review_penalty"],
        maps,
        choice["review_min_score"],
        tagger.review_per_1000,
    )
    calibration = {
        "method": "platt",
        **maps,
        "review_penalty": choice["review_penalty"],
        "review_min_score": choice["review_min_score"],
        "data": data,
    }
    table = reliability_of(rows)
    calibration["ece"] = {name: table[name]["ece"] for name in table}
    return {
        "calibration": calibration,
        "collected": collected,
        "choice": choice,
        "reliability": table,
    }
