"""OpInfo entries: reductions, scans, softmax and friends."""
from __future__ import annotations

import numpy as np

import numtorch as torch

from ..opinfo import (ALL_REAL, BOOL, FLOATING, INTEGRAL, INT64, SAME, SUM_DTYPE, OpInfo,
                      SampleInput, make, reduction_samples, register)


def _axis(dim, x=None):
    """NumPy's axis for ``dim``; None on a 0-d ``x``, where PyTorch accepts dims 0 and -1."""
    if x is not None and np.ndim(x) == 0:
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def _np_reduction(fn):
    """A reference for ``op(x, dim=None, keepdim=False)`` from a NumPy reduction."""
    def ref(x, dim=None, keepdim=False, **kw):
        return fn(x, axis=_axis(dim, x), keepdims=keepdim, **kw)
    return ref


def _sum_samples(dtype, requires_grad):
    yield from reduction_samples()(dtype, requires_grad)
    yield SampleInput(make((2, 3), dtype, requires_grad), (1,), dict(dtype=torch.float64),
                      name="dtype")
    yield SampleInput(make((0, 3), dtype, requires_grad), (0,), name="empty")


def _sum_ref(x, dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        x = x.astype(dtype.np)
    elif x.dtype.kind in "biu":
        x = x.astype(np.int64)
    return np.sum(x, axis=_axis(dim, x), keepdims=keepdim)


def _mean_ref(x, dim=None, keepdim=False, dtype=None):
    return np.mean(x.astype(dtype.np) if dtype is not None else x, axis=_axis(dim, x), keepdims=keepdim)


def _prod_samples(dtype, requires_grad):
    for s in reduction_samples(low=0.5, high=2, tuple_dims=False, empty_dim=True)(dtype, requires_grad):
        yield s
    x = make((2, 3), dtype, requires_grad)
    if dtype.is_floating_point:
        x = x.detach().clone()
        x[0, 1] = 0.0
        x.requires_grad_(requires_grad)
    yield SampleInput(x, (1,), name="zero")


def _prod_ref(x, dim=None, keepdim=False, dtype=None):
    return np.prod(x.astype(np.int64) if x.dtype.kind in "biu" else x, axis=dim, keepdims=keepdim)


def _nan_samples(dtype, requires_grad):
    yield from reduction_samples(tuple_dims=False)(dtype, requires_grad)
    x = torch.tensor([[1.0, float("nan"), 2.0], [float("nan"), 3.0, 4.0]], dtype=dtype)
    yield SampleInput(x, (1,), name="nan", grad=False)


register(
    OpInfo("sum", ref=_sum_ref, dtypes=ALL_REAL + (torch.complex128,), result_dtype=SUM_DTYPE,
           sample_inputs=_sum_samples),
    OpInfo("nansum", ref=_np_reduction(np.nansum), result_dtype=SAME, sample_inputs=_nan_samples),
    OpInfo("mean", ref=_mean_ref, dtypes=FLOATING + (torch.complex128,), result_dtype=SAME,
           sample_inputs=reduction_samples(empty_dim=True)),
    OpInfo("nanmean", ref=_np_reduction(np.nanmean), result_dtype=SAME, sample_inputs=_nan_samples),
    OpInfo("prod", ref=_prod_ref, dtypes=FLOATING + INTEGRAL, result_dtype=SUM_DTYPE,
           sample_inputs=_prod_samples),
    OpInfo("amax", ref=_np_reduction(np.max), dtypes=FLOATING + INTEGRAL, result_dtype=SAME,
           sample_inputs=reduction_samples()),
    OpInfo("amin", ref=_np_reduction(np.min), dtypes=FLOATING + INTEGRAL, result_dtype=SAME,
           sample_inputs=reduction_samples()),
)


# ---------------------------------------------------------------------------------------
# max/min: the full reduction, (values, indices) along a dim, and the binary form


def _extremum_samples(dtype, requires_grad):
    for s in reduction_samples(tuple_dims=False)(dtype, requires_grad):
        yield s
    yield SampleInput(make((2, 3), dtype, requires_grad), (make((2, 3), dtype, requires_grad),),
                      name="binary")


def _extremum_ref(fn, arg):
    def ref(x, dim=None, keepdim=False):
        if isinstance(dim, np.ndarray):
            return (np.maximum if fn is np.max else np.minimum)(x, dim)
        if dim is None:
            return fn(x)
        values = fn(x, axis=_axis(dim, x), keepdims=keepdim)
        indices = arg(x, axis=dim, keepdims=keepdim) if x.ndim else np.zeros((), np.int64)
        return values, indices
    return ref


def _arg_ref(fn):
    def ref(x, dim=None, keepdim=False):
        if dim is None:
            return fn(x.reshape(-1))
        return fn(x, axis=dim, keepdims=keepdim) if x.ndim else np.zeros((), np.int64)
    return ref


def _arg_samples(dtype, requires_grad):
    yield from reduction_samples(tuple_dims=False)(dtype, requires_grad)
    x = torch.tensor([[1, 3, 3], [2, 2, 0]], dtype=dtype)
    yield SampleInput(x, (1,), name="ties")


register(
    OpInfo("max", ref=_extremum_ref(np.max, np.argmax), dtypes=FLOATING + INTEGRAL,
           result_dtype=SAME, sample_inputs=_extremum_samples),
    OpInfo("min", ref=_extremum_ref(np.min, np.argmin), dtypes=FLOATING + INTEGRAL,
           result_dtype=SAME, sample_inputs=_extremum_samples),
    OpInfo("argmax", ref=_arg_ref(np.argmax), dtypes=FLOATING + INTEGRAL, result_dtype=INT64,
           supports_grad=False, sample_inputs=_arg_samples),
    OpInfo("argmin", ref=_arg_ref(np.argmin), dtypes=FLOATING + INTEGRAL, result_dtype=INT64,
           supports_grad=False, sample_inputs=_arg_samples),
)


def _aminmax_samples(dtype, requires_grad):
    x = make((2, 3), dtype, requires_grad)
    yield SampleInput(x)
    yield SampleInput(x, kwargs=dict(dim=1))
    yield SampleInput(x, kwargs=dict(dim=0, keepdim=True), name="keepdim")


def _aminmax_ref(x, dim=None, keepdim=False):
    return np.min(x, axis=dim, keepdims=keepdim), np.max(x, axis=dim, keepdims=keepdim)


register(OpInfo("aminmax", ref=_aminmax_ref, dtypes=FLOATING + INTEGRAL, result_dtype=SAME,
                sample_inputs=_aminmax_samples))


# ---------------------------------------------------------------------------------------
# var/std and their *_mean variants


def _var_samples(dtype, requires_grad):
    x = make((3, 4), dtype, requires_grad)
    yield SampleInput(x, name="all")
    yield SampleInput(x, (1,))
    yield SampleInput(x, (0,), dict(keepdim=True), name="keepdim")
    yield SampleInput(x, ((0, 1),), dict(correction=0), name="correction0")
    yield SampleInput(x, (-1,), dict(unbiased=False), name="unbiased_false")
    yield SampleInput(make((5,), dtype, requires_grad), (0,), dict(correction=2), name="correction2")
    yield SampleInput(make((), dtype, requires_grad), (0,), dict(correction=0), name="0d_dim")
    yield SampleInput(make((), dtype, requires_grad), (-1,), name="0d_negdim", grad=False)  # NaN
    # Over no elements: NaN (tests/test_edges.py checks var's tangent there is 0, not 0/0).
    yield SampleInput(make((0, 2), dtype, requires_grad), (0,), name="empty_dim", grad=False)
    # A constant row: std's gradient is 0 there (PyTorch masks 0 * inf); var's is too.
    # Not differentiable in the finite-difference sense (|x| at 0), so no grad columns;
    # tests/test_edges.py checks the gradient against PyTorch.
    yield SampleInput(make((1,), dtype, requires_grad).expand(3), (0,), name="constant",
                      grad=False)


def _var_ref(x, dim=None, unbiased=None, keepdim=False, correction=None):
    if correction is None:
        correction = 0 if unbiased is False else 1
    return np.var(x, axis=_axis(dim, x), ddof=correction, keepdims=keepdim)


def _std_ref(*args, **kwargs):
    return np.sqrt(_var_ref(*args, **kwargs))


def _with_mean(ref):
    def both(x, dim=None, unbiased=None, keepdim=False, correction=None):
        return (ref(x, dim, unbiased, keepdim, correction),
                np.mean(x, axis=_axis(dim, x), keepdims=keepdim))
    return both


register(
    OpInfo("var", ref=_var_ref, result_dtype=SAME, sample_inputs=_var_samples),
    OpInfo("std", ref=_std_ref, result_dtype=SAME, sample_inputs=_var_samples),
    OpInfo("var_mean", ref=_with_mean(_var_ref), result_dtype=SAME, sample_inputs=_var_samples),
    OpInfo("std_mean", ref=_with_mean(_std_ref), result_dtype=SAME, sample_inputs=_var_samples),
)


# ---------------------------------------------------------------------------------------
# logsumexp, softmax, log_softmax


def _logsumexp_ref(x, dim, keepdim=False):
    m = np.max(x, axis=_axis(dim, x), keepdims=True) if x.size else 0.0  # empty: log(0) = -inf
    m = np.where(np.isinf(m), 0, m)
    out = np.log(np.sum(np.exp(x - m), axis=_axis(dim, x), keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=_axis(dim, x))


def _softmax_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad), (1,))
    yield SampleInput(make((2, 3, 2), dtype, requires_grad), (-2,), name="negdim")
    yield SampleInput(make((4,), dtype, requires_grad), (0,), name="1d")
    yield SampleInput(make((2, 3), dtype, requires_grad), (0,), dict(dtype=torch.float64),
                      name="dtype")
    yield SampleInput(make((), dtype, requires_grad), (0,), name="0d")
    yield SampleInput(make((), dtype, requires_grad), (-1,), name="0d_negdim")
    yield SampleInput(make((0, 2), dtype, requires_grad), (0,), name="empty_dim")
    big = torch.tensor([[1000.0, 0.0, -1000.0]], dtype=dtype)
    yield SampleInput(big, (1,), name="large", grad=False)


def _softmax_ref(x, dim, dtype=None):
    x = x.astype(dtype.np) if dtype is not None else x
    e = np.exp(x - np.max(x, axis=_axis(dim, x), keepdims=True)) if x.size else np.exp(x)
    return e / np.sum(e, axis=_axis(dim, x), keepdims=True)


def _log_softmax_ref(x, dim, dtype=None):
    x = x.astype(dtype.np) if dtype is not None else x
    return x - _logsumexp_ref(x, dim, keepdim=True)


def _softmax_dtype(s):
    return s.kwargs.get("dtype") or s.input.dtype


register(
    OpInfo("logsumexp", ref=_logsumexp_ref, result_dtype=SAME,
           sample_inputs=reduction_samples(full=False, dim_required=True, empty_dim=True)),
    OpInfo("softmax", ref=_softmax_ref, result_dtype=_softmax_dtype, sample_inputs=_softmax_samples),
    OpInfo("log_softmax", ref=_log_softmax_ref, result_dtype=_softmax_dtype,
           sample_inputs=_softmax_samples),
)


# ---------------------------------------------------------------------------------------
# Scans


def _scan_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad, low=0.5, high=2), (1,))
    yield SampleInput(make((3, 2), dtype, requires_grad, low=0.5, high=2), (0,), name="dim0")
    yield SampleInput(make((2, 3, 2), dtype, requires_grad, low=0.5, high=2), (-1,), name="negdim")
    yield SampleInput(make((), dtype, requires_grad), (0,), name="0d")
    yield SampleInput(make((), dtype, requires_grad), (-1,), name="0d_negdim")
    yield SampleInput(make((0, 2), dtype, requires_grad), (0,), name="empty")
    if dtype.is_floating_point:
        yield SampleInput(make((4,), dtype, requires_grad), (0,), dict(dtype=torch.float64),
                          name="dtype")


def _scan_ref(fn):
    def ref(x, dim, dtype=None):
        if dtype is not None:
            x = x.astype(dtype.np)
        elif x.dtype.kind in "biu":
            x = x.astype(np.int64)
        return fn(x, axis=dim) if x.ndim else x.copy()
    return ref


register(
    OpInfo("cumsum", ref=_scan_ref(np.cumsum), dtypes=FLOATING + INTEGRAL, result_dtype=SUM_DTYPE,
           sample_inputs=_scan_samples),
    OpInfo("cumprod", ref=_scan_ref(np.cumprod), dtypes=FLOATING + INTEGRAL,
           result_dtype=SUM_DTYPE, sample_inputs=_scan_samples),
)


# ---------------------------------------------------------------------------------------
# Logical reductions and norms


def _logical_samples(dtype, requires_grad):
    yield from reduction_samples(tuple_dims=False)(dtype, requires_grad)
    yield SampleInput(torch.zeros(2, 3, dtype=dtype), (1,), name="zeros")
    yield SampleInput(torch.ones(0, 3, dtype=dtype), (0,), name="empty")


def _count_nonzero_samples(dtype, requires_grad):
    x = make((2, 3), dtype)
    x[0, 0] = 0
    yield SampleInput(x)
    yield SampleInput(x, (1,))
    yield SampleInput(x, ((0, 1),), name="tupledim")


register(
    OpInfo("all", ref=_np_reduction(np.all), dtypes=ALL_REAL, result_dtype=BOOL, supports_grad=False,
           sample_inputs=_logical_samples),
    OpInfo("any", ref=_np_reduction(np.any), dtypes=ALL_REAL, result_dtype=BOOL, supports_grad=False,
           sample_inputs=_logical_samples),
    OpInfo("count_nonzero", ref=lambda x, dim=None: np.count_nonzero(x, axis=_axis(dim, x)),
           dtypes=ALL_REAL, result_dtype=INT64, supports_grad=False,
           sample_inputs=_count_nonzero_samples),
)


def _norm_samples(dtype, requires_grad):
    x = make((2, 3), dtype, requires_grad)
    yield SampleInput(x)
    yield SampleInput(x, (1,), dict(dim=1), name="p1")
    yield SampleInput(x, (float("inf"),), dict(dim=0, keepdim=True), name="inf")
    yield SampleInput(x, (3,), dict(dim=(0, 1)), name="p3")
    yield SampleInput(x, ("fro",), name="fro")
    yield SampleInput(make((4,), dtype, requires_grad), name="1d")


def _norm_ref(x, p="fro", dim=None, keepdim=False):
    p = 2 if p == "fro" else p
    a = np.abs(x)
    axis = _axis(dim, x)
    if p == float("inf"):
        return np.max(a, axis=axis, keepdims=keepdim)
    return np.sum(a ** p, axis=axis, keepdims=keepdim) ** (1.0 / p)


register(OpInfo("norm", ref=_norm_ref, result_dtype=SAME, sample_inputs=_norm_samples))
