"""The fused training-mode batch_norm primitive (Note [Batch norm primitive]): gradients of
first and second order against PyTorch, vmap against a loop, and what its node keeps."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as nt
import numtorch.nn.functional as F
from numtorch.func import grad, vmap


def _data(shape, seed=0):
    rng = np.random.default_rng(seed)
    c = shape[1]
    return rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c)


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (3, 2, 4, 3)])
def test_first_and_second_order_match_torch(shape):
    torch = pytest.importorskip("torch")
    x, w, b = _data(shape)
    g = np.random.default_rng(1).standard_normal(shape)
    ours = [nt.tensor(a, requires_grad=True) for a in (x, w, b)]
    ref = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = F.batch_norm(ours[0], None, None, ours[1], ours[2], training=True, eps=1e-3)
    tout = torch.nn.functional.batch_norm(ref[0], None, None, ref[1], ref[2], training=True,
                                          eps=1e-3)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-12)
    gs = nt.autograd.grad(out, ours, nt.tensor(g), create_graph=True)
    tgs = torch.autograd.grad(tout, ref, torch.tensor(g), create_graph=True)
    for a, r in zip(gs, tgs):
        np.testing.assert_allclose(a.detach().numpy(), r.detach().numpy(), atol=1e-10)
    # Second order through the vjp (MAML's outer step): d/d(x, w) of |grads|^2.
    s = sum((a * a * (i + 1)).sum() for i, a in enumerate(gs[:2]))
    ts = sum((a * a * (i + 1)).sum() for i, a in enumerate(tgs[:2]))
    hs = nt.autograd.grad(s, ours[:2])
    ths = torch.autograd.grad(ts, ref[:2])
    for a, r in zip(hs, ths):
        np.testing.assert_allclose(a.numpy(), r.numpy(), rtol=1e-9, atol=1e-9)


def test_grad_of_grad_matches_finite_differences():
    x, w, b = _data((5, 2, 3))
    w_t, b_t = nt.tensor(w), nt.tensor(b)

    def inner(x):   # a scalar loss whose gradient still depends on x nonlinearly
        return (F.batch_norm(x, None, None, w_t, b_t, training=True).sin()).sum()

    def outer(x):
        return (grad(inner)(x) ** 2).sum()

    got = grad(outer)(nt.tensor(x)).numpy()
    eps, fd = 1e-6, np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        fd[i] = (outer(nt.tensor(x + d)).item() - outer(nt.tensor(x - d)).item()) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-6)


def test_vmap_with_per_example_weights_matches_a_loop():
    rng = np.random.default_rng(2)
    xs, ws = nt.tensor(rng.standard_normal((3, 4, 2, 5))), nt.tensor(rng.standard_normal((3, 2)))
    f = lambda x, w: F.batch_norm(x, None, None, w, None, training=True)  # noqa: E731
    got = vmap(f)(xs, ws)
    for k in range(3):
        np.testing.assert_allclose(got[k].numpy(), f(xs[k], ws[k]).numpy(), atol=1e-12)
    # An unbatched input with batched weights: the same statistics for every example.
    got = vmap(f, in_dims=(None, 0))(xs[0], ws)
    for k in range(3):
        np.testing.assert_allclose(got[k].numpy(), f(xs[0], ws[k]).numpy(), atol=1e-12)


def test_backward_keeps_the_input_not_the_normalized_output():
    # Note [Saved values]: the full-size output is a memory-free stand-in; x is kept, and
    # the statistics the backward reads are real.
    x = nt.randn(8, 16, 16, 16, requires_grad=True)
    out = F.batch_norm(x, None, None, training=True)
    node = out.grad_fn
    assert node.saved[0]._data is x._data
    assert node.out[0]._data.strides == (0, 0, 0, 0)
    assert node.out[1]._data.strides != (0,) and node.out[2]._data.strides != (0,)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 0.0, atol=1e-4)   # d sum(xhat)/dx = 0


def test_running_stats_follow_the_batch_statistics():
    torch = pytest.importorskip("torch")
    x, w, b = _data((6, 3, 4))
    rm, rv = nt.zeros(3, dtype=nt.float64), nt.ones(3, dtype=nt.float64)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    F.batch_norm(nt.tensor(x), rm, rv, nt.tensor(w), None, training=True, momentum=0.3)
    torch.nn.functional.batch_norm(torch.tensor(x), trm, trv, torch.tensor(w), None,
                                   training=True, momentum=0.3)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), atol=1e-12)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), atol=1e-12)


def test_bad_operands_are_named():
    from numtorch._prims.norm import batch_norm
    x = nt.ones(2, 3, device="meta")   # the shape rule checks (eager binds go to NumPy)
    with pytest.raises(TypeError, match="weight must have the channels' shape"):
        batch_norm.bind(x, nt.ones(4, device="meta"), nt.zeros(3, device="meta"), axes=(0,),
                        eps=1e-5)
    with pytest.raises(RuntimeError, match="floating point input"):
        F.batch_norm(nt.ones(2, 3, dtype=nt.int64), None, None, training=True)


def test_func_vjp_of_training_batch_norm_with_running_stats_as_inputs():
    """func.vjp through a function that writes its running-statistics inputs in place
    (Note [Inputs written in place]): the gradients of x and bias agree with the same
    function without the running statistics (PyTorch's), and those of the statistics,
    which the output does not read in training mode, are zeros."""
    from numtorch.func import vjp
    x, b = nt.randn(3, 2, 4), nt.randn(2)
    rm, rv = nt.randn(2), nt.rand(2) + 0.5
    ct = nt.randn(3, 2, 4)
    out, fn = vjp(lambda x, rm, rv, b: F.batch_norm(x, rm, rv, bias=b, training=True,
                                                    momentum=0.3), x, rm, rv, b)
    gx, grm, grv, gb = fn(ct)
    out_ref, fn_ref = vjp(lambda x, b: F.batch_norm(x, None, None, bias=b, training=True), x, b)
    gx_ref, gb_ref = fn_ref(ct)
    np.testing.assert_allclose(out.numpy(), out_ref.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gx.numpy(), gx_ref.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb.numpy(), ct.numpy().sum((0, 2)), rtol=1e-5)
    assert grm.shape == rm.shape and grv.shape == rv.shape
    assert not grm.numpy().any() and not grv.numpy().any()
