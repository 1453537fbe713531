"""OpInfo entries: the windows (_ops/_surface_signal.py) and mode, scatter_reduce,
unique_consecutive (_ops/_surface_segment.py)."""
from __future__ import annotations

import numpy as np

import numtorch as torch

from ..opinfo import (DATA_DEPENDENT, FLOATING, INTEGRAL, SAME, OpInfo, SampleInput, make,
                      make_index, register, tensor_of)

_NO_GRAD = dict(supports_grad=False, method=None, inplace=None)


# ---------------------------------------------------------------------------------------
# Windows: creation functions, so no derivative and no vmap (no tensor argument)

def _window_samples(*extra):
    def gen(dtype, requires_grad):
        yield SampleInput(8, kwargs=dict(dtype=dtype))
        yield SampleInput(7, (False,) + extra, dict(dtype=dtype), name="symmetric")
        yield SampleInput(1, kwargs=dict(dtype=dtype), name="one")
        yield SampleInput(0, kwargs=dict(dtype=dtype), name="empty")
    return gen


def _window_ref(formula):
    """The symmetric window of length N (N + 1, the last dropped, when periodic)."""
    def ref(n, periodic=True, *args, dtype=None):
        if n <= 1:
            return np.ones(n, dtype.np)
        full = n + 1 if periodic else n
        return formula(full, *args)[:n].astype(dtype.np)
    return ref


def _hamming(n, alpha=0.54, beta=0.46):
    return alpha - beta * np.cos(2 * np.pi * np.arange(n) / (n - 1))


def _requested(s):
    return s.kwargs["dtype"]


def _window(name, formula, *extra):
    return OpInfo(name, ref=_window_ref(formula), result_dtype=_requested,
                  sample_inputs=_window_samples(*extra), supports_vmap=False, **_NO_GRAD)


register(
    _window("hann_window", np.hanning),
    _window("hamming_window", _hamming, 0.6, 0.4),
    _window("blackman_window", np.blackman),
    _window("bartlett_window", np.bartlett),
    _window("kaiser_window", lambda n, beta=12.0: np.kaiser(n, beta), 5.0),
)


# ---------------------------------------------------------------------------------------
# mode

def _mode_samples(dtype, requires_grad):
    # distinct values: each row's mode is its minimum (every count is 1), so a finite
    # difference does not change which element is the mode
    yield SampleInput(make((3, 5), dtype, requires_grad, distinct=True))
    yield SampleInput(make((4, 3), dtype, requires_grad, distinct=True), (0, True), name="keepdim")
    yield SampleInput(make((), dtype, requires_grad), name="0d")
    yield SampleInput(tensor_of([[3, 1, 3, 1, 2], [5, 5, 4, 4, 4], [2, 2, 2, 7, 7]], dtype),
                      name="ties", grad=False)


def _mode_ref(x, dim=-1, keepdim=False):
    """The smallest most frequent value of each row, at its last position."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    xs = np.moveaxis(x, dim, -1)
    vals = np.empty(xs.shape[:-1], x.dtype)
    idx = np.empty(xs.shape[:-1], np.int64)
    for pos in np.ndindex(*xs.shape[:-1]):
        row = xs[pos]
        uniq, counts = np.unique(row, return_counts=True)
        v = uniq[np.argmax(counts)]
        vals[pos], idx[pos] = v, np.flatnonzero(row == v)[-1]
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


register(OpInfo("mode", ref=_mode_ref, result_dtype=SAME, dtypes=FLOATING + INTEGRAL,
                sample_inputs=_mode_samples))


# ---------------------------------------------------------------------------------------
# scatter_reduce

def _scatter_reduce_samples(reduce):
    def gen(dtype, requires_grad):
        def m(shape):
            # random floats: no ties between self and src for amax/amin's finite differences
            return make(shape, dtype, requires_grad)
        yield SampleInput(m((3, 4)), (1, make_index((3, 5), 4), m((3, 5)), reduce))
        yield SampleInput(m((3, 4)), (0, make_index((2, 3), 3), m((3, 3)), reduce),
                          dict(include_self=False), name="exclude_smaller")
        yield SampleInput(m((5,)), (0, torch.tensor([1, 1, 3]), m((3,)), reduce),
                          dict(include_self=False), name="untouched")
    return gen


def _scatter_reduce_ref(x, dim, index, src, reduce, include_self=True):
    out = x.copy()
    d = dim % x.ndim
    src = src[tuple(slice(0, n) for n in index.shape)]
    groups = {}
    for pos in np.ndindex(*index.shape):
        target = pos[:d] + (index[pos],) + pos[d + 1:]
        groups.setdefault(target, []).append(src[pos])
    fn = dict(sum=np.sum, prod=np.prod, mean=np.mean, amax=np.max, amin=np.min)[reduce]
    for target, vals in groups.items():
        vals = ([x[target]] if include_self else []) + vals
        r = fn(np.array(vals, dtype=np.float64 if reduce == "mean" else x.dtype))
        out[target] = np.floor(r) if reduce == "mean" and x.dtype.kind in "iu" else r
    return out


def _scatter_reduce(reduce):
    return OpInfo(f"scatter_reduce_{reduce}", op=torch.scatter_reduce, ref=_scatter_reduce_ref,
                  result_dtype=SAME, dtypes=FLOATING + INTEGRAL, method="scatter_reduce",
                  inplace="scatter_reduce_", torch_name="scatter_reduce",
                  sample_inputs=_scatter_reduce_samples(reduce))


register(*[_scatter_reduce(r) for r in ("sum", "prod", "mean", "amax", "amin")])


# ---------------------------------------------------------------------------------------
# unique_consecutive: the output's shape depends on the values

def _unique_consecutive_samples(dtype, requires_grad):
    x = tensor_of([[1, 1, 2], [1, 1, 2], [3, 3, 3], [1, 1, 2]], dtype)
    yield SampleInput(x, skip=DATA_DEPENDENT)
    yield SampleInput(x, (), dict(return_inverse=True, return_counts=True), name="flat",
                      skip=DATA_DEPENDENT)
    yield SampleInput(x, (), dict(return_inverse=True, return_counts=True, dim=0), name="dim0",
                      skip=DATA_DEPENDENT)
    yield SampleInput(x, (), dict(return_counts=True, dim=1), name="dim1", skip=DATA_DEPENDENT)


def _unique_consecutive_ref(x, return_inverse=False, return_counts=False, dim=None):
    flat = x.reshape(-1) if dim is None else np.moveaxis(x, dim, 0)
    keep = np.ones(len(flat), bool)
    keep[1:] = [not np.array_equal(a, b) for a, b in zip(flat[1:], flat[:-1])]
    out = flat[keep] if dim is None else np.moveaxis(flat[keep], 0, dim)
    res = [out]
    if return_inverse:
        res.append((np.cumsum(keep) - 1).reshape(x.shape if dim is None else (x.shape[dim],)))
    if return_counts:
        res.append(np.diff(np.append(np.flatnonzero(keep), len(flat))))
    return res[0] if len(res) == 1 else tuple(res)


register(OpInfo("unique_consecutive", ref=_unique_consecutive_ref, result_dtype=SAME,
                dtypes=FLOATING + INTEGRAL, sample_inputs=_unique_consecutive_samples,
                supports_grad=False, supports_vmap=False, supports_meta=False))
