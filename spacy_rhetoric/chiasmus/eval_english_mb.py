"""The second English chiasmus protocol (Meyer, Nurbakova & Berthomet, ``chiasmus-en-mb``).

Whole texts, not candidates: the salient chiasmi (positive) against the random extracts
without a chiastic repetition (negative). A text's score is the highest score of its
suggested candidates (0 without any). The data give no positions, so training is
multiple-instance: every candidate of a negative text is negative (at most
``max_negatives`` per text, chosen at random), and in each positive text the candidate
with the most repeated A/A' and B/B' lemmas (then the shortest) is positive; a second
round takes instead the candidate the first model scores highest. The folds are
grouped: texts that are near-duplicates (the same normalised text, one inside the
other, or word-trigram Jaccard >= 0.5) are one group, and a group never spans two
folds; folds are balanced by positives.
"""

import random
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from ..corpora.util import gold_tokens_doc
from .component import ChiasmusFinder
from .crossval import (
    FeatureTable,
    ap_summary,
    fit_logistic,
    grid_layers,
    settings_for_fold,
    settings_from_config,
    train_finder,
    uses_encoder,
)
from .features import candidate_features, feature_names
from .metrics import average_precision
from .suggester import build_chiasmus_suggester

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
    encoder = model.get("encoder") if uses_encoder(settings) else None
    table = FeatureTable(
        [Example(d, d) for d in docs],
        model["feature_groups"],
        encoder,
        grid_layers(settings) if encoder else (),
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
            fold_settings, chosen = settings_for_fold(settings, table, rows, row_truth, fold_seed)
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
            **ap_summary(aps),
            "folds": details,
            "baseline_dl_logreg": ap_summary(baseline),
        },
        "settings": settings,
    }
