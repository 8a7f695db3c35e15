"""Prediction speed and size of a parallelism pipeline on the frozen multilingual
encoder: tokens/s over a gold split (the model sees the gold tokens), with 1 and 2
threads, the encoder in float32 and in dynamic int8 (``quantize = true``), with the
per-document cache off (every document is encoded), and the EPM F1 each setting gets
(int8 changes the features, so its score is measured, not assumed).

    OMP_NUM_THREADS=2 python benchmarks/encoder_speed.py training/parallelism-asp-me5/model-tuned \
        corpus/asp/test.spacy --name asp

Writes benchmarks/results/encoder_speed_NAME.json. Run on an otherwise idle machine.
"""

import argparse
import json
import os
import platform
from pathlib import Path

# every document is encoded: no disk cache of encoder states either
os.environ.pop("SPACY_RHETORIC_FEATURE_CACHE", None)

import torch

import spacy_rhetoric  # noqa: F401
from spacy_rhetoric.encoders import encoder_path
from spacy_rhetoric.parallelism.evaluate import evaluate_parallelism


def directory_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def main() -> None:
    import spacy

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("gold", type=Path)
    parser.add_argument("--name", required=True)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument(
        "--window", type=int, default=None, help="read with this encoder window (pieces)"
    )
    parser.add_argument("--stride", type=int, default=None, help="and this stride")
    args = parser.parse_args()
    reading = {}
    if args.window is not None:
        reading["window"] = args.window
    if args.stride is not None:
        reading["stride"] = args.stride
    results = {
        "model": str(args.model),
        "gold": str(args.gold),
        "machine": platform.processor() or platform.machine(),
        "cpu_count": torch.get_num_threads(),
        "pipeline_mb": round(directory_mb(args.model), 1),
        "encoder_mb": round(directory_mb(encoder_path()), 1),
        "reading": reading,
        "runs": [],
    }
    for quantize in (False, True):
        overrides = {
            "components": {
                "parallelism_tagger": {
                    "model": {"tok2vec": {"cache_tokens": 0, "quantize": quantize, **reading}}
                }
            }
        }
        nlp = spacy.load(args.model, config=overrides)
        nlp("uerbum caro factum est et habitauit in nobis .")  # load the encoder
        for threads in [int(t) for t in args.threads.split(",")]:
            torch.set_num_threads(threads)
            scores = evaluate_parallelism(args.gold, None, nlp)
            run = {
                "quantize": quantize,
                "threads": threads,
                "device": "cpu",
                "tokens": scores["tokens"],
                "seconds": round(scores["seconds"], 2),
                "tokens_per_second": round(scores["tokens_per_second"], 1),
                "epm_f": round(100 * scores["parallelism_epm_f"], 2),
                "mwo_f": round(100 * scores["parallelism_mwo_f"], 2),
            }
            results["runs"].append(run)
            print(run)
    out = Path("benchmarks/results") / f"encoder_speed_{args.name}.json"
    out.write_text(json.dumps(results, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
