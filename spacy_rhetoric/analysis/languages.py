"""What ``analyze`` can run for each language: the languages, the trained models each
can use by component, where the chiasmus rules run without a trained scorer, how base
tokens are spelled for the parallelism model, and the error for arguments it cannot
use.
"""

from typing import (
    Callable,
    Dict,
)

from ..corpora.latin import normalize_latin

LANGUAGES = ("la", "de", "en", "zh")
LANGUAGE_NAMES = {"la": "Latin", "de": "German", "en": "English", "zh": "Chinese"}
COMPONENTS = ("base", "parallelism", "chiasmus", "figures", "displacement", "intertext")
# The trained models each language can use, by component.
LANGUAGE_MODELS: Dict[str, Dict[str, str]] = {
    "la": {"base": "base-la-udante", "parallelism": "parallelism-la", "intertext": "intertext-la"},
    "de": {"base": "base-de", "chiasmus": "chiasmus-de", "parallelism": "parallelism-xx"},
    "en": {
        "base": "base-en",
        "chiasmus": "chiasmus-en",
        "parallelism": "parallelism-xx",
        "intertext": "intertext-en",
    },
    "zh": {"base": "base-zh", "parallelism": "parallelism-zh"},
}
# Languages for which chiasmus_finder runs with its hand-weighted rules where no trained
# scorer is available: those calibrated on running text in the package's
# spacy_rhetoric/data/chiasmus/calibration.json.
RULE_CHIASMUS = (
    "la",
    "de",
    "en",
    # Chinese (回环): searched on the characters of each word (chiasmus_finder's
    # units = "auto"), calibrated on UD Chinese-GSD
    "zh",
)
# How base tokens are spelled for the parallelism model (its training orthography).
PARALLELISM_NORMALIZERS: Dict[str, Callable[[str], str]] = {"la": normalize_latin}


class AnalyzeError(ValueError):
    """Bad arguments to ``analyze`` (unknown language, unusable model or index)."""


# components that ``analyze --skip`` switches off (the base pipeline always runs)
SKIPPABLE = ("chiasmus", "displacement", "figures", "intertext", "parallelism")
SKIPPED = "switched off (--skip {})"


def check_language(lang: str) -> str:
    """RETURNS (str): ``lang`` if analyze supports it. RAISES AnalyzeError otherwise."""
    if lang not in LANGUAGES:
        names = ", ".join(f"{code} ({LANGUAGE_NAMES[code]})" for code in LANGUAGES)
        raise AnalyzeError(f"Unknown language '{lang}': analyze supports {names}.")
    return lang
