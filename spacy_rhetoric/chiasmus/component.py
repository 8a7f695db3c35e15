"""The ``chiasmus_finder`` pipeline component: a candidate suggester and a trained scorer.

The suggester (``spacy-rhetoric.chiasmus_suggester.v3`` by default; see ``suggester``)
proposes the crosswise inversions A B B' A' in a window (see ``candidates``); the
scorer model (``spacy-rhetoric.ChiasmusScorer.v1``, or ``.v2`` whose E features come
from a frozen multilingual encoder) gives each a probability. The component writes:

* ``doc.spans[candidates_key]`` (default "chiasmus_candidates"): the scored candidates,
  best first, each a Span A..A': the chiasmi (those scoring at least ``threshold``)
  followed by the review list, the next best at most ``review_per_1000`` per 1,000
  tokens of the doc (null: every candidate, as evaluation needs; ``max_candidates`` > 0
  caps the group too). Running text has 16-18 candidates per token: kept as spans they
  would take gigabytes, so a pipeline for reading keeps only what a reader reviews;
* ``doc.spans[spans_key]`` (default "chiasmus"): the candidates scoring at least
  ``threshold``;
* ``doc.spans[support_key]`` (default "chiasmus_support"): for each of those, the
  single-token spans labelled "A", "B", ("C", "C'",) "B'", "A'".

One passage gives one entry: a candidate that is one passage with a better one is a
*variant* of it, listed under it in the groups' attrs and not as a chiasmus or a review
entry of its own (see passages.py; with ``review_per_1000`` null the candidates group
still holds every candidate).

Spans of one candidate share their ``span_id`` ("c<rank>", rank 0 = best). Their label
is "antimetabole" when every pair of the candidate repeats its lemma, else "chiasmus".
Scores and positions are kept in the groups' ``attrs`` and read through
``span._.chiasmus_score``, ``span._.chiasmus_support`` and ``span._.is_antimetabole``
(see spans.py, which also reads gold data: the same layout, with the annotation code as
label; ``positive_labels`` says which codes are chiasmi, ``ignored_labels`` which are
left out of training and evaluation).
"""

from itertools import islice
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer, set_dropout_rate

from .calibration import apply_calibration
from .candidates import DEFAULT_WINDOW, Candidates, empty_candidates, roles
from .characters import CHARACTER_LANGUAGES, best_per_words, character_view
from .features import check_doc
from .passages import findings_bound, kept_candidates, passage_heads, review_size
from .spans import ABOVE_ATTR, gold_candidates, group_attrs, register_chiasmus_extensions
from .suggester import DEFAULT_ALLOWED_POS, DEFAULT_FORM_POS

DEFAULT_MODEL_CONFIG = """
[model]
@architectures = "spacy-rhetoric.ChiasmusRules.v2"
calibration = "auto"
bias = null
weights = null
"""


DEFAULT_MODEL = util.load_config_from_str(DEFAULT_MODEL_CONFIG)["model"]
DEFAULT_POSITIVE_LABELS = ["a", "c", "fa", "fc", "True"]
SCORE_KEYS = ["chiasmus_ap", "chiasmus_p", "chiasmus_r", "chiasmus_f"]
TRAINING_CANDIDATES = ("annotated", "suggested")
CHIASMUS = "chiasmus"
# candidates kept for review below the chiasmi, per 1,000 tokens
DEFAULT_REVIEW_PER_1000 = 5.0
# the finder's default candidate search (the calibration of the rules runs the same)
DEFAULT_SUGGESTER = {
    "@misc": "spacy-rhetoric.chiasmus_suggester.v3",
    "window": DEFAULT_WINDOW,
    "depth": 2,
    "allowed_pos": DEFAULT_ALLOWED_POS,
    "denied_pos": None,
    "respect_sentences": False,
    "antimetabole_only": False,
    "lexical_attr": "LEMMA",
    "lemma_pairs": True,
    "form_pos": DEFAULT_FORM_POS,
    "distinct": True,
    "stem_pairs": True,
}
ANTIMETABOLE = "antimetabole"
# what the candidate search runs on: "auto" is characters for Chinese, tokens otherwise
UNITS = ("auto", "tokens", "characters")


@Language.factory(
    "chiasmus_finder",
    assigns=["doc.spans"],
    requires=["token.pos"],
    default_config={
        "model": DEFAULT_MODEL,
        "suggester": DEFAULT_SUGGESTER,
        "spans_key": "chiasmus",
        "support_key": "chiasmus_support",
        "candidates_key": "chiasmus_candidates",
        "positive_labels": DEFAULT_POSITIVE_LABELS,
        "ignored_labels": [],
        "threshold": 0.5,
        "max_candidates": 0,
        "review_per_1000": DEFAULT_REVIEW_PER_1000,
        "training_candidates": "annotated",
        "evaluate_annotated_only": True,
        "units": "auto",
        "scorer": {"@scorers": "spacy-rhetoric.chiasmus_scorer.v1"},
    },
    default_score_weights={key: (1.0 if key == "chiasmus_ap" else 0.0) for key in SCORE_KEYS},
)
def make_chiasmus_finder(
    nlp: Language,
    name: str,
    model: Model,
    suggester: Callable[[Iterable[Doc]], List[Candidates]],
    spans_key: str,
    support_key: str,
    candidates_key: Optional[str],
    positive_labels: List[str],
    ignored_labels: List[str],
    threshold: float,
    max_candidates: int,
    review_per_1000: Optional[float],
    training_candidates: str,
    evaluate_annotated_only: bool,
    units: str,
    scorer: Optional[Callable],
) -> "ChiasmusFinder":
    """Create a chiasmus finder.

    model (Model): the scorer (see spacy-rhetoric.ChiasmusScorer.v1 and .v2).
    suggester (Callable): proposes candidates (see spacy-rhetoric.chiasmus_suggester.v1).
    spans_key (str): the group for candidates scoring at least ``threshold``.
    support_key (str): the group for their supporting tokens.
    candidates_key (Optional[str]): the group for all scored candidates, best first
        (None: not written).
    positive_labels (List[str]): gold labels that mark a chiasmus (German: a, c, fa, fc;
        English: True).
    ignored_labels (List[str]): gold labels whose candidates are left out of training
        and evaluation (e.g. ["fa", "fc"] for the "fp removed" protocol).
    threshold (float): the score from which a candidate is a chiasmus.
    max_candidates (int): keep at most this many scored candidates per doc (0: no cap).
    review_per_1000 (Optional[float]): below the chiasmi, keep the next best candidates
        for review, at most this many per 1,000 tokens of the doc (rounded up); None:
        keep every candidate (for evaluation; unbounded memory on long repetitive docs).
    training_candidates (str): "annotated": train on the gold annotated candidates (by
        their labels); "suggested": on the suggester's candidates plus the annotated
        ones, every candidate not annotated with a positive label counting as negative.
    evaluate_annotated_only (bool): rank only candidates that are annotated in the gold
        data when scoring (the protocol of candidate-annotated datasets).
    units (str): what the candidate search runs on: "tokens", "characters" (each Han
        word split into its characters; spans stay on the words that hold them, see
        ``spacy_rhetoric.chiasmus.characters``) or "auto": characters for Chinese docs
        (Chinese antimetabole repeats characters inside the segmenter's words), tokens
        otherwise.
    scorer (Optional[Callable]): the scoring method.
    """
    apply_calibration(model, nlp.lang)  # the default rules: calibrated per language
    return ChiasmusFinder(
        nlp.vocab,
        model,
        suggester,
        name,
        spans_key=spans_key,
        support_key=support_key,
        candidates_key=candidates_key,
        positive_labels=positive_labels,
        ignored_labels=ignored_labels,
        threshold=threshold,
        max_candidates=max_candidates,
        review_per_1000=review_per_1000,
        training_candidates=training_candidates,
        evaluate_annotated_only=evaluate_annotated_only,
        units=units,
        scorer=scorer,
    )


class ChiasmusFinder(TrainablePipe):
    """Find chiasmi: suggest A B B' A' candidates and score them with a trained model."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        suggester: Callable[[Iterable[Doc]], List[Candidates]],
        name: str = "chiasmus_finder",
        *,
        spans_key: str = "chiasmus",
        support_key: str = "chiasmus_support",
        candidates_key: Optional[str] = "chiasmus_candidates",
        positive_labels: Sequence[str] = tuple(DEFAULT_POSITIVE_LABELS),
        ignored_labels: Sequence[str] = tuple(),
        threshold: float = 0.5,
        max_candidates: int = 0,
        review_per_1000: Optional[float] = DEFAULT_REVIEW_PER_1000,
        training_candidates: str = "annotated",
        evaluate_annotated_only: bool = True,
        units: str = "auto",
        scorer: Optional[Callable] = None,
    ) -> None:
        if units not in UNITS:
            raise ValueError(f"{name}: units must be one of {UNITS}, got {units!r}")
        if training_candidates not in TRAINING_CANDIDATES:
            raise ValueError(
                f"{name}: training_candidates must be one of {TRAINING_CANDIDATES}, "
                f"got {training_candidates!r}"
            )
        overlap = set(positive_labels) & set(ignored_labels)
        if overlap:
            raise ValueError(f"{name}: labels both positive and ignored: {sorted(overlap)}")
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"{name}: threshold must be in [0, 1], got {threshold}")
        if review_per_1000 is not None and not review_per_1000 >= 0:
            raise ValueError(f"{name}: review_per_1000 must be >= 0 or null, got {review_per_1000}")
        self.vocab = vocab
        self.model = model
        self.suggester = suggester
        self.name = name
        self.scorer = scorer
        self.cfg: Dict[str, Any] = {
            "labels": [],
            "spans_key": spans_key,
            "support_key": support_key,
            "candidates_key": candidates_key,
            "positive_labels": list(positive_labels),
            "ignored_labels": list(ignored_labels),
            "threshold": threshold,
            "max_candidates": max_candidates,
            "review_per_1000": review_per_1000,
            "training_candidates": training_candidates,
            "evaluate_annotated_only": evaluate_annotated_only,
            "units": units,
        }

    @property
    def labels(self) -> Tuple[str, ...]:
        """RETURNS (Tuple[str, ...]): the annotation labels seen in the training data."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    def add_label(self, label: str) -> int:
        if label in self.cfg["labels"]:
            return 0
        self.cfg["labels"].append(label)
        return 1

    @property
    def depth(self) -> int:
        return getattr(self.suggester, "depth", 2)

    def _lexical_attr(self) -> str:
        return self.model.attrs.get("lexical_attr", "LEMMA")

    def _check(self, doc: Doc) -> None:
        if self.model.attrs.get("needs_pos", True):
            check_doc(doc, self._lexical_attr(), self.name)

    # --- gold ------------------------------------------------------------------------

    def _gold(self, example: Example) -> Tuple[List[Tuple[int, ...]], List[bool]]:
        """The annotated candidates of an example on the predicted doc's tokens (without
        ignored labels and candidates that do not align) and whether each is positive."""
        positive = set(self.cfg["positive_labels"])
        ignored = set(self.cfg["ignored_labels"])
        predicted, reference = example.predicted, example.reference
        same_tokens = len(predicted) == len(reference) and all(
            a.text == b.text for a, b in zip(predicted, reference)
        )
        found, labels = [], []
        for positions, label in gold_candidates(
            reference, self.cfg["spans_key"], self.cfg["support_key"]
        ):
            if label in ignored or len(positions) != 2 * self.depth:
                continue
            if not same_tokens:
                spans = [reference[i : i + 1] for i in positions]
                aligned = example.get_aligned_spans_y2x(spans, allow_overlap=True)
                if len(aligned) != len(spans) or any(len(s) != 1 for s in aligned):
                    continue
                positions = tuple(s.start for s in aligned)
                if any(p >= q for p, q in zip(positions, positions[1:])):
                    continue
            found.append(tuple(positions))
            labels.append(label in positive)
        return found, labels

    def _ignored(self, example: Example) -> set:
        ignored = set(self.cfg["ignored_labels"])
        if not ignored:
            return set()
        return {
            positions
            for positions, label in gold_candidates(
                example.reference, self.cfg["spans_key"], self.cfg["support_key"]
            )
            if label in ignored
        }

    def _training_candidates(self, example: Example) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """RETURNS: candidates [k, 2 * depth] and targets [k] of one example."""
        annotated, is_positive = self._gold(example)
        width = 2 * self.depth
        if self.cfg["training_candidates"] == "annotated":
            cands = numpy.asarray(annotated, dtype=numpy.int64).reshape(-1, width)
            return cands, numpy.asarray(is_positive, dtype="float32")
        positives = {c for c, p in zip(annotated, is_positive) if p}
        ignored = self._ignored(example)
        suggested = [tuple(map(int, row)) for row in self._suggest([example.predicted])[0].indices]
        union = sorted((set(suggested) | set(annotated)) - ignored)
        cands = numpy.asarray(union, dtype=numpy.int64).reshape(-1, width)
        return cands, numpy.asarray([c in positives for c in union], dtype="float32")

    # --- prediction ------------------------------------------------------------------

    def _suggest(self, docs: Sequence[Doc]) -> List[Candidates]:
        for doc in docs:
            self._check(doc)
        suggested = self.suggester(docs)
        return [s if len(doc) else empty_candidates(self.depth) for doc, s in zip(docs, suggested)]

    def score_candidates(
        self, docs: Sequence[Doc], candidates: Sequence[numpy.ndarray], batch_size: int = 1 << 16
    ) -> List[numpy.ndarray]:
        """Score given candidates (e.g. annotated ones) with the model.

        docs (Sequence[Doc]): the docs.
        candidates (Sequence[numpy.ndarray]): per doc, [k, 2 * depth] token positions.
        batch_size (int): candidates per model call for long docs.
        RETURNS (List[numpy.ndarray]): per doc, [k] scores.
        """
        docs = list(docs)
        for doc in docs:
            self._check(doc)
        cands = [
            numpy.asarray(c, dtype=numpy.int64).reshape(-1, 2 * self.depth) for c in candidates
        ]
        scores = [numpy.zeros(len(c), dtype="float32") for c in cands]
        small = [i for i, c in enumerate(cands) if 0 < len(c) <= batch_size]
        if small:
            output = self.model.ops.to_numpy(
                self.model.predict(([docs[i] for i in small], [cands[i] for i in small]))
            ).reshape(-1)
            offsets = numpy.cumsum([0] + [len(cands[i]) for i in small])
            for j, i in enumerate(small):
                scores[i] = output[offsets[j] : offsets[j + 1]]
        for i, c in enumerate(cands):
            if len(c) > batch_size:
                for start in range(0, len(c), batch_size):
                    chunk = c[start : start + batch_size]
                    output = self.model.predict(([docs[i]], [chunk]))
                    scores[i][start : start + len(chunk)] = self.model.ops.to_numpy(output).reshape(
                        -1
                    )
        return scores

    def on_characters(self, doc: Doc) -> bool:
        """Whether the doc's candidates are searched on its characters (``units``; a
        suggester without ``suggest_forms`` searches tokens)."""
        units = self.cfg.get("units", "auto")
        if units == "tokens" or not hasattr(self.suggester, "suggest_forms"):
            return False
        return units == "characters" or doc.lang_ in CHARACTER_LANGUAGES

    def predict(self, docs: Iterable[Doc]) -> Tuple[List[Candidates], List[numpy.ndarray]]:
        """Suggest and score the candidates of docs (on their tokens, or on their
        characters: see ``units``).

        docs (Iterable[Doc]): the docs.
        RETURNS (Tuple[List[Candidates], List[numpy.ndarray]]): per doc, the candidates
            (token positions; with the characters' offsets where they were found on
            characters) and their scores.
        """
        docs = list(docs)
        candidates: List[Candidates] = [empty_candidates(self.depth)] * len(docs)
        scores = [numpy.zeros(0, dtype="float32")] * len(docs)
        on_tokens = [i for i, doc in enumerate(docs) if not self.on_characters(doc)]
        if on_tokens:
            found = self._suggest([docs[i] for i in on_tokens])
            scored = self.score_candidates([docs[i] for i in on_tokens], [c.indices for c in found])
            for i, c, s in zip(on_tokens, found, scored):
                candidates[i], scores[i] = c, s
        tokens_done = set(on_tokens)
        for i, doc in enumerate(docs):
            if len(doc) and i not in tokens_done:
                candidates[i], scores[i] = self._predict_characters(doc)
        return candidates, scores

    def _predict_characters(self, doc: Doc) -> Tuple[Candidates, numpy.ndarray]:
        """The candidates of a doc found and scored on its character view, on its words
        (the best of the candidates that fall on the same words)."""
        self._check(doc)
        view = character_view(doc)
        found = self.suggester.suggest_forms(view.doc)
        if len(found.indices) == 0:
            return empty_candidates(self.depth), numpy.zeros(0, dtype="float32")
        scores = self.score_candidates([view.doc], [found.indices])[0]
        words = view.token_of[found.indices]
        keep = best_per_words(words, scores)
        characters = view.offsets[found.indices[keep]]
        return Candidates(words[keep], found.antimetabole[keep], characters), scores[keep]

    def set_annotations(
        self, docs: Iterable[Doc], predictions: Tuple[List[Candidates], List[numpy.ndarray]]
    ) -> None:
        """Write the candidates, chiasmi and supporting tokens to doc.spans: one
        candidate per passage, its variants in the groups' attrs (``passage_heads``)."""
        role_names = roles(self.depth)
        cfg = self.cfg
        threshold, review_per_1000 = cfg["threshold"], cfg.get("review_per_1000")
        for doc, candidates, scores in zip(docs, *predictions):
            order = numpy.argsort(-scores, kind="stable")
            ranked = scores[order]
            indices = candidates.indices[order]
            flags = candidates.antimetabole[order]
            characters = None if candidates.characters is None else candidates.characters[order]
            n_above = int((ranked >= threshold).sum())
            review = 0 if review_per_1000 is None else review_size(len(doc), review_per_1000)
            heads, variants = passage_heads(indices, n_above, review, findings_bound(len(doc)))
            kept, n_findings = kept_candidates(ranked[heads], len(doc), threshold, review_per_1000)
            # null review_per_1000 (evaluation): every candidate ranked, none merged away
            listed = numpy.arange(len(order)) if review_per_1000 is None else heads[:kept]
            if cfg["max_candidates"] > 0:
                listed = listed[: cfg["max_candidates"]]
            chosen = heads[:n_findings]
            chosen = chosen[numpy.isin(chosen, listed)]  # the kept chiasmi, best first
            ids = {rank: f"c{rank}" for rank in listed.tolist()}
            spans = {
                rank: Span(
                    doc,
                    int(indices[rank][0]),
                    int(indices[rank][-1]) + 1,
                    label=ANTIMETABOLE if flags[rank] else CHIASMUS,
                    span_id=ids[rank],
                )
                for rank in listed.tolist()
            }
            support = [
                Span(doc, int(i), int(i) + 1, label=role, span_id=ids[rank])
                for rank in chosen.tolist()
                for role, i in zip(role_names, indices[rank])
            ]
            found = (ranked, indices, characters, ids, cfg["support_key"])
            attrs = group_attrs(chosen, *found, variants)
            attrs[ABOVE_ATTR] = int((heads < n_above).sum())  # passages, kept or not
            doc.spans[cfg["spans_key"]] = SpanGroup(
                doc,
                name=cfg["spans_key"],
                attrs=attrs,
                spans=[spans[r] for r in chosen.tolist()],
            )
            doc.spans[cfg["support_key"]] = SpanGroup(doc, name=cfg["support_key"], spans=support)
            if cfg["candidates_key"]:
                doc.spans[cfg["candidates_key"]] = SpanGroup(
                    doc,
                    name=cfg["candidates_key"],
                    attrs=group_attrs(
                        listed, *found, None if review_per_1000 is None else variants
                    ),
                    spans=[spans[r] for r in listed.tolist()],
                )

    # --- training --------------------------------------------------------------------

    def _batch(
        self, examples: Sequence[Example]
    ) -> Tuple[List[Doc], List[numpy.ndarray], numpy.ndarray]:
        docs, cands, targets = [], [], []
        for eg in examples:
            if len(eg.predicted) == 0:
                continue
            self._check(eg.predicted)
            c, t = self._training_candidates(eg)
            if len(c):
                docs.append(eg.predicted)
                cands.append(c)
                targets.append(t)
        truth = numpy.concatenate(targets) if targets else numpy.zeros(0, dtype="float32")
        return docs, cands, truth

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch of examples: binary cross-entropy of the training
        candidates' scores (see ``training_candidates``)."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        validate_examples(examples, "ChiasmusFinder.update")
        docs, cands, truth = self._batch(list(examples))
        if not docs:
            return losses
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update((docs, cands))
        loss, d_scores = self._loss(scores, truth)
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def _loss(self, scores: Any, truth: numpy.ndarray) -> Tuple[float, Any]:
        probs = self.model.ops.to_numpy(scores).reshape(-1)
        clipped = numpy.clip(probs, 1e-7, 1 - 1e-7)
        loss = -(truth * numpy.log(clipped) + (1 - truth) * numpy.log(1 - clipped)).sum()
        d_scores = (probs - truth).reshape(-1, 1).astype("float32")
        return float(loss), self.model.ops.asarray2f(d_scores)

    def get_loss(self, examples: Iterable[Example], scores: Any) -> Tuple[float, Any]:
        """The binary cross-entropy of the training candidates' scores (which the model
        computes here; ``scores`` is not used, as predict() scores other candidates)."""
        docs, cands, truth = self._batch(list(examples))
        if not docs:
            return 0.0, None
        return self._loss(self.model.predict((docs, cands)), truth)

    def _annotate_upstream(self, examples: List[Example], nlp: Optional[Language]) -> List[Example]:
        """Run the components before this one on the sample's predicted docs that lack
        POS: in initialize() the annotating components of training have not run yet."""
        if nlp is None:
            return examples
        upstream = []
        for _, proc in nlp.pipeline:
            if proc is self:
                break
            upstream.append(proc)
        if not upstream:
            return examples
        result = []
        for eg in examples:
            if len(eg.predicted) and not eg.predicted.has_annotation("POS"):
                doc = eg.predicted.copy()
                for proc in upstream:
                    doc = proc(doc)
                eg = Example(doc, eg.reference)
            result.append(eg)
        return result

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
        n_samples: int = 500,
    ) -> None:
        """Initialize the component: take the annotation labels from the data (unless
        given) and fit the model's feature standardisation on the training candidates
        of up to ``n_samples`` examples (annotated by the components before this one
        where their predicted docs have no POS yet).

        get_examples (Callable[[], Iterable[Example]]): function returning the training examples.
        nlp (Language): the current nlp object.
        labels (Optional[Sequence[str]]): the annotation labels.
        n_samples (int): examples used to fit the standardisation.
        """
        validate_get_examples(get_examples, "ChiasmusFinder.initialize")
        if labels is None:
            found = set()
            for example in get_examples():
                found.update(
                    label
                    for _, label in gold_candidates(
                        example.reference, self.cfg["spans_key"], self.cfg["support_key"]
                    )
                )
            labels = found
        labels = sorted(set(labels))
        if not labels and self.model.attrs.get("trainable", True):
            raise ValueError(
                f"{self.name}: no labels: the examples passed to initialize() contain no "
                f"annotated candidates in doc.spans['{self.cfg['spans_key']}'] with supporting "
                f"tokens in doc.spans['{self.cfg['support_key']}']. Train on annotated data "
                "(e.g. python -m spacy_rhetoric corpus convert chiasmus-de ...) or pass labels."
            )
        self.cfg["labels"] = labels
        sample = self._annotate_upstream(list(islice(get_examples(), n_samples)), nlp)
        # docs still without POS (no upstream tagger) are left out of the standardisation
        sample = [eg for eg in sample if eg.predicted.has_annotation("POS")]
        docs, cands, _ = self._batch(sample)
        if docs:
            self.model.initialize(X=(docs, cands))
        else:
            self.model.initialize()


register_chiasmus_extensions()
