"""``x.add_(y, alpha=a)`` in one pass (Note [One-pass add with alpha], numtorch/_ops/_axpy.py).

The kernel must give NumPy's two-pass result bit for bit (``x + y * a``: the product
rounded, then the sum), so the references are NumPy expressions; a counting wrapper
shows which calls the kernel took.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._ops import _axpy

needs_kernel = pytest.mark.skipif(not _axpy.available(), reason="no C compiler: NumPy path")


def _pair(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype) * 1e-3)


@pytest.fixture
def kernel_calls(monkeypatch):
    """The dtypes of the kernel calls made while the test runs."""
    calls = []
    if _axpy.available():
        kernels = dict(_axpy._kernels)
        for dt, fn in kernels.items():
            kernels[dt] = lambda *a, _fn=fn, _dt=dt: (calls.append(_dt), _fn(*a))[1]
        monkeypatch.setattr(_axpy, "_kernels", kernels)
    return calls


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 10, 4099, 401408])
def test_add_with_alpha_in_one_pass_rounds_as_numpy(n, dtype, kernel_calls):
    p, g = _pair(n, dtype)
    x = torch.tensor(p)
    assert x.add_(torch.tensor(g), alpha=-0.01) is x
    assert np.array_equal(x.numpy(), p + g * dtype(-0.01))
    assert x._version == 1
    y = torch.tensor(p)
    y.sub_(torch.tensor(g), alpha=0.01)        # sub with alpha: add with -alpha, exactly
    assert np.array_equal(y.numpy(), p - g * dtype(0.01))
    assert kernel_calls == [np.dtype(dtype)] * 2


def test_add_with_alpha_close_to_pytorch():
    pt = pytest.importorskip("torch")
    p, g = _pair((37, 129), np.float32, 1)
    x = torch.tensor(p)
    x.add_(torch.tensor(g), alpha=0.3)
    ref = pt.tensor(p)
    ref.add_(pt.tensor(g), alpha=0.3)          # one fma: equal up to one ulp
    np.testing.assert_array_max_ulp(x.numpy(), ref.numpy(), maxulp=1)


def test_without_the_kernel_numpy_computes_it(monkeypatch, kernel_calls):
    monkeypatch.setattr(_axpy, "_kernels", {})
    monkeypatch.setattr(_axpy, "_unavailable", [True])
    p, g = _pair(4099, np.float32, 2)
    x = torch.tensor(p)
    x.add_(torch.tensor(g), alpha=-0.01)
    assert np.array_equal(x.numpy(), p + g * np.float32(-0.01))
    assert kernel_calls == []


def test_operands_the_kernel_does_not_take(kernel_calls):
    # overlapping views, a broadcast operand, non-contiguous memory, an integer dtype:
    # NumPy's semantics (operands read before the write), as before.
    a = np.arange(12, dtype=np.float32)
    x = torch.tensor(a)
    x[1:].add_(x[:-1], alpha=2.0)
    ref = a.copy()
    ref[1:] = a[1:] + np.float32(2) * a[:-1]
    assert np.array_equal(x.numpy(), ref)
    x = torch.tensor(a.reshape(3, 4))
    x.add_(torch.tensor(a[:4]), alpha=0.5)
    assert np.array_equal(x.numpy(), a.reshape(3, 4) + a[:4] * np.float32(0.5))
    x = torch.tensor(a.reshape(3, 4))
    x.t().add_(torch.ones(4, 3), alpha=-1.0)
    assert np.array_equal(x.numpy(), a.reshape(3, 4) - 1)
    i = torch.arange(5)
    i.add_(torch.ones(5, dtype=torch.int64), alpha=3)
    assert i.tolist() == [3, 4, 5, 6, 7]
    assert kernel_calls == []


def test_add_with_alpha_under_autograd_still_records(kernel_calls):
    w = torch.ones(3, requires_grad=True)
    x = torch.zeros(3)
    x.add_(w, alpha=2.0)              # other requires grad: the generic path records it
    x.sum().backward()
    assert np.array_equal(w.grad.numpy(), np.full(3, 2.0, np.float32))
    assert kernel_calls == []


@needs_kernel
def test_sgd_step_takes_the_kernel(kernel_calls):
    p, g = _pair((64, 33), np.float32, 3)
    w = torch.nn.Parameter(torch.tensor(p))
    opt = torch.optim.SGD([w], lr=0.05)
    ref = p.copy()
    for _ in range(3):
        w.grad = torch.tensor(g)
        opt.step()
        ref = ref + g * np.float32(-0.05)
    assert np.array_equal(w.detach().numpy(), ref)
    assert kernel_calls == [np.dtype(np.float32)] * 3
