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

English, second protocol (Meyer, Nurbakova & Berthomet, ``chiasmus-en-mb``): whole
texts, not candidates: the salient chiasmi (positive) against the random extracts
without a chiastic repetition (negative). A text's score is the highest score of its
suggested candidates (0 without any). The data give no positions, so training is
multiple-instance: every candidate of a negative text is negative (at most
``max_negatives`` per text, chosen at random), and in each positive text the candidate
with the most repeated A/A' and B/B' lemmas (then the shortest) is positive; a second
round takes instead the candidate the first model scores highest. The folds are
grouped: texts that are near-duplicates (the same normalised text, one inside the
other, or word-trigram Jaccard >= 0.5) are one group, and a group never spans two
folds; folds are balanced by positives.

E features from the encoder (``spacy-rhetoric.ChiasmusScorer.v2``): the layers are
chosen per training set, from ``settings["layer_grid"]``, by an inner stratified CV on
the training part only (a plain L2 logistic regression over the same feature groups,
``fit_logistic``); the finder is then trained with the chosen layers. Beside every
cross-validation, the plain logistic regression over the D+L features on the identical
folds is reported ("baseline_dl_logreg").

Each protocol trains the ``chiasmus_finder`` component in process (the same code that
``spacy train`` runs) on the annotated candidates only, then scores the held-out
annotated candidates with ``ChiasmusFinder.score_candidates``. Repeated CV: one
stratified k-fold split per fold seed (``seeds``), mean and sample sd of AP over all
folds of all seeds.
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

from ..corpora.util import gold_tokens_doc
from ..logistic import LogisticRegression, f1_threshold
from .component import (
    ChiasmusFinder,
    ChiasmusSuggester,
    build_chiasmus_suggester,
    build_chiasmus_suggester_v2,
    gold_candidates,
)
from .features import candidate_features, encoder_e_features, feature_names
from .metrics import average_precision
from .negatives import running_text, sample_inversions
from .rules import rule_scores

GERMAN_FULL = ("a", "c", "fa", "fc")
GERMAN_FP_REMOVED = ("a", "c")
GERMAN_FP = ("fa", "fc")
ENGLISH_POSITIVE = ("True",)
ENGLISH_DUPLICATES = ("Duplicate", "DuplicateOfBorderline")

SCORER_V1 = "spacy-rhetoric.ChiasmusScorer.v1"
SCORER_V2 = "spacy-rhetoric.ChiasmusScorer.v2"
# The scorer model's settings the protocols take from a training config.
MODEL_SETTINGS = ("feature_groups", "hidden_width", "depth", "dropout", "encoder", "encoder_layers")
# The protocols' own settings (no training config has them).
PROTOCOL_SETTINGS: Dict[str, Any] = {
    # encoder layers tried by the inner CV of each training set (None: encoder_layers)
    "layer_grid": [[0], [4], [8], [12], [0, 8], [0, 12]],
    "inner_folds": 5,
    "inner_repeats": 3,
    "baseline_C": 1.0,
}


def default_config_path(name: str = "de.cfg") -> Path:
    """RETURNS (Path): a chiasmus training config of the repository (configs/chiasmus)."""
    return Path(__file__).resolve().parents[2] / "configs" / "chiasmus" / name


def settings_from_config(path: Optional[Path] = None) -> Dict[str, Any]:
    """The training and model settings of the evaluation protocols, read from a
    chiasmus training config (the recipe ``spacy train`` uses), plus the protocols' own
    settings (``PROTOCOL_SETTINGS``).

    path (Optional[Path]): the config (default: configs/chiasmus/de.cfg).
    RETURNS (Dict[str, Any]): epochs, batch_size, learn_rate, L2, L2_is_weight_decay,
        model (architecture and MODEL_SETTINGS), and the protocol settings.
    """
    path = Path(path) if path is not None else default_config_path()
    if not path.is_file():
        raise ValueError(f"chiasmus config {path} not found")
    config = spacy.util.load_config(path, interpolate=True)
    training = config["training"]
    model = config["components"]["chiasmus_finder"]["model"]
    return {
        "epochs": training["max_epochs"],
        "batch_size": training["batcher"]["size"],
        "learn_rate": training["optimizer"]["learn_rate"],
        "L2": training["optimizer"]["L2"],
        "L2_is_weight_decay": training["optimizer"].get("L2_is_weight_decay", True),
        "suggester": dict(config["components"]["chiasmus_finder"].get("suggester", {})),
        "model": {
            "@architectures": model["@architectures"],
            **{key: model[key] for key in MODEL_SETTINGS if key in model},
        },
        **PROTOCOL_SETTINGS,
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
    model = {"@architectures": SCORER_V1, **settings["model"]}
    if model["@architectures"] == SCORER_V1:
        for name in ("encoder", "encoder_layers"):
            model.pop(name, None)
    config = {
        "model": model,
        "positive_labels": list(positive),
        "ignored_labels": list(ignored),
        "training_candidates": "annotated",
        "review_per_1000": None,  # every candidate: the protocols rank them all
    }
    if settings.get("suggester"):  # the training config's (prediction-time) suggester
        config["suggester"] = dict(settings["suggester"])
    return config


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
    settings (Dict[str, Any]): epochs, batch_size, learn_rate, L2 (and L2_is_weight_decay,
        default True) and the model settings.
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
    optimizer.L2_is_weight_decay = settings.get("L2_is_weight_decay", True)
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


SUGGESTERS = {"strict": build_chiasmus_suggester, "relaxed": build_chiasmus_suggester_v2}


def suggested(examples: Sequence[Example]) -> Dict[str, numpy.ndarray]:
    """Whether the default suggesters propose each example's annotated candidate on its
    predicted doc: "strict" (spacy-rhetoric.chiasmus_suggester.v1: pairs repeat their
    POS) and "relaxed" (.v2: or their lemma; numerals and pronouns where the form
    repeats). RETURNS (Dict[str, numpy.ndarray]): [n] bool per suggester."""
    result = {}
    for name, build in SUGGESTERS.items():
        suggester = build()
        found = []
        for eg, (positions, _) in zip(examples, _annotated(examples)):
            rows = {tuple(map(int, row)) for row in suggester.suggest(eg.predicted).indices}
            found.append(tuple(positions) in rows)
        result[name] = numpy.asarray(found, dtype=bool)
    return result


def rank_rules(examples: Sequence[Example]) -> numpy.ndarray:
    """Score the first annotated candidate of each example with the hand-weighted rules
    (``spacy-rhetoric.ChiasmusRules.v1``; no training). RETURNS (numpy.ndarray): [n]."""
    return numpy.asarray(
        [
            rule_scores(eg.predicted, numpy.asarray([c], dtype=numpy.int64))[0]
            for eg, (c, _) in zip(examples, _annotated(examples))
        ]
    )


def suggested_aps(
    scores: numpy.ndarray, truth: numpy.ndarray, masks: Dict[str, numpy.ndarray]
) -> Dict[str, float]:
    """AP when only the suggested candidates can be found: the others are never ranked
    and every positive still counts. RETURNS (Dict[str, float]): per suggester."""
    total = int(truth.sum())
    return {
        name: average_precision(scores[mask], truth[mask], n_relevant=total)
        for name, mask in masks.items()
    }


def german_examples(data_dir: Path, nlp: Language) -> List[Example]:
    """The German candidates as Examples whose predicted docs keep the gold POS and lemmas."""
    from ..corpora import convert

    docs = convert("chiasmus-de", data_dir, vocab=nlp.vocab).splits["all"]
    return [Example(input_doc(nlp.vocab, doc), doc) for doc in docs]


def fit_logistic(X: numpy.ndarray, y: Sequence[bool], C: float = 1.0) -> Callable:
    """The plain baseline: ``logistic.LogisticRegression(C)`` fitted on (X, y); a
    training set of one class (tiny folds) predicts that class for everything.

    RETURNS (Callable[[numpy.ndarray], numpy.ndarray]): features -> probabilities.
    """
    target = numpy.asarray(y, dtype="float64")
    if len(target) and target.min() == target.max():  # a fold with one class: its rate
        rate = float(target[0])
        return lambda features: numpy.full(len(features), rate)
    return LogisticRegression(C=C).fit(X, y).predict_proba


class FeatureTable:
    """The features of one annotated candidate per example, computed once for all folds:
    the D and L groups and the encoder E features of every layer of ``layers``.

    examples (Sequence[Example]): one annotated candidate per example.
    groups (Sequence[str]): the groups wanted ("E" needs ``encoder``).
    encoder (Optional[str]): the encoder of the E features.
    layers (Sequence[int]): the encoder layers computed.
    """

    def __init__(
        self,
        examples: Sequence[Example],
        groups: Sequence[str] = ("D", "L", "E"),
        encoder: Optional[str] = None,
        layers: Sequence[int] = (),
        candidates: Optional[Sequence[numpy.ndarray]] = None,
    ) -> None:
        from .model import encoder_states

        docs = [eg.predicted for eg in examples]
        if candidates is None:
            candidates = [numpy.asarray([c], dtype=numpy.int64) for c, _ in _annotated(examples)]
        self.layers = list(layers)
        self.blocks: Dict[str, numpy.ndarray] = {}
        for group in ("D", "L"):
            rows = [candidate_features(d, c, groups=[group]) for d, c in zip(docs, candidates)]
            self.blocks[group] = numpy.concatenate(rows)
        if "E" in groups and encoder is not None and self.layers:
            settings = {"name": encoder, "layers": self.layers, "window": 256, "stride": 192}
            states = encoder_states(settings, docs)
            rows = [encoder_e_features(st, c, self.layers) for st, c in zip(states, candidates)]
            self.blocks["E"] = numpy.concatenate(rows)

    def matrix(self, groups: Sequence[str], layers: Sequence[int] = ()) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): the columns of these groups (E: of these layers)."""
        parts = []
        for group in groups:
            if group != "E":
                parts.append(self.blocks[group])
                continue
            width = self.blocks["E"].shape[1] // len(self.layers)
            for layer in layers:
                j = self.layers.index(layer)
                parts.append(self.blocks["E"][:, j * width : (j + 1) * width])
        return numpy.hstack(parts)


def inner_cv_ap(
    X: numpy.ndarray,
    y: Sequence[bool],
    n_folds: int = 5,
    seed: int = 0,
    C: float = 1.0,
    repeats: int = 1,
) -> float:
    """Mean AP of ``fit_logistic`` over a stratified k-fold CV of (X, y), repeated with
    the fold seeds seed, seed + 1000, ... (``repeats`` of them)."""
    y = numpy.asarray(y, dtype=bool)
    aps = []
    for repeat in range(repeats):
        folds = stratified_folds(list(y), n_folds, seed + 1000 * repeat)
        for fold in range(n_folds):
            train, test = folds != fold, folds == fold
            if y[train].all() or not y[train].any() or not y[test].any():
                continue
            predict = fit_logistic(X[train], y[train], C)
            aps.append(average_precision(predict(X[test]), y[test]))
    return float(numpy.mean(aps)) if aps else 0.0


def choose_layers(
    table: FeatureTable,
    rows: numpy.ndarray,
    y: Sequence[bool],
    groups: Sequence[str],
    grid: Sequence[Sequence[int]],
    n_folds: int = 5,
    seed: int = 0,
    C: float = 1.0,
    repeats: int = 1,
) -> Tuple[List[int], Dict[str, float]]:
    """Choose the encoder layers of the E features by inner CV on training rows only.

    table (FeatureTable): the features of all examples.
    rows (numpy.ndarray): the indices of the training examples.
    y (Sequence[bool]): their targets.
    groups (Sequence[str]): the feature groups of the model.
    grid (Sequence[Sequence[int]]): the layer sets tried.
    n_folds (int): inner folds.
    seed (int): the seed of the inner folds.
    C (float): the inverse regularisation of the logistic regression.
    repeats (int): inner CVs with different fold seeds, averaged.
    RETURNS (Tuple[List[int], Dict[str, float]]): the best set and the inner AP of each.
    """
    scores = {}
    for option in grid:
        X = table.matrix(groups, option)[rows]
        scores[",".join(map(str, option))] = inner_cv_ap(X, y, n_folds, seed, C, repeats)
    best = max(grid, key=lambda option: scores[",".join(map(str, option))])
    return [int(layer) for layer in best], scores


def _summary(aps: Sequence[float]) -> Dict[str, Any]:
    return {
        "ap_per_fold": [float(a) for a in aps],
        "ap_mean": float(numpy.mean(aps)),
        "ap_sd": float(numpy.std(aps, ddof=1)) if len(aps) > 1 else 0.0,
        "n_folds_total": len(aps),
    }


def _uses_encoder(settings: Dict[str, Any]) -> bool:
    model = settings["model"]
    return (
        model.get("@architectures", SCORER_V1) == SCORER_V2
        and model.get("encoder") is not None
        and "E" in model["feature_groups"]
    )


def _grid_layers(settings: Dict[str, Any]) -> List[int]:
    grid = settings.get("layer_grid") or [settings["model"]["encoder_layers"]]
    return sorted({int(layer) for option in grid for layer in option})


def _fold_settings(
    settings: Dict[str, Any],
    table: Optional[FeatureTable],
    rows: numpy.ndarray,
    y: Sequence[bool],
    seed: int,
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The settings of one training set: the encoder layers chosen on it."""
    if not _uses_encoder(settings) or not settings.get("layer_grid") or table is None:
        return settings, {}
    layers, inner = choose_layers(
        table,
        rows,
        y,
        settings["model"]["feature_groups"],
        settings["layer_grid"],
        settings.get("inner_folds", 5),
        seed,
        settings.get("baseline_C", 1.0),
        settings.get("inner_repeats", 1),
    )
    changed = {**settings, "model": {**settings["model"], "encoder_layers": layers}}
    return changed, {"encoder_layers": layers, "inner_ap": inner}


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
    seeds: Optional[Sequence[int]] = None,
    negatives: Sequence[Example] = (),
) -> Dict[str, Any]:
    """Stratified k-fold cross-validation of the finder on annotated candidates,
    repeated over fold seeds, with the plain D+L logistic regression on the same folds.

    With ``negatives`` (random inversions, see ``negatives.sample_inversions``), they are
    split into the same folds: every training part holds its share, and each test fold
    is scored twice, over the annotated candidates alone (``ap_*``, as without them) and
    over the annotated candidates plus the fold's random ones (``with_random``, the
    protocol of Schneider et al.).

    examples (Sequence[Example]): one annotated candidate per example.
    lang (str): the language of the blank pipeline the finder is trained in.
    positive (Sequence[str]): the positive labels.
    removed (Sequence[str]): labels whose candidates are removed from the data.
    settings (Optional[Dict[str, Any]]): training and model settings (default:
        ``settings_from_config()``).
    n_folds (int): the number of folds.
    seed (int): the seed of the fold assignment and of training (without ``seeds``).
    folds (Optional[Sequence[int]]): run only these folds (default: all).
    progress (Optional[Callable[[str], None]]): called with a line per fold.
    seeds (Optional[Sequence[int]]): fold seeds of a repeated CV (default: [seed]); each
        seeds both its fold assignment and the training.
    negatives (Sequence[Example]): random inversions added as negatives.
    RETURNS (Dict[str, Any]): per-fold AP, mean and sample standard deviation over all
        folds, per-seed means, the layers chosen per fold, the baseline, counts.
    """
    settings = settings or settings_from_config()
    seeds = list(seeds) if seeds is not None else [seed]
    kept = [eg for eg, (_, label) in zip(examples, _annotated(examples)) if label not in removed]
    n_annotated = len(kept)
    kept = kept + list(negatives)
    labels = [label for _, label in _annotated(kept)]
    is_positive = numpy.asarray([label in positive for label in labels], dtype=bool)
    annotated = numpy.arange(len(kept)) < n_annotated
    groups = settings["model"]["feature_groups"]
    encoder = settings["model"].get("encoder") if _uses_encoder(settings) else None
    table = FeatureTable(kept, groups, encoder, _grid_layers(settings) if encoder else ())
    baseline_X = table.matrix(["D", "L"])
    rules = rank_rules(kept)
    masks = {name: mask & annotated for name, mask in suggested(kept).items()}
    nlp = spacy.blank(lang)
    aps: List[float] = []
    baseline: List[float] = []
    rule_aps: List[float] = []
    with_random: Dict[str, List[float]] = {"ours": [], "baseline": [], "rules": []}
    found_aps: Dict[str, List[float]] = {f"{m}_{n}": [] for m in ("ours", "rules") for n in masks}
    details: List[Dict[str, Any]] = []
    for fold_seed in seeds:
        assignment = stratified_folds(list(is_positive), n_folds, fold_seed)
        for fold in range(n_folds) if folds is None else folds:
            rows = numpy.flatnonzero(assignment != fold)
            test_rows = numpy.flatnonzero(assignment == fold)
            start = time.perf_counter()
            fold_settings, chosen = _fold_settings(
                settings, table, rows, is_positive[rows], fold_seed
            )
            train = [kept[i] for i in rows]
            test = [kept[i] for i in test_rows]
            finder = train_finder(nlp, train, fold_settings, positive, seed=fold_seed)
            all_scores = rank_annotated(finder, test)
            predict = fit_logistic(
                baseline_X[rows], is_positive[rows], settings.get("baseline_C", 1.0)
            )
            all_baseline = predict(baseline_X[test_rows])
            if negatives:
                everything = is_positive[test_rows]
                for name, values in (
                    ("ours", all_scores),
                    ("baseline", all_baseline),
                    ("rules", rules[test_rows]),
                ):
                    with_random[name].append(average_precision(values, everything))
            # the annotated candidates of the fold alone
            own = annotated[test_rows]
            test_rows = test_rows[own]
            scores, truth = all_scores[own], is_positive[test_rows]
            aps.append(average_precision(scores, truth))
            rule_aps.append(average_precision(rules[test_rows], truth))
            fold_masks = {name: mask[test_rows] for name, mask in masks.items()}
            for model, model_scores in (("ours", scores), ("rules", rules[test_rows])):
                for name, ap in suggested_aps(model_scores, truth, fold_masks).items():
                    found_aps[f"{model}_{name}"].append(ap)
            baseline.append(average_precision(all_baseline[own], truth))
            details.append({"seed": fold_seed, "fold": fold, "ap": aps[-1], **chosen})
            if progress is not None:
                layers = f", layers {chosen['encoder_layers']}" if chosen else ""
                progress(
                    f"seed {fold_seed} fold {fold}: AP {aps[-1]:.3f} (D+L logreg "
                    f"{baseline[-1]:.3f}; {int(truth.sum())} of {len(truth)} positive{layers}, "
                    f"{time.perf_counter() - start:.1f}s)"
                )
    per_seed = len(aps) // len(seeds)
    return {
        "positive_labels": list(positive),
        "removed_labels": list(removed),
        "n_candidates": n_annotated,
        "n_positive": int(is_positive.sum()),
        "n_random_negatives": len(negatives),
        "n_folds": n_folds,
        "seed": seeds[0],
        "seeds": seeds,
        **_summary(aps),
        "ap_per_seed": [
            float(numpy.mean(aps[i * per_seed : (i + 1) * per_seed])) for i in range(len(seeds))
        ],
        "folds": details,
        "baseline_dl_logreg": _summary(baseline),
        "rules": _summary(rule_aps),
        "rules_ap_all": average_precision(rules[annotated], is_positive[annotated]),
        "with_random": (
            {name: _summary(values) for name, values in with_random.items()} if negatives else None
        ),
        "suggested": {
            "n_positive_suggested": {n: int((m & is_positive).sum()) for n, m in masks.items()},
            "n_suggested": {n: int(m.sum()) for n, m in masks.items()},
            **{key: _summary(values) for key, values in found_aps.items()},
        },
    }


# German running text of the UD mirror: random inversions are sampled from GSD and the
# first half of LIT; the second half of LIT stays unseen (the running-text check).
GERMAN_SAMPLED = ("UD_German-GSD/de_gsd-ud-dev.conllu", "UD_German-GSD/de_gsd-ud-test.conllu")
GERMAN_LIT = "UD_German-LIT/de_lit-ud-test.conllu"


def german_running_text(ud_dir: Path, vocab) -> Tuple[List[Doc], List[Doc]]:
    """German treebank text in docs of 10 consecutive sentences (gold POS and lemmas).

    ud_dir (Path): the UD folder of the data mirror.
    RETURNS (Tuple[List[Doc], List[Doc]]): the docs random inversions are sampled from
        (GSD dev and test, the first half of LIT) and the held-out docs (the rest of LIT).
    """
    missing = [name for name in (*GERMAN_SAMPLED, GERMAN_LIT) if not (ud_dir / name).is_file()]
    if missing:
        raise ValueError(f"German running text: {', '.join(missing)} not found in {ud_dir}")
    sampled = running_text([ud_dir / name for name in GERMAN_SAMPLED], vocab)
    lit = running_text([ud_dir / GERMAN_LIT], vocab)
    half = len(lit) // 2
    return sampled + lit[:half], lit[half:]


def config_suggester(settings: Dict[str, Any]) -> ChiasmusSuggester:
    """The suggester of the training config's pipeline (the one prediction uses)."""
    block = settings.get("suggester") or {"@misc": "spacy-rhetoric.chiasmus_suggester.v2"}
    return spacy.util.registry.resolve({"suggester": block})["suggester"]


def german_negatives(
    ud_dir: Path, settings: Dict[str, Any], n: int = 4000, seed: int = 0
) -> List[Example]:
    """``n`` random inversions of German running text (see ``german_running_text``),
    proposed by the config's suggester on gold POS and lemmas, as negatives."""
    sampled, _ = german_running_text(Path(ud_dir), spacy.blank("de").vocab)
    return sample_inversions(sampled, config_suggester(settings).suggest, n, seed)


def evaluate_german(
    data_dir: Path,
    settings: Optional[Dict[str, Any]] = None,
    n_folds: int = 5,
    seed: int = 0,
    progress: Optional[Callable[[str], None]] = None,
    seeds: Optional[Sequence[int]] = None,
    negatives_dir: Optional[Path] = None,
    n_negatives: int = 4000,
) -> Dict[str, Any]:
    """The German protocol: "full" and "fp_removed" cross-validation.

    data_dir (Path): the German chiasmus data (a directory or the JSON file).
    seeds (Optional[Sequence[int]]): fold seeds of a repeated CV (default: [seed]).
    negatives_dir (Optional[Path]): the UD folder of the mirror: add ``n_negatives``
        random inversions of German running text as negatives (``german_negatives``).
    RETURNS (Dict[str, Any]): the results of both settings and the settings used.
    """
    settings = settings or settings_from_config()
    nlp = spacy.blank("de")
    examples = german_examples(Path(data_dir), nlp)
    negatives: List[Example] = []
    if negatives_dir is not None:
        negatives = german_negatives(Path(negatives_dir), settings, n_negatives, seed)
        if progress is not None:
            progress(f"{len(negatives)} random inversions from {negatives_dir} as negatives")
    results: Dict[str, Any] = {"dataset": "chiasmus-de", "data": str(data_dir)}
    for name, positive, removed in (
        ("full", GERMAN_FULL, ()),
        ("fp_removed", GERMAN_FP_REMOVED, GERMAN_FP),
    ):
        if progress is not None:
            progress(f"German, {name}: positives {', '.join(positive)}")
        results[name] = cross_validate(
            examples, "de", positive, removed, settings, n_folds, seed, None, progress, seeds,
            negatives,
        )  # fmt: skip
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
            for eg, (_, lab) in zip(data["train"], _annotated(data["train"]))
            if lab not in removed
        ]
        test = [
            eg for eg, (_, lab) in zip(data["test"], _annotated(data["test"])) if lab not in removed
        ]
        start = time.perf_counter()
        train_truth = numpy.asarray([lab in ENGLISH_POSITIVE for _, lab in _annotated(train)])
        table = None
        if _uses_encoder(settings):
            table = FeatureTable(
                train,
                settings["model"]["feature_groups"],
                settings["model"]["encoder"],
                _grid_layers(settings),
            )
        fold_settings, chosen = _fold_settings(
            settings, table, numpy.arange(len(train)), train_truth, seed
        )
        finder = train_finder(nlp, train, fold_settings, ENGLISH_POSITIVE, seed=seed)
        scores = rank_annotated(finder, test)
        truth = [lab in ENGLISH_POSITIVE for _, lab in _annotated(test)]
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
            "n_train_positive": sum(lab in ENGLISH_POSITIVE for _, lab in _annotated(train)),
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
    settings = settings or settings_from_config()
    results = {}
    for combination in groups:
        changed = {**settings, "model": {**settings["model"], "feature_groups": list(combination)}}
        results["+".join(combination)] = run(changed)
    return results


MB_POSITIVE_SPLIT = "salient-chiasmi"
MB_NEGATIVE_SPLIT = "non-chiasmi"
MB_LABELS = ("True", "False")


def near_duplicate_groups(texts: Sequence[str], jaccard: float = 0.5) -> numpy.ndarray:
    """Group texts that are near-duplicates: the same normalised text (lower-case
    words), one inside the other, or word-trigram Jaccard similarity >= ``jaccard``;
    groups are the connected components.

    texts (Sequence[str]): the texts.
    jaccard (float): the trigram Jaccard threshold.
    RETURNS (numpy.ndarray): the group id of each text.
    """
    import re

    words = [re.findall(r"\w+", text.lower()) for text in texts]
    norms = [" ".join(w) for w in words]
    grams = [{tuple(w[i : i + 3]) for i in range(max(1, len(w) - 2))} for w in words]
    parent = list(range(len(texts)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    index: Dict[Tuple[str, ...], List[int]] = {}
    for i, g in enumerate(grams):
        for gram in g:
            index.setdefault(gram, []).append(i)
    for i, g in enumerate(grams):
        others = {j for gram in g for j in index[gram] if j > i}
        for j in others:
            shared = len(g & grams[j])
            similar = shared / max(1, len(g | grams[j])) >= jaccard
            inside = norms[i] and norms[j] and (norms[i] in norms[j] or norms[j] in norms[i])
            if similar or inside:
                parent[find(i)] = find(j)
    roots = [find(i) for i in range(len(texts))]
    _, ids = numpy.unique(roots, return_inverse=True)
    return ids.reshape(-1)


def grouped_folds(
    groups: Sequence[int], positive: Sequence[bool], n_folds: int = 5, seed: int = 0
) -> numpy.ndarray:
    """Assign whole groups to folds, balancing the positives and the sizes: groups in
    a seeded random order, larger first, each to the fold with the fewest positives
    (then the fewest items).

    RETURNS (numpy.ndarray): the fold of each item.
    """
    groups = numpy.asarray(groups)
    positive = numpy.asarray(positive, dtype=bool)
    ids = sorted(set(groups.tolist()))
    random.Random(seed).shuffle(ids)
    members = {g: numpy.flatnonzero(groups == g) for g in ids}
    ids.sort(key=lambda g: (-int(positive[members[g]].sum()), -len(members[g])))
    load_pos = [0] * n_folds
    load_all = [0] * n_folds
    folds = numpy.zeros(len(groups), dtype=numpy.int64)
    for g in ids:
        rows = members[g]
        n_pos = int(positive[rows].sum())
        key = (lambda f: (load_pos[f], load_all[f])) if n_pos else (lambda f: load_all[f])
        fold = min(range(n_folds), key=key)
        folds[rows] = fold
        load_pos[fold] += n_pos
        load_all[fold] += len(rows)
    return folds


def _mil_example(doc: Doc, candidates: numpy.ndarray, labels: Sequence[str]) -> Example:
    """An Example whose reference marks these candidates with these labels."""
    from ..corpora.chiasmus import set_candidate

    reference = doc.copy()
    for k, (row, label) in enumerate(zip(candidates, labels)):
        set_candidate(reference, [int(i) for i in row], label, span_id=f"m{k}")
    return Example(doc, reference)


def _prior_choice(doc: Doc, candidates: numpy.ndarray) -> int:
    """The candidate with the most repeated A/A' and B/B' lemmas, then the shortest."""
    lex = candidate_features(doc, candidates, groups=["L"])
    names = feature_names(["L"])
    repeats = lex[:, names.index("lemma_a_a2")] + lex[:, names.index("lemma_b_b2")]
    size = candidates[:, -1] - candidates[:, 0]
    return int(numpy.lexsort((size, -repeats))[0])


def _mil_round(
    nlp: Language,
    finder: ChiasmusFinder,
    docs: Sequence[Doc],
    candidates: Sequence[numpy.ndarray],
    negatives: Sequence[numpy.ndarray],
    is_positive: numpy.ndarray,
    train_docs: Sequence[int],
    settings: Dict[str, Any],
    seed: int,
) -> ChiasmusFinder:
    """A further multiple-instance round: each positive training text's positive is
    the candidate the current model scores highest; the negatives stay."""
    positives = [i for i in train_docs if is_positive[i]]
    scores = finder.score_candidates(
        [docs[i] for i in positives], [candidates[i] for i in positives]
    )
    best = {i: int(numpy.argmax(s)) for i, s in zip(positives, scores)}
    examples = [
        _mil_example(docs[i], candidates[i][[best[i]]], ["True"])
        if is_positive[i]
        else _mil_example(docs[i], negatives[i], ["False"])
        for i in train_docs
    ]
    return train_finder(nlp, examples, settings, ["True"], seed=seed)


def evaluate_english_mb(
    data_dir: Path,
    tagger: Optional[Path],
    settings: Optional[Dict[str, Any]] = None,
    n_folds: int = 5,
    seeds: Sequence[int] = (0,),
    progress: Optional[Callable[[str], None]] = None,
    max_negatives: int = 30,
) -> Dict[str, Any]:
    """The Meyer/Berthomet protocol: salient chiasmi vs non-chiasmi, whole texts, grouped
    k-fold CV with multiple-instance training (see the module docstring).

    data_dir (Path): the Meyer/Berthomet JSON files.
    tagger (Optional[Path]): a spaCy pipeline that sets POS and lemmas (and a parse).
    settings (Optional[Dict[str, Any]]): training and model settings.
    n_folds (int): the number of folds.
    seeds (Sequence[int]): fold seeds.
    max_negatives (int): candidates kept per negative text in training.
    RETURNS (Dict[str, Any]): AP over texts per fold, mean and sd, the D+L baseline.
        ``settings["mil_rounds"]`` (default 2) sets the multiple-instance rounds.
    """
    from ..corpora import convert
    from .component import build_chiasmus_suggester

    settings = settings or settings_from_config()
    nlp = spacy.load(str(tagger)) if tagger is not None else spacy.blank("en")
    conversion = convert("chiasmus-en", Path(data_dir), vocab=nlp.vocab)
    references = conversion.splits[MB_POSITIVE_SPLIT] + conversion.splits[MB_NEGATIVE_SPLIT]
    is_positive = numpy.asarray(
        [i < len(conversion.splits[MB_POSITIVE_SPLIT]) for i in range(len(references))]
    )
    inputs = [gold_tokens_doc(nlp.vocab, d) for d in references]
    docs = list(nlp.pipe(inputs, batch_size=64))
    suggester = build_chiasmus_suggester()
    candidates = [suggester.suggest(doc).indices for doc in docs]
    groups = near_duplicate_groups([d.text for d in references])
    rng = random.Random(0)
    negatives = []
    for cands in candidates:
        keep = sorted(rng.sample(range(len(cands)), min(max_negatives, len(cands))))
        negatives.append(cands[keep])
    prior = [_prior_choice(d, c) if len(c) else -1 for d, c in zip(docs, candidates)]
    # round-1 training rows of every text: its prior candidate, or its sampled negatives
    rows_of = [
        (c[[p]] if pos else n) if len(c) else c[:0]
        for c, n, p, pos in zip(candidates, negatives, prior, is_positive)
    ]
    model = settings["model"]
    encoder = model.get("encoder") if _uses_encoder(settings) else None
    table = FeatureTable(
        [Example(d, d) for d in docs],
        model["feature_groups"],
        encoder,
        _grid_layers(settings) if encoder else (),
        candidates=rows_of,
    )
    owner = numpy.concatenate([numpy.full(len(r), i) for i, r in enumerate(rows_of)])
    baseline_X = table.matrix(["D", "L"])
    aps: List[float] = []
    baseline: List[float] = []
    details: List[Dict[str, Any]] = []
    for fold_seed in seeds:
        assignment = grouped_folds(groups, is_positive, n_folds, fold_seed)
        for fold in range(n_folds):
            start = time.perf_counter()
            train_docs = [i for i in range(len(docs)) if assignment[i] != fold and len(rows_of[i])]
            test_docs = numpy.flatnonzero(assignment == fold)
            rows = numpy.flatnonzero(numpy.isin(owner, train_docs))
            row_truth = is_positive[owner[rows]]
            fold_settings, chosen = _fold_settings(settings, table, rows, row_truth, fold_seed)
            examples = [
                _mil_example(docs[i], rows_of[i], ["True" if is_positive[i] else "False"])
                for i in train_docs
            ]
            finder = train_finder(nlp, examples, fold_settings, ["True"], seed=fold_seed)
            for _ in range(settings.get("mil_rounds", 2) - 1):
                finder = _mil_round(
                    nlp,
                    finder,
                    docs,
                    candidates,
                    rows_of,
                    is_positive,
                    train_docs,
                    fold_settings,
                    fold_seed,
                )
            has = [i for i in test_docs if len(candidates[i])]
            text_scores = numpy.zeros(len(docs))
            for i, s in zip(
                has, finder.score_candidates([docs[i] for i in has], [candidates[i] for i in has])
            ):
                text_scores[i] = float(s.max())
            truth = is_positive[test_docs]
            aps.append(average_precision(text_scores[test_docs], truth))
            # the D+L logistic regression on the round-1 rows, text score = max
            predict = fit_logistic(baseline_X[rows], row_truth, settings.get("baseline_C", 1.0))
            base_scores = numpy.zeros(len(docs))
            for i in has:
                X = FeatureTable(
                    [Example(docs[i], docs[i])], ["D", "L"], candidates=[candidates[i]]
                )
                base_scores[i] = float(predict(X.matrix(["D", "L"])).max())
            baseline.append(average_precision(base_scores[test_docs], truth))
            details.append({"seed": fold_seed, "fold": fold, "ap": aps[-1], **chosen})
            if progress is not None:
                progress(
                    f"seed {fold_seed} fold {fold}: AP {aps[-1]:.3f} (D+L logreg "
                    f"{baseline[-1]:.3f}; {int(truth.sum())} of {len(truth)} positive, "
                    f"{time.perf_counter() - start:.1f}s)"
                )
            nlp.remove_pipe("chiasmus_finder")
    return {
        "dataset": "chiasmus-en-mb",
        "data": str(data_dir),
        "tagger": str(tagger) if tagger is not None else None,
        "salient_vs_non": {
            "n_texts": len(docs),
            "n_positive": int(is_positive.sum()),
            "n_groups": int(groups.max()) + 1 if len(groups) else 0,
            "n_without_candidates": int(sum(len(c) == 0 for c in candidates)),
            "n_positive_without_candidates": int(
                sum(len(c) == 0 and p for c, p in zip(candidates, is_positive))
            ),
            "n_folds": n_folds,
            "seeds": list(seeds),
            **_summary(aps),
            "folds": details,
            "baseline_dl_logreg": _summary(baseline),
        },
        "settings": settings,
    }
