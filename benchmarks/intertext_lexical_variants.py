"""What could lift the lexical channel over the whole Latin pool (#27)? Recall@k of the
lexical channel alone over every located Loci Similes link (a link counts at the best rank
of its source rows), for today's channel (stems; long prose segments scored by their
sentences) and for variants:

- ``windows``: a verse line is also scored by the 2-line windows it belongs to (with the
  line before and after it in the same text), its score the best of its units; the
  windows' terms weighted by today's idf, their length norm by today's mean unit length;
- ``windows-own``: as ``windows``, but a window counts for a line only when the line
  itself shares a term with the query (a strong line does not lift its neighbours);
- ``chars-LO-HI``: the character n-grams of the words alone (``intertext/chars.py``);
- ``stems+chars-LO-HI``: the stems' ranking fused with the n-grams' as ``intertext index
  --chars LO-HI`` fuses them (``fuse_rankings`` over the top 1,000 of each).

Not cross-validated: every link is looked at, nothing is fitted.

    python benchmarks/intertext_lexical_variants.py \
        --output benchmarks/results/intertext_lexical_variants.json
"""

import argparse
import json
from pathlib import Path
from typing import Dict, List, Sequence, Set

import numpy as np
from scipy import sparse

from spacy_rhetoric.intertext.benchmark import PROSE_AUTHORS, build_benchmark, gold_items
from spacy_rhetoric.intertext.chars import CharIndex, fuse_rankings
from spacy_rhetoric.intertext.lexical import SPLIT_WORDS, LexicalIndex, terms

KS = (1, 5, 10, 100, 1000)
DEPTH = 1000
NGRAMS = ((3, 3), (4, 4), (5, 5), (3, 5))


def windows(paths: Sequence[str], prose: np.ndarray) -> np.ndarray:
    """(n_windows, 2) pairs of consecutive verse rows of the same text."""
    rows = np.arange(len(paths) - 1)
    same = np.asarray([paths[i] == paths[i + 1] for i in rows], dtype=bool)
    keep = same & ~prose[:-1] & ~prose[1:]
    return np.stack([rows[keep], rows[keep] + 1], axis=1)


def window_matrix(base: LexicalIndex, texts: Sequence[str], pairs: np.ndarray):
    """Binary (n_windows, n_terms) matrix over the base vocabulary, and the windows'
    length norms (the base index's mean unit length)."""
    term_sets: List[Set[int]] = []
    for a, b in pairs:
        ids = {base.vocab[t] for t in terms(texts[a] + " " + texts[b]) if t in base.vocab}
        term_sets.append(ids)
    indptr = np.cumsum([0] + [len(s) for s in term_sets])
    indices = np.fromiter((i for s in term_sets for i in sorted(s)), dtype=np.int64)
    matrix = sparse.csr_matrix(
        (np.ones(len(indices), dtype=np.float32), indices, indptr),
        shape=(len(term_sets), len(base.vocab)),
    )
    lengths = np.asarray(base.matrix.sum(axis=1)).ravel()
    mean = max(float(lengths.mean()), 1.0)
    norm = 1.0 - base.length_norm + base.length_norm * np.diff(indptr) / mean
    return matrix, norm.astype(np.float32)


def row_scores(base: LexicalIndex, query: sparse.csr_matrix) -> np.ndarray:
    """Today's lexical scores of every row for one query (0 where nothing is shared)."""
    units = (query @ base.matrix.T).toarray().ravel() / base.norm
    if base.unit_row is None:
        return units.astype(np.float32)
    out = np.zeros(len(base), dtype=np.float32)
    np.maximum.at(out, base.unit_row, units.astype(np.float32))
    return out


def rank_of(scores: np.ndarray, rows: Set[int]) -> int:
    """The best rank among ``rows`` (ties broken by the lower row, as the index does);
    rows that share nothing with the query are never ranked."""
    best = None
    for r in rows:
        s = scores[r]
        if s <= 0:
            continue
        rank = int((scores > s).sum() + (scores[:r] == s).sum())
        best = rank if best is None else min(best, rank)
    return len(scores) + 1 if best is None else best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("assets"))
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--no-chars", action="store_true", help="windows only (fast)")
    args = parser.parse_args()
    bench, corpus = build_benchmark(
        args.data / "loci-similes" / "labels.csv",
        args.data / "latin-corpora" / "tesserae" / "texts" / "la",
        "full",
    )
    gold, _, _ = gold_items(bench, corpus)
    texts = bench.source_texts
    paths = [s.path for s in corpus.segments]
    prose = np.asarray([Path(p).name.startswith(PROSE_AUTHORS) for p in paths], dtype=bool)
    base = LexicalIndex.build(texts, "stem", SPLIT_WORDS)
    pairs = windows(paths, prose)
    w_matrix, w_norm = window_matrix(base, texts, pairs)
    text_of = dict(zip(bench.query_ids, bench.query_texts))
    queries = [q for q in bench.query_ids if gold.get(q)]
    q_matrix = base.query_matrix([text_of[q] for q in queries])
    ranks: Dict[str, List[int]] = {"today": [], "windows": [], "windows-own": []}
    for qi, q in enumerate(queries):
        own = row_scores(base, q_matrix[qi])
        w = (q_matrix[qi] @ w_matrix.T).toarray().ravel() / w_norm
        lifted = own.copy()
        np.maximum.at(lifted, pairs[:, 0], w.astype(np.float32))
        np.maximum.at(lifted, pairs[:, 1], w.astype(np.float32))
        gated = np.where(own > 0, lifted, 0.0).astype(np.float32)
        for name, scores in (("today", own), ("windows", lifted), ("windows-own", gated)):
            ranks[name].extend(rank_of(scores, item) for item in gold[q])
    missing = len(texts) + 1
    query_texts = [text_of[q] for q in queries]
    lex_hits = [] if args.no_chars else base.search(query_texts, DEPTH)
    for lo, hi in () if args.no_chars else NGRAMS:
        char_hits = CharIndex.build(texts, (lo, hi)).search(query_texts, DEPTH)
        for name, ranked in (
            (f"chars-{lo}-{hi}", [rows for rows, _ in char_hits]),
            (
                f"stems+chars-{lo}-{hi}",
                [fuse_rankings(a, b, DEPTH) for (a, _), (b, _) in zip(lex_hits, char_hits)],
            ),
        ):
            ranks[name] = []
            for q, rows in zip(queries, ranked):
                position = {int(r): i for i, r in enumerate(rows)}
                ranks[name].extend(min(position.get(r, missing) for r in item) for item in gold[q])
        print(f"{lo}-{hi}: done", flush=True)
    result = {
        "links": len(ranks["today"]),
        "verse_windows": int(len(pairs)),
        "lexical_recall": {
            name: {f"recall@{k}": float((np.asarray(r) < k).mean()) for k in KS}
            for name, r in ranks.items()
        },
        "moved": {
            name: {
                "up": int((np.asarray(r) < np.asarray(ranks["today"])).sum()),
                "down": int((np.asarray(r) > np.asarray(ranks["today"])).sum()),
            }
            for name, r in ranks.items()
            if name != "today"
        },
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
