"""Shared helpers for the nn tests: PyTorch oracle access, comparisons, finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as nt


def oracle():
    """PyTorch, or skip the test (it is only ever a test oracle)."""
    return pytest.importorskip("torch")


def arr(t):
    """A NumPy copy of a numtorch or PyTorch tensor (detached)."""
    return np.array(t.detach().numpy())


def close(ours, theirs, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(arr(ours), arr(theirs), rtol=rtol, atol=atol)


def tol(dtype):
    """(rtol, atol) for comparing against PyTorch in ``dtype``."""
    return (1e-5, 1e-6) if dtype == "float32" else (1e-11, 1e-12)


def pair(array, dtype="float64", requires_grad=True):
    """The same data as a numtorch and a PyTorch tensor."""
    torch = oracle()
    a = np.asarray(array, dtype=dtype)
    return (nt.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def numerical_grads(f, inputs, eps=1e-6):
    """Central differences of the scalar ``f(*inputs)`` w.r.t. each float64 input."""
    grads = []
    for x in inputs:
        base = x.detach().numpy().copy()
        g = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            vals = []
            for h in (eps, -eps):
                pert = base.copy()
                pert[i] += h
                args = [nt.tensor(pert) if y is x else y.detach() for y in inputs]
                vals.append(float(f(*args)))
            g[i] = (vals[0] - vals[1]) / (2 * eps)
        grads.append(g)
    return grads


def gradcheck(f, *inputs, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Autograd gradients of ``f`` (reduced to a scalar with fixed random weights) equal
    central finite differences, in float64."""
    inputs = [x.detach().double().requires_grad_(True) for x in inputs]
    out = f(*inputs)
    weights = nt.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))

    def scalar(*xs):
        return (f(*xs) * weights).sum()

    analytic = nt.autograd.grad(scalar(*inputs), inputs, allow_unused=True)
    numeric = numerical_grads(scalar, inputs, eps)
    for a, n in zip(analytic, numeric):
        a = np.zeros_like(n) if a is None else a.numpy()
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol)


def load_torch_state(ours, theirs):
    """Load the PyTorch module's state_dict into ours (same keys asserted)."""
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    ours.load_state_dict({k: nt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


def both(torch, arrays):
    """The same float64 arrays as requires-grad leaves of both libraries (None passes)."""
    return ([None if a is None else torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays],
            [None if a is None else nt.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays])


def check_grads(t_leaves, o_leaves, t_mod, o_mod):
    """Input and parameter gradients of ours equal PyTorch's to 1e-10 (float64)."""
    for t, o in zip(t_leaves, o_leaves):
        if t is not None and t.requires_grad:
            np.testing.assert_allclose(arr(o.grad), t.grad.numpy(), rtol=1e-10, atol=1e-10)
    ours = dict(o_mod.named_parameters())
    for name, p in t_mod.named_parameters():
        np.testing.assert_allclose(arr(ours[name].grad), p.grad.numpy(), rtol=1e-10, atol=1e-10,
                                   err_msg=name)
