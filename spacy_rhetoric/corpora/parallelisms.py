"""The parallelism data model on a Doc: what the dataset readers write and the
parallelism_tagger predicts.

A parallelism is a set of >= 2 non-overlapping branch spans. All branches live in
one SpanGroup (default key "parallelism"); branches of one parallelism share
``span.id_`` and ``span.label_`` (the parallelism type: "synchystic", "chiastic"
or the untyped "parallelism"). Strata (nesting depth, 1 = outermost) are stored
explicitly in ``SpanGroup.attrs["strata"]`` ({id_: stratum}) so that they survive
DocBin round-trips; where a group carries no strata, they are derived by layering
(see ``assign_strata``).
"""

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span

DEFAULT_SPANS_KEY = "parallelism"
UNTYPED = "parallelism"
SYNCHYSTIC = "synchystic"
CHIASTIC = "chiastic"
STRATA_ATTR = "strata"


@dataclass(frozen=True)
class Parallelism:
    """A parallelism: its branches (sorted by start), its identifier, type and stratum."""

    branches: Tuple[Span, ...]
    id: str
    label: str = UNTYPED
    stratum: int = 1

    def __len__(self) -> int:
        return len(self.branches)

    @property
    def offsets(self) -> Tuple[Tuple[int, int], ...]:
        """RETURNS (Tuple[Tuple[int, int], ...]): the (start, end) token offsets of the branches."""
        return tuple((span.start, span.end) for span in self.branches)


def assign_strata(groups: Sequence[Sequence[Tuple[int, int]]]) -> List[int]:
    """Assign a stratum to each parallelism so that the branches within one stratum
    never overlap. Parallelisms are placed in order of their widest extent first
    (outer before inner) into the lowest stratum that has room.

    groups (Sequence[Sequence[Tuple[int, int]]]): (start, end) offsets per parallelism.
    RETURNS (List[int]): the stratum (1-based) of each parallelism.
    """
    order = sorted(
        range(len(groups)),
        key=lambda i: (min(s for s, _ in groups[i]), -max(e for _, e in groups[i])),
    )
    occupied: List[List[Tuple[int, int]]] = []
    strata = [0] * len(groups)
    for i in order:
        for depth, taken in enumerate(occupied):
            if not any(s < e2 and s2 < e for s, e in groups[i] for s2, e2 in taken):
                taken.extend(groups[i])
                strata[i] = depth + 1
                break
        else:
            occupied.append(list(groups[i]))
            strata[i] = len(occupied)
    return strata


def get_parallelisms(doc: Doc, spans_key: str = DEFAULT_SPANS_KEY) -> List[Parallelism]:
    """Rebuild the parallelisms of a doc from its span group.

    doc (Doc): the doc.
    spans_key (str): the span group holding the branches.
    RETURNS (List[Parallelism]): parallelisms sorted by their first branch.
    """
    if spans_key not in doc.spans:
        return []
    group = doc.spans[spans_key]
    by_id: Dict[str, List[Span]] = {}
    for span in group:
        by_id.setdefault(span.id_, []).append(span)
    ids = list(by_id)
    branches = [tuple(sorted(by_id[i], key=lambda s: (s.start, s.end))) for i in ids]
    strata_attr = group.attrs.get(STRATA_ATTR)
    if strata_attr is not None and all(i in strata_attr for i in ids):
        strata = [int(strata_attr[i]) for i in ids]
    else:
        strata = assign_strata([[(s.start, s.end) for s in b] for b in branches])
    result = [
        Parallelism(branches=b, id=i, label=b[0].label_, stratum=st)
        for i, b, st in zip(ids, branches, strata)
    ]
    result.sort(key=lambda p: (p.branches[0].start, p.branches[0].end, p.stratum))
    return result


def set_parallelisms(
    doc: Doc,
    parallelisms: Iterable[Tuple[Sequence[Tuple[int, int]], str, Optional[int]]],
    spans_key: str = DEFAULT_SPANS_KEY,
) -> None:
    """Write parallelisms to ``doc.spans[spans_key]``, numbering them 1, 2, ...

    doc (Doc): the doc.
    parallelisms (Iterable[Tuple[Sequence[Tuple[int, int]], str, Optional[int]]]):
        per parallelism, its branches as (start, end) token offsets, its label and
        its stratum (None: derive by layering).
    spans_key (str): the span group to write.
    """
    spans: List[Span] = []
    items = list(parallelisms)
    given = [st for _, _, st in items]
    derived = assign_strata([list(offsets) for offsets, _, _ in items])
    strata: Dict[str, int] = {}
    for n, ((offsets, label, _), st, alt) in enumerate(zip(items, given, derived), 1):
        pid = str(n)
        for start, end in sorted(offsets):
            spans.append(Span(doc, start, end, label=label, span_id=pid))
        strata[pid] = int(st) if st is not None else alt
    doc.spans[spans_key] = spans
    doc.spans[spans_key].attrs[STRATA_ATTR] = strata
