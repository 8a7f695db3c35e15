"""The training data of the figure scorer: three kinds of candidates, all proposed by
the ``figure_finder`` rules on text tagged and parsed by the language's base pipeline
(the fit: ``train``).

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
   candidates (the weight shrinks where they are more: ``training_weights``).
"""

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import srsly
from spacy.language import Language
from spacy.tokens import Doc, DocBin

from .candidates import Candidate
from .component import FigureFinder
from .features import FEATURES
from .metrics import HANDBOOK_FAMILIES
from .model import FigureScorer

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
# families of the handbook target (docs/results/figures.md)
FAMILIES: Dict[str, Tuple[str, ...]] = HANDBOOK_FAMILIES
FAMILY_OF = {figure: family for family, figures in FAMILIES.items() for figure in figures}


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
