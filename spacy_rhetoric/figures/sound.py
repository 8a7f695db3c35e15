"""Candidate rule of the figures of sound: alliteration (la, en, de; not Chinese).

**alliteration**: >= ``MIN_WORDS`` different content words (``words.Words.is_content``) of one
sentence with the same initial sound, consecutive ones at most ``MAX_SKIP`` other
content words and ``MAX_TOKENS`` tokens apart ("Veni, vidi, vici"; "Peter Piper picked
a peck of pickled peppers"). The initial sound (``initial_sound``) is read from the
spelling, per language:

* Latin: c, k, q(u) and ch are one sound (k); ph = f; th = t; rh = r; initial h is
  silent; u/v and i/j before a vowel are the consonants w and j, else vowels;
* English: ph = f; c before a/o/u/l/r = k, before e/i/y = s; kn = n; wr = r; gn = n;
  ps = s; wh = w; ch, sh, th are units;
* German: sch, st and sp are units (so "Stein" does not alliterate with "Sonne"); v = f;
  ph = f; qu = k; c before a/o/u = k; ch is a unit.

A vowel alliterates with the same vowel only.
"""

from functools import lru_cache
from typing import Dict, List, Optional

import numpy

from .candidates import MAX_MEMBERS, Candidate, make_candidate
from .segment import Segmentation
from .words import ColonWords, Words

MIN_WORDS = 3
MAX_SKIP = 1
MAX_TOKENS = 6
LANGUAGES = ("la", "en", "de")
FIGURES = ("alliteration",)
VOWELS = frozenset("aeiouyäöü")


@lru_cache(maxsize=200_000)
def initial_sound(form: str, lang: str) -> Optional[str]:
    """The initial sound of a lower-case word (None: no letter to read).

    form (str): the word, lower case (Latin already u/v, i/j folded or not).
    lang (str): "la", "en" or "de".
    RETURNS (Optional[str]): a code of the initial sound.
    """
    word = "".join(ch for ch in form if ch.isalpha())
    if not word:
        return None
    if lang == "la":
        word = word.replace("j", "i")
        if word[0] == "h" and len(word) > 1:
            word = word[1:]
        if word.startswith(("ph",)):
            return "f"
        if word.startswith(("th",)):
            return "t"
        if word.startswith(("rh",)):
            return "r"
        if word[0] in "ckq":
            return "k"
        if word[0] in "uv":  # consonantal before a vowel (uenit, venit), else a vowel
            return "w" if len(word) > 1 and word[1] in "aeio" else "u"
        if word[0] == "i":
            return "j" if len(word) > 1 and word[1] in "aeou" else "i"
        return word[0]
    if lang == "en":
        for prefix, sound in (
            ("ph", "f"),
            ("kn", "n"),
            ("wr", "r"),
            ("gn", "n"),
            ("ps", "s"),
            ("wh", "w"),
            ("ch", "ch"),
            ("sh", "sh"),
            ("th", "th"),
        ):
            if word.startswith(prefix):
                return sound
        if word[0] == "c":
            return "s" if len(word) > 1 and word[1] in "eiy" else "k"
        if word[0] == "q":
            return "k"
        return word[0]
    if lang == "de":
        for prefix, sound in (
            ("sch", "sch"),
            ("st", "st"),
            ("sp", "sp"),
            ("ph", "f"),
            ("ch", "ch"),
            ("qu", "k"),
        ):
            if word.startswith(prefix):
                return sound
        if word[0] == "v":
            return "f"
        if word[0] == "c":
            return "k" if len(word) > 1 and word[1] in "aou" else "z"
        return word[0]
    return word[0]


def alliteration_candidates(words: Words, seg: Segmentation, cw: ColonWords) -> List[Candidate]:
    """Alliterations (see the module docstring); none for languages outside ``LANGUAGES``.
    One pass over the content words with one open chain per sound."""
    if words.lang not in LANGUAGES:
        return []
    found: List[Candidate] = []
    sentence = seg.token_sentence
    open_: Dict[str, List] = {}  # sound -> [tokens (capped), last token, last index, count]

    def close(group: List) -> None:
        if group[3] >= MIN_WORDS and len({words.forms[p] for p in group[0]}) >= MIN_WORDS:
            support = [(p, p + 1) for p in group[0]]
            found.append(
                make_candidate("alliteration", support, support, group[3], end=group[1] + 1)
            )

    index = 0
    lang = words.lang
    for p in numpy.flatnonzero(words.is_content).tolist():
        index += 1
        sound = initial_sound(words.forms[p], lang)
        if sound is None:
            continue
        group = open_.get(sound)
        if (
            group is not None
            and index - group[2] <= MAX_SKIP + 1
            and p - group[1] <= MAX_TOKENS
            and sentence[p] == sentence[group[1]]
        ):
            if len(group[0]) < MAX_MEMBERS:
                group[0].append(p)
            group[1], group[2] = p, index
            group[3] += 1
            continue
        if group is not None:
            close(group)
        open_[sound] = [[p], p, index, 1]
    for group in open_.values():
        close(group)
    found.sort(key=lambda c: c.start)
    return found
