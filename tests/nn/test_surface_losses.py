"""The losses, InstanceNorm and Unfold/Fold layers of numtorch/nn/modules/loss_surface.py
against PyTorch on the same inputs (values, input gradients, running statistics, repr)."""
import numpy as np
import pytest

import numtorch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _f(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


X1, X2 = _f(4, 5), _f(4, 5)
Y4 = np.sign(_f(4))
Y45 = np.sign(_f(4, 5))
COUNTS = RNG.poisson(2.0, (4, 5)).astype(np.float32)


def _twin(make, inputs, grads=None, train=True):
    ours, theirs = make(numtorch), make(torch)
    ours.train(train), theirs.train(train)
    grads = grads or [True] * len(inputs)
    a = [numtorch.tensor(i, requires_grad=g) for i, g in zip(inputs, grads)]
    b = [torch.tensor(i, requires_grad=g) for i, g in zip(inputs, grads)]
    oa, ob = ours(*a), theirs(*b)
    np.testing.assert_allclose(oa.detach().numpy(), ob.detach().numpy(), rtol=1e-5, atol=1e-5)
    (oa * oa).sum().backward(), (ob * ob).sum().backward()
    for p, q, g in zip(a, b, grads):
        if g:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5)
    for p, q in zip(ours.buffers(), theirs.buffers()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("make, inputs, grads", [
    (lambda m: m.nn.MarginRankingLoss(0.3), (X1[:, 0].copy(), X2[:, 0].copy(), Y4), [1, 1, 0]),
    (lambda m: m.nn.MarginRankingLoss(reduction="none"), (X1, X2, Y45), [1, 1, 0]),
    (lambda m: m.nn.HingeEmbeddingLoss(0.5), (X1, Y45), [1, 0]),
    (lambda m: m.nn.CosineEmbeddingLoss(0.1), (X1, X2, Y4), [1, 1, 0]),
    (lambda m: m.nn.TripletMarginLoss(), (X1, X2, X1[::-1].copy()), None),
    (lambda m: m.nn.TripletMarginLoss(0.5, p=1, swap=True, reduction="sum"),
     (X1, X2, X1[::-1].copy()), None),
    (lambda m: m.nn.PoissonNLLLoss(), (X1, COUNTS), [1, 0]),
    (lambda m: m.nn.PoissonNLLLoss(log_input=False, full=True), (np.abs(X1), COUNTS), [1, 0]),
    (lambda m: m.nn.GaussianNLLLoss(), (X1, X2, np.abs(X1) + 0.1), None),
    (lambda m: m.nn.GaussianNLLLoss(full=True, reduction="sum"), (X1, X2, np.abs(X1[:, :1])), None),
    (lambda m: m.nn.MultiLabelSoftMarginLoss(), (X1, (X2 > 0).astype(np.float32)), [1, 0]),
], ids=["margin_ranking", "margin_ranking_none", "hinge", "cosine_embedding", "triplet",
        "triplet_swap_p1", "poisson", "poisson_full", "gaussian", "gaussian_full_bcast",
        "multilabel"])
def test_loss_matches_torch(make, inputs, grads):
    _twin(make, inputs, [bool(g) for g in grads] if grads else None)


@pytest.mark.parametrize("make, shape, train", [
    (lambda m: m.nn.InstanceNorm1d(3), (2, 3, 6), True),
    (lambda m: m.nn.InstanceNorm1d(3, affine=True, track_running_stats=True), (2, 3, 6), True),
    (lambda m: m.nn.InstanceNorm1d(3, track_running_stats=True), (2, 3, 6), False),
    (lambda m: m.nn.InstanceNorm2d(3, affine=True), (2, 3, 4, 4), True),
    (lambda m: m.nn.InstanceNorm2d(3), (3, 4, 4), True),
    (lambda m: m.nn.InstanceNorm3d(2), (1, 2, 3, 2, 2), True),
    (lambda m: m.nn.Unfold(2, padding=1, stride=2), (2, 3, 4, 4), True),
    (lambda m: m.nn.Fold((4, 5), 2), (2, 12, 12), True),
], ids=["in1d", "in1d_affine_running", "in1d_eval", "in2d_affine", "in2d_unbatched", "in3d",
        "unfold", "fold"])
def test_layer_matches_torch(make, shape, train):
    _twin(make, (_f(*shape),), train=train)


def test_loss_errors_match_torch():
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        numtorch.nn.TripletMarginLoss(margin=0)
    with pytest.raises(ValueError, match="var has negative"):
        numtorch.nn.functional.gaussian_nll_loss(numtorch.zeros(2), numtorch.zeros(2),
                                                 -numtorch.ones(2))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input"):
        numtorch.nn.functional.cosine_embedding_loss(numtorch.zeros(2, 3), numtorch.zeros(2, 3),
                                                     numtorch.ones(2, 1))
