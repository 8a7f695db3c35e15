"""The torch part of the parallelism tagger: an optional BiLSTM encoder, optional
self-attention, one linear emission layer and one constrained CRF per stratum, and
optionally a pairwise branch linker; and an ensemble of such networks decoded together."""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy
import torch
from torch import nn

from .crf import ConstrainedCRF
from .linker import (
    KIND_END,
    KIND_FIRST,
    KIND_INSIDE,
    KIND_LATER,
    BranchLinker,
    TokenKeys,
    read_branches,
    scored_links,
)

Masks = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]


def _single_thread_after_fork() -> None:
    # A process forked after torch has started its OpenMP thread pool (as
    # nlp.pipe(n_process=2) does) hangs on its first parallel op. With one thread,
    # torch runs its ops inline and never enters the inherited pool.
    torch.set_num_threads(1)


os.register_at_fork(after_in_child=_single_thread_after_fork)


class ParallelismNetwork(nn.Module):
    """Token vectors -> per-stratum tag sequences (and branch links).

    n_input (int): width of the incoming token vectors.
    n_labels (int): number of tags (shared by all strata).
    n_strata (int): number of strata predicted, each with its own emission layer and CRF.
    constraints (Masks): allowed (start, transition, end) masks of the tagset.
    hidden (int): BiLSTM width per direction; 0 disables the encoder.
    depth (int): BiLSTM layers.
    dropout (float): dropout on the encoder input and output.
    attention_heads (int): heads of one residual self-attention layer over the
        encoder output (0: none). Lets every token see similar tokens far away.
    label_kinds (Optional[Sequence[int]]): with a linker, how each label opens,
        continues or closes a branch (see linker.py).
    linker_width (int): width of the pairwise branch linker (0: no linker; links are
        part of the tags).
    max_back (int): the linker's number of candidate antecedents.
    """

    def __init__(
        self,
        n_input: int,
        n_labels: int,
        n_strata: int,
        constraints: Masks,
        hidden: int = 128,
        depth: int = 1,
        dropout: float = 0.2,
        attention_heads: int = 0,
        label_kinds: Optional[Sequence[int]] = None,
        linker_width: int = 0,
        max_back: int = 8,
    ):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        if hidden > 0:
            self.encoder: Optional[nn.LSTM] = nn.LSTM(
                n_input, hidden, num_layers=depth, batch_first=True, bidirectional=True
            )
            n_encoded = 2 * hidden
        else:
            self.encoder = None
            n_encoded = n_input
        self.attention: Optional[nn.MultiheadAttention] = None
        if attention_heads > 0:
            self.attention = nn.MultiheadAttention(
                n_encoded, attention_heads, dropout=dropout, batch_first=True
            )
            self.attention_norm = nn.LayerNorm(n_encoded)
        start, trans, end = (
            torch.as_tensor(numpy.asarray(m), dtype=torch.bool) for m in constraints
        )
        self.emitters = nn.ModuleList(nn.Linear(n_encoded, n_labels) for _ in range(n_strata))
        self.crfs = nn.ModuleList(
            ConstrainedCRF(n_labels, start_mask=start, trans_mask=trans, end_mask=end)
            for _ in range(n_strata)
        )
        self.linker: Optional[BranchLinker] = None
        self.label_kinds = list(label_kinds) if label_kinds is not None else None
        if linker_width > 0:
            if self.label_kinds is None:
                raise ValueError("ParallelismNetwork: a linker needs label_kinds")
            self.linker = BranchLinker(n_encoded, linker_width, max_back)

    def encode(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # x: [B, T, nI], mask: [B, T] -> [B, T, nE]
        x = self.dropout(x)
        if self.encoder is not None:
            lengths = mask.sum(1).clamp(min=1).cpu()
            packed = nn.utils.rnn.pack_padded_sequence(
                x, lengths, batch_first=True, enforce_sorted=False
            )
            # thinc's optimizer gives every parameter fresh storage after each update:
            # on cuDNN, put the LSTM's weights back into one buffer (a no-op on the CPU)
            self.encoder.flatten_parameters()
            output, _ = self.encoder(packed)
            x, _ = nn.utils.rnn.pad_packed_sequence(
                output, batch_first=True, total_length=x.shape[1]
            )
            x = self.dropout(x)
        if self.attention is not None:
            attended, _ = self.attention(x, x, x, key_padding_mask=~mask, need_weights=False)
            x = self.attention_norm(x + self.dropout(attended))
        return x

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor,
        tags: Optional[torch.Tensor] = None,
        branches: Optional[Sequence[Sequence[Sequence[Tuple[int, int, bool, int]]]]] = None,
        keys: Optional[TokenKeys] = None,
        outside_penalty: float = 0.0,
        confidence: bool = False,
        review_penalties: Sequence[float] = (),
    ) -> Any:
        """With gold ``tags`` [S, B, T] (and, with a linker, the gold ``branches`` per
        stratum and doc): the summed negative log-likelihood, a scalar. Without: a dict
        with per stratum the Viterbi tag paths of each sequence ("paths") and, with a
        linker, the branches with their chosen antecedents ("branches"). In
        prediction, ``outside_penalty`` is subtracted from the score of label 0 ("O")
        of the outermost stratum before decoding: a recall/precision trade-off tuned on
        validation data. ``confidence`` and ``review_penalties``: see ``decode``."""
        encoded, emissions = self.potentials(x, mask)
        if tags is not None:
            losses = [
                crf(scores, tags[s], mask, reduction="sum")
                for s, (crf, scores) in enumerate(zip(self.crfs, emissions))
            ]
            loss = torch.stack(losses).sum()
            if self.linker is not None and branches is not None:
                loss = loss + self.linker.loss(encoded, branches, keys)
            return loss
        linkers = [self.linker] if self.linker is not None else []
        return decode(
            list(self.crfs),
            emissions,
            mask,
            linkers,
            [encoded],
            self.label_kinds,
            keys,
            outside_penalty,
            confidence=confidence,
            review_penalties=review_penalties,
        )

    def potentials(self, x: torch.Tensor, mask: torch.Tensor) -> Tuple[torch.Tensor, List]:
        """RETURNS (Tuple[torch.Tensor, List[torch.Tensor]]): the encoded tokens
        [B, T, nE] and, per stratum, the emission scores [B, T, K]."""
        encoded = self.encode(x, mask)
        return encoded, [emitter(encoded) for emitter in self.emitters]

    def marginals(self, x: torch.Tensor, mask: torch.Tensor) -> List[torch.Tensor]:
        """RETURNS (List[torch.Tensor]): per stratum, tag marginals [B, T, K]."""
        encoded = self.encode(x, mask)
        return [crf.marginals(e(encoded), mask) for crf, e in zip(self.crfs, self.emitters)]


class EnsembleNetwork(nn.Module):
    """Several parallelism networks over the same tag vocabulary, decoded as one: the
    members' emission scores, CRF start/transition/end scores and link log-probabilities
    are averaged (a product of experts), then decoded once. Members trained apart
    (different seeds) make a more stable tagger than any one of them; in training each
    member learns on its own loss (the losses are summed).

    members (Sequence[ParallelismNetwork]): at least two networks with the same labels,
        strata, constraints and linker setting.
    """

    def __init__(self, members: Sequence[ParallelismNetwork]):
        super().__init__()
        members = list(members)
        if len(members) < 2:
            raise ValueError(f"EnsembleNetwork: need >= 2 members, got {len(members)}")
        first = members[0]
        for member in members[1:]:
            if (
                len(member.crfs) != len(first.crfs)
                or member.crfs[0].num_tags != first.crfs[0].num_tags
                or (member.linker is None) != (first.linker is None)
            ):
                raise ValueError("EnsembleNetwork: the members differ in labels, strata or linker")
        self.members = nn.ModuleList(members)
        self.label_kinds = first.label_kinds

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor,
        tags: Optional[torch.Tensor] = None,
        branches: Optional[Sequence[Sequence[Sequence[Tuple[int, int, bool, int]]]]] = None,
        keys: Optional[TokenKeys] = None,
        outside_penalty: float = 0.0,
        confidence: bool = False,
        review_penalties: Sequence[float] = (),
    ) -> Any:
        """As ``ParallelismNetwork.forward``, with ``x`` [M, B, T, nI]: each member's
        own token vectors (members mix the encoder's layers their own way)."""
        if x.shape[0] != len(self.members):
            raise ValueError(
                f"EnsembleNetwork: got inputs for {x.shape[0]} members, have {len(self.members)}"
            )
        if tags is not None:
            losses = [
                member(x[m], mask, tags, branches, keys) for m, member in enumerate(self.members)
            ]
            return torch.stack(losses).sum()
        potentials = [member.potentials(x[m], mask) for m, member in enumerate(self.members)]
        encoded = [p[0] for p in potentials]
        n_strata = len(potentials[0][1])
        emissions = [torch.stack([p[1][s] for p in potentials]).mean(0) for s in range(n_strata)]
        crfs = [
            ConstrainedCRF.mean([member.crfs[s] for member in self.members])
            for s in range(n_strata)
        ]
        linkers = [m.linker for m in self.members if m.linker is not None]
        members = [
            (list(member.crfs), p[1]) for member, p in zip(self.members, potentials, strict=True)
        ]
        return decode(
            crfs,
            emissions,
            mask,
            linkers,
            encoded,
            self.label_kinds,
            keys,
            outside_penalty,
            confidence=confidence,
            review_penalties=review_penalties,
            members=members,
        )


def penalised(emissions: Sequence[torch.Tensor], outside_penalty: float) -> List[torch.Tensor]:
    """The emissions with ``outside_penalty`` subtracted from label 0 ("O") of the
    outermost stratum only: deeper strata are rarely active, and pushing them off "O"
    makes them swallow whole sections."""
    if not outside_penalty:
        return list(emissions)
    penalty = emissions[0].new_zeros(emissions[0].shape[-1])
    penalty[0] = outside_penalty
    return [emissions[0] - penalty, *emissions[1:]]


class SpanScorer:
    """The posterior probability that a span is exactly one branch, under the decoded
    CRF (an ensemble's averaged one) and under each member's own CRF: forward-backward
    runs once per stratum (and member), then any branch of any decode is scored.

    crfs (Sequence[ConstrainedCRF]): per stratum, the decoding CRF.
    emissions (Sequence[torch.Tensor]): per stratum [B, T, K], as decoded.
    mask (torch.Tensor): bool [B, T].
    label_kinds (Sequence[int]): how each label opens, continues or closes a branch.
    members (Optional[Sequence]): per ensemble member, its per-stratum CRFs and
        emissions (as decoded: the same penalty subtracted); None for one network.
    """

    def __init__(
        self,
        crfs: Sequence[ConstrainedCRF],
        emissions: Sequence[torch.Tensor],
        mask: torch.Tensor,
        label_kinds: Sequence[int],
        members: Optional[Sequence[Tuple[Sequence[ConstrainedCRF], Sequence[torch.Tensor]]]],
    ) -> None:
        self.mask = mask
        self.openers = [k for k, kind in enumerate(label_kinds) if kind in (KIND_FIRST, KIND_LATER)]
        self.continuers = [
            k for k, kind in enumerate(label_kinds) if kind in (KIND_INSIDE, KIND_END)
        ]
        self.models = [(list(crfs), list(emissions))] + [
            (list(c), list(e)) for c, e in (members or [])
        ]
        self._fb: Dict[Tuple[int, int], Any] = {}

    def probabilities(
        self, stratum: int, segments: Sequence[Tuple[int, int, int]]
    ) -> Tuple[List[float], List[float]]:
        """segments: (doc, start, end) per branch of one stratum.

        RETURNS (Tuple[List[float], List[float]]): per segment, its probability under the
            decoding CRF and the mean of its probabilities under the members' own CRFs
            (their agreement; the first again for one network).
        """
        if not segments:
            return [], []
        values = []
        for m, (crfs, emissions) in enumerate(self.models):
            crf, scores = crfs[stratum], emissions[stratum]
            if (m, stratum) not in self._fb:
                self._fb[(m, stratum)] = crf.forward_backward(crf.centred(scores), self.mask)
            fb = self._fb[(m, stratum)]
            log_probs = crf.segment_log_probs(
                scores, self.mask, segments, self.openers, self.continuers, fb=fb
            )
            values.append(log_probs.exp())
        decoded = values[0].tolist()
        agreement = torch.stack(values[1:]).mean(0).tolist() if len(values) > 1 else decoded
        return decoded, agreement


def branch_confidence(
    scorer: SpanScorer,
    rows: Sequence[Sequence[Sequence[Tuple[int, int, bool, int]]]],
    link_probs: Optional[Sequence[Sequence[Sequence[Optional[float]]]]],
) -> List[List[List[Tuple[float, float, Optional[float]]]]]:
    """Per stratum, per doc, per branch of ``rows``: (probability under the decoding
    CRF, the members' mean probability, the probability of its link or None)."""
    result = []
    for s, stratum in enumerate(rows):
        segments = [(b, start, end) for b, row in enumerate(stratum) for start, end, _, _ in row]
        decoded, agreement = scorer.probabilities(s, segments)
        found: List[List[Tuple[float, float, Optional[float]]]] = []
        n = 0
        for b, row in enumerate(stratum):
            per_doc = []
            for i in range(len(row)):
                link = link_probs[s][b][i] if link_probs is not None else None
                per_doc.append((decoded[n], agreement[n], link))
                n += 1
            found.append(per_doc)
        result.append(found)
    return result


def decode(
    crfs: Sequence[ConstrainedCRF],
    emissions: Sequence[torch.Tensor],
    mask: torch.Tensor,
    linkers: Sequence[BranchLinker],
    encoded: Sequence[torch.Tensor],
    label_kinds: Optional[Sequence[int]],
    keys: Optional[TokenKeys],
    outside_penalty: float = 0.0,
    confidence: bool = False,
    review_penalties: Sequence[float] = (),
    members: Optional[Sequence[Tuple[Sequence[ConstrainedCRF], Sequence[torch.Tensor]]]] = None,
) -> Dict[str, Any]:
    """Viterbi paths per stratum and, with linkers, each later branch's antecedent.

    crfs (Sequence[ConstrainedCRF]): one per stratum.
    emissions (Sequence[torch.Tensor]): per stratum [B, T, K].
    mask (torch.Tensor): bool [B, T].
    linkers (Sequence[BranchLinker]): none, or one per member, with ``encoded`` the
        member's encoded tokens [B, T, nE] each; their link log-probabilities are averaged.
    label_kinds (Optional[Sequence[int]]): how each label opens, continues or closes a branch.
    keys (Optional[TokenKeys]): per doc the tokens' (form, ending) hashes, for the linker.
    outside_penalty (float): subtracted from the score of label 0 ("O") of the
        outermost stratum before decoding.
    confidence (bool): also score every decoded branch (see ``branch_confidence``).
    review_penalties (Sequence[float]): decode again with each of these penalties (a
        larger one: more branches) for a review list; their branches are scored under
        the reporting decode's distribution (``outside_penalty``), so that their scores
        compare with the reported ones.
    members (Optional[Sequence]): an ensemble's members, per member its per-stratum
        CRFs and emissions (for their agreement).
    RETURNS (Dict[str, Any]): {"paths": per stratum the paths, "branches": with
        linkers; "confidence": per stratum, per doc, per branch (CRF probability,
        members' mean probability, link probability or None) with ``confidence``;
        "review": per review penalty, a dict of the same keys}.
    """
    raw = list(emissions)
    emissions = penalised(raw, outside_penalty)
    output = _decode_once(crfs, emissions, mask, linkers, encoded, label_kinds, keys)
    if not confidence and not review_penalties:
        output.pop("links", None)
        return output
    if label_kinds is None:
        raise ValueError("decode: confidence and review lists need the label kinds")
    scorer = SpanScorer(
        crfs,
        emissions,
        mask,
        label_kinds,
        None if members is None else [(c, penalised(e, outside_penalty)) for c, e in members],
    )
    decodes = [output]
    output["review"] = []
    for penalty in review_penalties:
        again = _decode_once(
            crfs, penalised(raw, penalty), mask, linkers, encoded, label_kinds, keys
        )
        output["review"].append(again)
        decodes.append(again)
    for found in decodes:
        rows = found.get("branches")
        if rows is None:
            rows = [
                [read_branches(path, label_kinds) for path in stratum] for stratum in found["paths"]
            ]
        found["confidence"] = branch_confidence(scorer, rows, found.pop("links", None))
    return output


def _decode_once(
    crfs: Sequence[ConstrainedCRF],
    emissions: Sequence[torch.Tensor],
    mask: torch.Tensor,
    linkers: Sequence[BranchLinker],
    encoded: Sequence[torch.Tensor],
    label_kinds: Optional[Sequence[int]],
    keys: Optional[TokenKeys],
) -> Dict[str, Any]:
    paths = [crf.decode(scores, mask) for crf, scores in zip(crfs, emissions)]
    output: Dict[str, Any] = {"paths": paths}
    if linkers:
        rows = [[read_branches(path, label_kinds) for path in stratum] for stratum in paths]
        output["branches"], output["links"] = scored_links(linkers, encoded, rows, keys)
    return output
