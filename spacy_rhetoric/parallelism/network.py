"""The torch part of the parallelism tagger: an optional BiLSTM encoder, one linear
emission layer and one constrained CRF per stratum."""

import os
from typing import List, Optional, Sequence, Tuple, Union

import numpy
import torch
from torch import nn

from .crf import ConstrainedCRF

Masks = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]


def _single_thread_after_fork() -> None:
    # A process forked after torch has started its OpenMP thread pool (as
    # nlp.pipe(n_process=2) does) hangs on its first parallel op. With one thread,
    # torch runs its ops inline and never enters the inherited pool.
    torch.set_num_threads(1)


os.register_at_fork(after_in_child=_single_thread_after_fork)


class ParallelismNetwork(nn.Module):
    """Token vectors -> per-stratum tag sequences.

    n_input (int): width of the incoming token vectors.
    n_labels (int): number of tags (shared by all strata).
    n_strata (int): number of strata predicted, each with its own emission layer and CRF.
    constraints (Masks): allowed (start, transition, end) masks of the tagset.
    hidden (int): BiLSTM width per direction; 0 disables the encoder.
    depth (int): BiLSTM layers.
    dropout (float): dropout on the encoder input and output.
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
        start, trans, end = (
            torch.as_tensor(numpy.asarray(m), dtype=torch.bool) for m in constraints
        )
        self.emitters = nn.ModuleList(nn.Linear(n_encoded, n_labels) for _ in range(n_strata))
        self.crfs = nn.ModuleList(
            ConstrainedCRF(n_labels, start_mask=start, trans_mask=trans, end_mask=end)
            for _ in range(n_strata)
        )

    def encode(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # x: [B, T, nI], mask: [B, T] -> [B, T, nE]
        x = self.dropout(x)
        if self.encoder is None:
            return x
        lengths = mask.sum(1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(
            x, lengths, batch_first=True, enforce_sorted=False
        )
        output, _ = self.encoder(packed)
        output, _ = nn.utils.rnn.pad_packed_sequence(
            output, batch_first=True, total_length=x.shape[1]
        )
        return self.dropout(output)

    def emissions(self, x: torch.Tensor, mask: torch.Tensor) -> List[torch.Tensor]:
        """RETURNS (List[torch.Tensor]): per stratum, emission scores [B, T, K]."""
        encoded = self.encode(x, mask)
        return [emitter(encoded) for emitter in self.emitters]

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor, tags: Optional[torch.Tensor] = None
    ) -> Union[torch.Tensor, List[List[List[int]]]]:
        """With gold ``tags`` [S, B, T]: the summed negative log-likelihood (a scalar).
        Without: per stratum, the Viterbi tag paths of each sequence."""
        emissions = self.emissions(x, mask)
        if tags is not None:
            losses = [
                crf(scores, tags[s], mask, reduction="sum")
                for s, (crf, scores) in enumerate(zip(self.crfs, emissions))
            ]
            return torch.stack(losses).sum()
        return [crf.decode(scores, mask) for crf, scores in zip(self.crfs, emissions)]

    def marginals(self, x: torch.Tensor, mask: torch.Tensor) -> Sequence[torch.Tensor]:
        """RETURNS (Sequence[torch.Tensor]): per stratum, tag marginals [B, T, K]."""
        return [
            crf.marginals(scores, mask) for crf, scores in zip(self.crfs, self.emissions(x, mask))
        ]
