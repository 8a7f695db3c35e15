"""The kinds of finding the main job reports: one :class:`FindingKind` per component
that leaves its findings in a span group. The findings table and the JSON, the
per-document statistics, the marks in the report's text, its legend and its filters are
all made from ``FINDING_KINDS``: a new kind (a figure finder, say) is one more entry."""

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from spacy.tokens import Doc, Span

from ..corpora.parallelisms import DEFAULT_SPANS_KEY as PARALLELISM_KEY
from ..corpora.parallelisms import get_parallelisms
from ..intertext.component import SPANS_KEY as INTERTEXT_KEY
from ..intertext.component import get_intertext_links

CHIASMUS_KEY = "chiasmus"
CHIASMUS_CONTEXT = 6  # tokens of context on either side of a chiasmus's detail line

Item = Dict[str, Any]


@dataclass(frozen=True)
class FindingKind:
    """One kind of finding.

    name (str): the findings' "kind"; its marks in the report have the CSS class
        ``k-<name>``.
    legend (str): what the report's legend calls its marks.
    prefix (str): the letter of its ids (P1, P2, ...: the findings table and the marks).
    color (str): the colour of its marks and of its legend entry.
    spans_key (str): the span group its component leaves on a doc, also when it found
        nothing: a doc without it was not analysed for this kind.
    stat (str): its column in the per-document statistics.
    items (Callable[[Doc], List[Any]]): a doc's findings of this kind, in text order.
    finding (Callable[[Any, str, str, int], Item]): one finding as plain data, from
        (item, document name, id, character offset of the doc in the input).
    marks (Callable[[Any, str], List[Item]]): the spans that mark one finding in the
        text, from (item, id): displaCy's {"start_token", "end_token", "label"}.
    count (Optional[Callable[[Doc], int]]): its statistic for a doc (None: the
        number of items).
    details (Optional[Callable[[Any, str], List[Item]]]): rows shown under the text
        for one finding, from (item, id) (None: the marks say it all).
    """

    name: str
    legend: str
    prefix: str
    color: str
    spans_key: str
    stat: str
    items: Callable[[Doc], List[Any]]
    finding: Callable[[Any, str, str, int], Item]
    marks: Callable[[Any, str], List[Item]]
    count: Optional[Callable[[Doc], int]] = None
    details: Optional[Callable[[Any, str], List[Item]]] = None

    def ran(self, doc: Doc) -> bool:
        """RETURNS (bool): whether the doc was analysed for this kind."""
        return self.spans_key in doc.spans

    def number(self, doc: Doc) -> int:
        """RETURNS (int): its statistic for the doc (0 if not analysed)."""
        if not self.ran(doc):
            return 0
        return self.count(doc) if self.count is not None else len(self.items(doc))


# --- parallelism: the branches of one parallelism share its id and label ------------------


def _parallelism_finding(parallelism: Any, name: str, ident: str, base: int) -> Item:
    first, last = parallelism.branches[0], parallelism.branches[-1]
    return {
        "kind": "parallelism",
        "doc": name,
        "id": ident,
        "label": parallelism.label,
        "text": " | ".join(branch.text for branch in parallelism.branches),
        "score": None,
        "start_char": base + first.start_char,
        "end_char": base + last.end_char,
        "parts": [branch.text for branch in parallelism.branches],
        "stratum": parallelism.stratum,
    }


def _parallelism_marks(parallelism: Any, ident: str) -> List[Item]:
    # untyped ("parallelism"): the id says it all, and short labels overlap less
    typed = parallelism.label not in ("", "parallelism")
    label = f"{ident} {parallelism.label}" if typed else ident
    if parallelism.stratum > 1:
        label += f" (stratum {parallelism.stratum})"
    return [
        {"start_token": branch.start, "end_token": branch.end, "label": label}
        for branch in parallelism.branches
    ]


# --- chiasmus: the span A..A', its supporting words in the details -----------------------


def chiasmus_item(kind: str, name: str, ident: str, span: Span, base: int) -> Item:
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


def _chiasmus_label(span: Span, ident: str) -> str:
    score = span._.chiasmus_score
    return f"{ident} {span.label_}" + (f" {score:.2f}" if score is not None else "")


def _chiasmus_marks(span: Span, ident: str) -> List[Item]:
    return [
        {"start_token": span.start, "end_token": span.end, "label": _chiasmus_label(span, ident)}
    ]


def _chiasmus_details(span: Span, ident: str, context: int = CHIASMUS_CONTEXT) -> List[Item]:
    """One line: the chiasmus's label, the words A..A' with the supporting ones marked by
    role, and up to ``context`` tokens on either side (a part is {"text", "role"}, role
    None for unmarked words; text includes its whitespace)."""
    doc = span.doc
    roles = {word.start: word.label_ for word in span._.chiasmus_support}
    left = doc[max(0, span.start - context) : span.start]
    right = doc[span.end : span.end + context]
    return [
        {
            "label": _chiasmus_label(span, ident),
            "left": ("… " if left.start > 0 else "") + left.text_with_ws,
            "parts": [{"text": token.text_with_ws, "role": roles.get(token.i)} for token in span],
            "right": right.text + (" …" if right.end < len(doc) else ""),
        }
    ]


def _chiasmus_count(doc: Doc) -> int:
    # above the threshold, also those past the finder's bound (a degenerate text)
    group = doc.spans[CHIASMUS_KEY]
    return group.attrs.get("chiasmus_above_threshold", len(group))


# --- intertext: the query span, its best sources in the details --------------------------


def _best_score(link: Dict[str, Any], dense: bool) -> Optional[float]:
    """The reranker's probability; without a reranker the cosine similarity (dense
    index) or the lexical shared-rarity score (lexical-only index)."""
    for key in ("probability", "similarity") if dense else ("probability", "lexical"):
        if link.get(key) is not None:
            return float(link[key])
    return None


def _intertext_finding(item: Any, name: str, ident: str, base: int) -> Item:
    span, links = item
    dense = any(link.get("similarity") for link in links)
    return {
        "kind": "intertext",
        "doc": name,
        "id": ident,
        "label": links[0]["source_id"] if links else span.label_,
        "text": span.text,
        "score": _best_score(links[0], dense) if links else None,
        "start_char": base + span.start_char,
        "end_char": base + span.end_char,
        "parts": [f"{link['source_id']}: {link['source_text']}" for link in links[:3]],
    }


def _intertext_marks(item: Any, ident: str) -> List[Item]:
    span, links = item
    label = ident
    if links:
        best = links[0]
        score = best["probability"] if best["probability"] is not None else best["similarity"]
        label += f" {best['source_id']}" + (f" {score:.2f}" if score is not None else "")
        if len(links) > 1:
            label += f" (+{len(links) - 1})"
    return [{"start_token": span.start, "end_token": span.end, "label": label}]


def _intertext_details(item: Any, ident: str) -> List[Item]:
    """One row per linked source: the query, the source's id and text, the scores."""
    span, links = item
    return [
        {
            "span": ident,
            "query": span.text,
            "source_id": link["source_id"],
            "source_text": link["source_text"],
            "retrieval": link["retrieval_score"] * 100,
            "similarity": link["similarity"],
            "probability": link["probability"],
        }
        for link in links
    ]


FINDING_KINDS: List[FindingKind] = [
    FindingKind(
        name="parallelism",
        legend="parallelism branches",
        prefix="P",
        color="#7aecec",
        spans_key=PARALLELISM_KEY,
        stat="parallelisms",
        items=lambda doc: list(get_parallelisms(doc)),
        finding=_parallelism_finding,
        marks=_parallelism_marks,
    ),
    FindingKind(
        name="chiasmus",
        legend="chiasmi",
        prefix="C",
        color="#ff9561",
        spans_key=CHIASMUS_KEY,
        stat="chiasmi",
        items=lambda doc: list(doc.spans[CHIASMUS_KEY]) if CHIASMUS_KEY in doc.spans else [],
        finding=lambda span, name, ident, base: chiasmus_item("chiasmus", name, ident, span, base),
        marks=_chiasmus_marks,
        count=_chiasmus_count,
        details=_chiasmus_details,
    ),
    FindingKind(
        name="intertext",
        legend="intertext links",
        prefix="I",
        color="#aa9cfc",
        spans_key=INTERTEXT_KEY,
        stat="intertext",
        items=get_intertext_links,
        finding=_intertext_finding,
        marks=_intertext_marks,
        details=_intertext_details,
    ),
]


def get_kind(name: str) -> FindingKind:
    """RETURNS (FindingKind): the kind called ``name``. RAISES KeyError: no such kind."""
    for kind in FINDING_KINDS:
        if kind.name == name:
            return kind
    raise KeyError(f"No finding kind '{name}': {', '.join(k.name for k in FINDING_KINDS)}")
