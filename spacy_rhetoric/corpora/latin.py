"""Latin orthography: the one spelling that matching, static vectors and the
parallelism models (trained on ASP's lower-case u/i spelling) all read."""

import unicodedata
from functools import lru_cache

from latincy_preprocess.uv import normalize_uv

_FOLD = str.maketrans({"j": "i", "v": "u", "æ": "ae", "œ": "oe", "ß": "ss"})


def normalize_latin(text: str) -> str:
    """Fold a Latin text: lower case, no diacritics, u for v, i for j, ae/oe for the
    ligatures.

    text (str): the text.
    RETURNS (str): the folded text.
    """
    text = text.lower()
    if not text.isascii():  # ASCII has no diacritics and is its own NFKD form
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
    return text.translate(_FOLD)


@lru_cache(maxsize=65536)
def classical_latin(word: str) -> str:
    """Fold a Latin word as :func:`normalize_latin` does, then give consonantal u back its
    v (``uos`` -> ``vos``, ``auaritia`` -> ``avaritia``) by latincy-preprocess's
    phonotactic rules: one spelling for ASP's u-only text and for classical editions,
    and the one a multilingual encoder met in pretraining (``vos`` is one piece, ``uos``
    two). The rules miss some words (``fruendum`` -> ``frvendum``); the fold is the same
    for every text, so training and prediction read the same thing.

    word (str): a word (the rules look at its letters only).
    RETURNS (str): the respelled word, i for j, lower case, no diacritics.
    """
    return normalize_uv(normalize_latin(word))
