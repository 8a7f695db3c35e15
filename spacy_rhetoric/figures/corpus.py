"""The rhetoric corpus (``benchmarks/data/rhetoric-corpus``) as the figure scorer's data.

Its passages are annotated exhaustively, so every candidate the rules propose on them
is labelled: a **positive** where it matches a gold figure of its label
(``metrics.is_match``: same label, its support words overlapping at least two of the
gold support words), else a **negative**. The train halves train the scorer
(``corpus_candidates``); the dev halves choose each figure's threshold per language
(``precision_thresholds``): the lowest threshold at which the reports on dev reach
``TARGET_PRECISION`` (0.80; antithesis and the rhetorical question 0.75, the operating
point of their targets), which finds the most; where no threshold reaches that
precision, the one with the highest dev precision (which finds the most among equals);
a figure whose dev half holds fewer than ``MIN_DEV_INSTANCES`` (5) gold instances in a
language gets no threshold here (``OFF``; the recipe gives it the budget rule of 0.7.0,
``recipe.train_scorer``). The test halves are
scored by ``evaluate_corpus``: the finder's reports against the gold figures it could
find, per figure and language, with the one-to-one matching of ``metrics``.
"""

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..corpora.rhetoric import read_records
from .candidates import Candidate
from .component import FIGURES, FigureFinder
from .metrics import Finding, count_findings, is_match, score_findings, support_units
from .model import FigureScorer

CORPUS_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "rhetoric-corpus"
CORPUS_LANGUAGES = ("la", "en", "de")
TARGET_PRECISION = 0.80
# the figures of thought: the operating point their targets name (precision 0.75)
TARGET_PRECISION_OF = {"antithesis": 0.75, "rhetorical_question": 0.75}
MIN_DEV_INSTANCES = 5
OFF = 1.000001  # above every probability: the figure is not reported


def read_passages(
    corpus_dir: Optional[Path], lang: str, splits: Sequence[str]
) -> List[Dict[str, Any]]:
    """The annotated passages of one language and the given splits.

    RETURNS (List[Dict[str, Any]]): the records (``corpora.rhetoric`` format).
    RAISES ValueError: the corpus file is missing.
    """
    path = Path(corpus_dir or CORPUS_PATH) / f"{lang}.jsonl"
    if not path.is_file():
        raise ValueError(f"figures: the rhetoric corpus file {path} is missing")
    return [
        record
        for _, record in read_records(path)
        if record["split"] in splits and record.get("annotated", True)
    ]


def gold_findings(record: Dict[str, Any], labels: Sequence[str] = FIGURES) -> List[Finding]:
    """RETURNS (List[Finding]): the gold figures of a passage with one of ``labels``."""
    return [(f["label"], support_units(f)) for f in record["figures"] if f["label"] in labels]


def _char_ranges(doc: Doc, ranges: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
    return [(doc[s].idx, doc[e - 1].idx + len(doc[e - 1].text)) for s, e in ranges if e > s]


# the figures whose gold findings are their members (no support words)
MEMBER_FINDINGS = ("asyndeton", "rhetorical_question")


def candidate_finding(doc: Doc, candidate: Candidate) -> Finding:
    """A candidate as a finding: its support words, or for asyndeton and the rhetorical
    question (whose gold support is their members) its members."""
    ranges = candidate.members if candidate.figure in MEMBER_FINDINGS else candidate.support
    return candidate.figure, _char_ranges(doc, ranges)


def span_finding(span: Span) -> Finding:
    """A reported figure (a span figure_finder wrote) as a finding."""
    parts = span._.figure_members if span.label_ in MEMBER_FINDINGS else span._.figure_support
    return span.label_, [(p.start_char, p.end_char) for p in parts]


def corpus_candidates(
    data: Any,
    records: Sequence[Dict[str, Any]],
    docs: Sequence[Doc],
    finder: FigureFinder,
    lang: str,
) -> Dict[str, int]:
    """Add every candidate of the passages to ``data`` (``train.FigureData``), labelled
    by the gold figures; each passage is its own cross-validation group.

    RETURNS (Dict[str, int]): positives, negatives, and the gold figures found by none.
    """
    stats = {"passages": 0, "positives": 0, "negatives": 0, "gold": 0, "gold_unproposed": 0}
    for record, doc in zip(records, docs):
        if record["text"] != doc.text:
            raise ValueError(f"figures: passage {record['id']} and its doc differ")
        stats["passages"] += 1
        gold = gold_findings(record)
        candidates, X, _ = finder.find(doc)
        proposed = set()
        for candidate, x in zip(candidates, X):
            finding = candidate_finding(doc, candidate)
            hits = [k for k, g in enumerate(gold) if is_match(g, finding)]
            proposed.update(hits)
            data.add(
                candidate.figure, x, int(bool(hits)), 1.0, lang, f"corpus:{record['id']}", "corpus"
            )
            stats["positives" if hits else "negatives"] += 1
        stats["gold"] += len(gold)
        stats["gold_unproposed"] += len(gold) - len(proposed)
    return stats


def scored_candidates(
    records: Sequence[Dict[str, Any]],
    docs: Sequence[Doc],
    finder: FigureFinder,
    scorer: FigureScorer,
) -> List[Tuple[List[Finding], List[Tuple[float, Finding]]]]:
    """Per passage: its gold figures and its candidates as (probability, finding)."""
    out = []
    for record, doc in zip(records, docs):
        candidates, X, _ = finder.find(doc)
        scores = (
            scorer.score([c.figure for c in candidates], X, doc.lang_) if len(candidates) else []
        )
        found = [(float(s), candidate_finding(doc, c)) for s, c in zip(scores, candidates)]
        out.append((gold_findings(record), found))
    return out


def _counts_at(
    passages: Sequence[Tuple[List[Finding], List[Tuple[float, Finding]]]],
    figure: str,
    threshold: float,
) -> Tuple[int, int, int]:
    documents = [
        (
            [g for g in gold if g[0] == figure],
            [f for s, f in found if f[0] == figure and s >= threshold],
        )
        for gold, found in passages
    ]
    counts = count_findings(documents).get(figure, [0, 0, 0])
    return counts[0], counts[1], counts[2]


def precision_thresholds(
    passages: Sequence[Tuple[List[Finding], List[Tuple[float, Finding]]]],
    figures: Sequence[str],
    target: float = TARGET_PRECISION,
    min_instances: int = MIN_DEV_INSTANCES,
) -> Tuple[Dict[str, float], Dict[str, Dict[str, Any]]]:
    """Each figure's threshold on the dev passages (see the module docstring): among the
    candidates' scores, the lowest at which the reports (matched one to one) reach the
    target precision (``target``; the figures of thought
    ``TARGET_PRECISION_OF``).

    passages: ``scored_candidates`` of the dev passages.
    RETURNS: per figure the threshold, and per figure what was chosen and why.
    """
    thresholds: Dict[str, float] = {}
    report: Dict[str, Dict[str, Any]] = {}
    for figure in figures:
        n_gold = sum(g[0] == figure for gold, _ in passages for g in gold)
        values = sorted(
            {s for _, found in passages for s, f in found if f[0] == figure}, reverse=True
        )
        entry: Dict[str, Any] = {"dev_instances": n_gold, "dev_candidates": sum(
            f[0] == figure for _, found in passages for _, f in found)}  # fmt: skip
        goal = TARGET_PRECISION_OF.get(figure, target)
        if n_gold < min_instances:
            thresholds[figure] = OFF
            report[figure] = dict(
                entry, threshold=OFF, why=f"fewer than {min_instances} dev instances"
            )
            continue
        best: Optional[Tuple[float, int, int, int]] = None
        # the most precise threshold, where none reaches the target: (precision, found)
        fallback: Optional[Tuple[float, int, float]] = None
        for value in values:  # descending: the recall only grows
            matched, predicted, reference = _counts_at(passages, figure, value)
            if predicted and matched / predicted >= goal:
                if best is None or matched > best[1]:
                    best = (value, matched, predicted, reference)
            if matched and (fallback is None or (matched / predicted, matched) > fallback[:2]):
                fallback = (matched / predicted, matched, value)
        if best is None and fallback is None:
            thresholds[figure] = OFF
            report[figure] = dict(entry, threshold=OFF, why="a dev instance is never reported")
            continue
        if best is None:
            entry["why"] = f"precision {goal} never reached on dev: the most precise threshold"
            value = fallback[2]
            matched, predicted, reference = _counts_at(passages, figure, value)
        else:
            value, matched, predicted, reference = best
        # midway to the next lower candidate score, so that a score a little under the
        # chosen one (another doc, rounding) is not lost
        lower = [v for v in values if v < value]
        threshold = (value + lower[0]) / 2 if lower else value
        matched, predicted, reference = _counts_at(passages, figure, threshold)
        thresholds[figure] = threshold
        report[figure] = dict(
            entry,
            threshold=round(threshold, 6),
            dev_precision=round(matched / predicted, 4) if predicted else 0.0,
            dev_recall=round(matched / reference, 4) if reference else 0.0,
            dev_reported=predicted,
            dev_found=matched,
        )
    return thresholds, report


def evaluate_corpus(
    nlps: Dict[str, Language],
    scorer: FigureScorer,
    split: str,
    corpus_dir: Optional[Path] = None,
    cache_dir: Optional[Path] = None,
    figures: Sequence[str] = FIGURES,
) -> Dict[str, Any]:
    """figure_finder with ``scorer`` on one split of the corpus, per language: P, R and F1
    per figure, per family and over all (micro), reports and gold figures per 1,000
    tokens; the review list's recall beside it.

    nlps (Dict[str, Language]): the base pipeline of each language.
    RETURNS (Dict[str, Any]): per language the scores.
    """
    from .training_data import process

    result: Dict[str, Any] = {}
    for lang in CORPUS_LANGUAGES:
        records = read_passages(corpus_dir, lang, (split,))
        if not records:
            continue
        cache = Path(cache_dir) / f"corpus-{lang}-{split}.spacy" if cache_dir else None
        docs = process(nlps[lang], [r["text"] for r in records], cache)
        finder = FigureFinder(nlps[lang].vocab, figures=figures, scorer=scorer)
        documents, reviewed = [], []
        tokens = 0
        for record, doc in zip(records, docs):
            finder(doc)
            gold = gold_findings(record, figures)
            reported = [span_finding(s) for s in doc.spans["figures"]]
            review = [span_finding(s) for s in doc.spans["figure_candidates"]]
            documents.append((gold, reported))
            reviewed.append((gold, reported + review))
            tokens += len(doc)
        scores = score_findings(count_findings(documents))
        with_review = score_findings(count_findings(reviewed))
        result[lang] = {
            "passages": len(records),
            "tokens": tokens,
            "reports_per_1000": round(scores["all"]["predicted"] * 1000 / max(tokens, 1), 3),
            "gold_per_1000": round(scores["all"]["reference"] * 1000 / max(tokens, 1), 3),
            **scores,
            "recall_with_review": round(with_review["all"]["r"], 4),
        }
    return result
