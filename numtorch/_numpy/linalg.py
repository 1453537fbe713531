"""``numtorch._numpy.linalg``: NumPy's ``numpy.linalg`` basics on ndarrays.

Integer and bool inputs are computed in float64 (NumPy's rule); the computation is the
shared implementation in ``numtorch._ops.numpy_api.FUNCTIONS`` (Note [One implementation
per NumPy function] in ``_funcs``). Decompositions return plain tuples of ndarrays where
NumPy returns its named result tuples (``SVDResult`` …); unpacking works the same.
"""
from __future__ import annotations

import numpy as np

from .._ops.numpy_api import FUNCTIONS
from ._ndarray import to_tensor, cast, wrap

LinAlgError = np.linalg.LinAlgError


def _float(a):
    t = to_tensor(a)
    return cast(t, np.float64) if t.dtype.np.kind in "biu" else t


def _square(t, name):
    if t.ndim < 2:
        raise LinAlgError(f"{t.ndim}-dimensional array given. Array must be at least "
                          "two-dimensional")
    if t.shape[-1] != t.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return t


def _call(np_func, *args, **kwargs):
    out = FUNCTIONS[np_func](*args, **kwargs)
    return wrap(tuple(out) if isinstance(out, tuple) else out)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or Frobenius norm (``numpy.linalg.norm``); matrix ``ord`` values are not supported."""
    return _call(np.linalg.norm, _float(x), ord, axis, keepdims)


def inv(a):
    return _call(np.linalg.inv, _square(_float(a), "inv"))


def det(a):
    return _call(np.linalg.det, _square(_float(a), "det"))


def solve(a, b):
    from ._funcs import _promote
    x, y = _promote([_float(a), _float(b)])
    return _call(np.linalg.solve, _square(x, "solve"), y)


def cholesky(a, /, *, upper=False):
    return _call(np.linalg.cholesky, _square(_float(a), "cholesky"), upper=upper)


def qr(a, mode="reduced"):
    return _call(np.linalg.qr, _float(a), mode=mode)


def eigh(a, UPLO="L"):
    return _call(np.linalg.eigh, _square(_float(a), "eigh"), UPLO=UPLO)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    if not compute_uv:
        from .. import linalg as _L
        return wrap(_L.svdvals(_float(a)))
    return _call(np.linalg.svd, _float(a), full_matrices=full_matrices)


def matmul(x1, x2, /):
    from ._ufuncs import matmul as _mm
    return _mm(x1, x2)
