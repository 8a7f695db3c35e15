"""The kinds of finding the main job reports: one :class:`FindingKind` per component
that leaves its findings in a span group. The findings table and the JSON, the
per-document statistics, the marks in the report's text, its legend and its filters are
all made from ``FINDING_KINDS``: a new kind is one more entry."""

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from spacy.tokens import Doc, Span

from ..corpora.parallelisms import DEFAULT_SPANS_KEY as PARALLELISM_KEY
from ..corpora.parallelisms import get_parallelisms
from ..intertext.component import SPANS_KEY as INTERTEXT_KEY
from ..intertext.component import get_intertext_links
from ..parallelism.component import (
    DEFAULT_CANDIDATES_KEY as PARALLELISM_CANDIDATES_KEY,
)
from ..parallelism.scores import BRANCH_SCORES_ATTR, SCORES_ATTR, SOURCES_ATTR

CHIASMUS_KEY = "chiasmus"
CHIASMUS_CANDIDATES_KEY = "chiasmus_candidates"
CHIASMUS_CONTEXT = 6  # tokens of context on either side of a chiasmus's detail line
FIGURES_KEY = "figures"
FIGURE_CANDIDATES_KEY = "figure_candidates"
FIGURE_SHOWN = 24  # a figure's detail line shows this many tokens at either end of it


class FigureNames(NamedTuple):
    """A figure's names: in English (how the report writes its label), in the Latin
    handbooks, in German and in Chinese ("": none in that tradition)."""

    english: str
    latin: str
    german: str
    chinese: str


# the figures' names, in the handbooks' order; the labels are figure_finder's, except
# antimetabole and chiasmus (chiasmus_finder's)
FIGURE_NAMES: Dict[str, FigureNames] = {
    "anaphora": FigureNames("anaphora", "repetitio", "Anapher", ""),
    "epiphora": FigureNames("epiphora", "conversio", "Epipher", ""),
    "symploce": FigureNames("symploce", "complexio", "Symploke", ""),
    "anadiplosis": FigureNames("anadiplosis", "reduplicatio", "Anadiplose", "顶真"),
    "gradatio": FigureNames("gradatio", "gradatio, climax", "Klimax", "顶真"),
    "epizeuxis": FigureNames("epizeuxis", "geminatio", "Epizeuxis (Geminatio)", "连续反复"),
    "ploce": FigureNames("ploce", "ploce", "Ploke", "间隔反复"),
    "polyptoton": FigureNames("polyptoton", "traductio", "Polyptoton", ""),
    "polysyndeton": FigureNames("polysyndeton", "polysyndeton", "Polysyndeton", ""),
    "asyndeton": FigureNames("asyndeton", "dissolutio", "Asyndeton", ""),
    "alliteration": FigureNames("alliteration", "alliteratio", "Alliteration", ""),
    "antimetabole": FigureNames("antimetabole", "commutatio", "Antimetabole", "回环"),
    "chiasmus": FigureNames("chiasmus", "chiasmus", "Chiasmus", ""),
    "antithesis": FigureNames("antithesis", "antithesis", "Antithese", "对比"),
    "rhetorical_question": FigureNames(
        "rhetorical question", "interrogatio", "rhetorische Frage", "反问"
    ),
}

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
    review (Optional[Callable[[Doc], List[Any]]]): a doc's candidates below the
        threshold that its component kept for review, best first (None: no review list).
    review_finding (Optional[Callable[[Any, str, str, int], Item]]): one of them as
        plain data, from (item, document name, id, character offset).
    review_prefix (str): the letters of the review list's ids (R1, R2, ...).
    review_legend (str): what the report's "For review" part calls them.
    document_key (str): where ``--json`` also lists a document's findings of this kind
        under the document ("": only in the flat findings list).
    review_key (str): the same for its review list.
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
    review: Optional[Callable[[Doc], List[Any]]] = None
    review_finding: Optional[Callable[[Any, str, str, int], Item]] = None
    review_prefix: str = "R"
    review_legend: str = ""
    document_key: str = ""
    review_key: str = ""

    def ran(self, doc: Doc) -> bool:
        """RETURNS (bool): whether the doc was analysed for this kind."""
        return self.spans_key in doc.spans

    def number(self, doc: Doc) -> int:
        """RETURNS (int): its statistic for the doc (0 if not analysed)."""
        if not self.ran(doc):
            return 0
        return self.count(doc) if self.count is not None else len(self.items(doc))

    def candidates(self, doc: Doc) -> List[Any]:
        """RETURNS (List[Any]): the doc's review list ([] if none or not analysed)."""
        if self.review is None or not self.ran(doc):
            return []
        return self.review(doc)


# --- parallelism: the branches of one parallelism share its id and label ------------------


def parallelism_scores(parallelism: Any, key: str) -> Tuple[Optional[float], List[Optional[float]]]:
    """The score of a parallelism of the span group ``key`` and its branches' (the
    calibrated probability that it, or the branch, is exactly right; what the tagger
    keeps in the group's attrs, see parallelism/component.py), None where the tagger
    gave none (a pipeline without scores)."""
    doc = parallelism.branches[0].doc
    attrs = doc.spans[key].attrs if key in doc.spans else {}
    score = (attrs.get(SCORES_ATTR) or {}).get(parallelism.id)
    values = {
        (int(a), int(b)): float(v)
        for a, b, v in (attrs.get(BRANCH_SCORES_ATTR) or {}).get(parallelism.id, [])
    }
    branches = [values.get((branch.start, branch.end)) for branch in parallelism.branches]
    return (float(score) if score is not None else None), branches


def parallelism_item(
    kind: str, key: str, parallelism: Any, name: str, ident: str, base: int
) -> Item:
    """A parallelism (or a candidate for review) of the span group ``key`` as plain data:
    the branches in parts, the parallelism's score and its branches' (None: unscored)."""
    first, last = parallelism.branches[0], parallelism.branches[-1]
    score, branch_scores = parallelism_scores(parallelism, key)
    return {
        "kind": kind,
        "doc": name,
        "id": ident,
        "label": parallelism.label,
        "text": " | ".join(branch.text for branch in parallelism.branches),
        "score": score,
        "start_char": base + first.start_char,
        "end_char": base + last.end_char,
        "parts": [branch.text for branch in parallelism.branches],
        "branch_scores": branch_scores,
        "stratum": parallelism.stratum,
    }


def _parallelism_candidate(parallelism: Any, name: str, ident: str, base: int) -> Item:
    item = parallelism_item(
        "parallelism candidate", PARALLELISM_CANDIDATES_KEY, parallelism, name, ident, base
    )
    sources = parallelism.branches[0].doc.spans[PARALLELISM_CANDIDATES_KEY].attrs
    item["source"] = (sources.get(SOURCES_ATTR) or {}).get(parallelism.id, "")
    return item


def parallelism_review(doc: Doc) -> List[Any]:
    """The parallelism candidates the tagger kept for review
    (``doc.spans["parallelism_candidates"]``), best first (its ranks c1, c2, ...)."""
    if PARALLELISM_CANDIDATES_KEY not in doc.spans:
        return []
    items = get_parallelisms(doc, PARALLELISM_CANDIDATES_KEY)
    scores = doc.spans[PARALLELISM_CANDIDATES_KEY].attrs.get(SCORES_ATTR) or {}

    def rank(item: Any) -> Tuple[float, int, str]:
        digits = item.id.lstrip("c")
        return (-float(scores.get(item.id, 0.0)), int(digits) if digits.isdigit() else 0, item.id)

    return sorted(items, key=rank)


def _parallelism_marks(parallelism: Any, ident: str) -> List[Item]:
    # untyped ("parallelism"): the id says it all, and short labels overlap less; the
    # scores in the tooltip
    typed = parallelism.label not in ("", "parallelism")
    label = f"{ident} {parallelism.label}" if typed else ident
    if parallelism.stratum > 1:
        label += f" (stratum {parallelism.stratum})"
    score, branch_scores = parallelism_scores(parallelism, PARALLELISM_KEY)
    title = label + (f" score {score:.2f}" if score is not None else "")
    marks = []
    for branch, value in zip(parallelism.branches, branch_scores):
        mark = {"start_token": branch.start, "end_token": branch.end, "label": label}
        if score is not None:
            mark["title"] = title + (f", this branch {value:.2f}" if value is not None else "")
        marks.append(mark)
    return marks


def span_finding(
    kind: str,
    name: str,
    ident: str,
    span: Span,
    base: int,
    score: Optional[float],
    parts: List[str],
    label: Optional[str] = None,
) -> Item:
    """The fields every finding of one span has (chiasmi, figures, intertext links): its
    kind, document, id, label (default: the span's), text, score (None: unscored),
    characters in the whole file (the document starts at ``base``) and the parts the
    findings table shows."""
    return {
        "kind": kind,
        "doc": name,
        "id": ident,
        "label": span.label_ if label is None else label,
        "text": span.text,
        "score": float(score) if score is not None else None,
        "start_char": base + span.start_char,
        "end_char": base + span.end_char,
        "parts": parts,
    }


# --- chiasmus: the span A..A', its supporting words in the details -----------------------


def chiasmus_item(kind: str, name: str, ident: str, span: Span, base: int) -> Item:
    """A chiasmus (or a candidate for review) as plain data, the A B B' A' words in parts."""
    parts = [f"{w.label_}: {w.text}" for w in span._.chiasmus_support]
    return span_finding(kind, name, ident, span, base, span._.chiasmus_score, parts)


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


def chiasmus_review(doc: Doc) -> List[Span]:
    """The chiasmus candidates the finder kept for review: those of its candidates group
    that are not chiasmi (below the threshold), best first."""
    if CHIASMUS_CANDIDATES_KEY not in doc.spans:
        return []
    found = {span.id_ for span in doc.spans[CHIASMUS_KEY]}
    return [span for span in doc.spans[CHIASMUS_CANDIDATES_KEY] if span.id_ not in found]


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


def _source_name(link: Dict[str, Any]) -> str:
    """A linked source's id, "(allusion)" after it where the span does not quote it word
    for word (``intertext.units``)."""
    return link["source_id"] + (" (allusion)" if link.get("kind") == "allusion" else "")


def _intertext_finding(item: Any, name: str, ident: str, base: int) -> Item:
    span, links = item
    dense = any(link.get("similarity") for link in links)
    score = _best_score(links[0], dense) if links else None
    parts = [f"{_source_name(link)}: {link['source_text']}" for link in links[:3]]
    label = links[0]["source_id"] if links else span.label_
    return span_finding("intertext", name, ident, span, base, score, parts, label=label)


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
            "kind": link.get("kind", ""),
            "source_text": link["source_text"],
            "retrieval": link["retrieval_score"] * 100,
            "similarity": link["similarity"],
            "probability": link["probability"],
        }
        for link in links
    ]


# --- figures: one span per instance, first member to last; support words in the details ---


def figure_names(label: str) -> FigureNames:
    """RETURNS (FigureNames): a figure's names (a label without an entry: its English
    name is the label with spaces for underscores, the others "")."""
    return FIGURE_NAMES.get(label, FigureNames(label.replace("_", " "), "", "", ""))


def figure_name(label: str, lang: str = "") -> str:
    """The classical name of a figure and, for German and Chinese, its name in that
    language: "repetitio", "repetitio; Anapher", "gradatio, climax; 顶真" ("" for a label
    without one)."""
    names = figure_names(label)
    english = names.english.casefold()
    shown = [names.latin] if names.latin and names.latin.casefold() != english else []
    own = {"de": names.german, "zh": names.chinese}.get(lang, "")
    if own and own.casefold() != english:
        shown.append(own)
    return "; ".join(shown)


def figure_item(kind: str, name: str, ident: str, span: Span, base: int) -> Item:
    """A figure (or a candidate for review) as plain data: the fields of a finding, the
    support words and the members (texts); its one part (what the findings table shows)
    is the support words."""
    support = [word.text for word in span._.figure_support]
    item = span_finding(kind, name, ident, span, base, span._.figure_score, [" · ".join(support)])
    item["support"] = support
    item["members"] = [member.text for member in span._.figure_members]
    return item


def _figure_title(span: Span, ident: str) -> str:
    name = figure_name(span.label_, span.doc.lang_)
    score = span._.figure_score
    return (
        f"{ident} {figure_names(span.label_).english}"
        + (f" ({name})" if name else "")
        + (f" {score:.2f}" if score is not None else "")
    )


def _figure_marks(span: Span, ident: str) -> List[Item]:
    # the label short (id and figure); the classical name and the score in the tooltip
    return [
        {
            "start_token": span.start,
            "end_token": span.end,
            "label": f"{ident} {figure_names(span.label_).english}",
            "title": _figure_title(span, ident),
        }
    ]


def _figure_details(span: Span, ident: str, shown: int = FIGURE_SHOWN) -> List[Item]:
    """One line: the figure's label, classical name and score, and its words with the
    support (repeated, linking or alliterating words) marked; a span longer than twice
    ``shown`` tokens shows its two ends ("text", "support" per part, text with its
    whitespace)."""
    doc = span.doc
    support = set()
    for word in span._.figure_support:
        support.update(range(word.start, word.end))
    tokens = list(span)
    if len(tokens) > 2 * shown:
        tokens = tokens[:shown] + [None] + tokens[-shown:]  # type: ignore[list-item]
    parts = [
        {"text": "… ", "support": False}
        if token is None
        else {"text": token.text_with_ws, "support": token.i in support}
        for token in tokens
    ]
    return [
        {
            "label": f"{ident} {figure_names(span.label_).english}",
            "name": figure_name(span.label_, doc.lang_),
            "score": span._.figure_score,
            "parts": parts,
        }
    ]


def _figure_count(doc: Doc) -> int:
    # above the threshold, also those past the finder's bound (a degenerate text)
    group = doc.spans[FIGURES_KEY]
    return len(group) + int(group.attrs.get("figure_dropped", 0))


FINDING_KINDS: List[FindingKind] = [
    FindingKind(
        name="parallelism",
        legend="parallelism branches",
        prefix="P",
        color="#7aecec",
        spans_key=PARALLELISM_KEY,
        stat="parallelisms",
        items=lambda doc: list(get_parallelisms(doc)),
        finding=lambda p, name, ident, base: parallelism_item(
            "parallelism", PARALLELISM_KEY, p, name, ident, base
        ),
        marks=_parallelism_marks,
        review=parallelism_review,
        review_finding=_parallelism_candidate,
        review_prefix="PR",
        review_legend="parallelism candidates below the threshold",
        review_key="parallelism_candidates",
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
        review=chiasmus_review,
        review_finding=lambda span, name, ident, base: chiasmus_item(
            "review", name, ident, span, base
        ),
        review_prefix="R",
        review_legend="chiasmus candidates below the threshold",
    ),
    FindingKind(
        name="figures",
        legend="figures",
        prefix="F",
        color="#b5e48c",
        spans_key=FIGURES_KEY,
        stat="figure_count",
        items=lambda doc: list(doc.spans[FIGURES_KEY]),
        finding=lambda span, name, ident, base: figure_item("figures", name, ident, span, base),
        marks=_figure_marks,
        count=_figure_count,
        details=_figure_details,
        review=lambda doc: list(doc.spans.get(FIGURE_CANDIDATES_KEY, [])),
        review_finding=lambda span, name, ident, base: figure_item(
            "figure candidate", name, ident, span, base
        ),
        review_prefix="FR",
        review_legend="figure candidates below their threshold",
        document_key="figures",
        review_key="figure_candidates",
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
