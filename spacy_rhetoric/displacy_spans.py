"""displaCy's manual "span" data and the palette, shared by the renderings of every
capability (parallelism, chiasmus, intertext): one place below them all, so that no
capability package imports another's to draw its spans."""

from typing import Dict, List

from spacy.tokens import Doc, Span

PALETTE = [
    "#7aecec",
    "#bfeeb7",
    "#feca74",
    "#ff9561",
    "#aa9cfc",
    "#c887fb",
    "#9cc9cc",
    "#ffeb80",
    "#ff8197",
    "#f0d0ff",
    "#bfe1d9",
    "#e4e7d2",
    "#c9d8ef",
    "#f4c7a1",
]


def manual_span(span: Span, label: str) -> Dict:
    """One span of displaCy's manual "span" data.

    span (Span): the span to mark.
    label (str): its label.
    RETURNS (Dict): token and character offsets plus the label.
    """
    return {
        "start_token": span.start,
        "end_token": span.end,
        "start": span.start_char,
        "end": span.end_char,
        "label": label,
    }


def manual_doc(doc: Doc, spans: List[Dict]) -> Dict:
    """displaCy's manual "span" data of a doc with the given spans.

    RETURNS (Dict): {"text", "tokens", "spans", "title"} for displacy.render(manual=True).
    """
    title = doc.user_data.get("title") if isinstance(doc.user_data, dict) else None
    return {
        "text": doc.text,
        "tokens": [token.text for token in doc],
        "spans": spans,
        "title": title,
    }
