"""The scores of parallelisms on their span groups, and the extensions that read them.

A group of parallelisms (the report or the review list) keeps its scores in its
``attrs`` ("parallelism_scores": {id: score}, "parallelism_branch_scores": {id: [[start,
end, score], ...]}), so they survive DocBin round trips; ``span._.parallelism_score``
(the calibrated probability that the branch's parallelism is exactly right) and
``span._.parallelism_branch_score`` (that the branch itself is) read them back (None for
a span no tagger scored). How the scores are made and calibrated: see confidence.py.
"""

from typing import List, Optional, Sequence, Tuple

from spacy.tokens import Span, SpanGroup

SCORES_ATTR = "parallelism_scores"
BRANCH_SCORES_ATTR = "parallelism_branch_scores"
SOURCES_ATTR = "parallelism_sources"
# how many decoded parallelisms a group lacks because their branches only name or
# address people (``reading.drop_name_lists``)
NAME_LISTS_ATTR = "parallelism_name_lists_dropped"


def write_scores(
    group: SpanGroup,
    ids: Sequence[str],
    offsets: Sequence[Sequence[Tuple[int, int]]],
    scores: Sequence[Tuple[float, List[float]]],
) -> None:
    """Keep the scores of a group's parallelisms and branches in its attrs."""
    group.attrs[SCORES_ATTR] = {
        pid: float(f"{score:.6g}") for pid, (score, _) in zip(ids, scores, strict=True)
    }
    group.attrs[BRANCH_SCORES_ATTR] = {
        pid: [[a, b, float(f"{value:.6g}")] for (a, b), value in zip(branches, values, strict=True)]
        for pid, branches, (_, values) in zip(ids, offsets, scores, strict=True)
    }


def _own_branch(span: Span) -> Optional[Tuple[SpanGroup, float]]:
    """The group that scored this branch, and the branch's score."""
    for group in span.doc.spans.values():
        branches = group.attrs.get(BRANCH_SCORES_ATTR)
        if not branches or span.id_ not in branches:
            continue
        for start, end, value in branches[span.id_]:
            if (start, end) == (span.start, span.end):
                return group, float(value)
    return None


def _span_parallelism_score(span: Span) -> Optional[float]:
    found = _own_branch(span)
    return float(found[0].attrs[SCORES_ATTR][span.id_]) if found is not None else None


def _span_branch_score(span: Span) -> Optional[float]:
    found = _own_branch(span)
    return found[1] if found is not None else None


def register_parallelism_extensions() -> None:
    """Register ``span._.parallelism_score`` (the calibrated probability that the
    branch's parallelism is exactly right; None for a span no tagger scored) and
    ``span._.parallelism_branch_score`` (that the branch itself is) (idempotent)."""
    for name, getter in (
        ("parallelism_score", _span_parallelism_score),
        ("parallelism_branch_score", _span_branch_score),
    ):
        if not Span.has_extension(name):
            Span.set_extension(name, getter=getter)
