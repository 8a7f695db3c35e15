"""The review list of ``parallelism_tagger``: parallelisms that a decode pushed toward
recall finds and the report lacks, best first.

The candidates are the review decode's parallelisms (tidied as the report is) and every
pair of consecutive branches of a parallelism of three or more, reported or not (a
"split"); a candidate the report already holds, or whose branches only name or address
people, is left out. Each is scored as the report is (see confidence.py); those scoring
at least the calibration's ``review_min_score`` are kept, at most ``review_per_1000``
per 1,000 tokens, with ids "c1", "c2", ... in their order.
"""

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span, SpanGroup

from ..corpora.parallelisms import STRATA_ATTR
from .confidence import BranchEvidence, evidence_for, review_bound, score_parallelisms
from .reading import drop_name_lists, tidy_branches
from .scores import NAME_LISTS_ATTR, SOURCES_ATTR, write_scores

CANDIDATE_PREFIX = "c"

Found = Tuple[Tuple[Tuple[int, int], ...], int, List[BranchEvidence]]


def review_group(
    doc: Doc,
    name: str,
    review: Sequence[Found],
    reported: List[Found],
    calibration: Optional[Dict[str, Any]],
    min_score: float,
    *,
    min_word_share: float,
    per_1000: Optional[float],
    type_parallelisms: Callable[[Doc, List], List[str]],
) -> SpanGroup:
    """The review list of a doc as a span group.

    doc (Doc): the doc.
    name (str): the group's name (the doc.spans key it goes to).
    review (Sequence): the review decode's (branch offsets, stratum, evidence per
        branch) per parallelism.
    reported (List): the same for the parallelisms reported.
    calibration (Optional[Dict[str, Any]]): the tagger's calibration.
    min_score (float): the lowest score kept.
    min_word_share (float): the tagger's branch filter (see reading.tidy_branches).
    per_1000 (Optional[float]): at most this many candidates per 1,000 tokens.
    type_parallelisms (Callable): labels the candidates kept (the tagger's typer).
    RETURNS (SpanGroup): the candidates, best first.
    """
    seen = {offsets for offsets, _, _ in reported}
    candidates: List[Tuple[Tuple[Tuple[int, int], ...], int, List, str]] = []
    pool = list(reported)

    def add(offsets, stratum, evidence, source) -> None:
        if offsets not in seen:
            seen.add(offsets)
            candidates.append((offsets, stratum, evidence, source))

    for offsets, stratum, evidence in review:
        table = {stratum: [(a, b, e) for (a, b), e in zip(offsets, evidence, strict=True)]}
        for tidied, _ in tidy_branches(doc, [(offsets, stratum)], min_word_share):
            tidied = tuple(tidied)
            found = [evidence_for(table, stratum, a, b) for a, b in tidied]
            pool.append((tidied, stratum, found))
            add(tidied, stratum, found, "decode")
    for offsets, stratum, evidence in pool:
        if len(offsets) < 3:
            continue
        for k in range(len(offsets) - 1):
            first = (*evidence[k][:2], None)  # its link leads outside the pair
            add(offsets[k : k + 2], stratum, [first, evidence[k + 1]], "split")
    candidates, name_lists = drop_name_lists(doc, candidates)
    scores = [
        score_parallelisms([(offsets, evidence)], calibration, source)[0]
        for offsets, _, evidence, source in candidates
    ]
    order = sorted(range(len(candidates)), key=lambda n: (-scores[n][0], candidates[n][0]))
    order = [n for n in order if scores[n][0] >= min_score]
    bound = review_bound(len(doc), per_1000)
    if bound is not None:
        order = order[:bound]
    offsets = [candidates[n][0] for n in order]
    labels = type_parallelisms(doc, offsets)
    ids = [f"{CANDIDATE_PREFIX}{rank}" for rank in range(1, len(order) + 1)]
    spans = [
        Span(doc, a, b, label=label, span_id=pid)
        for branches, label, pid in zip(offsets, labels, ids, strict=True)
        for a, b in branches
    ]
    group = SpanGroup(doc, name=name, spans=spans)
    group.attrs[STRATA_ATTR] = {pid: candidates[n][1] for pid, n in zip(ids, order)}
    group.attrs[SOURCES_ATTR] = {pid: candidates[n][3] for pid, n in zip(ids, order)}
    group.attrs[NAME_LISTS_ATTR] = name_lists
    write_scores(group, ids, offsets, [scores[n] for n in order])
    return group
