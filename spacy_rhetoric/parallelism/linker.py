"""Pairwise branch linking: for every branch that the CRF marks as a later branch
(``B-*``), choose which earlier branch of its stratum it continues.

Links are scored from the two branches' encoder states, their distance and their
lexical overlap, so any link value stays predictable, however rare in training (a
closed tag vocabulary of ``B-k`` tags can only produce the ``k`` it has seen).
"""

from typing import List, Optional, Sequence, Tuple

import torch
from torch import nn

# label kinds: how a structure tag opens, continues or closes a branch
KIND_OUTSIDE, KIND_FIRST, KIND_LATER, KIND_INSIDE, KIND_END = range(5)
N_LEXICAL = 6
N_GAP_BUCKETS = 8

# one branch: (start, end, is a later branch, index of its antecedent in the row or -1)
Branch = Tuple[int, int, bool, int]
# per doc, the hashed (form, ending) of each token
TokenKeys = Sequence[Sequence[Tuple[int, int]]]


def read_branches(path: Sequence[int], kinds: Sequence[int]) -> List[Branch]:
    """Cut a structure tag path into branches (antecedents unknown: -1)."""
    branches: List[Branch] = []
    start: Optional[int] = None
    later = False
    for i, label in enumerate(path):
        kind = kinds[label]
        if kind in (KIND_FIRST, KIND_LATER) or (kind in (KIND_INSIDE, KIND_END) and start is None):
            if start is not None:
                branches.append((start, i, later, -1))
            start, later = i, kind == KIND_LATER
            if kind == KIND_END:
                branches.append((start, i + 1, later, -1))
                start = None
        elif kind == KIND_END:
            branches.append((start, i + 1, later, -1))
            start = None
        elif kind == KIND_OUTSIDE and start is not None:
            branches.append((start, i, later, -1))
            start = None
    if start is not None:
        branches.append((start, len(path), later, -1))
    return branches


def lexical_features(keys: Sequence[Tuple[int, int]], a: Branch, b: Branch) -> List[float]:
    """Overlap of two branches: form and ending Jaccard, same first form, same last
    form, same last ending (rhyme), relative length difference."""
    words_a, words_b = keys[a[0] : a[1]], keys[b[0] : b[1]]
    forms_a, forms_b = {k[0] for k in words_a}, {k[0] for k in words_b}
    ends_a, ends_b = {k[1] for k in words_a}, {k[1] for k in words_b}
    return [
        len(forms_a & forms_b) / max(len(forms_a | forms_b), 1),
        len(ends_a & ends_b) / max(len(ends_a | ends_b), 1),
        float(words_a[0][0] == words_b[0][0]),
        float(words_a[-1][0] == words_b[-1][0]),
        float(words_a[-1][1] == words_b[-1][1]),
        abs(len(words_a) - len(words_b)) / max(len(words_a), len(words_b)),
    ]


class BranchLinker(nn.Module):
    """Antecedent ranking over the previous ``max_back`` branches of a stratum.

    n_encoded (int): width of the token encodings.
    width (int): hidden width of the pair scorer.
    max_back (int): how many earlier branches are candidates.
    """

    def __init__(self, n_encoded: int, width: int = 128, max_back: int = 8):
        super().__init__()
        self.max_back = max_back
        self.project = nn.Linear(3 * n_encoded, width)
        self.distance = nn.Embedding(max_back + 1, 16)
        self.gap = nn.Embedding(N_GAP_BUCKETS, 16)
        self.score = nn.Sequential(
            nn.Linear(3 * width + 32 + N_LEXICAL, width), nn.ReLU(), nn.Linear(width, 1)
        )

    def _pairs(
        self, rows: Sequence[Sequence[Sequence[Branch]]], keys: TokenKeys
    ) -> Tuple[List[Tuple[int, int, int]], List[List[int]], List[int], List[List[float]], List]:
        """Enumerate (doc, anaphor, candidate) pairs of every stratum row.

        RETURNS: pairs as (doc, anaphor branch, candidate branch) with their row,
            per query the pair indices, per query the gold candidate position (-1:
            not among the candidates), lexical features, and the query locations.
        """
        pairs, queries, gold, lexical, where = [], [], [], [], []
        branch_refs = []
        for s, stratum in enumerate(rows):
            for b, row in enumerate(stratum):
                for i, branch in enumerate(row):
                    if not branch[2] or i == 0:
                        continue
                    first = max(0, i - self.max_back)
                    query = []
                    for j in range(first, i):
                        query.append(len(pairs))
                        pairs.append((b, i, j))
                        branch_refs.append((row[i], row[j], i - j))
                        lexical.append(lexical_features(keys[b], row[i], row[j]))
                    queries.append(query)
                    antecedent = branch[3]
                    gold.append(antecedent - first if antecedent >= first else -1)
                    where.append((s, b, i))
        return pairs, queries, gold, lexical, (where, branch_refs)

    def _scores(self, encoded: torch.Tensor, pairs, lexical, branch_refs) -> torch.Tensor:
        # encoded: [B, T, E]; returns one score per pair [P]
        zero = encoded.new_zeros(encoded.shape[0], 1, encoded.shape[2])
        sums = torch.cat([zero, encoded.cumsum(1)], dim=1)  # [B, T+1, E]
        device = encoded.device
        docs = torch.tensor([p[0] for p in pairs], device=device)

        def represent(spans: List[Tuple[int, int]]) -> torch.Tensor:
            starts = torch.tensor([s for s, _ in spans], device=device)
            ends = torch.tensor([e for _, e in spans], device=device)
            mean = (sums[docs, ends] - sums[docs, starts]) / (ends - starts).unsqueeze(1)
            return self.project(
                torch.cat([mean, encoded[docs, starts], encoded[docs, ends - 1]], 1)
            )

        g_i = represent([(a[0], a[1]) for a, _, _ in branch_refs])  # [P, W]
        g_j = represent([(c[0], c[1]) for _, c, _ in branch_refs])
        hops = [min(d, self.max_back) for _, _, d in branch_refs]
        distance = self.distance(torch.tensor(hops, device=device))
        gaps = [max(a[0] - c[1], 0) + 1 for a, c, _ in branch_refs]
        gaps = torch.tensor(gaps, dtype=torch.float, device=device)
        gap = self.gap(torch.log2(gaps).long().clamp(max=N_GAP_BUCKETS - 1))
        lex = torch.tensor(lexical, dtype=encoded.dtype, device=device)
        features = torch.cat([g_i, g_j, g_i * g_j, distance, gap, lex], dim=1)
        return self.score(features).squeeze(1)

    @staticmethod
    def _query_matrix(scores: torch.Tensor, queries: List[List[int]]) -> torch.Tensor:
        # scores [P] -> [Q, K] with -inf padding
        width = max(len(q) for q in queries)
        index = torch.full((len(queries), width), -1, dtype=torch.long, device=scores.device)
        for q, members in enumerate(queries):
            index[q, : len(members)] = torch.tensor(members, device=scores.device)
        matrix = scores[index.clamp(min=0)]
        return matrix.masked_fill(index < 0, float("-inf"))

    def loss(
        self, encoded: torch.Tensor, rows: Sequence[Sequence[Sequence[Branch]]], keys: TokenKeys
    ) -> torch.Tensor:
        """Summed cross-entropy of the gold antecedents of the gold later branches."""
        pairs, queries, gold, lexical, (_, refs) = self._pairs(rows, keys)
        kept = [q for q, g in enumerate(gold) if g >= 0]
        if not kept:
            return encoded.sum() * 0.0
        matrix = self._query_matrix(self._scores(encoded, pairs, lexical, refs), queries)
        log_probs = torch.log_softmax(matrix[kept], dim=1)
        rows = torch.arange(len(kept), device=matrix.device)
        columns = torch.tensor([gold[q] for q in kept], device=matrix.device)
        return -log_probs[rows, columns].sum()

    def predict(
        self, encoded: torch.Tensor, rows: Sequence[Sequence[Sequence[Branch]]], keys: TokenKeys
    ) -> List[List[List[Branch]]]:
        """Fill in the antecedent of every later branch (the best-scoring candidate)."""
        return predict_links([self], [encoded], rows, keys)


def predict_links(
    linkers: Sequence[BranchLinker],
    encoded: Sequence[torch.Tensor],
    rows: Sequence[Sequence[Sequence[Branch]]],
    keys: TokenKeys,
) -> List[List[List[Branch]]]:
    """Fill in the antecedent of every later branch: the candidate with the highest
    log-probability averaged over the linkers (one linker: its best-scoring candidate).

    linkers (Sequence[BranchLinker]): linkers with the same ``max_back``.
    encoded (Sequence[torch.Tensor]): per linker, the encoded tokens [B, T, nE] it reads.
    rows (Sequence): per stratum, per doc, the branches (antecedents unknown).
    keys (TokenKeys): per doc, the tokens' (form, ending) hashes.
    RETURNS (List[List[List[Branch]]]): the rows with antecedents.
    """
    return scored_links(linkers, encoded, rows, keys)[0]


def scored_links(
    linkers: Sequence[BranchLinker],
    encoded: Sequence[torch.Tensor],
    rows: Sequence[Sequence[Sequence[Branch]]],
    keys: TokenKeys,
) -> Tuple[List[List[List[Branch]]], List[List[List[Optional[float]]]]]:
    """As ``predict_links``, with the probability of each chosen link: the softmax,
    over the branch's candidates, of the linkers' averaged log-probabilities (the
    product of the linkers' distributions, normalised).

    RETURNS (Tuple[List, List]): the rows with antecedents and, aligned with them, per
        branch the probability of its link (None for a branch that opens a parallelism).
    """
    filled = [[list(row) for row in stratum] for stratum in rows]
    probs: List[List[List[Optional[float]]]] = [
        [[None] * len(row) for row in stratum] for stratum in rows
    ]
    pairs, queries, _, lexical, (where, refs) = linkers[0]._pairs(rows, keys)
    if not queries:
        return filled, probs
    log_probs = [
        torch.log_softmax(
            linker._query_matrix(linker._scores(states, pairs, lexical, refs), queries), dim=1
        )
        for linker, states in zip(linkers, encoded, strict=True)
    ]
    chosen = torch.softmax(torch.stack(log_probs).mean(0), dim=1).max(dim=1)
    best, values = chosen.indices.tolist(), chosen.values.tolist()
    for (s, b, i), query, choice, value in zip(where, queries, best, values, strict=True):
        start, end, later, _ = filled[s][b][i]
        filled[s][b][i] = (start, end, later, pairs[query[choice]][2])
        probs[s][b][i] = float(value)
    return filled, probs
