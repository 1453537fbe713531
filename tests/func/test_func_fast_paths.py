"""The shortcuts of the transforms' hot paths give the general path's values.

Note [A constant exponent] (pow's derivative under any transform), Note [Unbatched
constants] (a batch rule broadcasting a plain array without a bind), Note [Tracer dtypes]
and Note [Backward below its level]: each test checks values against closed forms, finite
differences or Python loops, and each shortcut also has a test of a case it must not take
(an exponent that carries a gradient or differs per example; an unbatched operand that
requires grad, belongs to an outer grad, or has a symbolic batch size; a backward under
other levels, which must still see them).
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._core import primitive as _prim
from numtorch.func import grad, make_graph, vmap

F64 = torch.float64


def _positive(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.uniform(0.5, 2.0, shape))


@pytest.mark.parametrize("c", [2.0, 3.0, 0.5, 1.0, -1.5])
def test_constant_exponent_under_vmap_of_grad_matches_closed_form(c):
    xs = _positive(4, 3)
    g = vmap(grad(lambda x: (x ** c).sum()))(xs)
    np.testing.assert_allclose(g.numpy(), c * xs.numpy() ** (c - 1), rtol=1e-12)


@pytest.mark.parametrize("c", [2.0, 3.0, 0.5])
def test_constant_exponent_second_order_under_grad_of_vmap_of_grad(c):
    # d/dx sum_i (c * x_i ** (c - 1)) = c * (c - 1) * x ** (c - 2): the first derivative is
    # recorded by the outer grad through vmap, as in MAML's meta-gradient.
    xs = _positive(4, 3, seed=1)
    outer = grad(lambda xs: vmap(grad(lambda x: (x ** c).sum()))(xs).sum())(xs)
    np.testing.assert_allclose(outer.numpy(), c * (c - 1) * xs.numpy() ** (c - 2), rtol=1e-12)


def test_maml_like_inner_step_matches_finite_differences():
    # The meta-gradient of one inner SGD step of a squared loss, per task under vmap,
    # against central differences of the same computation done one task at a time.
    rng = np.random.default_rng(2)
    w0 = torch.tensor(rng.standard_normal(3))
    xs, ys = torch.tensor(rng.standard_normal((5, 4, 3))), torch.tensor(rng.standard_normal((5, 4)))

    def loss(w, x, y):
        return ((x @ w - y) ** 2).mean()

    def adapted(w, x, y):
        return loss(w - 0.1 * grad(loss)(w, x, y), x, y)

    meta = grad(lambda w: vmap(adapted, in_dims=(None, 0, 0))(w, xs, ys).mean())(w0)

    def meta_loss(w):
        return sum(adapted(w, xs[i], ys[i]).item() for i in range(5)) / 5

    eps, base = 1e-6, w0.numpy()
    fd = [(meta_loss(torch.tensor(base + eps * e)) - meta_loss(torch.tensor(base - eps * e)))
          / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(meta.numpy(), fd, rtol=1e-6, atol=1e-9)


def test_exponent_that_requires_grad_takes_the_general_path():
    # The exponent is the differentiated input: d/dy x ** y = log(x) * x ** y, which the
    # constant-exponent shortcut (it reads y as a number) must not produce.
    x = _positive(3, seed=3)
    ys = torch.tensor([[2.0, 2.0, 2.0], [0.5, 1.5, 3.0]], dtype=F64)
    g = vmap(grad(lambda y: (x ** y).sum()))(ys)
    xn = x.numpy()
    np.testing.assert_allclose(g.numpy(), np.log(xn) * xn ** ys.numpy(), rtol=1e-12)
    gx = vmap(grad(lambda x, y: (x ** y).sum()), in_dims=(None, 0))(x, ys)
    np.testing.assert_allclose(gx.numpy(), ys.numpy() * xn ** (ys.numpy() - 1), rtol=1e-12)


def test_exponent_batched_per_example_takes_the_general_path():
    # Each example has its own (constant-looking) exponent: a batched value, not a number.
    xs = _positive(3, 2, seed=4)
    cs = torch.tensor([[2.0, 2.0], [3.0, 3.0], [0.0, 0.0]], dtype=F64)
    g = vmap(grad(lambda x, c: (x ** c).sum()))(xs, cs)
    expected = np.where(cs.numpy() == 0, 0.0, cs.numpy() * xs.numpy() ** (cs.numpy() - 1))
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12)


def test_exponent_matches_pytorch_under_nested_transforms():
    pt = pytest.importorskip("torch")
    xs = np.random.default_rng(5).uniform(0.5, 2.0, (4, 3))

    def per_task(lib, x):
        return (x ** 3 - x ** 2).sum()

    ours = grad(lambda xs: vmap(grad(lambda x: per_task(torch, x)))(xs).sum())(torch.tensor(xs))
    ref = pt.func.grad(lambda xs: pt.func.vmap(pt.func.grad(lambda x: per_task(pt, x)))(xs).sum())(
        pt.tensor(xs))
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12)


# -- Note [Unbatched constants] ---------------------------------------------------------

class _CountBroadcasts:
    """Counts batch-sized broadcast_in_dim binds reaching NumPy or eager autograd."""

    HOOKS = ("eval_bind", "autograd_bind")

    def __enter__(self):
        self.count, self.prev = 0, {h: getattr(_prim, h) for h in self.HOOKS}
        for h in self.HOOKS:
            setattr(_prim, h, self._counting(self.prev[h]))
        return self

    def _counting(self, hook):
        def counting(prim, args, params):
            if prim.name == "broadcast_in_dim" and params["shape"][:1] == (5,):
                self.count += 1
            return hook(prim, args, params)
        return counting

    def __exit__(self, *exc):
        for h in self.HOOKS:
            setattr(_prim, h, self.prev[h])
        return False


def test_plain_unbatched_operand_is_broadcast_without_a_bind():
    xs, c = torch.randn(5, 3, dtype=F64), torch.randn(3, dtype=F64)
    with _CountBroadcasts() as n:
        out = vmap(lambda x: x * c - 1.0)(xs)
    assert n.count == 0
    np.testing.assert_array_equal(out.numpy(), np.stack([xs.numpy()[i] * c.numpy() - 1.0
                                                         for i in range(5)]))


def test_unbatched_operand_that_requires_grad_is_recorded():
    # Eager autograd must see the broadcast: its vjp sums the cotangent over the batch.
    xs = torch.randn(5, 3, dtype=F64)
    c = torch.randn(3, dtype=F64, requires_grad=True)
    with _CountBroadcasts() as n:
        out = vmap(lambda x: x * c)(xs)
    assert n.count == 1 and out.grad_fn is not None
    out.sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), xs.numpy().sum(0), rtol=1e-12)


def test_unbatched_operand_of_an_outer_grad_is_recorded_by_it():
    xs, c = torch.randn(5, 3, dtype=F64), torch.randn(3, dtype=F64)
    g = grad(lambda c: vmap(lambda x: (x * c) ** 2)(xs).sum())(c)
    np.testing.assert_allclose(g.numpy(), (2 * xs.numpy() ** 2 * c.numpy()).sum(0), rtol=1e-12)


def test_symbolic_batch_size_broadcasts_in_the_graph():
    # Under make_graph(dynamic=True) the batch size is a symbol: the broadcast of the
    # unbatched constant must become a graph node, so the graph runs at other sizes.
    c = torch.randn(4)
    g = make_graph(lambda xs: vmap(lambda x: x * c)(xs), dynamic=True)(torch.randn(8, 4))
    assert "broadcast_in_dim(c0, shape=(s0, 4)" in str(g)
    for n in (3, 11):
        x = torch.randn(n, 4)
        np.testing.assert_allclose(g(x)[0].numpy(), (x * c).numpy(), rtol=1e-6)


def test_tracer_dtype_and_shape_are_the_per_level_values():
    # Note [Tracer dtypes]: the cached dtype and shape seen inside nested transforms.
    seen = []

    def f(x):
        seen.append((x.dtype, tuple(x.shape), x.int().dtype))
        return x.sum()

    vmap(grad(f))(torch.randn(5, 2, 3))
    grad(lambda x: vmap(f)(x).sum())(torch.randn(4, 7, dtype=F64))
    assert seen == [(torch.float32, (2, 3), torch.int32), (F64, (7,), torch.int32)]


# -- Note [Backward below its level] ----------------------------------------------------

def test_grad_backward_runs_below_its_level():
    # A hook runs during backward: it sees the stack without the differentiated level,
    # empty for the outermost grad (the eager shortcuts apply) and the levels below
    # otherwise (a vmap, an outer grad: they must still see their binds).
    seen = []

    def f(x):
        y = x.sin()
        y.register_hook(lambda g: seen.append(len(_prim.STACK)))
        return y.sum()

    x = torch.randn(3, dtype=F64)
    np.testing.assert_allclose(grad(f)(x).numpy(), np.cos(x.numpy()), rtol=1e-12)
    xs = torch.randn(2, 3, dtype=F64)
    np.testing.assert_allclose(vmap(grad(f))(xs).numpy(), np.cos(xs.numpy()), rtol=1e-12)
    np.testing.assert_allclose(grad(lambda x: grad(f)(x).sum())(x).numpy(), -np.sin(x.numpy()),
                               rtol=1e-12)
    assert seen == [0, 1, 1]
    assert not _prim.STACK


def test_grad_level_is_restored_when_backward_raises():
    def f(x):
        y = x * 2
        y.register_hook(lambda g: 1 / 0)
        return y.sum()

    with pytest.raises(ZeroDivisionError):
        vmap(grad(f))(torch.randn(2, 3))
    assert not _prim.STACK
    xs = torch.randn(2, 3, dtype=F64)   # the stack works afterwards
    np.testing.assert_allclose(vmap(grad(lambda x: (x * x).sum()))(xs).numpy(), 2 * xs.numpy())
