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

Names do not alliterate (``names``): a name is given, not chosen by the author ("P. Sulla
... P. Autronius"). A name is a word tagged PROPN; on an untagged doc (given the doc) a
capitalised word that does not open its sentence, except in German, which capitalises
every noun. Latin editions capitalise names and sentence openings only, and the Latin
tagger calls many names NOUN ("Catilina", "Claudio"): in Latin both count, the tag and the
capital.
"""

import operator
from functools import lru_cache
from itertools import repeat
from typing import Any, Dict, List, Optional

import numpy
from spacy.attrs import ORTH
from spacy.tokens import Doc

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


def names(words: Words, seg: Segmentation, doc: Optional[Doc] = None) -> numpy.ndarray:
    """The names of a doc (see the module docstring).

    doc (Optional[Doc]): the doc, for the capitals (None: tags only).
    RETURNS (numpy.ndarray): [n] bool.
    """
    return _names(words, seg, doc, words.is_word)


def _names(
    words: Words, seg: Segmentation, doc: Optional[Doc], among: numpy.ndarray
) -> numpy.ndarray:
    """``names``, true to it on the tokens in ``among`` ([n] bool; the capitals are
    read there only)."""
    n = len(words.forms)
    tagged = words.pos is not None
    found = (
        numpy.fromiter(map(operator.eq, words.pos, repeat("PROPN")), dtype=bool, count=n)
        if tagged
        else numpy.zeros(n, dtype=bool)
    )
    if doc is None or words.lang == "de" or (tagged and words.lang != "la"):
        return found
    # a capitalised word that does not open its sentence (the sentence of the word before
    # it is its own)
    positions = numpy.flatnonzero(words.is_word)
    sentence = seg.token_sentence[positions]
    previous = numpy.concatenate(([-1], sentence[:-1]))
    inside = positions[sentence == previous]
    inside = inside[among[inside]]
    if len(inside):
        _CAPITALS.strings = doc.vocab.strings
        hashes = doc.to_array(ORTH)[inside].tolist()
        capital = numpy.fromiter(map(_CAPITALS.__getitem__, hashes), dtype=bool, count=len(hashes))
        found[inside[capital]] = True
    return found


class _Capitals(dict):
    """Whether a string opens with a capital, by its hash (the same in every vocab),
    kept across docs; ``strings`` resolves the hashes not yet seen."""

    strings: Any = None

    def __missing__(self, key: int) -> bool:
        if len(self) > 1_000_000:
            self.clear()
        flag = self[key] = self.strings[key][:1].isupper()
        return flag


_CAPITALS = _Capitals()


class _Sounds(dict):
    """The initial sound of each form of one language, kept across docs."""

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def __missing__(self, form: str) -> Optional[str]:
        if len(self) > 1_000_000:
            self.clear()
        sound = self[form] = initial_sound(form, self.lang)
        return sound


_SOUNDS: Dict[str, _Sounds] = {}


def alliteration_candidates(
    words: Words, seg: Segmentation, cw: ColonWords, doc: Optional[Doc] = None
) -> List[Candidate]:
    """Alliterations (see the module docstring); none for languages outside ``LANGUAGES``.
    One pass over the content words that are no names with one open chain per sound.

    doc (Optional[Doc]): the doc, to tell names by their capitals where it is untagged.
    """
    if words.lang not in LANGUAGES:
        return []
    found: List[Candidate] = []
    sentence = seg.token_sentence.tolist()
    forms = words.forms
    sound_of = _SOUNDS.get(words.lang)
    if sound_of is None:
        sound_of = _SOUNDS[words.lang] = _Sounds(words.lang)
    open_: Dict[str, List] = {}  # sound -> [tokens (capped), last token, last index, count]

    def close(group: List) -> None:
        if group[3] >= MIN_WORDS and len({forms[p] for p in group[0]}) >= MIN_WORDS:
            support = [(p, p + 1) for p in group[0]]
            found.append(
                make_candidate("alliteration", support, support, group[3], end=group[1] + 1)
            )

    content = words.is_content
    tokens = numpy.flatnonzero(content & ~_names(words, seg, doc, content)).tolist()
    for index, p in enumerate(tokens, 1):
        sound = sound_of[forms[p]]
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
