"""The ``numpy`` namespace functions of ``numtorch._numpy`` (reductions, shape, selection, …).

This module owns NumPy's *semantics* around each function: NEP 50 promotion of several
array operands, NumPy's result dtypes (sum of int32 is int64, mean of ints is float64),
axis checking with ``numpy.exceptions.AxisError``, ``out=``, and NumPy's error types for
bad shapes. The computation itself is the one implementation in
``numtorch._ops.numpy_api.FUNCTIONS`` that the eager interop on Tensors also runs (Note
[One implementation per NumPy function]); this module must not re-implement it.
"""
from __future__ import annotations

import builtins

import numpy as np

from .._core import dtypes as _dt
from .._ops import creation as C, shape as S
from .._ops.numpy_api import FUNCTIONS
from ._ndarray import ndarray, to_tensor, cast, wrap, normalize_axis
from ._ufuncs import write_out

# Note [One implementation per NumPy function]
# ``numtorch._ops.numpy_api`` holds, for each NumPy function, the code that maps NumPy's
# signature (axis/keepdims/ddof/…) onto numtorch ops: ``FUNCTIONS[np.sum]`` and the ufunc
# kernels ``UFUNCS[np.add]``. Two front ends call it:
#   - ``Tensor.__array_function__`` (``np.sum(tensor)``): Tensors in, Tensors out, PyTorch's
#     promotion and default dtype (float32), because the caller is PyTorch code that happens
#     to call a NumPy function (as ``torch.Tensor`` does);
#   - ``numtorch._numpy`` (here): ndarrays in and out with NumPy's semantics. This layer
#     decides the dtypes NumPy would give *before* calling the shared code (it casts the
#     operands to NumPy's common dtype and passes NumPy's accumulator dtype as ``dtype=``),
#     so the shared code's own promotion never has anything left to decide.
# The two can differ only in dtypes and in the Python type of results; values agree.

_impl = FUNCTIONS.__getitem__


def _t(a):
    return to_tensor(a)


def result_type(*arrays_and_dtypes):
    """NumPy's ``result_type`` (NEP 50: Python scalars are weak) for ndarrays too."""
    return np.result_type(*[a.dtype if isinstance(a, ndarray) else a
                            for a in arrays_and_dtypes])


def _promote(values):
    """Tensors of ``values`` (array-likes or Python scalars) cast to NumPy's common dtype."""
    keys = [v if type(v) in (int, float, complex) else _t(v).dtype.np for v in values]
    dt = np.result_type(*keys)
    return [cast(_t(v), dt) if type(v) not in (int, float, complex)
            else C.as_tensor(np.asarray(v, dtype=dt)) for v in values]


def _kd(keepdims):
    return bool(keepdims) if keepdims is not np._NoValue else False


def _finish(result, out, name):
    return write_out(result, out, name, casting="unsafe")


# ---------------------------------------------------------------------------------------
# Reductions

def _acc_dtype(dt: np.dtype, dtype) -> np.dtype:
    """NumPy's default dtype of sum/prod/cumsum: bool and small ints widen to int64."""
    if dtype is not None:
        return np.dtype(dtype)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < 8):
        return np.dtype(np.int64)
    if dt.kind == "u" and dt.itemsize < 8:
        return np.dtype(np.uint64)  # numtorch has no uint64: from_numpy raises a TypeError
    return dt


def _float_dtype(dt: np.dtype, dtype) -> np.dtype:
    """NumPy's dtype of mean/var/std: ints and bools are averaged in float64."""
    if dtype is not None:
        return np.dtype(dtype)
    return np.dtype(np.float64) if dt.kind in "biu" else dt


def _sum_like(np_func):
    name = np_func.__name__

    def fn(a, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue,
           where=np._NoValue):
        t = _t(a)
        axis = normalize_axis(axis, t.ndim)
        acc = _acc_dtype(t.dtype.np, dtype)
        r = _impl(np_func)(t, axis, _dt.from_numpy(acc), None, _kd(keepdims), initial, where)
        return _finish(cast(r, acc), out, name)  # PyTorch would widen an int32 sum
    fn.__name__ = name
    fn.__doc__ = f"NumPy's ``{name}`` (int inputs accumulate in int64, as in NumPy)."
    return fn


sum, prod, nansum = _sum_like(np.sum), _sum_like(np.prod), _sum_like(np.nansum)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=np._NoValue):
    """NumPy's ``mean``: ints average in float64."""
    t = _t(a)
    axis = normalize_axis(axis, t.ndim)
    dt = _dt.from_numpy(_float_dtype(t.dtype.np, dtype))
    return _finish(_impl(np.mean)(t, axis, dt, None, _kd(keepdims), where=where), out, "mean")


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=np._NoValue):
    """NumPy's ``nanmean``."""
    t = _t(a)
    t = cast(t, _float_dtype(t.dtype.np, dtype))
    axis = normalize_axis(axis, t.ndim)
    return _finish(_impl(np.nanmean)(t, axis, None, None, _kd(keepdims), where=where), out,
                   "nanmean")


def _moment(np_func):
    name = np_func.__name__

    def fn(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=np._NoValue,
           mean=np._NoValue, correction=np._NoValue):
        t = _t(a)
        t = cast(t, _float_dtype(t.dtype.np, dtype))
        axis = normalize_axis(axis, t.ndim)
        r = _impl(np_func)(t, axis, None, None, ddof, _kd(keepdims), where=where, mean=mean,
                           correction=correction)
        return _finish(r, out, name)
    fn.__name__ = name
    fn.__doc__ = f"NumPy's ``{name}`` (``ddof`` is PyTorch's ``correction``)."
    return fn


std, var = _moment(np.std), _moment(np.var)


def _extremum(np_func, name):
    def fn(a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=np._NoValue):
        t = _t(a)
        axis = normalize_axis(axis, t.ndim)
        if t.numel() == 0 and (axis is None or builtins.any(
                t.shape[d] == 0 for d in (axis if isinstance(axis, tuple) else (axis,)))):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
        return _finish(_impl(np_func)(t, axis, None, _kd(keepdims), initial, where), out, name)
    fn.__name__ = name
    fn.__doc__ = f"NumPy's ``{name}`` (also ``a{name}``)."
    return fn


max = amax = _extremum(np.max, "maximum")
min = amin = _extremum(np.min, "minimum")


def ptp(a, axis=None, out=None, keepdims=False):
    """Range of values (maximum - minimum) along an axis (``numpy.ptp``)."""
    from . import _ufuncs
    return _ufuncs.subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims),
                            out=out)


def _arg_extremum(np_func):
    name = np_func.__name__

    def fn(a, axis=None, out=None, *, keepdims=False):
        t = _t(a)
        axis = normalize_axis(axis, t.ndim, allow_tuple=False)
        if t.numel() == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        return _finish(_impl(np_func)(t, axis, None, keepdims=_kd(keepdims)), out, name)
    fn.__name__ = name
    return fn


argmax, argmin = _arg_extremum(np.argmax), _arg_extremum(np.argmin)


def _logical(np_func):
    name = np_func.__name__

    def fn(a, axis=None, out=None, keepdims=False, *, where=np._NoValue):
        t = _t(a)
        axis = normalize_axis(axis, t.ndim)
        return _finish(_impl(np_func)(t, axis, None, _kd(keepdims), where=where), out, name)
    fn.__name__ = name
    return fn


all, any = _logical(np.all), _logical(np.any)


def _cumulative(np_func):
    name = np_func.__name__

    def fn(a, axis=None, dtype=None, out=None):
        t = _t(a)
        axis = normalize_axis(axis, t.ndim, allow_tuple=False)
        acc = _acc_dtype(t.dtype.np, dtype)
        return _finish(cast(_impl(np_func)(t, axis, _dt.from_numpy(acc)), acc), out, name)
    fn.__name__ = name
    return fn


cumsum, cumprod = _cumulative(np.cumsum), _cumulative(np.cumprod)


def count_nonzero(a, axis=None, *, keepdims=False):
    """Counts the non-zero values (``numpy.count_nonzero``)."""
    t = _t(a)
    return wrap(_impl(np.count_nonzero)(t, normalize_axis(axis, t.ndim), keepdims=keepdims))


# ---------------------------------------------------------------------------------------
# Products and contractions (operands promoted together, NumPy's rules)

def dot(a, b, out=None):
    """NumPy's ``dot``."""
    x, y = _promote([a, b])
    if x.ndim and y.ndim and x.shape[-1] != y.shape[-2 if y.ndim > 1 else 0]:
        raise ValueError(f"shapes {_fmt(x.shape)} and {_fmt(y.shape)} not aligned: "
                         f"{x.shape[-1]} (dim {x.ndim - 1}) != "
                         f"{y.shape[-2 if y.ndim > 1 else 0]} (dim {builtins.max(y.ndim - 2, 0)})")
    return _finish(_impl(np.dot)(x, y), out, "dot")


def _fmt(shape):
    return str(tuple(shape))


def vdot(a, b):
    """NumPy's ``vdot`` (flattened, conjugating ``a``)."""
    return wrap(_impl(np.vdot)(*_promote([a, b])))


def inner(a, b):
    return wrap(_impl(np.inner)(*_promote([a, b])))


def outer(a, b, out=None):
    return _finish(_impl(np.outer)(*_promote([a, b])), out, "outer")


def tensordot(a, b, axes=2):
    return wrap(_impl(np.tensordot)(*_promote([a, b]), axes))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    t = _t(a)
    acc = _acc_dtype(t.dtype.np, dtype)
    return _finish(cast(_impl(np.trace)(t, offset, axis1, axis2, _dt.from_numpy(acc)), acc),
                   out, "trace")


def einsum(*operands, out=None, dtype=None, optimize=False, **kwargs):
    """NumPy's ``einsum`` (subscript-string form), operands promoted to one dtype."""
    if not operands or not isinstance(operands[0], str):
        raise TypeError("numtorch._numpy.einsum: only the subscripts-string form is supported")
    ts = _promote(list(operands[1:]))
    if dtype is not None:
        ts = [cast(t, dtype) for t in ts]
    return _finish(_impl(np.einsum)(operands[0], *ts, **kwargs), out, "einsum")


# ---------------------------------------------------------------------------------------
# Shape and movement

def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """NumPy's ``reshape`` (C order); a size mismatch is NumPy's ValueError."""
    t = _t(a)
    shape = shape if shape is not None else newshape
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    known = int(np.prod([s for s in shape if s != -1]))
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if (known != t.numel() and -1 not in shape) or (-1 in shape and (
            known == 0 or t.numel() % known)):
        raise ValueError(f"cannot reshape array of size {t.numel()} into shape "
                         f"{_fmt(shape)}")
    return wrap(_impl(np.reshape)(t, shape, order, copy=copy))


def ravel(a, order="C"):
    return wrap(_impl(np.ravel)(_t(a), order))


def transpose(a, axes=None):
    t = _t(a)
    if axes is not None:
        axes = normalize_axis(tuple(axes), t.ndim)
        if len(axes) != t.ndim:
            raise ValueError("axes don't match array")
    return wrap(_impl(np.transpose)(t, axes))


def permute_dims(a, axes=None):
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    t = _t(a)
    return wrap(_impl(np.swapaxes)(t, normalize_axis(axis1, t.ndim),
                                   normalize_axis(axis2, t.ndim)))


def moveaxis(a, source, destination):
    t = _t(a)
    return wrap(_impl(np.moveaxis)(t, normalize_axis(source, t.ndim),
                                   normalize_axis(destination, t.ndim)))


def squeeze(a, axis=None):
    t = _t(a)
    return wrap(_impl(np.squeeze)(t, normalize_axis(axis, t.ndim)))


def expand_dims(a, axis):
    t = _t(a)
    n = len(axis) if isinstance(axis, (tuple, list)) else 1
    normalize_axis(axis, t.ndim + n)
    return wrap(_impl(np.expand_dims)(t, axis))


def _arrays(arrays, name):
    ts = list(arrays) if not isinstance(arrays, ndarray) else list(arrays)
    if not ts:
        raise ValueError(f"need at least one array to {name}")
    return _promote(ts)


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """NumPy's ``concatenate``: operands promoted together; NumPy's errors for bad shapes."""
    ts = _arrays(arrays, "concatenate")
    if axis is not None:
        if ts[0].ndim == 0:
            raise ValueError("zero-dimensional arrays cannot be concatenated")
        axis = normalize_axis(axis, ts[0].ndim)
        for i, t in enumerate(ts[1:], 1):
            if t.ndim != ts[0].ndim:
                raise ValueError(
                    "all the input arrays must have same number of dimensions, but the array "
                    f"at index 0 has {ts[0].ndim} dimension(s) and the array at index {i} has "
                    f"{t.ndim} dimension(s)")
            for d in range(t.ndim):
                if d != axis and t.shape[d] != ts[0].shape[d]:
                    raise ValueError(
                        "all the input array dimensions except for the concatenation axis "
                        f"must match exactly, but along dimension {d}, the array at index 0 "
                        f"has size {ts[0].shape[d]} and the array at index {i} has size "
                        f"{t.shape[d]}")
    r = _impl(np.concatenate)(ts, axis)
    return _finish(r if dtype is None else cast(r, dtype), out, "concatenate")


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """NumPy's ``stack``: operands promoted together, equal shapes required (ValueError)."""
    ts = _arrays(arrays, "stack")
    if builtins.any(tuple(t.shape) != tuple(ts[0].shape) for t in ts):
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis(axis, ts[0].ndim + 1)
    r = _impl(np.stack)(ts, axis)
    return _finish(r if dtype is None else cast(r, dtype), out, "stack")


def _stacker(np_func):
    def fn(tup, *, dtype=None, casting="same_kind"):
        r = _impl(np_func)(_arrays(tup, np_func.__name__))
        return wrap(r if dtype is None else cast(r, dtype))
    fn.__name__ = np_func.__name__
    return fn


vstack, hstack, dstack, column_stack = (_stacker(np.vstack), _stacker(np.hstack),
                                        _stacker(np.dstack), _stacker(np.column_stack))
row_stack = vstack


def _atleast(np_func):
    def fn(*arys):
        return wrap(_impl(np_func)(*[_t(a) for a in arys]))
    fn.__name__ = np_func.__name__
    return fn


atleast_1d, atleast_2d, atleast_3d = (_atleast(np.atleast_1d), _atleast(np.atleast_2d),
                                      _atleast(np.atleast_3d))


def broadcast_to(array, shape, subok=False):
    t = _t(array)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    np.broadcast_shapes(tuple(t.shape), shape)  # NumPy's ValueError for a bad target
    return wrap(_impl(np.broadcast_to)(t, shape))


def broadcast_arrays(*args, subok=False):
    from ._ufuncs import check_broadcast
    ts = [_t(a) for a in args]
    check_broadcast([tuple(t.shape) for t in ts])
    return wrap(_impl(np.broadcast_arrays)(*ts))


def flip(m, axis=None):
    t = _t(m)
    return wrap(_impl(np.flip)(t, normalize_axis(axis, t.ndim)))


def fliplr(m):
    return wrap(_impl(np.fliplr)(_t(m)))


def flipud(m):
    return wrap(_impl(np.flipud)(_t(m)))


def roll(a, shift, axis=None):
    t = _t(a)
    return wrap(_impl(np.roll)(t, shift, normalize_axis(axis, t.ndim)))


def tile(A, reps):
    return wrap(_impl(np.tile)(_t(A), reps))


def repeat(a, repeats, axis=None):
    t = _t(a)
    if axis is None:
        t, axis = S.reshape(t, (-1,)), 0
    return wrap(_impl(np.repeat)(t, repeats if isinstance(repeats, int) else _t(repeats),
                                 normalize_axis(axis, t.ndim)))


def split(ary, indices_or_sections, axis=0):
    t = _t(ary)
    return wrap(_impl(np.split)(t, indices_or_sections, normalize_axis(axis, t.ndim)))


def array_split(ary, indices_or_sections, axis=0):
    t = _t(ary)
    return wrap(_impl(np.array_split)(t, indices_or_sections, normalize_axis(axis, t.ndim)))


def diag(v, k=0):
    return wrap(_impl(np.diag)(_t(v), k))


def diagonal(a, offset=0, axis1=0, axis2=1):
    return wrap(_impl(np.diagonal)(_t(a), offset, axis1, axis2))


def tril(m, k=0):
    return wrap(_impl(np.tril)(_t(m), k))


def triu(m, k=0):
    return wrap(_impl(np.triu)(_t(m), k))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    return wrap(list(_impl(np.meshgrid)(*[_t(x) for x in xi], copy=copy, sparse=sparse,
                                        indexing=indexing)))


def copy(a, order="K", subok=False):
    return wrap(_impl(np.copy)(_t(a)))


# ---------------------------------------------------------------------------------------
# Selection, comparison, sorting

def where(condition, x=None, y=None, /):
    """NumPy's ``where``: ``x`` and ``y`` promoted together (NEP 50), or ``nonzero``."""
    if x is None and y is None:
        return wrap(_impl(np.where)(_t(condition)))
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    c = _t(condition)
    xs, ys = _promote([x, y])
    from ._ufuncs import check_broadcast
    check_broadcast([tuple(c.shape), tuple(xs.shape), tuple(ys.shape)])
    return wrap(_impl(np.where)(c, xs, ys))


def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,
         max=np._NoValue, **kwargs):
    """NumPy's ``clip``: bounds promote with ``a`` (NEP 50)."""
    lo = min if min is not np._NoValue else a_min
    hi = max if max is not np._NoValue else a_max
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    if lo is None and hi is None:
        raise ValueError("One of max or min must be given")
    vals = _promote([a] + [v for v in (lo, hi) if v is not None])
    t, rest = vals[0], vals[1:]
    lo_t = rest.pop(0) if lo is not None else None
    hi_t = rest.pop(0) if hi is not None else None
    from .._ops import math as M
    r = t
    if lo_t is not None:
        r = M.maximum(r, lo_t)
    if hi_t is not None:
        r = M.minimum(r, hi_t)
    return _finish(r, out, "clip")


def round(a, decimals=0, out=None):
    return _finish(_impl(np.round)(_t(a), decimals), out, "round")


around = round


def real(val):
    return wrap(_impl(np.real)(_t(val)))


def imag(val):
    return wrap(_impl(np.imag)(_t(val)))


def iscomplexobj(x):
    return _t(x).dtype.np.kind == "c"


def isrealobj(x):
    return not iscomplexobj(x)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return wrap(_impl(np.isclose)(_t(a), _t(b), rtol, atol, equal_nan))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(_impl(np.allclose)(_t(a), _t(b), rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    x, y = _t(a1), _t(a2)
    if tuple(x.shape) != tuple(y.shape):
        return False
    x, y = _promote([x, y])
    return bool(_impl(np.array_equal)(x, y, equal_nan))


def take_along_axis(arr, indices, axis=-1):
    t = _t(arr)
    return wrap(_impl(np.take_along_axis)(t, _t(indices), normalize_axis(axis, t.ndim)))


def take(a, indices, axis=None, out=None, mode="raise"):
    t = _t(a)
    axis = normalize_axis(axis, t.ndim, allow_tuple=False)
    idx = indices if isinstance(indices, int) else _t(indices)
    return _finish(_impl(np.take)(t, idx, axis, None, mode), out, "take")


def nonzero(a):
    return wrap(_impl(np.nonzero)(_t(a)))


def argwhere(a):
    return wrap(_impl(np.argwhere)(_t(a)))


def flatnonzero(a):
    return nonzero(ravel(a))[0]


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    return wrap(_impl(np.unique)(_t(ar), return_index, return_inverse, return_counts, axis))


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """NumPy's ``sort`` (``axis=None`` sorts the flattened array)."""
    t = _t(a)
    if axis is not None:
        axis = normalize_axis(axis, t.ndim, allow_tuple=False)
    if t.dtype.np.kind == "c":
        raise TypeError("numtorch._numpy: sorting complex arrays is not supported")
    return wrap(_impl(np.sort)(t, axis, kind, order, stable=stable))


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """NumPy's ``argsort``; ties keep their order only with ``kind='stable'``/``stable=True``."""
    t = _t(a)
    if axis is not None:
        axis = normalize_axis(axis, t.ndim, allow_tuple=False)
    stable = stable or kind in ("stable", "mergesort")
    return wrap(_impl(np.argsort)(t, axis, kind, order, stable=stable))


# ---------------------------------------------------------------------------------------
# Creation (float64 by default, as NumPy)

def _shape(shape):
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def _creator(fill):
    def fn(shape, dtype=float, order="C", *, like=None, device=None):
        return ndarray(getattr(C, fill)(_shape(shape), dtype=_dt.from_numpy(np.dtype(dtype))))
    fn.__name__ = fill
    fn.__doc__ = f"NumPy's ``{fill}`` (float64 unless ``dtype`` is given)."
    return fn


zeros, ones, empty = _creator("zeros"), _creator("ones"), _creator("empty")


def full(shape, fill_value, dtype=None, order="C", *, like=None, device=None):
    """NumPy's ``full``: the dtype is ``fill_value``'s NumPy dtype unless given."""
    dt = np.dtype(dtype) if dtype is not None else np.asarray(fill_value).dtype
    if isinstance(fill_value, (ndarray,)) or np.ndim(fill_value):
        return ndarray(S.clone(S.broadcast_to(cast(_t(fill_value), dt), _shape(shape))))
    return ndarray(C.full(_shape(shape), fill_value, dtype=_dt.from_numpy(dt)))


def _like(np_func):
    def fn(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
        return wrap(_impl(np_func)(_t(a), dtype, order, subok, shape))
    fn.__name__ = np_func.__name__
    return fn


zeros_like, ones_like, empty_like = _like(np.zeros_like), _like(np.ones_like), _like(np.empty_like)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return wrap(_impl(np.full_like)(_t(a), fill_value, dtype, order, subok, shape))


def arange(start, stop=None, step=None, dtype=None, *, like=None, device=None):
    """NumPy's ``arange``: int64 for integer arguments, float64 for float ones."""
    args = [v for v in (start, stop, step) if v is not None]
    dt = np.dtype(dtype) if dtype is not None else np.result_type(*args)
    if stop is None:
        start, stop = 0, start
    # The values come from NumPy's own arange (its length and rounding rules), as a constant.
    return ndarray(C.as_tensor(np.arange(start, stop, 1 if step is None else step, dtype=dt)))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """NumPy's ``linspace`` (float64 by default)."""
    vals = np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if retstep:
        return ndarray(C.as_tensor(vals[0])), vals[1]
    return ndarray(C.as_tensor(vals))


def eye(N, M=None, k=0, dtype=float, order="C", *, like=None, device=None):
    return ndarray(C.as_tensor(np.eye(N, M, k, dtype=dtype)))


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=dtype or float)


# -- metadata: plain Python values, as NumPy returns them --------------------------------

def shape(a):
    return tuple(_t(a).shape)


def ndim(a):
    return _t(a).ndim


def size(a, axis=None):
    t = _t(a)
    return t.numel() if axis is None else t.shape[normalize_axis(axis, t.ndim)]
