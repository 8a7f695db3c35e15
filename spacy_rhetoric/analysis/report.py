"""Self-contained HTML pages from plain data: the analysis report (also the demo's) and
the results page. One Jinja2 base template (``templates/base.html``) serves both;
the text is shown with its findings marked as displaCy's span visualizer marks spans
(``text_markup``). Rendering only: what is shown is computed in ``findings`` and
``results``; the kinds of finding are ``kinds.FINDING_KINDS``."""

import datetime
import html
import platform
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import spacy
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from ..about import __version__
from .findings import (
    Analysis,
    Note,
    displacement_histogram,
    document_findings,
    document_passages,
    document_ran,
    document_reviews,
    document_stats,
    document_views,
)
from .kinds import FIGURE_NAMES, FINDING_KINDS, figure_name, figure_names

# how the per-document statistics call a column (default: its key)
STAT_HEADERS = {"med": "MED", "figure_count": "figures"}


def stat_columns() -> Tuple[str, ...]:
    """RETURNS (Tuple[str, ...]): the columns of the per-document statistics."""
    kinds = tuple(kind.stat for kind in FINDING_KINDS)
    return ("doc", "lang", "tokens", "sentences", *kinds, "edges", "med")


# the review lists' columns after the score (fields of their items)
REVIEW_COLUMNS: Dict[str, Tuple[str, ...]] = {"parallelism": ("source",)}
# what the provenance table says about where a model was found (models.SOURCES)
SOURCE_NAMES = {
    "option": "given with --model",
    "env": "from $SPACY_RHETORIC_MODELS",
    "package": "shipped in spacy_rhetoric",
    "cache": "built (model cache)",
    "installed": "installed package",
}
# the figures whose support is one repeated word or phrase: a passage row names it
REPEATED_WORD = ("anaphora", "epiphora", "symploce", "anadiplosis", "epizeuxis", "ploce")
# the marks under a token (in em of the text): the first row's top, the step per row
MARK_TOP, MARK_STEP = 1.5, 0.95


def mark_rows(spans: Sequence[Dict[str, Any]]) -> List[int]:
    """The row of each span's mark under the text: spans in order of start (the longer
    first), each in the lowest row that no overlapping span placed before it takes.

    spans (Sequence[Dict[str, Any]]): {"start_token", "end_token", ...}, sorted.
    RETURNS (List[int]): the row of each span (0: the first under the text).
    """
    rows: List[int] = []
    active: List[Tuple[int, int]] = []  # (end_token, row) of the spans still open
    for span in spans:
        active = [(end, row) for end, row in active if end > span["start_token"]]
        taken = {row for _, row in active}
        row = next(i for i in range(len(active) + 1) if i not in taken)
        rows.append(row)
        active.append((span["end_token"], row))
    return rows


def merge_marks(chunk: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The marks of one chunk, one per set of words: the spans on exactly the same
    tokens (an epiphora and a ploce on the same words, a branch that is also a figure)
    are one mark that names them all, in order of start (the longer first).

    chunk (Dict[str, Any]): "spans" and "kinds" (see ``text_markup``).
    RETURNS (List[Dict[str, Any]]): {"start_token", "end_token", "members"}, members
        {"label", "title", "kind"} in the order of the chunk's spans.
    """
    marks: Dict[Tuple[int, int], Dict[str, Any]] = {}
    for span in chunk["spans"]:
        key = (span["start_token"], span["end_token"])
        mark = marks.setdefault(key, {"start_token": key[0], "end_token": key[1], "members": []})
        member = {
            "label": span["label"],
            "title": span.get("title", span["label"]),
            "kind": chunk["kinds"][span["label"]],
        }
        if member not in mark["members"]:  # a label is a finding's: once per mark
            mark["members"].append(member)
    return sorted(marks.values(), key=lambda m: (m["start_token"], -m["end_token"]))


def _mark_html(mark: Dict[str, Any], row: int, start: bool, on: bool) -> str:
    """The bar of one mark under one token, with its label where it starts: the bar and
    the label in the colour of its kind (CSS class ``k-<kind>``); a mark of several
    kinds has a slice of the bar and a part of the label per kind, each hidden with its
    kind's filter."""
    members = mark["members"]
    kinds = list(dict.fromkeys(member["kind"] for member in members))
    style = f"top:{MARK_TOP + MARK_STEP * row:.2f}em"
    flags = (" start" if start else "") + (" on" if on else "")
    if len(kinds) == 1:
        kind = html.escape(kinds[0])
        label = ""
        if start:
            title = html.escape(" · ".join(member["title"] for member in members))
            text = html.escape(" · ".join(member["label"] for member in members))
            label = f"<span class='mark-label k-{kind}' title='{title}'>{text}</span>"
        return f"<span class='mark k-{kind}{flags}' style='{style}'>{label}</span>"
    slices = "".join(f"<span class='slice k-{html.escape(kind)}'></span>" for kind in kinds)
    label = ""
    if start:
        parts = "".join(
            f"<span class='k-{html.escape(member['kind'])}' title='{html.escape(member['title'])}'>"
            f"{html.escape(member['label'])}</span>"
            for member in members
        )
        label = f"<span class='mark-label mixed'>{parts}</span>"
    return f"<span class='mark mixed{flags}' style='{style}'>{slices}{label}</span>"


def text_markup(chunk: Dict[str, Any]) -> Markup:
    """One chunk's text with its findings marked, in the manner of displaCy's span
    visualizer (a coloured bar under the tokens of each span, stacked where spans
    overlap, the label at its start), but with the text's own whitespace (no space
    before punctuation or between Chinese words; line breaks kept), one mark for the
    findings on exactly the same words (``merge_marks``: one label naming them all, not
    a tower of labels) and each mark in the CSS class ``k-<kind>`` of its kind, which
    the report's legend colours and its filters hide. The report's stylesheet lays it
    out.

    chunk (Dict[str, Any]): "tokens", "spaces" (each token's trailing whitespace),
        "spans" ({"start_token", "end_token", "label"}, optionally "title": the label's
        tooltip, default the label) and "kinds" (label -> kind); see
        ``findings.text_view``.
    RETURNS (Markup): the HTML, safe to insert.
    """
    tokens, spaces = chunk["tokens"], chunk["spaces"]
    marks = merge_marks(chunk)
    covering: List[List[Tuple[Dict[str, Any], int]]] = [[] for _ in tokens]
    for mark, row in zip(marks, mark_rows(marks)):
        for i in range(mark["start_token"], mark["end_token"]):
            covering[i].append((mark, row))

    def bars(i: int, joined: bool) -> str:
        """The bars under token ``i`` and the label of each mark that starts there; the
        bars of the marks that go on reach under the whitespace after it (``joined``)."""
        return "".join(
            _mark_html(mark, row, mark["start_token"] == i, joined and mark["end_token"] > i + 1)
            for mark, row in covering[i]
        )

    last = len(tokens)
    while last and not (tokens[last - 1] + spaces[last - 1]).strip():
        last -= 1  # the chunk's trailing blank lines
    parts = []
    for i in range(last):
        text = html.escape(tokens[i])
        space = html.escape(spaces[i]) if i < last - 1 else ""
        if not covering[i] or not text.strip():  # whitespace tokens carry no bars
            parts.append(text + space)
            continue
        height = f"{MARK_TOP + MARK_STEP * (1 + max(row for _, row in covering[i])):.2f}em"
        under = bars(i, joined=bool(space) and "\n" not in space)
        parts.append(f"<span class='tok' style='height:{height}'>{text}{under}</span>{space}")
    return Markup(f"<div class='spans'>{''.join(parts)}</div>")


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The package's template environment (autoescaped; ``marked`` filter: see
    ``text_markup``)."""
    env = Environment(
        loader=PackageLoader("spacy_rhetoric.analysis", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=False,
    )
    env.filters["marked"] = text_markup
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


def public_detail(note: Note) -> str:
    """A note's detail as the HTML report shows it: the directory the model came from
    (the terminal and the JSON give it) is named by the model."""
    detail = note.detail
    if note.path:
        detail = detail.replace(note.path, note.model or Path(note.path).name)
    return detail


def provenance_rows(notes: Sequence[Note]) -> List[Dict[str, Any]]:
    """The provenance table: per language and component, whether it ran, the model with
    its package name and version, where it was found, its licence, and the detail (what
    ran, or why not and the command that enables it); no filesystem path."""
    return [
        {
            "lang": note.lang,
            "component": note.component,
            "ran": note.ran,
            "model": note.model,
            "package": note.package,
            "source": SOURCE_NAMES.get(note.source, note.source),
            "licence": note.licence,
            "detail": public_detail(note),
        }
        for note in notes
    ]


def not_run_summary(notes: Sequence[Note]) -> List[Dict[str, Any]]:
    """What did not run, by component: [{"component", "langs"}], in the order of the
    notes (the report's short line near the top; the reasons are in the provenance)."""
    langs: Dict[str, List[str]] = defaultdict(list)
    for note in notes:
        if not note.ran and note.lang not in langs[note.component]:
            langs[note.component].append(note.lang)
    return [{"component": c, "langs": found} for c, found in langs.items() if found]


def figure_counts(documents: Sequence[Any], notes: Sequence[Note]) -> Optional[Dict[str, Any]]:
    """The "Figures" section: per document the number of each figure (above its
    threshold) and of the candidates kept for review, the figures that occur as columns
    (in the handbooks' order), and the names of every figure in English, Latin, German
    and Chinese (``kinds.FIGURE_NAMES``).

    documents (Sequence[Any]): the analysed documents (``findings.Document``).
    notes (Sequence[Note]): what ran: the documents figure_finder ran on are counted.
    RETURNS (Optional[Dict[str, Any]]): {"columns": [{"label", "english", "latin",
        "german", "chinese", "title"}], "rows": [{"doc", "lang", "counts": {label: n},
        "total", "review"}], "totals", "total", "review", "names" (every figure, as the
        columns)} (None: figure_finder ran for no language).
    """
    langs = {note.lang for note in notes if note.component == "figures" and note.ran}
    rows = []
    for document in documents:
        if document.lang not in langs or not document_ran(document)["figures"]:
            continue
        counts: Dict[str, int] = defaultdict(int)
        for item in document_findings(document):
            if item["kind"] == "figures":
                counts[item["label"]] += 1
        review = len(document_reviews(document).get("figures", []))
        total = document_stats(document)["figure_count"]
        rows.append({"doc": document.name, "lang": document.lang, "counts": dict(counts),
                     "total": total, "review": review})  # fmt: skip
    if not rows:
        return None
    seen = {label for row in rows for label in row["counts"]}
    order = [label for label in FIGURE_NAMES if label in seen] + sorted(seen - set(FIGURE_NAMES))
    return {
        "columns": [_figure_column(label) for label in order],
        "rows": rows,
        "totals": {label: sum(row["counts"].get(label, 0) for row in rows) for label in order},
        "total": sum(row["total"] for row in rows),
        "review": sum(row["review"] for row in rows),
        "names": [_figure_column(label) for label in FIGURE_NAMES],
    }


def _figure_column(label: str) -> Dict[str, str]:
    """A figure's label, its names (English, Latin, German, Chinese) and the tooltip of
    its column: the names other than the English one."""
    names = figure_names(label)
    others = [name for name in (names.latin, names.german, names.chinese) if name]
    return {"label": label, **names._asdict(), "title": "; ".join(others)}


def finding_name(item: Dict[str, Any]) -> str:
    """What a passage row calls one of its findings: the figure ("anaphora", "rhetorical
    question"; a figure of repetition of one word: 'anaphora of "any"'), "parallelism"
    (with its type), the chiasmus's label, or the source an intertext link echoes."""
    kind, label = item["kind"], item["label"]
    if kind == "figures":
        name = figure_names(label).english
        words = {word.casefold() for word in item.get("support", [])}
        if label in REPEATED_WORD and len(words) == 1 and len(item["support"]) > 1:
            name += f' of "{item["support"][0]}"'
        return name
    if kind == "parallelism":
        return "parallelism" + (f" ({label})" if label not in ("", "parallelism") else "")
    if kind == "intertext":
        return f"intertext: {label}"
    return label


def passage_rows(documents: Sequence[Any]) -> List[Dict[str, Any]]:
    """The findings table: one row per passage (``findings.document_passages``: the
    findings that share at least half of the smaller one's words), each naming every
    finding on it with its id, kind, name, score and parts; the row's score is its best.

    documents (Sequence[Any]): the analysed documents (``findings.Document``).
    RETURNS (List[Dict[str, Any]]): {"doc", "lang", "number", "anchor", "start_char",
        "text", "score", "kinds", "findings"}, findings {"id", "anchor", "kind",
        "name", "title", "score", "parts", "branch_scores"}; "anchor" is the HTML id
        of the row (passage-<document>-<number>) or of the finding (<document>-<id>).
    """
    rows = []
    for n, document in enumerate(documents, start=1):
        found = {item["id"]: item for item in document_findings(document)}
        for passage in document_passages(document):
            members = []
            for ident in passage["ids"]:
                item = found[ident]
                title = figure_name(item["label"], document.lang)
                members.append(
                    {
                        "id": ident,
                        "anchor": f"finding-{n}-{ident}",
                        "kind": item["kind"],
                        "name": finding_name(item),
                        "title": title if item["kind"] == "figures" else "",
                        "score": item["score"],
                        "parts": item["parts"],
                        "branch_scores": item.get("branch_scores"),
                    }
                )
            scores = [member["score"] for member in members if member["score"] is not None]
            rows.append(
                {
                    "doc": document.name,
                    "lang": document.lang,
                    "number": passage["passage"],
                    "anchor": f"passage-{n}-{passage['passage']}",
                    "start_char": passage["start_char"],
                    "text": passage["text"],
                    "score": max(scores) if scores else None,
                    "kinds": list(dict.fromkeys(passage["kinds"])),
                    "findings": members,
                }
            )
    return rows


def review_sections(documents: Sequence[Any]) -> List[Dict[str, Any]]:
    """The "For review" part: per kind of finding with a review list (chiasmus, figures)
    that kept any candidate, its heading and items (``findings.document_reviews``)."""
    sections = []
    for kind in FINDING_KINDS:
        if kind.review is None:
            continue
        items = [item for d in documents for item in document_reviews(d).get(kind.name, [])]
        if items:
            sections.append(
                {
                    "name": kind.name,
                    "legend": kind.review_legend,
                    "items": items,
                    "extra": REVIEW_COLUMNS.get(kind.name, ()),
                }
            )
    return sections


def parallelism_score_note(notes: Sequence[Note]) -> str:
    """The line under the legend that says what the parallelism scores mean and what
    dev data they were calibrated on, per language (the tagger's cfg, see
    ``pipelines.parallelism_calibration``); "" where no tagger that scores ran."""
    by: Dict[str, List[str]] = defaultdict(list)
    for note in notes:
        if note.component == "parallelism" and note.ran and note.calibration:
            if note.lang not in by[note.calibration]:
                by[note.calibration].append(note.lang)
    if not by:
        return ""
    raw = by.pop("uncalibrated", [])
    meaning = (
        "Parallelism scores: the probability that a parallelism is exactly right (every "
        "branch to the token), a branch's score that the branch is"
    )
    if not by:
        return (
            f"Parallelism scores are uncalibrated ({', '.join(raw)}): the tagger's raw "
            "confidence (its CRF's marginals and its ensemble's agreement), which ranks the "
            "parallelisms but is not a probability."
        )
    calibrated = "; ".join(f"{data} for {', '.join(langs)}" for data, langs in by.items())
    text = f"{meaning}; calibrated on {calibrated}."
    if raw:
        text += (
            f" Uncalibrated for {', '.join(raw)}: the tagger's raw confidence, which ranks "
            "the parallelisms but is not a probability."
        )
    return text


def legend(documents: Sequence[Dict[str, Any]], findings: Sequence[Dict[str, Any]]) -> List[Dict]:
    """The legend of the text: per kind of finding its colour, its name, how many it
    found, and whether it ran on any rendered document."""
    counts: Dict[str, int] = defaultdict(int)
    for item in findings:
        counts[item["kind"]] += 1
    return [
        {
            "name": kind.name,
            "legend": kind.legend,
            "color": kind.color,
            "prefix": kind.prefix,
            "stat": kind.stat,
            "count": counts[kind.name],
            "ran": any(d["views"]["ran"].get(kind.name) for d in documents),
        }
        for kind in FINDING_KINDS
    ]


def analysis_page(analysis: Analysis, title: str, note: Optional[str] = None) -> str:
    """The report of an analysis, in the order a reader wants it: per document the text
    with every kind of finding marked (a legend with a filter per kind), then the
    per-document statistics, the sortable findings table, the chiasmus candidates for
    review and the displacement histogram of the corpus, and last, collapsed, the
    provenance: the components, their models' packages, versions and licences, what did
    not run and the command that enables it (named in a short line near the top). No
    filesystem path: those are in the JSON.

    analysis (Analysis): the result of ``run.analyze_files`` (or several merged).
    title (str): the page title.
    note (Optional[str]): a line under the title.
    RETURNS (str): the self-contained HTML page.
    """
    documents = analysis.documents
    rendered = [
        {"name": d.name, "lang": d.lang, "views": document_views(d), "stats": document_stats(d)}
        for d in documents
        if d.rendered
    ]
    findings = [item for d in documents for item in document_findings(d)]
    skipped = [
        {
            "name": Path(item["path"]).name,
            "reason": item["reason"].replace(item["path"], Path(item["path"]).name),
        }
        for item in analysis.skipped
    ]
    return render_page(
        "analysis.html",
        title=title,
        note=note,
        kinds=legend(rendered, findings),
        not_run=not_run_summary(analysis.notes),
        provenance=provenance_rows(analysis.notes),
        versions={
            "spacy_rhetoric": __version__,
            "spaCy": spacy.__version__,
            "Python": platform.python_version(),
        },
        today=datetime.date.today().isoformat(),
        skipped=skipped,
        stat_columns=stat_columns(),
        stats=[document_stats(d) for d in documents],
        findings=findings,
        passages=passage_rows(documents),
        stat_headers=STAT_HEADERS,
        review=review_sections(documents),
        score_note=parallelism_score_note(analysis.notes),
        figures=figure_counts(documents, analysis.notes),
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


__all__: List[str] = [
    "analysis_page",
    "histogram_drawing",
    "merge_marks",
    "passage_rows",
    "render_page",
    "results_page",
    "text_markup",
]
