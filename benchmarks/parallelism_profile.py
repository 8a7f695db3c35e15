"""Where a parallelism package's prediction time goes: the encoder, the heads, the rest.

Runs the pipeline over a gold split's words (fresh docs, cache off, float32) once to
warm up, then once under cProfile, and writes the cumulative seconds of the encoder
(``FrozenEncoder._compute``: word pieces, windows, the transformer, pooling), of the
transformer alone (``BertModel.forward``: embeddings and layers), of the heads (the
torch networks' ``forward``: BiLSTM, attention, CRF decoding, linker) and of everything
else, with their shares.

    OMP_NUM_THREADS=2 python benchmarks/parallelism_profile.py la_rhetoric_parallelism \
        corpus/asp/test.spacy zh_rhetoric_parallelism corpus/pse/test.spacy \
        --output benchmarks/results/parallelism_profile.json

(pairs of MODEL GOLD). cProfile adds some overhead of its own; compare shares, not speed.
"""

import argparse
import cProfile
import json
import os
import platform
import pstats
import time
from pathlib import Path
from typing import Any, Dict

# every document is encoded: no disk cache of encoder states either
os.environ.pop("SPACY_RHETORIC_FEATURE_CACHE", None)

import torch

import spacy_rhetoric  # noqa: F401

PARTS = {
    "encoder": ("spacy_rhetoric/encoders/vectors.py", "_compute"),
    "transformer": ("transformers/models/bert/modeling_bert.py", "forward"),
    "heads": ("spacy_rhetoric/parallelism/network.py", "forward"),
}


def cumulative(stats: pstats.Stats, path: str, function: str) -> float:
    """RETURNS (float): the largest cumulative time of a function of that file and name
    (the outermost call: nested calls of the same name are inside it)."""
    best = 0.0
    for (filename, _, name), (_, _, _, cum, _) in stats.stats.items():
        if filename.endswith(path) and name == function:
            best = max(best, cum)
    return best


def profile(model: str, gold: Path) -> Dict[str, Any]:
    import spacy
    from spacy.tokens import Doc, DocBin

    overrides = {"components": {"parallelism_tagger": {"model": {"tok2vec": {"cache_tokens": 0}}}}}
    nlp = spacy.load(model, config=overrides)
    docs = list(DocBin().from_disk(gold).get_docs(nlp.vocab))
    tokens = sum(len(doc) for doc in docs)

    def run() -> None:
        # fresh docs of the gold words: no annotation, no state carried over
        fresh = (
            Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
            for doc in docs
        )
        for _ in nlp.pipe(fresh):
            pass

    run()  # load the encoder, warm up
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    run()
    profiler.disable()
    seconds = time.perf_counter() - started
    stats = pstats.Stats(profiler)
    parts = {name: cumulative(stats, *where) for name, where in PARTS.items()}
    parts["rest"] = seconds - parts["encoder"] - parts["heads"]
    return {
        "model": model,
        "gold": str(gold),
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tokens_per_second_profiled": round(tokens / seconds, 1),
        "seconds_by_part": {k: round(v, 2) for k, v in parts.items()},
        "share_by_part": {k: round(v / seconds, 3) for k, v in parts.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs", nargs="+", help="MODEL GOLD [MODEL GOLD ...]")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    if len(args.pairs) % 2:
        parser.error("give MODEL GOLD pairs")
    results = {
        "machine": platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(),
        "runs": [],
    }
    for model, gold in zip(args.pairs[::2], args.pairs[1::2]):
        run = profile(model, Path(gold))
        results["runs"].append(run)
        print(run, flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
