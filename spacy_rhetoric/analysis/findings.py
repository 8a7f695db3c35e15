"""What the main job found, as plain data: the notes on what ran, each analysed
document (its findings, statistics, displacement counts and the displaCy data of its
renderings), and the analysis as JSON. Nothing here writes HTML (see ``report``)."""

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from spacy.tokens import Doc

from ..corpora.parallelisms import DEFAULT_SPANS_KEY as PARALLELISM_KEY
from ..corpora.parallelisms import get_parallelisms
from ..intertext.component import get_intertext_links
from ..intertext.render import intertext_render_data
from ..parallelism.render import PALETTE

DEFAULT_MAX_DISPLACEMENT = 10  # the report's histogram: [-10, 10], longer edges clipped
MAX_RENDERED_TOKENS = 20000  # per document: the renderings stop after this many tokens
CHIASMUS_CONTEXT = 6  # tokens of context on either side of a rendered chiasmus


@dataclass
class Note:
    """What happened to one component for one language.

    lang (str): the language.
    component (str): one of COMPONENTS.
    ran (bool): whether it ran.
    detail (str): the model used, or why it did not run and how to enable it.
    """

    lang: str
    component: str
    ran: bool
    detail: str

    def __str__(self) -> str:
        status = "ran" if self.ran else "not run"
        return f"[{self.lang}] {self.component}: {status} — {self.detail}"


@dataclass
class Document:
    """One analysed input: its chunks (one Doc per paragraph block) and metadata.

    name (str): how the report calls it (the file name).
    lang (str): its language.
    docs (List[Doc]): the analysed chunks, in order.
    offsets (List[int]): the character offset of each chunk in the input text.
    caption (str): an optional note shown under the heading (e.g. the source).
    summary (Optional[Dict[str, Any]]): set by ``summarize``, which releases the docs:
        the statistics, findings, displacement counts and (optionally) the displaCy data
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
        """Whether the report can show this document's displaCy renderings."""
        return self.summary is None or self.summary["views"] is not None

    def summarize(self, render: bool = True) -> "Document":
        """Keep only what the report and the JSON need (statistics, findings, the
        displacement counts and, if ``render``, the displaCy data of the renderings: see
        ``document_views``) and release
        the docs, so that a corpus of many files is held in bounded memory.

        render (bool): keep the displaCy renderings of this document.
        RETURNS (Document): this document, summarised.
        """
        if self.summary is not None:
            return self
        self.summary = {
            "stats": document_stats(self),
            "findings": document_findings(self),
            "review": document_review(self),
            "histogram": _histogram_counts(self.docs),
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


def document_findings(document: Document) -> List[Dict[str, Any]]:
    """The findings of one document, as plain data: kind, id, label, text, score,
    character offsets in the input, and the parts (branches / supporting words)."""
    if document.summary is not None:
        return document.summary["findings"]
    findings: List[Dict[str, Any]] = []
    n_par = n_chi = n_int = 0
    for doc, base in zip(document.docs, document.offsets or [0] * len(document.docs)):
        for parallelism in get_parallelisms(doc):
            n_par += 1
            first, last = parallelism.branches[0], parallelism.branches[-1]
            findings.append(
                {
                    "kind": "parallelism",
                    "doc": document.name,
                    "id": f"P{n_par}",
                    "label": parallelism.label,
                    "text": " | ".join(branch.text for branch in parallelism.branches),
                    "score": None,
                    "start_char": base + first.start_char,
                    "end_char": base + last.end_char,
                    "parts": [branch.text for branch in parallelism.branches],
                    "stratum": parallelism.stratum,
                }
            )
        if "chiasmus" in doc.spans:
            for span in doc.spans["chiasmus"]:
                n_chi += 1
                findings.append(_chiasmus_item("chiasmus", document.name, f"C{n_chi}", span, base))
        if "intertext" in doc.spans:
            for span in doc.spans["intertext"]:
                n_int += 1
                dense = any(link.get("similarity") for link in span._.intertext_links or [])
                findings.append(_intertext_finding(document.name, f"I{n_int}", span, base, dense))
    return findings


def review_spans(
    doc: Doc, spans_key: str = "chiasmus", candidates_key: str = "chiasmus_candidates"
) -> List[Any]:
    """The chiasmus candidates a finder kept for review: those of its candidates group
    that are not chiasmi (below the threshold), best first."""
    if spans_key not in doc.spans or candidates_key not in doc.spans:
        return []
    found = {span.id_ for span in doc.spans[spans_key]}
    return [span for span in doc.spans[candidates_key] if span.id_ not in found]


def document_review(document: Document) -> List[Dict[str, Any]]:
    """The chiasmus candidates below the threshold that the finder kept for review
    (a bounded number per 1,000 tokens), best first within each chunk, as plain data
    (kind "review", id R1, R2, ...; the fields of a finding)."""
    if document.summary is not None:
        return document.summary.get("review", [])
    items: List[Dict[str, Any]] = []
    for doc, base in zip(document.docs, document.offsets or [0] * len(document.docs)):
        for span in review_spans(doc):
            items.append(_chiasmus_item("review", document.name, f"R{len(items) + 1}", span, base))
    return items


def _chiasmus_item(kind: str, name: str, ident: str, span: Any, base: int) -> Dict[str, Any]:
    """A chiasmus (or a candidate for review) as plain data, the A B B' A' words in parts."""
    score = span._.chiasmus_score
    return {
        "kind": kind,
        "doc": name,
        "id": ident,
        "label": span.label_,
        "text": span.text,
        "score": float(score) if score is not None else None,
        "start_char": base + span.start_char,
        "end_char": base + span.end_char,
        "parts": [f"{w.label_}: {w.text}" for w in span._.chiasmus_support],
    }


def _intertext_finding(name: str, ident: str, span: Any, base: int, dense: bool) -> Dict[str, Any]:
    """An intertext link: the query span and its best sources. Score: the reranker's
    probability; without a reranker the cosine similarity (dense index) or the lexical
    shared-rarity score (lexical-only index)."""
    links = span._.intertext_links or []
    score = None
    if links:
        best = links[0]
        keys = ("probability", "similarity") if dense else ("probability", "lexical")
        for key in keys:
            if best.get(key) is not None:
                score = float(best[key])
                break
    return {
        "kind": "intertext",
        "doc": name,
        "id": ident,
        "label": links[0]["source_id"] if links else span.label_,
        "text": span.text,
        "score": score,
        "start_char": base + span.start_char,
        "end_char": base + span.end_char,
        "parts": [f"{link['source_id']}: {link['source_text']}" for link in links[:3]],
    }


def document_stats(document: Document) -> Dict[str, Any]:
    """Per-document statistics: tokens, sentences, parallelisms, chiasmi, intertext
    links, parsed edges and MED (None where no component provides them)."""
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
    return {
        "doc": document.name,
        "lang": document.lang,
        "tokens": document.n_tokens,
        "sentences": sum(len(list(doc.sents)) for doc in docs if len(doc)) if has_sents else None,
        "parallelisms": sum(len(get_parallelisms(doc)) for doc in docs),
        # above the threshold, also those past the finder's bound (a degenerate text)
        "chiasmi": sum(
            doc.spans["chiasmus"].attrs.get("chiasmus_above_threshold", len(doc.spans["chiasmus"]))
            for doc in docs
            if "chiasmus" in doc.spans
        ),
        "intertext": sum(len(doc.spans["intertext"]) for doc in docs if "intertext" in doc.spans),
        "edges": n_edges,
        "med": med,
    }


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
        "documents": [document_stats(d) for d in analysis.documents],
        "findings": [f for d in analysis.documents for f in document_findings(d)],
        "review": [f for d in analysis.documents for f in document_review(d)],
        "displacement_histogram": displacement_histogram(analysis.documents),
        "skipped": list(analysis.skipped),
        "tokens": tokens,
        "seconds": round(analysis.seconds, 3),
        "words_per_second": round(tokens / analysis.seconds, 1) if analysis.seconds > 0 else None,
    }


# --- the displaCy data of a document's renderings ----------------------------------------


def parallelism_view(doc: Doc, first: int = 1) -> Dict[str, Any]:
    """displaCy "span" data of a chunk's parallelisms, numbered from ``first`` on (as
    in the findings table), one colour per parallelism.

    RETURNS (Dict[str, Any]): {"text", "tokens", "spans", "colors"}.
    """
    spans, colors = [], {}
    for n, parallelism in enumerate(get_parallelisms(doc), start=first):
        label = f"P{n} {parallelism.label}"
        if parallelism.stratum > 1:
            label += f" (stratum {parallelism.stratum})"
        colors[label] = PALETTE[(n - 1) % len(PALETTE)]
        for branch in parallelism.branches:
            spans.append({"start_token": branch.start, "end_token": branch.end, "label": label})
    return {"text": doc.text, "tokens": [t.text for t in doc], "spans": spans, "colors": colors}


def chiasmus_view(doc: Doc, first: int = 1, context: int = CHIASMUS_CONTEXT) -> List[Dict]:
    """One line per chiasmus of a chunk, numbered from ``first`` on (as in the findings
    table): its label, the words A..A' with the supporting ones marked by role, and up
    to ``context`` tokens on either side. Lines, not one displaCy rendering of the
    paragraph: with many chiasmi the labels of overlapping spans would overlap too.

    RETURNS (List[Dict]): per chiasmus {"label", "left", "parts", "right"}; a part is
        {"text", "role"} (role None for unmarked words; text includes its whitespace).
    """
    lines = []
    group = doc.spans["chiasmus"] if "chiasmus" in doc.spans else []
    for n, span in enumerate(group, start=first):
        score = span._.chiasmus_score
        roles = {word.start: word.label_ for word in span._.chiasmus_support}
        left = doc[max(0, span.start - context) : span.start]
        right = doc[span.end : span.end + context]
        lines.append(
            {
                "label": f"C{n} {span.label_}" + (f" {score:.2f}" if score is not None else ""),
                "left": ("… " if left.start > 0 else "") + left.text_with_ws,
                "parts": [
                    {"text": token.text_with_ws, "role": roles.get(token.i)} for token in span
                ],
                "right": right.text + (" …" if right.end < len(doc) else ""),
            }
        )
    return lines


def intertext_view(doc: Doc) -> Dict[str, Any]:
    """displaCy "span" data of a chunk's intertext links, and one row per linked
    source (span number, query, source id and text, scores).

    RETURNS (Dict[str, Any]): {"text", "tokens", "spans", "colors", "links"}.
    """
    data = intertext_render_data(doc)
    colors = {span["label"]: PALETTE[i % len(PALETTE)] for i, span in enumerate(data["spans"])}
    links = [
        {
            "span": f"L{n}",
            "query": span.text,
            "source_id": link["source_id"],
            "source_text": link["source_text"],
            "retrieval": link["retrieval_score"] * 100,
            "similarity": link["similarity"],
            "probability": link["probability"],
        }
        for n, (span, found) in enumerate(get_intertext_links(doc), start=1)
        for link in found
    ]
    return {**data, "colors": colors, "links": links}


def document_views(document: Document, max_tokens: int = MAX_RENDERED_TOKENS) -> Dict[str, Any]:
    """The displaCy data of one document's renderings (of the components that ran on
    it: a component that ran leaves its span group, even when it found nothing), up to
    ``max_tokens`` tokens. A summarised document returns the views it kept.

    RETURNS (Dict[str, Any]): "caption", "shown" and "tokens" (how many were rendered
        of how many), and per component a list of views, or None where it did not run.
    """
    if document.summary is not None:
        return document.summary["views"]
    views: Dict[str, Any] = {"parallelism": [], "chiasmus": [], "intertext": []}
    shown = n_par = n_chi = 0  # running numbers, as in the findings table
    for doc in document.docs:
        if shown >= max_tokens:
            break
        shown += len(doc)
        if PARALLELISM_KEY in doc.spans:
            views["parallelism"].append(parallelism_view(doc, n_par + 1))
            n_par += len(get_parallelisms(doc))
        if "chiasmus" in doc.spans:
            views["chiasmus"].append(chiasmus_view(doc, n_chi + 1))
            n_chi += len(doc.spans["chiasmus"])
        if "intertext" in doc.spans:
            views["intertext"].append(intertext_view(doc))
    return {
        "caption": document.caption,
        "shown": shown,
        "tokens": document.n_tokens,
        **{kind: found or None for kind, found in views.items()},
    }
