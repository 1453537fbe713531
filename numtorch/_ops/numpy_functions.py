"""The NumPy functions a Tensor can be passed to: ``FUNCTIONS[np.sum]`` and the rest.

Each entry maps one NumPy function's signature (``axis``, ``keepdims``, ``ddof``, ``out=``,
…) onto numtorch ops, with PyTorch's promotion and float32 default for Tensor callers;
``numtorch._numpy`` calls the same entries after choosing NumPy's dtypes (Note [One
implementation per NumPy function] in ``numtorch/_numpy/_funcs.py``). Grouped as NumPy's
reference is: reductions, linear algebra, sorting and einsum, shape, selection and
comparison, creation, metadata.

This module owns the entries only. The protocols that reach them (``__array_function__``,
``__array_ufunc__``), the ufunc table and the argument helpers are ``numpy_api``'s (Note
[NumPy dispatch]); an entry must not convert a Tensor to an ndarray behind the caller's back.
"""
from __future__ import annotations

import operator

import numpy as np
from numpy import ndarray

from .._core import dtypes as _dt
from .._core.tensor import Tensor
from . import creation as C, index as I, linalg as L, linalg_ops as LA, math as M, reduce as R, shape as S
from ._common import result_type
from .numpy_api import (FUNCTIONS, _NOVALUE, _dim, _dtype, _given, _keep, _operand, _prod,
                        _promoted, _reject, _t, _write_out, implements)

def _sum_like(op, name):
    def fn(a, axis=None, dtype=None, out=None, keepdims=_NOVALUE, initial=_NOVALUE,
           where=_NOVALUE):
        _reject(name, initial=initial, where=where)
        x = _t(a)
        if dtype is not None:
            x = x.to(_dt.to_dtype(dtype))
        return _write_out(op(x, _dim(axis), _keep(keepdims)), out, name)
    return fn


implements(np.sum)(_sum_like(R.sum, "sum"))
implements(np.prod)(_sum_like(_prod, "prod"))
implements(np.nansum)(_sum_like(R.nansum, "nansum"))


@implements(np.mean)
def _mean(a, axis=None, dtype=None, out=None, keepdims=_NOVALUE, *, where=_NOVALUE):
    _reject("mean", where=where)
    x = _t(a)
    if dtype is not None:
        x = x.to(_dt.to_dtype(dtype))
    elif x._data.dtype.kind not in "fc":
        x = x.to(_dt.get_default_dtype())
    return _write_out(R.mean(x, _dim(axis), _keep(keepdims)), out, "mean")


@implements(np.nanmean)
def _nanmean(a, axis=None, dtype=None, out=None, keepdims=_NOVALUE, *, where=_NOVALUE):
    _reject("nanmean", dtype=dtype, where=where)
    return _write_out(R.nanmean(_t(a), _dim(axis), _keep(keepdims)), out, "nanmean")


def _extremum(op, name):
    def fn(a, axis=None, out=None, keepdims=_NOVALUE, initial=_NOVALUE, where=_NOVALUE):
        _reject(name, initial=initial, where=where)
        dim = _dim(axis)
        return _write_out(op(_t(a), () if dim is None else dim, _keep(keepdims)), out, name)
    return fn


implements(np.max, np.amax)(_extremum(R.amax, "max"))
implements(np.min, np.amin)(_extremum(R.amin, "min"))


def _arg_extremum(op, name):
    def fn(a, axis=None, out=None, *, keepdims=_NOVALUE):
        return _write_out(op(_t(a), _dim(axis), _keep(keepdims)), out, name)
    return fn


implements(np.argmax)(_arg_extremum(R.argmax, "argmax"))
implements(np.argmin)(_arg_extremum(R.argmin, "argmin"))


def _moment(op, name):
    def fn(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NOVALUE, *, where=_NOVALUE,
           mean=_NOVALUE, correction=_NOVALUE):
        _reject(name, where=where, mean=mean)
        x = _t(a)
        if dtype is not None:
            x = x.to(_dt.to_dtype(dtype))
        ddof = correction if _given(correction) else ddof
        return _write_out(op(x, _dim(axis), keepdim=_keep(keepdims), correction=ddof), out, name)
    return fn


implements(np.std)(_moment(R.std, "std"))
implements(np.var)(_moment(R.var, "var"))


def _logical_reduction(op, name):
    def fn(a, axis=None, out=None, keepdims=_NOVALUE, *, where=_NOVALUE):
        _reject(name, where=where)
        return _write_out(op(_t(a), _dim(axis), _keep(keepdims)), out, name)
    return fn


implements(np.all)(_logical_reduction(R.all, "all"))
implements(np.any)(_logical_reduction(R.any, "any"))


def _cumulative(op, name):
    def fn(a, axis=None, dtype=None, out=None):
        x = _t(a)
        if axis is None:
            x, axis = S.reshape(x, (-1,)), 0
        return _write_out(op(x, operator.index(axis), dtype=_dtype(dtype)), out, name)
    return fn


implements(np.cumsum)(_cumulative(R.cumsum, "cumsum"))
implements(np.cumprod)(_cumulative(R.cumprod, "cumprod"))


@implements(np.count_nonzero)
def _count_nonzero(a, axis=None, *, keepdims=False):
    out = R.count_nonzero(_t(a), _dim(axis))
    return out if not keepdims else _keepdims_like(out, _t(a), axis)


def _keepdims_like(out, x, axis):
    axes = range(x.ndim) if axis is None else [a % x.ndim for a in (
        axis if isinstance(axis, (tuple, list)) else (axis,))]
    return S.reshape(out, tuple(1 if i in axes else s for i, s in enumerate(x.shape)))


# -- linear algebra ----------------------------------------------------------------------

@implements(np.dot)
@_promoted
def _dot(a, b, out=None):
    if a.ndim == 0 or b.ndim == 0:
        result = M.mul(a, b)
    elif b.ndim <= 2 and a.ndim <= 2 or b.ndim == 1:
        result = L.matmul(a, b)
    else:  # NumPy: sum over the last axis of a and the second-to-last of b
        result = L.tensordot(a, b, dims=([a.ndim - 1], [b.ndim - 2]))
    return _write_out(result, out, "dot")


@implements(np.vdot)
@_promoted
def _vdot(a, b):
    return L.vdot(S.reshape(a, (-1,)), S.reshape(b, (-1,)))


implements(np.inner)(_promoted(L.inner))


@implements(np.outer)
@_promoted
def _outer(a, b, out=None):
    return _write_out(L.outer(S.reshape(a, (-1,)), S.reshape(b, (-1,))), out, "outer")


@implements(np.tensordot)
@_promoted
def _tensordot(a, b, axes=2):
    return L.tensordot(a, b, dims=axes)


@implements(np.trace)
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d = S.diagonal(_t(a), offset, axis1, axis2)
    return _write_out(R.sum(d, -1, dtype=_dtype(dtype)), out, "trace")


@implements(np.linalg.norm)
def _norm(x, ord=None, axis=None, keepdims=False):
    x = _t(x)
    if ord is None:  # Frobenius / 2-norm of the flattened selection
        return LA.vector_norm(x, 2, _dim(axis), keepdims)
    if isinstance(axis, int) or (axis is None and x.ndim == 1):
        return LA.vector_norm(x, ord, _dim(axis), keepdims)
    raise TypeError(f"numpy.linalg.norm() on a Tensor: ord={ord!r} for matrices has no "
                    "numtorch mapping yet")


def _numtorch_attr(np_func, path):
    """numtorch's ``path`` (e.g. 'linalg.inv'), or a TypeError naming ``np_func`` if it is missing."""
    import numtorch
    target = numtorch
    for part in path.split("."):
        target = getattr(target, part, None)
    if target is None:
        raise TypeError(f"{np_func.__module__}.{np_func.__name__} has no numtorch mapping yet "
                        f"(numtorch.{path} does not exist)")
    return target


def _lazy(np_func, path):
    """Map ``np_func`` to numtorch's ``path`` with the same arguments, once it exists."""
    def fn(*args, **kwargs):
        return _numtorch_attr(np_func, path)(
            *[_t(a) if isinstance(a, (Tensor, ndarray)) else a for a in args], **kwargs)
    FUNCTIONS[np_func] = fn


for _f, _path in ((np.linalg.inv, "linalg.inv"), (np.linalg.det, "linalg.det"),
                  (np.linalg.solve, "linalg.solve"), (np.linalg.cholesky, "linalg.cholesky"),
                  (np.linalg.qr, "linalg.qr"), (np.linalg.eigh, "linalg.eigh"),
                  (np.linalg.svd, "linalg.svd")):
    _lazy(_f, _path)


def _sorting(np_func, values):
    """np.sort / np.argsort on numtorch.sort / argsort (``axis=None`` sorts the flattened array)."""
    name = np_func.__name__

    def fn(a, axis=-1, kind=None, order=None, *, stable=None):
        _reject(name, order=order)
        x = _t(a)
        if axis is None:
            x, axis = S.reshape(x, (-1,)), 0
        out = _numtorch_attr(np_func, name)(x, dim=axis, stable=bool(stable))
        return out.values if values else out
    FUNCTIONS[np_func] = fn


_sorting(np.sort, values=True)
_sorting(np.argsort, values=False)


@implements(np.einsum)
def _einsum(*operands, out=None, optimize=False, **kwargs):
    _reject("einsum", **kwargs)
    ops = [o if isinstance(o, str) else _t(o) for o in operands]
    return _write_out(_numtorch_attr(np.einsum, "einsum")(*ops), out, "einsum")


# -- shape -------------------------------------------------------------------------------

@implements(np.reshape)
def _reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise TypeError("numpy.reshape() on a Tensor: only order='C' is supported")
    shape = shape if shape is not None else newshape
    out = S.reshape(_t(a), (shape,) if isinstance(shape, int) else tuple(shape))
    return S.clone(out) if copy else out


@implements(np.ravel)
def _ravel(a, order="C"):
    if order not in ("C", "K", "A"):
        raise TypeError("numpy.ravel() on a Tensor: only order='C' is supported")
    return S.reshape(_t(a), (-1,))


@implements(np.transpose)
def _transpose(a, axes=None):
    x = _t(a)
    return S.permute(x, tuple(reversed(range(x.ndim))) if axes is None else tuple(axes))


@implements(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    return S.transpose(_t(a), axis1, axis2)


@implements(np.moveaxis)
def _moveaxis(a, source, destination):
    return S.movedim(_t(a), source, destination)


@implements(np.squeeze)
def _squeeze(a, axis=None):
    x = _t(a)
    if axis is not None:
        for d in (axis if isinstance(axis, (tuple, list)) else (axis,)):
            if x.shape[d] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 "equal to one")
    return S.squeeze(x, _dim(axis))


@implements(np.expand_dims)
def _expand_dims(a, axis):
    x = _t(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = x.ndim + len(axes)
    for d in sorted(d % nd for d in axes):
        x = S.unsqueeze(x, d)
    return x


def _seq(arrays):
    if isinstance(arrays, (Tensor, ndarray)):
        return list(S.unbind(_t(arrays), 0))
    return [_t(a) for a in arrays]


@implements(np.concatenate)
def _concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    ts = _seq(arrays)
    if axis is None:
        ts, axis = [S.reshape(t, (-1,)) for t in ts], 0
    result = S.cat(ts, axis)
    return _write_out(result if dtype is None else result.to(_dt.to_dtype(dtype)), out,
                      "concatenate")


@implements(np.stack)
def _stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    result = S.stack(_seq(arrays), axis)
    return _write_out(result if dtype is None else result.to(_dt.to_dtype(dtype)), out, "stack")


def _stacker(op, name):
    def fn(tup, *, dtype=None, casting="same_kind"):
        result = op(_seq(tup))
        return result if dtype is None else result.to(_dt.to_dtype(dtype))
    return fn


implements(np.vstack)(_stacker(S.vstack, "vstack"))
implements(np.hstack)(_stacker(S.hstack, "hstack"))
implements(np.dstack)(_stacker(S.dstack, "dstack"))
implements(np.column_stack)(_stacker(S.column_stack, "column_stack"))


def _atleast(op):
    def fn(*arys):
        outs = tuple(op(_t(a)) for a in arys)
        return outs[0] if len(outs) == 1 else outs
    return fn


implements(np.atleast_1d)(_atleast(S.atleast_1d))
implements(np.atleast_2d)(_atleast(S.atleast_2d))
implements(np.atleast_3d)(_atleast(S.atleast_3d))


@implements(np.broadcast_to)
def _broadcast_to(array, shape, subok=False):
    return S.broadcast_to(_t(array), (shape,) if isinstance(shape, int) else tuple(shape))


@implements(np.broadcast_arrays)
def _broadcast_arrays(*args, subok=False):
    return tuple(S.broadcast_tensors(*[_t(a) for a in args]))


@implements(np.flip)
def _flip(m, axis=None):
    x = _t(m)
    dims = tuple(range(x.ndim)) if axis is None else _dim(axis)
    return S.flip(x, dims if isinstance(dims, tuple) else (dims,))


implements(np.fliplr)(lambda m: S.fliplr(_t(m)))
implements(np.flipud)(lambda m: S.flipud(_t(m)))


@implements(np.roll)
def _roll(a, shift, axis=None):
    return S.roll(_t(a), shift, _dim(axis))


@implements(np.tile)
def _tile(A, reps):
    return S.tile(_t(A), (reps,) if isinstance(reps, int) else tuple(reps))


@implements(np.repeat)
def _repeat(a, repeats, axis=None):
    return S.repeat_interleave(_t(a), repeats if isinstance(repeats, int) else _t(repeats),
                               dim=axis)


@implements(np.split)
def _split(ary, indices_or_sections, axis=0):
    x = _t(ary)
    if isinstance(indices_or_sections, int) and x.shape[axis] % indices_or_sections:
        raise ValueError("array split does not result in an equal division")
    return list(S.tensor_split(x, _split_arg(indices_or_sections), axis))


@implements(np.array_split)
def _array_split(ary, indices_or_sections, axis=0):
    return list(S.tensor_split(_t(ary), _split_arg(indices_or_sections), axis))


def _split_arg(s):
    return s if isinstance(s, int) else [int(i) for i in s]


@implements(np.diag)
def _diag(v, k=0):
    return S.diag(_t(v), k)


@implements(np.diagonal)
def _diagonal(a, offset=0, axis1=0, axis2=1):
    return S.diagonal(_t(a), offset, axis1, axis2)


implements(np.tril)(lambda m, k=0: S.tril(_t(m), k))
implements(np.triu)(lambda m, k=0: S.triu(_t(m), k))


@implements(np.meshgrid)
def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    _reject("meshgrid", sparse=sparse or None)
    return tuple(S.meshgrid(*[_t(x) for x in xi], indexing=indexing))


@implements(np.copy)
def _copy(a, order="K", subok=False):
    return S.clone(_t(a))


# -- selection, comparison, creation ---------------------------------------------------

@implements(np.where)
def _where(condition, x=None, y=None, /):
    c = _t(condition)
    if c._data.dtype != np.bool_:
        c = M.ne(c, 0)
    if x is None and y is None:
        return I.nonzero(c, as_tuple=True)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return M.where(c, _operand(x), _operand(y))


@implements(np.clip)
def _clip(a, a_min=_NOVALUE, a_max=_NOVALUE, out=None, *, min=_NOVALUE, max=_NOVALUE,
          **kwargs):
    _reject("clip", **kwargs)
    lo = min if _given(min) else a_min
    hi = max if _given(max) else a_max
    lo = _operand(lo) if _given(lo) else None
    hi = _operand(hi) if _given(hi) else None
    return _write_out(M.clamp(_t(a), lo, hi), out, "clip")


@implements(np.round, np.around)
def _round(a, decimals=0, out=None):
    return _write_out(M.round(_t(a), decimals=decimals), out, "round")


@implements(np.real)
def _real(val):
    return M.real(_t(val))


@implements(np.imag)
def _imag(val):
    x = _t(val)
    return M.imag(x) if x.is_complex() else C.zeros_like(x)


@implements(np.iscomplexobj)
def _iscomplexobj(x):
    return _t(x).is_complex()


@implements(np.isrealobj)
def _isrealobj(x):
    return not _t(x).is_complex()


def _common_dtype(a, b):
    """NumPy's isclose compares across dtypes; numtorch's wants one floating dtype."""
    a, b = _t(a), _t(b)
    dt = result_type(a, b)
    if not (dt.is_floating_point or dt.is_complex):
        dt = _dt.float64
    return a.to(dt), b.to(dt)


@implements(np.isclose)
def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return M.isclose(*_common_dtype(a, b), rtol, atol, equal_nan)


@implements(np.allclose)
def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return M.allclose(*_common_dtype(a, b), rtol, atol, equal_nan)


@implements(np.array_equal)
def _array_equal(a1, a2, equal_nan=False):
    _reject("array_equal", equal_nan=equal_nan or None)
    return M.equal(_t(a1), _t(a2))


@implements(np.take_along_axis)
def _take_along_axis(arr, indices, axis=-1):
    return I.take_along_dim(_t(arr), _t(indices), axis)


@implements(np.take)
def _take(a, indices, axis=None, out=None, mode="raise"):
    if mode != "raise":
        raise TypeError("numpy.take() on a Tensor: only mode='raise' is supported")
    x = _t(a)
    if axis is None:
        x, axis = S.reshape(x, (-1,)), 0
    idx = indices if isinstance(indices, int) else _t(indices)
    return _write_out(I.getitem(x, (slice(None),) * (axis % x.ndim) + (idx,)), out, "take")


@implements(np.nonzero)
def _nonzero(a):
    return I.nonzero(_t(a), as_tuple=True)


@implements(np.argwhere)
def _argwhere(a):
    return I.argwhere(_t(a))


@implements(np.unique)
def _unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
            equal_nan=True, sorted=True):
    _reject("unique", return_index=return_index or None)
    return I.unique(_t(ar), True, return_inverse, return_counts, axis)


def _like(op, name):
    def fn(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
        x = _t(a)
        dt = _dtype(dtype) or x.dtype
        if shape is not None:
            return getattr(C, name)(shape, dtype=dt)
        return op(x, dtype=dt)
    return fn


implements(np.zeros_like)(_like(C.zeros_like, "zeros"))
implements(np.ones_like)(_like(C.ones_like, "ones"))
implements(np.empty_like)(_like(C.empty_like, "empty"))


@implements(np.full_like)
def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    x = _t(a)
    dt = _dtype(dtype) or x.dtype
    if shape is not None:
        return C.full(shape, fill_value, dtype=dt)
    return C.full_like(x, fill_value, dtype=dt)


# -- metadata: plain Python values, as NumPy returns them ------------------------------

implements(np.shape)(lambda a: tuple(_t(a).shape))
implements(np.ndim)(lambda a: _t(a).ndim)


@implements(np.size)
def _size(a, axis=None):
    x = _t(a)
    return x.numel() if axis is None else x.shape[axis]
