"""The figure scorer's whole recipe (``python -m spacy_rhetoric figures train``).

Data (``train.FigureData``), all proposed by the rules on text through the language's
base pipeline:

1. **the rhetoric corpus's train halves** (Latin, English, German; ``corpus``): every
   candidate, labelled by the exhaustive hand annotation;
2. silver from the RPD gold of PSE-I train (Chinese; ``training_data.rpd_silver``; ASP's silver
   for Latin is left out by default, ``SILVER_USED``);
3. the figures gold set's dev half (handbook and literary lines; ``training_data.gold_dev``);
4. running text as weak negatives (``training_data.running_negatives``).

Per figure the model and C are chosen by grouped cross-validation (``train.select_and_fit``).
Thresholds: for Latin, English and German, per figure on the corpus's **dev** halves
for precision (``corpus.precision_thresholds``: at least 0.80, else the most precise); a
figure with fewer than five dev instances in a language, which the dev half cannot
judge, keeps the rule of 0.7.0 there (``budget_thresholds``; it may leave the figure
off); for English and German then the
running-text guard (``judged.guard_thresholds``: a threshold rises where fewer than
60 % of the judged web and news reports above it are figures); Chinese, which the
corpus does not hold, keeps the rule of 0.7.0 (``calibrate.choose_thresholds``: a
report budget on running text, the figures gold set's dev recall maximised).
"""

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc

from ..about import __version__
from .component import FIGURES
from .corpus import (
    CORPUS_LANGUAGES,
    MIN_DEV_INSTANCES,
    OFF,
    corpus_candidates,
    precision_thresholds,
    read_passages,
    scored_candidates,
)
from .judged import GUARD_LANGUAGES, guard_thresholds, judged_dirs, read_judged, score_judged
from .model import FigureScorer
from .train import C_GRID, FittedFigure, scorer_spec, select_and_fit
from .training_data import (
    FAMILY_OF,
    LANGUAGES,
    FigureData,
    feature_finder,
    gold_dev,
    gold_docs,
    process,
    read_corpus,
    read_gold,
    rpd_silver,
    running_negatives,
)

# the RPD corpora that give silver, and their language; the ones used by default: ASP's
# silver (Latin sermons) is left out since the corpus gives Latin labels (on the corpus
# dev halves it lowered Latin recall at the chosen precision from 0.238 to 0.183)
SILVER = (("asp", "la"), ("pse", "zh"))
SILVER_USED = ("pse",)


def budget_thresholds(
    lang: str,
    data: FigureData,
    models: Dict[str, FittedFigure],
    oof: Dict[str, numpy.ndarray],
    matched: Dict[str, List[int]],
    dev: Sequence[Dict[str, Any]],
    tokens: int,
) -> Dict[str, Any]:
    """The thresholds of a language the corpus does not hold (Chinese): the budget rule
    of ``calibrate.choose_thresholds`` on its running text, the figures gold set's dev
    positives as the gain.

    RETURNS (Dict[str, Any]): ``choose_thresholds``'s result, with the dev positives.
    """
    from .calibrate import (
        BUDGET_PER_1000,
        FEW_CAP_PER_1000,
        FIGURE_CAP_PER_1000,
        ISSUE_EXAMPLES,
        applicable,
        choose_thresholds,
    )

    prior = FigureScorer.prior()
    figures = [f for f in FIGURES if applicable(f, lang)]

    def score(figure: str, X: numpy.ndarray) -> numpy.ndarray:
        if figure in models:
            return models[figure].scores(X, [lang] * len(X))
        return prior(figure, X, lang).astype("float64")

    running_scores = {}
    for figure in figures:
        arrays = data.arrays(figure)
        rows = (arrays["source"] == "running") & (arrays["lang"] == lang)
        running_scores[figure] = score(figure, arrays["X"][rows])
    required: Dict[str, float] = {}
    positives, listed = [], []
    for row in dev:
        if row["lang"] != lang or row["figure"] not in figures:
            continue
        indices = matched.get(row["id"], [])
        arrays = data.arrays(row["figure"])
        if indices and any(example in row["text"] for example in ISSUE_EXAMPLES):
            value = float(score(row["figure"], arrays["X"][indices]).max())
            required[row["figure"]] = min(required.get(row["figure"], 1.0), value)
        if row["kind"] not in ("handbook", "literary"):
            continue
        value: Optional[float] = None
        if indices and row["figure"] in oof:
            values = oof[row["figure"]][indices]
            values = values[~numpy.isnan(values)]
            value = float(values.max()) if len(values) else None
        elif indices:
            value = float(score(row["figure"], arrays["X"][indices]).max())
        positives.append((row["figure"], FAMILY_OF[row["figure"]], value))
        listed.append({"id": row["id"], "figure": row["figure"],
                       "oof_score": None if value is None else round(value, 4)})  # fmt: skip
    chosen = choose_thresholds(
        running_scores,
        tokens,
        positives,
        BUDGET_PER_1000,
        figures=figures,
        preferred=required,
        figure_cap=FIGURE_CAP_PER_1000,
        few_cap=FEW_CAP_PER_1000,
    )
    for item in listed:
        item["found"] = item["oof_score"] is not None and (
            item["oof_score"] >= chosen["thresholds"][item["figure"]]
        )
    return dict(chosen, dev_positives=listed)


def corpus_docs(
    nlps: Dict[str, Language],
    lang: str,
    split: str,
    corpus_dir: Optional[Path],
    cache_dir: Optional[Path],
) -> Tuple[List[Dict[str, Any]], List[Doc]]:
    """RETURNS: the passages of one language and split, and their docs through the base."""
    records = read_passages(corpus_dir, lang, (split,))
    cache = Path(cache_dir) / f"corpus-{lang}-{split}.spacy" if cache_dir else None
    return records, process(nlps[lang], [r["text"] for r in records], cache)


def train_scorer(
    data_dir: Path,
    nlps: Dict[str, Language],
    corpus_dir: Path = Path("corpus"),
    gold_path: Optional[Path] = None,
    cache_dir: Optional[Path] = None,
    progress: Optional[Callable[[str], None]] = None,
    c_grid: Sequence[float] = C_GRID,
    rpd_docs: Optional[int] = None,
    rhetoric_dir: Optional[Path] = None,
    silver: Sequence[str] = SILVER_USED,
    judged: Optional[Sequence[Path]] = None,
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Fit the figure scorer and choose its thresholds (see the module docstring).

    data_dir (Path): the data mirror (ud/, latin-corpora/).
    nlps (Dict[str, Language]): the base pipeline of each of ``LANGUAGES``.
    corpus_dir (Path): the converted RPD corpora (asp/train.spacy, pse/train.spacy).
    gold_path (Optional[Path]): the figures gold set (default: the repository's).
    cache_dir (Optional[Path]): where processed text is cached (None: nowhere).
    c_grid (Sequence[float]): the values of C cross-validated.
    rpd_docs (Optional[int]): use only the first so many docs of each RPD corpus (tests).
    rhetoric_dir (Optional[Path]): the rhetoric corpus (default: the repository's).
    silver (Sequence[str]): the RPD corpora that give silver ("asp", "pse").
    judged (Optional[Sequence[Path]]): the judged samples of the guard (default: the
        repository's ``benchmarks/data/figures-judged*``; [] for none).
    RETURNS (Tuple[Dict[str, Any], Dict[str, Any]]): the scorer.json data and the metrics.
    """
    from .calibrate import count_tokens, running_parts

    say = progress or (lambda text: None)
    gold = read_gold(gold_path)
    dev = [r for r in gold if r["split"] == "dev"]
    data = FigureData()
    finders = {lang: feature_finder(nlp) for lang, nlp in nlps.items()}
    metrics: Dict[str, Any] = {"corpus": {}, "silver": {}, "running": {}, "languages": {}}
    for lang in CORPUS_LANGUAGES:
        records, docs = corpus_docs(nlps, lang, "train", rhetoric_dir, cache_dir)
        stats = corpus_candidates(data, records, docs, finders[lang], lang)
        metrics["corpus"][lang] = stats
        say(f"rhetoric corpus train ({lang}): {stats}")
    for dataset, lang in SILVER:
        if dataset not in silver:
            continue
        corpus = read_corpus(Path(corpus_dir) / dataset / "train.spacy")[:rpd_docs]
        cache = Path(cache_dir) / f"rpd-{dataset}-train.spacy" if cache_dir else None
        docs = process(nlps[lang], [d.text for d in corpus], cache)
        stats = rpd_silver(data, corpus, docs, lang, finders[lang], dataset)
        metrics["silver"][dataset] = stats
        say(f"silver {dataset} train ({lang}): {stats}")
    matched = gold_dev(data, dev, gold_docs(dev, nlps, cache_dir, "dev"), finders)
    say(f"gold dev: {sum(bool(v) for v in matched.values())} lines with a matching candidate")
    running_tokens: Dict[str, int] = {}
    gold_texts = [r["text"] for r in gold]
    for lang in LANGUAGES:
        texts, _, sources = running_parts(lang, data_dir, gold_texts)
        cache = Path(cache_dir) / f"running-{lang}-calibration.spacy" if cache_dir else None
        docs = process(nlps[lang], texts, cache)
        added = running_negatives(data, docs, lang, finders[lang], f"run-{lang}")
        running_tokens[lang] = count_tokens(docs)
        metrics["running"][lang] = {
            "sources": sources,
            "tokens": running_tokens[lang],
            "candidates": added,
        }
        say(f"running {lang}: {running_tokens[lang]} tokens, {sum(added.values())} candidates")
    models, report, oof = select_and_fit(data, c_grid=c_grid, progress=say)
    metrics["cv"] = report
    metrics["examples"] = data.counts()
    source = f"spacy_rhetoric {__version__} figures train"
    thresholds: Dict[str, Dict[str, float]] = {}
    unthresholded = FigureScorer.from_dict(scorer_spec(models, {}, source))
    items, skipped = read_judged(judged_dirs() if judged is None else judged, GUARD_LANGUAGES)
    scored = score_judged(items, nlps, finders, unthresholded)
    metrics["judged"] = {
        "items": len(items),
        "skipped": skipped,
        "no_longer_proposed": sum(item["score"] is None for item in scored),
        "samples": sorted({item["sample"] for item in items}),
    }
    say(f"judged running-text reports: {len(items)} ({skipped})")
    for lang in LANGUAGES:
        if lang in CORPUS_LANGUAGES:
            records, docs = corpus_docs(nlps, lang, "dev", rhetoric_dir, cache_dir)
            passages = scored_candidates(records, docs, finders[lang], unthresholded)
            chosen, why = precision_thresholds(passages, FIGURES)
            few = [f for f in FIGURES if why[f]["dev_instances"] < MIN_DEV_INSTANCES]
            if few:
                budget = budget_thresholds(
                    lang, data, models, oof, matched, dev, running_tokens[lang]
                )
                for figure in few:
                    value = budget["thresholds"].get(figure, OFF)
                    chosen[figure] = value
                    why[figure]["threshold"] = round(value, 6) if value <= 1.0 else value
                    why[figure]["why"] = (
                        f"fewer than {MIN_DEV_INSTANCES} dev instances: the budget rule of 0.7.0"
                    )
            metrics["languages"][lang] = {"rule": "corpus dev precision", "figures": why}
            if lang in GUARD_LANGUAGES:
                chosen, guard = guard_thresholds(chosen, scored, lang)
                metrics["languages"][lang]["rule"] += ", running-text guard"
                metrics["languages"][lang]["guard"] = guard
            thresholds[lang] = chosen
        else:
            result = budget_thresholds(lang, data, models, oof, matched, dev, running_tokens[lang])
            thresholds[lang] = result["thresholds"]
            metrics["languages"][lang] = dict(result, rule="running-text budget")
        off = sorted(f for f, t in thresholds[lang].items() if t > 1.0)
        say(f"{lang}: thresholds chosen; off: {', '.join(off) or 'none'}")
    return scorer_spec(models, thresholds, source), metrics
