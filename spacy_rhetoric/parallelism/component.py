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
are made and calibrated: see confidence.py; the decoder: decoding.py; the review list:
review.py; the scores on spans: scores.py; the gold it learns from: gold.py; the
synchystic/chiastic typer: types.py. A parallelism whose branches only name or
address people ("Vice President Johnson, Mr. Speaker, ..., fellow citizens") is
dropped from both (``reading.drop_name_lists``) and counted in the group's attrs
("parallelism_name_lists_dropped").
"""

from itertools import islice
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import srsly
from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.pipeline.trainable_pipe import deserialize_config
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from ..corpora.parallelisms import DEFAULT_SPANS_KEY, set_parallelisms
from .confidence import (
    DEFAULT_REVIEW_PER_1000,
    calibration_settings,
    evidence_for,
    score_parallelisms,
)
from .decoding import Decoder, TagRows, label_kinds
from .gold import gold_branches, gold_items, gold_matrix, gold_tags
from .model import set_weights_dtype, with_torch_averages
from .reading import SPELLINGS, drop_name_lists, respelled, tidy_branches
from .review import review_group
from .scores import NAME_LISTS_ATTR, register_parallelism_extensions, write_scores
from .tag_codec import decode_strata
from .tag_constraints import transition_constraints
from .tags import OUTSIDE, TagScheme
from .types import TYPER_ALIGNMENT, fit_types, type_encoder, type_parallelisms, typing_encoder

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

    def _gold_items(self, example: Example) -> List:
        """The gold parallelisms of an example (see gold.gold_items)."""
        return gold_items(example, self.cfg["spans_key"], self.cfg["n_strata"])

    def _gold_tags(self, example: Example, items: Optional[List] = None) -> List[List[str]]:
        """The gold tag rows (one per stratum) of an example; link-free structure
        tags when links are predicted pairwise. ``items``: its ``_gold_items``."""
        if items is None:
            items = self._gold_items(example)
        n_tokens = len(example.predicted)
        return gold_tags(items, n_tokens, self.scheme, self.cfg["n_strata"], self.pairwise)

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
        self.model.attrs["label_kinds"] = label_kinds(self.labels)

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
        encoder, layer = type_encoder(self.model, self.cfg.get("type_layer"))
        self.cfg["typer"] = TYPER_ALIGNMENT
        self.cfg["type_layer"] = None if encoder is None else encoder.layers[layer]
        self.cfg["type_weights"] = fit_types(get_examples(), self.cfg["spans_key"], encoder, layer)

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
        window = self.cfg.get("window", DEFAULT_WINDOW)
        overlap = self.cfg.get("window_overlap", DEFAULT_WINDOW_OVERLAP)
        return type_parallelisms(self.model, self.cfg, doc, parallelisms, window, overlap)

    def predict(self, docs: Iterable[Doc]) -> List[TagRows]:
        """Predict the tag rows (one per stratum) of each doc, with the evidence of
        each decoded branch and, with a ``candidates_key``, the review decode's finds.

        docs (Iterable[Doc]): the docs.
        RETURNS (List[TagRows]): per doc, per stratum, one concrete tag per token
            (with pairwise links, the linker's choices are joined into the tags).
        """
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            return [TagRows([[] for _ in range(self.cfg["n_strata"])]) for _ in docs]
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
        encoder, index = typing_encoder(self.model, self.cfg)
        if encoder is not None:
            encoder.hold_layer(index)
        return self._decoder()(docs, options)

    def _decoder(self) -> Decoder:
        return Decoder(
            self.model,
            self.labels,
            self.scheme,
            n_strata=self.cfg["n_strata"],
            pairwise=self.pairwise,
            spelling=self.cfg.get("spelling", ""),
            window=self.cfg.get("window", DEFAULT_WINDOW),
            overlap=self.cfg.get("window_overlap", DEFAULT_WINDOW_OVERLAP),
            batch_tokens=self.cfg.get("batch_tokens", DEFAULT_BATCH_TOKENS),
        )

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
            write_scores(doc.spans[key], ids, [o for o, _ in decoded], scores)
            if self.candidates_key:
                found = [(tuple(o), st, e) for (o, st), e in zip(decoded, evidence, strict=True)]
                doc.spans[self.candidates_key] = review_group(
                    doc,
                    self.candidates_key,
                    tags.review,
                    found,
                    calibration,
                    min_score,
                    min_word_share=self.min_word_share,
                    per_1000=self.review_per_1000,
                    type_parallelisms=self.type_parallelisms,
                )
        encoder, _ = typing_encoder(self.model, self.cfg)
        if encoder is not None:
            encoder.hold_layer(None)  # the batch is typed: its states are not needed

    def _gold(self, examples: Sequence[Example]) -> Dict[str, Any]:
        items = [self._gold_items(eg) for eg in examples]
        n_strata = self.cfg["n_strata"]
        gold: Dict[str, Any] = {
            "tags": gold_matrix(
                examples, items, self.labels, self.scheme, n_strata, self.pairwise, self.name
            )
        }
        if self.pairwise:
            per_example = [gold_branches(example_items, n_strata) for example_items in items]
            gold["branches"] = [[branches[s] for branches in per_example] for s in range(n_strata)]
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


register_parallelism_extensions()
