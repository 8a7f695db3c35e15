"""What do the figures of thought (antithesis, rhetorical questions) add to
``figure_finder``? The finder with every figure against the finder without the two, on
the same parsed docs (the running text the figures calibration reads, through each
language's base pipeline once, cached), in alternating turns; the process's CPU time of
each turn, the median of each, and the base pipeline's own CPU time on the same docs
for scale.

    python benchmarks/figures_thought_speed.py --data ../assets \
        --output results/figures_thought_speed.json [--langs la,en,de] [--turns 5]

Run with OMP_NUM_THREADS=1.
"""

import argparse
import statistics
import time
from pathlib import Path

import spacy
import srsly

import spacy_rhetoric  # noqa: F401  (registers figure_finder)
from spacy_rhetoric.figures.calibrate import running_parts
from spacy_rhetoric.figures.component import FIGURES, FigureFinder
from spacy_rhetoric.figures.thought import FIGURES as THOUGHT

BASES = {"la": "la_rhetoric_base", "en": "en_rhetoric_base", "de": "de_rhetoric_base"}


def cpu_seconds(finder, docs) -> float:
    start = time.process_time()
    for doc in docs:
        finder(doc)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--langs", default="la,en,de")
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    results = []
    for lang in args.langs.split(","):
        nlp = spacy.load(BASES[lang])
        texts, _, _ = running_parts(lang, args.data, [])
        start = time.process_time()
        docs = list(nlp.pipe(texts))
        base = time.process_time() - start
        every = FigureFinder(nlp.vocab, figures=FIGURES)
        without = FigureFinder(nlp.vocab, figures=[f for f in FIGURES if f not in THOUGHT])
        times = {"every figure": [], "without thought": []}
        for _ in range(args.turns):
            times["without thought"].append(cpu_seconds(without, docs))
            times["every figure"].append(cpu_seconds(every, docs))
        medians = {name: statistics.median(values) for name, values in times.items()}
        added = medians["every figure"] - medians["without thought"]
        entry = {
            "lang": lang,
            "tokens": sum(len(doc) for doc in docs),
            "docs": len(docs),
            "base_cpu_s": round(base, 3),
            "finder_cpu_s": {name: [round(v, 3) for v in vs] for name, vs in times.items()},
            "thought_added_to_finder": round(added / medians["without thought"], 4),
            "thought_added_to_base": round(added / base, 4),
        }
        results.append(entry)
        print(
            f"{lang}: {entry['tokens']} tokens; the figures of thought add "
            f"{100 * entry['thought_added_to_finder']:.1f} % to the finder, "
            f"{100 * entry['thought_added_to_base']:.1f} % to the base pipeline"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(args.output, {"results": results})


if __name__ == "__main__":
    main()
