"""Does dropping predicted branches that are not words cost anything on annotated data?
Each model reads each gold split once per ``min_word_share`` setting (the same pipeline,
the setting changed between readings), and the scores and the count of predicted
parallelisms are compared. The gold side: how many gold branches fall below each
setting (none should).

    python benchmarks/parallelism_word_share.py \
        la=la_rhetoric_parallelism:corpus/asp/dev.spacy,corpus/asp/test.spacy \
        zh=zh_rhetoric_parallelism:corpus/pse/dev.spacy,corpus/pse/test.spacy \
        xx=xx_rhetoric_parallelism:corpus/asp/dev.spacy,corpus/pse/dev.spacy \
        --output benchmarks/results/parallelism_word_share.json

MODEL is a pipeline directory or an installed package.
"""

import argparse
import json
import time
from pathlib import Path
from typing import Dict, List, Tuple

import spacy
from spacy.training import Example

import spacy_rhetoric  # noqa: F401
from spacy_rhetoric.corpora.parallelisms import get_parallelisms
from spacy_rhetoric.corpora.stats import read_docbins
from spacy_rhetoric.parallelism.evaluate import predict_docs
from spacy_rhetoric.parallelism.metrics import score_parallelism
from spacy_rhetoric.parallelism.reading import word_share

METRICS = ("epm", "mpbm", "mbawo", "mwo")


def runs(spec: str) -> List[Tuple[str, str, List[str]]]:
    """``NAME=MODEL:GOLD,GOLD`` per argument -> (name, model, gold paths).

    RAISES ValueError: an argument not of that form.
    """
    name, sep, rest = spec.partition("=")
    model, sep2, golds = rest.partition(":")
    if not (sep and sep2 and name and model and golds):
        raise ValueError(f"expected NAME=MODEL:GOLD[,GOLD...], got {spec!r}")
    return [(name, model, golds.split(","))]


def gold_shares(docs, shares: List[float]) -> Dict:
    """How many gold branches of ``docs`` have a smaller word share than each setting."""
    counts = {str(share): 0 for share in shares}
    total = 0
    for doc in docs:
        for parallelism in get_parallelisms(doc):
            for start, end in parallelism.offsets:
                total += 1
                for share in shares:
                    counts[str(share)] += word_share(doc[start:end]) < share
    return {"branches": total, "below": counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="NAME=MODEL:GOLD[,GOLD...]")
    parser.add_argument("--shares", default="0,0.5", help="min_word_share settings")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    shares = [float(share) for share in args.shares.split(",")]
    plan = [run for spec in args.runs for run in runs(spec)]
    results: Dict = {"shares": shares, "models": {}, "gold": {}}
    for name, model, golds in plan:
        nlp = spacy.load(model)
        taggers = [
            pipe
            for pipe_name, pipe in nlp.pipeline
            if nlp.get_pipe_meta(pipe_name).factory == "parallelism_tagger"
        ]
        rows = results["models"].setdefault(name, {"model": model, "splits": {}})
        for gold in golds:
            gold_docs = list(read_docbins([gold], nlp.vocab))
            if gold not in results["gold"]:
                results["gold"][gold] = gold_shares(gold_docs, shares)
            for share in shares:
                for tagger in taggers:
                    tagger.min_word_share = share
                start = time.perf_counter()
                predicted = predict_docs(nlp, gold_docs)
                scores = score_parallelism(
                    [Example(p, g) for p, g in zip(predicted, gold_docs, strict=True)]
                )
                row = {
                    f"{metric}_f": round(100 * scores[f"parallelism_{metric}_f"], 2)
                    for metric in METRICS
                }
                row["predicted"] = sum(len(get_parallelisms(doc)) for doc in predicted)
                row["seconds"] = round(time.perf_counter() - start, 1)
                rows["splits"].setdefault(gold, {})[str(share)] = row
                print(name, gold, share, row, flush=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
