"""The machinery the chiasmus evaluation protocols share (``eval_german``,
``eval_english``, ``eval_english_mb``): their settings, read from a chiasmus training
config; input docs and stratified folds; training the ``chiasmus_finder`` in process and
ranking the annotated candidates (with the finder, the hand-weighted rules and the
suggesters' reach); the feature table, the inner CV that chooses the encoder layers and
the plain logistic-regression baseline; the repeated stratified k-fold
cross-validation; feature ablation.

Each protocol trains the ``chiasmus_finder`` component in process (the same code that
``spacy train`` runs) on the annotated candidates only, then scores the held-out
annotated candidates with ``ChiasmusFinder.score_candidates``. Repeated CV: one
stratified k-fold split per fold seed (``seeds``), mean and sample sd of AP over all
folds of all seeds.

E features from the encoder (``spacy-rhetoric.ChiasmusScorer.v2``): the layers are
chosen per training set, from ``settings["layer_grid"]``, by an inner stratified CV on
the training part only (a plain L2 logistic regression over the same feature groups,
``fit_logistic``); the finder is then trained with the chosen layers. A network scorer
with a coupled L2 (``chooses_l2``) also gets its L2 chosen from ``settings["l2_grid"]``,
on those layers, by an inner CV of the same network trained on the feature table
(``fit_network``). Beside every
cross-validation, the plain logistic regression over the D+L features on the identical
folds is reported ("baseline_dl_logreg").
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
from spacy.util import create_default_optimizer
from thinc.api import Optimizer, fix_random_seed

from ..logistic import LogisticRegression
from .component import ChiasmusFinder
from .features import candidate_features, encoder_e_features
from .metrics import average_precision
from .rules import rule_scores
from .spans import gold_candidates
from .suggester import ChiasmusSuggester, build_chiasmus_suggester, build_chiasmus_suggester_v2

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
    # a network scorer trained with a coupled L2 (L2_is_weight_decay = false): the L2
    # strengths its inner CV tries (units of a batch of 200 summed candidates: 1.0 is
    # scikit-learn's MLP alpha 1 at its batch size of 200)
    "l2_grid": [0.3, 1.0, 3.0, 10.0],
    "l2_inner_repeats": 1,
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


def config_suggester(settings: Dict[str, Any]) -> ChiasmusSuggester:
    """The suggester of the training config's pipeline (the one prediction uses)."""
    block = settings.get("suggester") or {"@misc": "spacy-rhetoric.chiasmus_suggester.v2"}
    return spacy.util.registry.resolve({"suggester": block})["suggester"]


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
    optimizer = protocol_optimizer(settings)
    for rows in epoch_batches(len(examples), settings, seed):
        finder.update([examples[i] for i in rows], sgd=optimizer)
    return finder


def protocol_optimizer(settings: Dict[str, Any], L2: Optional[float] = None) -> Optimizer:
    """The component's default optimizer (``TrainablePipe.create_optimizer``) with the
    settings' learn rate, L2 (or ``L2``, then coupled) and ``L2_is_weight_decay``."""
    optimizer = create_default_optimizer()
    optimizer.learn_rate = settings["learn_rate"]
    optimizer.L2 = settings["L2"] if L2 is None else L2
    optimizer.L2_is_weight_decay = settings.get("L2_is_weight_decay", True) if L2 is None else False
    return optimizer


def epoch_batches(n: int, settings: Dict[str, Any], seed: int) -> Iterable[List[int]]:
    """The rows of each training batch: ``settings["epochs"]`` passes over ``n`` rows,
    shuffled anew each epoch by a ``random.Random(seed)``, in ``batch_size`` slices."""
    rng = random.Random(seed)
    order = list(range(n))
    for _ in range(settings["epochs"]):
        rng.shuffle(order)
        for start in range(0, n, settings["batch_size"]):
            yield order[start : start + settings["batch_size"]]


def first_annotated(examples: Sequence[Example]) -> List[Tuple[Tuple[int, ...], str]]:
    """The (first) annotated candidate of each example."""
    return [gold_candidates(eg.reference)[0] for eg in examples]


def rank_annotated(finder: ChiasmusFinder, examples: Sequence[Example]) -> numpy.ndarray:
    """Score the first annotated candidate of each example. RETURNS (numpy.ndarray): [n]."""
    docs = [eg.predicted for eg in examples]
    cands = [numpy.asarray([c], dtype=numpy.int64) for c, _ in first_annotated(examples)]
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
        for eg, (positions, _) in zip(examples, first_annotated(examples)):
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
            for eg, (c, _) in zip(examples, first_annotated(examples))
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
            candidates = [
                numpy.asarray([c], dtype=numpy.int64) for c, _ in first_annotated(examples)
            ]
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


def fit_network(
    X: numpy.ndarray, y: Sequence[bool], settings: Dict[str, Any], L2: float, seed: int = 0
) -> Callable:
    """The finder's scorer network (``model.scorer_layers``: standardizer, ReLU layers,
    linear, sigmoid) trained on a feature table the way ``train_finder`` trains the
    finder: Adam with the settings' learn rate, epochs and batch size, the summed binary
    cross-entropy's gradient, here a coupled L2 of ``L2``. The inner CV's stand-in for
    the finder, without computing features again.

    RETURNS (Callable[[numpy.ndarray], numpy.ndarray]): features -> probabilities.
    """
    from thinc.api import chain

    from .model import scorer_layers

    model = settings["model"]
    features = numpy.ascontiguousarray(X, dtype="float32")
    target = numpy.asarray(y, dtype="float32").reshape(-1, 1)
    fix_random_seed(seed)
    net = chain(
        *scorer_layers(
            features.shape[1],
            int(model.get("hidden_width", 0)),
            int(model.get("depth", 1)),
            float(model.get("dropout", 0.0)),
        )
    )
    net.initialize(X=features, Y=target)
    optimizer = protocol_optimizer(settings, L2)
    for rows in epoch_batches(len(features), settings, seed):
        scores, backprop = net.begin_update(features[rows])
        backprop(scores - target[rows])  # the summed cross-entropy's, as the finder's loss
        net.finish_update(optimizer)
    return lambda table: net.predict(numpy.asarray(table, dtype="float32")).reshape(-1)


def inner_cv_ap(
    X: numpy.ndarray,
    y: Sequence[bool],
    n_folds: int = 5,
    seed: int = 0,
    C: float = 1.0,
    repeats: int = 1,
    fit: Optional[Callable[[numpy.ndarray, numpy.ndarray], Callable]] = None,
) -> float:
    """Mean AP over a stratified k-fold CV of (X, y), repeated with the fold seeds seed,
    seed + 1000, ... (``repeats`` of them), of ``fit`` (features, targets -> predict;
    default: ``fit_logistic`` with ``C``)."""
    y = numpy.asarray(y, dtype=bool)
    if fit is None:
        fit = lambda features, target: fit_logistic(features, target, C)  # noqa: E731
    aps = []
    for repeat in range(repeats):
        folds = stratified_folds(list(y), n_folds, seed + 1000 * repeat)
        for fold in range(n_folds):
            train, test = folds != fold, folds == fold
            if y[train].all() or not y[train].any() or not y[test].any():
                continue
            predict = fit(X[train], y[train])
            aps.append(average_precision(predict(X[test]), y[test]))
    return float(numpy.mean(aps)) if aps else 0.0


def chooses_l2(settings: Dict[str, Any]) -> bool:
    """Whether the protocol chooses the scorer's L2 by inner CV: a network (hidden_width
    > 0) trained with a coupled L2 (``L2_is_weight_decay = false``) and an ``l2_grid``."""
    return (
        int(settings["model"].get("hidden_width", 0)) > 0
        and not settings.get("L2_is_weight_decay", True)
        and bool(settings.get("l2_grid"))
    )


def choose_l2(
    X: numpy.ndarray, y: Sequence[bool], settings: Dict[str, Any], seed: int = 0
) -> Tuple[float, Dict[str, float]]:
    """Choose the network's L2 from ``settings["l2_grid"]`` by inner CV on training rows
    only (``fit_network``). RETURNS (Tuple[float, Dict[str, float]]): the best L2 and the
    inner AP of each."""
    scores = {}
    for L2 in settings["l2_grid"]:
        fit = lambda features, target, L2=L2: fit_network(features, target, settings, L2, seed)  # noqa: E731
        scores[str(L2)] = inner_cv_ap(
            X,
            y,
            settings.get("inner_folds", 5),
            seed,
            repeats=settings.get("l2_inner_repeats", 1),
            fit=fit,
        )
    best = max(settings["l2_grid"], key=lambda L2: scores[str(L2)])
    return float(best), scores


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


def ap_summary(aps: Sequence[float]) -> Dict[str, Any]:
    return {
        "ap_per_fold": [float(a) for a in aps],
        "ap_mean": float(numpy.mean(aps)),
        "ap_sd": float(numpy.std(aps, ddof=1)) if len(aps) > 1 else 0.0,
        "n_folds_total": len(aps),
    }


def uses_encoder(settings: Dict[str, Any]) -> bool:
    model = settings["model"]
    return (
        model.get("@architectures", SCORER_V1) == SCORER_V2
        and model.get("encoder") is not None
        and "E" in model["feature_groups"]
    )


def grid_layers(settings: Dict[str, Any]) -> List[int]:
    grid = settings.get("layer_grid") or [settings["model"]["encoder_layers"]]
    return sorted({int(layer) for option in grid for layer in option})


def settings_for_fold(
    settings: Dict[str, Any],
    table: Optional[FeatureTable],
    rows: numpy.ndarray,
    y: Sequence[bool],
    seed: int,
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The settings of one training set: the encoder layers chosen on it, then the
    network's L2 (``chooses_l2``) on those layers."""
    if table is None:
        return settings, {}
    chosen: Dict[str, Any] = {}
    groups = settings["model"]["feature_groups"]
    layers = list(settings["model"].get("encoder_layers") or [])
    if uses_encoder(settings) and settings.get("layer_grid"):
        layers, inner = choose_layers(
            table,
            rows,
            y,
            groups,
            settings["layer_grid"],
            settings.get("inner_folds", 5),
            seed,
            settings.get("baseline_C", 1.0),
            settings.get("inner_repeats", 1),
        )
        settings = {**settings, "model": {**settings["model"], "encoder_layers": layers}}
        chosen.update(encoder_layers=layers, inner_ap=inner)
    if chooses_l2(settings):
        encoded = uses_encoder(settings)  # E from the encoder's layers, else no E column
        kept = [group for group in groups if group != "E" or encoded]
        X = table.matrix(kept, layers if encoded else ())[rows]
        L2, inner = choose_l2(X, y, settings, seed)
        settings = {**settings, "L2": L2}
        chosen.update(L2=L2, inner_ap_l2=inner)
    return settings, chosen


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
    kept = [
        eg for eg, (_, label) in zip(examples, first_annotated(examples)) if label not in removed
    ]
    n_annotated = len(kept)
    kept = kept + list(negatives)
    labels = [label for _, label in first_annotated(kept)]
    is_positive = numpy.asarray([label in positive for label in labels], dtype=bool)
    annotated = numpy.arange(len(kept)) < n_annotated
    groups = settings["model"]["feature_groups"]
    encoder = settings["model"].get("encoder") if uses_encoder(settings) else None
    table = FeatureTable(kept, groups, encoder, grid_layers(settings) if encoder else ())
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
            fold_settings, chosen = settings_for_fold(
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
        **ap_summary(aps),
        "ap_per_seed": [
            float(numpy.mean(aps[i * per_seed : (i + 1) * per_seed])) for i in range(len(seeds))
        ],
        "folds": details,
        "baseline_dl_logreg": ap_summary(baseline),
        "rules": ap_summary(rule_aps),
        "rules_ap_all": average_precision(rules[annotated], is_positive[annotated]),
        "with_random": (
            {name: ap_summary(values) for name, values in with_random.items()}
            if negatives
            else None
        ),
        "suggested": {
            "n_positive_suggested": {n: int((m & is_positive).sum()) for n, m in masks.items()},
            "n_suggested": {n: int(m.sum()) for n, m in masks.items()},
            **{key: ap_summary(values) for key, values in found_aps.items()},
        },
    }


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
