"""Self-contained HTML reports of what the components found in a set of docs."""

import html
from typing import TYPE_CHECKING, Iterable, List, Optional, Sequence, Tuple

from spacy.tokens import Doc

from .parallelism.render import render as render_parallelisms
from .parallelism.spans import get_parallelisms

if TYPE_CHECKING:
    from .analyze import Analysis

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } .source { color: #666; font-size: 0.9em; }
"""


def parallelism_table(doc: Doc) -> str:
    """An HTML table of a doc's parallelisms: id, type, stratum and branch texts."""
    rows = []
    for parallelism in get_parallelisms(doc):
        branches = "<br>".join(html.escape(branch.text) for branch in parallelism.branches)
        rows.append(
            f"<tr><td>P{html.escape(parallelism.id)}</td><td>{html.escape(parallelism.label)}</td>"
            f"<td>{parallelism.stratum}</td><td>{len(parallelism)}</td><td>{branches}</td></tr>"
        )
    if not rows:
        return "<p>No parallelisms.</p>"
    header = "<tr><th>id</th><th>type</th><th>stratum</th><th>branches</th><th>text</th></tr>"
    return f"<table class='parallelisms'>{header}{''.join(rows)}</table>"


def html_page(
    title: str,
    sections: Iterable[Tuple[str, str]],
    note: Optional[str] = None,
    style: str = "",
    script: str = "",
) -> str:
    """Wrap (heading, HTML body) sections into one self-contained page.

    title (str): the page title.
    sections (Iterable[Tuple[str, str]]): (heading, HTML body) per section.
    note (Optional[str]): a line under the title.
    style (str): extra CSS.
    script (str): inline JavaScript run at the end of the body.
    RETURNS (str): the page.
    """
    parts = [f"<h1>{html.escape(title)}</h1>"]
    if note:
        parts.append(f"<p class='source'>{html.escape(note)}</p>")
    for heading, body in sections:
        parts.append(f"<h2>{html.escape(heading)}</h2>\n{body}")
    script_tag = f"<script>{script}</script>" if script else ""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}{style}</style></head>"
        f"<body>{''.join(parts)}{script_tag}</body></html>"
    )


def parallelism_sections(docs: Sequence[Doc], captions: Sequence[str]) -> List[Tuple[str, str]]:
    """Per doc: the displaCy rendering of its parallelisms and their table."""
    return [
        (caption, render_parallelisms(doc) + parallelism_table(doc))
        for doc, caption in zip(docs, captions)
    ]


def analysis_page(analysis: "Analysis", title: str, note: Optional[str] = None) -> str:
    """The report of an analysis: components (what ran, what not and how to enable it),
    per-document statistics, the sortable findings table, the displacement histogram of
    the corpus, and per document the displaCy renderings.

    analysis (Analysis): the result of analyze_files (or several merged).
    title (str): the page title.
    note (Optional[str]): a line under the title.
    RETURNS (str): the self-contained HTML page.
    """
    from . import report_sections as sections
    from .analyze import displacement_histogram, document_findings, document_stats

    documents = analysis.documents
    findings = [item for d in documents for item in document_findings(d)]
    rendered = [d for d in documents if d.rendered]
    shown = f"displaCy renderings below: {len(rendered)} of {len(documents)} documents"
    if len(rendered) < len(documents):
        shown += " (--max-rendered); the tables list every document and finding"
    shown = f"<p class='source rendered'>{shown}.</p>"
    parts = [("Components", sections.components_table(analysis.notes))]
    if analysis.skipped:
        parts.append(
            (f"Skipped files ({len(analysis.skipped)})", sections.skipped_table(analysis.skipped))
        )
    parts += [
        ("Documents", sections.stats_table([document_stats(d) for d in documents]) + shown),
        (f"Findings ({len(findings)})", sections.findings_table(findings)),
        (
            "Displacement histogram",
            "<div id='displacement-histogram'>"
            + sections.svg_histogram(displacement_histogram(documents))
            + "</div>",
        ),
    ]
    for document in rendered:
        body = "<div class='document'>" + sections.document_section(document) + "</div>"
        parts.append((f"{document.name} ({document.lang})", body))
    return html_page(title, parts, note=note, style=sections.STYLE, script=sections.SORT_SCRIPT)
