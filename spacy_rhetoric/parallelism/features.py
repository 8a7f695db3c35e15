"""Cheap token features that expose repetition between nearby spans: parallel
branches share words, endings and structure, so for each token we mark how far back
and ahead the nearest token with the same form (and the same ending) occurs. And the
language features: which of a multilingual head's training languages a doc is in."""

import random
from typing import List, Sequence

import numpy
from spacy.attrs import IS_PUNCT, LOWER, SUFFIX
from spacy.tokens import Doc

from ..corpora.util import doc_language

# distance buckets: 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64
N_BUCKETS = 7
KEY_ATTRS = (LOWER, SUFFIX)  # lowercase form; last three characters
N_FEATURES = 2 * len(KEY_ATTRS) * N_BUCKETS + 1


def _bucket(distance: numpy.ndarray) -> numpy.ndarray:
    # distance >= 1 -> bucket index 0..N_BUCKETS-1, or -1 if too far / absent
    bucket = numpy.ceil(numpy.log2(numpy.maximum(distance, 1))).astype("int64")
    bucket[(distance <= 0) | (bucket >= N_BUCKETS)] = -1
    return bucket


def nearest_repeats(keys: numpy.ndarray) -> numpy.ndarray:
    """Distances to the previous and next position with the same key.

    keys (numpy.ndarray): one key per position [N].
    RETURNS (numpy.ndarray): int64 [2, N]: distance back and ahead (0: none).
    """
    n = len(keys)
    order = numpy.lexsort((numpy.arange(n), keys))  # by key, then position
    same = keys[order[1:]] == keys[order[:-1]]
    gaps = numpy.where(same, order[1:] - order[:-1], 0)
    back = numpy.zeros(n, dtype="int64")
    ahead = numpy.zeros(n, dtype="int64")
    back[order[1:]] = gaps
    ahead[order[:-1]] = gaps
    return numpy.stack([back, ahead])


def repetition_features(doc: Doc) -> numpy.ndarray:
    """Repetition features of a doc.

    doc (Doc): the doc.
    RETURNS (numpy.ndarray): float32 [len(doc), N_FEATURES]: for each key (form,
        3-letter ending) and direction (back, ahead), a one-hot distance bucket of the
        nearest token with the same key, plus a punctuation flag.
    """
    n = len(doc)
    output = numpy.zeros((n, N_FEATURES), dtype="float32")
    if n == 0:
        return output
    array = doc.to_array([*KEY_ATTRS, IS_PUNCT])
    rows = numpy.arange(n)
    column = 0
    for k in range(len(KEY_ATTRS)):
        for distance in nearest_repeats(array[:, k]):
            bucket = _bucket(distance)
            hit = bucket >= 0
            output[rows[hit], column + bucket[hit]] = 1.0
            column += N_BUCKETS
    output[:, column] = array[:, -1]
    return output


def batch_repetition_features(docs: Sequence[Doc]) -> List[numpy.ndarray]:
    return [repetition_features(doc) for doc in docs]


def language_features(
    docs: Sequence[Doc], languages: Sequence[str], drop: float = 0.0
) -> List[numpy.ndarray]:
    """The language input of a head trained on several languages.

    docs (Sequence[Doc]): the docs; each one's language is ``doc_language(doc)``.
    languages (Sequence[str]): the head's languages, e.g. ["la", "zh"].
    drop (float): the probability that a doc in one of ``languages`` reads as unknown
        (training only: the zero row is then what the head learns for any other language).
    RETURNS (List[numpy.ndarray]): per doc float32 [len(doc), len(languages)]: on every
        row a one-hot of the doc's language, zeros for a language not in ``languages``.
    """
    index = {language: i for i, language in enumerate(languages)}
    output = []
    for doc in docs:
        rows = numpy.zeros((len(doc), len(languages)), dtype="float32")
        i = index.get(doc_language(doc))
        if i is not None and not (drop > 0.0 and random.random() < drop):
            rows[:, i] = 1.0
        output.append(rows)
    return output
