"""The ``intertext_matcher`` component: links each sentence (or the whole doc) to the
source passages it quotes, paraphrases or alludes to, using a prebuilt
``IntertextIndex`` (see index.py) and, if the index has one, its trained reranker.

For each segment with at least one link, ``doc.spans[spans_key]`` gets a span
labelled "intertext"; ``span._.intertext_links`` holds its links, best first, each a
dict with ``source_id``, ``source_text``, ``retrieval_score`` (fused), ``lexical``
(shared-rarity score), ``similarity`` (cosine), ``probability`` (reranker, or None) and
``rank``. ``doc._.intertext_links`` lists (span, links) for the whole doc.

Which candidates become links: with a reranker, those among the top ``k`` whose
probability >= ``threshold`` (None: the threshold the reranker was trained with);
without one, the top ``k`` whose cosine similarity >= ``threshold`` (None: all k).
"""

from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import srsly
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Span
from spacy.util import minibatch

from .index import IntertextIndex

SPANS_KEY = "intertext"
LABEL = "intertext"
SEGMENTS = ("sents", "doc")


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
        "spans_key": SPANS_KEY,
    },
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
    spans_key: str,
) -> "IntertextMatcher":
    """Create an ``intertext_matcher``.

    index_path (Optional[str]): the index directory ("python -m spacy_rhetoric
        intertext index"); may be None at creation if set before the first doc.
    k (int): candidates per segment.
    threshold (Optional[float]): link threshold (see the module docstring).
    pool (int): candidates per channel before fusion.
    segment (str): "sents" (one query per sentence; the whole doc if it has no
        sentence boundaries) or "doc".
    rerank (bool): use the index's reranker if it has one.
    spans_key (str): the span group to write.
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
        spans_key=spans_key,
    )


class IntertextMatcher(Pipe):
    """Link query segments to source passages with an IntertextIndex."""

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
        spans_key: str = SPANS_KEY,
        index: Optional[IntertextIndex] = None,
    ):
        if segment not in SEGMENTS:
            raise ValueError(
                f"intertext_matcher: segment must be one of {SEGMENTS}, got '{segment}'"
            )
        if k < 1:
            raise ValueError(f"intertext_matcher: k must be >= 1, got {k}")
        register_intertext_extensions()
        self.vocab = vocab
        self.name = name
        self.cfg: Dict[str, Any] = {
            "index_path": str(index_path) if index_path is not None else None,
            "k": k,
            "threshold": threshold,
            "pool": pool,
            "segment": segment,
            "rerank": rerank,
            "spans_key": spans_key,
        }
        self._index = index

    @property
    def index(self) -> IntertextIndex:
        """The index (opened on first use)."""
        if self._index is None:
            path = self.cfg["index_path"]
            if path is None:
                raise ValueError(
                    "intertext_matcher has no index: add it with "
                    "config={'index_path': 'path/to/index'} (build one with "
                    "'python -m spacy_rhetoric intertext index SOURCE -o INDEX')"
                )
            self._index = IntertextIndex.from_disk(path)
        return self._index

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
        """Search the index for every segment of the docs.

        RETURNS (List[List[Tuple[Span, List[Dict]]]]): per doc, (segment, links).
        """
        docs = list(docs)
        per_doc = [self.segments(doc) for doc in docs]
        spans = [span for spans in per_doc for span in spans]
        if not spans:
            return [[] for _ in docs]
        index = self.index
        texts = [span.text for span in spans]
        hits = index.search(texts, self.cfg["k"], self.cfg["pool"])
        reranker = index.reranker if self.cfg["rerank"] else None
        threshold = self.cfg["threshold"]
        if reranker is not None and threshold is None:
            threshold = reranker.threshold
        links_of = []
        for text, candidates in zip(texts, hits):
            if reranker is not None:
                candidates = reranker.rerank(index, text, candidates)
            links = []
            for rank, c in enumerate(candidates, start=1):
                value = c.probability if reranker is not None else c.dense
                if threshold is not None and value < threshold:
                    continue
                links.append(
                    {
                        "source_id": index.ids[c.row],
                        "source_text": index.texts[c.row],
                        "retrieval_score": c.score,
                        "lexical": c.lexical,
                        "similarity": c.dense,
                        "probability": c.probability,
                        "rank": rank,
                    }
                )
            links_of.append(links)
        out, i = [], 0
        for spans_of_doc in per_doc:
            out.append(list(zip(spans_of_doc, links_of[i : i + len(spans_of_doc)])))
            i += len(spans_of_doc)
        return out

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        key = self.cfg["spans_key"]
        for doc, pairs in zip(docs, predictions):
            group = []
            for segment, links in pairs:
                if not links:
                    continue
                span = Span(doc, segment.start, segment.end, label=LABEL)
                span._.intertext_links = links
                group.append(span)
            doc.spans[key] = group

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self.cfg)

    def from_disk(self, path, *, exclude=tuple()) -> "IntertextMatcher":
        self.cfg.update(srsly.read_json(Path(path) / "cfg"))
        self._index = None
        return self

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        return srsly.json_dumps(self.cfg).encode("utf8")

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "IntertextMatcher":
        self.cfg.update(srsly.json_loads(bytes_data))
        self._index = None
        return self

    def __getstate__(self) -> Dict[str, Any]:
        # the index is reopened from its path (memory-mapped), never pickled
        state = dict(self.__dict__)
        if state.get("cfg", {}).get("index_path") is not None:
            state["_index"] = None
        return state

    def initialize(self, get_examples: Optional[Callable] = None, *, nlp=None) -> None:
        """Nothing to train here: the reranker is trained with
        'python -m spacy_rhetoric intertext train' and stored in the index."""


register_intertext_extensions()
