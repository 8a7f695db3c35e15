"""Typing parallelisms as synchystic (A B / A' B': the corresponding words come in the
same order) or chiastic (A B / B' A': inverted), the distinction ASP's brat
annotation keeps.

Two typers live here.

* ``"alignment"`` (the current one). Each pair of consecutive branches is aligned word
  by word: the similarity of two words is the cosine of their frozen encoder states
  (one mid layer, centred on the mean of the pair's words), plus 1 for the same
  lowercase form (or lemma, where a lemmatizer ran), plus 0.5 for the same 2-letter
  ending (case and number agreement in Latin), plus 0.5 for the same part of speech
  (where a tagger ran). From this matrix come order features: how much better the
  best order-reversing alignment explains the pair than the best order-preserving one
  (a dynamic program each), Kendall's tau of the maximum-weight one-to-one alignment
  (Hungarian), and whether the first and last words correspond crosswise
  (``S[0, -1] + S[-1, 0] - S[0, 0] - S[-1, -1]``). Without encoder states the
  similarity is lexical only. A logistic regression with balanced class weights
  combines them; its decision threshold is the one with the best chiastic F1 on the
  training parallelisms (folded into the bias).
* ``"inversion"`` (the first one, kept so that older pipelines load and type as
  before): shared forms or 3-letter endings between the first and the last branch,
  counted as concordant and discordant pairs.
"""

from itertools import combinations
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from scipy.optimize import linear_sum_assignment
from spacy.tokens import Doc, Span
from spacy.training import Example
from thinc.api import Model

from ..corpora.parallelisms import CHIASTIC, SYNCHYSTIC, UNTYPED, get_parallelisms
from ..logistic import LogisticRegression, f1_threshold
from .reading import respelled
from .windows import doc_windows, owner, window_doc

N_TYPE_FEATURES = 6
TYPER_INVERSION = "inversion"
TYPER_ALIGNMENT = "alignment"
# the encoder layer whose states measure word similarity (chosen by grouped
# cross-validation on ASP: see benchmarks/parallelism_typing.py)
TYPE_LAYER = 6
ALIGNMENT_FEATURES = (
    "lexical_margin",
    "ending_margin",
    "encoder_margin",
    "margin",
    "tau",
    "ends_crossed",
    "log_length",
    "length_difference",
    "single_word",
    "more_branches",
    "bias",
)
N_ALIGNMENT_FEATURES = len(ALIGNMENT_FEATURES)
LEXICAL_WEIGHT = 1.0
ENDING_WEIGHT = 0.5
POS_WEIGHT = 0.5
# L2 penalty of the alignment typer's classifier: F1 0.485-0.491 for 0.1-1.0 in the
# grouped cross-validation on ASP, 0.469 at the inversion typer's 0.01
ALIGNMENT_L2 = 0.1


def content_indices(span: Span) -> List[int]:
    """RETURNS (List[int]): the positions (within the span) of its tokens that are
    neither punctuation nor whitespace."""
    return [i for i, token in enumerate(span) if not (token.is_punct or token.is_space)]


def _word_key(token) -> str:
    return token.lemma_.lower() if token.lemma_ else token.lower_


def lexical_matrices(first: Span, second: Span) -> Tuple[numpy.ndarray, ...]:
    """Lexical correspondences between the content words of two branches.

    first (Span): the earlier branch.
    second (Span): the later branch.
    RETURNS (Tuple[numpy.ndarray, ...]): [n, m] indicator matrices over the content
        words (``content_indices``): same form or lemma; same 2-letter ending (longer
        words, not the same form); same part of speech (all 0 where no tagger ran).
    """
    words_a = [first[i] for i in content_indices(first)]
    words_b = [second[j] for j in content_indices(second)]
    identity = numpy.zeros((len(words_a), len(words_b)), dtype="float64")
    ending, pos = identity.copy(), identity.copy()
    for x, a in enumerate(words_a):
        key_a, lower_a = _word_key(a), a.lower_
        for z, b in enumerate(words_b):
            lower_b = b.lower_
            if key_a == _word_key(b) or lower_a == lower_b:
                identity[x, z] = 1.0
            elif len(lower_a) > 3 and len(lower_b) > 3 and lower_a[-2:] == lower_b[-2:]:
                ending[x, z] = 1.0
            if a.pos_ and a.pos_ == b.pos_:
                pos[x, z] = 1.0
    return identity, ending, pos


def encoder_similarity(
    first: Span, second: Span, first_vectors: numpy.ndarray, second_vectors: numpy.ndarray
) -> numpy.ndarray:
    """Cosine similarities of the content words' encoder states, centred on the mean
    of the pair's content words (the raw states of a contextual encoder are all alike).

    first (Span): the earlier branch.
    second (Span): the later branch.
    first_vectors (numpy.ndarray): [len(first), H] encoder states.
    second_vectors (numpy.ndarray): [len(second), H] encoder states.
    RETURNS (numpy.ndarray): [n, m] over the content words.
    """
    ia, ib = content_indices(first), content_indices(second)
    if not ia or not ib:
        return numpy.zeros((len(ia), len(ib)), dtype="float64")
    va = numpy.asarray(first_vectors, dtype="float64")[ia]  # [n, H]
    vb = numpy.asarray(second_vectors, dtype="float64")[ib]  # [m, H]
    centre = numpy.concatenate([va, vb]).mean(0)
    return _unit(va - centre) @ _unit(vb - centre).T


def _unit(vectors: numpy.ndarray) -> numpy.ndarray:
    return vectors / numpy.maximum(numpy.linalg.norm(vectors, axis=-1, keepdims=True), 1e-6)


def order_scores(sim: numpy.ndarray) -> Tuple[float, float]:
    """The best total similarity of an order-preserving and of an order-reversing
    alignment (one-to-one, words may stay unaligned, negative similarities count 0).

    sim (numpy.ndarray): [n, m] word similarities.
    RETURNS (Tuple[float, float]): (preserving, reversing).
    """
    gain = numpy.maximum(sim, 0.0)
    return _monotone_score(gain), _monotone_score(gain[:, ::-1])


def _monotone_score(gain: numpy.ndarray) -> float:
    n, m = gain.shape
    best = numpy.zeros((n + 1, m + 1))
    for i in range(n):
        for j in range(m):
            best[i + 1, j + 1] = max(best[i, j + 1], best[i + 1, j], best[i, j] + gain[i, j])
    return float(best[n, m])


def align(sim: numpy.ndarray, threshold: float = 0.0) -> List[Tuple[int, int]]:
    """The maximum-weight one-to-one alignment (Hungarian), keeping pairs whose
    similarity exceeds the threshold.

    sim (numpy.ndarray): [n, m] word similarities.
    threshold (float): the least similarity of a kept pair (exclusive).
    RETURNS (List[Tuple[int, int]]): aligned (i, j), sorted by i.
    """
    if sim.size == 0:
        return []
    rows, cols = linear_sum_assignment(-sim)
    return sorted((int(i), int(j)) for i, j in zip(rows, cols) if sim[i, j] > threshold)


def count_crossings(pairs: Sequence[Tuple[int, int]]) -> Tuple[int, int]:
    """Count concordant and discordant (crossing) pairs of aligned positions, as in
    Kendall's tau; pairs that share a position on either side count as neither.

    pairs (Sequence[Tuple[int, int]]): aligned (i, j) positions (a branch has tens of
        words at most: all pairs of pairs are compared).
    RETURNS (Tuple[int, int]): (concordant, discordant).
    """
    if len(pairs) < 2:
        return 0, 0
    i, j = numpy.asarray(pairs, dtype=numpy.int64).T
    # [k, k] sign products above the diagonal: +1 same order, -1 crossing, 0 shared position
    order = numpy.triu(numpy.sign(i[:, None] - i) * numpy.sign(j[:, None] - j), 1)
    return int((order > 0).sum()), int((order < 0).sum())


def pair_features(
    identity: numpy.ndarray,
    ending: numpy.ndarray,
    pos: numpy.ndarray,
    encoder: Optional[numpy.ndarray] = None,
) -> numpy.ndarray:
    """Order features of one pair of branches.

    identity (numpy.ndarray): [n, m] same form or lemma (``lexical_matrices``).
    ending (numpy.ndarray): [n, m] same ending.
    pos (numpy.ndarray): [n, m] same part of speech.
    encoder (Optional[numpy.ndarray]): [n, m] encoder similarities, or None.
    RETURNS (numpy.ndarray): the first 9 of ``ALIGNMENT_FEATURES``.
    """
    n, m = identity.shape
    if n == 0 or m == 0:
        return numpy.zeros(9)
    if encoder is None:
        encoder = numpy.zeros_like(identity)
    sim = encoder + LEXICAL_WEIGHT * identity + ENDING_WEIGHT * ending + POS_WEIGHT * pos
    shorter = min(n, m)
    margins = []
    for matrix in (identity, ending, encoder, sim):
        preserving, reversing = order_scores(matrix)
        margins.append((reversing - preserving) / shorter)
    concordant, discordant = count_crossings(align(sim))
    tau = (discordant - concordant) / max(concordant + discordant, 1)
    ends = 0.0
    if shorter > 1:
        ends = float(sim[0, -1] + sim[-1, 0] - sim[0, 0] - sim[-1, -1])
    return numpy.array(
        [
            *margins,
            tau,
            ends,
            numpy.log(shorter),
            abs(n - m) / max(n, m),
            float(shorter == 1),
        ]
    )


def alignment_features(
    branches: Sequence[Span], vectors: Optional[Sequence[Optional[numpy.ndarray]]] = None
) -> numpy.ndarray:
    """Alignment and order features of a parallelism: the mean over its pairs of
    consecutive branches.

    branches (Sequence[Span]): the branches, in text order.
    vectors (Optional[Sequence[Optional[numpy.ndarray]]]): per branch, its tokens'
        encoder states [len(branch), H], or None (lexical similarity only).
    RETURNS (numpy.ndarray): [N_ALIGNMENT_FEATURES], named by ``ALIGNMENT_FEATURES``.
    """
    if vectors is None:
        vectors = [None] * len(branches)
    rows = []
    for k in range(len(branches) - 1):
        first, second = branches[k], branches[k + 1]
        encoder = None
        if vectors[k] is not None and vectors[k + 1] is not None:
            encoder = encoder_similarity(first, second, vectors[k], vectors[k + 1])
        rows.append(pair_features(*lexical_matrices(first, second), encoder))
    mean = numpy.mean(rows, axis=0) if rows else numpy.zeros(9)
    return numpy.concatenate([mean, [float(len(branches) > 2), 1.0]])


def inversion_features(branches: Sequence[Span]) -> numpy.ndarray:
    """Order features of a parallelism's first and last branch (the "inversion" typer).

    branches (Sequence[Span]): the branches, in text order.
    RETURNS (numpy.ndarray): [matched pairs, concordant, discordant, (discordant -
        concordant) / comparisons, inversion of the first and last matched word, bias].
    """
    first, last = branches[0], branches[-1]
    pairs = []
    for i, a in enumerate(first):
        for j, b in enumerate(last):
            if a.is_punct or b.is_punct:
                continue
            if a.lower == b.lower or (len(a) > 3 and len(b) > 3 and a.lower_[-3:] == b.lower_[-3:]):
                pairs.append((i, j))
    concordant = discordant = 0
    for (i1, j1), (i2, j2) in combinations(pairs, 2):
        if i1 != i2 and j1 != j2:
            if (i1 < i2) == (j1 < j2):
                concordant += 1
            else:
                discordant += 1
    comparisons = max(concordant + discordant, 1)
    crossed = 0.0
    if len(pairs) >= 2:
        ends = sorted(pairs)
        crossed = float(ends[0][1] > ends[-1][1])
    return numpy.array(
        [len(pairs), concordant, discordant, (discordant - concordant) / comparisons, crossed, 1.0],
        dtype="float64",
    )


def fit_type_classifier(
    features: numpy.ndarray, chiastic: numpy.ndarray, l2: float = 0.01
) -> List[float]:
    """Fit the type classifier: ``logistic.LogisticRegression`` with balanced classes
    (C = 1 / (l2 n): ``l2`` is the penalty per example), its threshold the one that
    maximises chiastic F1 on the training items, both folded into one weight vector.

    features (numpy.ndarray): [N, F], the last column the bias (1.0).
    chiastic (numpy.ndarray): [N] booleans.
    l2 (float): L2 penalty on the standardised weights, per example.
    RETURNS (List[float]): the weights (score > 0 means chiastic), or [] if a class
        is missing.
    """
    y = numpy.asarray(chiastic, dtype=bool)
    if len(y) == 0 or y.min() == y.max():
        return []
    model = LogisticRegression(C=1.0 / (l2 * len(y)), balanced=True).fit(features, y)
    threshold = f1_threshold(model.decision_function(features), y)
    linear = model.linear_weights()
    weights = linear[:-1].copy()
    weights[-1] += linear[-1] - threshold  # the bias column carries intercept and cut
    return weights.tolist()


def type_features(
    typer: str,
    branches: Sequence[Span],
    vectors: Optional[Sequence[Optional[numpy.ndarray]]] = None,
) -> numpy.ndarray:
    """The features of one parallelism for the named typer.

    typer (str): "alignment" or "inversion".
    branches (Sequence[Span]): the branches, in text order.
    vectors (Optional[Sequence[Optional[numpy.ndarray]]]): per branch, encoder states
        (used by "alignment" only).
    RETURNS (numpy.ndarray): the feature vector.
    """
    if typer == TYPER_ALIGNMENT:
        return alignment_features(branches, vectors)
    if typer == TYPER_INVERSION:
        return inversion_features(branches)
    raise ValueError(f"parallelism typer must be 'alignment' or 'inversion', got '{typer}'.")


def predict_type(
    weights: Optional[Sequence[float]],
    branches: Sequence[Span],
    vectors: Optional[Sequence[Optional[numpy.ndarray]]] = None,
    typer: Optional[str] = None,
) -> str:
    """Type one parallelism.

    weights (Optional[Sequence[float]]): the classifier's weights ([] or None: untrained).
    branches (Sequence[Span]): the branches, in text order.
    vectors (Optional[Sequence[Optional[numpy.ndarray]]]): per branch, encoder states.
    typer (Optional[str]): "alignment" or "inversion" (None: told by the number of weights).
    RETURNS (str): "chiastic" or "synchystic" (synchystic without weights).
    """
    if not weights:
        return SYNCHYSTIC
    if typer is None:
        typer = TYPER_INVERSION if len(weights) == N_TYPE_FEATURES else TYPER_ALIGNMENT
    score = float(type_features(typer, branches, vectors) @ numpy.asarray(weights))
    return CHIASTIC if score > 0 else SYNCHYSTIC


def describe_typer(cfg: Dict[str, Any]) -> Tuple[str, Optional[int]]:
    """RETURNS (Tuple[str, Optional[int]]): the typer and encoder layer a component's
    cfg names (pipelines saved before the alignment typer: "inversion", None)."""
    return cfg.get("typer", TYPER_INVERSION), cfg.get("type_layer")


def branch_vectors(
    states: Optional[numpy.ndarray], offsets: Sequence[Tuple[int, int]]
) -> Optional[List[numpy.ndarray]]:
    """RETURNS (Optional[List[numpy.ndarray]]): per branch, its tokens' rows of the
    doc's [n_tokens, H] states (None without states)."""
    if states is None:
        return None
    return [states[start:end] for start, end in offsets]


# --- the tagger's typer: its encoder, its fit, its labels ------------------------------


def type_encoder(model: Model, type_layer: Optional[int] = None) -> Tuple[Optional[Any], int]:
    """The frozen encoder inside a tagger's model whose states the alignment typer
    reads, and the index of its layer closest to ``type_layer`` (default TYPE_LAYER).

    RETURNS (Tuple[Optional[FrozenEncoder], int]): (None, 0) without an encoder.
    """
    for node in model.walk():
        slot = node.attrs.get("frozen_encoder")
        if slot is None:
            continue
        layers = list(slot.settings["layers"])
        wanted = type_layer or TYPE_LAYER
        index = min(range(len(layers)), key=lambda i: abs(layers[i] - wanted))
        return slot.get(), index
    return None, 0


def typing_encoder(model: Model, cfg: Dict[str, Any]) -> Tuple[Optional[Any], int]:
    """The frozen encoder and layer index whose states type the parallelisms a tagger
    finds, or (None, 0) where its typer reads none (no classifier fitted, another
    typer, or the model's layers lack the typer's one).

    cfg (Dict[str, Any]): the tagger's cfg.
    """
    if not cfg.get("type_weights"):
        return None, 0
    typer, layer = describe_typer(cfg)
    if typer != TYPER_ALIGNMENT or layer is None:
        return None, 0
    encoder, index = type_encoder(model, cfg.get("type_layer"))
    if encoder is None or encoder.layers[index] != layer:
        return None, 0
    return encoder, index


def fit_types(
    examples: Iterable[Example], spans_key: str, encoder: Optional[Any], layer: int
) -> List[float]:
    """Fit the synchystic/chiastic classifier (the "alignment" typer, with the states
    of ``encoder``'s layer ``layer`` where there is one) on the typed gold parallelisms.

    RETURNS (List[float]): the weights; empty when the data is untyped (predictions
    are then labelled "parallelism").
    """
    features, chiastic = [], []
    for example in examples:
        doc = example.reference
        typed = [p for p in get_parallelisms(doc, spans_key) if p.label in (SYNCHYSTIC, CHIASTIC)]
        if not typed:
            continue
        states = None if encoder is None else encoder.states([doc])[0][:, layer]
        for parallelism in typed:
            vectors = branch_vectors(states, parallelism.offsets)
            features.append(type_features(TYPER_ALIGNMENT, parallelism.branches, vectors))
            chiastic.append(parallelism.label == CHIASTIC)
    if not features:
        return []
    return fit_type_classifier(numpy.stack(features), numpy.asarray(chiastic), l2=ALIGNMENT_L2)


def type_parallelisms(
    model: Model,
    cfg: Dict[str, Any],
    doc: Doc,
    parallelisms: Sequence[Sequence[Tuple[int, int]]],
    window: int,
    overlap: int,
) -> List[str]:
    """Type parallelisms of a doc with a tagger's fitted classifier.

    model (Model), cfg (Dict[str, Any]): the tagger's.
    doc (Doc): the doc.
    parallelisms (Sequence[Sequence[Tuple[int, int]]]): per parallelism, its
        branches as (start, end) token offsets in text order.
    window (int), overlap (int): the head's windows (the encoder reads what it read).
    RETURNS (List[str]): per parallelism "synchystic" or "chiastic"; "parallelism"
        (untyped) when no classifier was fitted.
    """
    weights = cfg.get("type_weights") or []
    if not weights:
        return [UNTYPED] * len(parallelisms)
    typer, _ = describe_typer(cfg)
    encoder, index = typing_encoder(model, cfg) if parallelisms else (None, 0)
    # the encoder reads what the head read: the respelled doc, a long one by windows
    # (only worked out where there are states to read)
    if encoder is not None:
        reading = respelled(doc, cfg.get("spelling", ""))
        windows = doc_windows(doc, window, overlap)
    states: Dict[int, numpy.ndarray] = {}  # per window
    labels = []
    for offsets in (sorted(o) for o in parallelisms):
        vectors = None
        if encoder is not None:
            k = owner(windows, offsets[0][0], offsets[-1][1])
            shift = windows[k][0]
            if k not in states:
                states[k] = encoder.layer_states(window_doc(reading, windows[k]), index)
            vectors = branch_vectors(states[k], [(a - shift, b - shift) for a, b in offsets])
        branches = [doc[a:b] for a, b in offsets]
        labels.append(predict_type(weights, branches, vectors, typer))
    return labels
