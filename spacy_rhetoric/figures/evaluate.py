"""Evaluation of the shipped ``figure_finder`` defaults: the gold set (one split) and the
held-out running text.

A gold line is **found** where a figure of its label (``doc.spans["figures"]``) matches
its support (``training_data.matches``: the span's support overlaps at least two of the gold
support words, the one where there is one); **found with the review list** also counts
``doc.spans["figure_candidates"]``; **found in the family** accepts any figure of the
line's family (an anaphora where the line says symploce). Antimetabole (回环), the
inversion family, is ``chiasmus_finder``'s: a line is found where a reported chiasmus
span holds at least two of its support words. A **hard negative reported** is a
``none`` text with at least one reported figure.
"""

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from spacy.language import Language
from spacy.tokens import Doc

from .calibrate import TARGET_PER_1000, count_tokens, running_parts
from .component import FIGURES, FigureFinder
from .model import FigureScorer
from .training_data import (
    FAMILIES,
    FAMILY_OF,
    LANGUAGES,
    char_ranges,
    gold_docs,
    matches,
    overlaps,
    process,
    read_gold,
    support_ranges,
    text_key,
)


def _family_table(lines: Sequence[Dict[str, Any]], key: str) -> Dict[str, Dict[str, Any]]:
    table: Dict[str, Dict[str, Any]] = {}
    for family in FAMILIES:
        mine = [line for line in lines if FAMILY_OF[line["figure"]] == family]
        if mine:
            found = sum(line[key] for line in mine)
            table[family] = {"found": found, "of": len(mine), "share": round(found / len(mine), 4)}
    return table


def _chiasmus_found(doc: Doc, gold: Sequence[tuple]) -> bool:
    for span in doc.spans.get("chiasmus", []):
        extent = (span.start_char, span.end_char)
        if sum(overlaps(g, extent) for g in gold) >= min(2, len(gold)):
            return True
    return False


def evaluate_gold(
    rows: Sequence[Dict[str, Any]],
    nlps: Dict[str, Language],
    scorer: FigureScorer,
    cache_dir: Optional[Path] = None,
    split: str = "test",
    chiasmus: Optional[Dict[str, Callable[[Doc], Doc]]] = None,
) -> Dict[str, Any]:
    """Found per figure and family, per language, on one split of the gold set.

    rows (Sequence[Dict[str, Any]]): the gold lines (all; ``split`` selects).
    nlps (Dict[str, Language]): the base pipeline per language.
    scorer (FigureScorer): the scorer under test (with its thresholds).
    split (str): "dev" or "test".
    chiasmus (Optional[Dict[str, Callable[[Doc], Doc]]]): per language, a chiasmus_finder
        to run on the antimetabole lines (None: they are not scored).
    RETURNS (Dict[str, Any]): per language: lines, per figure, per family, hard negatives.
    """
    rows = [r for r in rows if r["split"] == split]
    docs = gold_docs(rows, nlps, cache_dir, split)
    finders = {lang: FigureFinder(nlp.vocab, scorer=scorer) for lang, nlp in nlps.items()}
    done: Dict[str, Doc] = {}
    for key, doc in docs.items():
        done[key] = finders[doc.lang_](doc)
    result: Dict[str, Any] = {}
    for lang in LANGUAGES:
        mine = [r for r in rows if r["lang"] == lang]
        lines: List[Dict[str, Any]] = []
        negatives: List[Dict[str, Any]] = []
        for row in mine:
            doc = done[text_key(row["text"])]
            reported = list(doc.spans["figures"])
            if row["figure"] == "none":
                negatives.append(
                    {"id": row["id"], "reported": [s.label_ for s in reported], "text": row["text"]}
                )
                continue
            gold = support_ranges(row["text"], row["support"], lang)
            line = {"id": row["id"], "figure": row["figure"], "kind": row["kind"]}
            if row["figure"] == "antimetabole":
                if chiasmus is None or lang not in chiasmus:
                    continue
                found = _chiasmus_found(chiasmus[lang](doc.copy()), gold)
                line.update(found=found, found_review=found, found_family=found, score=None)
                lines.append(line)
                continue
            review = list(doc.spans["figure_candidates"])
            family = set(FAMILIES[FAMILY_OF[row["figure"]]])
            finder = finders[lang]
            candidates, _, scores = finder.find(doc)
            best = [
                float(s)
                for c, s in zip(candidates, scores)
                if c.figure == row["figure"] and matches(doc, c, gold)
            ]
            line["score"] = round(max(best), 4) if best else None
            line["found"] = any(
                s.label_ == row["figure"] and _span_matches(doc, s, gold) for s in reported
            )
            line["found_review"] = line["found"] or any(
                s.label_ == row["figure"] and _span_matches(doc, s, gold) for s in review
            )
            line["found_family"] = any(
                s.label_ in family and _span_matches(doc, s, gold) for s in reported
            )
            if not line["found"]:
                line["reported_here"] = [s.label_ for s in reported]
            line["text"] = row["text"]
            lines.append(line)
        per_figure: Dict[str, Dict[str, Any]] = {}
        for figure in FIGURES + ("antimetabole",):
            sub = [line for line in lines if line["figure"] == figure]
            if sub:
                per_figure[figure] = {
                    "found": sum(line["found"] for line in sub),
                    "found_review": sum(line["found_review"] for line in sub),
                    "of": len(sub),
                }
        result[lang] = {
            "positives": len(lines),
            "found": sum(line["found"] for line in lines),
            "families": _family_table(lines, "found"),
            "families_review": _family_table(lines, "found_review"),
            "families_any_figure": _family_table(lines, "found_family"),
            "figures": per_figure,
            "handbook": _family_table([x for x in lines if x["kind"] == "handbook"], "found"),
            "handbook_review": _family_table(
                [x for x in lines if x["kind"] == "handbook"], "found_review"
            ),
            "negatives": len(negatives),
            "negatives_reported": sum(bool(n["reported"]) for n in negatives),
            "hard_negatives_reported": [n for n in negatives if n["reported"]],
            "missed": [x for x in lines if not x["found"]],
        }
    return result


def _span_matches(doc: Doc, span: Any, gold: Sequence[tuple]) -> bool:
    support = [(s.start, s.end) for s in span._.figure_support]
    if span.label_ == "asyndeton":  # its support is the members' first words
        support += [(s.start, s.end) for s in span._.figure_members]
    if not gold:
        return False
    chars = char_ranges(doc, support)
    return sum(any(overlaps(g, s) for s in chars) for g in gold) >= min(2, len(gold))


def evaluate_running(
    data_dir: Path,
    nlps: Dict[str, Language],
    scorer: FigureScorer,
    cache_dir: Optional[Path] = None,
    gold_texts: Sequence[str] = (),
    parts: Sequence[str] = ("held_out", "calibration"),
) -> Dict[str, Any]:
    """Reports per 1,000 tokens of running text at the default thresholds, per language
    and figure (the held-out part is the reported rate; the calibration part for
    comparison).

    RETURNS (Dict[str, Any]): per language and part: tokens, reports, per 1,000, per figure.
    """
    result: Dict[str, Any] = {}
    for lang in LANGUAGES:
        calibration, held, sources = running_parts(lang, data_dir, gold_texts)
        entry: Dict[str, Any] = {"sources": sources}
        for part, texts in (("held_out", held), ("calibration", calibration)):
            if part not in parts:
                continue
            cache = Path(cache_dir) / f"running-{lang}-{part}.spacy" if cache_dir else None
            docs = process(nlps[lang], texts, cache)
            finder = FigureFinder(nlps[lang].vocab, scorer=scorer)
            per_figure: Dict[str, int] = {}
            review = 0
            for doc in docs:
                finder(doc)
                for span in doc.spans["figures"]:
                    per_figure[span.label_] = per_figure.get(span.label_, 0) + 1
                review += len(doc.spans["figure_candidates"])
            tokens = count_tokens(docs)
            reports = sum(per_figure.values())
            entry[part] = {
                "tokens": tokens,
                "reports": reports,
                "per_1000": round(reports * 1000 / max(tokens, 1), 4),
                "review_per_1000": round(review * 1000 / max(tokens, 1), 4),
                "figures": dict(sorted(per_figure.items())),
                "target_per_1000": TARGET_PER_1000,
            }
        result[lang] = entry
    return result


def evaluate_all(
    data_dir: Path,
    nlps: Dict[str, Language],
    scorer: FigureScorer,
    cache_dir: Optional[Path] = None,
    gold_path: Optional[Path] = None,
    split: str = "test",
    chiasmus: Optional[Dict[str, Callable[[Doc], Doc]]] = None,
) -> Dict[str, Any]:
    """RETURNS (Dict[str, Any]): {"gold": evaluate_gold, "running": evaluate_running}."""
    gold = read_gold(gold_path)
    return {
        "gold": evaluate_gold(gold, nlps, scorer, cache_dir, split, chiasmus),
        "running": evaluate_running(data_dir, nlps, scorer, cache_dir, [r["text"] for r in gold]),
        "split": split,
        "scorer": scorer.source,
    }
