"""The ``figure_finder`` pipeline component: rules propose, a logistic scorer ranks.

One segmentation into cola (``segment``) feeds one candidate rule per family
(``repetition``, ``conjunction``, ``sound``, and ``thought`` for antithesis and the
rhetorical question); ``features`` describes each candidate and
``model`` scores it per figure. The component writes

* ``doc.spans[spans_key]`` (default "figures"): one span per instance scoring at least
  its threshold, from its first member's start to its last member's end, labelled
  with the figure ("anaphora", ...), in text order (at most ``max_candidates``: the
  best, where a degenerate text has more);
* ``doc.spans[candidates_key]`` (default "figure_candidates"): the review list, the
  best candidates below the threshold, best first, at most ``review_per_1000`` per
  1,000 tokens (rounded up).

Scores, support and members live in the groups' ``attrs`` (by ``span.id_``) and are read
through ``span._.figure_score`` (float), ``span._.figure_support`` (the repeated or
linking words, single- or multi-token spans) and ``span._.figure_members`` (the cola or
members). The figures group's attrs also hold ``figure_counts`` (per label),
``figure_found`` (every candidate the rules proposed) and ``figure_dropped`` (figures
above their threshold left out by ``max_candidates``). Both groups' attrs hold
``figure_variants``: a finding of one label sharing at least ``VARIANT_SHARE`` (80 %) of
the smaller span's tokens with a better one is its variant, listed there (by span_id,
``[start, end, score]`` each) and not as a figure or review entry of its own.

It is a plain ``Pipe`` (the scorer is fitted outside the pipeline). It reads POS,
lemmas and the parse where the doc has them, and works on a blank pipeline with reduced
features: without POS every word that is not a stop word is a content word; without
lemmas polyptoton compares stems; without a parse cola end at punctuation only.
"""

import math
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy
import srsly
from spacy import util
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.vocab import Vocab

from . import conjunction, repetition, sound, thought
from .candidates import Candidate
from .features import candidate_features
from .model import FigureScorer, load_scorer
from .segment import CLAUSES, segment
from .words import colon_words, doc_words

FIGURES = repetition.FIGURES + conjunction.FIGURES + sound.FIGURES + thought.FIGURES
# not run for these languages (the figure needs inflection or spelling; the figures of
# thought have cue lists and a calibration for Latin, English and German only)
NOT_FOR = {
    "polyptoton": ("zh",),
    "alliteration": ("zh",),
    "antithesis": ("zh",),
    "rhetorical_question": ("zh",),
}
DEFAULT_REVIEW_PER_1000 = 5.0
DEFAULT_MAX_CANDIDATES = 1000
SCORES_ATTR = "figure_scores"
SUPPORT_ATTR = "figure_support"
MEMBERS_ATTR = "figure_members"
BOUNDS_ATTR = "figure_bounds"
N_MEMBERS_ATTR = "figure_n_members"


@Language.factory(
    "figure_finder",
    assigns=["doc.spans"],
    requires=[],
    default_config={
        "figures": list(FIGURES),
        "threshold": None,
        "review_per_1000": DEFAULT_REVIEW_PER_1000,
        "max_candidates": DEFAULT_MAX_CANDIDATES,
        "spans_key": "figures",
        "candidates_key": "figure_candidates",
        "scorer_path": None,
        "clauses": "auto",
    },
)
def make_figure_finder(
    nlp: Language,
    name: str,
    figures: List[str],
    threshold: Optional[float],
    review_per_1000: float,
    max_candidates: int,
    spans_key: str = "figures",
    candidates_key: str = "figure_candidates",
    scorer_path: Optional[str] = None,
    clauses: str = "auto",
) -> "FigureFinder":
    """Create a figure finder.

    figures (List[str]): the figures to report (default: all).
    threshold (Optional[float]): the probability from which a candidate is reported;
        null: each figure's own threshold from the scorer (0.5 under the rule prior).
    review_per_1000 (float): below the threshold, keep the best candidates for review,
        at most this many per 1,000 tokens (rounded up).
    max_candidates (int): keep at most this many figures per doc, the best (0: no cap);
        the group's attrs count what was left out.
    spans_key (str): the group of the figures.
    candidates_key (str): the group of the review list (empty: not written).
    scorer_path (Optional[str]): a scorer.json with weights per figure; null: the
        packaged scorer (fitted and calibrated per language on tagged text; a doc
        without POS gets the hand-weighted rule prior), else the rule prior.
    clauses (str): "auto": cola also split before a clause's conjunction where the doc
        has a parse; "parse": the same, and a doc without a parse is an error; "punct":
        punctuation, line breaks and sentences only.
    """
    return FigureFinder(
        nlp.vocab,
        name,
        figures=figures,
        threshold=threshold,
        review_per_1000=review_per_1000,
        max_candidates=max_candidates,
        spans_key=spans_key,
        candidates_key=candidates_key,
        scorer_path=scorer_path,
        clauses=clauses,
    )


def review_size(n_tokens: int, review_per_1000: float) -> int:
    """RETURNS (int): the length of a doc's review list."""
    return math.ceil(review_per_1000 * n_tokens / 1000 - 1e-9)


class FigureFinder(Pipe):
    """Find the figures of repetition, conjunction, sound and thought."""

    def __init__(
        self,
        vocab: Vocab,
        name: str = "figure_finder",
        *,
        figures: Sequence[str] = FIGURES,
        threshold: Optional[float] = None,
        review_per_1000: float = DEFAULT_REVIEW_PER_1000,
        max_candidates: int = DEFAULT_MAX_CANDIDATES,
        spans_key: str = "figures",
        candidates_key: str = "figure_candidates",
        scorer_path: Optional[str] = None,
        clauses: str = "auto",
        scorer: Optional[FigureScorer] = None,
    ) -> None:
        unknown = [f for f in figures if f not in FIGURES]
        if unknown:
            raise ValueError(f"{name}: unknown figures {unknown}; known: {list(FIGURES)}")
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ValueError(f"{name}: threshold must be in [0, 1] or null, got {threshold}")
        if not review_per_1000 >= 0:
            raise ValueError(f"{name}: review_per_1000 must be >= 0, got {review_per_1000}")
        if max_candidates < 0:
            raise ValueError(f"{name}: max_candidates must be >= 0, got {max_candidates}")
        if clauses not in CLAUSES:
            raise ValueError(f"{name}: clauses must be one of {CLAUSES}, got {clauses!r}")
        self.vocab = vocab
        self.name = name
        self.scorer_model = scorer if scorer is not None else load_scorer(scorer_path)
        # the packaged scorer was fitted and calibrated on tagged text: an untagged doc
        # (a blank pipeline's) gets the rule prior
        self.untagged_model = (
            FigureScorer.prior()
            if scorer is None and scorer_path is None and self.scorer_model.source != "prior"
            else self.scorer_model
        )
        self.cfg: Dict[str, Any] = {
            "figures": list(figures),
            "threshold": threshold,
            "review_per_1000": review_per_1000,
            "max_candidates": max_candidates,
            "spans_key": spans_key,
            "candidates_key": candidates_key,
            "scorer_path": scorer_path,
            "clauses": clauses,
        }

    # --- prediction ------------------------------------------------------------------

    def find(self, doc: Doc) -> Tuple[List[Candidate], numpy.ndarray, numpy.ndarray]:
        """Propose and score the candidates of one doc.

        doc (Doc): the doc.
        RETURNS (Tuple[List[Candidate], numpy.ndarray, numpy.ndarray]): the candidates,
            their features [k, d] and probabilities [k].
        """
        wanted = {f for f in self.cfg["figures"] if doc.lang_ not in NOT_FOR.get(f, ())}
        if not len(doc) or not wanted:
            return [], numpy.zeros((0, 0), dtype="float32"), numpy.zeros(0, dtype="float32")
        seg = segment(doc, self.cfg["clauses"])
        words = doc_words(doc)
        cw = colon_words(words.is_word, seg.colon_of, len(seg))
        found: List[Candidate] = []
        if not wanted.isdisjoint(repetition.FIGURES):
            found += repetition.repetition_candidates(doc, words, seg, cw, wanted)
        if not wanted.isdisjoint(conjunction.FIGURES):
            found += conjunction.conjunction_candidates(doc, words, seg, cw, wanted)
        if "alliteration" in wanted:
            found += sound.alliteration_candidates(words, seg, cw, doc)
        shapes = [""] * len(found)
        if not wanted.isdisjoint(thought.FIGURES):
            extra, extra_shapes = thought.thought_candidates(doc, words, seg, cw, wanted)
            found += extra
            shapes += extra_shapes
        X = candidate_features(doc, words, seg, found)
        thought.thought_features(X, doc, words, seg, found, shapes)
        scores = self.scorer_for(doc).score([c.figure for c in found], X, doc.lang_)
        return found, X, scores

    def scorer_for(self, doc: Doc) -> FigureScorer:
        """RETURNS (FigureScorer): the scorer of a doc: the packaged (calibrated) one
        where the doc has POS, else the rule prior; a scorer given by path or object
        always."""
        return self.scorer_model if doc.has_annotation("POS") else self.untagged_model

    def _thresholds(self, candidates: Sequence[Candidate], doc: Doc) -> numpy.ndarray:
        if self.cfg["threshold"] is not None:
            return numpy.full(len(candidates), self.cfg["threshold"], dtype="float32")
        model, lang = self.scorer_for(doc), doc.lang_
        by_figure = {f: model.threshold(f, lang) for f in {c.figure for c in candidates}}
        return numpy.asarray([by_figure[c.figure] for c in candidates], dtype="float32")

    def predict(self, docs: Iterable[Doc]) -> List[Tuple[List[Candidate], numpy.ndarray]]:
        """docs (Iterable[Doc]): the docs.
        RETURNS (List[Tuple[List[Candidate], numpy.ndarray]]): per doc, the candidates
            and their probabilities.
        """
        result = []
        for doc in docs:
            candidates, _, scores = self.find(doc)
            result.append((candidates, scores))
        return result

    def set_annotations(
        self, docs: Iterable[Doc], predictions: List[Tuple[List[Candidate], numpy.ndarray]]
    ) -> None:
        """Write the figures and the review list to doc.spans (see the module docstring)."""
        cfg = self.cfg
        for doc, (candidates, scores) in zip(docs, predictions):
            above = scores >= self._thresholds(candidates, doc)
            order = numpy.argsort(-scores, kind="stable")
            # one finding per passage: above the threshold first, then the review list,
            # whose variants of a reported figure are dropped (see merge_variants)
            ranked = [int(i) for i in order if above[i]]
            ranked += [int(i) for i in order if not above[i]]
            n_above = int(above.sum())
            heads, variants = merge_variants(
                [(c.figure, c.start, c.end) for c in candidates],
                ranked,
                n_above,
                review_size(len(doc), cfg["review_per_1000"]),
            )
            chosen = [i for i in heads if above[i]]
            dropped = 0
            if cfg["max_candidates"] and len(chosen) > cfg["max_candidates"]:
                dropped = len(chosen) - cfg["max_candidates"]
                chosen = chosen[: cfg["max_candidates"]]
            chosen.sort(
                key=lambda i: (candidates[i].start, candidates[i].end, candidates[i].figure)
            )
            review = [i for i in heads if not above[i]]
            counts: Dict[str, int] = {}
            for i in chosen:
                counts[candidates[i].figure] = counts.get(candidates[i].figure, 0) + 1
            attrs = {
                "figure_counts": counts,
                "figure_found": len(candidates),
                "figure_dropped": dropped,
                "figure_scorer": self.scorer_for(doc).source,
            }
            doc.spans[cfg["spans_key"]] = self._group(
                doc, cfg["spans_key"], "f", [candidates[i] for i in chosen], scores[chosen], attrs
            )
            doc.spans[cfg["spans_key"]].attrs[VARIANTS_ATTR] = variant_attrs(
                "f", chosen, variants, candidates, scores
            )
            if cfg["candidates_key"]:
                doc.spans[cfg["candidates_key"]] = self._group(
                    doc,
                    cfg["candidates_key"],
                    "r",
                    [candidates[i] for i in review],
                    scores[review],
                    {VARIANTS_ATTR: variant_attrs("r", review, variants, candidates, scores)},
                )

    @staticmethod
    def _group(
        doc: Doc,
        name: str,
        prefix: str,
        candidates: Sequence[Candidate],
        scores: numpy.ndarray,
        attrs: Dict[str, Any],
    ) -> SpanGroup:
        ids = [f"{prefix}{k}" for k in range(len(candidates))]
        spans = [
            Span(doc, c.start, c.end, label=c.figure, span_id=span_id)
            for c, span_id in zip(candidates, ids)
        ]
        attrs = dict(attrs)
        attrs[SCORES_ATTR] = {i: float(s) for i, s in zip(ids, scores)}
        attrs[BOUNDS_ATTR] = {i: [c.start, c.end] for i, c in zip(ids, candidates)}
        attrs[SUPPORT_ATTR] = {i: [list(r) for r in c.support] for i, c in zip(ids, candidates)}
        attrs[MEMBERS_ATTR] = {i: [list(r) for r in c.members] for i, c in zip(ids, candidates)}
        attrs[N_MEMBERS_ATTR] = {i: c.n_members for i, c in zip(ids, candidates)}
        return SpanGroup(doc, name=name, attrs=attrs, spans=spans)

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations([doc], self.predict([doc]))
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        for docs in util.minibatch(stream, size=batch_size):
            self.set_annotations(docs, self.predict(docs))
            yield from docs

    def initialize(
        self, get_examples: Optional[Callable] = None, *, nlp: Optional[Language] = None
    ) -> None:
        """Nothing to initialize: the rules need no data and the scorer is loaded."""

    # --- serialization ---------------------------------------------------------------

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        return srsly.msgpack_dumps({"cfg": self.cfg, "scorer": self.scorer_model.to_dict()})

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "FigureFinder":
        data = srsly.msgpack_loads(bytes_data)
        self.cfg.update(data["cfg"])
        self.scorer_model = FigureScorer.from_dict(data["scorer"])
        self.untagged_model = self._untagged(data)
        return self

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self.cfg)
        srsly.write_json(path / "scorer.json", self.scorer_model.to_dict())

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "FigureFinder":
        path = Path(path)
        self.cfg.update(srsly.read_json(path / "cfg"))
        self.scorer_model = FigureScorer.from_dict(srsly.read_json(path / "scorer.json"))
        self.untagged_model = self._untagged(srsly.read_json(path / "cfg"))
        return self

    def _untagged(self, cfg: Dict[str, Any]) -> FigureScorer:
        """The scorer of untagged docs after loading: the prior where the saved finder
        used the packaged scorer."""
        cfg = cfg.get("cfg", cfg)
        if cfg.get("scorer_path") is None and self.scorer_model.source != "prior":
            return FigureScorer.prior()
        return self.scorer_model


# --- one finding per passage ---------------------------------------------------------

# findings of one label are one passage when their spans share at least this share of
# the smaller span's tokens: the best is reported, the others are its variants
VARIANT_SHARE = 0.8
VARIANTS_ATTR = "figure_variants"


def merge_variants(
    items: Sequence[Tuple[str, int, int]],
    order: Sequence[int],
    n_first: Optional[int] = None,
    limit: Optional[int] = None,
) -> Tuple[List[int], Dict[int, List[int]]]:
    """One finding per passage, greedily best first: each item of ``order`` is a variant
    of the first kept item of its label whose span shares at least ``VARIANT_SHARE`` of
    the smaller span's tokens with its own, else it is kept. The first ``n_first`` items
    of ``order`` are all examined; after them, items until ``limit`` more are kept.

    items (Sequence[Tuple[str, int, int]]): per item its label, start and end (tokens).
    order (Sequence[int]): the indices of the items to examine, best first.
    n_first (Optional[int]): how many of ``order`` to examine in any case (None: all).
    limit (Optional[int]): how many items after them to keep at most (None: no limit).
    RETURNS (Tuple[List[int], Dict[int, List[int]]]): the kept items, in ``order``, and
        per kept item with variants its variants, in ``order``.
    """
    first = len(order) if n_first is None else n_first
    codes: Dict[str, int] = {}
    kept = numpy.zeros((max(1, min(len(order), 64)), 3), dtype=numpy.int64)  # label, start, end
    heads: List[int] = []
    variants: Dict[int, List[int]] = {}
    later = 0
    for k, item in enumerate(order):
        if k >= first and limit is not None and later >= limit:
            break
        label, start, end = items[item]
        code = codes.setdefault(label, len(codes))
        view = kept[: len(heads)]
        shared = numpy.minimum(view[:, 2], end) - numpy.maximum(view[:, 1], start)
        smaller = numpy.minimum(view[:, 2] - view[:, 1], end - start)
        same = (view[:, 0] == code) & (shared > 0) & (shared >= VARIANT_SHARE * smaller - 1e-9)
        hits = numpy.flatnonzero(same)
        if len(hits):
            variants.setdefault(heads[int(hits[0])], []).append(item)
            continue
        if len(heads) == len(kept):
            kept = numpy.concatenate([kept, numpy.zeros_like(kept)])
        kept[len(heads)] = (code, start, end)
        heads.append(item)
        later += k >= first
    return heads, variants


def variant_attrs(
    prefix: str,
    listed: Sequence[int],
    variants: Dict[int, List[int]],
    candidates: Sequence[Candidate],
    scores: numpy.ndarray,
) -> Dict[str, List[List[Any]]]:
    """RETURNS (Dict[str, List[List[Any]]]): the ``figure_variants`` attr of a group whose
    span ``prefix + k`` is candidate ``listed[k]``: per span with variants, each
    variant's ``[start, end, score]``, best first."""
    return {
        f"{prefix}{k}": [
            [candidates[v].start, candidates[v].end, float(scores[v])] for v in variants[i]
        ]
        for k, i in enumerate(listed)
        if i in variants
    }


# --- extension attributes ------------------------------------------------------------


def _own_group(span: Span) -> Optional[SpanGroup]:
    """The group written by a figure_finder that holds this span's instance."""
    for group in span.doc.spans.values():
        bounds = group.attrs.get(BOUNDS_ATTR)
        if bounds and span.id_ in bounds and tuple(bounds[span.id_]) == (span.start, span.end):
            return group
    return None


def _span_score(span: Span) -> Optional[float]:
    group = _own_group(span)
    return float(group.attrs[SCORES_ATTR][span.id_]) if group is not None else None


def _ranges(span: Span, attr: str) -> Tuple[Span, ...]:
    group = _own_group(span)
    if group is None:
        return tuple()
    return tuple(
        Span(span.doc, s, e, label=span.label_, span_id=span.id_)
        for s, e in group.attrs[attr][span.id_]
    )


def _span_support(span: Span) -> Tuple[Span, ...]:
    return _ranges(span, SUPPORT_ATTR)


def _span_members(span: Span) -> Tuple[Span, ...]:
    return _ranges(span, MEMBERS_ATTR)


def register_figure_extensions() -> None:
    """Register ``span._.figure_score``, ``span._.figure_support`` and
    ``span._.figure_members`` (idempotent)."""
    for name, getter in (
        ("figure_score", _span_score),
        ("figure_support", _span_support),
        ("figure_members", _span_members),
    ):
        if not Span.has_extension(name):
            Span.set_extension(name, getter=getter)


register_figure_extensions()
