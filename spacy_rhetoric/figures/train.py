"""Training data and the fit of the figure scorer (``model.FigureScorer``).

Each figure's scorer is one logistic model (``spacy_rhetoric.logistic``, here with
example weights) over the candidate features (``features.FEATURES``) plus one bias
column per language, fitted on three kinds of candidates, all proposed by the
``figure_finder`` rules on text tagged and parsed by the language's base pipeline:

1. **silver from the RPD gold** (``rpd_silver``; ASP train for Latin, PSE-I train for
   Chinese): an anaphora, epiphora, symploce or asyndeton candidate is a positive where
   at least two of its members begin (anaphora, asyndeton), end (epiphora) or begin and
   end (symploce) where branches of one gold parallelism begin or end (first and last
   words compared by character offset); a candidate of these figures that overlaps no
   gold branch is a negative; the rest are left out. The RPD annotation says nothing
   about the other figures (a linking word, a repeated word in place, a conjunction or
   a sound is no parallelism), so they get no silver.
2. **the gold dev half** (``gold_dev``; ``benchmarks/data/figures/``): per labelled line,
   the candidates of its figure whose support overlaps the gold support (``matches``)
   are positives; every candidate on a ``none`` text is a negative; other candidates on
   figure texts are left out (the text may hold a figure nobody labelled).
3. **running text** (``running_negatives``; the calibration part of ``calibrate``):
   every candidate is an unlabelled negative of weight ``RUNNING_WEIGHT`` (0.1), and
   the running candidates of one figure together weigh at most as much as its labelled
   candidates (the weight shrinks where they are more).

Positives and negatives are then balanced (both classes weigh the same in total). The
model of a figure is either **shared** (one weight vector, a bias per language) or
**per language** (separate weights where a language has ``MIN_PER_LANGUAGE`` positives
and negatives, else the shared one); the variant and the regularisation ``C`` are chosen
per figure by grouped cross-validation (``cross_validate``: documents, gold texts and
running-text docs are the groups) on weighted average precision.
"""

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import srsly
from scipy.special import expit
from spacy.language import Language
from spacy.tokens import Doc, DocBin

from ..logistic import LogisticRegression
from .candidates import Candidate
from .component import FIGURES, FigureFinder
from .features import COLUMN, FEATURES
from .metrics import HANDBOOK_FAMILIES
from .model import PRIOR, FigureScorer

LANGUAGES = ("la", "de", "en", "zh")
GOLD_PATH = (
    Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "figures" / "examples.jsonl"
)
# the figures the RPD gold gives silver for (see the module docstring)
SILVER_FIGURES = ("anaphora", "epiphora", "symploce", "asyndeton")
RUNNING_WEIGHT = 0.1
# figures labelled only where a text is annotated for them exhaustively (the rhetoric
# corpus): running text and the figures gold set's lines hold antitheses and questions
# asked for effect that nobody marked, so their candidates are no negatives there (with
# the questions of web text as weak negatives the scorer told them apart no better, and
# German dev recall fell from 0.80 to 0.20)
CORPUS_ONLY = ("antithesis", "rhetorical_question")
C_GRID = (0.01, 0.1, 1.0, 10.0)
VARIANTS = ("shared", "per_language")
MIN_PER_LANGUAGE = 10
N_FOLDS = 5
SEEDS = (0, 1)
# families of the handbook target (docs/results/figures.md)
FAMILIES: Dict[str, Tuple[str, ...]] = HANDBOOK_FAMILIES
FAMILY_OF = {figure: family for family, figures in FAMILIES.items() for figure in figures}


# --- the gold set ------------------------------------------------------------------------


def read_gold(path: Optional[Path] = None) -> List[Dict[str, Any]]:
    """The gold lines of ``benchmarks/data/figures/examples.jsonl``.

    path (Optional[Path]): the file (default: the repository's).
    RETURNS (List[Dict[str, Any]]): one dict per line.
    RAISES ValueError: a line that is no JSON object with the keys needed (file and line).
    """
    path = Path(path or GOLD_PATH)
    if not path.is_file():
        raise ValueError(f"figures gold: {path} not found")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = srsly.json_loads(line)
        except ValueError as err:
            raise ValueError(f"figures gold: {path} line {number}: not JSON ({err})") from None
        missing = {"id", "lang", "figure", "text", "support", "kind", "split"} - set(row)
        if missing:
            raise ValueError(f"figures gold: {path} line {number}: missing {sorted(missing)}")
        rows.append(row)
    return rows


def text_key(text: str) -> str:
    """RETURNS (str): a short key of a text (lines sharing a text share it)."""
    return hashlib.sha1(text.encode("utf8")).hexdigest()[:12]


def support_ranges(text: str, support: Sequence[str], lang: str) -> List[Tuple[int, int]]:
    """The character ranges of the gold support words, found in order (at word
    boundaries outside Chinese); a word not found is skipped.

    RETURNS (List[Tuple[int, int]]): (start, end) per word found.
    """
    ranges = []
    position = 0
    for word in support:
        if lang == "zh":
            found = text.find(word, position)
        else:
            match = re.compile(r"(?<!\w)" + re.escape(word) + r"(?!\w)").search(text, position)
            found = match.start() if match else -1
        if found < 0:
            continue
        ranges.append((found, found + len(word)))
        position = found + len(word)
    return ranges


def char_ranges(doc: Doc, ranges: Iterable[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """RETURNS (List[Tuple[int, int]]): token ranges as character ranges."""
    return [(doc[s].idx, doc[e - 1].idx + len(doc[e - 1].text)) for s, e in ranges if e > s]


def overlaps(a: Tuple[int, int], b: Tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def matches(doc: Doc, candidate: Candidate, gold: Sequence[Tuple[int, int]]) -> bool:
    """Whether a candidate is the gold instance: its support (for asyndeton also its
    members) overlaps at least ``min(2, len(gold))`` of the gold support words.

    gold (Sequence[Tuple[int, int]]): the gold support's character ranges.
    """
    if not gold:
        return False
    ranges = list(candidate.support)
    if candidate.figure == "asyndeton":  # its support is the members' first words
        ranges += list(candidate.members)
    support = char_ranges(doc, ranges)
    hit = sum(any(overlaps(g, s) for s in support) for g in gold)
    return hit >= min(2, len(gold))


# --- processing text ---------------------------------------------------------------------


def process(
    nlp: Language, texts: Sequence[str], cache: Optional[Path] = None, batch_size: int = 32
) -> List[Doc]:
    """Texts through a base pipeline, cached as a DocBin keyed by the texts and the
    pipeline (a changed text or pipeline is processed again).

    nlp (Language): the base pipeline.
    texts (Sequence[str]): the texts.
    cache (Optional[Path]): the DocBin file (None: no cache).
    RETURNS (List[Doc]): the docs, in order.
    """
    digest = hashlib.sha1()
    digest.update(f"{nlp.lang} {nlp.meta.get('name')} {nlp.meta.get('version')} ".encode())
    for text in texts:
        digest.update(text.encode("utf8") + b"\0")
    key = digest.hexdigest()
    if cache is not None:
        cache = Path(cache)
        meta = cache.with_suffix(".json")
        if cache.is_file() and meta.is_file() and srsly.read_json(meta).get("key") == key:
            docs = list(DocBin().from_disk(cache).get_docs(nlp.vocab))
            if len(docs) == len(texts):
                return docs
    docs = list(nlp.pipe(texts, batch_size=batch_size))
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        DocBin(
            attrs=["ORTH", "TAG", "POS", "MORPH", "LEMMA", "DEP", "HEAD", "SENT_START"], docs=docs
        ).to_disk(cache)
        srsly.write_json(cache.with_suffix(".json"), {"key": key, "docs": len(docs)})
    return docs


def feature_finder(nlp: Language) -> FigureFinder:
    """RETURNS (FigureFinder): a finder of every figure, for candidates and features."""
    return FigureFinder(nlp.vocab, scorer=FigureScorer.prior())


# --- training examples -------------------------------------------------------------------


@dataclass
class FigureData:
    """The labelled and unlabelled candidates of the figures, one row each.

    Per figure: features ``X`` [k, len(FEATURES)], label ``y`` (1, 0), weight ``w``, the
    language, the group (document) for cross-validation, the source ("rpd", "gold",
    "running") and a key (the gold id of a gold candidate, else "").
    """

    rows: Dict[str, Dict[str, List[Any]]] = field(default_factory=dict)

    def add(
        self,
        figure: str,
        x: numpy.ndarray,
        y: int,
        w: float,
        lang: str,
        group: str,
        source: str,
        key: str = "",
    ) -> None:
        store = self.rows.setdefault(
            figure, {"X": [], "y": [], "w": [], "lang": [], "group": [], "source": [], "key": []}
        )
        for name, value in (
            ("X", x),
            ("y", y),
            ("w", w),
            ("lang", lang),
            ("group", group),
            ("source", source),
            ("key", key),
        ):
            store[name].append(value)

    def arrays(self, figure: str) -> Dict[str, numpy.ndarray]:
        """RETURNS (Dict[str, numpy.ndarray]): the rows of a figure as arrays."""
        store = self.rows.get(figure)
        if not store or not store["X"]:
            empty = numpy.zeros((0, len(FEATURES)), dtype="float64")
            return {
                "X": empty,
                "y": numpy.zeros(0),
                "w": numpy.zeros(0),
                "lang": numpy.zeros(0, dtype=object),
                "group": numpy.zeros(0, dtype=object),
                "source": numpy.zeros(0, dtype=object),
                "key": numpy.zeros(0, dtype=object),
            }
        out = {name: numpy.asarray(values, dtype=object) for name, values in store.items()}
        out["X"] = numpy.asarray(store["X"], dtype="float64")
        out["y"] = numpy.asarray(store["y"], dtype="float64")
        out["w"] = numpy.asarray(store["w"], dtype="float64")
        return out

    def counts(self) -> Dict[str, Dict[str, Dict[str, int]]]:
        """RETURNS: per figure, per source, the positives and negatives."""
        out: Dict[str, Dict[str, Dict[str, int]]] = {}
        for figure, store in self.rows.items():
            per = out.setdefault(figure, {})
            for y, source, lang in zip(store["y"], store["source"], store["lang"]):
                entry = per.setdefault(f"{source}:{lang}", {"positives": 0, "negatives": 0})
                entry["positives" if y else "negatives"] += 1
        return out


def _first_last_word(doc: Doc, start: int, end: int) -> Optional[Tuple[int, int]]:
    """The character offsets of the first word's start and the last word's end of a
    token range (None: no word)."""
    words = [t for t in doc[start:end] if not (t.is_punct or t.is_space)]
    if not words:
        return None
    return words[0].idx, words[-1].idx + len(words[-1].text)


def rpd_silver(
    data: FigureData,
    gold_docs: Sequence[Doc],
    docs: Sequence[Doc],
    lang: str,
    finder: FigureFinder,
    dataset: str,
    spans_key: str = "parallelism",
) -> Dict[str, int]:
    """Silver candidates from RPD gold parallelisms (see the module docstring).

    gold_docs (Sequence[Doc]): the corpus docs (``doc.spans[spans_key]``: branches,
        one parallelism per ``span.id_``).
    docs (Sequence[Doc]): the same texts through the base pipeline (same characters).
    RETURNS (Dict[str, int]): counts (docs, positives, negatives, left out).
    """
    stats = {"docs": 0, "positives": 0, "negatives": 0, "left_out": 0, "mismatched": 0}
    for number, (gold, doc) in enumerate(zip(gold_docs, docs)):
        if gold.text != doc.text:
            stats["mismatched"] += 1
            continue
        stats["docs"] += 1
        branches: Dict[str, List[Tuple[int, int]]] = {}
        spans = gold.spans[spans_key] if spans_key in gold.spans else []
        for span in spans:
            edges = _first_last_word(gold, span.start, span.end)
            if edges is not None:
                branches.setdefault(span.id_, []).append(edges)
        all_branches = [
            (gold[s.start].idx, gold[s.end - 1].idx + len(gold[s.end - 1].text)) for s in spans
        ]
        candidates, X, _ = finder.find(doc)
        group = f"{dataset}:{gold.user_data.get('doc_id', number)}"
        for cand, x in zip(candidates, X):
            if cand.figure not in SILVER_FIGURES:
                continue
            extent = (doc[cand.start].idx, doc[cand.end - 1].idx + len(doc[cand.end - 1].text))
            if not any(overlaps(extent, b) for b in all_branches):
                data.add(cand.figure, x, 0, 1.0, lang, group, "rpd")
                stats["negatives"] += 1
                continue
            members = [_first_last_word(doc, s, e) for s, e in cand.members]
            members = [m for m in members if m is not None]
            positive = False
            for edges in branches.values():
                starts = {b[0] for b in edges}
                ends = {b[1] for b in edges}
                if cand.figure in ("anaphora", "asyndeton"):
                    hit = sum(m[0] in starts for m in members)
                elif cand.figure == "epiphora":
                    hit = sum(m[1] in ends for m in members)
                else:
                    hit = sum(m[0] in starts and m[1] in ends for m in members)
                if hit >= 2:
                    positive = True
                    break
            if positive:
                data.add(cand.figure, x, 1, 1.0, lang, group, "rpd")
                stats["positives"] += 1
            else:
                stats["left_out"] += 1
    return stats


def gold_dev(
    data: Optional[FigureData],
    rows: Sequence[Dict[str, Any]],
    docs: Dict[str, Doc],
    finders: Dict[str, FigureFinder],
) -> Dict[str, List[int]]:
    """Candidates of gold lines (see the module docstring): added to ``data`` where
    given, and the row index of each line's matching candidates.

    rows (Sequence[Dict[str, Any]]): gold lines (one split).
    docs (Dict[str, Doc]): per text key, the text through its base pipeline.
    finders (Dict[str, FigureFinder]): per language, a finder.
    RETURNS (Dict[str, List[int]]): per gold id, the indices (within its figure's rows
        of ``data``) of its matching candidates.
    """
    matched: Dict[str, List[int]] = {}
    by_text: Dict[str, List[Dict[str, Any]]] = {}
    for row in rows:
        by_text.setdefault(text_key(row["text"]), []).append(row)
    for key, lines in by_text.items():
        doc = docs[key]
        lang = lines[0]["lang"]
        candidates, X, _ = finders[lang].find(doc)
        group = f"gold:{key}"
        negative = all(r["figure"] == "none" for r in lines)
        for cand, x in zip(candidates, X):
            if cand.figure in CORPUS_ONLY:
                continue
            if negative:
                if data is not None:
                    data.add(cand.figure, x, 0, 1.0, lang, group, "gold", "none:" + key)
                continue
            for row in lines:
                if row["figure"] != cand.figure:
                    continue
                gold = support_ranges(row["text"], row["support"], lang)
                if matches(doc, cand, gold):
                    if data is not None:
                        index = len(data.rows.get(cand.figure, {"X": []})["X"])
                        data.add(cand.figure, x, 1, 1.0, lang, group, "gold", row["id"])
                        matched.setdefault(row["id"], []).append(index)
                    else:
                        matched.setdefault(row["id"], []).append(-1)
        for row in lines:
            matched.setdefault(row["id"], [])
    return matched


def running_negatives(
    data: FigureData, docs: Sequence[Doc], lang: str, finder: FigureFinder, name: str
) -> Dict[str, int]:
    """Every candidate of running text as a negative (weights set by ``reweight``),
    the figures of ``CORPUS_ONLY`` excepted.

    RETURNS (Dict[str, int]): per figure, the candidates added.
    """
    added: Dict[str, int] = {}
    for number, doc in enumerate(docs):
        candidates, X, _ = finder.find(doc)
        for cand, x in zip(candidates, X):
            if cand.figure in CORPUS_ONLY:
                continue
            data.add(cand.figure, x, 0, RUNNING_WEIGHT, lang, f"{name}:{number}", "running")
            added[cand.figure] = added.get(cand.figure, 0) + 1
    return added


def training_weights(arrays: Dict[str, numpy.ndarray]) -> numpy.ndarray:
    """The weights a fit uses: running candidates at ``RUNNING_WEIGHT``, together at most
    the number of labelled candidates; then both classes scaled to the same total.

    RETURNS (numpy.ndarray): [k] weights.
    """
    w = arrays["w"].copy()
    running = arrays["source"] == "running"
    labelled = int((~running).sum())
    if running.any():
        w[running] = min(RUNNING_WEIGHT, labelled / running.sum()) if labelled else RUNNING_WEIGHT
    y = arrays["y"]
    pos, neg = w[y == 1].sum(), w[y == 0].sum()
    if pos > 0 and neg > 0:
        total = pos + neg
        w = numpy.where(y == 1, w * total / (2 * pos), w * total / (2 * neg))
    return w


# --- the model ---------------------------------------------------------------------------


def with_languages(X: numpy.ndarray, langs: numpy.ndarray) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): X with one 0/1 column per language of ``LANGUAGES``."""
    columns = numpy.stack([(langs == lang).astype("float64") for lang in LANGUAGES], axis=1)
    return numpy.hstack([X, columns]) if len(X) else numpy.zeros((0, X.shape[1] + len(LANGUAGES)))


@dataclass
class FittedFigure:
    """A fitted figure scorer: per language, raw weights over FEATURES and a bias."""

    variant: str
    C: float
    weights: Dict[str, numpy.ndarray]  # lang -> [len(FEATURES)]
    bias: Dict[str, float]

    def scores(self, X: numpy.ndarray, langs: Sequence[str]) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): [k] probabilities."""
        out = numpy.zeros(len(X))
        langs = numpy.asarray(langs, dtype=object)
        for lang in set(langs.tolist()):
            rows = langs == lang
            use = lang if lang in self.weights else "*"
            out[rows] = expit(X[rows] @ self.weights[use] + self.bias[use])
        return out


def _fit_shared(X, y, w, langs, C) -> Tuple[Dict[str, numpy.ndarray], Dict[str, float]]:
    model = LogisticRegression(C=C).fit(with_languages(X, langs), y, w)
    linear = model.linear_weights()
    d = len(FEATURES)
    base, lang_w, intercept = linear[:d].copy(), linear[d:-1], float(linear[-1])
    intercept += base[COLUMN["bias"]]
    base[COLUMN["bias"]] = 0.0
    weights = {"*": base}
    bias = {"*": intercept + float(lang_w.mean())}
    for lang, value in zip(LANGUAGES, lang_w):
        weights[lang] = base
        bias[lang] = intercept + float(value)
    return weights, bias


def fit_figure(
    arrays: Dict[str, numpy.ndarray],
    variant: str,
    C: float,
    weights: Optional[numpy.ndarray] = None,
) -> FittedFigure:
    """Fit one figure's model.

    arrays (Dict[str, numpy.ndarray]): ``FigureData.arrays``.
    variant (str): "shared" (a bias per language) or "per_language".
    C (float): inverse regularisation.
    weights (Optional[numpy.ndarray]): example weights (default ``training_weights``).
    RETURNS (FittedFigure): the model.
    """
    X, y, langs = arrays["X"], arrays["y"], arrays["lang"]
    w = training_weights(arrays) if weights is None else weights
    shared_w, shared_b = _fit_shared(X, y, w, langs, C)
    if variant == "shared":
        return FittedFigure(variant, C, shared_w, shared_b)
    per_w, per_b = {"*": shared_w["*"]}, {"*": shared_b["*"]}
    for lang in LANGUAGES:
        rows = langs == lang
        if (y[rows] == 1).sum() >= MIN_PER_LANGUAGE and (y[rows] == 0).sum() >= MIN_PER_LANGUAGE:
            model = LogisticRegression(C=C).fit(X[rows], y[rows], w[rows])
            linear = model.linear_weights()
            vector = linear[:-1].copy()
            per_b[lang] = float(linear[-1]) + vector[COLUMN["bias"]]
            vector[COLUMN["bias"]] = 0.0
            per_w[lang] = vector
        else:
            per_w[lang], per_b[lang] = shared_w[lang], shared_b[lang]
    return FittedFigure(variant, C, per_w, per_b)


def weighted_average_precision(scores: Any, labels: Any, weights: Any) -> float:
    """Average precision with example weights (precision and recall in weight)."""
    s = numpy.asarray(scores, dtype="float64")
    y = numpy.asarray(labels, dtype="float64")
    w = numpy.asarray(weights, dtype="float64")
    total = float((w * y).sum())
    if total <= 0:
        return float("nan")
    order = numpy.argsort(-s, kind="stable")
    s, y, w = s[order], y[order], w[order]
    tp = numpy.cumsum(w * y)
    kept = numpy.cumsum(w)
    last = numpy.r_[s[1:] != s[:-1], True]  # cut only between distinct scores
    precision = tp[last] / numpy.maximum(kept[last], 1e-12)
    recall = tp[last] / total
    return float(numpy.sum(numpy.diff(numpy.r_[0.0, recall]) * precision))


def grouped_folds(groups: Sequence[str], k: int, seed: int) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): [n] fold ids, whole groups to one fold (by a seeded hash)."""
    return numpy.asarray(
        [int(hashlib.sha1(f"{seed}:{g}".encode()).hexdigest(), 16) % k for g in groups]
    )


def out_of_fold(
    arrays: Dict[str, numpy.ndarray], variant: str, C: float, k: int = N_FOLDS, seed: int = 0
) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): [n] each row's probability under a model fitted without
    its fold (nan where a fold's training part lacks a class)."""
    folds = grouped_folds(arrays["group"], k, seed)
    w = training_weights(arrays)
    out = numpy.full(len(arrays["y"]), numpy.nan)
    for fold in range(k):
        test = folds == fold
        train = ~test
        if not test.any() or len(set(arrays["y"][train].tolist())) < 2:
            continue
        part = {name: value[train] for name, value in arrays.items()}
        model = fit_figure(part, variant, C, w[train])
        out[test] = model.scores(arrays["X"][test], arrays["lang"][test])
    return out


def cross_validate(
    arrays: Dict[str, numpy.ndarray],
    variant: str,
    C: float,
    k: int = N_FOLDS,
    seeds: Sequence[int] = SEEDS,
) -> Tuple[float, float]:
    """Grouped k-fold cross-validation, weighted average precision per fold (the
    example weights of ``training_weights`` before class balancing).

    RETURNS (Tuple[float, float]): mean and sd over folds and seeds.
    """
    values = []
    w = training_weights(arrays)
    base = arrays["w"].copy()
    running = arrays["source"] == "running"
    if running.any():
        base[running] = w[running] / max(w[running].max(), 1e-12) * RUNNING_WEIGHT
    for seed in seeds:
        folds = grouped_folds(arrays["group"], k, seed)
        for fold in range(k):
            test = folds == fold
            train = ~test
            if (arrays["y"][test] == 1).sum() == 0 or len(set(arrays["y"][train].tolist())) < 2:
                continue
            part = {name: value[train] for name, value in arrays.items()}
            model = fit_figure(part, variant, C, w[train])
            scores = model.scores(arrays["X"][test], arrays["lang"][test])
            values.append(weighted_average_precision(scores, arrays["y"][test], base[test]))
    if not values:
        return float("nan"), float("nan")
    return float(numpy.mean(values)), float(numpy.std(values))


def select_and_fit(
    data: FigureData,
    figures: Sequence[str] = FIGURES,
    c_grid: Sequence[float] = C_GRID,
    variants: Sequence[str] = VARIANTS,
    progress: Optional[Callable[[str], None]] = None,
) -> Tuple[Dict[str, FittedFigure], Dict[str, Any], Dict[str, numpy.ndarray]]:
    """Per figure: the variant and C with the best mean grouped-CV average precision,
    the model fitted on all its data, and its out-of-fold scores (seed 0).

    RETURNS: per figure the model, the CV table, the out-of-fold scores.
    """
    models: Dict[str, FittedFigure] = {}
    report: Dict[str, Any] = {}
    oof: Dict[str, numpy.ndarray] = {}
    for figure in figures:
        arrays = data.arrays(figure)
        y = arrays["y"]
        if (y == 1).sum() < 2 or (y == 0).sum() < 2:
            report[figure] = {
                "fitted": False,
                "why": "fewer than 2 positives or negatives",
                "positives": int((y == 1).sum()),
                "negatives": int((y == 0).sum()),
            }
            continue
        table = []
        for variant in variants:
            for C in c_grid:
                mean, sd = cross_validate(arrays, variant, C)
                table.append({"variant": variant, "C": C, "ap_mean": mean, "ap_sd": sd})
        valid = [t for t in table if not math.isnan(t["ap_mean"])]
        # ties: the shared variant, then the stronger regularisation (listed first)
        best = max(valid, key=lambda t: t["ap_mean"]) if valid else {"variant": "shared", "C": 1.0}
        models[figure] = fit_figure(arrays, best["variant"], best["C"])
        oof[figure] = out_of_fold(arrays, best["variant"], best["C"])
        report[figure] = {
            "fitted": True,
            "variant": best["variant"],
            "C": best["C"],
            "cv": table,
            "positives": int((y == 1).sum()),
            "negatives": int((y == 0).sum()),
        }
        if progress is not None:
            progress(
                f"{figure}: {best['variant']}, C={best['C']}, CV AP "
                f"{best.get('ap_mean', float('nan')):.3f} ± {best.get('ap_sd', float('nan')):.3f}"
                f" ({report[figure]['positives']} positives,"
                f" {report[figure]['negatives']} negatives)"
            )
    return models, report, oof


def scorer_spec(
    models: Dict[str, FittedFigure], thresholds: Dict[str, Dict[str, float]], source: str
) -> Dict[str, Any]:
    """The scorer.json form (``model.FigureScorer.from_dict``): per figure the shared
    weights, bias and threshold, per language the bias, threshold and (per-language
    variant) weights; figures without a model keep the prior's weights.

    thresholds (Dict[str, Dict[str, float]]): per language, per figure.
    RETURNS (Dict[str, Any]): the data.
    """
    figures: Dict[str, Any] = {}
    for figure in FIGURES:
        model = models.get(figure)
        if model is None:
            spec = dict(PRIOR[figure])
        else:
            spec = {
                "weights": _named(model.weights["*"]),
                "bias": round(model.bias["*"], 6),
                "variant": model.variant,
                "C": model.C,
            }
        languages = {}
        for lang in LANGUAGES:
            entry: Dict[str, Any] = {}
            if model is not None:
                entry["bias"] = round(model.bias[lang], 6)
                if (
                    model.variant == "per_language"
                    and model.weights[lang] is not model.weights["*"]
                ):
                    entry["weights"] = _named(model.weights[lang])
            if figure in thresholds.get(lang, {}):
                entry["threshold"] = round(float(thresholds[lang][figure]), 6)
            if entry:
                languages[lang] = entry
        spec["languages"] = languages
        figures[figure] = spec
    return {
        "version": 1,
        "source": "file",
        "trained": source,
        "features": list(FEATURES),
        "figures": figures,
    }


def _named(vector: numpy.ndarray) -> Dict[str, float]:
    return {name: round(float(v), 6) for name, v in zip(FEATURES, vector) if abs(v) > 1e-9}


# --- the whole recipe ----------------------------------------------------------------------


def read_corpus(path: Path) -> List[Doc]:
    """RETURNS (List[Doc]): the docs of a converted corpus DocBin (``corpus/asp/train.spacy``)."""
    import spacy

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"figures train: {path} not found (run the convert commands first)")
    return list(DocBin().from_disk(path).get_docs(spacy.blank("xx").vocab))


def gold_docs(
    rows: Sequence[Dict[str, Any]], nlps: Dict[str, Language], cache_dir: Optional[Path], name: str
) -> Dict[str, Doc]:
    """RETURNS (Dict[str, Doc]): per text key, the gold text through its language's base."""
    docs: Dict[str, Doc] = {}
    for lang in LANGUAGES:
        texts = list(dict.fromkeys(r["text"] for r in rows if r["lang"] == lang))
        if not texts:
            continue
        cache = Path(cache_dir) / f"gold-{name}-{lang}.spacy" if cache_dir else None
        for text, doc in zip(texts, process(nlps[lang], texts, cache)):
            docs[text_key(text)] = doc
    return docs
