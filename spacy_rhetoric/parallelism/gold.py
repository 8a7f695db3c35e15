"""What ``parallelism_tagger`` learns from: an example's gold parallelisms as tag rows
(one per stratum, in the tagger's tag scheme) and, where a linker predicts the links,
as branches with their antecedents.

Gold parallelisms are read on the predicted doc's tokens: where the tokenizations
differ, branches are projected through the alignment, and a parallelism with a branch
that does not align, or on a stratum deeper than the tagger predicts, is left out.
"""

from typing import Dict, List, Sequence, Tuple

import numpy
from spacy.training import Example

from ..corpora.parallelisms import get_parallelisms
from .linker import Branch
from .tag_codec import encode_strata
from .tags import TagScheme, split_link

Item = Tuple[Tuple[Tuple[int, int], ...], int]  # branch offsets, stratum


def gold_items(example: Example, spans_key: str, n_strata: int) -> List[Item]:
    """The gold parallelisms of an example as (branch offsets, stratum), on the
    predicted doc's tokens.

    example (Example): the example.
    spans_key (str): the doc.spans key of the gold parallelisms.
    n_strata (int): the strata the tagger predicts (deeper ones are left out).
    """
    predicted, reference = example.predicted, example.reference
    same_tokens = len(predicted) == len(reference) and all(
        a.text == b.text for a, b in zip(predicted, reference)
    )
    items = []
    for parallelism in get_parallelisms(reference, spans_key):
        if parallelism.stratum > n_strata:
            continue  # deeper than the strata this tagger predicts
        if same_tokens:
            items.append((parallelism.offsets, parallelism.stratum))
            continue
        aligned = example.get_aligned_spans_y2x(parallelism.branches, allow_overlap=True)
        if len(aligned) == len(parallelism.branches):
            offsets = tuple((span.start, span.end) for span in aligned)
            items.append((offsets, parallelism.stratum))
    return items


def gold_tags(
    items: Sequence[Item], n_tokens: int, scheme: TagScheme, n_strata: int, pairwise: bool
) -> List[List[str]]:
    """The gold tag rows (one per stratum) of an example's ``gold_items``; link-free
    structure tags when links are predicted pairwise."""
    rows = encode_strata(items, n_tokens, scheme, n_strata)
    if pairwise:
        rows = [[split_link(tag)[0] for tag in row] for row in rows]
    return rows


def gold_branches(items: Sequence[Item], n_strata: int) -> List[List[Branch]]:
    """Per stratum, the gold branches in order with their antecedent's index.

    items (Sequence): an example's ``gold_items``.
    """
    rows: List[List[Tuple[int, int, int]]] = [[] for _ in range(n_strata)]
    for n, (offsets, stratum) in enumerate(items):
        rows[stratum - 1].extend((start, end, n) for start, end in offsets)
    branches = []
    for row in rows:
        row.sort()
        last_of: Dict[int, int] = {}
        ordered = []
        for i, (start, end, group) in enumerate(row):
            antecedent = last_of.get(group, -1)
            ordered.append((start, end, antecedent >= 0, antecedent))
            last_of[group] = i
        branches.append(ordered)
    return branches


def gold_matrix(
    examples: Sequence[Example],
    items: Sequence[Sequence[Item]],
    labels: Sequence[str],
    scheme: TagScheme,
    n_strata: int,
    pairwise: bool,
    name: str,
) -> numpy.ndarray:
    """The gold tags of a batch as label indices (strata x examples x longest doc).

    name (str): the component's name, for the error on a tag outside ``labels``.
    """
    index = {label: i for i, label in enumerate(labels)}
    width = max(len(eg.predicted) for eg in examples)
    gold = numpy.zeros((n_strata, len(examples), width), dtype="int64")
    for b, (eg, example_items) in enumerate(zip(examples, items)):
        rows = gold_tags(example_items, len(eg.predicted), scheme, n_strata, pairwise)
        for s, row in enumerate(rows):
            try:
                gold[s, b, : len(row)] = [index[tag] for tag in row]
            except KeyError as err:
                raise ValueError(
                    f"{name}: gold tag {err} is not in the tag vocabulary; "
                    "initialize the component on data that contains it."
                ) from None
    return gold
