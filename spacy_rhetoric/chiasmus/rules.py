"""A chiasmus scorer that needs no training: Dubremetz & Nivre's hand-weighted features
over antimetaboles (``spacy-rhetoric.ChiasmusRules.v1``).

Dubremetz & Nivre (2015, "Rhetorical figure detection: the case of chiasmus") ranked
the lemma repetitions A B B' A' of Europarl by a linear score with hand-set weights; we
compute those features with ``spacy_rhetoric.chiasmus.features`` (the D and L groups)
and keep their weights:

========================  ======  ==============================================
feature                   weight  what it counts
========================  ======  ==============================================
``punct_outer``            -10    hard punctuation between A and B, and B' and A'
``comma_outer``            -10    commas there
``punct_central``           -5    hard punctuation between B and B'
``stop_a``, ``stop_b``     -10    A (and A'), B (and B') are stop words
``repeat_a_inside``,        -5    further repetitions of A's, B's lemma inside
``repeat_b_inside``               A..A'
``size_difference``         -1    the two outer segments differ in length
``central_size``            -1    tokens between B and B'
``identical_outer``         +5    the outer segments are identical
``shared_outer``            +1    lemmas the outer segments share
``shared_outer_relative``   +1    the same, relative to their length
``shared_bigrams_outer``    +1    bigrams they share
``has_conjunction``         +2    a conjunction between B and B' (0 or 1)
``has_negation``            +2    a negation inside A..A' (0 or 1)
``stop_content_a``,          0    A (and A'), B (and B') are stop words tagged as
``stop_content_b``                content words (NOUN, PROPN, VERB, ADJ, ADV, NUM)
========================  ======  ==============================================

Their trigram, context and "from ... to" features are not computed. We add three
penalties that their candidate search made unnecessary, since ours also proposes
pairs that repeat only their part of speech: -20 for each of the pairs (A, A') and
(B, B') that does not repeat its lemma (lower-cased; the lower-cased form where the
doc has no lemmas), -20 when A and B have the same lemma, and -10 for each paragraph
break (a blank line) inside A..A'. The probability is ``sigmoid(score - bias)``; the
default bias was chosen on the training split of the Dubremetz & Nivre data (the
F1-optimal threshold on its annotated candidates; ``benchmarks/chiasmus_rules.py``
recomputes it), never on a test set. ``weights`` replaces any of the weights by name.

The scorer reads tokens, lemmas (if any), stop words and punctuation, and POS only for
the CCONJ conjunction clue and the stop words tagged as content words (none without
POS): it runs on a blank pipeline.
"""

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import IS_STOP, POS
from spacy.symbols import IDS
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d, Ints2d

from ..stems import StemPairs
from .features import candidate_features, feature_names

InT = Tuple[List[Doc], List[Ints2d]]
GROUPS = ("D", "L")
RULE_WEIGHTS: Dict[str, float] = {
    "punct_outer": -10.0,
    "comma_outer": -10.0,
    "punct_central": -5.0,
    "stop_a": -10.0,
    "stop_b": -10.0,
    "repeat_a_inside": -5.0,
    "repeat_b_inside": -5.0,
    "size_difference": -1.0,
    "central_size": -1.0,
    "identical_outer": 5.0,
    "shared_outer": 1.0,
    "shared_outer_relative": 1.0,
    "shared_bigrams_outer": 1.0,
    "has_conjunction": 2.0,
    "has_negation": 2.0,
    "no_repetition_a": -20.0,
    "no_repetition_b": -20.0,
    "same_lemma_a_b": -20.0,
    "paragraph_breaks": -10.0,
    "stem_repetition_a": 0.0,
    "stem_repetition_b": 0.0,
    "stop_content_a": 0.0,
    "stop_content_b": 0.0,
}
CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM"})
_CONTENT_POS_IDS = numpy.asarray([IDS[pos] for pos in sorted(CONTENT_POS)], dtype=numpy.uint64)
# the F1-optimal threshold of the score on the annotated candidates of the Dubremetz &
# Nivre training split (benchmarks/chiasmus_rules.py)
DEFAULT_BIAS = 0.23


def rule_features(doc: Doc, candidates: numpy.ndarray) -> Dict[str, numpy.ndarray]:
    """The features of the hand-weighted score (the names of ``RULE_WEIGHTS``).

    doc (Doc): the doc; lemmas are used where it has them, else lower-case forms.
    candidates (numpy.ndarray): [k, 4] (or [k, 6]) token positions A, B, (C, C',) B', A'.
    RETURNS (Dict[str, numpy.ndarray]): [k] values per feature.
    """
    lexical_attr = "LEMMA" if doc.has_annotation("LEMMA") else "LOWER"
    matrix = candidate_features(doc, candidates, groups=GROUPS, lexical_attr=lexical_attr)
    values = dict(zip(feature_names(GROUPS), matrix.T))
    values["has_conjunction"] = numpy.minimum(values["conjunction_central"], 1.0)
    values["has_negation"] = numpy.minimum(
        values["negation_outer"] + values["negation_central"], 1.0
    )
    # a pair that repeats its form up to an ending but not its lemma (``same_stem``): a
    # lemmatizer's slip ("blickst" / "blickt"), or inflection in a doc without lemmas
    # ("amor" / "amoris"); weight 0 by default, a language's calibration may set it
    stems = StemPairs([t.text.lower() for t in doc])  # not lower_: unset in a bare Vocab()
    width = candidates.shape[1]
    stem_a = stems(candidates[:, 0], candidates[:, width - 1]).astype("float32")
    stem_b = stems(candidates[:, 1], candidates[:, width - 2]).astype("float32")
    values["no_repetition_a"] = 1.0 - values["lemma_a_a2"]
    values["no_repetition_b"] = 1.0 - values["lemma_b_b2"]
    values["stem_repetition_a"] = stem_a * values["no_repetition_a"]
    values["stem_repetition_b"] = stem_b * values["no_repetition_b"]
    values["same_lemma_a_b"] = values["lemma_a_b"]
    # a stop word tagged as a content word ("first", "last", "say", "show" in spaCy's
    # English list): weight 0 by default (the stop penalty alone), a language's
    # calibration may relieve it
    content = _content_stops(doc)
    values["stop_content_a"] = (content[candidates[:, 0]] + content[candidates[:, width - 1]]) / 2
    values["stop_content_b"] = (content[candidates[:, 1]] + content[candidates[:, width - 2]]) / 2
    return values


def _content_stops(doc: Doc) -> numpy.ndarray:
    """[n] float32: 1 where a token is a stop word whose POS is a content word's."""
    if not doc.has_annotation("POS"):
        return numpy.zeros(len(doc), dtype="float32")
    columns = numpy.asarray(doc.to_array([POS, IS_STOP]), dtype=numpy.uint64).reshape(-1, 2)
    return (numpy.isin(columns[:, 0], _CONTENT_POS_IDS) & (columns[:, 1] != 0)).astype("float32")


def rule_scores(
    doc: Doc, candidates: numpy.ndarray, weights: Optional[Dict[str, float]] = None
) -> numpy.ndarray:
    """The hand-weighted scores of a doc's candidates (before the sigmoid).

    weights (Optional[Dict[str, float]]): replacement weights by feature name.
    RETURNS (numpy.ndarray): [k] float64.
    """
    chosen = _weights(weights)
    candidates = numpy.asarray(candidates, dtype=numpy.int64).reshape(len(candidates), -1)
    if len(candidates) == 0:
        return numpy.zeros(0)
    values = rule_features(doc, candidates)
    return sum(weight * values[name].astype("float64") for name, weight in chosen.items())


def _weights(weights: Optional[Dict[str, float]]) -> Dict[str, float]:
    unknown = sorted(set(weights or {}) - set(RULE_WEIGHTS))
    if unknown:
        raise ValueError(
            f"ChiasmusRules: unknown feature weights {unknown}; known: {sorted(RULE_WEIGHTS)}"
        )
    return {**RULE_WEIGHTS, **(weights or {})}


@registry.architectures("spacy-rhetoric.ChiasmusRules.v1")
def build_chiasmus_rules(
    bias: float = DEFAULT_BIAS, weights: Optional[Dict[str, float]] = None
) -> Model[InT, Floats2d]:
    """Build the hand-weighted chiasmus scorer (no parameters to train).

    bias (float): the score at which the probability is 0.5.
    weights (Optional[Dict[str, float]]): replacement weights by feature name (see
        ``RULE_WEIGHTS``).
    RETURNS (Model[InT, Floats2d]): (docs, candidates) -> [sum k, 1] probabilities.
    """
    return Model(
        "chiasmus_rules",
        _forward,
        attrs={
            "bias": float(bias),
            "weights": _weights(weights),
            "lexical_attr": "LEMMA",
            "needs_pos": False,
            "trainable": False,
        },
    )


def _forward(model: Model, inputs: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    docs, candidates = inputs
    scores = [
        rule_scores(doc, numpy.asarray(c), model.attrs["weights"])
        for doc, c in zip(docs, candidates)
    ]
    flat = numpy.concatenate(scores) if scores else numpy.zeros(0)
    probs = 1.0 / (1.0 + numpy.exp(-(flat - model.attrs["bias"])))
    output = model.ops.asarray2f(probs.reshape(-1, 1).astype("float32"))

    def backprop(d_output: Floats2d) -> InT:
        return inputs  # nothing to learn

    return output, backprop


def score_rules(docs: Sequence[Doc], candidates: Sequence[numpy.ndarray]) -> List[numpy.ndarray]:
    """The hand-weighted scores (before the sigmoid) per doc, with the default weights."""
    return [rule_scores(doc, c) for doc, c in zip(docs, candidates)]
