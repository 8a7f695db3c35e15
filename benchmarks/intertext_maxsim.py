"""Paraphrase evidence for the intertext reranker (#27): word-level soft matching. The
links the reranker misses share one or two rare words with their query, or none; the
dense channel compares whole passages, one mean vector each. Here each candidate also
gets MaxSim (as in ColBERT, untrained): every word piece of the query is matched to its
most similar word piece of the source by the cosine of multilingual-e5-small's last-layer
states, and the similarities are averaged (``maxsim``), and the same from the source's side
(``maxsim_source``). The grouped 5-fold CV of ``intertext evaluate --pool full`` with the
shipped logistic reranker reading these two columns besides its own; everything else
as shipped. Word-piece states are computed once per passage (a passage is cut at 128
pieces, as in the index) and kept in memory.

    python benchmarks/intertext_maxsim.py --index training/intertext/full-index \
        --output benchmarks/results/intertext_maxsim.json
"""

import argparse
import json
import time
from pathlib import Path
from typing import Dict, List

import numpy as np
from intertext_reranker_models import SHIPPED_RERANK_FOLD, grouped_cv

from spacy_rhetoric.intertext import evaluate as ev
from spacy_rhetoric.intertext.dense import load_encoder, prompt_prefix

# the index's dense encoder, whose word-piece states are compared
MODEL = "multilingual-e5-small"


class PieceStates:
    """Unit-length last-layer states of each passage's word pieces, without [CLS] and
    [SEP], computed once (float16)."""

    def __init__(self, model: str, batch_size: int = 64):
        self.encoder = load_encoder(model)
        self.batch_size = batch_size
        self.states: Dict[str, np.ndarray] = {}
        self.seconds = 0.0

    def add(self, texts: List[str], prompt: str) -> None:
        prefix = prompt_prefix(self.encoder, prompt)
        todo = sorted({t for t in texts if (prompt, t) not in self.states})
        if not todo:
            return
        start = time.perf_counter()
        out = self.encoder.encode(
            [prefix + t for t in todo],
            output_value="token_embeddings",
            batch_size=self.batch_size,
            convert_to_numpy=False,
        )
        for text, states in zip(todo, out):
            states = states.float().numpy()[1:-1]
            norm = np.linalg.norm(states, axis=1, keepdims=True)
            self.states[(prompt, text)] = (states / np.maximum(norm, 1e-9)).astype(np.float16)
        self.seconds += time.perf_counter() - start
        print(f"[maxsim] {len(todo)} {prompt} texts in {self.seconds:.0f} s", flush=True)

    def maxsim(self, query: str, source: str) -> List[float]:
        q = self.states[("query", query)].astype(np.float32)
        s = self.states[("passage", source)].astype(np.float32)
        if not len(q) or not len(s):
            return [0.0, 0.0]
        sim = q @ s.T
        return [float(sim.max(axis=1).mean()), float(sim.max(axis=0).mean())]


def maxsim_rerank_fold(states: PieceStates, sources: List[str], text_of: Dict[str, str]):
    """``rerank_fold`` with the two MaxSim columns appended to each candidate's features."""

    def fit(fold, fused, feats, settings, record):
        queries = list(feats)
        states.add([text_of[q] for q in queries], "query")
        states.add([sources[c.row] for q in queries for c in fused[q]], "passage")
        feats = {
            q: np.hstack(
                [
                    X,
                    np.asarray(
                        [states.maxsim(text_of[q], sources[c.row]) for c in fused[q]],
                        dtype=X.dtype,
                    ).reshape(len(X), 2),
                ]
            )
            for q, X in feats.items()
        }
        return SHIPPED_RERANK_FOLD(fold, fused, feats, settings, record)

    return fit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("assets"))
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    labels = args.data / "loci-similes" / "labels.csv"
    texts = args.data / "latin-corpora" / "tesserae" / "texts" / "la"
    bench, _ = ev.build_benchmark(labels, texts, "full")
    text_of = dict(zip(bench.query_ids, bench.query_texts))
    states = PieceStates(MODEL)
    start = time.perf_counter()
    # candidate rows are rows of the pool, the index's rows (built from the same sources)
    fit_fold = maxsim_rerank_fold(states, list(bench.source_texts), text_of)
    grouped, summary = grouped_cv(args.data, args.index, fit_fold=fit_fold)
    result = {
        "index": str(args.index),
        "model": MODEL,
        "seconds": time.perf_counter() - start,
        "encoding_seconds": states.seconds,
        "passages_encoded": sum(1 for key in states.states if key[0] == "passage"),
        "summary": summary,
        "grouped": grouped,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
