"""The ``parallelism_tagger`` pipeline component.

It writes:

* ``doc.spans[spans_key]`` (default "parallelism"): the branches of the parallelisms
  it reports (the CRF's best path), branches of one parallelism sharing ``span.id_``
  ("1", "2", ...) and label;
* ``doc.spans[candidates_key]`` (default "parallelism_candidates"): the review list,
  parallelisms that a decode pushed toward recall finds and the report lacks, best
  first (ids "c1", "c2", ...), at most ``review_per_1000`` per 1,000 tokens.

Both groups keep the scores in their ``attrs`` ("parallelism_scores": {id: score},
"parallelism_branch_scores": {id: [[start, end, score], ...]}), so they survive DocBin
round trips, and read through ``span._.parallelism_score`` (the score of the branch's
parallelism) and ``span._.parallelism_branch_score`` (the branch's own). How the scores
are made and calibrated: see confidence.py. A parallelism whose branches only name or
address people ("Vice President Johnson, Mr. Speaker, ..., fellow citizens") is
dropped from both (``reading.drop_name_lists``) and counted in the group's attrs
("parallelism_name_lists_dropped").
"""

from itertools import islice
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import srsly
from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.pipeline.trainable_pipe import deserialize_config
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from ..corpora.parallelisms import (
    CHIASTIC,
    DEFAULT_SPANS_KEY,
    STRATA_ATTR,
    SYNCHYSTIC,
    UNTYPED,
    get_parallelisms,
    set_parallelisms,
)
from .confidence import (
    DEFAULT_REVIEW_PER_1000,
    BranchEvidence,
    calibration_settings,
    evidence_for,
    review_bound,
    score_parallelisms,
)
from .linker import (
    KIND_END,
    KIND_FIRST,
    KIND_INSIDE,
    KIND_LATER,
    KIND_OUTSIDE,
    Branch,
    read_branches,
)
from .model import set_weights_dtype, with_torch_averages
from .reading import SPELLINGS, drop_name_lists, respelled, tidy_branches
from .tag_codec import decode_strata, encode_strata
from .tag_constraints import transition_constraints
from .tags import BEGIN, END, LINKED_BEGIN, OUTSIDE, TagScheme, join_link, parse_tag, split_link
from .types import (
    ALIGNMENT_L2,
    TYPE_LAYER,
    TYPER_ALIGNMENT,
    branch_vectors,
    describe_typer,
    fit_type_classifier,
    predict_type,
    type_features,
)
from .windows import doc_windows, owned, owner, token_batches, window_doc, without_clashes

DEFAULT_MODEL_CONFIG = """
[model]
@architectures = "spacy-rhetoric.ParallelismTagger.v1"
hidden_width = 128
depth = 1
dropout = 0.2
repetition_features = true

[model.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 4
embed_size = 2000
window_size = 1
maxout_pieces = 3
subword_features = true
"""
DEFAULT_MODEL = util.load_config_from_str(DEFAULT_MODEL_CONFIG)["model"]

SCORE_KEYS = [
    f"parallelism_{metric}_{part}"
    for metric in ("epm", "mpbm", "mbawo", "mwo")
    for part in ("p", "r", "f")
]


# subtracted from the outermost stratum's "O" score at prediction (see make_parallelism_tagger)
DEFAULT_OUTSIDE_PENALTY = 0.0
# the head reads long docs in windows of this many tokens, overlapping by this many
# (ASP's sections and PSE-I's paragraphs have at most 925 and 1,287 tokens), and at most
# this many padded tokens per batch (see windows.py)
DEFAULT_WINDOW = 1024
DEFAULT_WINDOW_OVERLAP = 256
DEFAULT_BATCH_TOKENS = 4096
# a predicted branch counts only if at least this share of its tokens are words (hold a
# letter or digit): none of ASP's or PSE-I's 5,456 gold branches in train and dev falls
# below it, while e-mail separator lines (= = =, * * *) did in English running text
DEFAULT_MIN_WORD_SHARE = 0.5
DEFAULT_CANDIDATES_KEY = "parallelism_candidates"
SCORES_ATTR = "parallelism_scores"
BRANCH_SCORES_ATTR = "parallelism_branch_scores"
SOURCES_ATTR = "parallelism_sources"
# how many decoded parallelisms a group lacks because their branches only name or
# address people (``reading.drop_name_lists``)
NAME_LISTS_ATTR = "parallelism_name_lists_dropped"
CANDIDATE_PREFIX = "c"


@Language.factory(
    "parallelism_tagger",
    assigns=["doc.spans"],
    default_config={
        "model": DEFAULT_MODEL,
        "spans_key": DEFAULT_SPANS_KEY,
        "tagset": "biomje",
        "link": "branch",
        "n_strata": 1,
        "outside_penalty": DEFAULT_OUTSIDE_PENALTY,
        "spelling": "",
        "window": DEFAULT_WINDOW,
        "window_overlap": DEFAULT_WINDOW_OVERLAP,
        "batch_tokens": DEFAULT_BATCH_TOKENS,
        "min_word_share": DEFAULT_MIN_WORD_SHARE,
        "candidates_key": DEFAULT_CANDIDATES_KEY,
        "review_per_1000": DEFAULT_REVIEW_PER_1000,
        "scorer": {"@scorers": "spacy-rhetoric.parallelism_scorer.v1"},
    },
    default_score_weights={key: (1.0 if key == "parallelism_epm_f" else 0.0) for key in SCORE_KEYS},
)
def make_parallelism_tagger(
    nlp: Language,
    name: str,
    model: Model,
    spans_key: str,
    tagset: str,
    link: str,
    n_strata: int,
    outside_penalty: float,
    spelling: str,
    window: int,
    window_overlap: int,
    batch_tokens: int,
    min_word_share: float,
    candidates_key: Optional[str],
    review_per_1000: Optional[float],
    scorer: Optional[Callable],
) -> "ParallelismTagger":
    """Create a parallelism tagger: sequence labelling of parallelism branches with
    numeric links between the branches of one parallelism and a CRF head.

    model (Model): the tagger model (see spacy-rhetoric.ParallelismTagger.v1).
    spans_key (str): the doc.spans key to write the branches to.
    tagset (str): one of bio, bioe, bioj, biom, bioje, biome, biomj, biomje.
    link (str): "token" (token distance) or "branch" (branch distance) links.
    n_strata (int): how many nesting levels to predict (1 = outermost only).
    outside_penalty (float): subtracted from the outermost stratum's "O" score before
        decoding; > 0 trades
        precision for recall (``python -m spacy_rhetoric parallelism tune`` picks it on
        validation data).
    spelling (str): how the model reads words: "" as they are, "lower" lower-cased,
        "latin" folded as ASP is spelled (lower case, u for v, i for j, no diacritics),
        "latin-v" folded so and consonantal u given back its v (``uos`` -> ``vos``);
        the doc itself is never changed, so ``nlp(text)`` on classical spelling gets
        what the respelled text gets.
    window (int): the head reads a longer doc in windows of this many tokens, so
        memory and time stay linear in the doc's length and a whole book can be one
        Doc; each parallelism is taken from the window that holds it in its middle part.
    window_overlap (int): tokens shared by neighbouring windows: a parallelism up to
        this long is never cut by a window edge.
    batch_tokens (int): at most this many padded tokens (docs x longest) go through the
        head at once (a longer window alone).
    min_word_share (float): a predicted branch is kept only if at least this share of
        its tokens hold a letter or a digit (0 keeps them all); a parallelism left with
        one branch is dropped.
    candidates_key (Optional[str]): the span group for the review list (None: no
        review list, and no second decode).
    review_per_1000 (Optional[float]): at most this many review candidates per 1,000
        tokens of a doc (None: all that score at least the calibration's
        ``review_min_score``).
    scorer (Optional[Callable]): the scoring method.
    """
    return ParallelismTagger(
        nlp.vocab,
        model,
        name,
        spans_key=spans_key,
        tagset=tagset,
        link=link,
        n_strata=n_strata,
        outside_penalty=outside_penalty,
        spelling=spelling,
        window=window,
        window_overlap=window_overlap,
        batch_tokens=batch_tokens,
        min_word_share=min_word_share,
        candidates_key=candidates_key,
        review_per_1000=review_per_1000,
        scorer=scorer,
    )


class TagRows(list):
    """One doc's predicted tag rows (one per stratum), with what the decode knows
    beyond the tags: the evidence of each decoded branch and the review decode's finds.

    rows (Iterable[List[str]]): per stratum, one tag per token.
    evidence (Dict[int, List]): per stratum, (start, end, evidence) per decoded branch
        (see confidence.py).
    review (List): (branch offsets, stratum, evidence per branch) per parallelism of the
        review decode.
    """

    def __init__(
        self,
        rows: Iterable[List[str]] = (),
        evidence: Optional[Dict[int, List[Tuple[int, int, BranchEvidence]]]] = None,
        review: Optional[List[Tuple[Tuple[Tuple[int, int], ...], int, List]]] = None,
    ) -> None:
        super().__init__(rows)
        self.evidence = evidence if evidence is not None else {}
        self.review = review if review is not None else []


class ParallelismTagger(TrainablePipe):
    """Detect rhetorical parallelisms: groups of >= 2 parallel branch spans."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "parallelism_tagger",
        *,
        spans_key: str = DEFAULT_SPANS_KEY,
        tagset: str = "biomje",
        link: str = "branch",
        n_strata: int = 1,
        outside_penalty: float = DEFAULT_OUTSIDE_PENALTY,
        spelling: str = "",
        window: int = DEFAULT_WINDOW,
        window_overlap: int = DEFAULT_WINDOW_OVERLAP,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        min_word_share: float = DEFAULT_MIN_WORD_SHARE,
        candidates_key: Optional[str] = DEFAULT_CANDIDATES_KEY,
        review_per_1000: Optional[float] = DEFAULT_REVIEW_PER_1000,
        scorer: Optional[Callable] = None,
    ) -> None:
        scheme = TagScheme(tagset, link)  # validates the names
        if spelling and spelling not in SPELLINGS:
            raise ValueError(
                f"parallelism_tagger: spelling must be '' or one of {sorted(SPELLINGS)}, "
                f"got {spelling!r}."
            )
        if n_strata < 1:
            raise ValueError(f"parallelism_tagger: n_strata must be >= 1, got {n_strata}.")
        if not 0 <= window_overlap < window or batch_tokens < 1:
            raise ValueError(
                "parallelism_tagger: need 0 <= window_overlap < window and batch_tokens >= 1, "
                f"got window={window}, window_overlap={window_overlap}, "
                f"batch_tokens={batch_tokens}."
            )
        if not 0 <= min_word_share <= 1:
            raise ValueError(
                f"parallelism_tagger: min_word_share must be in [0, 1], got {min_word_share}."
            )
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        if review_per_1000 is not None and not review_per_1000 >= 0:
            raise ValueError(
                f"parallelism_tagger: review_per_1000 must be >= 0 or null, got {review_per_1000}."
            )
        # from the config, not cfg: a package saved before they existed gets the
        # defaults, and spacy.load(..., config=...) can change them
        self.min_word_share = float(min_word_share)
        self.candidates_key = candidates_key or None
        self.review_per_1000 = None if review_per_1000 is None else float(review_per_1000)
        self.cfg: Dict[str, Any] = {
            "labels": [],
            "spans_key": spans_key,
            "tagset": scheme.tagset,
            "link": scheme.link,
            "n_strata": n_strata,
            "outside_penalty": float(outside_penalty),
            "spelling": spelling,
            "window": int(window),
            "window_overlap": int(window_overlap),
            "batch_tokens": int(batch_tokens),
            "type_weights": [],
            # the calibration of the scores and the review list's operating point,
            # fitted on dev data (python -m spacy_rhetoric parallelism calibrate)
            "calibration": None,
        }

    @property
    def scheme(self) -> TagScheme:
        return TagScheme(self.cfg["tagset"], self.cfg["link"])

    @property
    def labels(self) -> Tuple[str, ...]:
        """RETURNS (Tuple[str, ...]): the tag vocabulary."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    def add_label(self, label: str) -> int:
        raise NotImplementedError(
            "parallelism_tagger takes its tag vocabulary from the training data in "
            "initialize() (or from the labels argument there); labels cannot be added one by one."
        )

    @property
    def pairwise(self) -> bool:
        """Whether links are predicted pairwise: the model has a branch linker
        (``linker_width > 0``) and the CRF predicts link-free structure tags; otherwise
        links are part of the CRF's tag vocabulary (e.g. B-2: only link values seen in
        training can be produced)."""
        return self.model.attrs.get("linker_width", 0) > 0

    def _gold_items(self, example: Example) -> List[Tuple[Tuple[Tuple[int, int], ...], int]]:
        """The gold parallelisms of an example as (branch offsets, stratum), on the
        predicted doc's tokens. Where the tokenizations differ, branches are projected
        through the alignment; a parallelism with a branch that does not align, or on
        a stratum deeper than n_strata, is left out of training."""
        key = self.cfg["spans_key"]
        predicted, reference = example.predicted, example.reference
        same_tokens = len(predicted) == len(reference) and all(
            a.text == b.text for a, b in zip(predicted, reference)
        )
        items = []
        for parallelism in get_parallelisms(reference, key):
            if parallelism.stratum > self.cfg["n_strata"]:
                continue  # deeper than the strata this tagger predicts
            if same_tokens:
                items.append((parallelism.offsets, parallelism.stratum))
                continue
            aligned = example.get_aligned_spans_y2x(parallelism.branches, allow_overlap=True)
            if len(aligned) == len(parallelism.branches):
                offsets = tuple((span.start, span.end) for span in aligned)
                items.append((offsets, parallelism.stratum))
        return items

    def _gold_tags(self, example: Example, items: Optional[List] = None) -> List[List[str]]:
        """The gold tag rows (one per stratum) of an example; link-free structure
        tags when links are predicted pairwise. ``items``: its ``_gold_items``."""
        if items is None:
            items = self._gold_items(example)
        rows = encode_strata(items, len(example.predicted), self.scheme, self.cfg["n_strata"])
        if self.pairwise:
            rows = [[split_link(tag)[0] for tag in row] for row in rows]
        return rows

    def _gold_branches(self, items: List) -> List[List[Branch]]:
        """Per stratum, the gold branches in order with their antecedent's index.

        items (List): an example's ``_gold_items``.
        """
        rows: List[List[Tuple[int, int, int]]] = [[] for _ in range(self.cfg["n_strata"])]
        for n, (offsets, stratum) in enumerate(items):
            rows[stratum - 1].extend((start, end, n) for start, end in offsets)
        branches = []
        for row in rows:
            row.sort()
            last_of: Dict[int, int] = {}
            ordered = []
            for i, (start, end, group) in enumerate(row):
                antecedent = last_of.get(group, -1)
                ordered.append((start, end, antecedent >= 0, antecedent))
                last_of[group] = i
            branches.append(ordered)
        return branches

    def _label_kinds(self) -> List[int]:
        kinds = []
        for label in self.labels:
            prefix = label if label == LINKED_BEGIN else parse_tag(label)[0]
            if prefix == BEGIN:
                kinds.append(KIND_FIRST)
            elif prefix == LINKED_BEGIN:
                kinds.append(KIND_LATER)
            elif prefix == END:
                kinds.append(KIND_END)
            elif prefix in ("I", "J"):
                kinds.append(KIND_INSIDE)
            else:
                kinds.append(KIND_OUTSIDE)
        return kinds

    def _setup_model(self) -> None:
        """Give the model its output width and constraints, then build it."""
        if not self.labels:
            raise ValueError(
                f"{self.name}: no labels. Initialize the component with training data "
                "(nlp.initialize) or pass labels to initialize()."
            )
        self.model.set_dim("nO", len(self.labels))
        self.model.attrs["n_strata"] = self.cfg["n_strata"]
        self.model.attrs["constraints"] = transition_constraints(self.labels, self.scheme)
        self.model.attrs["label_kinds"] = self._label_kinds()

    def use_params(self, params: dict):
        """Modify the pipe's model to use the given parameter values (the optimizer's
        averages, with ``use_averages = true``), the torch head's included (see
        ``model.with_torch_averages``); at the end of the block the values are restored.
        A generator, as spaCy's own (``Language.use_params`` drives it).

        params (dict): the parameter values, keyed as the optimizer keys them.
        """
        with self.model.use_params(with_torch_averages(self.model, params)):
            yield

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Initialize the component: take the tag vocabulary from the data (unless
        given) and initialize the model on a sample of up to 10 examples.

        get_examples (Callable[[], Iterable[Example]]): function returning the training examples.
        nlp (Language): the current nlp object.
        labels (Optional[Sequence[str]]): the tag vocabulary, e.g. from ``init labels``.
        """
        validate_get_examples(get_examples, "ParallelismTagger.initialize")
        if labels is None:
            found = set()
            for example in get_examples():
                for row in self._gold_tags(example):
                    found.update(row)
            labels = found
        labels = sorted(set(labels) | {OUTSIDE}, key=lambda tag: (tag != OUTSIDE, tag))
        if len(labels) < 2:
            raise ValueError(
                f"{self.name}: no labels: the examples passed to initialize() contain no "
                f"parallelisms in doc.spans['{self.cfg['spans_key']}']. Train on annotated "
                "data (e.g. python -m spacy_rhetoric corpus convert asp ...) or pass labels."
            )
        self.cfg["labels"] = list(labels)
        self._fit_types(get_examples)
        self._setup_model()
        docs = [eg.predicted for eg in islice(get_examples(), 10)]
        self.model.initialize(X=(docs, None))

    def _fit_types(self, get_examples: Callable[[], Iterable[Example]]) -> None:
        """Fit the synchystic/chiastic classifier (the "alignment" typer, with the
        states of the tagger's frozen encoder where it has one) on the typed gold
        parallelisms; none is fitted when the data is untyped: predictions are then
        labelled "parallelism"."""
        encoder, layer = self._type_encoder()
        self.cfg["typer"] = TYPER_ALIGNMENT
        self.cfg["type_layer"] = None if encoder is None else encoder.layers[layer]
        features, chiastic = [], []
        for example in get_examples():
            doc = example.reference
            typed = [
                p
                for p in get_parallelisms(doc, self.cfg["spans_key"])
                if p.label in (SYNCHYSTIC, CHIASTIC)
            ]
            if not typed:
                continue
            states = None if encoder is None else encoder.states([doc])[0][:, layer]
            for parallelism in typed:
                vectors = branch_vectors(states, parallelism.offsets)
                features.append(type_features(TYPER_ALIGNMENT, parallelism.branches, vectors))
                chiastic.append(parallelism.label == CHIASTIC)
        if features:
            self.cfg["type_weights"] = fit_type_classifier(
                numpy.stack(features), numpy.asarray(chiastic), l2=ALIGNMENT_L2
            )
        else:
            self.cfg["type_weights"] = []

    def _type_encoder(self) -> Tuple[Optional[Any], int]:
        """The frozen encoder inside the model whose states the alignment typer reads,
        and the index of its layer closest to TYPE_LAYER (or the one the cfg names).

        RETURNS (Tuple[Optional[FrozenEncoder], int]): (None, 0) without an encoder.
        """
        for node in self.model.walk():
            slot = node.attrs.get("frozen_encoder")
            if slot is None:
                continue
            layers = list(slot.settings["layers"])
            wanted = self.cfg.get("type_layer") or TYPE_LAYER
            index = min(range(len(layers)), key=lambda i: abs(layers[i] - wanted))
            return slot.get(), index
        return None, 0

    def _typing_encoder(self) -> Tuple[Optional[Any], int]:
        """The frozen encoder and layer index whose states type the parallelisms
        found, or (None, 0) where the typer reads none (no classifier fitted, another
        typer, or the model's layers lack the typer's one)."""
        if not self.cfg.get("type_weights"):
            return None, 0
        typer, layer = describe_typer(self.cfg)
        if typer != TYPER_ALIGNMENT or layer is None:
            return None, 0
        encoder, index = self._type_encoder()
        if encoder is None or encoder.layers[index] != layer:
            return None, 0
        return encoder, index

    def type_parallelisms(
        self, doc: Doc, parallelisms: Sequence[Sequence[Tuple[int, int]]]
    ) -> List[str]:
        """Type parallelisms of a doc with the fitted classifier.

        doc (Doc): the doc.
        parallelisms (Sequence[Sequence[Tuple[int, int]]]): per parallelism, its
            branches as (start, end) token offsets in text order.
        RETURNS (List[str]): per parallelism "synchystic" or "chiastic"; "parallelism"
            (untyped) when no classifier was fitted.
        """
        weights = self.cfg.get("type_weights") or []
        if not weights:
            return [UNTYPED] * len(parallelisms)
        typer, _ = describe_typer(self.cfg)
        encoder, index = self._typing_encoder() if parallelisms else (None, 0)
        # the encoder reads what the head read: the respelled doc, a long one by windows
        # (only worked out where there are states to read)
        if encoder is not None:
            reading = respelled(doc, self.cfg.get("spelling", ""))
            windows = self._windows(doc)
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

    def predict(self, docs: Iterable[Doc]) -> List[TagRows]:
        """Predict the tag rows (one per stratum) of each doc, with the evidence of
        each decoded branch and, with a ``candidates_key``, the review decode's finds.

        docs (Iterable[Doc]): the docs.
        RETURNS (List[TagRows]): per doc, per stratum, one concrete tag per token
            (with pairwise links, the linker's choices are joined into the tags).
        """
        docs = list(docs)
        n_strata = self.cfg["n_strata"]
        rows: List[TagRows] = [TagRows([[] for _ in range(n_strata)]) for _ in docs]
        filled = [i for i, doc in enumerate(docs) if len(doc)]
        if not filled:
            return rows
        if not self.model.has_ref("head"):  # the head is built by initialize()
            raise ValueError(
                f"{self.name} is not trained: train it (e.g. python -m spacy train "
                "configs/parallelism/asp-me5.cfg) or load a trained pipeline (e.g. "
                "spacy.load('la_rhetoric_parallelism'))."
            )
        penalty = self.cfg.get("outside_penalty", DEFAULT_OUTSIDE_PENALTY)
        review_penalty, _ = calibration_settings(self.cfg.get("calibration"))
        options = {
            "outside_penalty": penalty,
            "confidence": True,
            "review_penalties": [review_penalty] if self.candidates_key else [],
        }
        # the typer reads one layer of these docs' states again in set_annotations:
        # the encoder holds it for this batch instead of running twice
        encoder, index = self._typing_encoder()
        if encoder is not None:
            encoder.hold_layer(index)
        # what the head reads: each doc respelled, a long one cut into windows
        pieces: List[Tuple[int, Tuple[int, int, int, int], Doc]] = []
        for i in filled:
            doc = respelled(docs[i], self.cfg.get("spelling", ""))
            for window in self._windows(doc):
                pieces.append((i, window, window_doc(doc, window)))
        piece_rows: List[List[List[str]]] = [[] for _ in pieces]
        batch_tokens = self.cfg.get("batch_tokens", DEFAULT_BATCH_TOKENS)
        for batch in token_batches([len(piece[2]) for piece in pieces], batch_tokens):
            output = self.model.predict(([pieces[j][2] for j in batch], None, options))
            for b, j in enumerate(batch):
                i, window = pieces[j][:2]
                piece_rows[j] = self._piece_tags(output, b)
                # every window's branches: a parallelism kept from one window may have
                # a branch whose middle lies in the next one's core
                self._collect_evidence(rows[i].evidence, output, b, window[0])
                for found in output["review"]:
                    review_tags = self._piece_tags(found, b)
                    table: Dict[int, List] = {}
                    self._collect_evidence(table, found, b)
                    decoded = decode_strata(review_tags, self.scheme)
                    for offsets, stratum in owned(decoded, window):
                        shift = window[0]
                        evidence = [
                            evidence_for(table, stratum, a - shift, e - shift) for a, e in offsets
                        ]
                        rows[i].review.append((offsets, stratum, evidence))
        by_doc: Dict[int, List[int]] = {}
        for j, (i, _, _) in enumerate(pieces):
            by_doc.setdefault(i, []).append(j)
        for i, js in by_doc.items():
            if len(js) == 1 and pieces[js[0]][1][:2] == (0, len(docs[i])):
                rows[i][:] = piece_rows[js[0]]
                continue
            found = [
                item
                for j in js
                for item in owned(decode_strata(piece_rows[j], self.scheme), pieces[j][1])
            ]
            found.sort(key=lambda item: (item[0][0], item[1]))
            rows[i][:] = encode_strata(without_clashes(found), len(docs[i]), self.scheme, n_strata)
        return rows

    def _piece_tags(self, output: Dict[str, Any], b: int) -> List[List[str]]:
        """The tag rows of the ``b``-th doc of a batch's decode (per stratum)."""
        labels = self.labels
        tags_by_stratum = []
        for stratum, stratum_paths in enumerate(output["paths"]):
            tags = [labels[label] for label in stratum_paths[b]]
            if self.pairwise:
                tags = self._join_links(tags, output["branches"][stratum][b])
            tags_by_stratum.append(tags)
        return tags_by_stratum

    def _collect_evidence(
        self,
        table: Dict[int, List[Tuple[int, int, BranchEvidence]]],
        output: Dict[str, Any],
        b: int,
        shift: int = 0,
        core: Optional[Tuple[int, int]] = None,
    ) -> None:
        """Add the evidence of the ``b``-th doc's decoded branches to ``table`` (per
        stratum, moved by ``shift``); with a window's ``core`` (doc offsets), only the
        branches whose middle lies in it (the window that keeps their parallelism)."""
        kinds = self.model.attrs["label_kinds"]
        for stratum, evidence in enumerate(output["confidence"]):
            if self.pairwise:
                branches = output["branches"][stratum][b]
            else:
                branches = read_branches(output["paths"][stratum][b], kinds)
            for (start, end, _, _), found in zip(branches, evidence[b], strict=True):
                middle = shift + (start + end - 1) / 2
                if core is not None and not core[0] <= middle < core[1]:
                    continue
                table.setdefault(stratum + 1, []).append((start + shift, end + shift, found))

    def _windows(self, doc: Doc) -> List[Tuple[int, int, int, int]]:
        """The head's windows over a doc: by paragraph, a long one in overlapping
        windows (see windows.py)."""
        window = self.cfg.get("window", DEFAULT_WINDOW)
        overlap = self.cfg.get("window_overlap", DEFAULT_WINDOW_OVERLAP)
        return doc_windows(doc, window, overlap)

    def _join_links(self, tags: List[str], branches: Sequence[Branch]) -> List[str]:
        """Write the linker's antecedents into structure tags as concrete links; a
        later branch without antecedent becomes a first branch."""
        tags = list(tags)
        for i, (start, _, later, antecedent) in enumerate(branches):
            if not later:
                continue
            if antecedent < 0:
                tags[start] = BEGIN
            elif self.cfg["link"] == "branch":
                tags[start] = join_link(LINKED_BEGIN, i - antecedent)
            else:
                tags[start] = join_link(LINKED_BEGIN, start - (branches[antecedent][1] - 1))
        return tags

    def set_annotations(self, docs: Iterable[Doc], rows: List[List[List[str]]]) -> None:
        """Decode the tag rows and write the parallelisms to doc.spans, with their
        scores where the rows carry evidence (``TagRows``), and the review list."""
        calibration = self.cfg.get("calibration")
        _, min_score = calibration_settings(calibration)
        key = self.cfg["spans_key"]
        for doc, tags in zip(docs, rows):
            decoded = tidy_branches(
                doc,
                decode_strata(tags, self.scheme) if len(doc) else [],
                self.min_word_share,
            )
            decoded, name_lists = drop_name_lists(doc, decoded)
            labels = self.type_parallelisms(doc, [offsets for offsets, _ in decoded])
            items = [
                (offsets, label, stratum)
                for (offsets, stratum), label in zip(decoded, labels, strict=True)
            ]
            set_parallelisms(doc, items, key)
            doc.spans[key].attrs[NAME_LISTS_ATTR] = name_lists
            if not isinstance(tags, TagRows):
                continue  # rows without evidence: no scores
            evidence = [
                [evidence_for(tags.evidence, stratum, a, b) for a, b in offsets]
                for offsets, stratum in decoded
            ]
            scores = score_parallelisms(list(zip(decoded, evidence)), calibration)
            ids = [str(n) for n in range(1, len(decoded) + 1)]  # as set_parallelisms numbers
            _write_scores(doc.spans[key], ids, [o for o, _ in decoded], scores)
            if self.candidates_key:
                found = [(tuple(o), st, e) for (o, st), e in zip(decoded, evidence, strict=True)]
                self._set_review(doc, tags, found, calibration, min_score)
        encoder, _ = self._typing_encoder()
        if encoder is not None:
            encoder.hold_layer(None)  # the batch is typed: its states are not needed

    def _set_review(
        self,
        doc: Doc,
        tags: TagRows,
        reported: List[Tuple[Tuple[Tuple[int, int], ...], int, List[BranchEvidence]]],
        calibration: Optional[Dict[str, Any]],
        min_score: float,
    ) -> None:
        """Write the review list: the candidates (see confidence.py) that are not
        reported, best first, down to ``min_score`` and at most ``review_per_1000`` per
        1,000 tokens."""
        seen = {offsets for offsets, _, _ in reported}
        candidates: List[Tuple[Tuple[Tuple[int, int], ...], int, List, str]] = []
        pool = list(reported)

        def add(offsets, stratum, evidence, source) -> None:
            if offsets not in seen:
                seen.add(offsets)
                candidates.append((offsets, stratum, evidence, source))

        for offsets, stratum, evidence in tags.review:
            table = {stratum: [(a, b, e) for (a, b), e in zip(offsets, evidence, strict=True)]}
            for tidied, _ in tidy_branches(doc, [(offsets, stratum)], self.min_word_share):
                tidied = tuple(tidied)
                found = [evidence_for(table, stratum, a, b) for a, b in tidied]
                pool.append((tidied, stratum, found))
                add(tidied, stratum, found, "decode")
        for offsets, stratum, evidence in pool:
            if len(offsets) < 3:
                continue
            for k in range(len(offsets) - 1):
                first = (*evidence[k][:2], None)  # its link leads outside the pair
                add(offsets[k : k + 2], stratum, [first, evidence[k + 1]], "split")
        candidates, name_lists = drop_name_lists(doc, candidates)
        scores = [
            score_parallelisms([(offsets, evidence)], calibration, source)[0]
            for offsets, _, evidence, source in candidates
        ]
        order = sorted(range(len(candidates)), key=lambda n: (-scores[n][0], candidates[n][0]))
        order = [n for n in order if scores[n][0] >= min_score]
        bound = review_bound(len(doc), self.review_per_1000)
        if bound is not None:
            order = order[:bound]
        offsets = [candidates[n][0] for n in order]
        labels = self.type_parallelisms(doc, offsets)
        ids = [f"{CANDIDATE_PREFIX}{rank}" for rank in range(1, len(order) + 1)]
        spans = [
            Span(doc, a, b, label=label, span_id=pid)
            for branches, label, pid in zip(offsets, labels, ids, strict=True)
            for a, b in branches
        ]
        group = SpanGroup(doc, name=self.candidates_key, spans=spans)
        group.attrs[STRATA_ATTR] = {pid: candidates[n][1] for pid, n in zip(ids, order)}
        group.attrs[SOURCES_ATTR] = {pid: candidates[n][3] for pid, n in zip(ids, order)}
        group.attrs[NAME_LISTS_ATTR] = name_lists
        _write_scores(group, ids, offsets, [scores[n] for n in order])
        doc.spans[self.candidates_key] = group

    def _gold(self, examples: Sequence[Example]) -> Dict[str, Any]:
        items = [self._gold_items(eg) for eg in examples]
        gold: Dict[str, Any] = {"tags": self._gold_matrix(examples, items)}
        if self.pairwise:
            per_example = [self._gold_branches(example_items) for example_items in items]
            gold["branches"] = [
                [branches[s] for branches in per_example] for s in range(self.cfg["n_strata"])
            ]
        return gold

    def _gold_matrix(self, examples: Sequence[Example], items: Sequence[List]) -> numpy.ndarray:
        index = {label: i for i, label in enumerate(self.labels)}
        width = max(len(eg.predicted) for eg in examples)
        gold = numpy.zeros((self.cfg["n_strata"], len(examples), width), dtype="int64")
        for b, (eg, example_items) in enumerate(zip(examples, items)):
            for s, row in enumerate(self._gold_tags(eg, example_items)):
                try:
                    gold[s, b, : len(row)] = [index[tag] for tag in row]
                except KeyError as err:
                    raise ValueError(
                        f"{self.name}: gold tag {err} is not in the tag vocabulary; "
                        "initialize the component on data that contains it."
                    ) from None
        return gold

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch of examples: the loss is the CRF's negative
        log-likelihood of the gold tag rows, summed over docs and strata."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        validate_examples(examples, "ParallelismTagger.update")
        examples = [eg for eg in examples if len(eg.predicted)]
        if not examples:
            return losses
        gold = self._gold(examples)
        spelling = self.cfg.get("spelling", "")
        docs = [respelled(eg.predicted, spelling) for eg in examples]
        loss, backprop = self.model.begin_update((docs, gold, 0.0))
        backprop(1.0)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Any) -> Tuple[float, Any]:
        """The CRF's negative log-likelihood of the gold tags (computed by the model)."""
        examples = [eg for eg in examples if len(eg.predicted)]
        if not examples:
            return 0.0, None
        loss = self.model.predict(([eg.predicted for eg in examples], self._gold(examples), 0.0))
        return float(loss), None

    def from_bytes(
        self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()
    ) -> "ParallelismTagger":
        self._validate_serialization_attrs()
        deserialize = {
            "cfg": lambda b: self.cfg.update(srsly.json_loads(b)),
            "vocab": lambda b: self.vocab.from_bytes(b, exclude=exclude),
            "model": self._load_model_bytes,
        }
        util.from_bytes(bytes_data, deserialize, exclude)
        return self

    def from_disk(self, path, *, exclude: Iterable[str] = tuple()) -> "ParallelismTagger":
        self._validate_serialization_attrs()
        deserialize = {
            "cfg": lambda p: self.cfg.update(deserialize_config(p)),
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "model": self._load_model_file,
        }
        util.from_disk(path, deserialize, exclude)
        return self

    def _load_model_file(self, path: Path) -> None:
        """Load the model's weights from ``path``; anything missing or not matching
        (the adapted encoder's deltas above all) is one error naming the file."""
        if not path.is_file():
            raise ValueError(
                f"{self.name}: the model weights {path} are missing: reinstall or retrain it"
            )
        try:
            self._load_model_bytes(path.read_bytes())
        except ValueError as error:
            # the same class (an adapted encoder's AdaptedWeightsError stays one), with
            # the file named; classes with their own constructors become ValueError
            cls = type(error) if type(error).__init__ is ValueError.__init__ else ValueError
            raise cls(f"{self.name}: {path}: {error}") from None
        except KeyError as error:
            raise ValueError(
                f"{self.name}: the model weights in {path} do not fit the config's model "
                f"(KeyError: {error})"
            ) from None

    def _load_model_bytes(self, data: bytes) -> None:
        if not self.model.has_ref("head"):
            self._setup_model()
            self.model.initialize()
        self.model.from_bytes(data)
        set_weights_dtype(self.model, self.cfg.get("weights_dtype", "float32"))


# --- scores on spans -----------------------------------------------------------------


def _write_scores(
    group: SpanGroup,
    ids: Sequence[str],
    offsets: Sequence[Sequence[Tuple[int, int]]],
    scores: Sequence[Tuple[float, List[float]]],
) -> None:
    """Keep the scores of a group's parallelisms and branches in its attrs."""
    group.attrs[SCORES_ATTR] = {
        pid: float(f"{score:.6g}") for pid, (score, _) in zip(ids, scores, strict=True)
    }
    group.attrs[BRANCH_SCORES_ATTR] = {
        pid: [[a, b, float(f"{value:.6g}")] for (a, b), value in zip(branches, values, strict=True)]
        for pid, branches, (_, values) in zip(ids, offsets, scores, strict=True)
    }


def _own_branch(span: Span) -> Optional[Tuple[SpanGroup, float]]:
    """The group that scored this branch, and the branch's score."""
    for group in span.doc.spans.values():
        branches = group.attrs.get(BRANCH_SCORES_ATTR)
        if not branches or span.id_ not in branches:
            continue
        for start, end, value in branches[span.id_]:
            if (start, end) == (span.start, span.end):
                return group, float(value)
    return None


def _span_parallelism_score(span: Span) -> Optional[float]:
    found = _own_branch(span)
    return float(found[0].attrs[SCORES_ATTR][span.id_]) if found is not None else None


def _span_branch_score(span: Span) -> Optional[float]:
    found = _own_branch(span)
    return found[1] if found is not None else None


def register_parallelism_extensions() -> None:
    """Register ``span._.parallelism_score`` (the calibrated probability that the
    branch's parallelism is exactly right; None for a span no tagger scored) and
    ``span._.parallelism_branch_score`` (that the branch itself is) (idempotent)."""
    for name, getter in (
        ("parallelism_score", _span_parallelism_score),
        ("parallelism_branch_score", _span_branch_score),
    ):
        if not Span.has_extension(name):
            Span.set_extension(name, getter=getter)


register_parallelism_extensions()
