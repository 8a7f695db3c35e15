"""A linear-chain conditional random field with hard tag constraints, in plain torch.

Tag schemes such as BIO forbid some starts, transitions and ends (``I`` may not follow
``O``). The CRF keeps learnable start, transition and end scores and adds a fixed large
negative penalty to the forbidden entries, so forbidden paths get (numerically) zero
probability while every gradient stays finite. All methods are batch-first and loop
only over time. Masks are left-aligned: ``mask[b, t]`` is True for the first ``length_b``
positions of sequence ``b``. If the constraints admit no path at all for some sequence
length, every path of that length carries the penalty and Viterbi returns a forbidden one;
tag schemes with an always-allowed tag (``O``) never hit this case.
"""

from typing import List, Sequence, Tuple

import numpy
import torch
from torch import Tensor

# Added to the score of a forbidden start, transition or end. exp(-1e4) is 0 in float32
# and float64, yet the value is finite, so no NaN reaches the gradients.
FORBIDDEN = -1.0e4

MaskLike = numpy.ndarray | Tensor | None
# on a CPU, the scan computes log Z while B * K^3 is at most this (see ConstrainedCRF)
SCAN_CPU_LIMIT = 4096


def _centred(emissions: Tensor) -> Tensor:
    """Emissions less each position's best score (a constant, without gradient).

    A constant added to every tag's score at one position adds the same to every path's
    score and to log Z, so the likelihood and the marginals do not move; but log Z then
    stays near the spread of the scores instead of growing with T times their scale. On
    trained ASP heads (emissions up to 300, log Z up to 1.7e5) float32 lost up to 0.8
    nats of log Z in the forward algorithm and 0.02 in the scan; centred, 0.01 and 3e-4
    (benchmarks/crf_accuracy.py).
    """
    return emissions - emissions.detach().max(2, keepdim=True).values


def _allowed(mask: MaskLike, shape: Tuple[int, ...], name: str) -> Tensor:
    if mask is None:
        return torch.ones(shape, dtype=torch.bool)
    allowed = torch.as_tensor(numpy.asarray(mask) if not isinstance(mask, Tensor) else mask)
    if tuple(allowed.shape) != shape:
        raise ValueError(
            f"ConstrainedCRF: {name} has shape {tuple(allowed.shape)}, expected {shape}"
        )
    return allowed.detach().to(torch.bool).clone()


class ConstrainedCRF(torch.nn.Module):
    """A linear-chain CRF over ``num_tags`` tags with optional hard constraints.

    num_tags (int): the number of tags K.
    start_mask (ArrayLike | None): bool [K], the tags a sequence may start with.
    trans_mask (ArrayLike | None): bool [K, K]; ``trans_mask[i, j]``: tag j may follow tag i.
    end_mask (ArrayLike | None): bool [K], the tags a sequence may end with.

    ``algorithm`` (a class attribute; set it on an instance to change one CRF) says how
    the loss computes log Z: "scan" multiplies the positions' transition matrices
    pairwise in log2(T) rounds, which keeps a GPU busy where the forward algorithm's T
    small steps each wait for a kernel launch; "forward" is the forward algorithm;
    "auto" (the default) takes the scan on a GPU, and on a CPU where the batch is small
    (B * K^3 <= ``SCAN_CPU_LIMIT``). All give the same value up to rounding
    (tests/test_parallelism_crf.py).
    """

    algorithm = "auto"

    def __init__(
        self,
        num_tags: int,
        start_mask: MaskLike = None,
        trans_mask: MaskLike = None,
        end_mask: MaskLike = None,
    ) -> None:
        super().__init__()
        if num_tags < 1:
            raise ValueError(f"ConstrainedCRF: num_tags must be >= 1, got {num_tags}")
        self.num_tags = num_tags
        self.start_scores = torch.nn.Parameter(torch.empty(num_tags))
        self.transition_scores = torch.nn.Parameter(torch.empty(num_tags, num_tags))
        self.end_scores = torch.nn.Parameter(torch.empty(num_tags))
        for param in (self.start_scores, self.transition_scores, self.end_scores):
            torch.nn.init.uniform_(param, -0.1, 0.1)
        self.register_buffer("start_allowed", _allowed(start_mask, (num_tags,), "start_mask"))
        self.register_buffer(
            "trans_allowed", _allowed(trans_mask, (num_tags, num_tags), "trans_mask")
        )
        self.register_buffer("end_allowed", _allowed(end_mask, (num_tags,), "end_mask"))

    @classmethod
    def mean(cls, crfs: Sequence["ConstrainedCRF"]) -> "ConstrainedCRF":
        """A CRF whose start, transition and end scores are the means of ``crfs``' (all
        with the same tags and constraints): an ensemble's shared decoder.

        crfs (Sequence[ConstrainedCRF]): at least one CRF.
        RETURNS (ConstrainedCRF): the new CRF, on the first one's device.
        """
        first = crfs[0]
        for crf in crfs[1:]:
            if crf.num_tags != first.num_tags or not all(
                torch.equal(a, b)
                for a, b in (
                    (crf.start_allowed, first.start_allowed),
                    (crf.trans_allowed, first.trans_allowed),
                    (crf.end_allowed, first.end_allowed),
                )
            ):
                raise ValueError("ConstrainedCRF.mean: the CRFs differ in tags or constraints")
        mean = cls(
            first.num_tags,
            start_mask=first.start_allowed,
            trans_mask=first.trans_allowed,
            end_mask=first.end_allowed,
        ).to(first.start_scores.device)
        with torch.no_grad():
            for name in ("start_scores", "transition_scores", "end_scores"):
                stacked = torch.stack([getattr(crf, name).detach() for crf in crfs])
                getattr(mean, name).copy_(stacked.mean(0))
        return mean

    def _scores(self, dtype: torch.dtype) -> Tuple[Tensor, Tensor, Tensor]:
        """RETURNS (Tuple[Tensor, Tensor, Tensor]): start [K], transitions [K, K] and
        end [K] scores with the penalty added to forbidden entries."""
        out = []
        for param, allowed in (
            (self.start_scores, self.start_allowed),
            (self.transition_scores, self.trans_allowed),
            (self.end_scores, self.end_allowed),
        ):
            penalty = (~allowed).to(dtype) * FORBIDDEN
            out.append(param.to(dtype) + penalty)
        return out[0], out[1], out[2]

    def _empty(self, emissions: Tensor) -> Tensor:
        """RETURNS (Tensor): [0] scores for an empty batch, still attached to the graph."""
        return emissions.sum((1, 2)) + 0.0 * self.start_scores.sum().to(emissions.dtype)

    def _validate(self, emissions: Tensor, mask: Tensor | None) -> Tensor:
        if emissions.dim() != 3 or emissions.size(2) != self.num_tags:
            raise ValueError(
                f"ConstrainedCRF: emissions must have shape [B, T, {self.num_tags}], "
                f"got {tuple(emissions.shape)}"
            )
        batch, length = emissions.shape[:2]
        if mask is None:
            mask = torch.ones(batch, length, dtype=torch.bool, device=emissions.device)
        if tuple(mask.shape) != (batch, length):
            raise ValueError(
                f"ConstrainedCRF: mask has shape {tuple(mask.shape)}, expected {(batch, length)}"
            )
        mask = mask.to(torch.bool)
        if batch == 0:
            return mask
        if length == 0 or not bool(mask[:, 0].all()):
            raise ValueError(
                "ConstrainedCRF: mask[:, 0] must be True for every sequence (no empty "
                "sequences); drop empty docs before calling the CRF"
            )
        if bool((mask[:, 1:] & ~mask[:, :-1]).any()):
            raise ValueError("ConstrainedCRF: mask must be left-aligned (no True after a False)")
        return mask

    def check_tags(self, tags: Tensor, mask: Tensor) -> None:
        """Raise a ValueError naming the first gold tag that is out of range or breaks a
        constraint (forbidden start, transition or end).

        tags (Tensor): long [B, T].
        mask (Tensor): bool [B, T], left-aligned.
        """
        if tags.numel() == 0:
            return
        in_range = (tags >= 0) & (tags < self.num_tags)
        bad = mask & ~in_range
        if bool(bad.any()):
            b, t = bad.nonzero()[0].tolist()
            raise ValueError(f"ConstrainedCRF: tag {int(tags[b, t])} out of range at ({b}, {t})")
        safe = tags.masked_fill(~mask, 0)  # [B, T]
        lengths = mask.sum(1)  # [B]
        batch = torch.arange(tags.size(0), device=tags.device)
        last = safe[batch, lengths - 1]  # [B]
        checks = (
            ("start", ~self.start_allowed[safe[:, 0]], torch.zeros_like(lengths)),
            ("end", ~self.end_allowed[last], lengths - 1),
        )
        for what, violated, positions in checks:
            if bool(violated.any()):
                b = int(violated.nonzero()[0])
                t = int(positions[b])
                raise ValueError(
                    f"ConstrainedCRF: gold tag {int(safe[b, t])} is not allowed as {what} "
                    f"tag (sequence {b}, position {t})"
                )
        forbidden = ~self.trans_allowed[safe[:, :-1], safe[:, 1:]] & mask[:, 1:]  # [B, T-1]
        if bool(forbidden.any()):
            b, t = forbidden.nonzero()[0].tolist()
            raise ValueError(
                f"ConstrainedCRF: gold transition {int(safe[b, t])} -> {int(safe[b, t + 1])} "
                f"is not allowed (sequence {b}, positions {t}-{t + 1})"
            )

    def path_score(self, emissions: Tensor, tags: Tensor, mask: Tensor | None = None) -> Tensor:
        """Unnormalised score of given tag paths.

        emissions (Tensor): [B, T, K]. tags (Tensor): long [B, T]. mask (Tensor): bool [B, T].
        RETURNS (Tensor): [B] the score of each path.
        """
        mask = self._validate(emissions, mask)
        start, trans, end = self._scores(emissions.dtype)
        if emissions.size(0) == 0:
            return self._empty(emissions)
        safe = tags.masked_fill(~mask, 0)  # [B, T]
        weights = mask.to(emissions.dtype)  # [B, T]
        emitted = emissions.gather(2, safe.unsqueeze(2)).squeeze(2)  # [B, T]
        score = start[safe[:, 0]] + (emitted * weights).sum(1)  # [B]
        score = score + (trans[safe[:, :-1], safe[:, 1:]] * weights[:, 1:]).sum(1)
        last = safe.gather(1, (mask.sum(1, keepdim=True) - 1)).squeeze(1)  # [B]
        return score + end[last]

    def log_partition(self, emissions: Tensor, mask: Tensor | None = None) -> Tensor:
        """The log normaliser (see ``algorithm``).

        emissions (Tensor): [B, T, K]. mask (Tensor): bool [B, T].
        RETURNS (Tensor): [B] log Z of each sequence.
        """
        return self._log_z(emissions, self._validate(emissions, mask))

    def _log_z(self, emissions: Tensor, mask: Tensor) -> Tensor:
        if self.algorithm not in ("auto", "scan", "forward"):
            raise ValueError(
                f"ConstrainedCRF: unknown algorithm {self.algorithm!r}; "
                "use 'auto', 'scan' or 'forward'"
            )
        scan = self.algorithm == "scan"
        if self.algorithm == "auto":
            # the scan does K times the forward algorithm's arithmetic in log2(T) rounds
            # instead of T: on a GPU the rounds are what costs; on a CPU it wins while
            # B * K^3 stays small (benchmarks/crf_scan.py: K = 7, B = 4: 2.3-3.1x
            # faster; B * K^3 near 5,000: even; K = 13, B = 16: 5x slower)
            batch, _, k = emissions.shape
            scan = emissions.device.type != "cpu" or batch * k**3 <= SCAN_CPU_LIMIT
        if scan:
            return self._scan_log_z(emissions, mask)
        return self._forward_scores(emissions, mask)[1]

    def _scan_log_z(self, emissions: Tensor, mask: Tensor) -> Tensor:
        """log Z by a parallel reduction: the forward algorithm is a product of one
        [K, K] matrix per position in the log semiring (``step_t[i, j] = trans[i, j] +
        emissions[t, j]``; the identity past a sequence's end), and a product can be
        taken pairwise, so the loop runs log2(T) times instead of T.

        RETURNS (Tensor): [B] log Z, equal to the forward algorithm's up to rounding.
        """
        start, trans, end = self._scores(emissions.dtype)
        if emissions.size(0) == 0:
            return self._empty(emissions)
        batch, length, k = emissions.shape
        alpha = start + emissions[:, 0]  # [B, K]
        if length > 1:
            steps = trans + emissions[:, 1:].unsqueeze(2)  # [B, T-1, K_prev, K]
            # the log-semiring identity: 0 on the diagonal, exp(FORBIDDEN) = 0 elsewhere
            eye = torch.eye(k, dtype=torch.bool, device=emissions.device)
            identity = torch.zeros(k, k, dtype=emissions.dtype, device=emissions.device)
            identity = identity.masked_fill(~eye, FORBIDDEN)
            steps = torch.where(mask[:, 1:, None, None], steps, identity)
            while steps.size(1) > 1:
                if steps.size(1) % 2:
                    pad = identity.expand(batch, 1, k, k)
                    steps = torch.cat([steps, pad], 1)
                left, right = steps[:, 0::2], steps[:, 1::2]  # [B, n/2, K, K] each
                # (left (x) right)[i, l] = logsumexp_j left[i, j] + right[j, l]
                steps = torch.logsumexp(left.unsqueeze(4) + right.unsqueeze(2), 3)
            alpha = torch.logsumexp(alpha.unsqueeze(2) + steps[:, 0], 1)  # [B, K]
        return torch.logsumexp(alpha + end, 1)

    def _forward_scores(self, emissions: Tensor, mask: Tensor) -> Tuple[Tensor, Tensor]:
        """RETURNS (Tuple[Tensor, Tensor]): alphas [B, T, K] and log Z [B]."""
        start, trans, end = self._scores(emissions.dtype)
        if emissions.size(0) == 0:
            return emissions, self._empty(emissions)
        alpha = start + emissions[:, 0]  # [B, K]
        alphas = [alpha]
        for t in range(1, emissions.size(1)):
            # [B, K_prev, 1] + [K_prev, K] + [B, 1, K] -> logsumexp over K_prev -> [B, K]
            step = torch.logsumexp(alpha.unsqueeze(2) + trans + emissions[:, t].unsqueeze(1), 1)
            alpha = torch.where(mask[:, t].unsqueeze(1), step, alpha)
            alphas.append(alpha)
        return torch.stack(alphas, 1), torch.logsumexp(alpha + end, 1)

    def log_likelihood(
        self, emissions: Tensor, tags: Tensor, mask: Tensor | None = None, check: bool = True
    ) -> Tensor:
        """Log-likelihood of gold tag paths.

        emissions (Tensor): [B, T, K]. tags (Tensor): long [B, T]. mask (Tensor): bool [B, T].
        check (bool): raise a ValueError (see ``check_tags``) when a gold path breaks a constraint.
        RETURNS (Tensor): [B] log p(tags | emissions).
        """
        mask = self._validate(emissions, mask)
        if tuple(tags.shape) != tuple(mask.shape):
            raise ValueError(
                f"ConstrainedCRF: tags have shape {tuple(tags.shape)}, expected {tuple(mask.shape)}"
            )
        if check:
            self.check_tags(tags, mask)
        centred = _centred(emissions)
        return self.path_score(centred, tags, mask) - self._log_z(centred, mask)

    def forward(
        self,
        emissions: Tensor,
        tags: Tensor,
        mask: Tensor | None = None,
        reduction: str = "mean",
    ) -> Tensor:
        """The negative log-likelihood loss.

        emissions (Tensor): [B, T, K]. tags (Tensor): long [B, T]. mask (Tensor): bool [B, T].
        reduction (str): "mean" (over the batch), "sum" or "none".
        RETURNS (Tensor): [] or, for "none", [B].
        """
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"ConstrainedCRF: unknown reduction {reduction!r}")
        nll = -self.log_likelihood(emissions, tags, mask)  # [B]
        if reduction == "none":
            return nll
        if reduction == "sum":
            return nll.sum()
        return nll.sum() / max(nll.size(0), 1)

    def viterbi(
        self, emissions: Tensor, mask: Tensor | None = None
    ) -> Tuple[List[List[int]], Tensor]:
        """The best path of each sequence and its score.

        emissions (Tensor): [B, T, K]. mask (Tensor): bool [B, T].
        RETURNS (Tuple[List[List[int]], Tensor]): per sequence the best tags (as long as
            the sequence), and the [B] scores of those paths.
        """
        mask = self._validate(emissions, mask)
        start, trans, end = self._scores(emissions.dtype)
        batch, length = emissions.shape[:2]
        if batch == 0:
            return [], emissions.new_zeros(0)
        score = start + emissions[:, 0]  # [B, K]
        history = []  # T-1 x [B, K]: best previous tag given the tag at t
        for t in range(1, length):
            step, best_prev = (score.unsqueeze(2) + trans + emissions[:, t].unsqueeze(1)).max(1)
            score = torch.where(mask[:, t].unsqueeze(1), step, score)
            history.append(best_prev)
        best_score, current = (score + end).max(1)  # [B], [B]
        lengths = mask.sum(1)  # [B]
        path = torch.zeros(batch, length, dtype=torch.long, device=emissions.device)
        path.scatter_(1, (lengths - 1).unsqueeze(1), current.unsqueeze(1))
        for t in range(length - 2, -1, -1):
            active = t < lengths - 1  # [B]
            previous = history[t].gather(1, current.unsqueeze(1)).squeeze(1)  # [B]
            current = torch.where(active, previous, current)
            path[:, t] = torch.where(active, previous, path[:, t])
        paths = [row[:n].tolist() for row, n in zip(path, lengths.tolist(), strict=True)]
        return paths, best_score

    def decode(self, emissions: Tensor, mask: Tensor | None = None) -> List[List[int]]:
        """Viterbi decoding.

        emissions (Tensor): [B, T, K]. mask (Tensor): bool [B, T].
        RETURNS (List[List[int]]): the best tags of each sequence, as long as the sequence.
        """
        with torch.no_grad():
            return self.viterbi(emissions, mask)[0]

    def forward_backward(
        self, emissions: Tensor, mask: Tensor | None = None
    ) -> Tuple[Tensor, Tensor, Tensor]:
        """The forward and backward log scores of every position and tag.

        emissions (Tensor): [B, T, K]. mask (Tensor): bool [B, T].
        RETURNS (Tuple[Tensor, Tensor, Tensor]): alphas [B, T, K] (log-sum of the scores
            of the path prefixes ending in tag k at t, its emission included), betas
            [B, T, K] (log-sum of the scores of the suffixes after t given tag k at t,
            the end score included; past a sequence's end, its end scores) and log Z [B].
            ``alphas + betas - log Z`` are the log marginals.
        """
        mask = self._validate(emissions, mask)
        _, trans, end = self._scores(emissions.dtype)
        if emissions.size(0) == 0:
            return emissions, emissions, self._empty(emissions)
        alphas, log_z = self._forward_scores(emissions, mask)  # [B, T, K], [B]
        beta = end.expand(emissions.size(0), -1)  # [B, K]
        betas = [beta]
        for t in range(emissions.size(1) - 2, -1, -1):
            # [K, K_next] + [B, 1, K_next] -> logsumexp over K_next -> [B, K]
            step = torch.logsumexp(trans + (emissions[:, t + 1] + beta).unsqueeze(1), 2)
            beta = torch.where(mask[:, t + 1].unsqueeze(1), step, end.expand_as(step))
            betas.append(beta)
        return alphas, torch.stack(betas[::-1], 1), log_z

    def marginals(self, emissions: Tensor, mask: Tensor | None = None) -> Tensor:
        """Posterior tag marginals p(y_t = k | x) by forward-backward.

        emissions (Tensor): [B, T, K]. mask (Tensor): bool [B, T].
        RETURNS (Tensor): [B, T, K]; rows sum to 1 inside the mask and are 0 outside it.
        """
        mask = self._validate(emissions, mask)
        if emissions.size(0) == 0:
            return emissions.new_zeros(emissions.shape)
        emissions = _centred(emissions)  # the marginals do not change; their rounding does
        alphas, betas, log_z = self.forward_backward(emissions, mask)
        probs = torch.exp(alphas + betas - log_z[:, None, None])
        return probs * mask.unsqueeze(2).to(probs.dtype)

    def segment_log_probs(
        self,
        emissions: Tensor,
        mask: Tensor | None,
        segments: Sequence[Tuple[int, int, int]],
        openers: Sequence[int],
        continuers: Sequence[int],
        fb: Tuple[Tensor, Tensor, Tensor] | None = None,
    ) -> Tensor:
        """The posterior log-probability that each segment is exactly one unit of the
        tag scheme: its first tag is an opener, every later tag a continuer, and the
        tag after it (if any) no continuer. For a parallelism tagset: that tokens
        start..end-1 are exactly one branch, whatever the tags of the rest.

        emissions (Tensor): [B, T, K]. mask (Tensor): bool [B, T].
        segments (Sequence[Tuple[int, int, int]]): (sequence, start, end) per segment,
            0 <= start < end <= the sequence's length.
        openers (Sequence[int]): the tags that open a unit (B, B-*).
        continuers (Sequence[int]): the tags that continue an open unit (I, J, E).
        fb (Tuple[Tensor, Tensor, Tensor] | None): ``forward_backward`` of the centred
            emissions (``crf.centred(emissions)``), where already computed.
        RETURNS (Tensor): [N] log-probabilities (<= 0).
        """
        mask = self._validate(emissions, mask)
        emissions = _centred(emissions)
        if not segments:
            return emissions.new_zeros(0)
        alphas, betas, log_z = fb if fb is not None else self.forward_backward(emissions, mask)
        _, trans, end = self._scores(emissions.dtype)
        k = self.num_tags
        device = emissions.device
        dtype = emissions.dtype
        opening = torch.full((k,), FORBIDDEN, dtype=dtype, device=device)
        opening[list(openers)] = 0.0
        inside = torch.full((k,), FORBIDDEN, dtype=dtype, device=device)
        inside[list(continuers)] = 0.0
        closing = torch.where(inside == 0.0, torch.full_like(inside, FORBIDDEN), 0.0)
        seq = torch.tensor([s[0] for s in segments], device=device)
        starts = torch.tensor([s[1] for s in segments], device=device)
        ends = torch.tensor([s[2] for s in segments], device=device)
        lengths = mask.sum(1)[seq]  # [N]
        if bool(((starts < 0) | (ends <= starts) | (ends > lengths)).any()):
            raise ValueError("ConstrainedCRF: a segment lies outside its sequence or is empty")
        # the prefix mass up to the segment's first tag, restricted to the openers
        score = alphas[seq, starts] + opening  # [N, K]
        for step in range(1, int((ends - starts).max())):
            t = (starts + step).clamp(max=emissions.size(1) - 1)  # [N]
            # [N, K_prev, 1] + [K_prev, K] -> logsumexp over K_prev -> [N, K]
            moved = torch.logsumexp(score.unsqueeze(2) + trans, 1) + emissions[seq, t] + inside
            score = torch.where((starts + step < ends).unsqueeze(1), moved, score)
        at_end = ends >= lengths  # [N]
        after = ends.clamp(max=emissions.size(1) - 1)
        # the suffix: a tag that closes the unit, then the rest ([N, K_prev, K_next])
        following = emissions[seq, after] + betas[seq, after] + closing  # [N, K_next]
        closed = torch.logsumexp(trans + following.unsqueeze(1), 2)  # [N, K_prev]
        tail = torch.where(at_end.unsqueeze(1), end.expand_as(closed), closed)
        return (torch.logsumexp(score + tail, 1) - log_z[seq]).clamp(max=0.0)

    @staticmethod
    def centred(emissions: Tensor) -> Tensor:
        """RETURNS (Tensor): the emissions less each position's best score (see
        ``_centred``): what ``segment_log_probs`` reads, for ``forward_backward``."""
        return _centred(emissions)
