"""Prediction speed and size of a parallelism pipeline on the frozen multilingual
encoder: tokens/s over a gold split (the model sees the gold tokens), with 1 and 2
threads, the encoder in float32, in bfloat16 under autocast (``precision = "bfloat16"``,
where the CPU multiplies bfloat16 natively) and in dynamic int8 (``quantize = true``), with the
per-document cache off (every document is encoded), and the EPM F1 each setting gets
(int8 changes the features, so its score is measured, not assumed).

    OMP_NUM_THREADS=2 python benchmarks/encoder_speed.py training/parallelism-asp-me5/model-tuned \
        corpus/asp/test.spacy --name asp
    OMP_NUM_THREADS=2 python benchmarks/encoder_speed.py la_rhetoric_parallelism \
        corpus/asp/test.spacy --name asp-la --threads 2 --settings float32,auto --repeats 5

MODEL is a pipeline directory or an installed package.

Writes benchmarks/results/encoder_speed_NAME.json. Run on an otherwise idle machine.
"""

import argparse
import json
import os
import platform
from pathlib import Path

# every document is encoded: no disk cache of encoder states either
os.environ.pop("SPACY_RHETORIC_FEATURE_CACHE", None)

import numpy
import torch

import spacy_rhetoric  # noqa: F401
from spacy_rhetoric.encoders import encoder_path
from spacy_rhetoric.encoders.vectors import frozen_encoder_slot, native_bfloat16
from spacy_rhetoric.parallelism.evaluate import evaluate_parallelism


def directory_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def pipeline_path(model: Path) -> Path:
    """RETURNS (Path): a pipeline directory, or the installed package of that name."""
    import spacy

    return model if model.exists() else spacy.util.get_package_path(str(model))


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
    parser.add_argument(
        "--repeats", type=int, default=1, help="timed turns per setting (they alternate)"
    )
    parser.add_argument(
        "--settings",
        default="float32,bfloat16,int8",
        help="encoder arithmetic to time, comma-separated: float32, bfloat16, auto, int8",
    )
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
        "bfloat16_native": native_bfloat16(torch.device("cpu")),
        "pipeline_mb": round(directory_mb(pipeline_path(args.model)), 1),
        "encoder_mb": round(directory_mb(encoder_path()), 1),
        "reading": reading,
        "runs": [],
    }
    pipelines = {}
    for setting in args.settings.split(","):
        quantize = setting == "int8"
        precision = "float32" if quantize else setting
        encoder = {"cache_tokens": 0, "quantize": quantize, "precision": precision, **reading}
        overrides = {"components": {"parallelism_tagger": {"model": {"tok2vec": encoder}}}}
        # a pipeline directory, or an installed package by name
        nlp = spacy.load(args.model if args.model.exists() else str(args.model), config=overrides)
        nlp("uerbum caro factum est et habitauit in nobis .")  # load the encoder
        model = nlp.get_pipe("parallelism_tagger").model
        slot = frozen_encoder_slot(model)
        pipelines[setting] = (nlp, quantize, slot.get().precision)
    # the settings take turns, so that a slower spell of the machine hits them alike
    for turn in range(args.repeats):
        for setting, (nlp, quantize, resolved) in pipelines.items():
            for threads in [int(t) for t in args.threads.split(",")]:
                torch.set_num_threads(threads)
                scores = evaluate_parallelism(args.gold, None, nlp)
                run = {
                    "setting": setting,
                    "turn": turn,
                    "quantize": quantize,
                    "precision": resolved,
                    "threads": threads,
                    "device": "cpu",
                    "tokens": scores["tokens"],
                    "seconds": round(scores["seconds"], 2),
                    "tokens_per_second": round(scores["tokens_per_second"], 1),
                    "epm_f": round(100 * scores["parallelism_epm_f"], 2),
                    "mwo_f": round(100 * scores["parallelism_mwo_f"], 2),
                }
                results["runs"].append(run)
                print(run, flush=True)
    summary = {}
    for run in results["runs"]:
        summary.setdefault(f"{run['setting']}, {run['threads']} threads", []).append(run)
    results["summary"] = {
        key: {
            "tokens_per_second_mean": round(float(numpy.mean(speeds)), 1),
            "tokens_per_second_sd": round(float(numpy.std(speeds, ddof=1)), 1)
            if len(speeds) > 1
            else 0.0,
            "turns": len(speeds),
            "epm_f": runs[0]["epm_f"],
        }
        for key, runs in summary.items()
        for speeds in [[r["tokens_per_second"] for r in runs]]
    }
    for key, row in results["summary"].items():
        print(key, row)
    out = Path(__file__).resolve().parent / "results" / f"encoder_speed_{args.name}.json"
    out.write_text(json.dumps(results, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
