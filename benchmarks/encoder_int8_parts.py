"""Which of the encoder's linear layers can run in dynamic int8 without costing a
parallelism head its score, and what does that buy on this CPU? Each variant quantizes
a set of multilingual-e5-small's linear layers (``torch.ao`` dynamic int8, weights per
tensor as the ``quantize`` setting does, or per output channel) and is read by the same
pipeline; the variants take turns, so a slower spell of the machine hits them alike.

Variants: ``f32``; ``pt`` (all linear layers, per tensor: what ``quantize = true`` does);
``pc`` (all, per channel); a suffix ``-skip`` with ``+``-joined parts keeps those in
float32: ``q``, ``k``, ``v``, ``ao`` (attention output), ``fi`` (feed-forward in),
``fo`` (feed-forward out), e.g. ``pc-skipfo``.

    OMP_NUM_THREADS=2 python benchmarks/encoder_int8_parts.py la_rhetoric_parallelism \
        corpus/asp/dev.spacy --variants f32,pt,pc,pc-skipfo,pc-skipfi+fo --repeats 2 \
        --output benchmarks/results/encoder_int8_parts_asp-dev-la.json
"""

import argparse
import json
import os
import platform
import warnings
from pathlib import Path
from typing import Dict, List

# every document is encoded: no disk cache of encoder states either
os.environ.pop("SPACY_RHETORIC_FEATURE_CACHE", None)

import numpy
import spacy
import torch

import spacy_rhetoric  # noqa: F401
from spacy_rhetoric.encoders import encoder_path, vectors
from spacy_rhetoric.encoders.vectors import native_bfloat16
from spacy_rhetoric.parallelism.evaluate import evaluate_parallelism

PARTS = {
    "attention.self.query": "q",
    "attention.self.key": "k",
    "attention.self.value": "v",
    "attention.output.dense": "ao",
    "intermediate.dense": "fi",
    "output.dense": "fo",
}


def quantized(variant: str):
    """RETURNS: the encoder with the linear layers of ``variant`` in dynamic int8.

    RAISES ValueError: an unknown variant or part.
    """
    from transformers import AutoModel

    kind, _, skipped = variant.partition("-skip")
    if kind not in ("f32", "pt", "pc") or (kind == "f32" and skipped):
        raise ValueError(f"unknown variant {variant!r}: f32, pt or pc, then -skipPART+PART")
    skip = set(filter(None, skipped.split("+")))
    if skip - set(PARTS.values()):
        raise ValueError(f"unknown parts {sorted(skip - set(PARTS.values()))} in {variant!r}")
    model = AutoModel.from_pretrained(str(encoder_path())).eval()
    if kind == "f32":
        return model
    qconfig = (
        torch.ao.quantization.per_channel_dynamic_qconfig
        if kind == "pc"
        else torch.ao.quantization.default_dynamic_qconfig
    )
    spec = {}
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear) or ".layer." not in name:
            continue
        part = PARTS.get(name.split(".layer.")[1].split(".", 1)[1])
        if part not in skip:
            spec[name] = qconfig
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, spec, torch.qint8)


def pipeline(model: str, variant: str):
    """RETURNS: the pipeline reading through the encoder of ``variant`` (installed in the
    process's shared encoders under the key a quantized encoder has)."""
    path = str(encoder_path().resolve())
    int8 = variant != "f32"
    vectors._SHARED_MODELS.clear()
    vectors._SHARED_MODELS[(path, int8, "cpu")] = quantized(variant)
    encoder = {"cache_tokens": 0, "quantize": int8, "precision": "float32"}
    overrides = {"components": {"parallelism_tagger": {"model": {"tok2vec": encoder}}}}
    nlp = spacy.load(model, config=overrides)
    nlp("uerbum caro factum est")  # load the encoder now, while this variant is installed
    return nlp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("gold", type=Path)
    parser.add_argument("--variants", default="f32,pt,pc,pc-skipfo")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    variants = args.variants.split(",")
    pipelines = {variant: pipeline(args.model, variant) for variant in variants}
    runs: List[Dict] = []
    for turn in range(args.repeats):
        for variant, nlp in pipelines.items():
            scores = evaluate_parallelism(args.gold, None, nlp)
            run = {
                "variant": variant,
                "turn": turn,
                "tokens_per_second": round(scores["tokens_per_second"], 1),
                "epm_f": round(100 * scores["parallelism_epm_f"], 2),
                "mwo_f": round(100 * scores["parallelism_mwo_f"], 2),
            }
            runs.append(run)
            print(run, flush=True)
    summary = {}
    for variant in variants:
        rows = [run for run in runs if run["variant"] == variant]
        speeds = [run["tokens_per_second"] for run in rows]
        summary[variant] = {
            "tokens_per_second_mean": round(float(numpy.mean(speeds)), 1),
            "tokens_per_second_sd": round(float(numpy.std(speeds, ddof=1)), 1)
            if len(speeds) > 1
            else 0.0,
            "epm_f": rows[0]["epm_f"],
            "mwo_f": rows[0]["mwo_f"],
        }
    base = summary.get("f32", {}).get("tokens_per_second_mean")
    if base:
        for row in summary.values():
            row["speed_vs_f32"] = round(row["tokens_per_second_mean"] / base, 2)
    results = {
        "model": args.model,
        "gold": str(args.gold),
        "machine": platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(),
        "bfloat16_native": native_bfloat16(torch.device("cpu")),
        "runs": runs,
        "summary": summary,
    }
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    for variant, row in summary.items():
        print(variant, row)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
