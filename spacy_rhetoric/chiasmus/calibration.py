"""Per-language calibration of the hand-weighted chiasmus rules on running text.

The rules' weights and bias were set on English Europarl candidates (Dubremetz &
Nivre). Applied to German they put every candidate of ordinary prose below 0.001: German
sets a comma before every infinitive and subordinate clause, so "essen, um zu leben,
und nicht leben, um zu essen" pays the comma penalty twice. A calibration fixes, per
language,

- ``weights``: the changes of ``LANGUAGE_WEIGHTS``, set by hand for the language's own
  punctuation and function words (German, Latin, Chinese) or fitted on annotated training
  candidates (English), checked on held-out running text;
- ``bias``: the raw score at which the probability is 0.5, chosen on a calibration part of
  running text (treebank text tagged by the language's base pipeline, the tokens a user
  gets) so that at most ``per_1000`` candidates per 1,000 tokens reach it. Running text
  holds few chiasmi, so a candidate at 0.5 is one of the rarest inversions of ordinary
  prose: the probability is ``sigmoid(score - bias)`` in the rules' own units.

Each language's held-out part then gives the rate a user sees, and the annotated
positives (the German 450, Dubremetz & Nivre test, the famous Chinese antimetaboles)
the recall at that threshold (Chinese is searched on characters: ``characters``);
``python -m spacy_rhetoric chiasmus calibrate`` (project command
``calibrate-chiasmus``) writes ``spacy_rhetoric/data/chiasmus/calibration.json``, which
ships with the package. ``spacy-rhetoric.ChiasmusRules.v2`` (the default scorer of
``chiasmus_finder``) reads it for the pipeline's language (``calibration = "auto"``);
a language without a calibration gets the English one.
"""

import math
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import srsly
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model

from .characters import best_per_words, character_view
from .rules import DEFAULT_BIAS, build_chiasmus_rules, rule_scores

CALIBRATION_PATH = Path(__file__).resolve().parents[1] / "data" / "chiasmus" / "calibration.json"
# per language: set by hand (de, la) or fitted on annotated training data (en), checked on
# its held-out running text (see docs/results/chiasmus.md)
LANGUAGE_WEIGHTS: Dict[str, Dict[str, float]] = {
    # German puts a comma before every infinitive and subordinate clause ("essen, um zu
    # leben"): a comma between A and B (or B' and A') says nothing about the figure; the
    # German stop list holds full verbs and nouns' homographs ("sein", "haben",
    # "werden"), so a stop word costs less; a pair that repeats its form up to an ending
    # counts as a repetition (the shipped base lemmatizes "blickst" as "blickst").
    "de": {
        "comma_outer": -1.0,
        "stop_a": -5.0,
        "stop_b": -5.0,
        "stem_repetition_a": 20.0,
        "stem_repetition_b": 20.0,
    },
    # English: Dubremetz & Nivre's own features with their weights fitted on the
    # training split of their Europarl annotation (benchmarks/chiasmus_en_fitted_weights.py,
    # C chosen by CV on that split); the penalties their antimetaboles hardly vary in
    # (no repeated lemma, A = B, paragraph breaks) keep the rules' weights
    "en": {
        "punct_outer": -3.1806,
        "comma_outer": -1.5355,
        "punct_central": 0.8402,
        "stop_a": -3.1729,
        "stop_b": -3.4921,
        "repeat_a_inside": -1.0877,
        "repeat_b_inside": -1.2066,
        "size_difference": 0.0051,
        "central_size": -0.7269,
        "identical_outer": 0.6462,
        "shared_outer": 0.2835,
        "shared_outer_relative": 5.1561,
        "shared_bigrams_outer": -0.6925,
        "has_conjunction": 0.9232,
        "has_negation": -0.7046,
        "stop_content_a": -0.2181,
        "stop_content_b": 0.0,
    },
    # Latin inflects: "amor ... amoris" repeats its word on forms and under a weak lemmatizer
    "la": {"stem_repetition_a": 20.0, "stem_repetition_b": 20.0},
    # Chinese is searched on characters (``characters``); spaCy's Chinese stop list,
    # read character by character, holds the pronouns and 人 that modern antimetaboles
    # turn on ("人人为我，我为人人") besides the function characters (不 而 之 者 也), so
    # a stop word costs -5, as in German (set by hand; nothing changed after the
    # calibration scored the famous examples)
    "zh": {"stop_a": -5.0, "stop_b": -5.0},
}
# where a language's weights come from, as the analysis report states it
WEIGHTS_SOURCE: Dict[str, str] = {
    "en": "weights fitted on the Europarl training split",
}
HAND_SET = "hand-set weights"
DEFAULT_PER_1000 = 1.0


class CalibrationError(ValueError):
    """A missing or malformed calibration file or entry."""


def rate_bias(scores: numpy.ndarray, n_tokens: int, per_1000: float = DEFAULT_PER_1000) -> float:
    """The lowest bias at which at most ``per_1000`` of the scores per 1,000 tokens
    reach it (``score >= bias``).

    scores (numpy.ndarray): raw rule scores of every candidate of the running text.
    n_tokens (int): the running text's tokens.
    per_1000 (float): the rate.
    RETURNS (float): the bias: midway between the last score let through and the next
        lower one (above the best score when none may pass).
    """
    if n_tokens <= 0:
        raise CalibrationError(f"rate_bias: n_tokens must be > 0, got {n_tokens}")
    if per_1000 < 0:
        raise CalibrationError(f"rate_bias: per_1000 must be >= 0, got {per_1000}")
    ranked = numpy.sort(numpy.asarray(scores, dtype="float64"))[::-1]
    allowed = int(math.floor(per_1000 * n_tokens / 1000 + 1e-9))
    if len(ranked) == 0:
        return float(DEFAULT_BIAS)
    if allowed >= len(ranked):
        return float(ranked[-1])
    # ties: a bias above the tied block lets fewer through
    below = ranked[allowed]
    kept = ranked[:allowed][ranked[:allowed] > below]
    above = kept[-1] if len(kept) else ranked[0] + 2.0
    return float((above + below) / 2)


def running_text_scores(
    docs: Iterable[Doc],
    suggest: Callable[[Doc], Any],
    weights: Optional[Dict[str, float]] = None,
    characters: bool = False,
) -> Tuple[numpy.ndarray, int]:
    """The raw rule scores of every candidate of running text.

    docs (Iterable[Doc]): processed docs (POS and lemmas from the language's base).
    suggest (Callable): doc -> Candidates (the finder's suggester; with ``characters``
        its ``suggest_forms``).
    weights (Optional[Dict[str, float]]): the rules' weight changes.
    characters (bool): search each doc's character view and keep the best candidate of
        those that fall on the same words, as the finder does for Chinese.
    RETURNS (Tuple[numpy.ndarray, int]): the scores and the number of tokens (the docs'
        own tokens, words for Chinese).
    """
    found: List[numpy.ndarray] = []
    n_tokens = 0
    for doc in docs:
        n_tokens += len(doc)
        view = character_view(doc) if characters else None
        searched = view.doc if view is not None else doc
        indices = suggest(searched).indices
        if len(indices):
            scores = rule_scores(searched, indices, weights)
            if view is not None:
                scores = scores[best_per_words(view.token_of[indices], scores)]
            found.append(scores.astype("float32"))
    return (numpy.concatenate(found) if found else numpy.zeros(0, "float32")), n_tokens


def calibrate(
    lang: str,
    calibration: Tuple[numpy.ndarray, int],
    held_out: Tuple[numpy.ndarray, int],
    weights: Dict[str, float],
    per_1000: float = DEFAULT_PER_1000,
    positives: Optional[numpy.ndarray] = None,
    sources: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """Choose a language's bias on the calibration part and measure it on the rest.

    lang (str): the language.
    calibration, held_out (Tuple[numpy.ndarray, int]): raw scores and tokens of each part.
    weights (Dict[str, float]): the weight changes the scores were computed with.
    per_1000 (float): the rate chosen on the calibration part.
    positives (Optional[numpy.ndarray]): raw scores of annotated chiasmi (recall).
    sources (Optional[Dict[str, Any]]): what the parts and positives are (for the record).
    RETURNS (Dict[str, Any]): the calibration entry (bias, weights and the evidence).
    """
    bias = rate_bias(calibration[0], calibration[1], per_1000)

    def part(scores: numpy.ndarray, tokens: int) -> Dict[str, Any]:
        above = int((scores >= bias).sum())
        return {
            "tokens": int(tokens),
            "candidates": int(len(scores)),
            "reported": above,
            "reported_per_1000_tokens": round(1000.0 * above / max(tokens, 1), 3),
        }

    entry: Dict[str, Any] = {
        "lang": lang,
        "bias": round(bias, 4),
        "weights": dict(weights),
        "per_1000": per_1000,
        "calibration": part(*calibration),
        "held_out": part(*held_out),
        "sources": dict(sources or {}),
    }
    if positives is not None:
        positives = numpy.asarray(positives)
        entry["positives"] = {
            "n": int(len(positives)),
            "reported": int((positives >= bias).sum()),
            "recall": round(float((positives >= bias).mean()), 4) if len(positives) else None,
        }
    return entry


def load_calibrations(path: Path = CALIBRATION_PATH) -> Dict[str, Dict[str, Any]]:
    """RETURNS (Dict[str, Dict[str, Any]]): the calibration of each language ({} if the
    file is missing). RAISES CalibrationError: a malformed file."""
    path = Path(path)
    if not path.is_file():
        return {}
    try:
        data = srsly.read_json(path)
        return {lang: _checked(lang, entry) for lang, entry in data["languages"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise CalibrationError(f"chiasmus calibration {path} is malformed: {err}") from None


def _checked(lang: str, entry: Dict[str, Any]) -> Dict[str, Any]:
    bias = float(entry["bias"])
    weights = {str(k): float(v) for k, v in dict(entry["weights"]).items()}
    if not math.isfinite(bias):
        raise ValueError(f"{lang}: bias {bias}")
    return {**entry, "bias": bias, "weights": weights}


def calibration_for(lang: str, path: Path = CALIBRATION_PATH) -> Optional[Dict[str, Any]]:
    """RETURNS (Optional[Dict[str, Any]]): ``lang``'s calibration, else the English one,
    else None (the rules' Europarl defaults)."""
    found = load_calibrations(path)
    return found.get(lang) or found.get("en")


def apply_calibration(model: Model, lang: str) -> None:
    """Set a ``ChiasmusRules.v2`` model's bias and weights from the calibration of its
    setting (``"auto"``: the pipeline's language); explicit ``bias``/``weights`` of the
    config win. Other models are left alone."""
    setting = model.attrs.get("calibration")
    if not setting:
        return
    chosen = lang if setting == "auto" else setting
    entry = calibration_for(chosen)
    explicit = model.attrs["explicit"]
    if entry is None:
        model.attrs["calibrated_for"] = None
        return
    if not explicit["bias"]:
        model.attrs["bias"] = entry["bias"]
    weights = dict(model.attrs["weights"])
    for name, value in entry["weights"].items():
        if name not in explicit["weights"]:
            weights[name] = value
    model.attrs["weights"] = weights
    model.attrs["calibrated_for"] = entry["lang"]


@registry.architectures("spacy-rhetoric.ChiasmusRules.v2")
def build_chiasmus_rules_v2(
    calibration: str = "auto",
    bias: Optional[float] = None,
    weights: Optional[Dict[str, float]] = None,
) -> Model:
    """The hand-weighted chiasmus scorer, calibrated per language (see this module).

    calibration (str): "auto" (the pipeline's language), a language code, or "" (the
        Europarl defaults of ChiasmusRules.v1).
    bias (Optional[float]): overrides the calibrated bias.
    weights (Optional[Dict[str, float]]): override calibrated weights by name.
    RETURNS (Model): (docs, candidates) -> [sum k, 1] probabilities.
    """
    model = build_chiasmus_rules(DEFAULT_BIAS if bias is None else bias, weights)
    model.attrs["calibration"] = calibration
    model.attrs["explicit"] = {"bias": bias is not None, "weights": sorted(weights or {})}
    model.attrs["calibrated_for"] = None
    return model


def write_calibrations(entries: Sequence[Dict[str, Any]], path: Path = CALIBRATION_PATH) -> None:
    """Merge calibration entries into the file (one per language)."""
    path = Path(path)
    found = srsly.read_json(path)["languages"] if path.is_file() else {}
    for entry in entries:
        found[entry["lang"]] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(path, {"format": "spacy-rhetoric.chiasmus-calibration.v1", "languages": found})
