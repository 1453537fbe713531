"""Eager F.linear with a bias as one node (Note [One node for linear]): the same bits as
the composed dot_general + add, forward and backward, for every mix of operands needing
gradients; the cases it must leave to the composed path; version checks; second order;
PyTorch as the oracle for values and the node's name."""
import numpy as np
import pytest

import numtorch as torch
from numtorch.func import grad, vmap
from numtorch.nn import functional as Fn
from numtorch.nn._fused_linear import _addmm

F = torch.nn.functional


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def _case(n, k, m, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((n, k), (m, k), (m,)))
    x.flat[:3] = [-0.0, np.nan, np.inf] if x.size >= 3 else x.flat[:3]   # edge values
    b[0] = -0.0
    return x, w, b


def _run(arrays, needs, composed, monkeypatch, layout="c"):
    """(out, grads) of linear on fresh leaves; ``composed`` turns the shortcut off."""
    with monkeypatch.context() as mp:
        if composed:
            mp.setattr(Fn, "_fused_linear", lambda *a: None)
        x, w, b = (torch.tensor(a, requires_grad=r) for a, r in zip(arrays, needs))
        xv = x.t().contiguous().t() if layout == "f" else x   # a column-major input
        out = F.linear(xv, w, b)
        node = out.grad_fn
        if any(needs):
            (out * torch.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape)
                                .astype(arrays[0].dtype))).sum().backward()
        return out.detach().numpy(), [t.grad for t in (x, w, b)], node


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(128, 784, 512), (5, 1, 3), (1, 7, 2)])
@pytest.mark.parametrize("needs", [(True, True, True), (False, True, True),
                                   (False, False, True), (True, False, False),
                                   (False, False, False)])
def test_same_bits_as_the_composed_path(shape, dtype, needs, monkeypatch):
    arrays = _case(*shape, dtype)
    for layout in ("c", "f"):
        out, grads, node = _run(arrays, needs, False, monkeypatch, layout)
        ref, ref_grads, ref_node = _run(arrays, needs, True, monkeypatch, layout)
        assert np.array_equal(_bits(out), _bits(ref))
        for g, r in zip(grads, ref_grads):
            assert (g is None) == (r is None)
            if g is not None:
                assert np.array_equal(_bits(g.numpy()), _bits(r.numpy()))
        if any(needs):
            assert node.prim is _addmm and ref_node.name() == "AddBackward0"
        else:
            assert node is None


def test_matches_pytorch_first_and_second_order():
    pt = pytest.importorskip("torch")
    x, w, b = _case(6, 4, 3, np.float64, 1)
    x[0, :3] = [0.5, -1.0, 2.0]                      # finite: second order compares values
    ours = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    theirs = [pt.tensor(a, requires_grad=True) for a in (x, w, b)]
    lo, lt = F.linear(*ours), pt.nn.functional.linear(*theirs)
    assert lo.grad_fn.name() == lt.grad_fn.name() == "AddmmBackward0"
    np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=1e-14)
    go = torch.autograd.grad((lo ** 2).sum(), ours, create_graph=True)
    gt = pt.autograd.grad((lt ** 2).sum(), theirs, create_graph=True)
    sum(g.sum() * (i + 1) for i, g in enumerate(go)).backward()
    sum(g.sum() * (i + 1) for i, g in enumerate(gt)).backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_cases_left_to_the_composed_path():
    x, w, b = (torch.tensor(a, requires_grad=True) for a in _case(4, 3, 2, np.float32, 2))
    for out in (F.linear(x.unsqueeze(0), w, b),                 # 3-D input
                F.linear(x, w),                                  # no bias
                F.linear(x, w, b.double()),                      # bias of another dtype
                torch.nn.Linear(3, 2)(x[0])):                    # 1-D input
        assert out.grad_fn.prim is not _addmm
    assert F.linear(x, w, b.double()).dtype == torch.float64     # promoted, as PyTorch
    m = F.linear(torch.empty(4, 3, device="meta"), torch.empty(2, 3, device="meta"),
                 torch.empty(2, device="meta"))
    assert m.shape == (4, 2) and m.device.type == "meta"
    # under transforms: the composed path, the same values
    xs = np.random.default_rng(3).standard_normal((5, 4, 3)).astype(np.float32)
    v = vmap(lambda z: F.linear(z, w, b))(torch.tensor(xs))
    np.testing.assert_array_equal(v.detach().numpy(), np.stack([F.linear(torch.tensor(z), w, b)
                                                                .detach().numpy() for z in xs]))
    g = grad(lambda bb: F.linear(x.detach(), w.detach(), bb).sum())(b.detach())
    np.testing.assert_array_equal(g.numpy(), np.full(2, 4, np.float32))


def test_version_checks_follow_what_backward_reads():
    # PyTorch's AddmmBackward0 saves the input and the weight, not the bias: writing the
    # bias after the forward is fine, writing the input (read by the weight's gradient)
    # is caught.
    pt = pytest.importorskip("torch")
    for lib in (torch, pt):
        x, w, b = (lib.tensor(a) for a in _case(4, 3, 2, np.float32, 4))
        w.requires_grad_(True)
        b.requires_grad_(True)
        out = lib.nn.functional.linear(x, w, b)
        with lib.no_grad():
            b.add_(1)
        out.sum().backward()
        np.testing.assert_array_equal(b.grad.numpy(), [4, 4])
        out = lib.nn.functional.linear(x, w, b)
        x.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 784, 128), (1, 300, 40), (3, 1, 8), (7, 33, 1000)])
@pytest.mark.parametrize("threads", [1, 2])
def test_fewer_rows_than_outputs_gives_the_composed_bits_in_pytorchs_layout(shape, dtype,
                                                                            threads):
    # Note [Rows before columns in linear]: with fewer rows than outputs the product runs
    # as W x^T; the result is C-contiguous, with the bits of x @ W.T + b at any BLAS
    # thread count, and PyTorch's values
    x, w, b = _case(*shape, dtype, seed=3)
    saved = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        out = F.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b))
        ref = x @ w.T + b
    finally:
        torch.set_num_threads(saved)
    assert out.is_contiguous() and out.stride() == (shape[2], 1)
    assert np.array_equal(_bits(out.numpy()), _bits(ref))
    pt = pytest.importorskip("torch")
    np.testing.assert_allclose(out.numpy(), pt.nn.functional.linear(
        pt.tensor(x), pt.tensor(w), pt.tensor(b)).numpy(), rtol=1e-4 if dtype == np.float32 else 1e-12,
        atol=1e-4 if dtype == np.float32 else 1e-12)
