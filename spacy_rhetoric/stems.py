"""Repetition up to an ending: two word forms that are one word ("blickst" / "blickt",
"Glücklichen" / "glücklich", "amor" / "amoris") where a tagger or lemmatizer gives them
different lemmas or parts of speech.

``same_stem`` is the definition; ``StemPairs`` answers it for many position pairs of one
token sequence at once (the candidate search and the rules' ``stem_repetition``
features), computing it once per distinct pair of forms.
"""

from typing import Dict, Sequence

import numpy

STEM_MIN_CHARS = 4
STEM_MIN_SHARE = 0.66


def same_stem(a: str, b: str) -> bool:
    """Whether two lower-case forms are one word up to an ending: equal, or sharing a
    prefix of at least ``STEM_MIN_CHARS`` characters and ``STEM_MIN_SHARE`` of the
    longer form ("blickst" / "blickt", "sabbat" / "sabbats", "amor" / "amoris"; not
    "haus" / "hausaufgabe")."""
    if a == b:
        return True
    n = shared_prefix(a, b)
    return n >= STEM_MIN_CHARS and n >= STEM_MIN_SHARE * max(len(a), len(b))


def shared_prefix(a: str, b: str) -> int:
    """RETURNS (int): the number of opening characters two strings share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class StemPairs:
    """``same_stem`` over the positions of one token sequence.

    forms (Sequence[str]): the lower-case form of each token.
    """

    def __init__(self, forms: Sequence[str]) -> None:
        vocab: Dict[str, int] = {}
        self.codes = numpy.fromiter(
            (vocab.setdefault(f, len(vocab)) for f in forms), dtype=numpy.int64, count=len(forms)
        )
        self.vocab = list(vocab)
        # equal first STEM_MIN_CHARS characters: necessary for same_stem (equal forms
        # included), so only those pairs are compared character by character
        prefixes: Dict[str, int] = {}
        self.prefix = numpy.fromiter(
            (prefixes.setdefault(f[:STEM_MIN_CHARS], len(prefixes)) for f in self.vocab),
            dtype=numpy.int64,
            count=len(self.vocab),
        )[self.codes]
        self._known: Dict[int, bool] = {}

    def __call__(self, left: numpy.ndarray, right: numpy.ndarray) -> numpy.ndarray:
        """left, right (numpy.ndarray): [k] positions.
        RETURNS (numpy.ndarray): [k] bool, ``same_stem`` of the forms at left[k], right[k].
        """
        left = numpy.asarray(left, dtype=numpy.int64)
        right = numpy.asarray(right, dtype=numpy.int64)
        found = numpy.zeros(len(left), dtype=bool)
        maybe = numpy.flatnonzero(self.prefix[left] == self.prefix[right])
        if len(maybe) == 0:
            return found
        a, b = self.codes[left[maybe]], self.codes[right[maybe]]
        found[maybe[a == b]] = True
        differ = a != b
        if not differ.any():
            return found
        keys = a[differ] * len(self.vocab) + b[differ]
        unique, inverse = numpy.unique(keys, return_inverse=True)
        answers = numpy.asarray([self._same(int(k)) for k in unique], dtype=bool)
        found[maybe[differ]] = answers[inverse.reshape(-1)]
        return found

    def _same(self, key: int) -> bool:
        if key not in self._known:
            x, y = divmod(key, len(self.vocab))
            self._known[key] = same_stem(self.vocab[x], self.vocab[y])
        return self._known[key]
