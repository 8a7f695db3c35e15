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
import time
from pathlib import Path

import numpy
import spacy
import srsly

from spacy_rhetoric.assets import data_root
from spacy_rhetoric.chiasmus.crossval import first_annotated
from spacy_rhetoric.chiasmus.eval_english import ENGLISH_POSITIVE, english_examples
from spacy_rhetoric.chiasmus.metrics import average_precision
from spacy_rhetoric.chiasmus.rules import RULE_WEIGHTS, rule_features

# the data mirror: $SPACY_RHETORIC_DATA, else ../shared/data beside the checkout
DATA = data_root(required=False) or Path("../shared/data")
STOP = (-10.0, -7.5, -5.0, -2.5, 0.0)
CONTENT = (0.0, 2.5, 5.0, 7.5, 10.0)
TODAY = (-10.0, 0.0)


def annotated_parts(tagger):
    """RETURNS: {"train", "test": ({feature: [n] values}, [n] truth)} of the Dubremetz &
    Nivre split's annotated candidates (the first of each example), tagged by ``tagger``."""
    data = english_examples(DATA / "chiasmus-dubremetz-nivre", spacy.load(tagger))
    parts = {}
    for part in ("train", "test"):
        rows = {name: [] for name in RULE_WEIGHTS}
        truth = []
        for eg, (cand, label) in zip(data[part], first_annotated(data[part])):
            values = rule_features(eg.predicted, numpy.asarray([cand], dtype=numpy.int64))
            for name in RULE_WEIGHTS:
                rows[name].append(float(values[name][0]))
            truth.append(label in ENGLISH_POSITIVE)
        parts[part] = ({n: numpy.asarray(v) for n, v in rows.items()}, numpy.asarray(truth))
    return parts


def score(values, weights):
    """RETURNS: [n] rule scores of the feature values under the weights."""
    return sum(weights[name] * values[name] for name in RULE_WEIGHTS)


def stop_weights(stop, content):
    return {
        **RULE_WEIGHTS,
        **{"stop_a": stop, "stop_b": stop, "stop_content_a": content, "stop_content_b": content},
    }


def arguments(doc):
    """RETURNS: the command line of an English weights benchmark (--tagger, --output)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--tagger", default="en_rhetoric_base")
    parser.add_argument("--output", type=Path, default=None)
    return parser.parse_args()


def write(result, test_truth, start, output):
    """Add the test split's counts and the seconds taken; print; write to ``output``."""
    result["n_test"] = int(len(test_truth))
    result["n_test_positive"] = int(test_truth.sum())
    result["seconds"] = time.perf_counter() - start
    print(srsly.json_dumps(result, indent=2))
    if output:
        srsly.write_json(output, result)


def main():
    args = arguments(__doc__)
    start = time.perf_counter()
    parts = annotated_parts(args.tagger)
    values, truth = parts["train"]
    grid = []
    for stop in STOP:
        for content in CONTENT:
            if stop + content > 0:
                continue
            ap = average_precision(score(values, stop_weights(stop, content)), truth)
            grid.append({"stop": stop, "content": content, "ap_train": ap})

    def nearness(row):
        return abs(row["stop"] - TODAY[0]) + abs(row["content"] - TODAY[1])

    best_ap = max(row["ap_train"] for row in grid)
    chosen = min((row for row in grid if row["ap_train"] >= best_ap - 1e-9), key=nearness)
    test_values, test_truth = parts["test"]
    result = {
        "tagger": args.tagger,
        "n_train": int(len(truth)),
        "n_train_positive": int(truth.sum()),
        "grid": grid,
        "chosen": {"stop": chosen["stop"], "content": chosen["content"]},
        "ap_train": {"chosen": chosen["ap_train"], "today": scores_ap(grid, *TODAY)},
        "ap_test": {
            "chosen": average_precision(
                score(test_values, stop_weights(chosen["stop"], chosen["content"])), test_truth
            ),
            "today": average_precision(score(test_values, stop_weights(*TODAY)), test_truth),
        },
    }
    write(result, test_truth, start, args.output)


def scores_ap(grid, stop, content):
    return next(row["ap_train"] for row in grid if (row["stop"], row["content"]) == (stop, content))


if __name__ == "__main__":
    main()
