"""The Loci Similes benchmark for intertext retrieval: the gold links of labels.csv,
and the queries and candidate sources of an evaluation pool with the gold items
(source rows) of each query. The folds over a benchmark are in ``folds``; the
cross-validation that runs on them is in ``evaluate``.

Candidate pools:

* ``paper``: all gold source passages plus distractor passages sampled from the
  Tesserae texts of the ten source authors (verse: 1-4 consecutive lines joined by
  " / " like the gold passages; prose: one sentence of a section) up to
  ``n_sources``; all gold query segments plus distractor sentences of Jerome's letters
  and Lactantius' Divine Institutes up to ``n_queries``. Distractors never overlap a
  gold passage. Distractor queries are spread over the folds and have no gold links.
* ``full``: the same queries against every line/section of the ten source authors in
  Tesserae (the real corpus). A gold source is located by its id (mapped to Tesserae)
  and checked by text within +-3 lines; it spans its number of verse lines. Links
  whose source cannot be located count as misses.
"""

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from ..corpora.loci_similes import convert_loci_similes
from ..corpora.tesserae import (
    QUERY_AUTHORS,
    SOURCE_AUTHORS,
    TessCorpus,
    loci_to_tesserae,
    read_tesserae,
    tess_files,
    verse_span,
)
from .lexical import terms

N_FOLDS = 5
PROSE_AUTHORS = ("cicero",)
_SENTENCE = re.compile(r"(?<=[.?!;:])\s+")


@dataclass
class Link:
    """One gold link of labels.csv: its pair id, query and source ids and shipped fold."""

    pair_id: int
    query: str
    source: str
    fold: int


@dataclass
class Benchmark:
    """Queries, sources and gold links of one evaluation pool."""

    query_ids: List[str]
    query_texts: List[str]
    query_fold: Dict[str, Dict[str, int]]  # protocol -> query -> fold (distractors)
    source_ids: List[str]
    source_texts: List[str]
    links: List[Link]
    gold_source_texts: Dict[str, str]
    info: Dict[str, Any] = field(default_factory=dict)


def read_links(labels: Path) -> Tuple[Dict[str, str], Dict[str, str], List[Link]]:
    """Read labels.csv with the Loci Similes converter.

    RETURNS (Tuple): query id -> text, source id -> text, the links.
    """
    conversion = convert_loci_similes(labels)
    sources = {d.user_data["seg_id"]: d.text for d in conversion.splits["sources"]}
    queries: Dict[str, str] = {}
    links: List[Link] = []
    for split, docs in conversion.splits.items():
        if split == "sources":
            continue
        for doc in docs:
            queries[doc.user_data["seg_id"]] = doc.text
            for link in doc.user_data["links"]:
                links.append(
                    Link(
                        int(link["pair_id"]),
                        doc.user_data["seg_id"],
                        link["source_id"],
                        int(link["fold"]),
                    )
                )
    links.sort(key=lambda link: link.pair_id)
    return queries, sources, links


def _gold_tess_rows(ids: Sequence[str], corpus_index: Dict[str, int]) -> Set[int]:
    """Tesserae rows at or near gold passages (-3..+7 lines): never sampled as distractors."""
    rows: Set[int] = set()
    for seg_id in ids:
        position = corpus_index.get(loci_to_tesserae(seg_id))
        if position is not None:
            rows.update(range(position - 3, position + 8))
    return rows


def _sample_sources(
    corpus: TessCorpus, exclude: Set[int], n: int, spans: List[int], rng: random.Random
) -> List[Tuple[str, str]]:
    """Distractor source passages shaped like the gold ones (see the module docstring)."""
    out: List[Tuple[str, str]] = []
    used: Set[int] = set()
    segments = corpus.segments
    while len(out) < n:
        i = rng.randrange(len(segments))
        seg = segments[i]
        author = Path(seg.path).name.split(".", 1)[0]
        if author in PROSE_AUTHORS:
            rows = [i]
            sentences = [s for s in _SENTENCE.split(seg.text) if len(s.split()) >= 4]
            if not sentences:
                continue
            text = rng.choice(sentences)
        else:
            width = rng.choice(spans)
            rows = list(range(i, min(len(segments), i + width)))
            if any(segments[r].path != seg.path for r in rows):
                continue
            text = " / ".join(segments[r].text for r in rows)
        if any(r in exclude or r in used for r in rows) or not text.strip():
            continue
        used.update(rows)
        out.append((f"distractor: {seg.seg_id}", text))
    return out


def _sample_queries(
    corpus: TessCorpus, exclude: Set[int], n: int, rng: random.Random
) -> List[Tuple[str, str]]:
    """Distractor query sentences from sections holding no gold query."""
    out: List[Tuple[str, str]] = []
    used: Set[Tuple[int, int]] = set()
    segments = corpus.segments
    while len(out) < n:
        i = rng.randrange(len(segments))
        if i in exclude:
            continue
        sentences = _SENTENCE.split(segments[i].text)
        j = rng.randrange(len(sentences))
        if (i, j) in used or len(sentences[j].split()) < 4:
            continue
        used.add((i, j))
        out.append((f"distractor: {segments[i].seg_id}.{j + 1}", sentences[j]))
    return out


def build_benchmark(
    labels: Path,
    tesserae_dir: Path,
    pool: str = "paper",
    n_sources: int = 880,
    n_queries: int = 937,
    seed: int = 0,
) -> Tuple[Benchmark, Optional[TessCorpus]]:
    """Build the queries, sources and links of a pool ("paper" or "full").

    RETURNS (Tuple[Benchmark, Optional[TessCorpus]]): the benchmark and, for "full",
        the Tesserae source corpus whose rows are the benchmark's sources.
    """
    queries, sources, links = read_links(labels)
    rng = random.Random(seed)
    source_corpus = read_tesserae(tess_files(tesserae_dir, SOURCE_AUTHORS))
    source_index = source_corpus.index()
    query_corpus = read_tesserae(
        [
            p
            for p in tess_files(tesserae_dir, QUERY_AUTHORS)
            if p.name.startswith(("jerome.epistulae", "lactantius.divinarum"))
        ]
    )
    gold_query_rows = _gold_tess_rows(list(queries), query_corpus.index())
    distractor_queries = _sample_queries(
        query_corpus, gold_query_rows, max(0, n_queries - len(queries)), rng
    )
    query_ids = list(queries) + [q for q, _ in distractor_queries]
    query_texts = list(queries.values()) + [t for _, t in distractor_queries]
    # distractor queries: spread over the folds (same for both protocols)
    folds_of = {q: i % N_FOLDS for i, (q, _) in enumerate(distractor_queries)}
    query_fold = {"distractor": folds_of}
    info: Dict[str, Any] = {
        "pool": pool,
        "seed": seed,
        "gold_links": len(links),
        "gold_queries": len(queries),
        "gold_sources": len(sources),
        "distractor_queries": len(distractor_queries),
        "queries": len(query_ids),
    }
    if pool == "paper":
        spans = [verse_span(t) for s, t in sources.items() if not s.startswith("cic.")] or [1]
        spans = [min(4, s) for s in spans]
        exclude = _gold_tess_rows(list(sources), source_index)
        distractors = _sample_sources(
            source_corpus, exclude, max(0, n_sources - len(sources)), spans, rng
        )
        source_ids = list(sources) + [s for s, _ in distractors]
        source_texts = list(sources.values()) + [t for _, t in distractors]
        info.update({"distractor_sources": len(distractors), "sources": len(source_ids)})
        bench = Benchmark(
            query_ids, query_texts, query_fold, source_ids, source_texts, links, sources, info
        )
        return bench, None
    if pool != "full":
        raise ValueError(f"intertext evaluate: unknown pool '{pool}'; use paper or full")
    source_ids = [s.seg_id for s in source_corpus.segments]
    source_texts = [s.text for s in source_corpus.segments]
    info.update({"sources": len(source_ids), "tesserae_duplicate_ids": source_corpus.duplicates})
    bench = Benchmark(
        query_ids, query_texts, query_fold, source_ids, source_texts, links, sources, info
    )
    return bench, source_corpus


def gold_items(
    bench: Benchmark, corpus: Optional[TessCorpus]
) -> Tuple[Dict[str, List[Set[int]]], Dict[int, Set[int]], Dict[str, int]]:
    """Gold items (sets of source rows) per query.

    bench (Benchmark): the pool.
    corpus (Optional[TessCorpus]): the Tesserae corpus of the full pool (None: paper pool).
    RETURNS (Tuple): query -> gold items, pair_id -> its rows, and location counts
        (full pool: exact id, shifted by text within +-3 lines, missing).
    """
    gold: Dict[str, List[Set[int]]] = {}
    link_rows: Dict[int, Set[int]] = {}
    counts = {"exact": 0, "shifted": 0, "missing": 0}
    if corpus is None:
        row_of = {s: i for i, s in enumerate(bench.source_ids)}
        for link in bench.links:
            link_rows[link.pair_id] = {row_of[link.source]}
    else:
        index = corpus.index()
        for link in bench.links:
            text = bench.gold_source_texts[link.source]
            position = index.get(loci_to_tesserae(link.source))
            if position is None:
                counts["missing"] += 1
                link_rows[link.pair_id] = set()
                continue
            want = set(terms(text.split("/")[0]))
            best, best_overlap = position, -1.0
            for shift in (0, -1, 1, -2, 2, -3, 3):
                p = position + shift
                if (
                    0 <= p < len(corpus.segments)
                    and corpus.segments[p].path == corpus.segments[position].path
                ):
                    got = set(terms(corpus.segments[p].text))
                    overlap = len(want & got) / max(1, len(want))
                    if overlap > best_overlap + 1e-9:
                        best, best_overlap = p, overlap
            counts["exact" if best == position else "shifted"] += 1
            span = (
                1
                if Path(corpus.segments[best].path).name.startswith(PROSE_AUTHORS)
                else verse_span(text)
            )
            link_rows[link.pair_id] = set(range(best, best + span))
    for link in bench.links:
        items = gold.setdefault(link.query, [])
        rows = link_rows[link.pair_id]
        if not rows or rows not in items:
            items.append(rows)
    return gold, link_rows, counts
