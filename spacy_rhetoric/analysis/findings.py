"""What the main job found, as plain data: the notes on what ran, each analysed
document (its findings, statistics, displacement counts and the data of its
rendering), and the analysis as JSON. The kinds of finding are ``kinds.FINDING_KINDS``.
Nothing here writes HTML (see ``report``)."""

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Doc

from .kinds import FINDING_KINDS

DEFAULT_MAX_DISPLACEMENT = 10  # the report's histogram: [-10, 10], longer edges clipped
MAX_RENDERED_TOKENS = 20000  # per document: the rendering stops after this many tokens
# two findings are on one passage when they share at least this share of the tokens of
# the smaller one (a figure inside a parallelism, two figures on the same words)
PASSAGE_OVERLAP = 0.5

TokenRange = Tuple[int, int, int]  # (chunk, start token, end token)


@dataclass
class Note:
    """What happened to one component for one language.

    lang (str): the language.
    component (str): one of COMPONENTS.
    ran (bool): whether it ran.
    detail (str): what ran, or why it did not run and how to enable it (no filesystem
        path: the HTML report shows it).
    model (str): the model it loaded (a name of ``models.MODEL_SPECS``), "" if none.
    package (str): that pipeline's package name and version, from its meta.json
        ("en_rhetoric_base 0.1.0").
    source (str): where the model was found (one of ``models.SOURCES``).
    licence (str): the licence of the model's data.
    path (str): the directory it was loaded from (the terminal and the JSON only).
    calibration (str): for a component whose findings carry calibrated scores (the
        parallelism tagger), the dev data they were calibrated on ("ASP dev; ECE
        0.036"), or "uncalibrated" (raw confidences); "" where it gives no scores.
    """

    lang: str
    component: str
    ran: bool
    detail: str
    model: str = ""
    package: str = ""
    source: str = ""
    licence: str = ""
    path: str = ""
    calibration: str = ""

    def __str__(self) -> str:
        status = "ran" if self.ran else "not run"
        text = f"[{self.lang}] {self.component}: {status} — {self.detail}"
        if self.path:
            text += f" (from {self.path}: {self.source}; licence {self.licence})"
        return text


@dataclass
class Document:
    """One analysed input: its chunks (one Doc per paragraph block) and metadata.

    name (str): how the report calls it (the file name).
    lang (str): its language.
    docs (List[Doc]): the analysed chunks, in order.
    offsets (List[int]): the character offset of each chunk in the input text.
    caption (str): an optional note shown under the heading (e.g. the source).
    summary (Optional[Dict[str, Any]]): set by ``summarize``, which releases the docs:
        the statistics, findings, displacement counts and (optionally) the data
        of its renderings.
    """

    name: str
    lang: str
    docs: List[Doc]
    offsets: List[int] = field(default_factory=list)
    caption: str = ""
    summary: Optional[Dict[str, Any]] = None

    @property
    def n_tokens(self) -> int:
        if self.summary is not None:
            return self.summary["stats"]["tokens"]
        return sum(len(doc) for doc in self.docs)

    @property
    def rendered(self) -> bool:
        """Whether the report can show this document's text with its findings marked."""
        return self.summary is None or self.summary["views"] is not None

    def summarize(self, render: bool = True) -> "Document":
        """Keep only what the report and the JSON need (statistics, findings, the
        displacement counts and, if ``render``, the data of its rendering: see
        ``document_views``) and release
        the docs, so that a corpus of many files is held in bounded memory.

        render (bool): keep the data of this document's rendering.
        RETURNS (Document): this document, summarised.
        """
        if self.summary is not None:
            return self
        findings, ranges = located_findings(self)
        self.summary = {
            "stats": document_stats(self),
            "findings": findings,
            "passages": passages_of(self, findings, ranges),
            "reviews": document_reviews(self),
            "histogram": _histogram_counts(self.docs),
            "ran": document_ran(self),
            "views": document_views(self) if render else None,
        }
        self.docs = []
        return self


@dataclass
class Analysis:
    """The documents analysed and the notes of every language involved."""

    documents: List[Document] = field(default_factory=list)
    notes: List[Note] = field(default_factory=list)
    seconds: float = 0.0
    skipped: List[Dict[str, str]] = field(default_factory=list)  # {"path", "reason"}

    def extend(self, other: "Analysis") -> None:
        self.documents.extend(other.documents)
        self.notes.extend(n for n in other.notes if n not in self.notes)
        self.seconds += other.seconds
        self.skipped.extend(other.skipped)


def document_ran(document: Document) -> Dict[str, bool]:
    """RETURNS (Dict[str, bool]): per kind of finding, whether it ran on the document
    (on any of its chunks)."""
    if document.summary is not None:
        return document.summary["ran"]
    return {kind.name: any(kind.ran(doc) for doc in document.docs) for kind in FINDING_KINDS}


def document_findings(document: Document) -> List[Dict[str, Any]]:
    """The findings of one document, as plain data: kind, id, label, text, score,
    character offsets in the input, and the parts (branches / supporting words), in the
    order of the chunks and, within a chunk, of ``FINDING_KINDS``; each kind numbered
    through the document (P1, P2, ..., C1, ...)."""
    if document.summary is not None:
        return document.summary["findings"]
    return located_findings(document)[0]


def located_findings(document: Document) -> Tuple[List[Dict[str, Any]], List[TokenRange]]:
    """The findings of a document that still holds its docs (see ``document_findings``)
    and where each lies: its chunk and the tokens from the start of its first mark to
    the end of its last (a parallelism: first branch to last)."""
    findings: List[Dict[str, Any]] = []
    ranges: List[TokenRange] = []
    numbers = {kind.name: 0 for kind in FINDING_KINDS}
    offsets = document.offsets or [0] * len(document.docs)
    for chunk, (doc, base) in enumerate(zip(document.docs, offsets)):
        for kind in FINDING_KINDS:
            if not kind.ran(doc):
                continue
            for item in kind.items(doc):
                numbers[kind.name] += 1
                ident = f"{kind.prefix}{numbers[kind.name]}"
                findings.append(kind.finding(item, document.name, ident, base))
                marks = kind.marks(item, ident)
                start = min((mark["start_token"] for mark in marks), default=0)
                end = max((mark["end_token"] for mark in marks), default=0)
                ranges.append((chunk, start, end))
    return findings, ranges


def group_passages(ranges: Sequence[TokenRange], overlap: float = PASSAGE_OVERLAP) -> List[int]:
    """Group findings into passages. Longest first, each finding joins the passage whose
    anchor (its longest finding) shares the most tokens with it, if they share at least
    ``overlap`` of the smaller one's tokens, or else is the anchor of a new passage. A
    finding inside another always joins it; two neighbouring passages stay two where a
    finding straddles them (anchors, not chains).

    ranges (Sequence[TokenRange]): each finding's (chunk, start token, end token).
    overlap (float): the share of the smaller finding's tokens two findings must share.
    RETURNS (List[int]): each finding's passage, numbered from 1 in text order (by the
        passages' chunk, first token, then last token).
    """
    order = sorted(range(len(ranges)), key=lambda i: (ranges[i][1] - ranges[i][2], ranges[i]))
    anchors: Dict[int, List[int]] = {}  # per chunk, the anchors' indices
    joined = list(range(len(ranges)))  # each finding's anchor
    for i in order:
        chunk, start, end = ranges[i]
        best, most = i, 0
        for a in anchors.get(chunk, []):
            _, a_start, a_end = ranges[a]
            shared = min(end, a_end) - max(start, a_start)
            if shared > most and shared >= overlap * min(end - start, a_end - a_start):
                best, most = a, shared
        if best == i:
            anchors.setdefault(chunk, []).append(i)
        joined[i] = best
    extent: Dict[int, TokenRange] = {}
    for i, a in enumerate(joined):
        chunk, start, end = ranges[i]
        _, first, last = extent.get(a, ranges[i])
        extent[a] = (chunk, min(start, first), max(end, last))
    numbers = {a: n for n, a in enumerate(sorted(extent, key=extent.__getitem__), start=1)}
    return [numbers[a] for a in joined]


def passages_of(
    document: Document, findings: Sequence[Dict[str, Any]], ranges: Sequence[TokenRange]
) -> List[Dict[str, Any]]:
    """The passages of a document that still holds its docs (see ``group_passages``):
    per passage its number, the characters from its first token to its last (in the
    input), their text, and the ids, kinds and labels of its findings, in the findings'
    order."""
    numbers = group_passages(ranges)
    offsets = document.offsets or [0] * len(document.docs)
    members: Dict[int, List[int]] = {}
    for i, number in enumerate(numbers):
        members.setdefault(number, []).append(i)
    passages = []
    for number in sorted(members):
        chunk = ranges[members[number][0]][0]
        start = min(ranges[i][1] for i in members[number])
        end = max(ranges[i][2] for i in members[number])
        span = document.docs[chunk][start:end]
        passages.append(
            {
                "passage": number,
                "start_char": offsets[chunk] + span.start_char,
                "end_char": offsets[chunk] + span.end_char,
                "text": span.text,
                "ids": [findings[i]["id"] for i in members[number]],
                "kinds": [findings[i]["kind"] for i in members[number]],
                "labels": [findings[i]["label"] for i in members[number]],
            }
        )
    return passages


def document_passages(document: Document) -> List[Dict[str, Any]]:
    """The passages of one document: its findings grouped where they share at least
    ``PASSAGE_OVERLAP`` of the smaller one's tokens (see ``group_passages``), as plain
    data: "passage" (its number, from 1 in text order), "start_char", "end_char", "text",
    and the "ids", "kinds" and "labels" of its findings (``document_findings``)."""
    if document.summary is not None:
        return document.summary["passages"]
    findings, ranges = located_findings(document)
    return passages_of(document, findings, ranges)


def document_reviews(document: Document) -> Dict[str, List[Dict[str, Any]]]:
    """The candidates below the threshold that each finder kept for review (a bounded
    number per 1,000 tokens: ``FindingKind.review``), per kind of finding that has a
    review list, as plain data (the fields of a finding; the chiasmus candidates are of
    kind "review" with ids R1, R2, ..., the figures' of kind "figure candidate" with ids
    FR1, ...), best first within each chunk, numbered through the document."""
    if document.summary is not None:
        return document.summary["reviews"]
    reviews: Dict[str, List[Dict[str, Any]]] = {
        kind.name: [] for kind in FINDING_KINDS if kind.review is not None
    }
    for doc, base in zip(document.docs, document.offsets or [0] * len(document.docs)):
        for kind in FINDING_KINDS:
            if kind.review is None or kind.review_finding is None:
                continue
            items = reviews[kind.name]
            for item in kind.candidates(doc):
                ident = f"{kind.review_prefix}{len(items) + 1}"
                items.append(kind.review_finding(item, document.name, ident, base))
    return reviews


def document_review(document: Document) -> List[Dict[str, Any]]:
    """Every review list of a document (see ``document_reviews``), in the order of
    ``FINDING_KINDS``."""
    return [item for items in document_reviews(document).values() for item in items]


def document_data(document: Document) -> Dict[str, Any]:
    """A document in the JSON: its statistics, for each kind with a ``document_key``
    (the figures) its findings and review list under the document, and its passages
    (``document_passages``: which findings lie on the same words)."""
    data = dict(document_stats(document))
    findings = document_findings(document)
    reviews = document_reviews(document)
    for kind in FINDING_KINDS:
        if kind.document_key:
            data[kind.document_key] = [f for f in findings if f["kind"] == kind.name]
        if kind.review_key:
            data[kind.review_key] = reviews.get(kind.name, [])
    data["passages"] = document_passages(document)
    return data


def document_stats(document: Document) -> Dict[str, Any]:
    """Per-document statistics: tokens, sentences, the number of findings of each kind
    (``FindingKind.stat``), parsed edges and MED (None where no component provides
    them)."""
    from ..treebank.displacement import corpus_med, from_docs

    if document.summary is not None:
        return document.summary["stats"]
    docs = document.docs
    has_sents = bool(docs) and all(
        doc.has_annotation("SENT_START") or doc.has_annotation("DEP") for doc in docs if len(doc)
    )
    parsed = bool(docs) and all(doc.has_annotation("DEP") for doc in docs if len(doc))
    med = n_edges = None
    if parsed and any(len(doc) for doc in docs):
        data = from_docs(doc for doc in docs if len(doc))
        med, n_edges = corpus_med(data), data.n_edges
    stats: Dict[str, Any] = {
        "doc": document.name,
        "lang": document.lang,
        "tokens": document.n_tokens,
        "sentences": sum(len(list(doc.sents)) for doc in docs if len(doc)) if has_sents else None,
    }
    for kind in FINDING_KINDS:
        stats[kind.stat] = sum(kind.number(doc) for doc in docs)
    stats.update({"edges": n_edges, "med": med})
    return stats


def displacement_histogram(
    documents: Sequence[Document], max_displacement: int = DEFAULT_MAX_DISPLACEMENT
) -> Optional[Dict[str, Any]]:
    """The histogram of edge displacements over the parsed documents (None if none is
    parsed): the sum of the documents' histograms (clipping is per edge)."""
    total: Optional[Dict[str, Any]] = None
    for document in documents:
        if document.summary is not None:
            if max_displacement != DEFAULT_MAX_DISPLACEMENT:
                raise ValueError(
                    f"displacement_histogram: {document.name} is summarised, with the counts "
                    f"on [-{DEFAULT_MAX_DISPLACEMENT}, {DEFAULT_MAX_DISPLACEMENT}] only."
                )
            counts = document.summary["histogram"]
        else:
            counts = _histogram_counts(document.docs, max_displacement)
        if counts is None:
            continue
        if total is None:
            total = {
                "support": list(range(-max_displacement, max_displacement + 1)),
                "counts": [0] * (2 * max_displacement + 1),
                "n_edges": 0,
                "n_clipped": 0,
                "max_displacement": max_displacement,
            }
        total["counts"] = [a + b for a, b in zip(total["counts"], counts["counts"])]
        total["n_edges"] += counts["n_edges"]
        total["n_clipped"] += counts["n_clipped"]
    return total


def _histogram_counts(
    docs: Sequence[Doc], max_displacement: int = DEFAULT_MAX_DISPLACEMENT
) -> Optional[Dict[str, Any]]:
    """The displacement counts of some docs (None if none is parsed)."""
    from ..treebank.displacement import from_docs, histogram

    parsed = [doc for doc in docs if len(doc) and doc.has_annotation("DEP")]
    if not parsed:
        return None
    hist = histogram(from_docs(parsed), max_displacement=max_displacement)
    return {
        "counts": hist.counts.tolist(),
        "n_edges": hist.n_edges,
        "n_clipped": hist.n_clipped,
    }


def analysis_data(analysis: Analysis) -> Dict[str, Any]:
    """The analysis as JSON-serialisable data (what ``--json`` writes)."""
    tokens = sum(d.n_tokens for d in analysis.documents)
    return {
        "components": [asdict(note) for note in analysis.notes],
        "documents": [document_data(d) for d in analysis.documents],
        "findings": [f for d in analysis.documents for f in document_findings(d)],
        "review": [f for d in analysis.documents for f in document_review(d)],
        "displacement_histogram": displacement_histogram(analysis.documents),
        "skipped": list(analysis.skipped),
        "tokens": tokens,
        "seconds": round(analysis.seconds, 3),
        "words_per_second": round(tokens / analysis.seconds, 1) if analysis.seconds > 0 else None,
    }


# --- the data of a document's rendering: its text, findings marked --------------------


def text_view(doc: Doc, first: Dict[str, int]) -> Dict[str, Any]:
    """The data of one chunk's text with the findings of every kind marked (label:
    the finding's id as in the findings table, then its type or source), and the rows of
    each kind's details.

    doc (Doc): the chunk.
    first (Dict[str, int]): per kind, the number of its findings in the chunks before
        (updated: the findings are numbered through the document).
    RETURNS (Dict[str, Any]): {"text", "tokens", "spaces", "spans", "kinds", "details"}:
        "spaces" is each token's trailing whitespace, "kinds"
        maps each label to its kind, "details" each kind to its rows.
    """
    spans: List[Dict[str, Any]] = []
    kinds: Dict[str, str] = {}
    details: Dict[str, List[Dict[str, Any]]] = {}
    for kind in FINDING_KINDS:
        if not kind.ran(doc):
            continue
        for item in kind.items(doc):
            first[kind.name] += 1
            ident = f"{kind.prefix}{first[kind.name]}"
            for mark in kind.marks(item, ident):
                spans.append(mark)
                kinds[mark["label"]] = kind.name
            if kind.details is not None:
                details.setdefault(kind.name, []).extend(kind.details(item, ident))
    return {
        "text": doc.text,
        "tokens": [t.text for t in doc],
        "spaces": [t.whitespace_ for t in doc],
        "spans": spans,
        "kinds": kinds,
        "details": details,
    }


def document_views(document: Document, max_tokens: int = MAX_RENDERED_TOKENS) -> Dict[str, Any]:
    """The data of one document's rendering, chunk by chunk, up to
    ``max_tokens`` tokens, with the findings of every kind that ran on it (a component
    that ran leaves its span group, even when it found nothing). A summarised document
    returns the views it kept.

    RETURNS (Dict[str, Any]): "caption", "shown" and "tokens" (how many were rendered
        of how many), "chunks" (per chunk, see ``text_view``), and "ran": per kind
        whether it ran on the rendered chunks.
    """
    if document.summary is not None:
        return document.summary["views"]
    chunks: List[Dict[str, Any]] = []
    numbers = {kind.name: 0 for kind in FINDING_KINDS}  # running numbers, as in the table
    ran = {kind.name: False for kind in FINDING_KINDS}
    shown = 0
    for doc in document.docs:
        if shown >= max_tokens:
            break
        shown += len(doc)
        for kind in FINDING_KINDS:
            ran[kind.name] = ran[kind.name] or kind.ran(doc)
        chunks.append(text_view(doc, numbers))
    return {
        "caption": document.caption,
        "shown": shown,
        "tokens": document.n_tokens,
        "chunks": chunks,
        "ran": ran,
    }
