"""Self-contained HTML pages from plain data: the analysis report (also the demo's) and
the results page. One Jinja2 base template (``templates/base.html``) serves both;
displaCy renders the spans. Rendering only: what is shown is computed in ``findings``
and ``results``."""

import datetime
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from spacy import displacy

from .findings import (
    Analysis,
    displacement_histogram,
    document_findings,
    document_review,
    document_stats,
    document_views,
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


def displacy_markup(view: Dict[str, Any]) -> Markup:
    """displaCy's "span" rendering of one view (see ``findings.document_views``).

    view (Dict[str, Any]): manual span data with its "colors".
    RETURNS (Markup): the HTML, safe to insert.
    """
    data = {key: view[key] for key in ("text", "tokens", "spans")}
    options = {"colors": view.get("colors", {})}
    return Markup(displacy.render(data, style="span", manual=True, options=options, jupyter=False))


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The package's template environment (autoescaped; ``displacy`` filter)."""
    env = Environment(
        loader=PackageLoader("spacy_rhetoric.analysis", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=False,
    )
    env.filters["displacy"] = displacy_markup
    return env


def render_page(template: str, **context: Any) -> str:
    """Render one of the package's templates.

    template (str): its file name, e.g. "analysis.html".
    context: the template's variables.
    RETURNS (str): the page.
    """
    return environment().get_template(template).render(**context)


def histogram_drawing(
    data: Optional[Dict[str, Any]], width: int = 640, height: int = 200
) -> Optional[Dict[str, Any]]:
    """The geometry of the displacement histogram's SVG bar chart: the share of edges
    per displacement, the boundary bins holding the clipped longer edges.

    data (Optional[Dict[str, Any]]): ``findings.displacement_histogram``'s result.
    RETURNS (Optional[Dict[str, Any]]): bars and axes (None: no parsed edges).
    """
    if not data or not sum(data["counts"]):
        return None
    counts = data["counts"]
    total = sum(counts)
    top = max(counts) / total
    margin, bottom = 30, 20
    step = (width - margin) / len(counts)
    bars = []
    for i, (value, count) in enumerate(zip(data["support"], counts)):
        share = count / total
        bar_height = (height - bottom - 10) * share / top
        x = margin + i * step
        bars.append(
            {
                "x": f"{x + 1:.1f}",
                "y": f"{height - bottom - bar_height:.1f}",
                "width": f"{step - 2:.1f}",
                "height": f"{bar_height:.1f}",
                "center": f"{x + step / 2:.1f}",
                "value": value,
                "count": count,
                "percent": f"{100 * share:.1f}",
                "tick": value % 2 == 0 or len(counts) <= 11,
            }
        )
    return {
        "width": width,
        "height": height,
        "margin": margin,
        "axis": height - bottom,
        "bars": bars,
        "top_percent": f"{100 * top:.0f}",
        "n_edges": data["n_edges"],
        "n_clipped": data["n_clipped"],
        "max_displacement": data["max_displacement"],
    }


def analysis_page(analysis: Analysis, title: str, note: Optional[str] = None) -> str:
    """The report of an analysis: components (what ran, what not and how to enable it),
    per-document statistics, the sortable findings table, the displacement histogram of
    the corpus, and per document the displaCy renderings.

    analysis (Analysis): the result of ``run.analyze_files`` (or several merged).
    title (str): the page title.
    note (Optional[str]): a line under the title.
    RETURNS (str): the self-contained HTML page.
    """
    documents = analysis.documents
    rendered = [
        {"name": d.name, "lang": d.lang, "views": document_views(d)}
        for d in documents
        if d.rendered
    ]
    return render_page(
        "analysis.html",
        title=title,
        note=note,
        notes=analysis.notes,
        skipped=analysis.skipped,
        stat_columns=STAT_COLUMNS,
        stats=[document_stats(d) for d in documents],
        findings=[item for d in documents for item in document_findings(d)],
        review=[item for d in documents for item in document_review(d)],
        histogram=histogram_drawing(displacement_histogram(documents)),
        rendered=rendered,
    )


def results_page(
    headline_header: Sequence[str],
    headlines: Sequence[Sequence[str]],
    files: Sequence[Dict[str, Any]],
    command: str,
) -> str:
    """The results page: the headline table, then every metrics file's values.

    headline_header (Sequence[str]): the headline table's columns.
    headlines (Sequence[Sequence[str]]): its rows.
    files (Sequence[Dict[str, Any]]): per file "path", "command", "rows" ([key, value])
        and "more" (values not shown).
    command (str): the command that collected them.
    RETURNS (str): the self-contained HTML page (no scripts, no external files).
    """
    return render_page(
        "results.html",
        title="spacy_rhetoric results",
        width="80em",
        headline_header=headline_header,
        headlines=headlines,
        files=files,
        command=command,
        today=datetime.date.today().isoformat(),
    )


__all__: List[str] = ["analysis_page", "histogram_drawing", "render_page", "results_page"]
