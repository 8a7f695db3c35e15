"""Encoding speed of the intertext dense channel: source segments per second of each
bi-encoder on one seeded sample of the full Loci Similes pool (every Tesserae
line/section of the ten source authors), with 1 and 2 threads, in one run so that the
ratios compare; and the full-pool indexing time that rate implies.

    python benchmarks/intertext_encoding.py ../shared/data/latin-corpora/tesserae/texts/la \\
        --sample 3000 --output benchmarks/results/intertext_encoding.json

Run it on an otherwise idle machine: the time of the real build is in
``metrics/intertext-index-full.json`` (``spacy project run index-intertext-full``).
"""

import argparse
import json
import platform
import random
import time
from pathlib import Path

import torch

from spacy_rhetoric.corpora.tesserae import SOURCE_AUTHORS, read_tesserae
from spacy_rhetoric.intertext.dense import (
    E5_MODEL,
    MINILM_MODEL,
    PASSAGE_PROMPT,
    encode,
    load_encoder,
)


def full_pool_texts(tesserae: Path):
    """RETURNS (List[str]): the texts of every segment of the ten source authors."""
    files = [f for f in sorted(tesserae.glob("*.tess")) if f.name.split(".")[0] in SOURCE_AUTHORS]
    return [segment.text for segment in read_tesserae(files).segments]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tesserae", type=Path, help="Tesserae texts/la folder")
    parser.add_argument("--sample", type=int, default=3000)
    parser.add_argument("--max-seq-length", type=int, default=128)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    texts = full_pool_texts(args.tesserae)
    sample = random.Random(0).sample(texts, min(args.sample, len(texts)))
    result = {
        "segments_in_pool": len(texts),
        "sample": len(sample),
        "max_seq_length": args.max_seq_length,
        "machine": {"processor": platform.processor(), "cpus": torch.get_num_threads()},
        "runs": [],
    }
    for model in (E5_MODEL, MINILM_MODEL):
        encoder = load_encoder(model, args.max_seq_length)
        encode(encoder, sample[:64], prompt_name=PASSAGE_PROMPT)  # warm-up
        for threads in [int(t) for t in args.threads.split(",")]:
            torch.set_num_threads(threads)
            start = time.perf_counter()
            encode(encoder, sample, prompt_name=PASSAGE_PROMPT)
            seconds = time.perf_counter() - start
            rate = len(sample) / seconds
            run = {
                "model": model,
                "threads": threads,
                "seconds": seconds,
                "segments_per_s": rate,
                "full_pool_minutes": len(texts) / rate / 60,
            }
            result["runs"].append(run)
            print(json.dumps(run), flush=True)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
