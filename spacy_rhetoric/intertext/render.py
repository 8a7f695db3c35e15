"""HTML rendering of intertext links: displaCy's span visualizer marks each linked
query span ("L1 verg. aen. 6.847 0.91"), and a table below lists every span's
sources with their text, retrieval score, similarity and link probability."""

import html
from typing import Dict, List, Optional

from spacy import displacy
from spacy.tokens import Doc

from ..displacy_spans import PALETTE, manual_doc, manual_span
from .component import SPANS_KEY, get_intertext_links


def _value(x: Optional[float]) -> str:
    return "" if x is None else f"{x:.2f}"


def intertext_render_data(doc: Doc, spans_key: str = SPANS_KEY) -> Dict:
    """The manual displaCy "span" data of a doc's intertext links (one label per span:
    its number, best source and that source's probability or similarity).

    RETURNS (Dict): {"text", "tokens", "spans", "title"} for displacy.render(manual=True).
    """
    spans: List[Dict] = []
    for n, (span, links) in enumerate(get_intertext_links(doc, spans_key), start=1):
        best = links[0] if links else None
        label = f"L{n}"
        if best is not None:
            score = best["probability"] if best["probability"] is not None else best["similarity"]
            label += f" {best['source_id']} {_value(score)}"
            if len(links) > 1:
                label += f" (+{len(links) - 1})"
        spans.append(manual_span(span, label))
    return manual_doc(doc, spans)


def links_table(doc: Doc, spans_key: str = SPANS_KEY) -> str:
    """An HTML table of every linked span's sources.

    RETURNS (str): the table (empty string if the doc has no links).
    """
    rows = []
    for n, (span, links) in enumerate(get_intertext_links(doc, spans_key), start=1):
        for link in links:
            rows.append(
                "<tr>"
                f"<td>L{n}</td><td>{html.escape(span.text)}</td>"
                f"<td>{html.escape(link['source_id'])}</td>"
                f"<td>{html.escape(link.get('kind', ''))}</td>"
                f"<td>{html.escape(link['source_text'])}</td>"
                f"<td>{_value(link['retrieval_score'] * 100)}</td>"
                f"<td>{_value(link['similarity'])}</td>"
                f"<td>{_value(link['probability'])}</td>"
                "</tr>"
            )
    if not rows:
        return ""
    head = (
        "<tr><th>span</th><th>query</th><th>source</th><th>kind</th><th>source text</th>"
        "<th>retrieval</th><th>similarity</th><th>probability</th></tr>"
    )
    return (
        '<table class="intertext-links" style="border-collapse:collapse;font-size:14px">'
        f"{head}{''.join(rows)}</table>"
    )


def render(
    doc: Doc,
    spans_key: str = SPANS_KEY,
    page: bool = False,
    options: Optional[Dict] = None,
) -> str:
    """Render a doc's intertext links as HTML: highlighted query spans, then the
    table of their sources.

    doc (Doc): a doc processed by ``intertext_matcher``.
    spans_key (str): the span group.
    page (bool): return a complete HTML page rather than a fragment.
    options (Optional[Dict]): extra displaCy options.
    RETURNS (str): the HTML.
    """
    data = intertext_render_data(doc, spans_key)
    colors = {span["label"]: PALETTE[i % len(PALETTE)] for i, span in enumerate(data["spans"])}
    render_options = {"colors": colors}
    render_options.update(options or {})
    markup = displacy.render(
        data, style="span", manual=True, options=render_options, page=False, jupyter=False
    )
    markup += links_table(doc, spans_key)
    if page:
        title = html.escape(data["title"] or "intertext links")
        return (
            f'<!DOCTYPE html><html lang="la"><head><meta charset="utf-8"><title>{title}'
            f"</title></head><body>{markup}</body></html>"
        )
    return markup
