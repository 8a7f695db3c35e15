"""Cheap token features that expose repetition between nearby spans: parallel
branches share words, endings and structure, so for each token we mark how far back
and ahead the nearest token with the same form (and the same ending) occurs."""

from typing import Callable, Dict, List, Sequence

import numpy
from spacy.tokens import Doc

# distance buckets: 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64
N_BUCKETS = 7
KEYS: Sequence[Callable[[str], str]] = (str.lower, lambda text: text.lower()[-3:])
N_FEATURES = 2 * len(KEYS) * N_BUCKETS + 1


def _bucket(distance: numpy.ndarray) -> numpy.ndarray:
    # distance >= 1 -> bucket index 0..N_BUCKETS-1, or -1 if too far / absent
    bucket = numpy.ceil(numpy.log2(numpy.maximum(distance, 1))).astype("int64")
    bucket[(distance <= 0) | (bucket >= N_BUCKETS)] = -1
    return bucket


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
    texts = [token.text for token in doc]
    column = 0
    for key in KEYS:
        keys = [key(text) for text in texts]
        back = numpy.zeros(n, dtype="int64")
        ahead = numpy.zeros(n, dtype="int64")
        last: Dict[str, int] = {}
        for i, k in enumerate(keys):
            if k in last:
                back[i] = i - last[k]
            last[k] = i
        last = {}
        for i in range(n - 1, -1, -1):
            k = keys[i]
            if k in last:
                ahead[i] = last[k] - i
            last[k] = i
        rows = numpy.arange(n)
        for distance in (back, ahead):
            bucket = _bucket(distance)
            hit = bucket >= 0
            output[rows[hit], column + bucket[hit]] = 1.0
            column += N_BUCKETS
    output[:, column] = [float(token.is_punct) for token in doc]
    return output


def batch_repetition_features(docs: Sequence[Doc]) -> List[numpy.ndarray]:
    return [repetition_features(doc) for doc in docs]
