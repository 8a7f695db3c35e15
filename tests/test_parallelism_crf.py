"""ConstrainedCRF against brute-force enumeration of all tag paths on tiny inputs."""

import itertools
import math
from typing import Dict, List, Tuple

import numpy
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_rhetoric.parallelism.crf import FORBIDDEN, ConstrainedCRF

SETTINGS = settings(max_examples=40, deadline=None)


def make_case(num_tags: int, lengths: List[int], seed: int, density: float):
    """A CRF with random scores and random constraint masks, plus padded emissions,
    random tags and a left-aligned mask. Padding holds garbage on purpose."""
    rng = numpy.random.default_rng(seed)
    start = rng.random(num_tags) < density
    trans = rng.random((num_tags, num_tags)) < density
    end = rng.random(num_tags) < density
    anchor = rng.integers(num_tags)  # a constant path of this tag is always allowed
    start[anchor] = end[anchor] = trans[anchor, anchor] = True
    crf = ConstrainedCRF(num_tags, start, trans, end).double()
    with torch.no_grad():
        for param in crf.parameters():
            param.copy_(torch.from_numpy(rng.normal(size=tuple(param.shape))))
    width = max(lengths)
    emissions = torch.from_numpy(rng.normal(size=(len(lengths), width, num_tags)) * 2)
    mask = torch.tensor([[t < n for t in range(width)] for n in lengths])
    return crf, emissions, mask


def enumerate_paths(crf: ConstrainedCRF, emissions: torch.Tensor) -> Dict[Tuple[int, ...], float]:
    """Score of every allowed path of one unpadded sequence ([T, K]), from the raw
    parameters and masks (independent of the CRF's own penalty arithmetic)."""
    start, trans, end = crf.start_scores, crf.transition_scores, crf.end_scores
    start_ok, trans_ok, end_ok = crf.start_allowed, crf.trans_allowed, crf.end_allowed
    length, num_tags = emissions.shape
    scores = {}
    start, trans, end = start.detach(), trans.detach(), end.detach()
    for path in itertools.product(range(num_tags), repeat=length):
        if not (start_ok[path[0]] and end_ok[path[-1]]):
            continue
        if not all(trans_ok[a, b] for a, b in zip(path[:-1], path[1:], strict=True)):
            continue
        score = start[path[0]] + end[path[-1]]
        score = score + sum(emissions[t, k] for t, k in enumerate(path))
        score = score + sum(trans[a, b] for a, b in zip(path[:-1], path[1:], strict=True))
        scores[path] = float(score)
    return scores


def logsumexp(values) -> float:
    values = list(values)
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


case_args = dict(
    num_tags=st.integers(1, 4),
    lengths=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    seed=st.integers(0, 2**32 - 1),
    density=st.sampled_from([0.5, 0.75, 1.0]),
)


def cases(num_tags, lengths, seed, density):
    crf, emissions, mask = make_case(num_tags, lengths, seed, density)
    brute = [enumerate_paths(crf, emissions[b, :n].detach()) for b, n in enumerate(lengths)]
    assert all(brute)  # the anchor tag guarantees at least one allowed path
    return crf, emissions, mask, brute


@pytest.mark.parametrize("algorithm", ["scan", "forward"])
@SETTINGS
@given(**case_args)
def test_log_partition_matches_enumeration(algorithm, num_tags, lengths, seed, density):
    crf, emissions, mask, brute = cases(num_tags, lengths, seed, density)
    crf.algorithm = algorithm
    log_z = crf.log_partition(emissions, mask)
    assert log_z.shape == (len(lengths),)
    for b, scores in enumerate(brute):
        assert log_z[b].item() == pytest.approx(logsumexp(scores.values()), abs=1e-8)


@SETTINGS
@given(**case_args)
def test_viterbi_matches_enumeration(num_tags, lengths, seed, density):
    crf, emissions, mask, brute = cases(num_tags, lengths, seed, density)
    paths, scores = crf.viterbi(emissions, mask)
    assert paths == crf.decode(emissions, mask)
    for b, enumerated in enumerate(brute):
        assert len(paths[b]) == lengths[b]
        best = max(enumerated.values())
        assert tuple(paths[b]) in enumerated  # the decoded path is allowed
        assert enumerated[tuple(paths[b])] == pytest.approx(best, abs=1e-8)
        assert scores[b].item() == pytest.approx(best, abs=1e-8)


@SETTINGS
@given(**case_args)
def test_marginals_match_enumeration(num_tags, lengths, seed, density):
    crf, emissions, mask, brute = cases(num_tags, lengths, seed, density)
    marginals = crf.marginals(emissions, mask).detach()
    assert marginals.shape == emissions.shape
    for b, enumerated in enumerate(brute):
        log_z = logsumexp(enumerated.values())
        expected = numpy.zeros((emissions.size(1), num_tags))
        for path, score in enumerated.items():
            for t, k in enumerate(path):
                expected[t, k] += math.exp(score - log_z)
        numpy.testing.assert_allclose(marginals[b].numpy(), expected, atol=1e-8)
        numpy.testing.assert_allclose(marginals[b, : lengths[b]].sum(1).numpy(), 1.0)
        assert marginals[b, lengths[b] :].abs().sum().item() == 0.0


@SETTINGS
@given(**case_args)
def test_log_likelihood_of_every_allowed_path(num_tags, lengths, seed, density):
    crf, emissions, mask, brute = cases(num_tags, lengths, seed, density)
    width = emissions.size(1)
    # one batch per combination of one enumerated path per sequence would explode; score
    # each sequence's paths in a batch of its own, padded with garbage tags
    for b, enumerated in enumerate(brute):
        log_z = logsumexp(enumerated.values())
        paths = list(enumerated)
        tags = torch.tensor([list(p) + [num_tags - 1] * (width - len(p)) for p in paths])
        ems = emissions[b : b + 1].expand(len(paths), -1, -1)
        msk = mask[b : b + 1].expand(len(paths), -1)
        llh = crf.log_likelihood(ems, tags, msk)
        expected = [enumerated[p] - log_z for p in paths]
        numpy.testing.assert_allclose(llh.detach().numpy(), expected, atol=1e-8)
        assert logsumexp(llh.tolist()) == pytest.approx(0.0, abs=1e-8)
        loss = crf(ems, tags, msk, reduction="none")
        numpy.testing.assert_allclose(loss.detach().numpy(), -numpy.array(expected), atol=1e-8)


@SETTINGS
@given(**case_args)
def test_batch_equals_single_sequences(num_tags, lengths, seed, density):
    crf, emissions, mask, brute = cases(num_tags, lengths, seed, density)
    batch_z = crf.log_partition(emissions, mask)
    batch_paths = crf.decode(emissions, mask)
    batch_marginals = crf.marginals(emissions, mask).detach()
    for b, n in enumerate(lengths):
        single = emissions[b : b + 1, :n]
        assert crf.log_partition(single).item() == pytest.approx(batch_z[b].item(), abs=1e-9)
        assert crf.decode(single) == [batch_paths[b]]
        numpy.testing.assert_allclose(
            crf.marginals(single)[0].detach().numpy(), batch_marginals[b, :n].numpy(), atol=1e-10
        )


@SETTINGS
@given(**case_args)
def test_gradients_finite_under_constraints(num_tags, lengths, seed, density):
    crf, emissions, mask, brute = cases(num_tags, lengths, seed, density)
    emissions = emissions.clone().requires_grad_(True)
    tags = torch.zeros(mask.shape, dtype=torch.long)
    for b, enumerated in enumerate(brute):
        best = max(enumerated, key=enumerated.get)
        tags[b, : lengths[b]] = torch.tensor(best)
    loss = crf(emissions, tags, mask, reduction="sum")
    loss.backward()
    assert torch.isfinite(loss)
    for grad in [emissions.grad] + [p.grad for p in crf.parameters()]:
        assert grad is not None and bool(torch.isfinite(grad).all())
    # forbidden transitions carry no probability mass, hence no gradient
    forbidden = ~crf.trans_allowed
    assert crf.transition_scores.grad[forbidden].abs().sum().item() < 1e-12
    # the gradient of log Z w.r.t. the emissions is the marginals
    crf.zero_grad()
    em = emissions.detach().clone().requires_grad_(True)
    crf.log_partition(em, mask).sum().backward()
    marginals = crf.marginals(emissions.detach(), mask).detach()
    numpy.testing.assert_allclose(em.grad.numpy(), marginals.numpy(), atol=1e-8)


@SETTINGS
@given(
    num_tags=st.integers(1, 8),
    lengths=st.lists(st.integers(1, 70), min_size=1, max_size=4),
    seed=st.integers(0, 2**32 - 1),
    density=st.sampled_from([0.5, 0.75, 1.0]),
)
def test_scan_equals_the_forward_algorithm_on_long_sequences(num_tags, lengths, seed, density):
    """The pairwise reduction pads odd rounds with the identity and puts the identity
    past each sequence's end: value and every gradient equal the forward algorithm's
    on lengths the enumeration cannot reach."""
    crf, emissions, mask = make_case(num_tags, lengths, seed, density)
    tags = torch.zeros(mask.shape, dtype=torch.long)
    tags[:] = int(torch.nonzero(crf.trans_allowed.diagonal() & crf.start_allowed
                                & crf.end_allowed)[0])  # fmt: skip
    results = {}
    for algorithm in ("forward", "scan"):
        crf.algorithm = algorithm
        crf.zero_grad()
        em = emissions.clone().requires_grad_(True)
        loss = crf(em, tags, mask, reduction="sum")
        loss.backward()
        grads = [em.grad] + [p.grad for p in crf.parameters()]
        results[algorithm] = (crf.log_partition(emissions, mask).detach(), loss.detach(), grads)
    forward, scan = results["forward"], results["scan"]
    numpy.testing.assert_allclose(scan[0].numpy(), forward[0].numpy(), rtol=1e-10, atol=1e-9)
    assert scan[1].item() == pytest.approx(forward[1].item(), rel=1e-10, abs=1e-9)
    for mine, theirs in zip(scan[2], forward[2], strict=True):
        numpy.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-8, atol=1e-9)


def test_auto_takes_the_scan_for_small_cpu_batches_and_float32_stays_close(monkeypatch):
    assert ConstrainedCRF.algorithm == "auto"
    crf, emissions, mask = make_case(7, [640, 300, 17], seed=3, density=0.75)
    crf, emissions = crf.float(), emissions.float()
    taken = []
    for name in ("_scan_log_z", "_forward_scores"):
        original = getattr(ConstrainedCRF, name)

        def spy(self, *args, _name=name, _original=original):
            taken.append(_name)
            return _original(self, *args)

        monkeypatch.setattr(ConstrainedCRF, name, spy)
    scan = crf.log_partition(emissions, mask)  # B * K^3 = 1,029: the scan
    crf.log_partition(emissions.repeat(5, 1, 1), mask.repeat(5, 1))  # 5,145: forward
    assert taken == ["_scan_log_z", "_forward_scores"]
    crf.algorithm = "nope"
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        crf.log_partition(emissions, mask)
    crf.algorithm = "forward"
    forward = crf.log_partition(emissions, mask)
    numpy.testing.assert_allclose(scan.detach().numpy(), forward.detach().numpy(), rtol=1e-5)


@pytest.mark.parametrize("algorithm", ["scan", "forward"])
def test_the_loss_keeps_float32_exact_when_emissions_are_large(algorithm):
    """A trained head's emissions can be in the hundreds over 600 tokens (log Z ~ 1e5):
    the loss takes each position's best score out first, which leaves it unchanged
    (checked in float64) and keeps float32 within 0.01 of the float64 loss (uncentred,
    the scan was 0.09 off), and the marginals within 0.02."""
    crf, emissions, mask = make_case(7, [640, 500, 93], seed=5, density=0.75)
    rng = numpy.random.default_rng(5)
    emissions = emissions * 40 + torch.from_numpy(rng.normal(150, 50, size=(3, 640, 1)))
    tags = torch.zeros(mask.shape, dtype=torch.long)
    tags[:] = int(torch.nonzero(crf.trans_allowed.diagonal() & crf.start_allowed
                                & crf.end_allowed)[0])  # fmt: skip
    crf.algorithm = algorithm
    exact = crf.log_likelihood(emissions, tags, mask).detach()
    uncentred = crf.path_score(emissions, tags, mask) - crf._forward_scores(emissions, mask)[1]
    numpy.testing.assert_allclose(exact.numpy(), uncentred.detach().numpy(), rtol=1e-9)
    single = crf.float().log_likelihood(emissions.float(), tags, mask)
    numpy.testing.assert_allclose(single.detach().double().numpy(), exact.numpy(),
                                  atol=1e-2)  # fmt: skip
    marginals = crf.marginals(emissions.float(), mask)
    reference = crf.double().marginals(emissions, mask)
    numpy.testing.assert_allclose(
        marginals.detach().double().numpy(), reference.detach().numpy(), atol=0.02
    )  # uncentred: 0.21 off


def bio_crf() -> ConstrainedCRF:
    # tags: 0 = O, 1 = B, 2 = I; I may not start a sequence nor follow O
    start = numpy.array([True, True, False])
    trans = numpy.ones((3, 3), dtype=bool)
    trans[0, 2] = False
    return ConstrainedCRF(3, start_mask=start, trans_mask=trans)


def test_bio_constraints_respected_by_decode():
    crf = bio_crf()
    with torch.no_grad():
        for param in crf.parameters():
            param.zero_()
    emissions = torch.zeros(2, 4, 3)
    emissions[:, :, 2] = 5.0  # I everywhere would win without constraints
    emissions[1, 2, 0] = 20.0  # force an O in the middle of sequence 1
    emissions[1, 3, 1] = 1.0  # then B beats O, and I is forbidden after O
    paths = crf.decode(emissions, torch.tensor([[1, 1, 1, 1], [1, 1, 1, 1]]).bool())
    assert paths[0] == [1, 2, 2, 2]
    assert paths[1] == [1, 2, 0, 1]


@pytest.mark.parametrize(
    "tags,message",
    [
        ([[2, 2, 0]], "not allowed as start tag (sequence 0, position 0)"),
        ([[1, 0, 2]], "transition 0 -> 2 is not allowed (sequence 0, positions 1-2)"),
        ([[1, 5, 0]], "tag 5 out of range at (0, 1)"),
        ([[1, 2, -1]], "tag -1 out of range at (0, 2)"),
    ],
)
def test_check_tags_names_offending_position(tags, message):
    crf = bio_crf()
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        crf(torch.zeros(1, 3, 3), torch.tensor(tags), torch.ones(1, 3, dtype=torch.bool))


def test_check_tags_end_and_padding():
    crf = ConstrainedCRF(2, end_mask=numpy.array([True, False]))
    mask = torch.tensor([[True, True, True], [True, True, False]])
    with pytest.raises(ValueError, match=r"as end tag \(sequence 1, position 1\)"):
        crf(torch.zeros(2, 3, 2), torch.tensor([[0, 0, 0], [0, 1, 0]]), mask)
    # garbage (even out-of-range) tags in the padding are ignored
    loss = crf(torch.zeros(2, 3, 2), torch.tensor([[0, 1, 0], [1, 0, -100]]), mask)
    assert torch.isfinite(loss)


def test_mask_validation():
    crf = ConstrainedCRF(3)
    emissions = torch.zeros(2, 3, 3)
    with pytest.raises(ValueError, match=r"mask\[:, 0\] must be True"):
        crf.log_partition(emissions, torch.tensor([[1, 1, 0], [0, 0, 0]]).bool())
    with pytest.raises(ValueError, match="left-aligned"):
        crf.log_partition(emissions, torch.tensor([[1, 0, 1], [1, 1, 1]]).bool())
    with pytest.raises(ValueError, match="mask has shape"):
        crf.log_partition(emissions, torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"emissions must have shape \[B, T, 3\]"):
        crf.log_partition(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="mask\\[:, 0\\] must be True"):
        crf.log_partition(torch.zeros(2, 0, 3), torch.zeros(2, 0, dtype=torch.bool))
    with pytest.raises(ValueError, match="trans_mask has shape"):
        ConstrainedCRF(3, trans_mask=numpy.ones((3, 2), dtype=bool))
    with pytest.raises(ValueError, match="unknown reduction"):
        crf(emissions, torch.zeros(2, 3, dtype=torch.long), reduction="avg")


def test_empty_batch():
    crf = bio_crf()
    emissions = torch.zeros(0, 4, 3, requires_grad=True)
    mask = torch.zeros(0, 4, dtype=torch.bool)
    tags = torch.zeros(0, 4, dtype=torch.long)
    assert crf.log_partition(emissions, mask).shape == (0,)
    assert crf.log_likelihood(emissions, tags, mask).shape == (0,)
    assert crf.decode(emissions, mask) == []
    assert crf.marginals(emissions, mask).shape == (0, 4, 3)
    loss = crf(emissions, tags, mask)
    assert loss.item() == 0.0
    loss.backward()


def test_length_one_sequences():
    crf = bio_crf().double()
    emissions = torch.randn(3, 1, 3, dtype=torch.float64)
    start, _, end = crf._scores(torch.float64)
    expected = torch.logsumexp(start + emissions[:, 0] + end, 1)
    torch.testing.assert_close(crf.log_partition(emissions), expected)
    assert all(len(p) == 1 and p[0] != 2 for p in crf.decode(emissions))
    assert crf.marginals(emissions)[:, 0, 2].max().item() < 1e-12


def test_penalty_is_a_buffer_and_state_dict_round_trips():
    crf = bio_crf()
    names = dict(crf.named_parameters())
    assert set(names) == {"start_scores", "transition_scores", "end_scores"}
    state = crf.state_dict()
    assert state["trans_allowed"].dtype == torch.bool
    other = ConstrainedCRF(3)
    other.load_state_dict(state)
    assert not bool(other.trans_allowed[0, 2]) and not bool(other.start_allowed[2])
    emissions = torch.randn(2, 5, 3)
    torch.testing.assert_close(other.log_partition(emissions), crf.log_partition(emissions))
    assert FORBIDDEN < -1e3


def test_training_learns_constrained_tags():
    torch.manual_seed(0)
    crf = bio_crf()
    emissions = torch.randn(4, 6, 3)
    tags = torch.tensor([[1, 2, 2, 0, 1, 2]] * 4)
    params = torch.nn.Parameter(emissions.clone())
    optimizer = torch.optim.Adam(list(crf.parameters()) + [params], lr=0.1)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = crf(params, tags)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] * 0.2
    assert crf.decode(params.detach()) == tags.tolist()


def test_matches_pytorch_crf_if_installed():
    torchcrf = pytest.importorskip("torchcrf")
    torch.manual_seed(1)
    ours = ConstrainedCRF(4)
    theirs = torchcrf.CRF(4, batch_first=True)
    with torch.no_grad():
        theirs.start_transitions.copy_(ours.start_scores)
        theirs.end_transitions.copy_(ours.end_scores)
        theirs.transitions.copy_(ours.transition_scores)
    emissions = torch.randn(3, 5, 4)
    mask = torch.tensor([[1] * 5, [1] * 3 + [0] * 2, [1] + [0] * 4]).bool()
    tags = torch.randint(0, 4, (3, 5))
    torch.testing.assert_close(
        ours.log_likelihood(emissions, tags, mask), theirs(emissions, tags, mask, "none")
    )
    assert ours.decode(emissions, mask) == theirs.decode(emissions, mask)
