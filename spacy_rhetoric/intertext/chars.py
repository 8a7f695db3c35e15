"""The character side of the lexical channel: source segments as tf-idf vectors of the
character n-grams of their words, searched by cosine similarity.

Stems (``lexical.py``) match a word only to words that share its first letters after
one ending is cut; the n-grams of a word also meet its compounds, prefixed verbs and
other endings ("spectare" and "exspectare", "tulit" and "abstulit"). The index builds
this side from the segments' texts when it is first searched, so it costs nothing on
disk; ``IntertextIndex.search`` fuses its ranking with the stems' (``fuse_rankings``).

Weights as in the usual tf-idf of words' character n-grams (each word padded with a
space on both sides; a word shorter than n counted once as a whole): tf ``1 + ln(count)``,
idf ``ln((1 + n_segments) / (1 + df)) + 1``, n-grams of fewer than ``MIN_DF`` segments
dropped, rows of unit length.
"""

from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from scipy import sparse

from .lexical import forms, top_pairs

MIN_DF = 2


def char_grams(text: str, lo: int, hi: int) -> List[str]:
    """text (str): a text.
    lo (int): the shortest n-gram.
    hi (int): the longest n-gram.
    RETURNS (List[str]): the character n-grams of its normalised words, in order.
    """
    grams: List[str] = []
    for form in forms(text):
        word = f" {form} "
        for n in range(lo, hi + 1):
            offset = 0
            grams.append(word[:n])
            while offset + n < len(word):
                offset += 1
                grams.append(word[offset : offset + n])
            if offset == 0:  # a word shorter than n: counted once
                break
    return grams


class CharIndex:
    """Source segments as unit tf-idf vectors of their words' character n-grams."""

    def __init__(
        self,
        vocab: Dict[str, int],
        idf: np.ndarray,
        matrix: sparse.csr_matrix,
        ngrams: Tuple[int, int],
    ) -> None:
        self.vocab = vocab
        self.idf = idf.astype(np.float32)
        self.matrix = matrix.tocsr()  # (n_segments, n_grams), rows of unit length
        self.ngrams = (int(ngrams[0]), int(ngrams[1]))
        # the matrix by n-gram, for search: made on the first search and kept (a
        # pipeline searches once per batch of docs)
        self._by_gram: Optional[sparse.csr_matrix] = None

    @classmethod
    def build(cls, texts: Sequence[str], ngrams: Tuple[int, int] = (3, 5)) -> "CharIndex":
        """texts (Sequence[str]): the source segments.
        ngrams (Tuple[int, int]): the shortest and longest n-gram.
        RETURNS (CharIndex): the index.
        """
        lo, hi = int(ngrams[0]), int(ngrams[1])
        if not 1 <= lo <= hi:
            raise ValueError(f"intertext: character n-grams need 1 <= lo <= hi, got {ngrams}")
        seen: Dict[str, int] = {}
        indptr, indices, counts = [0], [], []
        for text in texts:
            bag = Counter(seen.setdefault(g, len(seen)) for g in char_grams(text, lo, hi))
            indices.extend(bag.keys())
            counts.extend(bag.values())
            indptr.append(len(indices))
        raw = sparse.csr_matrix(
            (np.asarray(counts, np.float32), np.asarray(indices), np.asarray(indptr)),
            shape=(len(texts), len(seen)),
        )
        df = np.bincount(raw.indices, minlength=len(seen))
        keep = np.flatnonzero(df >= MIN_DF)
        grams = list(seen)  # in the order of their ids
        vocab = {grams[old]: new for new, old in enumerate(keep.tolist())}
        idf = np.log((1.0 + len(texts)) / (1.0 + df[keep])) + 1.0
        matrix = raw[:, keep]
        matrix.data = 1.0 + np.log(matrix.data)
        matrix = matrix @ sparse.diags(idf.astype(np.float32))
        return cls(vocab, idf, _unit_rows(matrix), (lo, hi))

    def query_matrix(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """texts (Sequence[str]): query texts.
        RETURNS (sparse.csr_matrix): (n_queries, n_grams) unit tf-idf rows (n-grams the
            sources do not have are left out).
        """
        indptr, indices, values = [0], [], []
        for text in texts:
            bag = Counter(self.vocab[g] for g in char_grams(text, *self.ngrams) if g in self.vocab)
            ids = np.fromiter(bag.keys(), np.int64, len(bag))
            tf = 1.0 + np.log(np.fromiter(bag.values(), np.float32, len(bag)))
            indices.append(ids)
            values.append(tf * self.idf[ids])
            indptr.append(indptr[-1] + len(bag))
        matrix = sparse.csr_matrix(
            (
                np.concatenate(values) if values else np.zeros(0, np.float32),
                np.concatenate(indices) if indices else np.zeros(0, np.int64),
                np.asarray(indptr),
            ),
            shape=(len(texts), len(self.vocab)),
        )
        return _unit_rows(matrix)

    def search(
        self, texts: Sequence[str], k: int, chunk: int = 32
    ) -> List[Tuple[np.ndarray, np.ndarray]]:
        """Exact top-k by cosine similarity, in chunks of queries (bounds memory).

        RETURNS (List[Tuple[np.ndarray, np.ndarray]]): per query (rows, similarities),
            best first; only segments sharing an n-gram are returned.
        """
        results: List[Tuple[np.ndarray, np.ndarray]] = []
        if self._by_gram is None:
            self._by_gram = self.matrix.T.tocsr()
        for start in range(0, len(texts), chunk):
            scores = (self.query_matrix(texts[start : start + chunk]) @ self._by_gram).tocsr()
            for row in range(scores.shape[0]):
                lo, hi = scores.indptr[row], scores.indptr[row + 1]
                results.append(top_pairs(scores.indices[lo:hi], scores.data[lo:hi], k))
        return results


def _unit_rows(matrix: sparse.csr_matrix) -> sparse.csr_matrix:
    matrix = matrix.tocsr().astype(np.float32)
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.diags(1.0 / norms).astype(np.float32) @ matrix


def fuse_rankings(first: np.ndarray, second: np.ndarray, k: int, rrf_k: float = 60.0) -> np.ndarray:
    """Two rankings of rows as one, by reciprocal rank fusion with equal weights (a row
    missing from a ranking counts at its length); ties: the lower row first.

    first (np.ndarray): rows, best first.
    second (np.ndarray): rows, best first.
    k (int): rows returned.
    rrf_k (float): the fusion constant.
    RETURNS (np.ndarray): the k best rows of both, best first.
    """
    ranks = [{int(r): i for i, r in enumerate(ranking)} for ranking in (first, second)]
    rows = np.asarray(sorted(set(ranks[0]) | set(ranks[1])), dtype=np.int64)
    vals = np.zeros(len(rows), dtype=np.float64)
    for rank, ranking in zip(ranks, (first, second)):
        vals += 1.0 / (rrf_k + np.asarray([rank.get(r, len(ranking)) for r in rows.tolist()]))
    order = np.lexsort((rows, -vals))[:k]
    return rows[order]
