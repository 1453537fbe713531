"""The eager shortcuts of the ops layer give bit-identical results to the general path.

Each shortcut (Note [Eager fast path], Note [ReLU's zero], the constant broadcast in
``broadcast_to``) skips binds the general path would make; these tests compute the same
values through the general path (a transform, which never takes the shortcuts, or the
NumPy expression the primitives evaluate) and compare the bits, gradients included.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch.func import grad, vmap

DTYPES = [np.float32, np.float64, np.int64, np.int32, np.uint8]


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.reshape(-1).view(np.uint8)


def _same(t, ref):
    got = t.detach().numpy() if isinstance(t, torch.Tensor) else t
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert np.array_equal(_bits(got), _bits(ref))


def _sample(dtype, shape, seed=0):
    a = (np.random.default_rng(seed).standard_normal(shape) * 5).astype(dtype)
    if a.dtype.kind == "f" and a.size >= 4:   # the values where ReLU's definition matters
        a.flat[:4] = [np.nan, -0.0, 0.0, -np.inf]
    return a


@pytest.mark.parametrize("shape", [(), (7,), (64, 100)])   # 6400 elements: the blend select
@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_matches_where(dtype, shape):
    a = _sample(dtype, shape)
    ref = np.where(a <= 0, np.zeros((), dtype), a)
    _same(torch.relu(torch.tensor(a)), ref)                       # eager, no grad
    _same(torch.nn.functional.relu(torch.tensor(a)), ref)
    if shape:
        _same(vmap(torch.relu)(torch.tensor(a)), ref)              # under a transform
    if a.dtype.kind == "f":
        w = torch.tensor(a, requires_grad=True)
        out = torch.relu(w)
        _same(out, ref)
        out.sum().backward()
        _same(w.grad, np.where(a <= 0, 0, 1).astype(dtype))        # 0 at 0, 1 at NaN
        if shape:
            g = vmap(grad(lambda t: torch.relu(t).sum()))(torch.tensor(a.reshape(shape[0], -1)))
            _same(g, np.where(a <= 0, 0, 1).astype(dtype).reshape(shape[0], -1))


def test_relu_meta_and_errors():
    m = torch.relu(torch.empty(3, 4, device="meta", requires_grad=True))
    assert m.shape == (3, 4) and m.device.type == "meta"
    with pytest.raises(RuntimeError, match="Bool"):
        torch.relu(torch.tensor([True, False]))


@pytest.mark.parametrize("op", ["lt", "le", "gt", "ge", "eq", "ne"])
def test_comparison_of_tensors_requiring_grad(op):
    # Comparisons take the fast path even when an operand requires grad (no derivative).
    a, b = _sample(np.float32, (5, 6), 1), _sample(np.float32, (6,), 2)
    w = torch.tensor(a, requires_grad=True)
    for other, ref_other in ((torch.tensor(b), b), (0.5, np.float32(0.5)), (torch.tensor(b, requires_grad=True), b)):
        out = getattr(torch, op)(w, other)
        _same(out, getattr(np, {"lt": "less", "le": "less_equal", "gt": "greater",
                                "ge": "greater_equal", "eq": "equal", "ne": "not_equal"}[op])(a, ref_other))
        assert out.grad_fn is None and not out.requires_grad
        batched = vmap(lambda t: getattr(torch, op)(t, other))(w)   # the strict path
        _same(batched, out.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_division_fast_path_matches_strict(dtype):
    a, b = _sample(dtype, (4, 5), 3), _sample(dtype, (4, 5), 4)
    if a.dtype.kind != "f":
        b[b == 0] = 3
    x, y = torch.tensor(a), torch.tensor(b)
    fast = x / y
    strict = vmap(torch.div)(x, y)          # under vmap: promotion and binds, no shortcut
    _same(fast, strict.numpy())
    expected = np.float32 if a.dtype.kind != "f" else dtype   # ints divide in the default float
    assert fast.numpy().dtype == expected
    if a.dtype.kind == "f":
        w = torch.tensor(a, requires_grad=True)
        _same(w / y, fast.numpy())           # same shape and dtype under autograd: one bind
        (w / y).sum().backward()
        _same(w.grad, (1 / torch.tensor(b)).numpy())


@pytest.mark.parametrize("scalar", [0.01, 3, -2.5])
def test_number_operand_under_autograd(scalar):
    # The number's tensor is broadcast without a recorded node; values and gradients as in NumPy.
    a = _sample(np.float32, (40, 3), 5)
    w = torch.tensor(a, requires_grad=True)
    out = w * scalar - scalar
    _same(out, (a * np.float32(scalar)) - np.float32(scalar))
    assert out.grad_fn.name() == "SubBackward0"
    assert out.grad_fn.next_functions[0][0].name() == "MulBackward0"
    out.sum().backward()
    _same(w.grad, np.full(a.shape, scalar, np.float32))
    _same(vmap(lambda t: t * scalar - scalar)(torch.tensor(a)), out.detach().numpy())


def test_where_with_a_number_operand():
    a = _sample(np.float64, (6, 7), 6)
    c = torch.tensor(a > 0)
    w = torch.tensor(a, requires_grad=True)
    for out, ref in ((torch.where(c, w, 0.0), np.where(a > 0, a, 0.0)),
                     (torch.where(c, 1.5, w), np.where(a > 0, 1.5, a)),
                     (torch.where(c, w, torch.tensor(a[0])), np.where(a > 0, a, a[0]))):
        _same(out, ref)
        (g,) = torch.autograd.grad(out.sum(), [w])
        assert g.shape == w.shape
    (g,) = torch.autograd.grad(torch.where(c, w, 0.0).sum(), [w])
    _same(g, (a > 0).astype(np.float64))


def test_version_checks_follow_what_backward_reads():
    # Note [What backward reads], through the cached per-pattern plans of the engine: w's
    # gradient in w * k reads k only, so writing w is fine and writing k is an error.
    w = torch.ones(3, requires_grad=True)
    k = torch.full((3,), 2.0)
    y = w * k
    with torch.no_grad():
        w.add_(1)
    y.sum().backward()
    assert np.array_equal(w.grad.numpy(), np.full(3, 2.0, np.float32))
    y = w * k
    k.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_outer_product_contraction(dtype):
    # A contraction over a dim of size 1 is an outer product (one example's weight
    # gradient): computed as a broadcast multiply, the same values as the GEMM's.
    rng = np.random.default_rng(7)
    g, x = rng.standard_normal((1, 300)).astype(dtype), rng.standard_normal((1, 200)).astype(dtype)
    _same(torch.tensor(g).T @ torch.tensor(x), np.outer(g, x).astype(dtype))
    w = torch.tensor(rng.standard_normal((300, 200)).astype(dtype), requires_grad=True)
    (torch.tensor(x) @ w.T).mul(torch.tensor(g)).sum().backward()
    _same(w.grad, np.outer(g, x).astype(dtype))
