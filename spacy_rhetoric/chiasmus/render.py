"""displaCy rendering of chiasmi: each chiasmus is a span A..A' labelled
"C<n> <type> <score>", and its supporting words are marked as single-token spans
labelled with their role ("C<n> A", "C<n> B", ...). A and A' share one colour, B and B'
another, so the crosswise pattern shows at a glance."""

from typing import Dict, List, Optional

from spacy import displacy
from spacy.tokens import Doc

from ..displacy_spans import PALETTE, manual_doc, manual_span

ROLE_COLORS = {"A": "#feca74", "B": "#7aecec", "C": "#bfeeb7"}


def chiasmus_render_data(doc: Doc, spans_key: str = "chiasmus") -> Dict:
    """The manual displaCy "span" data of a doc's chiasmi.

    doc (Doc): a doc with chiasmi in ``doc.spans[spans_key]``.
    spans_key (str): the group of the A..A' spans.
    RETURNS (Dict): {"text", "tokens", "spans", "title"} for displacy.render(manual=True).
    """
    spans: List[Dict] = []
    group = doc.spans[spans_key] if spans_key in doc.spans else []
    for n, span in enumerate(group, start=1):
        score = span._.chiasmus_score
        label = f"C{n} {span.label_}" + (f" {score:.2f}" if score is not None else "")
        spans.append(manual_span(span, label))
        for word in span._.chiasmus_support:
            spans.append(manual_span(word, f"C{n} {word.label_}"))
    return manual_doc(doc, spans)


def render(
    doc: Doc,
    spans_key: str = "chiasmus",
    page: bool = False,
    options: Optional[Dict] = None,
) -> str:
    """Render a doc's chiasmi as HTML with displaCy's span visualizer.

    doc (Doc): the doc.
    spans_key (str): the group of the A..A' spans.
    page (bool): return a complete HTML page rather than a fragment.
    options (Optional[Dict]): extra displaCy options.
    RETURNS (str): the HTML.
    """
    data = chiasmus_render_data(doc, spans_key)
    colors = {}
    for span in data["spans"]:
        number, _, rest = span["label"].partition(" ")
        role = rest.rstrip("'")
        if role in ROLE_COLORS:
            colors[span["label"]] = ROLE_COLORS[role]
        else:
            colors[span["label"]] = PALETTE[(int(number[1:]) + 2) % len(PALETTE)]
    render_options = {"colors": colors}
    render_options.update(options or {})
    return displacy.render(
        data, style="span", manual=True, page=page, options=render_options, jupyter=False
    )
