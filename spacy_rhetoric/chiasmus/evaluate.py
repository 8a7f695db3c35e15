"""Evaluation protocols of the chiasmus finder on the German and English datasets.

German (Schneider et al.; GerDraCor, ``chiasmus-de``): the annotated candidates are
ranked; stratified k-fold cross-validation (default 5 folds, seed 0) reports the mean
and the sample standard deviation of the average precision over the folds, for two
settings:

* "full": positives {a, c, fa, fc}, every other candidate negative;
* "fp_removed": positives {a, c}; the candidates labelled fa and fc are removed.

The docs keep the dataset's POS and lemmas (gold input features, as in the paper); its
head-less dependency labels feed the dependency-label features.

English (Dubremetz & Nivre; Europarl, ``chiasmus-en``): trained on the "train" split
(the annotators' intersection on the first part of the corpus), tested on "test". The
candidates come as text: a spaCy pipeline (``--tagger``, e.g. the small UD English-EWT
model of ``configs/chiasmus/en_tagger.cfg``) gives them POS, lemmas and a parse first.
True is the only positive label. Treatment of the other categories:

* "all_negative" (the main number): False, Borderline, Duplicate,
  DuplicateOfBorderline and Other are negatives, as in Dubremetz & Nivre's
  evaluation, where only True counts;
* "duplicates_removed": Duplicate and DuplicateOfBorderline candidates (another
  candidate's words in the same chiasmus) are removed from training and test; the
  rest as above.

Each protocol trains the ``chiasmus_finder`` component in process (the same code that
``spacy train`` runs) on the annotated candidates only, then scores the held-out
annotated candidates with ``ChiasmusFinder.score_candidates``.
"""

import random
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import fix_random_seed

from .component import ChiasmusFinder, gold_candidates
from .metrics import average_precision

GERMAN_FULL = ("a", "c", "fa", "fc")
GERMAN_FP_REMOVED = ("a", "c")
GERMAN_FP = ("fa", "fc")
ENGLISH_POSITIVE = ("True",)
ENGLISH_DUPLICATES = ("Duplicate", "DuplicateOfBorderline")

DEFAULT_SETTINGS: Dict[str, Any] = {
    "epochs": 60,
    "batch_size": 32,
    "learn_rate": 0.003,
    "L2": 0.001,
    "model": {
        "feature_groups": ["D", "L", "E"],
        "hidden_width": 0,
        "depth": 1,
        "dropout": 0.0,
    },
}


def input_doc(vocab, reference: Doc, keep_dep: bool = True) -> Doc:
    """A predicted doc with the reference's tokens, POS, tags, morphology and lemmas (the
    input features of the German protocol) and, optionally, its user_data["dep"]."""
    doc = Doc(
        vocab,
        words=[t.text for t in reference],
        spaces=[bool(t.whitespace_) for t in reference],
        pos=[t.pos_ for t in reference] if reference.has_annotation("POS") else None,
        tags=[t.tag_ for t in reference] if reference.has_annotation("TAG") else None,
        morphs=[str(t.morph) for t in reference] if reference.has_annotation("MORPH") else None,
        lemmas=[t.lemma_ for t in reference] if reference.has_annotation("LEMMA") else None,
    )
    if keep_dep and isinstance(reference.user_data.get("dep"), (list, tuple)):
        doc.user_data["dep"] = list(reference.user_data["dep"])
    return doc


def stratified_folds(positive: Sequence[bool], n_folds: int = 5, seed: int = 0) -> numpy.ndarray:
    """Assign items to folds so that each fold has (nearly) the same share of positives.

    positive (Sequence[bool]): whether each item is positive.
    n_folds (int): the number of folds.
    seed (int): the shuffling seed.
    RETURNS (numpy.ndarray): the fold of each item.
    """
    rng = random.Random(seed)
    folds = numpy.zeros(len(positive), dtype=numpy.int64)
    offset = 0
    for value in (True, False):
        members = [i for i, p in enumerate(positive) if bool(p) == value]
        rng.shuffle(members)
        for j, i in enumerate(members):
            folds[i] = (offset + j) % n_folds
        offset += len(members)
    return folds


def _component_config(settings: Dict[str, Any], positive: Sequence[str], ignored: Sequence[str]):
    return {
        "model": {"@architectures": "spacy-rhetoric.ChiasmusScorer.v1", **settings["model"]},
        "positive_labels": list(positive),
        "ignored_labels": list(ignored),
        "training_candidates": "annotated",
    }


def train_finder(
    nlp: Language,
    examples: Sequence[Example],
    settings: Dict[str, Any],
    positive: Sequence[str],
    ignored: Sequence[str] = (),
    seed: int = 0,
) -> ChiasmusFinder:
    """Add a chiasmus_finder to ``nlp`` (replacing one already there) and train it.

    nlp (Language): the pipeline; its other components are not trained.
    examples (Sequence[Example]): the training examples.
    settings (Dict[str, Any]): epochs, batch_size, learn_rate, L2 and the model settings.
    positive (Sequence[str]): the positive labels.
    ignored (Sequence[str]): labels left out.
    seed (int): the random seed.
    RETURNS (ChiasmusFinder): the trained component.
    """
    fix_random_seed(seed)
    if "chiasmus_finder" in nlp.pipe_names:
        nlp.remove_pipe("chiasmus_finder")
    finder = nlp.add_pipe("chiasmus_finder", config=_component_config(settings, positive, ignored))
    examples = list(examples)
    finder.initialize(lambda: examples, nlp=nlp)
    optimizer = finder.create_optimizer()
    optimizer.learn_rate = settings["learn_rate"]
    optimizer.L2 = settings["L2"]
    rng = random.Random(seed)
    order = list(range(len(examples)))
    for _ in range(settings["epochs"]):
        rng.shuffle(order)
        for start in range(0, len(order), settings["batch_size"]):
            batch = [examples[i] for i in order[start : start + settings["batch_size"]]]
            finder.update(batch, sgd=optimizer)
    return finder


def _annotated(examples: Sequence[Example]) -> List[Tuple[Tuple[int, ...], str]]:
    """The (first) annotated candidate of each example."""
    return [gold_candidates(eg.reference)[0] for eg in examples]


def rank_annotated(finder: ChiasmusFinder, examples: Sequence[Example]) -> numpy.ndarray:
    """Score the first annotated candidate of each example. RETURNS (numpy.ndarray): [n]."""
    docs = [eg.predicted for eg in examples]
    cands = [numpy.asarray([c], dtype=numpy.int64) for c, _ in _annotated(examples)]
    return numpy.concatenate(finder.score_candidates(docs, cands))


def german_examples(data_dir: Path, nlp: Language) -> List[Example]:
    """The German candidates as Examples whose predicted docs keep the gold POS and lemmas."""
    from ..corpora import convert

    docs = convert("chiasmus-de", data_dir, vocab=nlp.vocab).splits["all"]
    return [Example(input_doc(nlp.vocab, doc), doc) for doc in docs]


def cross_validate(
    examples: Sequence[Example],
    lang: str,
    positive: Sequence[str],
    removed: Sequence[str] = (),
    settings: Optional[Dict[str, Any]] = None,
    n_folds: int = 5,
    seed: int = 0,
    folds: Optional[Sequence[int]] = None,
    progress: Optional[Callable[[str], None]] = None,
) -> Dict[str, Any]:
    """Stratified k-fold cross-validation of the finder on annotated candidates.

    examples (Sequence[Example]): one annotated candidate per example.
    lang (str): the language of the blank pipeline the finder is trained in.
    positive (Sequence[str]): the positive labels.
    removed (Sequence[str]): labels whose candidates are removed from the data.
    settings (Optional[Dict[str, Any]]): training and model settings (DEFAULT_SETTINGS).
    n_folds (int): the number of folds.
    seed (int): the seed of the fold assignment and of training.
    folds (Optional[Sequence[int]]): run only these folds (default: all).
    progress (Optional[Callable[[str], None]]): called with a line per fold.
    RETURNS (Dict[str, Any]): per-fold AP, mean and sample standard deviation, counts.
    """
    settings = settings or DEFAULT_SETTINGS
    kept = [eg for eg, (_, label) in zip(examples, _annotated(examples)) if label not in removed]
    labels = [label for _, label in _annotated(kept)]
    is_positive = [label in positive for label in labels]
    assignment = stratified_folds(is_positive, n_folds, seed)
    nlp = spacy.blank(lang)
    aps: List[float] = []
    for fold in range(n_folds) if folds is None else folds:
        train = [eg for eg, f in zip(kept, assignment) if f != fold]
        test = [eg for eg, f in zip(kept, assignment) if f == fold]
        start = time.perf_counter()
        finder = train_finder(nlp, train, settings, positive, seed=seed)
        scores = rank_annotated(finder, test)
        truth = [p for p, f in zip(is_positive, assignment) if f == fold]
        aps.append(average_precision(scores, truth))
        if progress is not None:
            progress(
                f"fold {fold}: AP {aps[-1]:.3f} ({sum(truth)} of {len(truth)} positive, "
                f"{time.perf_counter() - start:.1f}s)"
            )
    return {
        "positive_labels": list(positive),
        "removed_labels": list(removed),
        "n_candidates": len(kept),
        "n_positive": int(sum(is_positive)),
        "n_folds": n_folds,
        "seed": seed,
        "ap_per_fold": aps,
        "ap_mean": float(numpy.mean(aps)),
        "ap_sd": float(numpy.std(aps, ddof=1)) if len(aps) > 1 else 0.0,
    }


def evaluate_german(
    data_dir: Path,
    settings: Optional[Dict[str, Any]] = None,
    n_folds: int = 5,
    seed: int = 0,
    progress: Optional[Callable[[str], None]] = None,
) -> Dict[str, Any]:
    """The German protocol: "full" and "fp_removed" cross-validation.

    data_dir (Path): the German chiasmus data (a directory or the JSON file).
    RETURNS (Dict[str, Any]): the results of both settings and the settings used.
    """
    settings = settings or DEFAULT_SETTINGS
    nlp = spacy.blank("de")
    examples = german_examples(Path(data_dir), nlp)
    results: Dict[str, Any] = {"dataset": "chiasmus-de", "data": str(data_dir)}
    for name, positive, removed in (
        ("full", GERMAN_FULL, ()),
        ("fp_removed", GERMAN_FP_REMOVED, GERMAN_FP),
    ):
        if progress is not None:
            progress(f"German, {name}: positives {', '.join(positive)}")
        results[name] = cross_validate(
            examples, "de", positive, removed, settings, n_folds, seed, progress=progress
        )
    results["settings"] = settings
    return results


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
        inputs = [
            Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d])
            for d in references
        ]
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
    settings = settings or DEFAULT_SETTINGS
    nlp = spacy.load(tagger) if tagger is not None else spacy.blank("en")
    data = english_examples(Path(data_dir), nlp)
    results: Dict[str, Any] = {
        "dataset": "chiasmus-en",
        "data": str(data_dir),
        "tagger": str(tagger) if tagger is not None else None,
    }
    for name, removed in (("all_negative", ()), ("duplicates_removed", ENGLISH_DUPLICATES)):
        train = [
            eg
            for eg, (_, lab) in zip(data["train"], _annotated(data["train"]))
            if lab not in removed
        ]
        test = [
            eg for eg, (_, lab) in zip(data["test"], _annotated(data["test"])) if lab not in removed
        ]
        start = time.perf_counter()
        finder = train_finder(nlp, train, settings, ENGLISH_POSITIVE, seed=seed)
        scores = rank_annotated(finder, test)
        truth = [lab in ENGLISH_POSITIVE for _, lab in _annotated(test)]
        ap = average_precision(scores, truth)
        order = numpy.argsort(-scores, kind="stable")
        results[name] = {
            "removed_labels": list(removed),
            "n_train": len(train),
            "n_train_positive": sum(lab in ENGLISH_POSITIVE for _, lab in _annotated(train)),
            "n_test": len(test),
            "n_test_positive": int(sum(truth)),
            "ap_test": ap,
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


def feature_ablation(
    run: Callable[[Dict[str, Any]], Dict[str, Any]],
    groups: Iterable[Sequence[str]],
    settings: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """Run a protocol once per feature-group combination.

    run (Callable): the protocol, called with the settings.
    groups (Iterable[Sequence[str]]): the combinations, e.g. [["L"], ["D", "L"]].
    RETURNS (Dict[str, Any]): the results by combination ("D+L").
    """
    settings = settings or DEFAULT_SETTINGS
    results = {}
    for combination in groups:
        changed = {**settings, "model": {**settings["model"], "feature_groups": list(combination)}}
        results["+".join(combination)] = run(changed)
    return results
