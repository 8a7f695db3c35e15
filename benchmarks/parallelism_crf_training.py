"""Train one parallelism seed with a chosen way of computing the CRF loss's log Z
(``ConstrainedCRF.algorithm``: "forward", "scan" or "auto") and record the wall time of
``spacy train`` and the best checkpoint's validation scores, so that two runs of the
same seed can be compared for time and for what they learn.

    SPACY_RHETORIC_FEATURE_CACHE=training/feature-cache OMP_NUM_THREADS=1 \
        python benchmarks/parallelism_crf_training.py configs/parallelism/asp-me5.cfg \
        training/crf-forward --crf forward \
        --output benchmarks/results/parallelism_crf_training_forward.json \
        --components.parallelism_tagger.spelling latin-v

Run the two settings side by side (one thread each) so that both see the same machine.
"""

import argparse
import json
import platform
import time
from pathlib import Path

import srsly
from spacy.cli._util import parse_config_overrides
from spacy.cli.train import train

import spacy_rhetoric  # noqa: F401  (registers the components)
from spacy_rhetoric.parallelism.crf import ConstrainedCRF


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--crf", choices=["auto", "scan", "forward"], required=True)
    parser.add_argument("--output", type=Path, required=True)
    args, rest = parser.parse_known_args()
    overrides = parse_config_overrides(rest)
    ConstrainedCRF.algorithm = args.crf
    start = time.perf_counter()
    train(args.config, args.output_dir, overrides=overrides)
    seconds = time.perf_counter() - start
    meta = srsly.read_json(args.output_dir / "model-best" / "meta.json")
    performance = meta.get("performance", {})
    result = {
        "config": str(args.config),
        "overrides": overrides,
        "crf": args.crf,
        "train_seconds": round(seconds, 1),
        "machine": platform.processor() or platform.machine(),
        "best_dev": {k: v for k, v in performance.items() if k.startswith("parallelism_")},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
