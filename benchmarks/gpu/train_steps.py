"""Time the training steps of a spaCy config on the CPU or a GPU: the pipeline is
initialised as ``spacy train`` does it, then ``nlp.update`` runs over the config's own
batches; the first ``--warmup`` steps (encoder loading, kernel compilation, the first
states of the caches) are timed apart. Writes JSON: seconds per step (mean, median),
words per step and per second, and the device.

    python benchmarks/gpu/train_steps.py configs/parallelism/asp-me5-adapted.cfg \
        --gpu-id 0 --steps 60 --warmup 10 --out metrics/gpu-steps-asp-top2.json \
        --components.parallelism_tagger.spelling latin-v

``--crf auto|scan|forward`` times the CRF loss's two ways of computing log Z
(``ConstrainedCRF.algorithm``; run each in its own process, alternating).
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import spacy
import torch
from spacy import util
from spacy.cli._util import parse_config_overrides
from spacy.schemas import ConfigSchemaTraining
from spacy.training.initialize import init_nlp
from spacy.util import registry, resolve_dot_names
from thinc.api import require_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--gpu-id", type=int, default=-1)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--label", default="")
    parser.add_argument(
        "--crf",
        choices=["auto", "scan", "forward"],
        default=None,
        help="how the CRF loss computes log Z (default: ConstrainedCRF's)",
    )
    args, rest = parser.parse_known_args()
    overrides = parse_config_overrides(rest)
    if args.gpu_id >= 0:
        spacy.require_gpu(args.gpu_id)
    else:
        require_cpu()
    import spacy_rhetoric  # noqa: F401  (registers the components)
    from spacy_rhetoric.parallelism.crf import ConstrainedCRF

    if args.crf is not None:
        ConstrainedCRF.algorithm = args.crf

    config = util.load_config(args.config, overrides=overrides, interpolate=False)
    start = time.perf_counter()
    nlp = init_nlp(config, use_gpu=args.gpu_id)
    init_seconds = time.perf_counter() - start
    config = nlp.config.interpolate()
    T = registry.resolve(config["training"], schema=ConfigSchemaTraining)
    (train_corpus,) = resolve_dot_names(config, [T["train_corpus"]])
    optimizer = T["optimizer"]
    batcher = T["batcher"]
    # the GPU's queued work is part of a step
    synchronize = torch.cuda.synchronize if args.gpu_id >= 0 else (lambda: None)
    times, words = [], []
    step = 0
    while step < args.warmup + args.steps:
        for batch in batcher(train_corpus(nlp)):
            synchronize()
            t0 = time.perf_counter()
            nlp.update(batch, drop=T["dropout"], sgd=optimizer, losses={})
            synchronize()
            times.append(time.perf_counter() - t0)
            words.append(sum(len(eg.reference) for eg in batch))
            step += 1
            if step == args.warmup + args.steps:
                break
    timed, timed_words = times[args.warmup :], words[args.warmup :]
    result = {
        "label": args.label,
        "config": str(args.config),
        "overrides": dict(overrides),
        "crf": ConstrainedCRF.algorithm,
        "device": "gpu" if args.gpu_id >= 0 else "cpu",
        "gpu_name": _gpu_name() if args.gpu_id >= 0 else None,
        "init_seconds": init_seconds,
        "warmup_steps": args.warmup,
        "warmup_seconds": sum(times[: args.warmup]),
        "steps": len(timed),
        "seconds_per_step_mean": statistics.mean(timed),
        "seconds_per_step_median": statistics.median(timed),
        "words_per_step": statistics.mean(timed_words),
        "words_per_second": sum(timed_words) / sum(timed),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result))


def _gpu_name() -> str:
    return torch.cuda.get_device_name(0)


if __name__ == "__main__":
    main()
