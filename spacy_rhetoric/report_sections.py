"""The sections of the ``analyze`` report: component notes, per-document statistics, a
sortable findings table, a displacement histogram as inline SVG, and per document the
displaCy renderings of parallelisms, chiasmi and intertext links.

Everything is inline HTML/CSS/JS (no network, no plotting library)."""

import html
from typing import Any, Dict, List, Optional, Sequence

from spacy import displacy
from spacy.tokens import Doc

from .analyze import Document, Note
from .chiasmus.render import ROLE_COLORS, chiasmus_render_data
from .parallelism.render import PALETTE
from .parallelism.spans import DEFAULT_SPANS_KEY as PARALLELISM_KEY
from .parallelism.spans import get_parallelisms

SORT_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var asc = th.getAttribute('data-dir') !== 'asc';
      table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
      th.setAttribute('data-dir', asc ? 'asc' : 'desc');
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute('data-value') || a.cells[col].textContent;
        var y = b.cells[col].getAttribute('data-value') || b.cells[col].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var cmp = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? cmp : -cmp;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

STYLE = """
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[data-dir=asc]::after { content: " \\25B2"; }
table.sortable th[data-dir=desc]::after { content: " \\25BC"; }
.ran { color: #1a7f37; } .skipped { color: #b35900; font-weight: bold; }
td span.ran, td span.skipped { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
svg.histogram rect { fill: #7aa6d8; } svg.histogram text { font-size: 10px; fill: #333; }
.document { border-top: 2px solid #ddd; margin-top: 2em; }
"""


def _cell(value: Any, digits: int = 3) -> str:
    if value is None:
        return "<td class='num' data-value='-1'>–</td>"
    if isinstance(value, float):
        return f"<td class='num' data-value='{value}'>{value:.{digits}f}</td>"
    if isinstance(value, int):
        return f"<td class='num' data-value='{value}'>{value}</td>"
    return f"<td>{html.escape(str(value))}</td>"


def components_table(notes: Sequence[Note]) -> str:
    """A table of what ran and what did not (with the reason and the fix)."""
    rows = []
    for note in notes:
        status = (
            "<span class='ran'>ran</span>" if note.ran else "<span class='skipped'>not run</span>"
        )
        rows.append(
            f"<tr><td>{html.escape(note.lang)}</td><td>{html.escape(note.component)}</td>"
            f"<td>{status}</td><td>{html.escape(note.detail)}</td></tr>"
        )
    header = "<tr><th>lang</th><th>component</th><th>status</th><th>details</th></tr>"
    return (
        f"<table class='components'><thead>{header}</thead><tbody>{''.join(rows)}</tbody></table>"
    )


STAT_COLUMNS = (
    "doc",
    "lang",
    "tokens",
    "sentences",
    "parallelisms",
    "chiasmi",
    "intertext",
    "edges",
    "med",
)


def stats_table(stats: Sequence[Dict[str, Any]]) -> str:
    """A sortable table of per-document statistics."""
    header = "".join(f"<th>{'MED' if c == 'med' else c}</th>" for c in STAT_COLUMNS)
    rows = [
        "<tr>" + "".join(_cell(row.get(column)) for column in STAT_COLUMNS) + "</tr>"
        for row in stats
    ]
    return (
        f"<table class='sortable stats'><thead><tr>{header}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def findings_table(findings: Sequence[Dict[str, Any]]) -> str:
    """A sortable table of all findings (click a header to sort by it)."""
    if not findings:
        return "<p>No findings.</p>"
    header = "".join(
        f"<th>{name}</th>"
        for name in ("kind", "doc", "id", "type", "score", "char", "text", "parts")
    )
    rows = []
    for item in findings:
        parts = "<br>".join(html.escape(p) for p in item.get("parts", []))
        rows.append(
            f"<tr class='finding {item['kind']}'>{_cell(item['kind'])}{_cell(item['doc'])}"
            f"{_cell(item['id'])}{_cell(item['label'])}{_cell(item['score'])}"
            f"{_cell(item['start_char'])}{_cell(item['text'])}<td>{parts}</td></tr>"
        )
    return (
        f"<table class='sortable findings' id='findings'><thead><tr>{header}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def svg_histogram(data: Optional[Dict[str, Any]], width: int = 640, height: int = 200) -> str:
    """The displacement histogram as an inline SVG bar chart (share of edges per
    displacement; the boundary bins hold the clipped longer edges)."""
    if not data or not sum(data["counts"]):
        return "<p>No parsed edges (no dependency parser ran).</p>"
    support, counts = data["support"], data["counts"]
    total = sum(counts)
    top = max(counts) / total
    margin, bottom = 30, 20
    bar = (width - margin) / len(counts)
    parts = [
        f"<svg class='histogram' xmlns='http://www.w3.org/2000/svg' width='{width}' "
        f"height='{height}' role='img' aria-label='edge displacement histogram'>"
    ]
    for i, (value, count) in enumerate(zip(support, counts)):
        share = count / total
        h = (height - bottom - 10) * share / top
        x = margin + i * bar
        y = height - bottom - h
        parts.append(
            f"<rect x='{x + 1:.1f}' y='{y:.1f}' width='{bar - 2:.1f}' height='{h:.1f}' "
            f"data-displacement='{value}' data-count='{count}'><title>displacement {value}: "
            f"{count} edges ({100 * share:.1f}%)</title></rect>"
        )
        if value % 2 == 0 or len(counts) <= 11:
            parts.append(
                f"<text x='{x + bar / 2:.1f}' y='{height - 6}' text-anchor='middle'>{value}</text>"
            )
    parts.append(
        f"<text x='2' y='12'>{100 * top:.0f}%</text>"
        f"<line x1='{margin}' y1='{height - bottom}' x2='{width}' y2='{height - bottom}' "
        "stroke='#333'/>"
    )
    parts.append("</svg>")
    caption = (
        f"<p class='source'>{data['n_edges']} edges; displacement = dependent position − head "
        f"position; |d| &gt; {data['max_displacement']} ({data['n_clipped']} edges) counted in "
        "the boundary bins.</p>"
    )
    return "".join(parts) + caption


def render_parallelisms(doc: Doc, first: int = 1) -> str:
    """displaCy rendering of a chunk's parallelisms, numbered from ``first`` on (as in
    the findings table), one colour per parallelism.

    RETURNS (str): the HTML.
    """
    spans, colors = [], {}
    for n, parallelism in enumerate(get_parallelisms(doc), start=first):
        label = f"P{n} {parallelism.label}"
        if parallelism.stratum > 1:
            label += f" (stratum {parallelism.stratum})"
        colors[label] = PALETTE[(n - 1) % len(PALETTE)]
        for branch in parallelism.branches:
            spans.append({"start_token": branch.start, "end_token": branch.end, "label": label})
    data = {"text": doc.text, "tokens": [t.text for t in doc], "spans": spans}
    return displacy.render(
        data, style="span", manual=True, options={"colors": colors}, jupyter=False
    )


def render_chiasmi(doc: Doc, first: int = 1) -> str:
    """displaCy rendering of a chunk's chiasmi, numbered from ``first`` on (as in the
    findings table): the A..A' span and its supporting words A, B, B', A'.

    RETURNS (str): the HTML.
    """
    data = chiasmus_render_data(doc)
    colors = {}
    for span in data["spans"]:
        number, _, rest = span["label"].partition(" ")
        n = int(number[1:]) + first - 1
        span["label"] = f"C{n} {rest}"
        role = rest.rstrip("'")
        colors[span["label"]] = ROLE_COLORS.get(role, PALETTE[(n + 2) % len(PALETTE)])
    return displacy.render(
        data, style="span", manual=True, options={"colors": colors}, jupyter=False
    )


def _render_intertext(doc: Doc) -> str:
    from .intertext.render import render

    return render(doc)


def document_section(document: Document, max_tokens: int = 20000) -> str:
    """One document: displaCy renderings of its parallelisms, chiasmi and intertext
    links (of the components that ran on it), up to ``max_tokens`` tokens (a
    summarised document: the renderings it kept, "" if none)."""
    if document.summary is not None:
        return document.summary["html"] or ""
    parts: List[str] = []
    if document.caption:
        parts.append(f"<p class='source'>{html.escape(document.caption)}</p>")
    shown = 0
    par, chi, inter = [], [], []
    n_par = n_chi = 0  # running numbers, as in the findings table
    for doc in document.docs:
        if shown >= max_tokens:
            break
        shown += len(doc)
        # a component that ran leaves its span group, even when it found nothing
        if PARALLELISM_KEY in doc.spans:
            par.append(render_parallelisms(doc, n_par + 1))
            n_par += len(get_parallelisms(doc))
        if "chiasmus" in doc.spans:
            chi.append(render_chiasmi(doc, n_chi + 1))
            n_chi += len(doc.spans["chiasmus"])
        if "intertext" in doc.spans:
            inter.append(_render_intertext(doc))
    if shown < document.n_tokens:
        parts.append(
            f"<p class='skipped'>Rendered the first {shown} of {document.n_tokens} tokens; "
            "the tables list every finding.</p>"
        )
    if par:
        parts.append(
            "<h3>Parallelisms</h3><div class='parallelism-render'>" + "".join(par) + "</div>"
        )
    else:
        parts.append("<h3>Parallelisms</h3><p>Not run on this document (see Components).</p>")
    if chi:
        parts.append("<h3>Chiasmi</h3><div class='chiasmus-render'>" + "".join(chi) + "</div>")
    else:
        parts.append("<h3>Chiasmi</h3><p>Not run on this document (see Components).</p>")
    if inter:
        parts.append("<h3>Intertext</h3><div class='intertext-render'>" + "".join(inter) + "</div>")
    return "".join(parts)


def skipped_table(skipped: Sequence[Dict[str, str]]) -> str:
    """A table of the input files left out, with the reason (and the fix)."""
    rows = [
        f"<tr><td>{html.escape(item['path'])}</td><td>{html.escape(item['reason'])}</td></tr>"
        for item in skipped
    ]
    return (
        "<table class='skipped-files'><thead><tr><th>file</th><th>reason</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
