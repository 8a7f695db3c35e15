"""Registered architectures of the chiasmus scorer:
candidate features (D/L/E) -> standardisation -> optional ReLU layers -> linear -> sigmoid.

``spacy-rhetoric.ChiasmusScorer.v1`` takes the E features (six cosines) from the
pipeline's static vectors or ``doc.tensor``; ``spacy-rhetoric.ChiasmusScorer.v2`` takes
them from chosen layers of a frozen multilingual encoder (``encoder``, by default
multilingual-e5-small, referenced by name and never written into the pipeline), ten
cosines per layer (see ``spacy_rhetoric.chiasmus.features``). The encoder is loaded
only when "E" is among the feature groups; one encoder (and its cache of hidden states
per document) is shared by every scorer of the process with the same settings.

The model maps ``(docs, candidates)``, where ``candidates[i]`` is the [k_i, 4] (or
[k_i, 6]) array of token positions of doc i's candidates, to a [sum k_i, 1] array of
probabilities that each candidate is a chiasmus. All sizes follow from the config (the
number of features is fixed by the feature groups), so the model needs no lazy
initialization; ``initialize`` fits the standardisation (mean and scale of each
feature) on the sample it is given.
"""

import hashlib
import os
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import IDS as ATTR_IDS
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, Relu, chain
from thinc.types import Floats2d, Ints2d

from ..encoders.cache import RowCache
from ..encoders.convert import ENCODER_NAME
from .features import (
    FEATURE_GROUPS,
    LEXICAL_ATTRS,
    VECTOR_SOURCES,
    candidate_features,
    feature_names,
)

InT = Tuple[List[Doc], List[Ints2d]]
DEFAULT_ENCODER_LAYERS = (0, 8)


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
    return _build_scorer(
        "spacy-rhetoric.ChiasmusScorer.v1",
        feature_groups,
        hidden_width,
        depth,
        dropout,
        lexical_attr,
        vectors,
        clues,
        None,
    )


@registry.architectures("spacy-rhetoric.ChiasmusScorer.v2")
def build_chiasmus_scorer_v2(
    feature_groups: Sequence[str] = FEATURE_GROUPS,
    hidden_width: int = 0,
    depth: int = 1,
    dropout: float = 0.1,
    lexical_attr: str = "LEMMA",
    vectors: str = "none",
    clues: Optional[Dict[str, List[str]]] = None,
    encoder: Optional[str] = ENCODER_NAME,
    encoder_layers: Sequence[int] = DEFAULT_ENCODER_LAYERS,
    window: int = 256,
    stride: int = 192,
) -> Model[InT, Floats2d]:
    """Build the chiasmus scorer whose E features come from a frozen encoder.

    feature_groups (Sequence[str]): the feature groups, any of "D" (Dubremetz-style), "L"
        (lemma equalities), "E" (encoder cosines); the encoder is loaded only with "E".
    hidden_width (int): width of the hidden ReLU layers; 0 gives logistic regression.
    depth (int): number of hidden layers (ignored when hidden_width is 0).
    dropout (float): dropout after each hidden layer.
    lexical_attr (str): the token attribute compared as "lemma": LEMMA, NORM, LOWER or ORTH.
    vectors (str): the vector source of the E features when ``encoder`` is None
        ("auto", "static", "tensor", "none"; the six cosines of v1).
    clues (Optional[Dict[str, List[str]]]): replacement clue word lists ("negation",
        "conjunction", "inversion") instead of the built-in lists of the doc's language.
    encoder (Optional[str]): a Hugging Face model directory or "multilingual-e5-small"
        (see spacy-rhetoric.EncoderVectors.v1); None: E from ``vectors`` as in v1.
    encoder_layers (Sequence[int]): the hidden states whose cosines are features (0:
        the embedding layer, 12: the last layer of multilingual-e5-small).
    window (int): word pieces per encoder window.
    stride (int): word pieces between window starts.
    RETURNS (Model[Tuple[List[Doc], List[Ints2d]], Floats2d]): the model; its output is
        one probability per candidate, [sum k_i, 1].
    """
    settings = None
    if encoder is not None:
        layers = tuple(int(layer) for layer in encoder_layers)
        if not layers or len(set(layers)) != len(layers) or min(layers) < 0:
            raise ValueError(
                "spacy-rhetoric.ChiasmusScorer.v2: encoder_layers must be distinct layer "
                f"numbers >= 0, got {list(encoder_layers)}"
            )
        if not 0 < stride <= window:
            raise ValueError(
                f"spacy-rhetoric.ChiasmusScorer.v2: need 0 < stride <= window, got "
                f"{stride}, {window}"
            )
        settings = {"name": encoder, "layers": list(layers), "window": window, "stride": stride}
    return _build_scorer(
        "spacy-rhetoric.ChiasmusScorer.v2",
        feature_groups,
        hidden_width,
        depth,
        dropout,
        lexical_attr,
        vectors,
        clues,
        settings,
    )


def _build_scorer(
    arch: str,
    feature_groups: Sequence[str],
    hidden_width: int,
    depth: int,
    dropout: float,
    lexical_attr: str,
    vectors: str,
    clues: Optional[Dict[str, List[str]]],
    encoder: Optional[Dict[str, Any]],
) -> Model[InT, Floats2d]:
    groups = list(feature_groups)
    names = feature_names(groups, encoder["layers"] if encoder and "E" in groups else None)
    if lexical_attr not in LEXICAL_ATTRS:
        raise ValueError(
            f"{arch}: lexical_attr must be one of {LEXICAL_ATTRS}, got {lexical_attr!r}"
        )
    if vectors not in VECTOR_SOURCES:
        raise ValueError(f"{arch}: vectors must be one of {VECTOR_SOURCES}, got {vectors!r}")
    if hidden_width < 0 or depth < 0:
        raise ValueError(f"{arch}: hidden_width and depth must be >= 0")
    featurizer = chiasmus_featurizer(groups, lexical_attr, vectors, clues, encoder)
    model = chain(featurizer, *scorer_layers(len(names), hidden_width, depth, dropout))
    model.attrs["feature_names"] = names
    model.attrs["lexical_attr"] = lexical_attr
    return model


def scorer_layers(n_features: int, hidden_width: int, depth: int, dropout: float) -> List[Model]:
    """The scorer's network over a feature matrix: the standardizer, ``depth`` ReLU layers
    of ``hidden_width`` (none when it is 0), a linear output and the sigmoid. The
    scorer chains its featurizer before them; the evaluation protocols' inner CV trains
    the same layers on a feature table (``crossval.fit_network``)."""
    layers: List[Model] = [feature_standardizer(n_features)]
    width = n_features
    for _ in range(depth if hidden_width else 0):
        layers.append(Relu(nO=hidden_width, nI=width, dropout=dropout))
        width = hidden_width
    layers.append(Linear(nO=1, nI=width))
    layers.append(sigmoid_output())
    return layers


def chiasmus_featurizer(
    groups: Sequence[str],
    lexical_attr: str = "LEMMA",
    vectors: str = "auto",
    clues: Optional[Dict[str, List[str]]] = None,
    encoder: Optional[Dict[str, Any]] = None,
) -> Model[InT, Floats2d]:
    """A layer without parameters: (docs, candidates) -> [sum k_i, n_features] features.

    encoder (Optional[Dict[str, Any]]): the settings of the frozen encoder of the E
        features ("name", "layers", "window", "stride"); None: E from ``vectors``.
    """
    if "E" not in groups:
        encoder = None
    attrs = {"groups": tuple(groups), "lexical_attr": lexical_attr, "vectors": vectors}
    attrs["clues"] = clues
    if encoder is not None:
        attrs["encoder"] = dict(encoder)
    if encoder is not None or "E" not in groups:
        # the features are a function of the doc's annotations: memoised in training
        attrs["training_cache"] = TrainingFeatureCache()
    layers = encoder["layers"] if encoder is not None else None
    return Model(
        "chiasmus_features",
        _featurize,
        attrs=attrs,
        dims={"nO": len(feature_names(groups, layers))},
    )


@lru_cache(maxsize=4)
def shared_encoder(name: str, layers: Tuple[int, ...], window: int = 256, stride: int = 192):
    """The process's FrozenEncoder for these settings, created on first use; its hidden
    states per document stay cached in memory (and on disk under
    $SPACY_RHETORIC_FEATURE_CACHE when set).

    name (str): the encoder (see spacy-rhetoric.EncoderVectors.v1).
    layers (Tuple[int, ...]): the hidden states kept.
    RETURNS (FrozenEncoder): the encoder.
    """
    from ..encoders.vectors import ENV_FEATURE_CACHE, FrozenEncoder

    return FrozenEncoder(
        name,
        list(layers),
        window=window,
        stride=stride,
        cache_dir=os.environ.get(ENV_FEATURE_CACHE),
    )


_LIVE_ENCODERS: Dict[Tuple[str, int, int], List[Tuple[int, ...]]] = {}


def encoder_states(settings: Dict[str, Any], docs: Sequence[Doc]) -> List[numpy.ndarray]:
    """The hidden states of docs, from a shared encoder that already runs with these
    layers or a superset of them (so that models with different layers, e.g. in a
    cross-validation, share one encoder and its cached states).

    settings (Dict[str, Any]): "name", "layers", "window", "stride".
    RETURNS (List[numpy.ndarray]): per doc, [n_tokens, len(layers), hidden] float32.
    """
    layers = tuple(int(layer) for layer in settings["layers"])
    key = (settings["name"], int(settings["window"]), int(settings["stride"]))
    live = _LIVE_ENCODERS.setdefault(key, [])
    superset = next((found for found in live if set(layers) <= set(found)), None)
    if superset is None:
        superset = layers
        live.append(layers)
    encoder = shared_encoder(key[0], superset, key[1], key[2])
    states = encoder.states(docs)
    if superset == layers:
        return states
    columns = [superset.index(layer) for layer in layers]
    return [doc_states[:, columns] for doc_states in states]


_FINGERPRINT_ATTRS = [
    ATTR_IDS[name]
    for name in ("ORTH", "SPACY", "POS", "LEMMA", "NORM", "MORPH", "IS_STOP", "SENT_START")
] + [ATTR_IDS["DEP"], ATTR_IDS["HEAD"]]


class TrainingFeatureCache(RowCache):
    """Feature rows of (doc, candidates) pairs seen in training, by a fingerprint of
    everything the D, L and encoder E features read (tokens, whitespace, POS, lemmas,
    norms, morphology, stop words, sentence starts, the parse, ``user_data["dep"]``,
    the candidates), so that the epochs of a training run featurize each doc once.
    Not used for E features from static vectors or ``doc.tensor``; never pickled or
    serialized (a copy starts empty).

    max_rows (int): feature rows kept (least recently used ones are dropped).
    """

    def __init__(self, max_rows: int = 200_000) -> None:
        super().__init__(max_rows)

    @staticmethod
    def key(doc: Doc, candidates: numpy.ndarray) -> str:
        digest = hashlib.sha1(doc.to_array(_FINGERPRINT_ATTRS).tobytes())
        dep = doc.user_data.get("dep") if isinstance(doc.user_data, dict) else None
        digest.update(repr(dep).encode())
        digest.update(numpy.ascontiguousarray(candidates, dtype=numpy.int64).tobytes())
        return digest.hexdigest()

    def __reduce__(self):
        return (TrainingFeatureCache, (self.max_rows,))

    def __deepcopy__(self, memo: Dict) -> "TrainingFeatureCache":
        return TrainingFeatureCache(self.max_rows)


def _featurize(model: Model, inputs: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    docs, candidates = inputs
    attrs = model.attrs
    cache = attrs.get("training_cache") if is_train else None
    if cache is not None:
        keys = [cache.key(doc, numpy.asarray(c)) for doc, c in zip(docs, candidates)]
        found = [cache.get(key) for key in keys]
        missing = [i for i, rows in enumerate(found) if rows is None]
        if missing:
            inner = ([docs[i] for i in missing], [candidates[i] for i in missing])
            computed, _ = _featurize(model, inner, False)
            computed = model.ops.to_numpy(computed)
            offsets = numpy.cumsum([0] + [len(candidates[i]) for i in missing])
            for j, i in enumerate(missing):
                found[i] = computed[offsets[j] : offsets[j + 1]]
                cache.put(keys[i], found[i])
        n_features = model.get_dim("nO")
        blocks = [rows for rows in found if len(rows)]
        X = numpy.concatenate(blocks) if blocks else numpy.zeros((0, n_features), "float32")
        return model.ops.asarray2f(X), lambda dX: inputs
    encoder = attrs.get("encoder")
    if encoder is not None:
        nonempty = [doc for doc, cands in zip(docs, candidates) if len(cands)]
        found = iter(encoder_states(encoder, nonempty)) if nonempty else iter(())
        states = [next(found) if len(cands) else None for cands in candidates]
    else:
        states = [None] * len(docs)
    blocks = [
        candidate_features(
            doc,
            numpy.asarray(cands),
            groups=attrs["groups"],
            lexical_attr=attrs["lexical_attr"],
            vectors=attrs["vectors"],
            clues=attrs["clues"],
            encoder_states=doc_states,
            encoder_layers=encoder["layers"] if encoder is not None else None,
        )
        for doc, cands, doc_states in zip(docs, candidates, states)
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
