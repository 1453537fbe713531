"""Eager cross_entropy as one node (Note [One node for cross entropy]): the same bits as
the composed nll_loss(log_softmax(x)), forward and backward; the cases it must leave to
the composed path; second order; PyTorch as the oracle for values and the node's name."""
import numpy as np
import pytest

import numtorch as torch
from numtorch.func import grad, vmap
from numtorch.nn._fused_cross_entropy import _nll_log_softmax

F = torch.nn.functional


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def _logits(shape, dtype, seed=0):
    a = (np.random.default_rng(seed).standard_normal(shape) * 5).astype(dtype)
    t = np.random.default_rng(seed + 1).integers(0, shape[1], shape[0])
    return a, t


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 7), (128, 10), (4100, 3)])
def test_same_bits_as_the_composed_path(shape, dtype):
    a, t = _logits(shape, dtype)
    a[0, 0] = 1e30 if dtype == np.float32 else 1e300   # a row whose max dominates
    x1, x2 = torch.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    fused = F.cross_entropy(x1 * 2, torch.tensor(t))
    composed = F.nll_loss(F.log_softmax(x2 * 2, 1), torch.tensor(t))
    assert fused.grad_fn.name() == "NllLossBackward0" and fused.grad_fn.prim is _nll_log_softmax
    assert fused.grad_fn.next_functions[0][0].name() == "MulBackward0"   # one node
    assert np.array_equal(_bits(fused.detach().numpy()), _bits(composed.detach().numpy()))
    (fused * 3).backward()
    (composed * 3).backward()
    assert np.array_equal(_bits(x1.grad.numpy()), _bits(x2.grad.numpy()))
    with torch.no_grad():
        assert np.array_equal(_bits(F.cross_entropy(x1, torch.tensor(t)).numpy()),
                              _bits(F.nll_loss(F.log_softmax(x1, 1), torch.tensor(t)).numpy()))


def test_matches_pytorch():
    pt = pytest.importorskip("torch")
    a, t = _logits((16, 5), np.float64)
    ours = torch.tensor(a, requires_grad=True)
    theirs = pt.tensor(a, requires_grad=True)
    lo, lt = F.cross_entropy(ours, torch.tensor(t)), pt.nn.functional.cross_entropy(theirs, pt.tensor(t))
    np.testing.assert_allclose(lo.item(), lt.item(), rtol=1e-14)
    assert lo.grad_fn.name() == lt.grad_fn.name()
    # second order: the gradient's norm, differentiated again (create_graph)
    (go,) = torch.autograd.grad(lo, ours, create_graph=True)
    (gt,) = pt.autograd.grad(lt, theirs, create_graph=True)
    (go * go).sum().backward()
    (gt * gt).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_cases_left_to_the_composed_path():
    a, t = _logits((6, 4), np.float64)
    x = torch.tensor(a, requires_grad=True)
    y = torch.tensor(t)
    # a target equal to ignore_index, class weights, label smoothing, 'sum': the composed
    # path, whose last node is not the fused one
    y_ignored = torch.tensor(np.where(np.arange(6) == 2, -100, t))
    for loss in (F.cross_entropy(x, y_ignored), F.cross_entropy(x, y, weight=torch.ones(4, dtype=torch.float64)),
                 F.cross_entropy(x, y, label_smoothing=0.1), F.cross_entropy(x, y, reduction="sum")):
        assert loss.grad_fn.prim is not _nll_log_softmax
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        F.cross_entropy(x, torch.tensor([4, 0, 0, 0, 0, 0]))
    # under a transform: the composed path, the same values
    g = grad(lambda z: F.cross_entropy(z, y))(torch.tensor(a))
    F.cross_entropy(x, y).backward()
    np.testing.assert_allclose(g.numpy(), x.grad.numpy(), rtol=1e-14)
    v = vmap(lambda z: F.cross_entropy(z, y))(torch.tensor(np.stack([a, 2 * a])))
    np.testing.assert_allclose(v.numpy()[0], F.cross_entropy(torch.tensor(a), y).item(), rtol=1e-14)


def test_an_inplace_write_to_the_logits_is_caught():
    a, t = _logits((4, 3), np.float32)
    x = torch.tensor(a, requires_grad=True)
    z = x * 1
    loss = F.cross_entropy(z, torch.tensor(t))
    with torch.no_grad():
        z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_zero_and_noncontiguous_cases_keep_the_composed_bits():
    # A zero incoming gradient (signs of zero: the scatter's 0 + (-0.0) is +0.0) and
    # logits that are a transposed view (the gather at the targets reads strided rows).
    a, t = _logits((9, 12), np.float32, 3)
    for scale in (0.0, -0.0, 2.5):
        # the same layout for both (NumPy's row sums of a strided array may add in
        # another order than of a contiguous one)
        x1 = torch.tensor(a.T.copy().T, requires_grad=True)
        x2 = torch.tensor(a.T.copy().T, requires_grad=True)
        v1, v2 = x1.t().t(), x2.t().t()      # views with a transpose's strides
        assert not v1._data.flags.c_contiguous
        fused = F.cross_entropy(v1, torch.tensor(t))
        composed = F.nll_loss(F.log_softmax(v2, 1), torch.tensor(t))
        assert fused.grad_fn.prim is _nll_log_softmax
        assert np.array_equal(_bits(fused.detach().numpy()), _bits(composed.detach().numpy()))
        (fused * scale).backward()
        (composed * scale).backward()
        assert np.array_equal(_bits(x1.grad.numpy()), _bits(x2.grad.numpy()))


@pytest.mark.parametrize("targets, ignore_index, fused", [
    ([0, 4, 2, 2], -100, True),     # the common case: two reductions decide it
    ([0, 4, 2, 2], 3, True),        # ignore_index among the classes, in range, absent
    ([0, 4, 2, 2], 9, True),        # ignore_index beyond the classes
    ([0, 3, 2, 3], 3, False),       # present: ignored rows, the composed path
    ([1, 1, 1, 1], 1, False),       # every row ignored: PyTorch's nan
])
def test_ignore_index_and_bounds_match_pytorch(targets, ignore_index, fused):
    pt = pytest.importorskip("torch")
    a, _ = _logits((4, 5), np.float64, 5)
    ours, theirs = torch.tensor(a, requires_grad=True), pt.tensor(a, requires_grad=True)
    lo = F.cross_entropy(ours, torch.tensor(targets), ignore_index=ignore_index)
    lt = pt.nn.functional.cross_entropy(theirs, pt.tensor(targets), ignore_index=ignore_index)
    assert (lo.grad_fn.prim is _nll_log_softmax) == fused
    np.testing.assert_allclose(lo.item(), lt.item(), rtol=1e-14)
    if not np.isnan(lt.item()):
        lo.backward()
        lt.backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize("targets, bad", [([0, -1, 2, 2], -1), ([0, 5, 2, 2], 5),
                                          ([7, 1, -3, 2], 7)])
def test_out_of_range_targets_raise_pytorchs_error(targets, bad):
    pt = pytest.importorskip("torch")
    a, _ = _logits((4, 5), np.float32, 6)
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        F.cross_entropy(torch.tensor(a), torch.tensor(targets))
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        pt.nn.functional.cross_entropy(pt.tensor(a), pt.tensor(targets))
