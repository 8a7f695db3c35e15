"""Latin orthography: the one spelling that matching, static vectors and the
parallelism models (trained on ASP's lower-case u/i spelling) all read."""

import unicodedata

_FOLD = str.maketrans({"j": "i", "v": "u", "æ": "ae", "œ": "oe", "ß": "ss"})


def normalize_latin(text: str) -> str:
    """Fold a Latin text: lower case, no diacritics, u for v, i for j, ae/oe for the
    ligatures.

    text (str): the text.
    RETURNS (str): the folded text.
    """
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.translate(_FOLD)
