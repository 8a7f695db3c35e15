"""displaCy colours of the figure labels (entry point ``spacy_displacy_colors``): one
colour per figure, one hue per family (edges blue-green, linking orange, in place red,
conjunction violet, sound yellow, thought grey-green), so ``displacy.render(doc, style="span",
options={"spans_key": "figures"})`` shows the families at a glance."""

from typing import Dict

COLORS = {
    "anaphora": "#7aecec",
    "epiphora": "#9cc9cc",
    "symploce": "#bfe1d9",
    "anadiplosis": "#feca74",
    "gradatio": "#f4c7a1",
    "epizeuxis": "#ff8197",
    "ploce": "#ff9561",
    "polyptoton": "#f0d0ff",
    "polysyndeton": "#aa9cfc",
    "asyndeton": "#c887fb",
    "alliteration": "#ffeb80",
    "antithesis": "#b5d99c",
    "rhetorical_question": "#d9e7b0",
}


def displacy_colors() -> Dict[str, str]:
    """RETURNS (Dict[str, str]): label (upper case, as displaCy looks labels up) -> colour."""
    return {label.upper(): color for label, color in COLORS.items()}
