"""The English rules' stop-word weights, chosen on the Dubremetz & Nivre training split.

spaCy's English stop list holds content words ("first", "last", "say", "show", "give"),
which the rules penalise as they do "the" or "of". This grid splits the penalty: the
stop weight ``f`` (``stop_a``, ``stop_b``) and an extra weight ``c`` for a stop word
tagged as a content word (``stop_content_a``, ``stop_content_b``; effective ``f + c``),
and ranks each setting by the rules' AP on the annotated candidates of the TRAINING
split (True positive, all else negative; POS and lemmas from ``--tagger``). The test
split is only measured for the chosen setting. Ties go to the setting nearest today's
(-10, 0). The calibration's bias (``chiasmus calibrate en``) is set afterwards.

    python benchmarks/chiasmus_en_stop_weights.py --tagger en_rhetoric_base \\
        --output benchmarks/results/chiasmus_en_stop_weights.json
"""

import argparse
import os
import time
from pathlib import Path

import numpy
import spacy
import srsly

from spacy_rhetoric.chiasmus.crossval import first_annotated
from spacy_rhetoric.chiasmus.eval_english import ENGLISH_POSITIVE, english_examples
from spacy_rhetoric.chiasmus.metrics import average_precision
from spacy_rhetoric.chiasmus.rules import RULE_WEIGHTS, rule_features

DATA = Path(os.environ.get("SPACY_RHETORIC_DATA", "../shared/data"))
STOP = (-10.0, -7.5, -5.0, -2.5, 0.0)
CONTENT = (0.0, 2.5, 5.0, 7.5, 10.0)
TODAY = (-10.0, 0.0)


def feature_table(examples):
    """[n, features] rule feature values of each example's first annotated candidate."""
    names = list(RULE_WEIGHTS)
    rows = []
    for eg, (cand, _) in zip(examples, first_annotated(examples)):
        values = rule_features(eg.predicted, numpy.asarray([cand], dtype=numpy.int64))
        rows.append([float(values[name][0]) for name in names])
    return names, numpy.asarray(rows)


def scores_for(names, table, stop, content):
    weights = {**RULE_WEIGHTS, "stop_a": stop, "stop_b": stop}
    weights.update({"stop_content_a": content, "stop_content_b": content})
    return table @ numpy.asarray([weights[name] for name in names])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tagger", default="en_rhetoric_base")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    data = english_examples(DATA / "chiasmus-dubremetz-nivre", spacy.load(args.tagger))
    parts = {}
    for part in ("train", "test"):
        labels = [label in ENGLISH_POSITIVE for _, label in first_annotated(data[part])]
        names, table = feature_table(data[part])
        parts[part] = (names, table, numpy.asarray(labels))
    names, table, truth = parts["train"]
    grid = []
    for stop in STOP:
        for content in CONTENT:
            if stop + content > 0:
                continue
            ap = average_precision(scores_for(names, table, stop, content), truth)
            grid.append({"stop": stop, "content": content, "ap_train": ap})

    def nearness(row):
        return abs(row["stop"] - TODAY[0]) + abs(row["content"] - TODAY[1])

    best_ap = max(row["ap_train"] for row in grid)
    chosen = min((row for row in grid if row["ap_train"] >= best_ap - 1e-9), key=nearness)
    test_names, test_table, test_truth = parts["test"]
    result = {
        "tagger": args.tagger,
        "n_train": int(len(truth)),
        "n_train_positive": int(truth.sum()),
        "grid": grid,
        "chosen": {"stop": chosen["stop"], "content": chosen["content"]},
        "ap_train": {"chosen": chosen["ap_train"], "today": scores_ap(grid, *TODAY)},
        "ap_test": {
            "chosen": average_precision(
                scores_for(test_names, test_table, chosen["stop"], chosen["content"]),
                test_truth,
            ),
            "today": average_precision(scores_for(test_names, test_table, *TODAY), test_truth),
        },
        "n_test": int(len(test_truth)),
        "n_test_positive": int(test_truth.sum()),
        "seconds": time.perf_counter() - start,
    }
    print(srsly.json_dumps(result, indent=2))
    if args.output:
        srsly.write_json(args.output, result)


def scores_ap(grid, stop, content):
    return next(row["ap_train"] for row in grid if (row["stop"], row["content"]) == (stop, content))


if __name__ == "__main__":
    main()
