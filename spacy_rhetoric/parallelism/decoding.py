"""The decoder of ``parallelism_tagger``: from the head's output on a batch of docs to
each doc's tag rows (one per stratum), with the evidence of every decoded branch and
the review decode's finds (see confidence.py).

Each doc is respelled as the head reads it and cut into windows (see windows.py); the
windows go through the head in batches of at most ``batch_tokens`` padded tokens. A
doc read in one window keeps the window's tags; otherwise each window gives the
parallelisms whose middle lies in its core, and the doc's rows are encoded again from
them. With pairwise links the linker's choices are written into the tags
(``join_links``).
"""

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from spacy.tokens import Doc
from thinc.api import Model

from .confidence import BranchEvidence, evidence_for
from .linker import (
    KIND_END,
    KIND_FIRST,
    KIND_INSIDE,
    KIND_LATER,
    KIND_OUTSIDE,
    Branch,
    read_branches,
)
from .reading import respelled
from .tag_codec import decode_strata, encode_strata
from .tags import BEGIN, END, LINKED_BEGIN, TagScheme, join_link, parse_tag
from .windows import doc_windows, owned, token_batches, window_doc, without_clashes

Evidence = Dict[int, List[Tuple[int, int, BranchEvidence]]]


class TagRows(list):
    """One doc's predicted tag rows (one per stratum), with what the decode knows
    beyond the tags: the evidence of each decoded branch and the review decode's finds.

    rows (Iterable[List[str]]): per stratum, one tag per token.
    evidence (Dict[int, List]): per stratum, (start, end, evidence) per decoded branch
        (see confidence.py).
    review (List): (branch offsets, stratum, evidence per branch) per parallelism of the
        review decode.
    """

    def __init__(
        self,
        rows: Iterable[List[str]] = (),
        evidence: Optional[Evidence] = None,
        review: Optional[List[Tuple[Tuple[Tuple[int, int], ...], int, List]]] = None,
    ) -> None:
        super().__init__(rows)
        self.evidence = evidence if evidence is not None else {}
        self.review = review if review is not None else []


def label_kinds(labels: Sequence[str]) -> List[int]:
    """The branch kind (linker.KIND_*) each tag of the vocabulary stands for."""
    kinds = []
    for label in labels:
        prefix = label if label == LINKED_BEGIN else parse_tag(label)[0]
        if prefix == BEGIN:
            kinds.append(KIND_FIRST)
        elif prefix == LINKED_BEGIN:
            kinds.append(KIND_LATER)
        elif prefix == END:
            kinds.append(KIND_END)
        elif prefix in ("I", "J"):
            kinds.append(KIND_INSIDE)
        else:
            kinds.append(KIND_OUTSIDE)
    return kinds


def join_links(tags: List[str], branches: Sequence[Branch], link: str) -> List[str]:
    """Write the linker's antecedents into structure tags as concrete links; a
    later branch without antecedent becomes a first branch.

    link (str): "branch" (branch distance) or "token" (token distance) links.
    """
    tags = list(tags)
    for i, (start, _, later, antecedent) in enumerate(branches):
        if not later:
            continue
        if antecedent < 0:
            tags[start] = BEGIN
        elif link == "branch":
            tags[start] = join_link(LINKED_BEGIN, i - antecedent)
        else:
            tags[start] = join_link(LINKED_BEGIN, start - (branches[antecedent][1] - 1))
    return tags


class Decoder:
    """Decode a tagger's head on docs.

    model (Model): the tagger's model (with its head built).
    labels (Sequence[str]): the tag vocabulary.
    scheme (TagScheme): the tag scheme.
    n_strata (int): the strata the head predicts.
    pairwise (bool): whether a linker predicts the links (else they are in the tags).
    spelling (str): how the head reads words (see reading.SPELLINGS).
    window (int), overlap (int): the windows over a long doc (see windows.py).
    batch_tokens (int): padded tokens per batch of windows.
    """

    def __init__(
        self,
        model: Model,
        labels: Sequence[str],
        scheme: TagScheme,
        *,
        n_strata: int,
        pairwise: bool,
        spelling: str,
        window: int,
        overlap: int,
        batch_tokens: int,
    ) -> None:
        self.model = model
        self.labels = tuple(labels)
        self.scheme = scheme
        self.n_strata = n_strata
        self.pairwise = pairwise
        self.spelling = spelling
        self.window = window
        self.overlap = overlap
        self.batch_tokens = batch_tokens

    def __call__(self, docs: Sequence[Doc], options: Dict[str, Any]) -> List[TagRows]:
        """Decode the docs.

        docs (Sequence[Doc]): the docs.
        options (Dict[str, Any]): the head's decode options (outside penalty,
            confidence, review penalties).
        RETURNS (List[TagRows]): per doc, per stratum, one concrete tag per token.
        """
        rows: List[TagRows] = [TagRows([[] for _ in range(self.n_strata)]) for _ in docs]
        # what the head reads: each doc respelled, a long one cut into windows
        pieces: List[Tuple[int, Tuple[int, int, int, int], Doc]] = []
        for i, doc in enumerate(docs):
            if not len(doc):
                continue
            doc = respelled(doc, self.spelling)
            for window in doc_windows(doc, self.window, self.overlap):
                pieces.append((i, window, window_doc(doc, window)))
        if not pieces:
            return rows
        piece_rows: List[List[List[str]]] = [[] for _ in pieces]
        for batch in token_batches([len(piece[2]) for piece in pieces], self.batch_tokens):
            output = self.model.predict(([pieces[j][2] for j in batch], None, options))
            for b, j in enumerate(batch):
                i, window = pieces[j][:2]
                piece_rows[j] = self.piece_tags(output, b)
                # every window's branches: a parallelism kept from one window may have
                # a branch whose middle lies in the next one's core
                self.collect_evidence(rows[i].evidence, output, b, window[0])
                for found in output["review"]:
                    review_tags = self.piece_tags(found, b)
                    table: Evidence = {}
                    self.collect_evidence(table, found, b)
                    decoded = decode_strata(review_tags, self.scheme)
                    for offsets, stratum in owned(decoded, window):
                        shift = window[0]
                        evidence = [
                            evidence_for(table, stratum, a - shift, e - shift) for a, e in offsets
                        ]
                        rows[i].review.append((offsets, stratum, evidence))
        by_doc: Dict[int, List[int]] = {}
        for j, (i, _, _) in enumerate(pieces):
            by_doc.setdefault(i, []).append(j)
        for i, js in by_doc.items():
            if len(js) == 1 and pieces[js[0]][1][:2] == (0, len(docs[i])):
                rows[i][:] = piece_rows[js[0]]
                continue
            found = [
                item
                for j in js
                for item in owned(decode_strata(piece_rows[j], self.scheme), pieces[j][1])
            ]
            found.sort(key=lambda item: (item[0][0], item[1]))
            rows[i][:] = encode_strata(
                without_clashes(found), len(docs[i]), self.scheme, self.n_strata
            )
        return rows

    def piece_tags(self, output: Dict[str, Any], b: int) -> List[List[str]]:
        """The tag rows of the ``b``-th doc of a batch's decode (per stratum)."""
        tags_by_stratum = []
        for stratum, stratum_paths in enumerate(output["paths"]):
            tags = [self.labels[label] for label in stratum_paths[b]]
            if self.pairwise:
                tags = join_links(tags, output["branches"][stratum][b], self.scheme.link)
            tags_by_stratum.append(tags)
        return tags_by_stratum

    def collect_evidence(
        self,
        table: Evidence,
        output: Dict[str, Any],
        b: int,
        shift: int = 0,
        core: Optional[Tuple[int, int]] = None,
    ) -> None:
        """Add the evidence of the ``b``-th doc's decoded branches to ``table`` (per
        stratum, moved by ``shift``); with a window's ``core`` (doc offsets), only the
        branches whose middle lies in it (the window that keeps their parallelism)."""
        kinds = self.model.attrs["label_kinds"]
        for stratum, evidence in enumerate(output["confidence"]):
            if self.pairwise:
                branches = output["branches"][stratum][b]
            else:
                branches = read_branches(output["paths"][stratum][b], kinds)
            for (start, end, _, _), found in zip(branches, evidence[b], strict=True):
                middle = shift + (start + end - 1) / 2
                if core is not None and not core[0] <= middle < core[1]:
                    continue
                table.setdefault(stratum + 1, []).append((start + shift, end + shift, found))
