"""The running text and annotated chiasmi each language's calibration is measured on
(see ``calibration``): which parts of the data mirror, read and processed by the
language's base pipeline, as a user's text would be.

- **de**: calibration: UD German-LIT test, first half; held out: its second half;
  annotated: the German 450 (positives a/c/fa/fc).
- **en**: calibration: UD English-EWT dev; held out: English-EWT test; annotated:
  Dubremetz & Nivre test.
- **la**: calibration: 24 Tesserae texts, prose and verse (``LATIN_CALIBRATION``: Cicero's
  speeches, dialogues and letters, Lactantius, Jerome's letters, Virgil, Ovid, Catullus,
  the elegists, Lucretius, Lucan, Martial, Horace; the first ``LATIN_TOKENS`` words of
  each); held out: Cicero In Catilinam, Pro Milone, Ovid Amores; nothing annotated.
- **zh**: calibration: UD Chinese-GSD dev; held out: Chinese-GSD test (both in traditional
  characters, read as raw text by the Chinese base: jieba words, its tagger's POS);
  annotated: the famous Chinese antimetaboles of ``benchmarks/data/antimetaboles.json``
  (``CHINESE_FAMOUS``). Chinese is searched on characters (``characters``), as the
  finder does; rates are per 1,000 of the base pipeline's words.

Treebank text is joined ten sentences a doc (never across a document boundary); Latin
text a citation segment (a sentence or verse line group) at a time, in chunks.
"""

from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy
import srsly
from spacy.language import Language
from spacy.util import registry

from .calibration import DEFAULT_PER_1000, LANGUAGE_WEIGHTS, calibrate, running_text_scores
from .characters import CHARACTER_LANGUAGES, character_view
from .component import DEFAULT_SUGGESTER
from .rules import rule_scores
from .spans import gold_candidates

GERMAN_LIT = "ud/UD_German-LIT/de_lit-ud-test.conllu"
ENGLISH_CALIBRATION = "ud/UD_English-EWT/en_ewt-ud-dev.conllu"
ENGLISH_HELD_OUT = "ud/UD_English-EWT/en_ewt-ud-test.conllu"
CHINESE_CALIBRATION = "ud/UD_Chinese-GSD/zh_gsd-ud-dev.conllu"
CHINESE_HELD_OUT = "ud/UD_Chinese-GSD/zh_gsd-ud-test.conllu"
# typed from their sources before the rules were run on any of them; never used to set
# a weight or the bias
CHINESE_FAMOUS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "antimetaboles.json"
# a broad sample of the mirror's Latin (prose and verse, classical and Christian), none of
# it held out: a bias set on a few texts is the 25th best of a million candidates, a noisy
# quantile of one style (until 2026-11-26 it was calibrated on the first three texts alone)
LATIN_CALIBRATION = (
    "cicero.de_amicitia",
    "cicero.pro_archia",
    "horace.odes",
    "cicero.pro_m_caelio",
    "cicero.pro_murena",
    "cicero.pro_sestio",
    "cicero.philippicae",
    "cicero.de_officiis",
    "cicero.de_senectute",
    "cicero.tusculanae_disputationes",
    "cicero.letters_to_atticus",
    "lactantius.divinarum_institutionum",
    "jerome.epistulae",
    "vergil.aeneid",
    "vergil.georgics",
    "ovid.metamorphoses",
    "ovid.heroides",
    "catullus.carmina",
    "propertius.elegies",
    "tibullus.elegies",
    "lucretius.de_rerum_natura",
    "lucan.bellum_civile",
    "martial.epigrams",
    "horace.satires",
)
LATIN_HELD_OUT = ("cicero.in_catilinam", "cicero.pro_milone", "ovid.amores")
LATIN_DIR = "latin-corpora/tesserae/texts/la"
LATIN_TOKENS = 12000  # words per Latin text (about a speech, or a book of odes)
CALIBRATED_LANGUAGES = ("de", "en", "la", "zh")


def _treebank_texts(path: Path, n_sents: int = 10) -> List[str]:
    from spacy.lang.xx import MultiLanguage

    from .negatives import running_text

    return [doc.text for doc in running_text([path], MultiLanguage().vocab, n_sents)]


def _latin_texts(data_dir: Path, names: Iterable[str], tokens: int) -> List[str]:
    from ..corpora.tesserae import read_tess

    texts: List[str] = []
    for name in names:
        path = data_dir / LATIN_DIR / f"{name}.tess"
        if not path.is_file():
            raise FileNotFoundError(f"Latin running text: {path} not found")
        chunk: List[str] = []
        in_chunk = seen = 0
        for segment in read_tess(path).segments:
            words = len(segment.text.split())
            chunk.append(segment.text)
            in_chunk += words
            seen += words
            if in_chunk >= 200:  # about a paragraph a doc
                texts.append(" ".join(chunk))
                chunk, in_chunk = [], 0
            if seen >= tokens:
                break
        if chunk:
            texts.append(" ".join(chunk))
    return texts


def running_parts(lang: str, data_dir: Path) -> Tuple[List[str], List[str], Dict[str, str]]:
    """The calibration and held-out texts of a language.

    RETURNS (Tuple[List[str], List[str], Dict[str, str]]): both parts' texts and what
        they are.
    """
    data_dir = Path(data_dir)
    if lang == "de":
        path = data_dir / GERMAN_LIT
        if not path.is_file():
            raise FileNotFoundError(f"German running text: {path} not found")
        texts = _treebank_texts(path)
        half = len(texts) // 2
        return (
            texts[:half],
            texts[half:],
            {
                "calibration": "UD German-LIT test, first half (10-sentence docs)",
                "held_out": "UD German-LIT test, second half",
            },
        )
    if lang == "en":
        for name in (ENGLISH_CALIBRATION, ENGLISH_HELD_OUT):
            if not (data_dir / name).is_file():
                raise FileNotFoundError(f"English running text: {data_dir / name} not found")
        return (
            _treebank_texts(data_dir / ENGLISH_CALIBRATION),
            _treebank_texts(data_dir / ENGLISH_HELD_OUT),
            {"calibration": "UD English-EWT dev", "held_out": "UD English-EWT test"},
        )
    if lang == "zh":
        for name in (CHINESE_CALIBRATION, CHINESE_HELD_OUT):
            if not (data_dir / name).is_file():
                raise FileNotFoundError(f"Chinese running text: {data_dir / name} not found")
        return (
            _treebank_texts(data_dir / CHINESE_CALIBRATION),
            _treebank_texts(data_dir / CHINESE_HELD_OUT),
            {"calibration": "UD Chinese-GSD dev", "held_out": "UD Chinese-GSD test"},
        )
    if lang == "la":
        return (
            _latin_texts(data_dir, LATIN_CALIBRATION, LATIN_TOKENS),
            _latin_texts(data_dir, LATIN_HELD_OUT, LATIN_TOKENS),
            {
                "calibration": (
                    f"Tesserae {', '.join(LATIN_CALIBRATION)} ({LATIN_TOKENS} words each)"
                ),
                "held_out": f"Tesserae {', '.join(LATIN_HELD_OUT)} ({LATIN_TOKENS} words each)",
            },
        )
    raise ValueError(f"chiasmus calibrate: no running text for {lang!r}; use one of "
                     f"{list(CALIBRATED_LANGUAGES)}")  # fmt: skip


def positive_scores(
    lang: str, data_dir: Path, nlp: Language, weights: Dict[str, float]
) -> Tuple[Optional[numpy.ndarray], str]:
    """The raw rule scores of a language's annotated chiasmi (None where there are none):
    German: the 450's positives on their own POS and lemmas; English: the Dubremetz &
    Nivre test positives, tagged by ``nlp``."""
    from .eval_english import ENGLISH_POSITIVE, english_examples
    from .eval_german import GERMAN_FULL, german_examples

    data_dir = Path(data_dir)
    if lang == "de":
        examples = german_examples(data_dir / "german-chiasmus", nlp)
        positive, source = GERMAN_FULL, "German 450 GerDraCor candidates, positives a/c/fa/fc"
    elif lang == "en":
        examples = english_examples(data_dir / "chiasmus-dubremetz-nivre", nlp)["test"]
        positive, source = ENGLISH_POSITIVE, "Dubremetz & Nivre test positives"
    else:
        return None, "none annotated"
    scores = []
    for eg in examples:
        found = [p for p, label in gold_candidates(eg.reference) if label in positive]
        same = len(eg.predicted) == len(eg.reference)
        if found and same:
            scores.append(rule_scores(eg.predicted, numpy.asarray(found), weights))
    return (numpy.concatenate(scores) if scores else numpy.zeros(0)), source


def famous_scores(
    nlp: Language,
    items: List[Dict[str, Any]],
    suggester: Any,
    weights: Dict[str, float],
) -> Tuple[numpy.ndarray, List[Dict[str, Any]]]:
    """The raw rule scores of famous antimetaboles of a language searched on characters:
    per item, the best candidate of its text's character view whose A, B, B', A' are
    the item's ``words`` (-inf where none is proposed).

    nlp (Language): the language's base pipeline.
    items (List[Dict[str, Any]]): {"text", "words", "source"} each.
    suggester (ChiasmusSuggester): the finder's suggester.
    weights (Dict[str, float]): the rules' weight changes.
    RETURNS (Tuple[numpy.ndarray, List[Dict[str, Any]]]): [n] scores, and per item its
        source, words and score (None where not proposed).
    """
    scores, rows = [], []
    for item, doc in zip(items, nlp.pipe([i["text"] for i in items])):
        view = character_view(doc)
        indices = suggester.suggest_forms(view.doc).indices
        best = -numpy.inf
        if len(indices):
            raw = rule_scores(view.doc, indices, weights)
            chars = [[view.doc[int(i)].text for i in row] for row in indices]
            matching = [s for s, c in zip(raw, chars) if c == list(item["words"])]
            best = max(matching) if matching else best
        scores.append(best)
        found = round(float(best), 4) if numpy.isfinite(best) else None
        rows.append({"source": item["source"], "words": "".join(item["words"]), "score": found})
    return numpy.asarray(scores, dtype="float64"), rows


def calibrate_language(
    lang: str,
    data_dir: Path,
    nlp: Language,
    per_1000: float = DEFAULT_PER_1000,
    weights: Optional[Dict[str, float]] = None,
    progress: Optional[Callable[[str], None]] = None,
) -> Dict[str, Any]:
    """Calibrate the rules of one language (see ``calibration.calibrate``).

    nlp (Language): the language's base pipeline (POS and lemmas), as analyze runs it.
    weights (Optional[Dict[str, float]]): default: ``LANGUAGE_WEIGHTS[lang]``.
    RETURNS (Dict[str, Any]): the calibration entry.
    """
    weights = dict(LANGUAGE_WEIGHTS.get(lang, {}) if weights is None else weights)

    suggester = registry.resolve({"suggester": DEFAULT_SUGGESTER})["suggester"]
    on_characters = lang in CHARACTER_LANGUAGES
    suggest = suggester.suggest_forms if on_characters else suggester.suggest

    calibration_texts, held_texts, sources = running_parts(lang, data_dir)
    parts = []
    for name, texts in (("calibration", calibration_texts), ("held_out", held_texts)):
        scores, tokens = running_text_scores(
            nlp.pipe(texts, batch_size=16), suggest, weights, characters=on_characters
        )
        parts.append((scores, tokens))
        if progress is not None:
            progress(f"{lang} {name}: {tokens} tokens, {len(scores)} candidates")
    famous = None
    if on_characters:
        items = srsly.read_json(CHINESE_FAMOUS)[lang]
        positives, famous = famous_scores(nlp, items, suggester, weights)
        positive_source = f"famous antimetaboles, {CHINESE_FAMOUS.name} ({lang})"
    else:
        positives, positive_source = positive_scores(lang, data_dir, nlp, weights)
    sources["positives"] = positive_source
    sources["base"] = f"{nlp.meta.get('name', '')} {nlp.meta.get('version', '')}".strip()
    entry = calibrate(lang, parts[0], parts[1], weights, per_1000, positives, sources)
    if famous is not None:
        for row in famous:
            row["reported"] = row["score"] is not None and row["score"] >= entry["bias"]
        entry["famous"] = famous
    return entry
