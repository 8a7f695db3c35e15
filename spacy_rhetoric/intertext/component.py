"""The ``intertext_matcher`` component: links each sentence (or the whole doc) to the
source passages it quotes, paraphrases or alludes to, using a prebuilt
``IntertextIndex`` (see index.py) and, if it has one, its trained reranker (saved with
the component).

Each sentence is searched whole and by its parts (``units``, the default since
``en_rhetoric_intertext`` 0.2.0 and ``la_rhetoric_intertext`` 0.3.0; ``units.py``): its
cola, two adjacent cola, the words after an announcing cue ("dixit", "saith"), and the
words that follow a found source word for word. A source's best unit speaks for it; a
link to a source the sentence quotes word for word (``units.is_quoted``) is a
*quotation* and marks the quoted words, any other an *allusion* (its own threshold,
``allusion_threshold``) and marks its unit. So one sentence may carry several spans,
each on the words it draws on.

For each group of words with at least one link, ``doc.spans[spans_key]`` gets a span
labelled "intertext"; ``span._.intertext_links`` holds its links, best first, each a
dict with ``source_id``, ``source_text``, ``retrieval_score`` (fused), ``lexical``
(shared-rarity score), ``similarity`` (cosine), ``probability`` (reranker, or None),
``rank`` and ``kind`` ("quotation" or "allusion"). ``doc._.intertext_links`` lists
(span, links) for the whole doc.

Several matchers, one per source (Virgil and the Vulgate in ``la_rhetoric_intertext``),
write into one span group: the first replaces the group (``overwrite``, the default), the
later ones with ``overwrite = false`` add to it. Words that an earlier matcher linked
keep their span, and the later matcher's links follow the earlier ones in its
``_.intertext_links`` (each matcher's links best first by its own reranker; a span's
extension values are keyed by its characters, so the links of equal words are merged).

Which candidates become links: with a reranker (the index's own, else the packaged one
for its kind, see ``rerank.index_reranker``), those among a sentence's top ``k`` whose
probability >= ``threshold`` (None: the threshold the reranker was trained with; an
allusion: >= ``allusion_threshold``, None: the reranker's, else ``threshold``);
without one, the top ``k`` whose cosine similarity (lexical score for a lexical-only
index) >= ``threshold`` (None: the index's default, a similarity that unrelated source
segments rarely reach, see ``null.py``; -1: all k). See ``units.unit_links``.

The query sentences are encoded in the arithmetic ``precision`` names: "float32",
"bfloat16", or "auto" (bfloat16 where the CPU computes it natively, AVX512-BF16 or AMX,
else float32; the rule of the frozen token encoders, ``encoders.vectors``). A pipeline
saved without the setting (before 0.7.0) keeps float32.
"""

import shutil
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import srsly
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Span
from spacy.util import minibatch

from .dense import check_query_precision
from .index import META_FILE, IntertextIndex
from .link import link_threshold
from .rerank import RERANKER_FILE, FeatureReranker, apply_fusion, index_reranker, load_reranker
from .units import reranked, search_units, unit_links

SPANS_KEY = "intertext"
LABEL = "intertext"
SEGMENTS = ("sents", "doc")
STORED_INDEX = "index"  # the index's folder inside the component's, with store_index
DEFAULT_PRECISION = "auto"  # the query encoder's arithmetic in new pipelines
SAVED_PRECISION = "float32"  # ... in pipelines saved before the setting existed


def register_intertext_extensions() -> None:
    """Register ``Span._.intertext_links`` and ``Doc._.intertext_links`` (idempotent)."""
    if not Span.has_extension("intertext_links"):
        Span.set_extension("intertext_links", default=None)
    if not Doc.has_extension("intertext_links"):
        Doc.set_extension("intertext_links", getter=get_intertext_links)


def get_intertext_links(doc: Doc, spans_key: str = SPANS_KEY) -> List[Tuple[Span, List[Dict]]]:
    """doc (Doc): a processed doc.
    spans_key (str): the span group of the matcher.
    RETURNS (List[Tuple[Span, List[Dict]]]): (query span, its links) in text order.
    """
    if spans_key not in doc.spans:
        return []
    return [(span, span._.intertext_links or []) for span in doc.spans[spans_key]]


@Language.factory(
    "intertext_matcher",
    default_config={
        "index_path": None,
        "k": 10,
        "threshold": None,
        "pool": 100,
        "segment": "sents",
        "rerank": True,
        "packaged_reranker": True,
        "store_index": False,
        "precision": DEFAULT_PRECISION,
        "spans_key": SPANS_KEY,
        "overwrite": True,
        "units": True,
        "allusion_threshold": None,
        "scorer": {"@scorers": "spacy-rhetoric.intertext_scorer.v1"},
    },
    default_score_weights={"intertext_f": 1.0, "intertext_p": 0.0, "intertext_r": 0.0},
)
def make_intertext_matcher(
    nlp: Language,
    name: str,
    index_path: Optional[str],
    k: int,
    threshold: Optional[float],
    pool: int,
    segment: str,
    rerank: bool,
    packaged_reranker: bool,
    store_index: bool,
    precision: str,
    spans_key: str,
    overwrite: bool,
    units: bool,
    allusion_threshold: Optional[float],
    scorer: Optional[Callable],
) -> "IntertextMatcher":
    """Create an ``intertext_matcher``.

    index_path (Optional[str]): the index directory ("python -m spacy_rhetoric
        intertext index"); None: give it to ``initialize`` (``[initialize.components.
        intertext_matcher] index_path``).
    k (int): candidates per segment.
    threshold (Optional[float]): link threshold (see ``link.link_segments``).
    pool (int): candidates per channel before fusion.
    segment (str): "sents" (one query per sentence; the whole doc if it has no
        sentence boundaries) or "doc".
    rerank (bool): use the trained reranker (the index's, or the one saved with the
        component).
    packaged_reranker (bool): for an index without a reranker, the packaged one that
        fits its kind (``rerank.index_reranker``); else the index's default threshold.
    store_index (bool): save the index inside the pipeline (``nlp.to_disk`` copies it
        into the component's ``index/`` folder, which ``spacy package`` ships and
        ``from_disk`` reopens); False: refer to it by its absolute path.
    precision (str): the arithmetic the query sentences are encoded in: "float32",
        "bfloat16" or "auto" (bfloat16 where the CPU has it natively, else float32).
    spans_key (str): the span group to write.
    overwrite (bool): replace the span group; False: add to what an earlier matcher
        wrote there (a second source in the same pipeline).
    units (bool): query each sentence by its parts too (cola, announced words, the
        words that quote a source; ``units.py``), each link on the words it draws on;
        False: the sentence alone (pipelines saved before the setting existed).
    allusion_threshold (Optional[float]): the threshold of links to sources the
        sentence does not quote word for word (None: the reranker's, if it has one,
        else ``threshold``'s).
    scorer (Optional[Callable]): the scoring method (recall@k, MRR, P/R/F1).
    """
    return IntertextMatcher(
        nlp.vocab,
        name=name,
        index_path=index_path,
        k=k,
        threshold=threshold,
        pool=pool,
        segment=segment,
        rerank=rerank,
        packaged_reranker=packaged_reranker,
        store_index=store_index,
        precision=precision,
        spans_key=spans_key,
        overwrite=overwrite,
        units=units,
        allusion_threshold=allusion_threshold,
        scorer=scorer,
    )


class IntertextMatcher(Pipe):
    """Link query segments to source passages with an IntertextIndex and its reranker.

    By default the index is referenced, not copied: it is large (the full Latin pool is
    1.5 GB of embeddings) and shared by pipelines, so the component stores its absolute
    path and ``from_disk`` fails with a clear message where it is missing. With
    ``store_index`` the index is saved inside the pipeline (a small index that ships
    with it, e.g. ``la_rhetoric_intertext``). The reranker is small and is saved with
    the component.
    """

    def __init__(
        self,
        vocab,
        name: str = "intertext_matcher",
        *,
        index_path: Optional[str] = None,
        k: int = 10,
        threshold: Optional[float] = None,
        pool: int = 100,
        segment: str = "sents",
        rerank: bool = True,
        packaged_reranker: bool = True,
        store_index: bool = False,
        precision: str = DEFAULT_PRECISION,
        spans_key: str = SPANS_KEY,
        overwrite: bool = True,
        units: bool = True,
        allusion_threshold: Optional[float] = None,
        scorer: Optional[Callable] = None,
        index: Optional[IntertextIndex] = None,
        reranker: Optional[FeatureReranker] = None,
    ):
        if segment not in SEGMENTS:
            raise ValueError(
                f"intertext_matcher: segment must be one of {SEGMENTS}, got '{segment}'"
            )
        if k < 1:
            raise ValueError(f"intertext_matcher: k must be >= 1, got {k}")
        check_query_precision(precision, "intertext_matcher")
        register_intertext_extensions()
        self.vocab = vocab
        self.name = name
        self.cfg: Dict[str, Any] = {
            "index_path": _absolute(index_path),
            "k": k,
            "threshold": threshold,
            "pool": pool,
            "segment": segment,
            "rerank": rerank,
            "packaged_reranker": packaged_reranker,
            "store_index": store_index,
            "precision": precision,
            "spans_key": spans_key,
            "overwrite": overwrite,
            "units": units,
            "allusion_threshold": allusion_threshold,
        }
        self.scorer = scorer
        self._index = index
        self.reranker = reranker
        self._reranker_read = reranker is not None

    @property
    def index(self) -> IntertextIndex:
        """The index (opened on first use)."""
        if self._index is None:
            path = self.cfg["index_path"]
            if path is None:
                raise ValueError(
                    "intertext_matcher has no index: give one with "
                    "config={'index_path': 'path/to/index'} or to initialize(index_path=...) "
                    "(build one with 'python -m spacy_rhetoric intertext index SOURCE -o INDEX')"
                )
            if not Path(path).is_dir():
                raise ValueError(
                    f"intertext_matcher: its index {path} is missing (the component refers "
                    "to the index by path): restore it, or set another with "
                    "initialize(index_path=...)"
                )
            self._index = IntertextIndex.from_disk(path)
            if self._reranker_read:  # saved with the component: its fusion, if it has one
                apply_fusion(self._index, self.reranker)
        if not self._reranker_read:
            packaged = self.cfg.get("packaged_reranker", True)
            self.reranker = index_reranker(self._index, self.cfg["index_path"], packaged)
            self._reranker_read = True
        return self._index

    def set_reranker(self, reranker: FeatureReranker) -> None:
        """Link with this reranker instead of the index's own or the packaged one, as if
        it had been saved with the component: its fusion, if it carries one, applies to
        the index (now, or when it opens), and ``to_disk`` saves it.

        reranker (FeatureReranker): e.g. a portable one (``rerank.load_reranker`` or
            ``intertext train --export``).
        """
        self.reranker = reranker
        self._reranker_read = True
        if self._index is not None:
            apply_fusion(self._index, reranker)

    def initialize(
        self,
        get_examples: Optional[Callable] = None,
        *,
        nlp: Optional[Language] = None,
        index_path: Optional[str] = None,
    ) -> None:
        """Open the index (and the reranker trained into it) now, so that a missing or
        unreadable index fails here rather than on the first doc.

        get_examples (Optional[Callable]): unused (nothing is trained here: the reranker
            is trained with 'python -m spacy_rhetoric intertext train').
        nlp (Optional[Language]): the pipeline.
        index_path (Optional[str]): the index directory (default: the one configured).
        """
        if index_path is not None:
            self.cfg["index_path"] = _absolute(index_path)
            self._index = None
            self._reranker_read = False
        self.index  # noqa: B018  (opens the index and reads its reranker)

    def segments(self, doc: Doc) -> List[Span]:
        """The query segments of a doc (non-empty sentences, or the whole doc)."""
        if len(doc) == 0:
            return []
        if self.cfg["segment"] == "sents" and doc.has_annotation("SENT_START"):
            return [s for s in doc.sents if s.text.strip()]
        return [doc[:]]

    def __call__(self, doc: Doc) -> Doc:
        return next(iter(self.pipe([doc])))

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        for docs in minibatch(stream, size=batch_size):
            self.set_annotations(docs, self.predict(docs))
            yield from docs

    def predict(self, docs: Iterable[Doc]) -> List[List[Tuple[Span, List[Dict]]]]:
        """Link every segment of the docs: its units searched and reranked
        (``units.search_units``), a source's best unit speaking for it
        (``units.unit_links``).

        RETURNS (List[List[Tuple[Span, List[Dict]]]]): per doc, (segment, its links);
            each link's ``start_char`` and ``end_char`` are the words it draws on, in
            the segment's text.
        """
        docs = list(docs)
        per_doc = [self.segments(doc) for doc in docs]
        spans = [span for spans in per_doc for span in spans]
        if not spans:
            return [[] for _ in docs]
        index = self.index
        precision = self.cfg.get("precision", SAVED_PRECISION)
        check_query_precision(precision, "intertext_matcher")  # cfg may have been edited
        index.query_precision = precision
        reranker = self.reranker if self.cfg["rerank"] else None
        threshold, allusion = self.thresholds(reranker)
        searched = search_units(
            index,
            [span.text for span in spans],
            k=self.cfg["k"],
            pool=self.cfg["pool"],
            names=reranker.features if reranker is not None else None,
            units=self.cfg.get("units", False),
        )
        links_of = [
            [
                {key: v for key, v in row.items() if key != "link"}
                for row in unit_links(
                    index, pairs, reranked(pairs, reranker), threshold, allusion, self.cfg["k"]
                )
                if row["link"]
            ]
            for pairs in searched
        ]
        out, i = [], 0
        for spans_of_doc in per_doc:
            out.append(list(zip(spans_of_doc, links_of[i : i + len(spans_of_doc)])))
            i += len(spans_of_doc)
        return out

    def thresholds(
        self, reranker: Optional[FeatureReranker]
    ) -> Tuple[Optional[float], Optional[float]]:
        """The thresholds in force: of quotations (``link.link_threshold``) and of
        allusions (the configured one, else the reranker's unless a threshold was
        configured, else the quotations')."""
        threshold = link_threshold(reranker, self.cfg["threshold"], self.index)
        allusion = self.cfg.get("allusion_threshold")
        if allusion is None and reranker is not None and self.cfg["threshold"] is None:
            allusion = reranker.allusion_threshold
        return threshold, (threshold if allusion is None else allusion)

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        key = self.cfg["spans_key"]
        add = not self.cfg.get("overwrite", True)
        for doc, pairs in zip(docs, predictions):
            earlier = list(doc.spans[key]) if add and key in doc.spans else []
            by_tokens = {(span.start, span.end): span for span in earlier}
            group = list(earlier)
            for segment, links in pairs:
                for (start, end), marked in _by_words(segment, links):
                    span = by_tokens.get((start, end))
                    if span is not None:  # linked by an earlier matcher: its links first
                        span._.intertext_links = list(span._.intertext_links or []) + marked
                        continue
                    span = Span(doc, start, end, label=LABEL)
                    span._.intertext_links = marked
                    by_tokens[(start, end)] = span
                    group.append(span)
            doc.spans[key] = sorted(group, key=lambda s: (s.start, s.end))

    def to_disk(self, path, *, exclude=tuple()) -> None:
        """Save the settings (with the index's absolute path) and the reranker; with
        ``store_index``, the index too (into ``index/``, with its own reranker file)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self.cfg)
        if self.cfg["index_path"] is not None:
            self.index  # noqa: B018  (reads the index's reranker if not read yet)
        if self.reranker is not None:
            srsly.write_json(path / RERANKER_FILE, self.reranker.to_dict())
        if self.cfg.get("store_index") and self.cfg["index_path"] is not None:
            source, target = Path(self.cfg["index_path"]), path / STORED_INDEX
            if source.resolve() != target.resolve():  # not saved over itself
                if target.exists():
                    shutil.rmtree(target)
                shutil.copytree(source, target)  # the index's files as they are

    def from_disk(self, path, *, exclude=tuple()) -> "IntertextMatcher":
        """Load the settings and the reranker; the index opens on first use (the one
        saved inside the pipeline, if it has one)."""
        path = Path(path)
        saved = srsly.read_json(path / "cfg")
        saved.setdefault("precision", SAVED_PRECISION)  # saved before the setting existed
        saved.setdefault("units", False)  # ... and before queries inside the sentence
        self.cfg.update(saved)
        if (path / STORED_INDEX / META_FILE).is_file():
            self.cfg["index_path"] = _absolute(path / STORED_INDEX)
        self._index = None
        self.reranker = load_reranker(path)
        self._reranker_read = self.reranker is not None
        return self

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        if self.cfg["index_path"] is not None:
            self.index  # noqa: B018
        reranker = self.reranker.to_dict() if self.reranker is not None else None
        return srsly.json_dumps({"cfg": self.cfg, "reranker": reranker}).encode("utf8")

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "IntertextMatcher":
        data = srsly.json_loads(bytes_data)
        self.cfg.update({"precision": SAVED_PRECISION, "units": False, **data["cfg"]})
        self._index = None
        self.reranker = FeatureReranker.from_dict(data["reranker"]) if data["reranker"] else None
        self._reranker_read = self.reranker is not None
        return self

    def __getstate__(self) -> Dict[str, Any]:
        # the index is reopened from its path (memory-mapped), never pickled
        state = dict(self.__dict__)
        if state.get("cfg", {}).get("index_path") is not None:
            state["_index"] = None
        return state


def _by_words(segment: Span, links: List[Dict]) -> List[Tuple[Tuple[int, int], List[Dict]]]:
    """A segment's links grouped by the tokens they draw on (their characters, widened
    to whole tokens), in the order of each group's best link."""
    groups: Dict[Tuple[int, int], List[Dict]] = {}
    base = segment.start_char
    for link in links:
        start = base + link.pop("start_char", 0)
        end = base + link.pop("end_char", len(segment.text))
        words = segment.doc.char_span(start, end, alignment_mode="expand")
        where = (words.start, words.end) if words is not None and len(words) else (
            segment.start, segment.end
        )  # fmt: skip
        groups.setdefault(where, []).append(link)
    return list(groups.items())


def _absolute(path: Optional[Union[str, Path]]) -> Optional[str]:
    return str(Path(path).resolve()) if path is not None else None


register_intertext_extensions()
