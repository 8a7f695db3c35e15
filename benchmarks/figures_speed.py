"""How much time does ``figure_finder`` add to a base pipeline? The installed base
pipeline alone against the same pipeline with a ``figure_finder`` (the shipped scorer)
on about 100,000 tokens of UD English-EWT train (ten sentences a doc), in alternating
turns (base, base + finder, base, ...) so that drift in the machine's speed falls on
both; the median turn of each. ``--langs`` adds other languages on their calibration
running text (``spacy_rhetoric.figures.calibrate.running_parts``).

    python benchmarks/figures_speed.py --data ../assets --output results/figures_speed.json
        [--langs en,la,de,zh] [--tokens 100000] [--turns 3]

Run with OMP_NUM_THREADS=1. Target (issue 59): at most 10 % added. Wall time and the
process's CPU time are both reported; on a machine shared with other jobs the CPU time
(``added_cpu``) is the steadier of the two.
"""

import argparse
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Dict, List

import spacy
import srsly

import spacy_rhetoric  # noqa: F401  (registers figure_finder)
from spacy_rhetoric.assets import data_root
from spacy_rhetoric.figures.calibrate import running_parts, treebank_texts

EWT_TRAIN = "ud/UD_English-EWT/en_ewt-ud-train.conllu"
TARGET_ADDED = 0.10


def english_texts(data: Path, tokens: int) -> List[str]:
    texts, _ = treebank_texts(data / EWT_TRAIN, " ")
    out, seen = [], 0
    for text in texts:
        out.append(text)
        seen += len(text.split()) * 1.15  # about the tokenizer's tokens
        if seen >= tokens:
            break
    return out


def measure(lang: str, texts: List[str], turns: int) -> Dict:
    nlp = spacy.load(f"{lang}_rhetoric_base")
    nlp.add_pipe("figure_finder")
    n_tokens = sum(len(doc) for doc in nlp.pipe(texts[:20]))  # warm-up
    times: Dict[str, List[float]] = {"base": [], "base+figure_finder": []}
    cpu: Dict[str, List[float]] = {"base": [], "base+figure_finder": []}
    reports = 0
    for _ in range(turns):
        for setting in times:
            disabled = ["figure_finder"] if setting == "base" else []
            with nlp.select_pipes(disable=disabled):
                start, start_cpu = time.perf_counter(), time.process_time()
                docs = list(nlp.pipe(texts, batch_size=64))
                times[setting].append(time.perf_counter() - start)
                cpu[setting].append(time.process_time() - start_cpu)
            n_tokens = sum(len(doc) for doc in docs)
            if setting != "base":
                reports = sum(len(doc.spans["figures"]) for doc in docs)
    base = statistics.median(times["base"])
    both = statistics.median(times["base+figure_finder"])
    base_cpu = statistics.median(cpu["base"])
    both_cpu = statistics.median(cpu["base+figure_finder"])
    return {
        "lang": lang,
        "tokens": n_tokens,
        "docs": len(texts),
        "seconds": {k: [round(v, 3) for v in values] for k, values in times.items()},
        "median_base_s": round(base, 3),
        "median_with_finder_s": round(both, 3),
        "added": round(both / base - 1, 4),
        "cpu_seconds": {k: [round(v, 3) for v in values] for k, values in cpu.items()},
        # CPU time of this process: other jobs on a shared machine move it far less
        "added_cpu": round(both_cpu / base_cpu - 1, 4),
        "finder_tokens_per_s": round(n_tokens / max(both - base, 1e-9)),
        "reports_per_1000": round(reports * 1000 / max(n_tokens, 1), 3),
        "target_added": TARGET_ADDED,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="The data mirror (ud/, ...)")
    parser.add_argument("--output", type=Path, default=Path("results/figures_speed.json"))
    parser.add_argument("--langs", default="en")
    parser.add_argument("--tokens", type=int, default=100000)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    data = args.data or data_root()
    results = []
    for lang in args.langs.split(","):
        if lang == "en":
            texts = english_texts(data, args.tokens)
        else:
            texts = running_parts(lang, data)[0]
        result = measure(lang, texts, args.turns)
        print(
            f"{lang}: {result['tokens']} tokens, base {result['median_base_s']} s, with "
            f"figure_finder {result['median_with_finder_s']} s: +{100 * result['added']:.1f} % "
            f"(CPU time: +{100 * result['added_cpu']:.1f} %)"
        )
        results.append(result)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(
        args.output,
        {
            "results": results,
            "threads": os.environ.get("OMP_NUM_THREADS"),
            "python": platform.python_version(),
            "spacy": spacy.__version__,
            "machine": platform.machine(),
        },
    )


if __name__ == "__main__":
    main()
