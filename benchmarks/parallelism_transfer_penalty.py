"""How much more should a parallelism head be pushed toward recall on a language it never
saw? The decoder's ``outside_penalty`` is tuned on the dev split of the head's own
language; here each monolingual head is scored over a grid of penalties on its own dev
split and on the other language's, and the offset (the best penalty on the foreign split
minus the best on its own) estimates what a head needs in a language without annotated
data. ``delta`` is the mean over the two directions of each direction's mean offset,
rounded to the grid: the value ``xx_rhetoric_parallelism`` would add for English or German.

    python benchmarks/parallelism_transfer_penalty.py \
        --heads la=training/parallelism-asp-me5-latinv-scan-seed3/model-tuned,... \
        --dev la=corpus/asp/dev.spacy,zh=corpus/pse/dev.spacy \
        --output benchmarks/results/parallelism_transfer_penalty.json

Each head is scored over the grid by ``parallelism.evaluate.tune_outside_penalty`` (what
``parallelism tune`` runs); the encoder's states are kept in memory between the
penalties, so only the head runs again.
"""

import argparse
import json
import statistics
from pathlib import Path
from typing import Dict, List, Tuple

import spacy

import spacy_rhetoric  # noqa: F401
from spacy_rhetoric.parallelism.evaluate import tune_outside_penalty


def pairs(spec: str) -> List[Tuple[str, str]]:
    """``A=X,B=Y`` -> [(A, X), (B, Y)].

    RAISES ValueError: a part that is not KEY=VALUE.
    """
    out = []
    for part in filter(None, spec.split(",")):
        key, sep, value = part.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"expected KEY=VALUE, got {part!r}")
        out.append((key, value))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--heads", required=True, help="LANG=MODEL,... (repeat LANG for seeds)")
    parser.add_argument("--dev", required=True, help="LANG=DEV.spacy,...")
    parser.add_argument("--grid", default="0,0.5,1,1.5,2,3,4")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    try:
        heads, devs = pairs(args.heads), dict(pairs(args.dev))
    except ValueError as err:
        parser.error(str(err))
    grid = [float(p) for p in args.grid.split(",")]
    runs = []
    for lang, model in heads:
        nlp = spacy.load(model)
        tagger = nlp.get_pipe("parallelism_tagger")
        tuned = float(tagger.cfg.get("outside_penalty", 0.0))
        for dev_lang, dev in devs.items():
            # every penalty of the grid scored, the best kept (ties: the smaller one)
            tuning = tune_outside_penalty(nlp, dev, grid)
            tagger.cfg["outside_penalty"] = tuned
            scores = {
                value: round(100 * table["parallelism_epm_f"], 2)
                for value, table in tuning["scores"].items()
            }
            print(lang, model, dev_lang, scores, flush=True)
            runs.append(
                {
                    "head": lang,
                    "model": model,
                    "tuned_penalty": tuned,
                    "dev": dev_lang,
                    "own": dev_lang == lang,
                    "epm_f": scores,
                    "best_penalty": float(tuning["best"]),
                }
            )
    offsets: Dict[str, List[float]] = {}
    for run in runs:
        if run["own"]:
            continue
        own = next(r for r in runs if r["model"] == run["model"] and r["own"])
        direction = f"{run['head']}->{run['dev']}"
        offsets.setdefault(direction, []).append(run["best_penalty"] - own["best_penalty"])
    means = {direction: statistics.mean(values) for direction, values in offsets.items()}
    delta = statistics.mean(means.values()) if means else 0.0
    rounded = min(grid, key=lambda p: (abs(p - delta), p))
    result = {
        "grid": grid,
        "runs": runs,
        "offsets": offsets,
        "direction_means": means,
        "delta": delta,
        "delta_on_grid": rounded,
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"offsets {offsets}; delta {delta:.2f} -> {rounded}")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
