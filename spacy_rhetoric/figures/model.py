"""The figure scorer: per figure, a logistic model over the candidate features
(``features.FEATURES``): ``probability = sigmoid(weights . x + bias)``, and a threshold.

Weights come from ``spacy_rhetoric/data/figures/scorer.json`` where that file exists
(fitted with ``spacy_rhetoric.logistic`` on annotated candidates and calibrated per
language on running text), else from the **rule prior** below: hand weights set from
what the handbooks say a figure is, not fitted on data, so that the component works out
of the box. The file's form::

    {"version": 1, "features": [...names...],
     "figures": {"anaphora": {"weights": {"stop": -2.5, ...}, "bias": -1.0,
                              "threshold": 0.5,
                              "languages": {"de": {"bias": -1.2, "threshold": 0.6}}}, ...}}

Feature names a figure does not list weigh 0; ``languages`` overrides the bias and
threshold per language (calibration) and, where a language has its own model, the
weights. A language the file does not name gets the figure's own bias and threshold.

The prior, in words: a figure scores higher the more members its series has, the more
alike their lengths (isocolon), the longer the repeated word and the more words it
spans; lower where the repeated word is a stop word or conjunction, very short, or far
between; edge figures gain where punctuation closes their members (they are cola).
Two members of a short stop word ("I went, I saw") stay below 0.5; three cola opened
by the same content word ("nihil agis, nihil moliris, nihil cogitas") reach 0.9.
"""

import math
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
import srsly

from .features import COLUMN, FEATURES

SCORER_PATH = Path(__file__).resolve().parents[1] / "data" / "figures" / "scorer.json"
DEFAULT_THRESHOLD = 0.5

_EDGE = {
    "stop": -2.5,
    "short_word": -0.5,
    "support_words": 0.8,
    "extra_members": 1.0,
    "length_ratio": 1.5,
    "punct_boundaries": 1.0,
    "sentence_start": 0.3,
    "distance": -0.3,
}
# hand weights per figure (see the module docstring); unlisted features weigh 0
PRIOR: Dict[str, Dict[str, Any]] = {
    "anaphora": {"bias": -1.5, "weights": dict(_EDGE)},
    "epiphora": {"bias": -1.5, "weights": dict(_EDGE, stop=-3.0)},
    "symploce": {"bias": -0.5, "weights": dict(_EDGE, stop=-1.5)},
    "anadiplosis": {
        "bias": 0.5,
        "weights": {
            "stop": -3.0,
            "distinct_words": -1.5,
            "short_word": -0.5,
            "support_words": 0.8,
            "punct_between": 1.5,
            "length_ratio": 0.5,
            "word_chars": 0.1,
        },
    },
    "gradatio": {
        "bias": 0.0,
        "weights": {"stop": -3.0, "extra_members": 0.5, "punct_between": 1.0, "length_ratio": 0.5},
    },
    "epizeuxis": {
        "bias": 0.0,
        "weights": {
            "stop": -3.0,
            "short_word": -1.0,
            "extra_members": 1.0,
            "punct_between": 1.0,
            "support_words": 0.5,
        },
    },
    "ploce": {
        "bias": 1.2,
        "weights": {
            "stop": -3.0,
            "extra_members": 1.0,
            "distance": -1.8,
            "word_chars": 0.1,
            "cross_sentence": -1.0,
            "pos_propn": -0.5,
        },
    },
    "polyptoton": {
        "bias": 0.0,
        "weights": {
            "stop": -3.0,
            "extra_members": 0.8,
            "distance": -0.6,
            "word_chars": 0.1,
            "distinct_words": 0.3,
            "cross_sentence": -1.0,
            "pos_propn": -0.5,
        },
    },
    "polysyndeton": {
        "bias": -2.0,
        "weights": {"extra_members": 1.2, "length_ratio": 1.5, "member_words": -0.5},
    },
    "asyndeton": {
        "bias": -3.0,
        "weights": {
            "extra_members": 0.8,
            "length_ratio": 2.0,
            "member_words": -1.0,
            "whole_cola": 0.5,
            "punct_boundaries": 1.0,
        },
    },
    "alliteration": {
        "bias": -1.2,
        "weights": {
            "extra_members": 1.0,
            "distance": -2.5,
            "punct_between": 0.5,
            "short_word": -1.0,
        },
    },
    # opposed words: a correction ("not X but Y") or a lexicon's antonyms in parallel cola
    "antithesis": {
        "bias": -1.5,
        "weights": {
            "shape_corrective": 2.0,
            "antonym_pairs": 1.5,
            "negation_asymmetry": 0.5,
            "contrast_word": 0.5,
            "support_same_pos": 0.5,
            "length_ratio": 0.5,
        },
    },
    # in a speech most questions are asked for effect; a question another speaker
    # answers is a question
    "rhetorical_question": {
        "bias": 0.5,
        "weights": {
            "q_particle": 1.0,
            "q_negated": 0.8,
            "q_series": 0.5,
            "q_answer": 0.5,
            "q_dialogue": -2.0,
        },
    },
}


class FigureScorer:
    """Per figure: weights over ``FEATURES``, a bias and a threshold.

    figures (Dict[str, Dict]): per figure {"weights": {name: w}, "bias": b,
        "threshold": t (optional), "languages": {lang: {"bias", "threshold"}} (optional)}.
    source (str): where the weights come from ("prior" or a path), for reports.
    """

    def __init__(self, figures: Dict[str, Dict[str, Any]], source: str = "prior") -> None:
        self.figures = {name: dict(spec) for name, spec in figures.items()}
        self.source = source
        self._vectors: Dict[str, numpy.ndarray] = {}
        self._language_vectors: Dict[Tuple[str, str], numpy.ndarray] = {}
        # (figure, lang) -> (weights, bias, threshold), read once
        self._params: Dict[Tuple[str, str], Tuple[numpy.ndarray, float, float]] = {}
        for name, spec in self.figures.items():
            self._vectors[name] = self._vector(name, spec.get("weights", {}))
            for lang, entry in spec.get("languages", {}).items():
                if "weights" in entry:
                    self._language_vectors[(name, lang)] = self._vector(name, entry["weights"])

    @staticmethod
    def _vector(name: str, weights: Dict[str, float]) -> numpy.ndarray:
        unknown = set(weights) - set(FEATURES)
        if unknown:
            raise ValueError(
                f"figure_finder: the scorer of {name} names unknown features {sorted(unknown)}"
            )
        vector = numpy.zeros(len(FEATURES), dtype="float64")
        for feature, weight in weights.items():
            vector[COLUMN[feature]] = float(weight)
        return vector

    def _spec(self, figure: str, lang: Optional[str]) -> Dict[str, Any]:
        if figure not in self.figures:
            raise ValueError(f"figure_finder: the scorer has no weights for {figure!r}")
        spec = self.figures[figure]
        return dict(spec, **spec.get("languages", {}).get(lang or "", {}))

    def _figure_params(
        self, figure: str, lang: Optional[str]
    ) -> Tuple[numpy.ndarray, float, float]:
        """The weights, bias and threshold of a figure in a language (cached: the
        figures are fixed once the scorer is built)."""
        key = (figure, lang or "")
        found = self._params.get(key)
        if found is None:
            spec = self._spec(figure, lang)
            found = (
                self._language_vectors.get(key, self._vectors[figure]),
                float(spec.get("bias", 0.0)),
                float(spec.get("threshold", DEFAULT_THRESHOLD)),
            )
            self._params[key] = found
        return found

    def threshold(self, figure: str, lang: Optional[str] = None) -> float:
        """RETURNS (float): the figure's threshold (for the language, if calibrated)."""
        return self._figure_params(figure, lang)[2]

    def __call__(self, figure: str, X: numpy.ndarray, lang: Optional[str] = None) -> numpy.ndarray:
        """The probabilities of candidates of one figure.

        figure (str): the label.
        X (numpy.ndarray): [k, len(FEATURES)] features.
        lang (Optional[str]): the doc's language (per-language bias where calibrated).
        RETURNS (numpy.ndarray): [k] probabilities, float32.
        """
        vector, bias, _ = self._figure_params(figure, lang)
        raw = numpy.asarray(X, dtype="float64") @ vector + bias
        return (1.0 / (1.0 + numpy.exp(-numpy.clip(raw, -50, 50)))).astype("float32")

    def score(
        self, figures: Sequence[str], X: numpy.ndarray, lang: Optional[str] = None
    ) -> numpy.ndarray:
        """The probabilities of candidates of any figures: one matrix product per figure
        over all of its rows.

        figures (Sequence[str]): [k] the label of each row.
        X (numpy.ndarray): [k, len(FEATURES)] features.
        lang (Optional[str]): the doc's language.
        RETURNS (numpy.ndarray): [k] probabilities, float32.
        """
        scores = numpy.zeros(len(figures), dtype="float32")
        rows: Dict[str, List[int]] = {}
        for i, figure in enumerate(figures):
            rows.setdefault(figure, []).append(i)
        for figure, index in rows.items():
            scores[index] = self(figure, X[index], lang)
        return scores

    def to_dict(self) -> Dict[str, Any]:
        """RETURNS (Dict[str, Any]): the scorer as plain data (the scorer.json form)."""
        return {
            "version": 1,
            "source": self.source,
            "features": list(FEATURES),
            "figures": self.figures,
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "FigureScorer":
        """data (Dict[str, Any]): the scorer.json form. RETURNS (FigureScorer): the scorer;
        figures the data leaves out keep their prior."""
        figures = {name: dict(spec) for name, spec in PRIOR.items()}
        figures.update(data.get("figures", {}))
        return cls(figures, source=str(data.get("source", "file")))

    @classmethod
    def prior(cls) -> "FigureScorer":
        """RETURNS (FigureScorer): the hand-weighted rule prior."""
        return cls(PRIOR, source="prior")


def load_scorer(path: Optional[Union[str, Path]] = None) -> FigureScorer:
    """The scorer of a figure finder.

    path (Optional[Union[str, Path]]): a scorer.json; None: the packaged one where it
        exists, else the rule prior.
    RETURNS (FigureScorer): the scorer.
    """
    if path is None:
        if not SCORER_PATH.exists():
            return FigureScorer.prior()
        path = SCORER_PATH
    path = Path(path)
    if not path.exists():
        raise ValueError(f"figure_finder: scorer_path {path} does not exist")
    return FigureScorer.from_dict(srsly.read_json(path))


def logit(probability: float) -> float:
    """The raw score of a probability (for calibrations)."""
    p = min(max(probability, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


def weights_table(scorer: FigureScorer, figures: Iterable[str]) -> Dict[str, Dict[str, float]]:
    """RETURNS (Dict[str, Dict[str, float]]): per figure, its non-zero weights and bias."""
    return {
        name: dict(
            scorer.figures[name].get("weights", {}), bias=scorer.figures[name].get("bias", 0.0)
        )
        for name in figures
    }
