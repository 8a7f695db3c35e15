"""The lexical channel of the intertext index: Latin normalisation, terms, and an
inverted index scored by the rarity of the shared terms (Tesserae-like).

Normalisation folds case, diacritics, ligatures and the orthographic variants u/v and
i/j, so "Vixit", "uixit" and "vīxit" are one form. A *term* is a normalised form or, by
default, a crude stem of it (the form with a common inflectional ending removed,
truncated to ``STEM_LENGTH`` letters): Latin has no lemmatizer offline here, and
stems recover most inflected repetitions ("aera"/"aere", "spirantia"/"spirantem").

Retrieval score of a source segment s for a query q: the summed inverse document
frequency of the distinct terms they share, divided by a mild length norm of s,
``sum_{t in q & s} idf(t) / (1 - b + b * len(s) / avglen)``. Per-pair features that need
positions (Tesserae's rarity-over-distance score, shared bigrams) are in ``pair_features``
of ``rerank.py``.

Long segments (prose sections) can be scored by their parts: with ``split_words``, a
segment of more words is cut into its sentences (*units*), each unit is scored as a
segment of its own (its own length in the norm), and a segment's score is the best of its
units'. A sentence-long query then meets the sentence it quotes on equal terms, where a
whole section of 200 words would be divided by a length norm six times the average
verse line's.
"""

import re
from functools import lru_cache
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from scipy import sparse

from ..corpora.latin import normalize_latin

STEM_LENGTH = 5
LENGTH_NORM = 0.3
_WORD = re.compile(r"[a-z]+")
_SENTENCE_END = re.compile(r"(?<=[.?!;:])\s+")
# Inflectional endings, longest first (only stripped if >= 3 letters remain).
_ENDINGS = tuple(
    sorted(
        """ibus ius orum arum erum ium ebus ere ire are ent unt ant int ntur itur atur
        untur erunt isse issem isset ent ens ntis nti nte tis tur mus nt is es as os us um
        em am ae am im ei ui a e i o u s m""".split(),
        key=len,
        reverse=True,
    )
)


def forms(text: str) -> List[str]:
    """text (str): a text.
    RETURNS (List[str]): its normalised word forms, in order.
    """
    return _WORD.findall(normalize_latin(text))


@lru_cache(maxsize=1 << 18)
def stem(form: str) -> str:
    """form (str): a normalised word form.
    RETURNS (str): its stem (ending stripped, truncated to STEM_LENGTH letters).

    Memoised (a bounded cache): the reranker's features stem every candidate's words
    for every query that retrieves it.
    """
    for ending in _ENDINGS:
        if form.endswith(ending) and len(form) - len(ending) >= 3:
            form = form[: -len(ending)]
            break
    return form[:STEM_LENGTH]


def terms(text: str, kind: str = "stem") -> List[str]:
    """text (str): a text.
    kind (str): "stem" or "form".
    RETURNS (List[str]): its terms, in order.
    """
    if kind == "form":
        return forms(text)
    if kind == "stem":
        return [stem(f) for f in forms(text)]
    raise ValueError(f"intertext: unknown term kind '{kind}'; use 'stem' or 'form'")


# `intertext index` scores segments of more words than this by their sentences (the
# library's default stays None, every segment whole, as the evaluation protocols build)
SPLIT_WORDS = 40


def segment_units(text: str, split_words: Optional[int]) -> List[str]:
    """The units a segment is scored by: itself, or, when it has more than
    ``split_words`` words, its sentences (split after . ? ! ; :).

    RETURNS (List[str]): at least one unit.
    """
    if split_words is None or len(text.split()) <= split_words:
        return [text]
    return [part for part in _SENTENCE_END.split(text) if part.strip()] or [text]


def row_units(unit_row: np.ndarray, rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The units of given rows, where each row's units are consecutive.

    unit_row (np.ndarray): the row of each unit, ascending.
    rows (np.ndarray): the rows asked for.
    RETURNS (Tuple[np.ndarray, np.ndarray]): the units of the rows in order, and the
        offset of each row's first unit among them (a row without units gets the
        offset of the next one; ``np.maximum.reduceat`` needs every row to have one).
    """
    starts = np.searchsorted(unit_row, rows, side="left")
    counts = np.searchsorted(unit_row, rows, side="right") - starts
    offsets = np.cumsum(counts) - counts
    units = np.repeat(starts - offsets, counts) + np.arange(counts.sum())
    return units, offsets


class LexicalIndex:
    """An inverted index of source segments over terms, scored by shared rarity."""

    def __init__(
        self,
        vocab: Dict[str, int],
        df: np.ndarray,
        matrix: sparse.csr_matrix,
        kind: str = "stem",
        length_norm: float = LENGTH_NORM,
        unit_row: Optional[np.ndarray] = None,
        split_words: Optional[int] = None,
    ):
        self.vocab = vocab
        self.df = df.astype(np.int64)
        self.matrix = matrix.tocsr()  # (n_units, n_terms) binary; a unit per segment unless split
        self.kind = kind
        self.length_norm = length_norm
        self.split_words = split_words
        # the segment (row) of each unit; None: every segment is one unit
        self.unit_row = None if unit_row is None else np.asarray(unit_row, dtype=np.int64)
        if self.unit_row is not None and len(self.unit_row) != self.matrix.shape[0]:
            raise ValueError("intertext lexical index: units and their rows differ in number")
        self.n_rows = (
            self.matrix.shape[0]
            if self.unit_row is None
            else (int(self.unit_row[-1]) + 1 if len(self.unit_row) else 0)
        )
        n = max(1, self.matrix.shape[0])
        self.idf = np.log((n + 1) / (self.df + 0.5)).astype(np.float32)
        # term_idf runs per word of every candidate pair: Python floats, not array reads
        self._idf_values = self.idf.tolist()
        self._unseen_idf = float(np.log((n + 1) / 0.5))
        lengths = np.asarray(self.matrix.sum(axis=1)).ravel().astype(np.float32)
        mean = float(lengths.mean()) if lengths.size else 1.0
        self.norm = (1.0 - length_norm + length_norm * lengths / max(mean, 1.0)).astype(np.float32)

    @classmethod
    def build(
        cls, texts: Iterable[str], kind: str = "stem", split_words: Optional[int] = None
    ) -> "LexicalIndex":
        """texts (Iterable[str]): the source segments.
        kind (str): "stem" or "form".
        split_words (Optional[int]): score segments of more words by their sentences
            (``segment_units``); None: every segment whole.
        RETURNS (LexicalIndex): the index.
        """
        vocab: Dict[str, int] = {}
        indptr = [0]
        indices: List[int] = []
        unit_row: List[int] = []
        for row, text in enumerate(texts):
            for unit in segment_units(text, split_words):
                ids = {vocab.setdefault(t, len(vocab)) for t in terms(unit, kind)}
                indices.extend(sorted(ids))
                indptr.append(len(indices))
                unit_row.append(row)
        data = np.ones(len(indices), dtype=np.float32)
        matrix = sparse.csr_matrix(
            (data, np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
            shape=(len(indptr) - 1, len(vocab)),
        )
        df = np.bincount(matrix.indices, minlength=len(vocab))
        # no row map where no segment was split (the index reads as before)
        split = len(unit_row) > (unit_row[-1] + 1 if unit_row else 0)
        rows = np.asarray(unit_row, dtype=np.int64) if split else None
        return cls(vocab, df, matrix, kind, unit_row=rows, split_words=split_words)

    def __len__(self) -> int:
        """The number of segments (rows), whatever the number of units."""
        return self.n_rows

    def _best_per_row(self, units: np.ndarray, vals: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Units' scores to their rows' (the best unit of each row)."""
        if self.unit_row is None:
            return units, vals
        if getattr(self, "_shared_unit", None) is None:
            # units whose row has other units too (the rest map to their row one to one)
            counts = np.bincount(self.unit_row, minlength=self.n_rows)
            self._shared_unit = counts[self.unit_row] > 1
        shared = self._shared_unit[units]
        # only the units of split rows are sorted to find each row's best
        units_s, vals_s = units[shared], vals[shared]
        order = np.lexsort((units_s, -vals_s))
        rows_s = self.unit_row[units_s[order]]
        _, first = np.unique(rows_s, return_index=True)
        rows = np.concatenate([self.unit_row[units[~shared]], rows_s[first]])
        return rows, np.concatenate([vals[~shared], vals_s[order][first]])

    def score_rows(self, query: sparse.csr_matrix, rows: np.ndarray) -> np.ndarray:
        """The scores of given segments for one query (a row of ``query_matrix``).

        RETURNS (np.ndarray): (len(rows),) float32.
        """
        rows = np.asarray(rows, dtype=np.int64)
        if self.unit_row is None:
            scores = (query @ self.matrix[rows].T).toarray().ravel()
            return (scores / self.norm[rows]).astype(np.float32)
        if len(rows) == 0:
            return np.zeros(0, dtype=np.float32)
        # every row has at least one unit
        units, offsets = row_units(self.unit_row, rows)
        unit_scores = (query @ self.matrix[units].T).toarray().ravel() / self.norm[units]
        return np.maximum.reduceat(unit_scores, offsets).astype(np.float32)

    def term_idf(self, term: str) -> float:
        """The idf of a term (terms unseen in the sources get the maximum idf)."""
        i = self.vocab.get(term)
        return self._idf_values[i] if i is not None else self._unseen_idf

    def query_matrix(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """texts (Sequence[str]): query texts.
        RETURNS (sparse.csr_matrix): (n_queries, n_terms) with the idf of each known term.
        """
        indptr = [0]
        indices: List[int] = []
        for text in texts:
            ids = {self.vocab[t] for t in terms(text, self.kind) if t in self.vocab}
            indices.extend(sorted(ids))
            indptr.append(len(indices))
        idx = np.asarray(indices, dtype=np.int64)
        return sparse.csr_matrix(
            (self.idf[idx], idx, np.asarray(indptr, dtype=np.int64)),
            shape=(len(texts), len(self.vocab)),
        )

    def search(
        self, texts: Sequence[str], k: int, chunk: int = 256
    ) -> List[Tuple[np.ndarray, np.ndarray]]:
        """Exact top-k by shared-rarity score, computed in chunks of queries.

        texts (Sequence[str]): query texts.
        k (int): candidates per query.
        chunk (int): queries per sparse product (bounds memory).
        RETURNS (List[Tuple[np.ndarray, np.ndarray]]): per query (source rows, scores),
            best first; only sources sharing at least one term are returned.
        """
        results: List[Tuple[np.ndarray, np.ndarray]] = []
        source_t = self.matrix.T.tocsr()  # (n_terms, n_sources)
        for start in range(0, len(texts), chunk):
            q = self.query_matrix(texts[start : start + chunk])
            scores = (q @ source_t).tocsr()  # (chunk, n_sources), sparse
            for row in range(scores.shape[0]):
                lo, hi = scores.indptr[row], scores.indptr[row + 1]
                cols = scores.indices[lo:hi]
                vals = scores.data[lo:hi] / self.norm[cols]
                results.append(top_pairs(*self._best_per_row(cols, vals), k))
        return results

    def to_arrays(self) -> Dict[str, np.ndarray]:
        """RETURNS (Dict[str, np.ndarray]): arrays for ``np.savez``."""
        terms_sorted = sorted(self.vocab, key=self.vocab.get)
        return {
            "indptr": self.matrix.indptr,
            "indices": self.matrix.indices,
            "df": self.df,
            "terms": np.asarray(terms_sorted, dtype=object).astype(str),
            "params": np.asarray([self.length_norm], dtype=np.float64),
            **({"unit_row": self.unit_row} if self.unit_row is not None else {}),
            **(
                {"split_words": np.asarray([self.split_words])}
                if self.split_words is not None
                else {}
            ),
        }

    @classmethod
    def from_arrays(cls, arrays: Dict[str, np.ndarray], kind: str) -> "LexicalIndex":
        terms_list = [str(t) for t in arrays["terms"]]
        vocab = {t: i for i, t in enumerate(terms_list)}
        indices = arrays["indices"]
        matrix = sparse.csr_matrix(
            (np.ones(len(indices), dtype=np.float32), indices, arrays["indptr"]),
            shape=(len(arrays["indptr"]) - 1, len(vocab)),
        )
        unit_row = arrays.get("unit_row")
        split = arrays.get("split_words")
        return cls(
            vocab, arrays["df"], matrix, kind, float(arrays["params"][0]), unit_row,
            int(split[0]) if split is not None else None,
        )  # fmt: skip


def top_pairs(cols: np.ndarray, vals: np.ndarray, k: int) -> Tuple[np.ndarray, np.ndarray]:
    """The k best (col, val) pairs, best first; ties broken by lower col."""
    if len(vals) > k:
        keep = np.argpartition(-vals, k - 1)[:k]
        cols, vals = cols[keep], vals[keep]
    order = np.lexsort((cols, -vals))
    return cols[order].astype(np.int64), vals[order].astype(np.float32)
