"""Chiastic vs synchystic typing of ASP parallelisms (issue #13, part 3).

1. Every typed gold parallelism of ASP (train, dev, opt and test pooled: 2,061, 41 of
   them chiastic) is typed in K-fold cross-validation grouped by sermon, so that each
   parallelism, every chiastic one included, is a test item exactly once per fold
   seed. Everything fitted (the classifier and its threshold) sees only the training
   folds. Typers: the alignment typer with encoder word similarity (what
   ``parallelism_tagger`` fits), the same with lexical similarity only, the old
   inversion typer, and the parameter-free rule "the order-reversing alignment beats
   the order-preserving one" (``margin > 0``). Per fold seed: chiastic P/R/F1 and
   accuracy over the pooled folds; then mean and sd over the seeds, and the majority
   baseline (always "synchystic").
2. The typer fitted on the train and dev gold types the parallelisms that a trained
   tagger predicts on the test split; scored on the predictions that exactly match a
   gold parallelism (the only ones with a gold type), and the chiastic ones listed.

Encoder states come from the tagger's frozen multilingual-e5-small (the settings of
configs/parallelism/asp-me5.cfg) and are cached on disk (``--cache``, the key scheme
of ``FrozenEncoder``), so reruns and the tagger's training share them.

    python benchmarks/parallelism_typing.py corpus/asp metrics/parallelism-typing-asp.json \
        --model training/parallelism-asp-me5-seed0/model-tuned
"""

import argparse
import os
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy
import spacy
import srsly
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_rhetoric.corpora.parallelisms import CHIASTIC, SYNCHYSTIC, get_parallelisms
from spacy_rhetoric.encoders.vectors import ENV_FEATURE_CACHE
from spacy_rhetoric.parallelism.metrics import score_parallelism, score_types
from spacy_rhetoric.parallelism.types import (
    ALIGNMENT_FEATURES,
    ALIGNMENT_L2,
    TYPE_LAYER,
    TYPER_ALIGNMENT,
    TYPER_INVERSION,
    fit_type_classifier,
    type_features,
)

SPLITS = ("train", "dev", "opt", "test")
ENCODER_LAYERS = (4, 6, 8, 10, 12)


def load_items(corpus: Path, encoder) -> List[Dict[str, Any]]:
    """Every typed gold parallelism with its sermon, split and features."""
    nlp = spacy.blank("la")
    layer = ENCODER_LAYERS.index(TYPE_LAYER)
    items = []
    for split in SPLITS:
        docs = list(DocBin().from_disk(corpus / f"{split}.spacy").get_docs(nlp.vocab))
        states = encoder.states(docs)
        for doc, doc_states in zip(docs, states, strict=True):
            for p in get_parallelisms(doc):
                if p.label not in (SYNCHYSTIC, CHIASTIC):
                    continue
                vectors = [doc_states[s:e, layer] for s, e in p.offsets]
                items.append(
                    {
                        "split": split,
                        "sermon": doc.user_data["doc_id"],
                        "chiastic": p.label == CHIASTIC,
                        "text": " || ".join(b.text for b in p.branches),
                        "alignment": type_features(TYPER_ALIGNMENT, p.branches, vectors),
                        "lexical": type_features(TYPER_ALIGNMENT, p.branches, None),
                        "inversion": type_features(TYPER_INVERSION, p.branches),
                    }
                )
    return items


def grouped_folds(groups: Sequence[str], n_folds: int, seed: int) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): the fold of each item; whole groups (sermons) are
    dealt round-robin to folds in a seeded random order."""
    names = sorted(set(groups))
    numpy.random.default_rng(seed).shuffle(names)
    fold = {name: i % n_folds for i, name in enumerate(names)}
    return numpy.array([fold[g] for g in groups])


def cross_validate(
    features: numpy.ndarray, y: numpy.ndarray, folds: numpy.ndarray, l2: float
) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): per item, the chiastic decision of the classifier
    fitted on the other folds."""
    predicted = numpy.zeros(len(y), dtype=bool)
    for k in numpy.unique(folds):
        train = folds != k
        weights = fit_type_classifier(features[train], y[train], l2=l2)
        if weights:
            predicted[~train] = features[~train] @ numpy.asarray(weights) > 0
    return predicted


def summarize(runs: List[Dict[str, float]]) -> Dict[str, Any]:
    """Mean and sd over fold seeds of each score."""
    keys = ("chiastic_p", "chiastic_r", "chiastic_f", "accuracy")
    out: Dict[str, Any] = {}
    for key in keys:
        values = numpy.array([run[key] for run in runs])
        out[key] = {"mean": float(values.mean()), "sd": float(values.std(ddof=1))}
    for key in ("tp", "fp", "fn"):
        out[key] = [int(run[key]) for run in runs]
    return out


def scores(y: numpy.ndarray, predicted: numpy.ndarray) -> Dict[str, float]:
    labels = lambda v: [CHIASTIC if x else SYNCHYSTIC for x in v]  # noqa: E731
    result = score_types(zip(labels(y), labels(predicted)))
    result["tp"] = float(numpy.sum(y & predicted))
    result["fp"] = float(numpy.sum(~y & predicted))
    result["fn"] = float(numpy.sum(y & ~predicted))
    return result


def type_test_predictions(
    corpus: Path, model: Path, weights: List[float], encoder
) -> Dict[str, Any]:
    """Predict the test split with a trained tagger, type its parallelisms with the
    given alignment weights, and score them against the exactly matching gold."""
    nlp = spacy.load(model)
    tagger = nlp.get_pipe("parallelism_tagger")
    tagger.cfg.update({"typer": TYPER_ALIGNMENT, "type_layer": TYPE_LAYER, "type_weights": weights})
    gold = list(DocBin().from_disk(corpus / "test.spacy").get_docs(nlp.vocab))
    start = time.perf_counter()
    predicted = list(
        nlp.pipe(
            Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d])
            for d in gold
        )
    )
    seconds = time.perf_counter() - start
    n_pred = n_pred_chiastic = 0
    matched = []
    listed = []
    for p_doc, g_doc in zip(predicted, gold, strict=True):
        gold_by_offsets = {p.offsets: p for p in get_parallelisms(g_doc)}
        for p in get_parallelisms(p_doc):
            n_pred += 1
            n_pred_chiastic += p.label == CHIASTIC
            g = gold_by_offsets.get(p.offsets)
            if g is not None and g.label in (SYNCHYSTIC, CHIASTIC):
                matched.append((g.label, p.label))
            if p.label == CHIASTIC or (g is not None and g.label == CHIASTIC):
                listed.append(
                    {
                        "text": " || ".join(b.text for b in p.branches),
                        "predicted": p.label,
                        "gold": g.label if g is not None else None,
                    }
                )
    examples = [Example(p, g) for p, g in zip(predicted, gold, strict=True)]
    detection = score_parallelism(examples)
    n_gold = sum(len(get_parallelisms(d)) for d in gold)
    n_gold_chiastic = sum(p.label == CHIASTIC for d in gold for p in get_parallelisms(d))
    return {
        "model": str(model),
        "seconds": seconds,
        "gold_parallelisms": n_gold,
        "gold_chiastic": n_gold_chiastic,
        "predicted_parallelisms": n_pred,
        "predicted_chiastic": n_pred_chiastic,
        "epm_f": detection["parallelism_epm_f"],
        "exact_matches": score_types(matched) if matched else {"n": 0.0},
        "chiastic_listed": listed,
    }


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="directory with the ASP .spacy splits")
    parser.add_argument("output", type=Path, help="JSON file to write")
    parser.add_argument("--model", type=Path, default=None, help="trained tagger (test part)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--cache", default="training/feature-cache", help="encoder state cache")
    args = parser.parse_args(argv)
    os.environ.setdefault(ENV_FEATURE_CACHE, args.cache)
    from spacy_rhetoric.encoders.vectors import FrozenEncoder

    encoder = FrozenEncoder("multilingual-e5-small", ENCODER_LAYERS, cache_dir=args.cache)
    start = time.perf_counter()
    items = load_items(args.corpus, encoder)
    feature_seconds = time.perf_counter() - start
    y = numpy.array([item["chiastic"] for item in items])
    groups = [item["sermon"] for item in items]
    seeds = [int(s) for s in args.seeds.split(",")]
    result: Dict[str, Any] = {
        "parallelisms": len(items),
        "chiastic": int(y.sum()),
        "sermons": len(set(groups)),
        "folds": args.folds,
        "fold_seeds": seeds,
        "majority_accuracy": float(1 - y.mean()),
        "encoder_layer": TYPE_LAYER,
        "features": list(ALIGNMENT_FEATURES),
        "feature_seconds": feature_seconds,
        "typers": {},
    }
    margin = ALIGNMENT_FEATURES.index("margin")
    for name in ("alignment", "lexical", "inversion", "rule"):
        runs, per_seed = [], []
        for seed in seeds:
            folds = grouped_folds(groups, args.folds, seed)
            if name == "rule":
                predicted = numpy.stack([item["alignment"] for item in items])[:, margin] > 0
            else:
                features = numpy.stack([item[name] for item in items])
                l2 = 0.01 if name == "inversion" else ALIGNMENT_L2
                predicted = cross_validate(features, y, folds, l2)
            run = scores(y, predicted)
            runs.append(run)
            per_seed.append(run)
        result["typers"][name] = {"summary": summarize(runs), "per_seed": per_seed}
        s = result["typers"][name]["summary"]
        print(
            f"{name:10s} chiastic P {s['chiastic_p']['mean']:.3f} R {s['chiastic_r']['mean']:.3f} "
            f"F1 {s['chiastic_f']['mean']:.3f} ± {s['chiastic_f']['sd']:.3f}  "
            f"acc {s['accuracy']['mean']:.4f} (majority {result['majority_accuracy']:.4f})"
        )
    # the seed-0 cross-validated decisions of the alignment typer, for reading
    folds = grouped_folds(groups, args.folds, seeds[0])
    alignment = numpy.stack([item["alignment"] for item in items])
    predicted = cross_validate(alignment, y, folds, ALIGNMENT_L2)
    result["seed0_decisions"] = [
        {
            "text": item["text"],
            "gold": CHIASTIC if item["chiastic"] else SYNCHYSTIC,
            "predicted": CHIASTIC if p else SYNCHYSTIC,
        }
        for item, p in zip(items, predicted, strict=True)
        if p or item["chiastic"]
    ]
    if args.model is not None:
        fit = [i for i, item in enumerate(items) if item["split"] in ("train", "dev")]
        weights = fit_type_classifier(alignment[fit], y[fit], l2=ALIGNMENT_L2)
        result["test_predicted"] = type_test_predictions(args.corpus, args.model, weights, encoder)
        t = result["test_predicted"]
        print(
            f"test split, {t['predicted_parallelisms']} predicted parallelisms "
            f"({t['predicted_chiastic']} typed chiastic; gold {t['gold_parallelisms']}, "
            f"{t['gold_chiastic']} chiastic); exact matches: {t['exact_matches']}"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(args.output, result)


if __name__ == "__main__":
    main()
