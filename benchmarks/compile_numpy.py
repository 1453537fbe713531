"""Compiled NumPy code (issue #10): the FAQ's example beside NumPy, Numba and torch.compile.

The function is the FAQ's own, ``np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))`` on
two 1024x64 float64 NumPy arrays, taking and returning NumPy arrays in every column:
numtorch's is ``numtorch.compile`` of it (the default fused C/OpenMP backend), PyTorch's is
``torch.compile`` of the same NumPy function, NumPy's is the function itself, Numba's is
``numba.njit(parallel=True)`` of the loop a NumPy programmer would write for it (Numba does
not fuse the broadcast expression by itself). Compilation happens in the factory, so only
calls are timed. Targets (checked in run.py): numtorch >= 40x faster than NumPy and
<= 0.5x torch.compile's time.
"""
from __future__ import annotations

import numpy as np

from .common import add

FAQ_NAME = "compiled NumPy: FAQ sum(X[:,:,None]*Y[:,None,:]), 1024x64 f64"


def numpy_fn(X, Y):
    """The FAQ's example, verbatim."""
    return np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))


def _inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((1024, 64)), rng.standard_normal((1024, 64))


def _compiled(compile_fn):
    def factory():
        X, Y = _inputs()
        f = compile_fn()(numpy_fn)
        out = f(X, Y)
        np.testing.assert_allclose(out, numpy_fn(X, Y), rtol=1e-9, atol=1e-9)
        return lambda: f(X, Y)
    return factory


def _numtorch_compile():
    import numtorch
    return numtorch.compile


def _torch_compile():
    import torch
    return torch.compile


def _numpy():
    X, Y = _inputs()
    return lambda: numpy_fn(X, Y)


def _numba():
    import numba

    @numba.njit(parallel=True, fastmath=False, cache=False)
    def loop(X, Y):
        n, m = X.shape
        out = np.empty(n)
        for i in numba.prange(n):
            s = 0.0
            for j in range(m):
                for k in range(m):
                    s += X[i, j] * Y[i, k]
            out[i] = s
        return out

    X, Y = _inputs()
    np.testing.assert_allclose(loop(X, Y), numpy_fn(X, Y), rtol=1e-9, atol=1e-9)
    return lambda: loop(X, Y)


def _register():
    from numtorch._inductor import build
    if build.compiler() is None:
        return
    add(FAQ_NAME, "compiled numpy", target=("torch", 0.5),
        note="target: >= 40x faster than NumPy, <= 0.5x torch.compile",
        numtorch=_compiled(_numtorch_compile), numpy=_numpy, torch=_compiled(_torch_compile),
        numba=_numba)


# (workload, framework, minimum speed-up of numtorch over it)
SPEEDUP_TARGETS = ((FAQ_NAME, "numpy", 40.0),)

_register()
