"""The English chiasmus protocol of Dubremetz & Nivre (Europarl, ``chiasmus-en``).

Trained on the "train" split (the annotators' intersection on the first part of the
corpus), tested on "test". The candidates come as text: a spaCy pipeline (``--tagger``,
e.g. the small UD English-EWT model of ``configs/chiasmus/en_tagger.cfg``) gives them
POS, lemmas and a parse first. True is the only positive label. Treatment of the other
categories:

* "all_negative" (the main number): False, Borderline, Duplicate,
  DuplicateOfBorderline and Other are negatives, as in Dubremetz & Nivre's
  evaluation, where only True counts;
* "duplicates_removed": Duplicate and DuplicateOfBorderline candidates (another
  candidate's words in the same chiasmus) are removed from training and test; the
  rest as above.

The encoder layers are chosen on the training split (see ``crossval``); the plain D+L
logistic regression and the hand-weighted rules are scored on the same test split.
"""

import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy
import spacy
from spacy.language import Language
from spacy.training import Example

from ..corpora.util import gold_tokens_doc
from ..logistic import f1_threshold
from .crossval import (
    FeatureTable,
    first_annotated,
    fit_logistic,
    grid_layers,
    rank_annotated,
    rank_rules,
    settings_for_fold,
    settings_from_config,
    suggested,
    suggested_aps,
    train_finder,
    uses_encoder,
)
from .metrics import average_precision

ENGLISH_POSITIVE = ("True",)
ENGLISH_DUPLICATES = ("Duplicate", "DuplicateOfBorderline")


def english_examples(
    data_dir: Path, nlp: Language, batch_size: int = 64
) -> Dict[str, List[Example]]:
    """The Dubremetz & Nivre train and test candidates as Examples whose predicted docs
    are annotated by ``nlp`` (on the converter's tokens, merged candidate words included).

    RETURNS (Dict[str, List[Example]]): "train" and "test" examples.
    """
    from ..corpora import convert

    conversion = convert("chiasmus-en", data_dir, vocab=nlp.vocab)
    result = {}
    for split in ("train", "test"):
        references = conversion.splits[split]
        inputs = [gold_tokens_doc(nlp.vocab, d) for d in references]
        annotated = list(nlp.pipe(inputs, batch_size=batch_size))
        result[split] = [Example(p, r) for p, r in zip(annotated, references)]
    return result


def evaluate_english(
    data_dir: Path,
    tagger: Optional[Path],
    settings: Optional[Dict[str, Any]] = None,
    seed: int = 0,
    progress: Optional[Callable[[str], None]] = None,
) -> Dict[str, Any]:
    """The English protocol: train on "train", AP on "test".

    data_dir (Path): the Dubremetz & Nivre XML files.
    tagger (Optional[Path]): a spaCy pipeline that sets POS, lemmas (and a parse); None
        uses a blank pipeline, which the finder rejects (it needs POS).
    RETURNS (Dict[str, Any]): AP on test per treatment of the other categories.
    """
    settings = settings or settings_from_config()
    nlp = spacy.load(str(tagger)) if tagger is not None else spacy.blank("en")
    data = english_examples(Path(data_dir), nlp)
    results: Dict[str, Any] = {
        "dataset": "chiasmus-en",
        "data": str(data_dir),
        "tagger": str(tagger) if tagger is not None else None,
    }
    for name, removed in (("all_negative", ()), ("duplicates_removed", ENGLISH_DUPLICATES)):
        train = [
            eg
            for eg, (_, lab) in zip(data["train"], first_annotated(data["train"]))
            if lab not in removed
        ]
        test = [
            eg
            for eg, (_, lab) in zip(data["test"], first_annotated(data["test"]))
            if lab not in removed
        ]
        start = time.perf_counter()
        train_truth = numpy.asarray([lab in ENGLISH_POSITIVE for _, lab in first_annotated(train)])
        table = None
        if uses_encoder(settings):
            table = FeatureTable(
                train,
                settings["model"]["feature_groups"],
                settings["model"]["encoder"],
                grid_layers(settings),
            )
        fold_settings, chosen = settings_for_fold(
            settings, table, numpy.arange(len(train)), train_truth, seed
        )
        finder = train_finder(nlp, train, fold_settings, ENGLISH_POSITIVE, seed=seed)
        scores = rank_annotated(finder, test)
        truth = [lab in ENGLISH_POSITIVE for _, lab in first_annotated(test)]
        ap = average_precision(scores, truth)
        # the plain D+L logistic regression, trained on the same training set
        test_table = FeatureTable(test, ["D", "L"])
        predict = fit_logistic(
            FeatureTable(train, ["D", "L"]).matrix(["D", "L"]),
            train_truth,
            settings.get("baseline_C", 1.0),
        )
        baseline_ap = average_precision(predict(test_table.matrix(["D", "L"])), truth)
        truth_array = numpy.asarray(truth, dtype=bool)
        rules = rank_rules(test)
        masks = suggested(test)
        order = numpy.argsort(-scores, kind="stable")
        results[name] = {
            "removed_labels": list(removed),
            "n_train": len(train),
            "n_train_positive": sum(lab in ENGLISH_POSITIVE for _, lab in first_annotated(train)),
            "n_test": len(test),
            "n_test_positive": int(sum(truth)),
            "ap_test": ap,
            "baseline_dl_logreg_ap_test": baseline_ap,
            "rules_ap_test": average_precision(rules, truth_array),
            "rules_f1_threshold_train": f1_threshold(rank_rules(train), train_truth),
            "suggested": {
                "n_positive_suggested": {n: int((m & truth_array).sum()) for n, m in masks.items()},
                "n_suggested": {n: int(m.sum()) for n, m in masks.items()},
                "ours": suggested_aps(scores, truth_array, masks),
                "rules": suggested_aps(rules, truth_array, masks),
            },
            **chosen,
            "ranks_of_positives": [
                int(r) + 1 for r in numpy.flatnonzero(numpy.asarray(truth)[order])
            ],
        }
        if progress is not None:
            progress(
                f"English, {name}: AP {ap:.3f} on test ({sum(truth)} of {len(truth)} positive, "
                f"{time.perf_counter() - start:.1f}s)"
            )
        nlp.remove_pipe("chiasmus_finder")
    results["settings"] = settings
    return results
