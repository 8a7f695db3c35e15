"""Figure findings matched against a reference: the metric of the rhetoric corpus, for
models and annotators alike.

A finding is a label and its **support units**: the support words (the repeated,
linking, opposed or alliterating words; one unit per bracket of the hand annotation) or,
where a finding has none (asyndeton, a rhetorical question), its members. Two findings
**match** when they have the same label and at least ``min(2, |a|, |b|)`` units of the
reference finding overlap a unit of the other (by characters): the repeated word of an
anaphora found in two of its members, a rhetorical question whose span overlaps the
reference's. Within a document findings are matched one to one (the largest matching), and
counts are micro-averaged: P = matched / predicted, R = matched / reference.
"""

from typing import Dict, Iterable, List, Mapping, Sequence, Tuple

import numpy
from scipy.optimize import linear_sum_assignment
from spacy.scorer import PRFScore

Range = Tuple[int, int]
Finding = Tuple[str, Sequence[Range]]

# the families of the handbook figures (the handbooks' order; the figures gold set's
# families, ``training_data.FAMILIES``)
HANDBOOK_FAMILIES: Dict[str, Tuple[str, ...]] = {
    "edges": ("anaphora", "epiphora", "symploce"),
    "linking": ("anadiplosis", "gradatio"),
    "in place": ("epizeuxis", "ploce", "polyptoton"),
    "conjunction": ("polysyndeton", "asyndeton"),
    "sound": ("alliteration",),
    "inversion": ("antimetabole",),
}
# the corpus's families: chiasmus with the inversions, antithesis and questions as
# figures of thought
FAMILIES: Dict[str, Tuple[str, ...]] = {
    **HANDBOOK_FAMILIES,
    "inversion": ("antimetabole", "chiasmus"),
    "thought": ("antithesis", "rhetorical_question"),
}
FAMILY_OF = {figure: family for family, figures in FAMILIES.items() for figure in figures}


def support_units(item: Mapping[str, Sequence[Sequence[int]]]) -> List[Range]:
    """RETURNS (List[Range]): a corpus record's support ranges, or its members where it
    has no support."""
    units = item.get("support") or item.get("members") or []
    return [(int(s), int(e)) for s, e in units]


def _overlap(a: Range, b: Range) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def shared_units(reference: Sequence[Range], other: Sequence[Range]) -> int:
    """RETURNS (int): how many units of ``reference`` overlap a unit of ``other``."""
    return sum(any(_overlap(r, o) for o in other) for r in reference)


def is_match(reference: Finding, other: Finding) -> bool:
    """Whether two findings match (see the module docstring)."""
    if reference[0] != other[0] or not reference[1] or not other[1]:
        return False
    need = min(2, len(reference[1]), len(other[1]))
    return shared_units(reference[1], other[1]) >= need


def match_findings(
    reference: Sequence[Finding], predicted: Sequence[Finding]
) -> List[Tuple[int, int]]:
    """The largest one-to-one matching of the findings of one document (among the
    largest, the one sharing the most units), by ``scipy.optimize.linear_sum_assignment``.

    RETURNS (List[Tuple[int, int]]): (reference index, predicted index) per matched pair.
    """
    if not reference or not predicted:
        return []
    weights = numpy.zeros((len(reference), len(predicted)))
    # a match counts 1; the shared units only break ties (their bonuses sum to under 1)
    scale = 1.0 / (min(len(reference), len(predicted)) + 1)
    for i, ref in enumerate(reference):
        for j, pred in enumerate(predicted):
            if is_match(ref, pred):
                weights[i, j] = 1.0 + scale * shared_units(ref[1], pred[1]) / len(ref[1])
    rows, cols = linear_sum_assignment(weights, maximize=True)
    return [(int(i), int(j)) for i, j in zip(rows, cols) if weights[i, j] > 0]


def count_findings(
    documents: Iterable[Tuple[Sequence[Finding], Sequence[Finding]]],
) -> Dict[str, List[int]]:
    """Per label, [matched, predicted, reference] over documents.

    documents (Iterable[Tuple[Sequence[Finding], Sequence[Finding]]]): per document, the
        reference findings and the predicted ones.
    """
    counts: Dict[str, List[int]] = {}
    for reference, predicted in documents:
        for label, _ in list(reference) + list(predicted):
            counts.setdefault(label, [0, 0, 0])
        for label, _ in predicted:
            counts[label][1] += 1
        for label, _ in reference:
            counts[label][2] += 1
        for i, _ in match_findings(reference, predicted):
            counts[reference[i][0]][0] += 1
    return counts


def prf(matched: int, predicted: int, reference: int) -> Dict[str, float]:
    """RETURNS (Dict[str, float]): p, r, f (0.0 where undefined) and the three counts."""
    score = PRFScore(tp=matched, fp=predicted - matched, fn=reference - matched)
    return {"p": score.precision, "r": score.recall, "f": score.fscore,
            "matched": matched, "predicted": predicted, "reference": reference}  # fmt: skip


def score_findings(counts: Mapping[str, Sequence[int]]) -> Dict[str, Dict[str, Dict[str, float]]]:
    """Per label, per family and over all labels (micro): P, R, F1 and counts.

    counts (Mapping[str, Sequence[int]]): ``count_findings``'s result.
    RETURNS: {"figures": {label: ...}, "families": {family: ...}, "all": {...}}.
    """
    figures = {label: prf(*values) for label, values in sorted(counts.items())}
    families = {}
    for family, labels in FAMILIES.items():
        totals = [sum(counts.get(label, (0, 0, 0))[k] for label in labels) for k in range(3)]
        if any(totals):
            families[family] = prf(*totals)
    totals = [sum(values[k] for values in counts.values()) for k in range(3)]
    return {"figures": figures, "families": families, "all": prf(*totals)}
