"""Judged reports on running text (``benchmarks/data/figures-judged*``) as the scorer's
guard: web text and news must not be flooded by figures tuned on orations.

Each judged sample (``GUARD_SAMPLES``) holds reports of an earlier ``figure_finder`` on
running text (UD English-EWT, German GSD, PUD and LIT, Tesserae, PSE-I), each labelled
right, partly or wrong by a blind reader (``benchmarks/figures_judge.py``), with the
text of its doc. The reports are read again through the base pipeline; the candidate
of the same figure that overlaps the judged extent most (token Jaccard at least
``MIN_OVERLAP``) takes its label (right or partly: a figure) and the new scorer's
probability.

**The guard** (``guard_thresholds``; English and German, whose running text is web text
and news, ``GUARD_LANGUAGES``): among the judged candidates of a figure that score at or
above its threshold, the share of figures, with one figure and one non-figure added
(Laplace: two wrong reports are evidence, not too few to tell), must reach
``GUARD_SHARE``; where it does not, the threshold rises to the lowest value at which it
does or no judged candidate is left above it. The thresholds chosen for precision on
the corpus dev halves only ever rise.
"""

import json
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from spacy.language import Language

from .component import FigureFinder
from .model import FigureScorer

JUDGED_ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
# the samples the guard reads; the samples judged on the shipped scorer
# (figures-judged-0.8-en, -de) are its test and stay out
GUARD_SAMPLES = (
    "figures-judged",
    "figures-judged-fresh",
    "figures-judged-fresh-0.7",
    "figures-judged-third-en",
    "figures-judged-fourth-en",
    "figures-judged-precision-en",
    "figures-judged-precision-de",
)
POSITIVE = ("right", "partly")
LABELS = POSITIVE + ("wrong",)
GUARD_LANGUAGES = ("en", "de")
GUARD_SHARE = 0.6  # right or partly, the running-text guard
MIN_OVERLAP = 0.5


def judged_dirs(root: Optional[Path] = None, names: Sequence[str] = GUARD_SAMPLES) -> List[Path]:
    """RETURNS (List[Path]): the judged samples ``names`` under ``root`` (default: the
    repository's ``benchmarks/data``) that hold a key and labels.

    RAISES FileNotFoundError: a named sample is missing or incomplete.
    """
    base = Path(root) if root is not None else JUDGED_ROOT
    out = []
    for name in names:
        folder = base / name
        if not ((folder / "key.json").is_file() and (folder / "labels.json").is_file()):
            raise FileNotFoundError(
                f"figures: judged sample {folder} (key.json, labels.json) not found"
            )
        out.append(folder)
    return out


def read_judged(
    dirs: Iterable[Path], langs: Sequence[str] = GUARD_LANGUAGES
) -> Tuple[List[Dict[str, Any]], Dict[str, int]]:
    """The labelled reports of the judged samples in ``langs``.

    RETURNS: the items (lang, figure, tokens, doc_text, positive, sample), and counts of
        what was skipped: items without a doc text (a key written before they were
        kept), unlabelled or wrongly labelled items.
    RAISES ValueError: a key or labels file that is not JSON.
    """
    items: List[Dict[str, Any]] = []
    skipped = {"no_doc_text": 0, "unlabelled": 0}
    for folder in dirs:
        try:
            key = json.loads((folder / "key.json").read_text(encoding="utf8"))
            labels = json.loads((folder / "labels.json").read_text(encoding="utf8"))
        except ValueError as err:
            raise ValueError(f"figures: judged sample {folder} is not JSON: {err}") from None
        for item_id, item in key.get("items", {}).items():
            if item.get("lang") not in langs:
                continue
            label = str(labels.get(item_id, "")).strip().lower()
            if label not in LABELS:
                skipped["unlabelled"] += 1
                continue
            if not item.get("doc_text"):
                skipped["no_doc_text"] += 1
                continue
            items.append(
                {
                    "lang": item["lang"],
                    "figure": item["label"],
                    "tokens": (int(item["tokens"][0]), int(item["tokens"][1])),
                    "doc_text": item["doc_text"],
                    "positive": label in POSITIVE,
                    "sample": folder.name,
                }
            )
    return items, skipped


def _overlap(a: Tuple[int, int], b: Tuple[int, int]) -> float:
    inter = min(a[1], b[1]) - max(a[0], b[0])
    if inter <= 0:
        return 0.0
    return inter / (max(a[1], b[1]) - min(a[0], b[0]))


def score_judged(
    items: Sequence[Dict[str, Any]],
    nlps: Dict[str, Language],
    finders: Dict[str, FigureFinder],
    scorer: FigureScorer,
) -> List[Dict[str, Any]]:
    """Each judged item with the probability the scorer gives its candidate now (None:
    the rules no longer propose it).

    RETURNS (List[Dict[str, Any]]): the items with ``score`` added.
    """
    out: List[Dict[str, Any]] = []
    for lang in sorted({item["lang"] for item in items}):
        mine = [item for item in items if item["lang"] == lang]
        texts = sorted({item["doc_text"] for item in mine})
        docs = dict(zip(texts, nlps[lang].pipe(texts)))
        found: Dict[str, List[Tuple[str, Tuple[int, int], float]]] = {}
        for text, doc in docs.items():
            candidates, X, _ = finders[lang].find(doc)
            scores = scorer.score([c.figure for c in candidates], X, lang) if candidates else []
            found[text] = [
                (c.figure, (c.start, c.end), float(s)) for c, s in zip(candidates, scores)
            ]
        for item in mine:
            best: Optional[Tuple[float, float]] = None  # (overlap, score)
            for figure, extent, value in found[item["doc_text"]]:
                if figure != item["figure"]:
                    continue
                share = _overlap(extent, item["tokens"])
                if share >= MIN_OVERLAP and (best is None or share > best[0]):
                    best = (share, value)
            out.append(dict(item, score=None if best is None else best[1]))
    return out


def guard_holds(
    scored: Sequence[Tuple[float, bool]], value: float, share: float = GUARD_SHARE
) -> bool:
    """Whether the judged candidates at or above ``value`` are figures often enough:
    none, or (figures + 1) / (candidates + 2) >= ``share``."""
    above = [positive for score, positive in scored if score >= value]
    return not above or (sum(above) + 1) / (len(above) + 2) >= share


def guard_threshold(
    threshold: float, scored: Sequence[Tuple[float, bool]], share: float = GUARD_SHARE
) -> float:
    """The lowest threshold >= ``threshold`` at which the guard holds (``guard_holds``).

    scored: (probability, is a figure) of the judged candidates of one figure.
    RETURNS (float): the threshold (unchanged where the guard holds).
    """
    if guard_holds(scored, threshold, share):
        return threshold
    # just above each judged score: the candidates above it drop one by one
    values = sorted({score for score, _ in scored if score >= threshold})
    for value in values:
        raised = value + 1e-6
        if guard_holds(scored, raised, share):
            return raised
    return values[-1] + 1e-6  # unreachable: above every score none is left


def guard_thresholds(
    thresholds: Dict[str, float],
    scored: Sequence[Dict[str, Any]],
    lang: str,
) -> Tuple[Dict[str, float], Dict[str, Dict[str, Any]]]:
    """Apply the guard to one language's thresholds (see the module docstring).

    RETURNS: the thresholds, and per figure with judged candidates what the guard saw.
    """
    out = dict(thresholds)
    report: Dict[str, Dict[str, Any]] = {}
    for figure, threshold in thresholds.items():
        rows = [
            (item["score"], item["positive"])
            for item in scored
            if item["lang"] == lang and item["figure"] == figure and item["score"] is not None
        ]
        lost = sum(
            1
            for item in scored
            if item["lang"] == lang and item["figure"] == figure and item["score"] is None
        )
        if not rows and not lost:
            continue
        above = [p for s, p in rows if s >= threshold]
        raised = guard_threshold(threshold, rows) if threshold <= 1.0 else threshold
        after = [p for s, p in rows if s >= raised]
        out[figure] = raised
        report[figure] = {
            "judged": len(rows) + lost,
            "no_longer_proposed": lost,
            "figures_judged": sum(p for _, p in rows),
            "reported_before": len(above),
            "right_or_partly_before": round(sum(above) / len(above), 4) if above else None,
            "threshold": round(raised, 6) if raised <= 1.0 else raised,
            "raised": raised > threshold,
            "reported_after": len(after),
            "right_or_partly_after": round(sum(after) / len(after), 4) if after else None,
        }
    return out, report
