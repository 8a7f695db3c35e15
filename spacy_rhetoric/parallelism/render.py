"""displaCy rendering of parallelisms: the branches of one parallelism share one
label, its number and type ("P3 chiastic", "P4 synchystic", "P5 parallelism" when
untyped), and one colour: by default the colour of its type (``displacy_colors``, so
chiastic parallelisms stand out), or one colour per parallelism."""

from typing import Dict, Iterable, List, Optional

from spacy import displacy
from spacy.tokens import Doc

from ..corpora.parallelisms import DEFAULT_SPANS_KEY, get_parallelisms
from ..displacy_spans import PALETTE, manual_doc, manual_span


def displacy_colors() -> Dict[str, str]:
    """The base palette of our span labels (entry point ``spacy_displacy_colors``)."""
    return {
        "SYNCHYSTIC": "#7aecec",
        "CHIASTIC": "#feca74",
        "PARALLELISM": "#bfeeb7",
        "CHIASMUS": "#ff9561",
        "INTERTEXT": "#aa9cfc",
    }


def parallelism_render_data(doc: Doc, spans_key: str = DEFAULT_SPANS_KEY) -> Dict:
    """The manual displaCy "span" data of a doc's parallelisms.

    RETURNS (Dict): {"text", "tokens", "spans", "title"} for displacy.render(manual=True).
    """
    spans: List[Dict] = []
    for parallelism in get_parallelisms(doc, spans_key):
        label = f"P{parallelism.id} {parallelism.label}"
        if parallelism.stratum > 1:
            label += f" (stratum {parallelism.stratum})"
        spans.extend(manual_span(branch, label) for branch in parallelism.branches)
    return manual_doc(doc, spans)


COLOR_BY = ("type", "parallelism")


def label_colors(labels: Iterable[str], color_by: str = "type") -> Dict[str, str]:
    """The colour of each rendering label ("P3 chiastic", ...).

    labels (Iterable[str]): labels made by ``parallelism_render_data``.
    color_by (str): "type": the palette colour of the label's type; "parallelism": one
        palette colour per parallelism, in the order of their numbers.
    RETURNS (Dict[str, str]): label -> colour.
    """
    if color_by not in COLOR_BY:
        raise ValueError(
            f"parallelism render: color_by must be 'type' or 'parallelism', got '{color_by}'."
        )
    ordered = sorted(set(labels), key=lambda s: int(s[1:].split()[0]))
    if color_by == "parallelism":
        return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(ordered)}
    palette = displacy_colors()
    return {
        label: palette.get(label.split()[1].upper(), palette["PARALLELISM"]) for label in ordered
    }


def render(
    doc: Doc,
    spans_key: str = DEFAULT_SPANS_KEY,
    page: bool = False,
    options: Optional[Dict] = None,
    color_by: str = "type",
) -> str:
    """Render a doc's parallelisms as HTML with displaCy's span visualizer.

    doc (Doc): the doc.
    spans_key (str): the span group holding the branches.
    page (bool): return a complete HTML page rather than a fragment.
    options (Optional[Dict]): extra displaCy options.
    color_by (str): "type" (one colour per type) or "parallelism" (one per parallelism).
    RETURNS (str): the HTML.
    """
    data = parallelism_render_data(doc, spans_key)
    colors = label_colors((span["label"] for span in data["spans"]), color_by)
    render_options = {"colors": colors}
    render_options.update(options or {})
    return displacy.render(
        data, style="span", manual=True, page=page, options=render_options, jupyter=False
    )
