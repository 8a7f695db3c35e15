"""Treebank splits: EDV-guided minimum- and maximum-EDV splits, seeded random splits and
k-fold cross-validation splits that keep documents whole and balance a stratum.

The EDV-guided splits follow the idea of Anderson & Gómez-Rodríguez (2022): sample the
sentences so that the edge displacement distributions of training and test data are as
close as possible (a "complementary" split, minimum EDV) or as far apart as possible (an
"adversarial" split, maximum EDV), while sentence lengths stay balanced. The paper leaves
the exact procedure open; the algorithm below is ours:

1. Every sentence gets a length bin (each length in ``length_range`` is its own bin;
   shorter sentences share one bin; longer ones are binned by ``long_bin_width`` tokens)
   and its MED (0 for one-token sentences, which have no edges).
2. Within every length bin, sentences are ordered by MED (ties in a seeded random order).
   - **min-EDV**: the bins are concatenated and the sentences dealt out to
     train/dev/test in an evenly interleaved pattern with exactly the target sizes (so
     every split samples every MED quantile of every length bin), shuffled within windows
     of five so that the deal is not purely periodic.
   - **max-EDV**: each sentence's MED quantile within its bin is computed; sorted by that
     quantile, the lowest 60% go to train, the next 20% to dev and the top 20% to test
     (``reverse`` flips the direction). Every length bin is thereby split the same way,
     so the split differs in displacement, not in sentence length.
3. Optional local search (``n_refine`` proposals): swap two sentences of the same length
   bin that lie in different splits if that lowers the sum of the three pairwise EDVs
   (min) or raises the train-test EDV (max), in the "support" variant. Swaps keep the
   split sizes and the length distributions.
"""

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Hashable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy
import srsly
from spacy.tokens import Doc

from .displacement import (
    DEFAULT_MAX_DISPLACEMENT,
    EDV_VARIANTS,
    Displacements,
    edv,
    from_docs,
    histogram,
    sentence_med,
    wasserstein_unit,
)
from .io import sentence_docs, write_docbin

SPLIT_NAMES = ("train", "dev", "test")
DEFAULT_PROPORTIONS = (0.6, 0.2, 0.2)
DEFAULT_SPLIT_LENGTHS = (3, 30)
EDV_MODES = ("min", "max")
TRAIN, DEV, TEST = 0, 1, 2


def split_sizes(n: int, proportions: Sequence[float] = DEFAULT_PROPORTIONS) -> List[int]:
    """Integer sizes for n items in the given proportions (largest remainder method).

    n (int): the number of items.
    proportions (Sequence[float]): non-negative, summing to 1 (normalised if not).
    RETURNS (List[int]): sizes summing to n.
    """
    props = numpy.asarray(proportions, dtype="float64")
    if (props < 0).any() or props.sum() <= 0:
        raise ValueError(f"split proportions must be non-negative, got {list(proportions)}")
    exact = props / props.sum() * n
    sizes = numpy.floor(exact).astype(int)
    remainder = n - sizes.sum()
    order = numpy.argsort(-(exact - sizes), kind="stable")
    sizes[order[:remainder]] += 1
    return sizes.tolist()


def length_bins(
    lengths: numpy.ndarray,
    length_range: Tuple[int, int] = DEFAULT_SPLIT_LENGTHS,
    long_bin_width: int = 10,
) -> numpy.ndarray:
    """The length bin of every sentence: one bin for lengths below the range, one per
    length inside it, then bins of ``long_bin_width`` tokens above it.

    RETURNS (numpy.ndarray): int64 [S], bin ids (ordered by length).
    """
    low, high = length_range
    lengths = numpy.asarray(lengths, dtype="int64")
    inside = lengths - low + 1
    above = (high - low + 1) + 1 + (lengths - high - 1) // long_bin_width
    return numpy.where(lengths < low, 0, numpy.where(lengths <= high, inside, above))


def random_split(
    n: int, proportions: Sequence[float] = DEFAULT_PROPORTIONS, seed: int = 0
) -> numpy.ndarray:
    """A seeded random split of n items.

    RETURNS (numpy.ndarray): int64 [n], the split index of every item (0 = train, ...).
    """
    sizes = split_sizes(n, proportions)
    labels = numpy.repeat(numpy.arange(len(sizes)), sizes)
    return labels[numpy.random.default_rng(seed).permutation(n)]


def _interleaved(sizes: Sequence[int]) -> numpy.ndarray:
    """Labels 0..K-1 with the given counts, spread evenly through the sequence."""
    labels = numpy.repeat(numpy.arange(len(sizes)), sizes)
    keys = numpy.concatenate([(numpy.arange(s) + 0.5) / s for s in sizes if s > 0] or [[]])
    return labels[numpy.argsort(keys, kind="stable")]


@dataclass
class EDVSplit:
    """The result of an EDV-guided split.

    assignment (numpy.ndarray): int64 [S], the split of every sentence (0/1/2).
    edv_before (float): train-test EDV ("support") before the local search.
    edv_after (float): train-test EDV ("support") after it.
    accepted (int): swaps the local search accepted.
    objective_before (float): what the local search optimises (min: the sum of the three
        pairwise EDVs, to be lowered; max: the train-test EDV, to be raised), before it.
    objective_after (float): the same after the local search.
    """

    assignment: numpy.ndarray
    edv_before: float
    edv_after: float
    accepted: int
    objective_before: float
    objective_after: float


def edv_split(
    data: Displacements,
    mode: str = "min",
    proportions: Sequence[float] = DEFAULT_PROPORTIONS,
    seed: int = 0,
    n_refine: int = 5000,
    length_range: Tuple[int, int] = DEFAULT_SPLIT_LENGTHS,
    max_displacement: int = DEFAULT_MAX_DISPLACEMENT,
    reverse: bool = False,
) -> EDVSplit:
    """Split sentences into train/dev/test with minimum or maximum train-test EDV (see
    the module docstring for the algorithm).

    data (Displacements): the sentences.
    mode (str): "min" (complementary split) or "max" (adversarial split).
    proportions (Sequence[float]): train/dev/test shares.
    seed (int): random seed (tie breaking, window shuffles, local search).
    n_refine (int): local search proposals (0: none).
    length_range (Tuple[int, int]): lengths that get a bin of their own.
    max_displacement (int): histogram range for the EDV.
    reverse (bool): max-EDV only: put the highest-MED sentences into train instead of test.
    RETURNS (EDVSplit): the assignment and the train-test EDV before and after refinement.
    """
    if mode not in EDV_MODES:
        raise ValueError(f"edv_split: mode must be one of {EDV_MODES}, got {mode!r}")
    if len(proportions) != 3:
        raise ValueError("edv_split: give three proportions (train, dev, test)")
    n = data.n_sentences
    if n < 3:
        raise ValueError(f"edv_split: need at least 3 sentences, got {n}")
    rng = numpy.random.default_rng(seed)
    sizes = split_sizes(n, proportions)
    bins = length_bins(data.lengths, length_range)
    med = numpy.nan_to_num(sentence_med(data), nan=0.0)
    noise = rng.random(n)
    order = numpy.lexsort((noise, med, bins))  # by bin, then MED, then random
    assignment = numpy.empty(n, dtype="int64")
    if mode == "min":
        pattern = _interleaved(sizes)
        # shuffle the pattern within windows of five positions
        windows = numpy.arange(n) // 5
        pattern = pattern[numpy.lexsort((rng.random(n), windows))]
        assignment[order] = pattern
    else:
        bin_sizes = numpy.bincount(bins)
        bin_starts = numpy.concatenate([[0], numpy.cumsum(bin_sizes)[:-1]])
        sorted_bins = bins[order]
        rank = numpy.arange(n) - bin_starts[sorted_bins]
        quantile = numpy.empty(n)
        quantile[order] = (rank + 0.5) / bin_sizes[sorted_bins]
        if reverse:
            quantile = 1.0 - quantile
        by_quantile = numpy.lexsort((rng.random(n), quantile))
        assignment[by_quantile] = numpy.repeat(numpy.arange(3), sizes)
    return _refine(data, assignment, bins, mode, n_refine, max_displacement, rng)


def _refine(
    data: Displacements,
    assignment: numpy.ndarray,
    bins: numpy.ndarray,
    mode: str,
    n_refine: int,
    max_displacement: int,
    rng: numpy.random.Generator,
) -> EDVSplit:
    """Greedy local search over swaps of two sentences of the same length bin that lie in
    different splits. Objective ("support" EDV): min: the sum of the three pairwise EDVs;
    max: the train-test EDV."""
    width = 2 * max_displacement + 1
    edge = data.values != 0
    cols = numpy.clip(data.values[edge], -max_displacement, max_displacement) + max_displacement
    per_sentence = numpy.zeros((data.n_sentences, width), dtype="float64")  # [S, K]
    numpy.add.at(per_sentence, (data.sentence_index[edge], cols), 1.0)
    counts = numpy.stack([per_sentence[assignment == s].sum(axis=0) for s in range(3)])  # [3, K]

    def pair_distances(c: numpy.ndarray) -> numpy.ndarray:
        totals = c.sum(axis=1, keepdims=True)
        p = c / numpy.maximum(totals, 1.0)
        left, right = numpy.array([TRAIN, TRAIN, DEV]), numpy.array([DEV, TEST, TEST])
        return wasserstein_unit(p[left], p[right])  # train-dev, train-test, dev-test

    def objective(d: numpy.ndarray) -> float:  # lower is better
        return float(d.sum()) if mode == "min" else -float(d[1])

    distances = pair_distances(counts)
    before, current = float(distances[1]), objective(distances)
    start = current
    members: Dict[int, numpy.ndarray] = {
        int(b): numpy.flatnonzero(bins == b) for b in numpy.unique(bins)
    }
    accepted = 0
    firsts = rng.integers(data.n_sentences, size=n_refine)
    draws = rng.random(n_refine)
    for i, draw in zip(firsts.tolist(), draws.tolist()):
        group = members[int(bins[i])]
        j = int(group[int(draw * len(group))])
        si, sj = int(assignment[i]), int(assignment[j])
        if si == sj:
            continue
        moved = counts.copy()
        moved[si] += per_sentence[j] - per_sentence[i]
        moved[sj] += per_sentence[i] - per_sentence[j]
        candidate_distances = pair_distances(moved)
        candidate = objective(candidate_distances)
        if candidate < current - 1e-12:
            counts, current, distances = moved, candidate, candidate_distances
            assignment[i], assignment[j] = sj, si
            accepted += 1
    sign = 1.0 if mode == "min" else -1.0
    return EDVSplit(assignment, before, float(distances[1]), accepted, sign * start, sign * current)


def kfold_split(
    group_sizes: Sequence[float],
    strata: Optional[Sequence[Hashable]] = None,
    k: int = 5,
    seed: int = 0,
) -> numpy.ndarray:
    """Assign whole groups (documents) to k folds, balancing every stratum (e.g. period or
    genre) across the folds.

    Within each stratum, groups are shuffled (seeded), sorted by size (largest first) and
    each given to the fold that holds the least of that stratum so far (ties: the fold
    with the least overall, then the lowest index). Each fold's share of a stratum then
    differs from any other fold's by at most the largest group of that stratum.

    group_sizes (Sequence[float]): the size of every group (e.g. tokens or sentences).
    strata (Optional[Sequence[Hashable]]): the stratum of every group (None: one stratum).
    k (int): the number of folds (>= 2).
    seed (int): random seed.
    RETURNS (numpy.ndarray): int64 [G], the fold of every group.
    """
    sizes = numpy.asarray(group_sizes, dtype="float64")
    n = len(sizes)
    if k < 2:
        raise ValueError(f"kfold_split: k must be >= 2, got {k}")
    if n < k:
        raise ValueError(f"kfold_split: {n} documents cannot fill {k} folds")
    strata = list(strata) if strata is not None else [None] * n
    if len(strata) != n:
        raise ValueError("kfold_split: one stratum per group needed")
    rng = numpy.random.default_rng(seed)
    by_stratum: Dict[Hashable, List[int]] = defaultdict(list)
    for i, stratum in enumerate(strata):
        by_stratum[stratum].append(i)
    folds = numpy.full(n, -1, dtype="int64")
    total = numpy.zeros(k)
    count = numpy.zeros(k)
    for stratum in sorted(by_stratum, key=repr):
        groups = numpy.array(by_stratum[stratum])
        groups = groups[rng.permutation(len(groups))]
        groups = groups[numpy.argsort(-sizes[groups], kind="stable")]
        load = numpy.zeros(k)
        for g in groups:
            fold = int(numpy.lexsort((numpy.arange(k), count, total, load))[0])
            folds[g] = fold
            load[fold] += sizes[g]
            total[fold] += sizes[g]
            count[fold] += 1
    return folds


def pairwise_edv(
    data: Displacements,
    assignment: numpy.ndarray,
    names: Sequence[str] = SPLIT_NAMES,
    max_displacement: int = DEFAULT_MAX_DISPLACEMENT,
) -> Dict[str, Dict[str, float]]:
    """EDV (both variants) between every pair of splits.

    data (Displacements): the sentences.
    assignment (numpy.ndarray): int [S], the split of every sentence.
    names (Sequence[str]): split names by index.
    RETURNS (Dict[str, Dict[str, float]]): {"train-test": {"support": x, "samples": y}, ...};
        pairs where a split has no edges are left out.
    """
    token_split = numpy.repeat(assignment, data.lengths)
    hists = {}
    for index, name in enumerate(names):
        edges = data.values[(token_split == index) & (data.values != 0)]
        if len(edges):
            hists[name] = histogram(edges, max_displacement)
    result: Dict[str, Dict[str, float]] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if a in hists and b in hists:
                result[f"{a}-{b}"] = {
                    variant: edv(hists[a], hists[b], variant=variant) for variant in EDV_VARIANTS
                }
    return result


# --- splitting DocBins ---------------------------------------------------------------------

SPLIT_METHODS = ("edv-min", "edv-max", "random", "kfold")


@dataclass
class CorpusSplit:
    """Docs per output file plus the JSON manifest describing the split.

    parts (Dict[str, List[Doc]]): docs per relative output path without suffix, e.g.
        "train" or "fold-0/test".
    manifest (Dict[str, Any]): method, settings, sizes, EDV of split pairs, and where
        every sentence or document went.
    """

    parts: Dict[str, List[Doc]]
    manifest: Dict[str, Any]


def _unit_record(index: int, doc: Doc) -> Dict[str, Any]:
    record: Dict[str, Any] = {"index": index}
    for key in ("doc_id", "sent_id", "source", "sent_index", "doc_index", "sent_in_doc"):
        if key in doc.user_data:
            record[key] = doc.user_data[key]
    return record


def _is_parsed(docs: Sequence[Doc]) -> bool:
    filled = [doc for doc in docs if len(doc)]
    return bool(filled) and all(doc.has_annotation("DEP") for doc in filled)


def _sizes(docs: Sequence[Doc]) -> Dict[str, int]:
    return {"docs": len(docs), "tokens": sum(len(doc) for doc in docs)}


def split_sentences(
    docs: Sequence[Doc],
    method: str,
    proportions: Sequence[float] = DEFAULT_PROPORTIONS,
    seed: int = 0,
    n_refine: int = 5000,
    reverse: bool = False,
    max_displacement: int = DEFAULT_MAX_DISPLACEMENT,
) -> CorpusSplit:
    """Split the sentences of a corpus into train/dev/test ("edv-min", "edv-max" or
    "random"). Multi-sentence docs are cut into sentence docs first.

    docs (Sequence[Doc]): the corpus (parsed, for the EDV methods).
    method (str): "edv-min", "edv-max" or "random".
    proportions (Sequence[float]): train/dev/test shares.
    seed (int): random seed.
    n_refine (int): local search proposals of the EDV methods.
    reverse (bool): edv-max: highest-MED sentences into train.
    max_displacement (int): histogram range for the EDV.
    RETURNS (CorpusSplit): one part per split and the manifest.
    """
    sentences = sentence_docs(docs)
    parsed = _is_parsed(sentences)
    data = from_docs(sentences) if parsed else None
    if data is not None and data.n_sentences != len(sentences):
        raise ValueError(
            "split: some docs hold more than one parse tree per sentence; "
            "check the sentence boundaries"
        )
    manifest: Dict[str, Any] = {
        "method": method,
        "seed": seed,
        "proportions": list(proportions),
        "unit": "sentence",
    }
    if method == "random":
        assignment = random_split(len(sentences), proportions, seed)
    elif method in ("edv-min", "edv-max"):
        if data is None:
            raise ValueError(f"split {method}: the docs need a dependency parse")
        result = edv_split(
            data,
            "min" if method == "edv-min" else "max",
            proportions,
            seed=seed,
            n_refine=n_refine,
            max_displacement=max_displacement,
            reverse=reverse,
        )
        assignment = result.assignment
        manifest["refinement"] = {
            "proposals": n_refine,
            "accepted": result.accepted,
            "objective": "sum of pairwise EDVs" if method == "edv-min" else "train-test EDV",
            "objective_before": result.objective_before,
            "objective_after": result.objective_after,
            "train_test_edv_before": result.edv_before,
            "train_test_edv_after": result.edv_after,
        }
    else:
        raise ValueError(f"split: method must be one of {SPLIT_METHODS}, got {method!r}")
    parts = {name: [] for name in SPLIT_NAMES}
    records = []
    for i, (doc, split) in enumerate(zip(sentences, assignment.tolist())):
        name = SPLIT_NAMES[split]
        parts[name].append(doc)
        records.append({**_unit_record(i, doc), "split": name})
    manifest["splits"] = {name: _sizes(part) for name, part in parts.items()}
    if data is not None:
        manifest["edv"] = pairwise_edv(data, assignment, SPLIT_NAMES, max_displacement)
    manifest["assignment"] = records
    return CorpusSplit(parts, manifest)


def _group_key_value(doc: Doc, index: int, group_key: Optional[str]) -> Hashable:
    if group_key is None:
        return index
    if group_key not in doc.user_data:
        raise ValueError(
            f"split kfold: doc {index} has no user_data[{group_key!r}] to group by; "
            "pass another --group-key or none"
        )
    return doc.user_data[group_key]


def split_kfold(
    docs: Sequence[Doc],
    k: int = 5,
    seed: int = 0,
    group_key: Optional[str] = "doc_id",
    stratum_key: Optional[str] = None,
    strata: Optional[Mapping[str, Hashable]] = None,
    dev: bool = True,
    max_displacement: int = DEFAULT_MAX_DISPLACEMENT,
) -> CorpusSplit:
    """k-fold cross-validation splits that keep documents whole: fold i is the test set
    of run i, fold i+1 (mod k) its dev set (if ``dev``) and the rest its training set.

    docs (Sequence[Doc]): the corpus; docs sharing ``user_data[group_key]`` form one
        document (e.g. the sections of a text, or the sentences of a CoNLL-U newdoc).
    k (int): the number of folds.
    seed (int): random seed.
    group_key (Optional[str]): user_data key identifying the document; None: every Doc
        is a document. If no doc has the key, every Doc is a document, too.
    stratum_key (Optional[str]): user_data key holding the stratum (e.g. period, genre).
    strata (Optional[Mapping[str, Hashable]]): stratum per document id, instead of a key.
    dev (bool): also write a dev set per run.
    max_displacement (int): histogram range for the EDV.
    RETURNS (CorpusSplit): parts "fold-i/train", "fold-i/dev", "fold-i/test" and the manifest.
    """
    if group_key is not None and not any(group_key in doc.user_data for doc in docs):
        group_key = None
    groups: Dict[Hashable, List[int]] = {}
    for i, doc in enumerate(docs):
        groups.setdefault(_group_key_value(doc, i, group_key), []).append(i)
    ids = list(groups)
    group_strata: List[Hashable] = []
    for gid in ids:
        if strata is not None:
            if str(gid) not in strata:
                raise ValueError(f"split kfold: document {gid!r} is missing from the strata map")
            group_strata.append(strata[str(gid)])
        elif stratum_key is not None:
            values = {repr(docs[i].user_data.get(stratum_key)) for i in groups[gid]}
            first = docs[groups[gid][0]]
            if stratum_key not in first.user_data or len(values) > 1:
                raise ValueError(
                    f"split kfold: document {gid!r} needs one user_data[{stratum_key!r}] "
                    f"on all its docs, found {sorted(values)}"
                )
            group_strata.append(first.user_data[stratum_key])
        else:
            group_strata.append(None)
    sizes = [sum(len(docs[i]) for i in groups[gid]) for gid in ids]
    folds = kfold_split(sizes, group_strata, k, seed)
    fold_docs: List[List[Doc]] = [[] for _ in range(k)]
    for gid, fold in zip(ids, folds.tolist()):
        fold_docs[fold].extend(docs[i] for i in groups[gid])
    parts: Dict[str, List[Doc]] = {}
    parsed = _is_parsed(docs)
    fold_records = []
    for run in range(k):
        dev_fold = (run + 1) % k if dev else None
        train = [d for f in range(k) if f not in (run, dev_fold) for d in fold_docs[f]]
        parts[f"fold-{run}/train"] = train
        if dev_fold is not None:
            parts[f"fold-{run}/dev"] = fold_docs[dev_fold]
        parts[f"fold-{run}/test"] = fold_docs[run]
        record: Dict[str, Any] = {
            "fold": run,
            "test": _sizes(fold_docs[run]),
            "documents": [gid for gid, f in zip(ids, folds.tolist()) if f == run],
            "strata": _count_strata(group_strata, folds, run),
        }
        if dev_fold is not None:
            record["dev_fold"] = dev_fold
        if parsed and train and fold_docs[run]:
            a, b = from_docs(train), from_docs(fold_docs[run])
            if a.n_edges and b.n_edges:
                record["edv_train_test"] = {
                    v: edv(a, b, max_displacement, variant=v) for v in EDV_VARIANTS
                }
        fold_records.append(record)
    manifest: Dict[str, Any] = {
        "method": "kfold",
        "k": k,
        "seed": seed,
        "unit": "document",
        "group_key": group_key,
        "stratum_key": stratum_key,
        "dev": dev,
        "folds": fold_records,
        "assignment": [
            {"document": gid, "stratum": stratum, "fold": fold, "docs": len(groups[gid])}
            for gid, stratum, fold in zip(ids, group_strata, folds.tolist())
        ],
    }
    return CorpusSplit(parts, manifest)


def _count_strata(strata: Sequence[Hashable], folds: numpy.ndarray, fold: int) -> Dict[str, int]:
    counts: Dict[str, int] = defaultdict(int)
    for stratum, f in zip(strata, folds.tolist()):
        if f == fold:
            counts[str(stratum)] += 1
    return dict(sorted(counts.items()))


def write_split(split: CorpusSplit, output_dir: Union[str, Path]) -> Dict[str, Path]:
    """Write one DocBin per part and ``manifest.json``.

    RETURNS (Dict[str, Path]): the written path per part (and "manifest").
    """
    output_dir = Path(output_dir)
    paths = {
        name: write_docbin(docs, output_dir / f"{name}.spacy") for name, docs in split.parts.items()
    }
    manifest_path = output_dir / "manifest.json"
    srsly.write_json(manifest_path, split.manifest)
    paths["manifest"] = manifest_path
    return paths
