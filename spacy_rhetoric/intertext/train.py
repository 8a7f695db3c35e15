"""Train the feature reranker of an index on gold links and store it in the index."""

import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

import numpy as np
import srsly

from ..corpora.loci_similes import convert_loci_similes
from ..corpora.tesserae import loci_to_tesserae, verse_span
from .benchmark import N_FOLDS
from .fusion import FUSION_KS, Candidate, choose_fusion
from .index import META_FILE, QUERY_ENCODER_DIR, IntertextIndex
from .lexical import terms
from .query_crossfit import out_of_fold_vectors
from .query_encoder import QueryEncoder, QueryTraining
from .rerank import FEATURES, RERANKER_FILE, FeatureReranker, pair_features


def source_rows(index: IntertextIndex, source_id: str, source_text: str) -> Set[int]:
    """The index rows of a gold source passage.

    The id is looked up as is, then as a Tesserae id (``loci_to_tesserae``); for the
    latter the line whose words best match the passage's first line within +-3 lines
    is taken, and a verse passage covers its number of lines.

    RETURNS (Set[int]): the rows (empty if the passage is not in the index).
    """
    if source_id in index.row_of:
        return {index.row_of[source_id]}
    position = index.row_of.get(loci_to_tesserae(source_id))
    if position is None:
        return set()
    work = index.ids[position].rsplit(" ", 1)[0]
    want = set(terms(source_text.split("/")[0]))
    best, best_overlap = position, -1.0
    for shift in (0, -1, 1, -2, 2, -3, 3):
        p = position + shift
        if 0 <= p < len(index) and index.ids[p].rsplit(" ", 1)[0] == work:
            overlap = len(want & set(terms(index.texts[p]))) / max(1, len(want))
            if overlap > best_overlap + 1e-9:
                best, best_overlap = p, overlap
    span = verse_span(source_text) if "/" in source_text else 1
    return {r for r in range(best, best + span) if r < len(index)}


def author_of(seg_id: str) -> str:
    """The author of a source segment by its id: the abbreviation a Tesserae id starts
    with ("verg. aen. 1.1" -> "verg", "cat. 1.1" -> "cat"); an id without one (a CSV
    source's "seg_12") is its own author."""
    head, _, rest = seg_id.partition(" ")
    return head[:-1] if rest and len(head) > 1 and head.endswith(".") else seg_id


def distractor_exclusions(
    index: IntertextIndex, gold_rows: Sequence[Set[int]]
) -> List[FrozenSet[int]]:
    """Per query, the index rows of every author of its gold sources (``author_of``):
    searched without them, the query is a distractor, a query whose sources the index
    does not hold.

    index (IntertextIndex): the index.
    gold_rows (Sequence[Set[int]]): per query, the rows of its gold sources.
    RETURNS (List[FrozenSet[int]]): per query, the rows to leave out (queries with the
        same single author share one set).
    """
    by_author: Dict[str, Set[int]] = {}
    for row, seg_id in enumerate(index.ids):
        by_author.setdefault(author_of(seg_id), set()).add(row)
    rows_of = {author: frozenset(rows) for author, rows in by_author.items()}
    out = []
    for rows in gold_rows:
        authors = sorted({author_of(index.ids[r]) for r in rows})
        out.append(frozenset().union(*(rows_of[a] for a in authors)) if len(authors) > 1
                   else rows_of[authors[0]] if authors else frozenset())  # fmt: skip
    return out


def train_reranker(
    labels: Path,
    index_dir: Path,
    k: int = 10,
    l2: float = 1.0,
    seed: int = 0,
    pool: int = 100,
    query_training: Optional[QueryTraining] = None,
    query_layers: int = 4,
    distractors: bool = False,
    distractor_phrases: bool = True,
) -> Dict[str, Any]:
    """Fit the reranker on gold links and write it to ``index_dir/reranker.json``; with a
    dense channel, first choose the fusion (dense weight and constant) on the gold queries
    as evaluation does on its training folds, and write it to ``meta.json``.

    With ``query_training``, a query encoder is tuned against the index first
    (``query_encoder``) and saved in ``index_dir/query_encoder``: the fusion and the
    reranker are fitted on each query's vector from an encoder trained on the other
    folds' links (``query_crossfit.out_of_fold_vectors``; the links' fold ids, each query
    in the lowest), so they see the dense scores of unseen queries; the encoder saved is
    then trained on every link.

    labels (Path): Loci Similes labels.csv, or a locisimiles-format folder.
    index_dir (Path): the index (its sources must hold the gold sources).
    k (int): candidates per query the reranker is trained and thresholded on.
    pool (int): candidates per channel before fusion.
    query_training (Optional[QueryTraining]): tune a query encoder with these settings.
    query_layers (int): its adapted top layers.
    distractors (bool): also train on each gold query searched without the rows of its
        sources' authors (``distractor_exclusions``), every candidate a non-link, as it
        meets an index that does not hold its sources; the threshold's inner folds keep
        a query and its distractor copy together.
    distractor_phrases (bool): with ``distractors``, keep as non-links the candidates of
        a distractor search that share a two-term phrase with the query (False: leave
        them out of the training data, since a shared phrase may be an echo that the
        gold links do not record).
    RETURNS (Dict[str, Any]): a summary (queries, positives, threshold, unresolved).
    """
    from .evaluate import _inner_threshold

    index = IntertextIndex.from_disk(index_dir)
    conversion = convert_loci_similes(labels)
    source_texts = {d.user_data["seg_id"]: d.text for d in conversion.splits["sources"]}
    query_text: Dict[str, str] = {}
    gold: Dict[str, Set[int]] = {}
    items: Dict[str, List[Set[int]]] = {}
    n_links: Dict[str, int] = {}
    fold_of: Dict[str, int] = {}
    unresolved = 0
    for split, docs in conversion.splits.items():
        if split == "sources":
            continue
        for doc in docs:
            q = doc.user_data["seg_id"]
            query_text[q] = doc.text
            for link in doc.user_data["links"]:
                if link.get("fold") is not None:
                    fold_of[q] = min(fold_of.get(q, N_FOLDS), int(link["fold"]) % N_FOLDS)
                if link["label"] != 1:
                    continue
                rows = source_rows(index, link["source_id"], source_texts[link["source_id"]])
                if not rows:
                    unresolved += 1
                else:
                    items.setdefault(q, []).append(rows)
                gold.setdefault(q, set()).update(rows)
                n_links[q] = n_links.get(q, 0) + 1
    queries = sorted(query_text)
    texts = [query_text[q] for q in queries]
    query_summary: Any = None
    stale = Path(index_dir) / QUERY_ENCODER_DIR
    if query_training is None and stale.is_dir():
        # the reranker is fitted to the vectors the index will give its queries: an
        # encoder tuned before would give others
        shutil.rmtree(stale)
        index.query_encoder_path = None
        query_summary = f"removed the query encoder trained before ({stale})"
    q_vectors = index.encode_queries(texts) if index.has_dense else None
    if query_training is not None:
        q_vectors, query_summary = _tune_query_encoder(
            index, index_dir, queries, texts, gold, fold_of, query_training, query_layers
        )
    if index.has_dense:
        # the fusion as in evaluation: chosen on the gold queries, kept in meta.json
        index.cfg["weights"], index.cfg["rrf_k"] = [1.0, 1.0], FUSION_KS[-1]
        union = dict(zip(queries, index.search(texts, 2 * pool, pool, q_vectors)))
        w_dense, rrf_k = choose_fusion({q: union[q] for q in items}, items, pool)
        index.cfg["weights"], index.cfg["rrf_k"] = [1.0, w_dense], rrf_k
        srsly.write_json(Path(index_dir) / META_FILE, index.cfg)
    hits = index.search(texts, k, pool, q_vectors)
    X: List[np.ndarray] = []
    y: List[np.ndarray] = []
    for q, cands in zip(queries, hits):
        X.append(pair_features(index, query_text[q], cands, pool))
        y.append(np.asarray([c.row in gold.get(q, set()) for c in cands], dtype=np.float64))
    n_gold = [n_links.get(q, 0) for q in queries]
    groups = list(range(len(queries)))
    copies = phrases_left_out = 0
    if distractors:
        bigrams = FEATURES.index("shared_bigrams")
        for i, cands in _distractor_hits(index, queries, texts, gold, k, pool, q_vectors):
            features = pair_features(index, query_text[queries[i]], cands, pool)
            if not distractor_phrases:
                keep = features[:, bigrams] == 0
                phrases_left_out += int((~keep).sum())
                features = features[keep]
            X.append(features)
            y.append(np.zeros(len(features), dtype=np.float64))
            n_gold.append(0)
            groups.append(i)
            copies += 1
    reranker = FeatureReranker(l2=l2, pool=pool).fit(np.concatenate(X), np.concatenate(y))
    reranker.threshold = _inner_threshold(X, y, n_gold, l2, seed, groups)
    srsly.write_json(Path(index_dir) / RERANKER_FILE, reranker.to_dict())
    return {
        "queries": len(queries),
        "links": sum(n_links.values()),
        "positives": int(sum(v.sum() for v in y)),
        "unresolved_sources": unresolved,
        "threshold": reranker.threshold,
        "k": k,
        **({"distractor_copies": copies} if distractors else {}),
        **(
            {"distractor_phrase_candidates_left_out": phrases_left_out}
            if distractors and not distractor_phrases
            else {}
        ),
        "fusion": {"weights": index.cfg["weights"], "rrf_k": index.cfg["rrf_k"]},
        **({"query_encoder": query_summary} if query_summary is not None else {}),
    }


def _distractor_hits(
    index: IntertextIndex,
    queries: List[str],
    texts: List[str],
    gold: Dict[str, Set[int]],
    k: int,
    pool: int,
    q_vectors: Optional[np.ndarray],
    chunk: int = 32,
) -> Iterator[Tuple[int, List[Candidate]]]:
    """Yield (position in ``queries``, candidates) for each query with gold rows,
    searched without its sources' authors (``distractor_exclusions``), in chunks of
    queries: a search without an author reads that much deeper into each channel, and
    the chunks bound the candidates held at once."""
    todo = [i for i, q in enumerate(queries) if gold.get(q)]
    excluded = distractor_exclusions(index, [gold[queries[i]] for i in todo])
    for start in range(0, len(todo), chunk):
        part = todo[start : start + chunk]
        vectors = q_vectors[part] if q_vectors is not None else None
        found = index.search(
            [texts[i] for i in part], k, pool, vectors, exclude=excluded[start : start + chunk]
        )
        yield from zip(part, found)


def _tune_query_encoder(
    index: IntertextIndex,
    index_dir: Path,
    queries: List[str],
    texts: List[str],
    gold: Dict[str, Set[int]],
    fold_of: Dict[str, int],
    training: QueryTraining,
    layers: int,
):
    """Out-of-fold query vectors for the fusion and the reranker, then the query
    encoder trained on every link, saved in the index (see ``train_reranker``)."""
    if not index.has_dense:
        raise ValueError(
            "intertext train: --query-encoder needs an index with a dense channel (this one "
            "is lexical-only)"
        )
    start = time.perf_counter()
    encoder = QueryEncoder.for_index(index.cfg, layers)
    states = dict(zip(queries, encoder.lower_states(texts)))
    by_fold: List[List[str]] = [[] for _ in range(N_FOLDS)]
    for i, q in enumerate(queries):
        by_fold[fold_of.get(q, i % N_FOLDS)].append(q)
    by_fold = [f for f in by_fold if f]
    if len(by_fold) < 2:
        raise ValueError("intertext train: --query-encoder needs gold links in 2 folds or more")
    oof = out_of_fold_vectors(encoder, states, by_fold, gold, index.embeddings, training)
    encoder.reset()
    history = encoder.fit(
        [states[q] for q in queries],
        [gold.get(q, set()) for q in queries],
        index.embeddings,
        training,
    )
    encoder.to_disk(Path(index_dir) / QUERY_ENCODER_DIR)
    summary = {
        "trainable_layers": layers,
        "training": asdict(training),
        "final_losses": history["losses"],
        "folds": len(by_fold),
        "seconds": time.perf_counter() - start,
    }
    return np.stack([oof[q] for q in queries]), summary


def export_reranker(index_dir: Path, output: Path, summary: Dict[str, Any]) -> Dict[str, Any]:
    """Write an index's trained reranker as a portable file that carries its fusion and
    where it comes from (as the packaged rerankers in ``spacy_rhetoric/data/intertext``).

    index_dir (Path): a trained index (``train_reranker``).
    output (Path): the file to write.
    summary (Dict[str, Any]): ``train_reranker``'s summary.
    RETURNS (Dict[str, Any]): what was written.
    """
    if isinstance(summary.get("query_encoder"), dict):
        raise ValueError(
            "intertext train: a reranker fitted to a query encoder tuned against this index "
            "fits only this index; train without --query-encoder to export one"
        )
    cfg = srsly.read_json(Path(index_dir) / META_FILE)
    data = srsly.read_json(Path(index_dir) / RERANKER_FILE)
    encoder = cfg["model"] if cfg.get("dim") else "no dense channel"
    data["fusion"] = summary["fusion"]
    copies = summary.get("distractor_copies")
    distractors = f", and {copies} of them without their sources' authors" if copies else ""
    if summary.get("distractor_phrase_candidates_left_out") is not None:
        distractors += " (their candidates that share a phrase with the query left out)"
    data["origin"] = (
        f"trained on {summary['links']} gold links of {summary['queries']} queries "
        f"({summary['positives']} retrieved){distractors} against an index of "
        f"{cfg['n_segments']} segments ({encoder}), threshold {summary['threshold']:.3f}"
    )
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(output, data)
    return data
