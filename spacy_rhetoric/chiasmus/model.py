"""Registered architecture of the chiasmus scorer:
candidate features (D/L/E) -> standardisation -> optional ReLU layers -> linear -> sigmoid.

The model maps ``(docs, candidates)``, where ``candidates[i]`` is the [k_i, 4] (or
[k_i, 6]) array of token positions of doc i's candidates, to a [sum k_i, 1] array of
probabilities that each candidate is a chiasmus. All sizes follow from the config (the
number of features is fixed by the feature groups), so the model needs no lazy
initialization; ``initialize`` fits the standardisation (mean and scale of each
feature) on the sample it is given.
"""

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, Relu, chain
from thinc.types import Floats2d, Ints2d

from .features import (
    FEATURE_GROUPS,
    LEXICAL_ATTRS,
    VECTOR_SOURCES,
    candidate_features,
    feature_names,
)

InT = Tuple[List[Doc], List[Ints2d]]


@registry.architectures("spacy-rhetoric.ChiasmusScorer.v1")
def build_chiasmus_scorer(
    feature_groups: Sequence[str] = FEATURE_GROUPS,
    hidden_width: int = 0,
    depth: int = 1,
    dropout: float = 0.1,
    lexical_attr: str = "LEMMA",
    vectors: str = "auto",
    clues: Optional[Dict[str, List[str]]] = None,
) -> Model[InT, Floats2d]:
    """Build the chiasmus scorer.

    feature_groups (Sequence[str]): the feature groups, any of "D" (Dubremetz-style), "L"
        (lemma equalities), "E" (vector cosines); see spacy_rhetoric.chiasmus.features.
    hidden_width (int): width of the hidden ReLU layers; 0 gives logistic regression.
    depth (int): number of hidden layers (ignored when hidden_width is 0).
    dropout (float): dropout after each hidden layer.
    lexical_attr (str): the token attribute compared as "lemma": LEMMA, NORM, LOWER or ORTH.
    vectors (str): where the E features take vectors from: "auto", "static", "tensor", "none".
    clues (Optional[Dict[str, List[str]]]): replacement clue word lists ("negation",
        "conjunction", "inversion") instead of the built-in lists of the doc's language.
    RETURNS (Model[Tuple[List[Doc], List[Ints2d]], Floats2d]): the model; its output is
        one probability per candidate, [sum k_i, 1].
    """
    groups = list(feature_groups)
    names = feature_names(groups)
    if lexical_attr not in LEXICAL_ATTRS:
        raise ValueError(
            f"spacy-rhetoric.ChiasmusScorer.v1: lexical_attr must be one of {LEXICAL_ATTRS}, "
            f"got {lexical_attr!r}"
        )
    if vectors not in VECTOR_SOURCES:
        raise ValueError(
            f"spacy-rhetoric.ChiasmusScorer.v1: vectors must be one of {VECTOR_SOURCES}, "
            f"got {vectors!r}"
        )
    if hidden_width < 0 or depth < 0:
        raise ValueError("spacy-rhetoric.ChiasmusScorer.v1: hidden_width and depth must be >= 0")
    layers: List[Model] = [
        chiasmus_featurizer(groups, lexical_attr, vectors, clues),
        feature_standardizer(len(names)),
    ]
    width = len(names)
    for _ in range(depth if hidden_width else 0):
        layers.append(Relu(nO=hidden_width, nI=width, dropout=dropout))
        width = hidden_width
    layers.append(Linear(nO=1, nI=width))
    layers.append(sigmoid_output())
    model = chain(*layers)
    model.attrs["feature_names"] = names
    model.attrs["lexical_attr"] = lexical_attr
    return model


def chiasmus_featurizer(
    groups: Sequence[str],
    lexical_attr: str = "LEMMA",
    vectors: str = "auto",
    clues: Optional[Dict[str, List[str]]] = None,
) -> Model[InT, Floats2d]:
    """A layer without parameters: (docs, candidates) -> [sum k_i, n_features] features."""
    return Model(
        "chiasmus_features",
        _featurize,
        attrs={
            "groups": tuple(groups),
            "lexical_attr": lexical_attr,
            "vectors": vectors,
            "clues": clues,
        },
        dims={"nO": len(feature_names(groups))},
    )


def _featurize(model: Model, inputs: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    docs, candidates = inputs
    attrs = model.attrs
    blocks = [
        candidate_features(
            doc,
            numpy.asarray(cands),
            groups=attrs["groups"],
            lexical_attr=attrs["lexical_attr"],
            vectors=attrs["vectors"],
            clues=attrs["clues"],
        )
        for doc, cands in zip(docs, candidates)
    ]
    n_features = model.get_dim("nO")
    X = numpy.concatenate(blocks) if blocks else numpy.zeros((0, n_features), dtype="float32")
    return model.ops.asarray2f(X), lambda dX: inputs


def feature_standardizer(n_features: int) -> Model[Floats2d, Floats2d]:
    """(X - mean) / scale, with mean and scale fitted on the initialization sample
    (0 and 1 without one). The parameters are not trained."""
    return Model(
        "feature_standardizer",
        _standardize,
        init=_init_standardizer,
        dims={"nI": n_features, "nO": n_features},
        params={"mean": None, "scale": None},
    )


def _init_standardizer(
    model: Model, X: Optional[Floats2d] = None, Y: Optional[Floats2d] = None
) -> None:
    n = model.get_dim("nI")
    mean = numpy.zeros(n, dtype="float32")
    scale = numpy.ones(n, dtype="float32")
    if X is not None and len(X) > 1:
        data = model.ops.to_numpy(X)
        mean = data.mean(0).astype("float32")
        std = data.std(0).astype("float32")
        scale = numpy.where(std > 1e-6, std, 1.0).astype("float32")
    model.set_param("mean", model.ops.asarray1f(mean))
    model.set_param("scale", model.ops.asarray1f(scale))


def _standardize(model: Model, X: Floats2d, is_train: bool) -> Tuple[Floats2d, Callable]:
    mean = model.get_param("mean")
    scale = model.get_param("scale")
    Y = (X - mean) / scale

    def backprop(dY: Floats2d) -> Floats2d:
        return dY / scale

    return Y, backprop


def sigmoid_output() -> Model[Floats2d, Floats2d]:
    """Logits -> probabilities. Its backward pass hands the incoming gradient on
    unchanged: the component passes d = p - y, the gradient of the binary cross-entropy
    with respect to the logits."""
    return Model("sigmoid_output", _sigmoid_output)


def _sigmoid_output(model: Model, X: Floats2d, is_train: bool) -> Tuple[Floats2d, Callable]:
    return model.ops.sigmoid(X, inplace=False), lambda dY: dY
