"""Bipartite parallelism metrics (Bothwell et al., 2023, "Introducing Rhetorical
Parallelism Detection"): EPM, MPBM, MBAWO and MWO.

Every metric pairs a *score* function phi(gold, hypothesis) with a *size* function.
Within each document, gold and hypothesised parallelisms are matched one-to-one by a
maximum-weight bipartite matching under phi (``scipy.optimize.linear_sum_assignment``);
m is the weight of that matching. Over a corpus the counts are micro-averaged:

    P = sum(m) / sum(size(H))    R = sum(m) / sum(size(G))    F1 = 2PR / (P + R)

with 0.0 wherever a denominator is 0. The four metrics:

- EPM (exact parallelism match): phi = 1 if both parallelisms have exactly the same set
  of branches, else 0; size = number of parallelisms.
- MPBM (maximum parallel branch match): phi = number of exactly shared branches if at
  least two branches are shared, else 0; size = number of branches.
- MBAWO (maximum branch-aware word overlap): the branches of the two parallelisms are
  matched by an inner maximum-weight matching on shared words; phi = the matched word
  overlap if at least two matched branch pairs share a word, else 0; size = number of words.
- MWO (maximum word overlap): phi = number of words the two parallelisms share, ignoring
  branch boundaries; size = number of words.

A parallelism is given as a sequence of (start, end) token offsets of its branches.
"""

from typing import Any, Callable, Dict, Iterable, List, Sequence, Tuple

import numpy
from scipy.optimize import linear_sum_assignment
from spacy.scorer import PRFScore
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..corpora.parallelisms import CHIASTIC, DEFAULT_SPANS_KEY, Parallelism, get_parallelisms

METRICS = ("epm", "mpbm", "mbawo", "mwo")

Branch = Tuple[int, int]
DocParallelisms = Sequence[Sequence[Branch]]
# per metric: (matching weight m, size of the hypotheses, size of the gold set)
Counts = Dict[str, Tuple[int, int, int]]


def _canonical(parallelisms: DocParallelisms, what: str) -> List[Tuple[Branch, ...]]:
    """Sorted, de-duplicated branches per parallelism; rejects empty or inverted ones."""
    result = []
    for i, branches in enumerate(parallelisms):
        canon = tuple(sorted({(int(s), int(e)) for s, e in branches}))
        if not canon:
            raise ValueError(f"{what} parallelism {i} has no branches")
        for start, end in canon:
            if not 0 <= start < end:
                raise ValueError(f"{what} parallelism {i} has an invalid branch ({start}, {end})")
        result.append(canon)
    return result


def _merge(branches: Tuple[Branch, ...]) -> List[Branch]:
    """The word set of a parallelism as disjoint, sorted intervals."""
    merged: List[List[int]] = []
    for start, end in branches:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def _interval_overlap(a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    """a: [n, 2], b: [m, 2] (start, end) -> [n, m] number of shared positions."""
    lo = numpy.maximum(a[:, None, 0], b[None, :, 0])
    hi = numpy.minimum(a[:, None, 1], b[None, :, 1])
    return numpy.clip(hi - lo, 0, None)


def _flatten(groups: Sequence[Sequence[Branch]]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """RETURNS: intervals [n, 2] and, per interval, the index of its group [n]."""
    intervals = [b for group in groups for b in group]
    owner = [i for i, group in enumerate(groups) for _ in group]
    return numpy.asarray(intervals, dtype=numpy.int64).reshape(-1, 2), numpy.asarray(owner)


def _incidence(owner: numpy.ndarray, n_groups: int) -> numpy.ndarray:
    """[n_groups, n_items] 0/1 matrix: item j belongs to group owner[j]."""
    matrix = numpy.zeros((n_groups, len(owner)), dtype=numpy.int64)
    matrix[owner, numpy.arange(len(owner))] = 1
    return matrix


def _max_matching(weights: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Rows and columns of a maximum-weight matching of a (possibly rectangular) matrix."""
    if weights.size == 0:
        empty = numpy.zeros(0, dtype=numpy.int64)
        return empty, empty
    return linear_sum_assignment(weights, maximize=True)


def _branch_aware_overlap(overlap: numpy.ndarray) -> int:
    """MBAWO's phi from the [n_gold_branches, n_hyp_branches] word-overlap matrix."""
    if (overlap.any(1).sum() < 2) or (overlap.any(0).sum() < 2):
        return 0  # no matching can pair two branches that both share words
    # Maximise the overlap first and, among equal overlaps, the number of contributing
    # pairs, so that ties never hide a matching with >= 2 contributors.
    tie_break = min(overlap.shape) + 1
    rows, cols = _max_matching(overlap * tie_break + (overlap > 0))
    matched = overlap[rows, cols]
    return int(matched.sum()) if int((matched > 0).sum()) >= 2 else 0


def weight_matrices(gold: DocParallelisms, pred: DocParallelisms) -> Dict[str, numpy.ndarray]:
    """The phi matrix of every metric for one document.

    gold (DocParallelisms): the gold parallelisms, each a sequence of (start, end) branches.
    pred (DocParallelisms): the hypothesised parallelisms.
    RETURNS (Dict[str, numpy.ndarray]): per metric, an int matrix [len(gold), len(pred)].
    """
    gold_c, pred_c = _canonical(gold, "gold"), _canonical(pred, "predicted")
    n_gold, n_pred = len(gold_c), len(pred_c)
    if n_gold == 0 or n_pred == 0:
        return {metric: numpy.zeros((n_gold, n_pred), dtype=numpy.int64) for metric in METRICS}
    # EPM: identical branch sets
    ids: Dict[Tuple[Branch, ...], int] = {}
    gold_ids = numpy.asarray([ids.setdefault(p, len(ids)) for p in gold_c])
    pred_ids = numpy.asarray([ids.setdefault(p, len(ids)) for p in pred_c])
    epm = (gold_ids[:, None] == pred_ids[None, :]).astype(numpy.int64)
    # MPBM: shared exact branches, via branch incidence matrices [G, V] @ [V, H]
    vocab: Dict[Branch, int] = {}
    for p in gold_c + pred_c:
        for b in p:
            vocab.setdefault(b, len(vocab))
    gold_inc = numpy.zeros((n_gold, len(vocab)), dtype=numpy.int64)
    pred_inc = numpy.zeros((n_pred, len(vocab)), dtype=numpy.int64)
    for inc, parallelisms in ((gold_inc, gold_c), (pred_inc, pred_c)):
        for i, p in enumerate(parallelisms):
            inc[i, [vocab[b] for b in p]] = 1
    shared = gold_inc @ pred_inc.T  # [G, H]
    mpbm = numpy.where(shared >= 2, shared, 0)
    # MWO: word overlap of the merged word sets, summed from interval overlaps
    gold_words, gold_owner = _flatten([_merge(p) for p in gold_c])
    pred_words, pred_owner = _flatten([_merge(p) for p in pred_c])
    word_overlap = _interval_overlap(gold_words, pred_words)  # [n_gold_iv, n_pred_iv]
    mwo = _incidence(gold_owner, n_gold) @ word_overlap @ _incidence(pred_owner, n_pred).T
    # MBAWO: inner branch matching, only where the parallelisms share words at all
    gold_branches, gold_of = _flatten(gold_c)
    pred_branches, pred_of = _flatten(pred_c)
    branch_overlap = _interval_overlap(gold_branches, pred_branches)  # [n_gold_br, n_pred_br]
    mbawo = numpy.zeros((n_gold, n_pred), dtype=numpy.int64)
    for g, h in zip(*numpy.nonzero(mwo), strict=True):
        block = branch_overlap[numpy.ix_(gold_of == g, pred_of == h)]
        mbawo[g, h] = _branch_aware_overlap(block)
    return {"epm": epm, "mpbm": mpbm, "mbawo": mbawo, "mwo": mwo}


def _sizes(parallelisms: List[Tuple[Branch, ...]]) -> Dict[str, int]:
    n_words = sum(e - s for p in parallelisms for s, e in _merge(p))
    return {
        "epm": len(parallelisms),
        "mpbm": sum(len(p) for p in parallelisms),
        "mbawo": n_words,
        "mwo": n_words,
    }


def _evaluate_doc(
    gold: DocParallelisms, pred: DocParallelisms
) -> Tuple[Counts, List[Tuple[int, int]]]:
    """RETURNS: the counts of every metric and the (gold, pred) index pairs matched by EPM."""
    weights = weight_matrices(gold, pred)
    gold_sizes = _sizes(_canonical(gold, "gold"))
    pred_sizes = _sizes(_canonical(pred, "predicted"))
    counts = {}
    exact: List[Tuple[int, int]] = []
    for metric in METRICS:
        rows, cols = _max_matching(weights[metric])
        matched = weights[metric][rows, cols]
        counts[metric] = (int(matched.sum()), pred_sizes[metric], gold_sizes[metric])
        if metric == "epm":
            exact = [(int(g), int(h)) for g, h, w in zip(rows, cols, matched, strict=True) if w]
    return counts, exact


def match_counts(gold: DocParallelisms, pred: DocParallelisms) -> Counts:
    """The matching weight and the two sizes of every metric for one document.

    gold (DocParallelisms): the gold parallelisms, each a sequence of (start, end) branches.
    pred (DocParallelisms): the hypothesised parallelisms.
    RETURNS (Dict[str, Tuple[int, int, int]]): per metric, (m, size(pred), size(gold)).
    """
    return _evaluate_doc(gold, pred)[0]


def _prf(m: int, n_pred: int, n_gold: int) -> Tuple[float, float, float]:
    """P, R and F1 (0.0 where undefined) of ``m`` matches among ``n_pred`` predicted
    and ``n_gold`` gold items, through spaCy's PRFScore."""
    score = PRFScore(tp=m, fp=n_pred - m, fn=n_gold - m)
    return score.precision, score.recall, score.fscore


def _finalize(totals: Dict[str, List[int]], prefix: str = "") -> Dict[str, float]:
    scores = {}
    for metric in METRICS:
        for part, value in zip("prf", _prf(*totals[metric]), strict=True):
            scores[f"{prefix}{metric}_{part}"] = value
    return scores


def _accumulate(totals: Dict[str, List[int]], counts: Counts) -> None:
    for metric, values in counts.items():
        for i, value in enumerate(values):
            totals[metric][i] += value


def score_parallelism_sets(
    pairs: Iterable[Tuple[DocParallelisms, DocParallelisms]],
) -> Dict[str, float]:
    """Micro-averaged EPM, MPBM, MBAWO and MWO over documents.

    pairs (Iterable[Tuple[DocParallelisms, DocParallelisms]]): per document, the gold and
        the predicted parallelisms, each a sequence of (start, end) branch offsets.
    RETURNS (Dict[str, float]): ``epm_p``, ``epm_r``, ``epm_f``, ..., ``mwo_f``.
    """
    totals = {metric: [0, 0, 0] for metric in METRICS}
    for gold, pred in pairs:
        _accumulate(totals, match_counts(gold, pred))
    return _finalize(totals)


def _offsets_in(parallelism: Parallelism, doc: Doc) -> List[Branch]:
    """Branch offsets of a parallelism in the tokenization of ``doc`` (via characters)."""
    if parallelism.branches[0].doc is doc:
        return list(parallelism.offsets)
    offsets = []
    for span in parallelism.branches:
        mapped = doc.char_span(span.start_char, span.end_char, alignment_mode="expand")
        if mapped is None or len(mapped) == 0:
            raise ValueError(
                f"score_parallelism: branch {span.text!r} ({span.start_char}-{span.end_char}) "
                "cannot be aligned to the predicted doc; the texts differ"
            )
        offsets.append((mapped.start, mapped.end))
    return offsets


def score_parallelism(
    examples: Iterable[Example],
    spans_key: str = DEFAULT_SPANS_KEY,
    max_stratum: int | None = None,
    **kwargs: Any,
) -> Dict[str, float]:
    """Score predicted parallelisms against the reference with the four bipartite
    parallelism metrics, pooling the strata (up to ``max_stratum``) of each doc.

    examples (Iterable[Example]): examples with parallelisms in ``spans_key`` on both docs.
    spans_key (str): the span group holding the branches.
    max_stratum (Optional[int]): pool only strata 1..max_stratum (None: all), like the
        paper's "stratum count".
    RETURNS (Dict[str, float]): ``parallelism_{epm,mpbm,mbawo,mwo}_{p,r,f}``;
        ``parallelism_s{k}_{metric}_{p,r,f}`` per stratum k seen in either doc;
        ``parallelism_type_acc``: label (synchystic/chiastic) accuracy over the EPM-matched
        pairs, 0.0 when nothing matched; ``parallelism_type_n``: the number of those
        pairs, ``parallelism_type_n_chiastic``: how many of them are chiastic in the gold;
        ``parallelism_corpus_{name}_epm_f``: EPM F1 per named corpus (the reference docs'
        ``user_data["corpus"]``, set by ``read_docbins`` from a directory's file names) and
        ``parallelism_epm_f_macro`` the mean over corpora (unnamed docs form one; equal to
        ``parallelism_epm_f`` on one corpus), for model selection on several datasets.
    """
    totals = {metric: [0, 0, 0] for metric in METRICS}
    per_corpus: Dict[str, Dict[str, List[int]]] = {}
    by_stratum: Dict[int, Dict[str, List[int]]] = {}
    n_matched = n_same_type = n_chiastic = 0
    for eg in examples:
        gold = get_parallelisms(eg.reference, spans_key)
        pred = get_parallelisms(eg.predicted, spans_key)
        if max_stratum is not None:
            gold = [p for p in gold if p.stratum <= max_stratum]
            pred = [p for p in pred if p.stratum <= max_stratum]
        gold_offsets = [_offsets_in(p, eg.predicted) for p in gold]
        pred_offsets = [list(p.offsets) for p in pred]
        counts, exact = _evaluate_doc(gold_offsets, pred_offsets)
        _accumulate(totals, counts)
        corpus = str(eg.reference.user_data.get("corpus", ""))
        _accumulate(per_corpus.setdefault(corpus, {m: [0, 0, 0] for m in METRICS}), counts)
        n_matched += len(exact)
        n_same_type += sum(gold[g].label == pred[h].label for g, h in exact)
        n_chiastic += sum(gold[g].label == CHIASTIC for g, _ in exact)
        strata = {p.stratum for p in gold} | {p.stratum for p in pred}
        for stratum in strata:
            if len(strata) > 1:
                counts = match_counts(
                    [o for o, p in zip(gold_offsets, gold, strict=True) if p.stratum == stratum],
                    [o for o, p in zip(pred_offsets, pred, strict=True) if p.stratum == stratum],
                )
            _accumulate(by_stratum.setdefault(stratum, {m: [0, 0, 0] for m in METRICS}), counts)
    scores = {f"parallelism_{k}": v for k, v in _finalize(totals).items()}
    for stratum in sorted(by_stratum):
        scores.update(_finalize(by_stratum[stratum], f"parallelism_s{stratum}_"))
    scores["parallelism_type_acc"] = n_same_type / n_matched if n_matched else 0.0
    scores["parallelism_type_n"] = float(n_matched)
    scores["parallelism_type_n_chiastic"] = float(n_chiastic)
    by_corpus = {name: _finalize(per_corpus[name])["epm_f"] for name in sorted(per_corpus)}
    for name, value in by_corpus.items():
        if name:
            scores[f"parallelism_corpus_{name}_epm_f"] = value
    scores["parallelism_epm_f_macro"] = (
        sum(by_corpus.values()) / len(by_corpus) if by_corpus else scores["parallelism_epm_f"]
    )
    return scores


def score_types(pairs: Iterable[Tuple[str, str]]) -> Dict[str, float]:
    """Score synchystic/chiastic typing of parallelisms, e.g. of the gold parallelisms
    (so that typing is measured apart from span detection).

    pairs (Iterable[Tuple[str, str]]): (gold label, predicted label) per parallelism.
    RETURNS (Dict[str, float]): n, n_chiastic (gold), accuracy, majority (the accuracy of
        always answering the more frequent gold label), and chiastic_p/_r/_f (0.0 when
        undefined).
    """
    pairs = list(pairs)
    n = len(pairs)
    n_chiastic = sum(gold == CHIASTIC for gold, _ in pairs)
    n_predicted = sum(pred == CHIASTIC for _, pred in pairs)
    tp = sum(gold == CHIASTIC and pred == CHIASTIC for gold, pred in pairs)
    p, r, f = _prf(tp, n_predicted, n_chiastic)
    return {
        "n": float(n),
        "n_chiastic": float(n_chiastic),
        "accuracy": sum(gold == pred for gold, pred in pairs) / n if n else 0.0,
        "majority": max(n_chiastic, n - n_chiastic) / n if n else 0.0,
        "chiastic_p": p,
        "chiastic_r": r,
        "chiastic_f": f,
    }


@registry.scorers("spacy-rhetoric.parallelism_scorer.v1")
def make_parallelism_scorer() -> Callable[..., Dict[str, float]]:
    """RETURNS (Callable): the parallelism scorer, ``score_parallelism``."""
    return score_parallelism
