"""Features of chiasmus candidates, vectorised over the candidates of a doc.

Three groups, after Dubremetz & Nivre (2015, 2016) and Schneider et al. (2021). The
positions of A, B, B', A' are ``a < b < b' < a'`` (for depth-3 candidates the outer
four roles are used). "Outer" segments are the tokens strictly between A and B and
strictly between B' and A'; the "central" segment lies strictly between B and B'.

**D** (Dubremetz-style, ``D_FEATURES``): sizes (A..A', the central segment, the size
difference of the outer segments); hard punctuation (``. ! ? ; : ( ) [ ] … – —``) and
commas in the outer and central segments; line breaks and sentence breaks (sentence
starts when the doc has sentence boundaries, else sentence-final punctuation);
stop words at A/A' and B/B'; lexical clues from per-language lists (``CLUES``:
negation, also any token with ``Polarity=Neg``; conjunctions, also any CCONJ; inversion
markers such as "vice versa", "umgekehrt"); repetition: lemmas shared by the two
outer segments (count, relative, identical segments, shared bigrams), further
occurrences of A's and B's lemmas inside A..A' and in the ``context`` tokens around it;
same POS of A and B; dependency equalities of (A, B'), (B, A'), (A, A'), (B, B') and of
the lemmas of the heads of (A, B') and (B, A') where a parse exists. Without a parse,
dependency labels are taken from ``doc.user_data["dep"]`` when it holds one label per
token (as the German converter keeps the source's head-less labels); the flags
``has_dep_labels`` and ``has_heads`` say what was available.

**L** (lexical, ``L_FEATURES``): equality of the lexical attribute (the lemma by
default, compared case-insensitively) for the six
pairs (A, A'), (B, B'), (A, B), (A, B'), (B, A'), (B', A').

**E** (semantic, ``E_FEATURES``): the cosine similarity of the same six pairs, from the
vectors the pipeline provides, chosen by ``vectors``:

* ``"static"``: ``token.vector`` from the vocab's static vectors;
* ``"tensor"``: ``doc.tensor`` (what a ``tok2vec`` or transformer component wrote);
* ``"auto"``: static vectors if the vocab has any, else the tensor if it has one row
  per token, else none;
* ``"none"``: no vectors.

Without vectors the six cosines are 0 and the flag ``has_vectors`` is 0.

**E from an encoder** (``encoder_e_names``; ``spacy-rhetoric.ChiasmusScorer.v2`` with
an ``encoder``): per chosen layer of the encoder's hidden states (contextual token
vectors, the mean over each token's word pieces; layer 0 is the embedding layer, which
sees no context), the cosines of the same six pairs and four of the candidate's halves
(``E_LAYER_FEATURES``): the mean vectors of A..B and B'..A', of the tokens strictly
inside those (A's or A''s vector where there are none), and the difference vectors
A - B against A' - B' ("parallel") and against B' - A' ("inverted"). The names carry
the layer (``cos_a_a2@8``).
"""

from typing import Dict, Iterable, List, Optional, Sequence

import numpy
from spacy.attrs import IDS as ATTR_IDS
from spacy.tokens import Doc
from thinc.api import to_numpy

FEATURE_GROUPS = ("D", "L", "E")
# cells of a prefix-count table (int32) that DocArrays builds for counting occurrences by
# lookup (16 MB); a doc that would need more counts them by binary search
PREFIX_TABLE_MAX = 4_000_000
VECTOR_SOURCES = ("auto", "static", "tensor", "none")
LEXICAL_ATTRS = ("LEMMA", "NORM", "LOWER", "ORTH")
PAIRS = (("a", "a2"), ("b", "b2"), ("a", "b"), ("a", "b2"), ("b", "a2"), ("b2", "a2"))
_COLUMN = {"a": 0, "b": 1, "b2": -2, "a2": -1}

D_FEATURES = (
    "size",
    "central_size",
    "size_difference",
    "punct_outer",
    "comma_outer",
    "punct_central",
    "comma_central",
    "line_breaks",
    "paragraph_breaks",
    "paragraph_breaks_central",
    "sentence_breaks",
    "sentence_breaks_central",
    "stop_a",
    "stop_b",
    "negation_outer",
    "negation_central",
    "conjunction_central",
    "inversion_clue",
    "shared_outer",
    "shared_outer_relative",
    "identical_outer",
    "shared_bigrams_outer",
    "repeat_a_inside",
    "repeat_b_inside",
    "repeat_context",
    "same_pos_a_b",
    "adjacent_a_b",
    "adjacent_b_b2",
    "adjacent_b2_a2",
    "same_dep_a_b2",
    "same_dep_b_a2",
    "same_dep_a_a2",
    "same_dep_b_b2",
    "same_head_a_b2",
    "same_head_b_a2",
    "has_dep_labels",
    "has_heads",
)
L_FEATURES = tuple(f"lemma_{x}_{y}" for x, y in PAIRS) + ("lemma_inversion",)
E_FEATURES = tuple(f"cos_{x}_{y}" for x, y in PAIRS) + ("has_vectors",)
GROUP_FEATURES = {"D": D_FEATURES, "L": L_FEATURES, "E": E_FEATURES}
E_LAYER_FEATURES = tuple(f"cos_{x}_{y}" for x, y in PAIRS) + (
    "cos_halves",
    "cos_inner",
    "cos_diff_parallel",
    "cos_diff_inverted",
)

# with the full-width marks of Chinese text (、 is the enumeration comma)
HARD_PUNCT = frozenset(". ! ? ; : ( ) [ ] ... … – — -- 。 ！ ？ ； ： （ ） 【 】 …… ——".split())
SOFT_PUNCT = frozenset((",", "，", "、"))
SENTENCE_FINAL = frozenset(". ! ? ... … 。 ！ ？ ……".split())

# Lexical clues per language (lower-case forms).
CLUES: Dict[str, Dict[str, frozenset]] = {
    "en": {
        "negation": frozenset(
            "not n't no never nothing none nobody neither nor without cannot".split()
        ),
        "conjunction": frozenset(
            "and or but nor yet so for as because than while whereas if".split()
        ),
        "inversion": frozenset(
            "vice versa rather instead than conversely reverse contrary opposite".split()
        ),
    },
    "de": {
        "negation": frozenset(
            "nicht kein keine keinen keinem keiner keines nie niemals nichts niemand "
            "weder ohne nimmer".split()
        ),
        "conjunction": frozenset(
            "und oder aber sondern doch denn als wie weil während sowie noch jedoch sowohl".split()
        ),
        "inversion": frozenset(
            "umgekehrt vielmehr statt anstatt sondern eher lieber gegenteil".split()
        ),
    },
    # Chinese: words of the segmenter and single characters of the character view
    # (``characters``), classical and modern
    "zh": {
        "negation": frozenset("不 没 没有 无 非 未 莫 勿 毋 弗 否 别 不是 并非".split()),
        "conjunction": frozenset(
            "而 和 与 及 或 但 则 且 并 而且 但是 然而 或者 以及 因为 所以".split()
        ),
        "inversion": frozenset("反之 反过来 相反 倒过来".split()),
    },
}
CLUE_KINDS = ("negation", "conjunction", "inversion")
_FEATURE_CHUNK = 4096


def encoder_e_names(layers: Sequence[int]) -> List[str]:
    """layers (Sequence[int]): the encoder layers of the E features.
    RETURNS (List[str]): the names of the encoder E columns, layer by layer.
    """
    return [f"{name}@{layer}" for layer in layers for name in E_LAYER_FEATURES]


def feature_names(
    groups: Sequence[str] = FEATURE_GROUPS, encoder_layers: Optional[Sequence[int]] = None
) -> List[str]:
    """groups (Sequence[str]): feature groups, any of "D", "L", "E", in this order.
    encoder_layers (Optional[Sequence[int]]): the E features come from these encoder
        layers (``encoder_e_names``) instead of the vector source's six cosines.
    RETURNS (List[str]): the names of the feature columns.
    """
    validate_groups(groups)
    names: List[str] = []
    for group in groups:
        if group == "E" and encoder_layers is not None:
            names.extend(encoder_e_names(encoder_layers))
        else:
            names.extend(GROUP_FEATURES[group])
    return names


def validate_groups(groups: Sequence[str]) -> None:
    unknown = [g for g in groups if g not in GROUP_FEATURES]
    if unknown or not groups or len(set(groups)) != len(groups):
        raise ValueError(
            f"chiasmus_finder: feature groups must be distinct values of "
            f"{', '.join(FEATURE_GROUPS)}, got {list(groups)}"
        )


def check_doc(doc: Doc, lexical_attr: str = "LEMMA", name: str = "chiasmus_finder") -> None:
    """Raise a ValueError naming the missing annotation and the component to add.

    doc (Doc): a non-empty doc.
    lexical_attr (str): the attribute compared by the lexical features.
    name (str): the component's name, for the message.
    """
    if len(doc) == 0:
        return
    if not doc.has_annotation("POS"):
        raise ValueError(
            f"{name} needs token.pos_: add a tagger or morphologizer before it "
            f"(the doc '{doc[:8].text}...' has no part-of-speech tags)."
        )
    if lexical_attr == "LEMMA" and not doc.has_annotation("LEMMA"):
        raise ValueError(
            f"{name} needs token.lemma_: add a lemmatizer before it, or set "
            f"lexical_attr = \"NORM\" (the doc '{doc[:8].text}...' has no lemmas)."
        )


def _clue_sets(lang: str, clues: Optional[Dict[str, Iterable[str]]]) -> Dict[str, frozenset]:
    sets = dict(CLUES.get(lang, {kind: frozenset() for kind in CLUE_KINDS}))
    for kind, words in (clues or {}).items():
        if kind not in CLUE_KINDS:
            raise ValueError(f"chiasmus features: unknown clue list '{kind}' ({CLUE_KINDS})")
        sets[kind] = frozenset(w.lower() for w in words)
    return sets


def _codes(values: numpy.ndarray) -> numpy.ndarray:
    return numpy.asarray(values, dtype=numpy.uint64).view(numpy.int64)


def _prefix(mask: numpy.ndarray) -> numpy.ndarray:
    return numpy.concatenate(([0], numpy.cumsum(mask, dtype=numpy.int64)))


def _between(prefix: numpy.ndarray, i: numpy.ndarray, j: numpy.ndarray) -> numpy.ndarray:
    """Number of marked tokens strictly between i and j (i < j)."""
    return prefix[j] - prefix[numpy.minimum(i + 1, j)]


def token_vectors(doc: Doc, source: str = "auto") -> Optional[numpy.ndarray]:
    """The unit-length token vectors of a doc from the chosen source (see the module
    docstring), or None.

    doc (Doc): the doc.
    source (str): "auto", "static", "tensor" or "none".
    RETURNS (Optional[numpy.ndarray]): [n, d] float32, rows of zeros for tokens without a vector.
    """
    if source not in VECTOR_SOURCES:
        raise ValueError(
            f"chiasmus features: vectors must be one of {VECTOR_SOURCES}, got {source!r}"
        )
    if source == "none" or len(doc) == 0:
        return None
    has_static = doc.vocab.vectors.shape[0] > 0 or doc.vocab.vectors.mode == "floret"
    tensor = doc.tensor
    has_tensor = tensor is not None and getattr(tensor, "ndim", 0) == 2
    has_tensor = has_tensor and tensor.shape[0] == len(doc) and tensor.shape[1] > 0
    if source == "static" or (source == "auto" and has_static):
        if not has_static:
            return None
        # on a GPU, token vectors and doc.tensor are cupy arrays: copied to the host
        rows = [numpy.asarray(to_numpy(token.vector), dtype="float32") for token in doc]
        matrix = numpy.vstack(rows)
    elif has_tensor:
        matrix = numpy.asarray(to_numpy(tensor), dtype="float32")
    else:
        return None
    return _unit(matrix)


class DocArrays:
    """Per-token arrays of a doc that the features read (computed once per doc).

    doc (Doc): the doc.
    lexical_attr (str): the attribute for lemma comparisons ("LEMMA", "NORM", "LOWER", "ORTH").
    vectors (str): the vector source (see ``token_vectors``).
    clues (Optional[Dict[str, Iterable[str]]]): replacement clue lists per kind.
    """

    def __init__(
        self,
        doc: Doc,
        lexical_attr: str = "LEMMA",
        vectors: str = "auto",
        clues: Optional[Dict[str, Iterable[str]]] = None,
    ) -> None:
        if lexical_attr not in LEXICAL_ATTRS:
            raise ValueError(
                f"chiasmus features: lexical_attr must be one of {LEXICAL_ATTRS}, "
                f"got {lexical_attr!r}"
            )
        n = len(doc)
        self.n = n
        columns = doc.to_array([ATTR_IDS["POS"], ATTR_IDS[lexical_attr], ATTR_IDS["IS_STOP"]])
        columns = numpy.asarray(columns, dtype=numpy.uint64).reshape(n, 3)
        self.pos = _codes(columns[:, 0])
        if lexical_attr == "LEMMA":  # case-insensitive: "Country" (PROPN) = "country"
            index: Dict[str, int] = {}
            self.lex = numpy.fromiter(
                (index.setdefault(token.lemma_.lower(), len(index)) for token in doc),
                dtype=numpy.int64,
                count=n,
            )
        else:
            self.lex = _codes(columns[:, 1])
        stop = columns[:, 2].astype(bool)
        texts = [token.text for token in doc]
        lowers = [token.lower_ for token in doc]
        sets = _clue_sets(doc.lang_, clues)
        negated = [
            low in sets["negation"] or "Neg" in token.morph.get("Polarity")
            for low, token in zip(lowers, doc)
        ]
        self.stop = stop
        self.hard = _prefix(numpy.asarray([t in HARD_PUNCT for t in texts], dtype=bool))
        self.comma = _prefix(numpy.asarray([t in SOFT_PUNCT for t in texts], dtype=bool))
        self.newline = _prefix(numpy.asarray(["\n" in t for t in texts], dtype=bool))
        # a paragraph break: a blank line, in one whitespace token or in two in a row
        newlines = [t.count("\n") if t.isspace() else 0 for t in texts]
        paragraph = [
            c > 1 or (c == 1 and i > 0 and newlines[i - 1] > 0) for i, c in enumerate(newlines)
        ]
        self.paragraph = _prefix(numpy.asarray(paragraph, dtype=bool))
        if doc.has_annotation("SENT_START"):
            # a break between i and j: a sentence starting at i+1..j
            starts = numpy.asarray([token.is_sent_start is True for token in doc], dtype=bool)
            self._sentence = _prefix(starts)
            self._sentence_shift = 1
        else:
            # a break between i and j: sentence-final punctuation at i+1..j-1
            self._sentence = _prefix(
                numpy.asarray([t in SENTENCE_FINAL for t in texts], dtype=bool)
            )
            self._sentence_shift = 0
        self.negation = _prefix(numpy.asarray(negated, dtype=bool))
        self.conjunction = _prefix(
            numpy.asarray(
                [
                    low in sets["conjunction"] or token.pos_ == "CCONJ"
                    for low, token in zip(lowers, doc)
                ],
                dtype=bool,
            )
        )
        self.inversion = _prefix(
            numpy.asarray([low in sets["inversion"] for low in lowers], dtype=bool)
        )
        # lexical codes ranked, for occurrence counting: key = rank * (n + 1) + position
        _, self.lex_rank = numpy.unique(self.lex, return_inverse=True)
        self.lex_rank = self.lex_rank.astype(numpy.int64)
        self.occurrence_keys = numpy.sort(self.lex_rank * (n + 1) + numpy.arange(n))
        # bigram codes: bigram t = (lex[t], lex[t + 1]); the last token has none (-1)
        if n > 1:
            pairs = numpy.stack((self.lex_rank[:-1], self.lex_rank[1:]), axis=1)
            _, bigram = numpy.unique(pairs, axis=0, return_inverse=True)
            self.bigram = numpy.concatenate((bigram.reshape(-1), [-1])).astype(numpy.int64)
        else:
            self.bigram = numpy.full(n, -1, dtype=numpy.int64)
        has_bigram = numpy.flatnonzero(self.bigram >= 0)
        self.bigram_keys = numpy.sort(self.bigram[has_bigram] * (n + 1) + has_bigram)
        self._tables: Dict[bool, Optional[numpy.ndarray]] = {}
        # dependencies: a parse, else head-less labels kept in user_data
        user_dep = doc.user_data.get("dep") if isinstance(doc.user_data, dict) else None
        if doc.has_annotation("DEP"):
            self.dep = _codes(doc.to_array([ATTR_IDS["DEP"]]).reshape(n))
            heads = numpy.asarray([token.head.i for token in doc], dtype=numpy.int64)
            self.head_lex = self.lex[heads]
            self.has_dep = True
        elif isinstance(user_dep, (list, tuple)) and len(user_dep) == n:
            _, self.dep = numpy.unique(
                numpy.asarray([str(d) for d in user_dep]), return_inverse=True
            )
            self.dep = self.dep.astype(numpy.int64)
            self.head_lex = None
            self.has_dep = True
        else:
            self.dep = None
            self.head_lex = None
            self.has_dep = False
        self.vectors = token_vectors(doc, vectors)

    def sentence_breaks(self, i: numpy.ndarray, j: numpy.ndarray) -> numpy.ndarray:
        """Sentence breaks between the positions i < j."""
        return self._sentence[j + self._sentence_shift] - self._sentence[i + 1]

    def occurrences(
        self,
        ranks: numpy.ndarray,
        lo: numpy.ndarray,
        hi: numpy.ndarray,
        bigrams: bool = False,
    ) -> numpy.ndarray:
        """Occurrences of the lexical ranks (or, with ``bigrams``, of the bigram codes) in
        the positions [lo, hi)."""
        lo = numpy.clip(lo, 0, self.n)
        hi = numpy.maximum(numpy.clip(hi, 0, self.n), lo)
        table = self._prefix_table(bigrams)
        if table is not None:  # counts by lookup, where the table is small
            return table[ranks, hi] - table[ranks, lo]
        keys = self.bigram_keys if bigrams else self.occurrence_keys
        base = ranks * (self.n + 1)
        return numpy.searchsorted(keys, base + hi) - numpy.searchsorted(keys, base + lo)

    def _prefix_table(self, bigrams: bool) -> Optional[numpy.ndarray]:
        """[n_codes, n + 1] occurrences of each lexical (or bigram) code before each
        position, built once; None where it would hold more than PREFIX_TABLE_MAX cells
        (binary search over the sorted keys then gives the same counts)."""
        if bigrams not in self._tables:
            codes = self.bigram if bigrams else self.lex_rank
            n_codes = int(codes.max()) + 1 if self.n else 0
            table = None
            if 0 < n_codes * (self.n + 1) <= PREFIX_TABLE_MAX:
                positions = numpy.flatnonzero(codes >= 0)
                table = numpy.zeros((n_codes, self.n + 1), dtype=numpy.int32)
                table[codes[positions], positions + 1] = 1
                numpy.cumsum(table, axis=1, out=table)
            self._tables[bigrams] = table
        return self._tables[bigrams]


def _segment_values(values: numpy.ndarray, start: numpy.ndarray, stop: numpy.ndarray, fill: int):
    """[k, W] values of the positions start..stop-1 of each row, ``fill`` beyond the end."""
    lengths = numpy.maximum(stop - start, 0)
    width = max(1, int(lengths.max()) if len(lengths) else 1)
    offsets = numpy.arange(width)
    positions = start[:, None] + offsets[None, :]
    valid = offsets[None, :] < lengths[:, None]
    gathered = values[numpy.clip(positions, 0, len(values) - 1)]
    return numpy.where(valid, gathered, fill), lengths


def _found_in(
    arrays: DocArrays,
    values: numpy.ndarray,
    lo: numpy.ndarray,
    hi: numpy.ndarray,
    bigrams: bool = False,
) -> numpy.ndarray:
    """[k, W] whether each (non-negative) code of row r occurs in positions [lo[r], hi[r])
    (lexical codes, or bigram codes with ``bigrams``)."""
    valid = values >= 0
    shape = values.shape
    counts = arrays.occurrences(
        numpy.where(valid, values, 0).reshape(-1),
        numpy.broadcast_to(lo[:, None], shape).reshape(-1),
        numpy.broadcast_to(hi[:, None], shape).reshape(-1),
        bigrams,
    ).reshape(shape)
    return valid & (counts > 0)


def _repetition(arrays: DocArrays, a, b, b2, a2) -> Dict[str, numpy.ndarray]:
    lex = arrays.lex_rank
    left, left_len = _segment_values(lex, a + 1, b, -1)
    right, right_len = _segment_values(lex, b2 + 1, a2, -2)
    # positions of the left segment whose word occurs in the right one (by binary search,
    # not all W x W pairs: the same count, 10x faster on long segments)
    shared = _found_in(arrays, left, b2 + 1, a2).sum(1)
    total = left_len + right_len
    width = max(left.shape[1], right.shape[1])
    left_pad = numpy.pad(left, ((0, 0), (0, width - left.shape[1])), constant_values=-1)
    right_pad = numpy.pad(right, ((0, 0), (0, width - right.shape[1])), constant_values=-1)
    identical = (left_len == right_len) & (
        (left_pad == numpy.where(right_pad == -2, -1, right_pad)).all(1)
    )
    # bigrams wholly inside the outer segments: starting at a+1..b-2 and b'+1..a'-2
    left_bi, _ = _segment_values(arrays.bigram, a + 1, b - 1, -1)
    shared_bigrams = _found_in(arrays, left_bi, b2 + 1, a2 - 1, bigrams=True).sum(1)
    inside_a = arrays.occurrences(lex[a], a + 1, a2)
    inside_b = arrays.occurrences(lex[b], a + 1, a2) - 1 - (lex[b2] == lex[b])
    span = a2 - a
    context = (
        arrays.occurrences(lex[a], a - span, a)
        + arrays.occurrences(lex[a], a2 + 1, a2 + 1 + span)
        + arrays.occurrences(lex[b], a - span, a)
        + arrays.occurrences(lex[b], a2 + 1, a2 + 1 + span)
    )
    return {
        "shared_outer": shared,
        "shared_outer_relative": 2.0 * shared / numpy.maximum(total, 1),
        "identical_outer": identical,
        "shared_bigrams_outer": shared_bigrams,
        "repeat_a_inside": inside_a,
        "repeat_b_inside": numpy.maximum(inside_b, 0),
        "repeat_context": context,
    }


def _d_features(arrays: DocArrays, a, b, b2, a2) -> Dict[str, numpy.ndarray]:
    k = len(a)
    outer = lambda prefix: _between(prefix, a, b) + _between(prefix, b2, a2)  # noqa: E731
    central = lambda prefix: _between(prefix, b, b2)  # noqa: E731
    values = {
        "size": a2 - a,
        "central_size": b2 - b - 1,
        "size_difference": numpy.abs((b - a) - (a2 - b2)),
        "punct_outer": outer(arrays.hard),
        "comma_outer": outer(arrays.comma),
        "punct_central": central(arrays.hard),
        "comma_central": central(arrays.comma),
        "line_breaks": _between(arrays.newline, a, a2),
        "paragraph_breaks": _between(arrays.paragraph, a, a2),
        "paragraph_breaks_central": central(arrays.paragraph),
        "sentence_breaks": arrays.sentence_breaks(a, a2),
        "sentence_breaks_central": arrays.sentence_breaks(b, b2),
        "stop_a": (arrays.stop[a].astype(int) + arrays.stop[a2]) / 2,
        "stop_b": (arrays.stop[b].astype(int) + arrays.stop[b2]) / 2,
        "negation_outer": outer(arrays.negation),
        "negation_central": central(arrays.negation),
        "conjunction_central": central(arrays.conjunction),
        "inversion_clue": _between(arrays.inversion, a, a2),
        "same_pos_a_b": arrays.pos[a] == arrays.pos[b],
        "adjacent_a_b": b - a == 1,
        "adjacent_b_b2": b2 - b == 1,
        "adjacent_b2_a2": a2 - b2 == 1,
    }
    values.update(_repetition(arrays, a, b, b2, a2))
    if arrays.has_dep:
        dep = arrays.dep
        values.update(
            same_dep_a_b2=dep[a] == dep[b2],
            same_dep_b_a2=dep[b] == dep[a2],
            same_dep_a_a2=dep[a] == dep[a2],
            same_dep_b_b2=dep[b] == dep[b2],
        )
    if arrays.head_lex is not None:
        head = arrays.head_lex
        values.update(same_head_a_b2=head[a] == head[b2], same_head_b_a2=head[b] == head[a2])
    values["has_dep_labels"] = numpy.full(k, float(arrays.has_dep))
    values["has_heads"] = numpy.full(k, float(arrays.head_lex is not None))
    return values


def _l_features(arrays: DocArrays, roles: Dict[str, numpy.ndarray]) -> Dict[str, numpy.ndarray]:
    lex = arrays.lex
    values = {f"lemma_{x}_{y}": lex[roles[x]] == lex[roles[y]] for x, y in PAIRS}
    values["lemma_inversion"] = values["lemma_a_a2"] & values["lemma_b_b2"] & ~values["lemma_a_b"]
    return values


def _e_features(arrays: DocArrays, roles: Dict[str, numpy.ndarray]) -> Dict[str, numpy.ndarray]:
    k = len(roles["a"])
    if arrays.vectors is None:
        return {"has_vectors": numpy.zeros(k)}
    vectors = arrays.vectors
    values = {f"cos_{x}_{y}": (vectors[roles[x]] * vectors[roles[y]]).sum(1) for x, y in PAIRS}
    values["has_vectors"] = numpy.ones(k)
    return values


def _unit(matrix: numpy.ndarray) -> numpy.ndarray:
    norms = numpy.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / numpy.where(norms > 0, norms, 1.0)


def _segment_means(prefix: numpy.ndarray, start: numpy.ndarray, stop: numpy.ndarray):
    """[k, H] mean vectors of the positions start..stop-1 from the prefix sums [n+1, H]."""
    count = numpy.maximum(stop - start, 1)[:, None]
    return (prefix[stop] - prefix[start]) / count


def encoder_e_features(
    states: numpy.ndarray, candidates: numpy.ndarray, layers: Sequence[int]
) -> numpy.ndarray:
    """The encoder E features (``encoder_e_names(layers)``) of a doc's candidates.

    states (numpy.ndarray): [n_tokens, len(layers), hidden] hidden states of the doc.
    candidates (numpy.ndarray): [k, 4] (or [k, 6]) token positions A, B, (C, C',) B', A'.
    layers (Sequence[int]): the layers the states come from, for the column order.
    RETURNS (numpy.ndarray): [k, len(E_LAYER_FEATURES) * len(layers)] float32.
    """
    per_layer = len(E_LAYER_FEATURES)
    output = numpy.zeros((len(candidates), per_layer * len(layers)), dtype="float32")
    if len(candidates) == 0:
        return output
    candidates = numpy.asarray(candidates, dtype=numpy.int64).reshape(len(candidates), -1)
    if states.ndim != 3 or states.shape[1] != len(layers) or states.shape[0] <= candidates.max():
        raise ValueError(
            f"chiasmus E features: states of shape {states.shape} do not fit the "
            f"candidates (max position {int(candidates.max())}) and {len(layers)} layers"
        )
    a, b, b2, a2 = (candidates[:, _COLUMN[r]] for r in ("a", "b", "b2", "a2"))
    roles = {"a": a, "b": b, "b2": b2, "a2": a2}
    cos = lambda u, v: (_unit(u) * _unit(v)).sum(-1)  # noqa: E731
    for j in range(len(layers)):
        X = numpy.asarray(states[:, j], dtype="float32")  # [n, H]
        prefix = numpy.concatenate((numpy.zeros((1, X.shape[1]), "float32"), X.cumsum(0)))
        columns = [cos(X[roles[x]], X[roles[y]]) for x, y in PAIRS]
        columns.append(cos(_segment_means(prefix, a, b + 1), _segment_means(prefix, b2, a2 + 1)))
        left = numpy.where((b - a > 1)[:, None], _segment_means(prefix, a + 1, b), X[a])
        right = numpy.where((a2 - b2 > 1)[:, None], _segment_means(prefix, b2 + 1, a2), X[a2])
        columns.append(cos(left, right))
        columns.append(cos(X[a] - X[b], X[a2] - X[b2]))
        columns.append(cos(X[a] - X[b], X[b2] - X[a2]))
        output[:, j * per_layer : (j + 1) * per_layer] = numpy.stack(columns, 1)
    return output


def candidate_features(
    doc: Doc,
    candidates: numpy.ndarray,
    *,
    groups: Sequence[str] = FEATURE_GROUPS,
    lexical_attr: str = "LEMMA",
    vectors: str = "auto",
    clues: Optional[Dict[str, Iterable[str]]] = None,
    arrays: Optional[DocArrays] = None,
    encoder_states: Optional[numpy.ndarray] = None,
    encoder_layers: Optional[Sequence[int]] = None,
) -> numpy.ndarray:
    """The feature matrix of a doc's candidates (columns: ``feature_names(groups)``).

    doc (Doc): the doc, with POS (and lemmas for lexical_attr "LEMMA").
    candidates (numpy.ndarray): [k, 4] (or [k, 6]) token positions A, B, (C, C',) B', A'.
    groups (Sequence[str]): the feature groups, any of "D", "L", "E".
    lexical_attr (str): the attribute compared as "lemma".
    vectors (str): the vector source for the E features (see the module docstring).
    clues (Optional[Dict[str, Iterable[str]]]): replacement clue word lists, by kind
        ("negation", "conjunction", "inversion").
    arrays (Optional[DocArrays]): precomputed token arrays of the doc.
    encoder_states (Optional[numpy.ndarray]): [n_tokens, len(encoder_layers), hidden]
        hidden states of the doc: the E features come from them (see
        ``encoder_e_features``); needs ``encoder_layers``.
    encoder_layers (Optional[Sequence[int]]): the layers of ``encoder_states``.
    RETURNS (numpy.ndarray): [k, n_features] float32.
    """
    use_encoder = encoder_layers is not None and "E" in groups
    if use_encoder and encoder_states is None:
        raise ValueError("chiasmus features: encoder_layers given without encoder_states")
    names = feature_names(groups, encoder_layers if use_encoder else None)
    candidates = numpy.asarray(candidates, dtype=numpy.int64)
    output = numpy.zeros((len(candidates), len(names)), dtype="float32")
    if len(candidates) == 0:
        return output
    candidates = candidates.reshape(len(candidates), -1)
    if arrays is None:
        source = vectors if "E" in groups and not use_encoder else "none"
        arrays = DocArrays(doc, lexical_attr, source, clues)
    column = {name: i for i, name in enumerate(names)}
    for start in range(0, len(candidates), _FEATURE_CHUNK):
        chunk = candidates[start : start + _FEATURE_CHUNK]
        roles = {role: chunk[:, col] for role, col in _COLUMN.items()}
        values: Dict[str, numpy.ndarray] = {}
        if "D" in groups:
            values.update(_d_features(arrays, roles["a"], roles["b"], roles["b2"], roles["a2"]))
        if "L" in groups:
            values.update(_l_features(arrays, roles))
        if "E" in groups and use_encoder:
            block = encoder_e_features(encoder_states, chunk, encoder_layers)
            values.update(zip(encoder_e_names(encoder_layers), block.T))
        elif "E" in groups:
            values.update(_e_features(arrays, roles))
        for name, value in values.items():
            output[start : start + len(chunk), column[name]] = value
    return output
