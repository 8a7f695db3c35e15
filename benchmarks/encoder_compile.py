"""Does ``torch.compile`` (inductor, CPU) speed up a shipped parallelism pipeline? The
frozen encoder of MODEL is compiled with dynamic shapes; the first pass (compilation
included) is timed apart, then the eager and the compiled encoder take turns over a
gold split (no cache: every document encoded), reporting spaCy tokens/s and EPM F1.

    OMP_NUM_THREADS=2 python benchmarks/encoder_compile.py la_rhetoric_parallelism \
        corpus/asp/dev.spacy --name asp-dev-la --threads 2 --repeats 3

Writes benchmarks/results/encoder_compile_NAME.json. Needs a C++ compiler (inductor
generates and builds C++ kernels). Run on an otherwise idle machine.
"""

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

# every document is encoded: no disk cache of encoder states either
os.environ.pop("SPACY_RHETORIC_FEATURE_CACHE", None)

import spacy  # noqa: E402
import torch  # noqa: E402

import spacy_rhetoric  # noqa: E402,F401
from spacy_rhetoric.encoders.vectors import frozen_encoder_slot  # noqa: E402
from spacy_rhetoric.parallelism.evaluate import evaluate_parallelism  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a pipeline directory or an installed package")
    parser.add_argument("gold", type=Path)
    parser.add_argument("--name", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--precision", default="auto")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    encoder = {"cache_tokens": 0, "precision": args.precision}
    overrides = {"components": {"parallelism_tagger": {"model": {"tok2vec": encoder}}}}
    nlp = spacy.load(args.model, config=overrides)
    nlp("uerbum caro factum est .")  # load the encoder
    frozen = frozen_encoder_slot(nlp.get_pipe("parallelism_tagger").model).get()
    eager = frozen.model
    start = time.perf_counter()
    compiled = torch.compile(eager, dynamic=True)
    frozen.model = compiled
    first = evaluate_parallelism(args.gold, None, nlp)
    first_seconds = time.perf_counter() - start
    runs = []
    for turn in range(args.repeats):
        for name, model in (("eager", eager), ("compiled", compiled)):
            frozen.model = model
            scores = evaluate_parallelism(args.gold, None, nlp)
            runs.append(
                {
                    "encoder": name,
                    "turn": turn,
                    "tokens_per_second": round(scores["tokens_per_second"], 1),
                    "epm_f": round(100 * scores["parallelism_epm_f"], 2),
                }
            )
            print(runs[-1], flush=True)
    summary = {}
    for name in ("eager", "compiled"):
        speeds = [r["tokens_per_second"] for r in runs if r["encoder"] == name]
        summary[name] = {
            "tokens_per_second_mean": round(statistics.mean(speeds), 1),
            "tokens_per_second_sd": round(statistics.stdev(speeds), 1) if len(speeds) > 1 else 0,
            "epm_f": next(r["epm_f"] for r in runs if r["encoder"] == name),
        }
    summary["ratio"] = round(
        summary["compiled"]["tokens_per_second_mean"] / summary["eager"]["tokens_per_second_mean"],
        3,
    )
    result = {
        "model": args.model,
        "gold": str(args.gold),
        "threads": args.threads,
        "precision": frozen.precision,
        "torch": torch.__version__,
        "machine": platform.processor() or platform.machine(),
        "first_pass_with_compilation_seconds": round(first_seconds, 1),
        "first_pass_tokens_per_second": round(first["tokens_per_second"], 1),
        "runs": runs,
        "summary": summary,
    }
    print(json.dumps(summary))
    out = Path(__file__).resolve().parent / "results" / f"encoder_compile_{args.name}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
