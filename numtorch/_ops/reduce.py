"""Reductions with PyTorch semantics: sum/mean/prod/max/min/std/var/logsumexp/softmax, …

``dim`` may be None, an int or a tuple; ``keepdim`` keeps reduced dims as size 1.
Integer and bool sums accumulate in int64, as in PyTorch.
"""
from __future__ import annotations


import numpy as np
from numpy import ndarray

from .._core import dtypes as _dt
from .._core import primitive as _prim
from .._core.primitive import bind, grad_mode
from .._core.tensor import TENSOR_TYPES, Tensor, wrap, wrap_array
from .._prims import reduction as Rd
from .._prims import _small, elementwise as E
from ._common import (canonical_dim, check_tensor, convert, eager_array, float_dtype_for,
                      scalar_type_name)
from ._backward_names import backward_name
from . import _threaded
from ._threaded import SUM_LARGE

from .. import return_types as _rt


def _axes(x, dim, fn):
    nd = x.ndim
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(nd))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    axes = tuple(sorted(canonical_dim(d, nd) for d in dims))
    if nd == 0:
        return ()  # dims 0 and -1 name a 0-d tensor itself (PyTorch): nothing to reduce
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
    return axes


def _keep(out, x, axes, keepdim):
    if not keepdim or not axes:
        return out
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    return out.reshape(shape)


def _reduce(prim, x, dim, keepdim, fn):
    axes = _axes(x, dim, fn)
    if x.ndim == 0:
        return prim.bind(x, axes=()) if prim is not Rd.reduce_sum else x.clone()
    return _keep(bind(prim, x, axes=axes), x, axes, keepdim)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Returns the sum of ``input`` over ``dim`` (all elements if None)."""
    d = input._data if input.__class__ in TENSOR_TYPES else None
    if dim is None and dtype is None and d.__class__ is ndarray and d.dtype.kind in "fc":
        if not (input._requires_grad and grad_mode[0]):
            # Note [Eager fast path]; large: Note [NumPy's sum on the pool] (_threaded.py)
            return wrap_array(np.add.reduce(d, axis=None) if d.size < SUM_LARGE
                              else _threaded.sum_all(d))
        if d.ndim:   # what `_reduce` binds for dim=None, without its checks
            return bind(Rd.reduce_sum, input, axes=_all_axes(d.ndim))
    elif dim.__class__ is int and dtype is None and eager_array(input) is not None and \
            d.dtype.kind in "fc" and -len(d.shape) <= dim < len(d.shape):
        # Note [Eager fast path]: reduce_sum's impl over one dim (kept as size 1 by
        # `keepdims`, in the same reduction: the same values as the general path's reshape)
        return wrap_array(np.add.reduce(d, axis=dim, keepdims=bool(keepdim)))
    check_tensor(input, "input", "sum")
    if dtype is not None:
        input = convert(input, _dt.to_dtype(dtype))
    elif input._data.dtype.kind in "iub":
        input = convert(input, _dt.int64)
    return _reduce(Rd.reduce_sum, input, dim, keepdim, "sum")


def _all_axes(nd):
    axes = _ALL_AXES.get(nd)
    if axes is None:
        axes = _ALL_AXES[nd] = tuple(range(nd))
    return axes


_ALL_AXES: dict = {}   # ndim -> every axis


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sums ``input`` over ``dim``, treating NaN as zero (integers: ``sum``)."""
    from .math import isnan, where
    check_tensor(input, "input", "nansum")
    kind = input._data.dtype.kind
    if kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if kind != "f":
        return sum(input, dim, keepdim, dtype=dtype)
    return sum(where(isnan(input), 0.0, input), dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Returns the mean of ``input`` over ``dim``; requires a floating or complex dtype."""
    d = input._data if input.__class__ in TENSOR_TYPES else None
    if dim is None and dtype is None and d.__class__ is ndarray and d.dtype.kind in "fc" and \
            d.size and d.dtype != np.float16:
        if not (input._requires_grad and grad_mode[0]):
            return sum(input) / d.size   # the general path's two ops, without its checks
        if d.ndim and not _prim.STACK:
            return _recorded_mean(input, d)   # Note [Mean as one node]
    return _mean(input, dim, keepdim, dtype=dtype)


@backward_name(lambda input, dim=None, *a, **k: "MeanBackward0" if dim is None else "MeanBackward1")
def _mean(input, dim=None, keepdim=False, *, dtype=None):
    d = input._data if input.__class__ in TENSOR_TYPES else None
    if dim is None and dtype is None and d.__class__ is ndarray and d.dtype.kind in "fc" and \
            d.size and d.dtype != np.float16:
        return sum(input) / d.size   # the general path's two ops, without its checks
    check_tensor(input, "input", "mean")
    if dtype is not None:
        input = convert(input, _dt.to_dtype(dtype))
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {scalar_type_name(input.dtype)}")
    if input.dtype == _dt.float16:   # Note [float16 accumulates in float32]
        return convert(mean(convert(input, _dt.float32), dim, keepdim), _dt.float16)
    axes = _axes(input, dim, "mean")
    n = 1
    for a in axes:
        n *= input.shape[a]
    return sum(input, dim, keepdim) / n if n else sum(input, dim, keepdim) * float("nan")


# Note [Mean as one node]
# `mean(x)` is `sum(x) / x.numel()`: two primitives, so eager autograd recorded two nodes
# (SumBackward0, then the division named MeanBackward0) and ran two backward steps, each
# with its own cotangent tensor. PyTorch records one MeanBackward0 whose next function is
# x's. In eager mode (no transform active), for a tensor requiring grad and no `dim`,
# `mean` records one node of `_mean_node` instead: its value is the two primitives' impls
# applied in the same order (the same bits), and its rule is the two rules in sequence,
# division of the cotangent by the count (a number, as `x / n` divides), then the
# broadcast back to x's shape, so first and higher derivatives are the same values as
# before, and under create_graph the same two nodes (DivBackward0, ExpandBackward0) are
# recorded. The node reads no value (x only for its shape: Note [What backward reads]).
# Under transforms, on meta tensors, with `dim` and for float16 (Note [float16 accumulates
# in float32]) the general path runs as before.
# One MAML inner step (benchmarks/transforms.py, classic row) records a mean per loss.

def _recorded_mean(input, d):
    axes = _all_axes(d.ndim)
    n = d.size
    r = E.div.impl(np.asarray(Rd.reduce_sum.impl(d, axes=axes)), np.asarray(n, d.dtype))
    params = _MEAN_PARAMS.get((axes, n))
    if params is None:
        params = {"axes": axes, "count": n}
        if len(_MEAN_PARAMS) < 1024:
            _MEAN_PARAMS[(axes, n)] = params
    edge = (input.grad_fn, input._output_nr) if input.grad_fn is not None else (input, 0)
    return _prim.record_node(_mean_node, (input,), (edge,), wrap_array(r), params=params)


def _mean_vjp(g, out, x, *, axes, count):
    """MeanBackward0: reduce_sum's rule after div's (Note [Mean as one node])."""
    return (Rd._expand_back(g / count, x, axes),)


_MEAN_PARAMS: dict = {}   # (axes, count) -> the params a mean node keeps (never written)
_mean_node = _prim.Primitive("mean", vjp=_mean_vjp, register=False)
_mean_node.vjp_needs = ((),)   # Note [What backward reads]: shapes only


def nanmean(input, dim=None, keepdim=False):
    from .math import isnan, logical_not
    mask = logical_not(isnan(input))
    return nansum(input, dim, keepdim) / sum(mask, dim, keepdim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Returns the product of the elements of ``input`` over ``dim``."""
    check_tensor(input, "input", "prod")
    if dtype is not None:
        input = convert(input, _dt.to_dtype(dtype))
    elif input._data.dtype.kind in "iub":
        input = convert(input, _dt.int64)
    if dim is not None and isinstance(dim, (tuple, list)):
        raise TypeError("prod(): argument 'dim' must be int, not tuple")
    return _reduce(Rd.reduce_prod, input, dim, keepdim, "prod")


def amax(input, dim=(), keepdim=False):
    """Maximum over ``dim``; the gradient is split evenly among ties."""
    _check_nonempty(input, dim, "amax")
    return _reduce(Rd.reduce_max, input, dim if dim != () else None, keepdim, "amax")


def amin(input, dim=(), keepdim=False):
    """Minimum over ``dim``; the gradient is split evenly among ties."""
    _check_nonempty(input, dim, "amin")
    return _reduce(Rd.reduce_min, input, dim if dim != () else None, keepdim, "amin")


def _check_nonempty(x, dim, fn):
    if x.numel() != 0:
        return
    if dim in (None, ()):
        raise RuntimeError(f"{fn}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in _axes(x, dim, fn):
        if x.shape[d] == 0:  # a max over no elements has no value (no identity)
            raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size.")


def _extremum(arg_prim, red_prim, fn):
    def op(input, dim=None, keepdim=False, *, other=None):
        check_tensor(input, "input", fn)
        if dim is None and other is not None:
            dim = other   # max(input, other=t): as max(input, t)
        if isinstance(dim, Tensor):  # max(input, other)
            from .math import maximum, minimum
            return (maximum if fn == "max" else minimum)(input, dim)
        if dim is None:
            _check_nonempty(input, None, fn)
            return _reduce(red_prim, input, None, False, fn)
        d = canonical_dim(dim, input.ndim)
        result = getattr(_rt, fn)
        if input.ndim == 0:
            return result(input.clone(), _zeros_index(input))
        if input.shape[d] == 0:
            raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size.")
        idx = bind(arg_prim, input, axis=d)
        from .index import gather
        values = gather(input, d, idx.unsqueeze(d)).squeeze(d)
        if keepdim:
            return result(values.unsqueeze(d), idx.unsqueeze(d))
        return result(values, idx)
    op.__name__ = fn
    op.__doc__ = (f"Returns the {fn}imum of ``input``; with ``dim``, a namedtuple (values, "
                  f"indices) whose gradient flows to the selected element.")
    return op


def _zeros_index(like):
    from .creation import zeros
    return zeros((), dtype=_dt.int64, device=like.device)


def _extremum_name(stem):
    """``max()`` is MaxBackward1, ``max(dim)`` MaxBackward0; ``max(other)`` keeps maximum's."""
    return lambda input, dim=None, *a, other=None, **k: (
        f"{stem}Backward1" if dim is None and other is None else
        f"{stem}Backward0" if isinstance(dim, int) else None)


_max = backward_name(_extremum_name("Max"))(_extremum(Rd.argmax, Rd.reduce_max, "max"))
_min = backward_name(_extremum_name("Min"))(_extremum(Rd.argmin, Rd.reduce_min, "min"))


def max(input, dim=None, keepdim=False, *, other=None):
    """Returns the maximum of ``input``; with ``dim``, a namedtuple (values, indices) whose
    gradient flows to the selected element."""
    d = eager_array(input)
    if dim is None and d is not None and other is None:
        out = _small.amax(d)   # one C call: Note [Small-tensor kernels], _prims/_small.py
        if out is not None:
            return wrap(out)
        if d.size:   # Note [Eager fast path]: reduce_max's impl
            return wrap_array(np.maximum.reduce(d, axis=_all_axes(d.ndim)))
    return _max(input, dim, keepdim, other=other)


def min(input, dim=None, keepdim=False, *, other=None):
    """Returns the minimum of ``input``; with ``dim``, a namedtuple (values, indices) whose
    gradient flows to the selected element."""
    d = eager_array(input)
    if dim is None and d is not None and other is None:
        out = _small.amin(d)   # one C call: Note [Small-tensor kernels], _prims/_small.py
        if out is not None:
            return wrap(out)
        if d.size:   # Note [Eager fast path]: reduce_min's impl
            return wrap_array(np.minimum.reduce(d, axis=_all_axes(d.ndim)))
    return _min(input, dim, keepdim, other=other)


def _arg(prim, fn):
    def op(input, dim=None, keepdim=False):
        d = eager_array(input)
        if dim.__class__ is int and d is not None and -len(d.shape) <= dim < len(d.shape) and \
                d.shape[dim]:   # Note [Eager fast path]: the primitive's impl
            out = prim.impl(d, axis=dim)
            return wrap_array(np.expand_dims(out, dim) if keepdim else out)
        if dim is None and d is not None and d.size:   # what the general path binds, below
            return wrap_array(prim.impl(d.reshape(-1), axis=0))
        check_tensor(input, "input", fn)
        if dim is None:
            if input.numel() == 0:
                raise IndexError(f"{fn}(): Expected reduction dim to be specified for "
                                 "input.numel() == 0.")
            return bind(prim, input.reshape(-1), axis=0)
        d = canonical_dim(dim, input.ndim)
        if input.ndim == 0:
            return _zeros_index(input)
        if input.shape[d] == 0:
            raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size.")
        out = bind(prim, input, axis=d)
        return out.unsqueeze(d) if keepdim else out
    op.__name__ = fn
    op.__doc__ = f"Returns the indices of the {fn[3:]}imum values of ``input`` along ``dim``."
    return op


argmax = _arg(Rd.argmax, "argmax")
argmin = _arg(Rd.argmin, "argmin")


def aminmax(input, *, dim=None, keepdim=False):
    return _rt.aminmax(
        amin(input, dim if dim is not None else (), keepdim),
        amax(input, dim if dim is not None else (), keepdim))


@backward_name("VarBackward0")
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` with Bessel's correction by default (``correction=1``)."""
    check_tensor(input, "input", "var")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if isinstance(dim, bool):
        correction, dim = (1 if dim else 0), None
    axes = _axes(input, dim, "var")
    n = 1
    for a in axes:
        n *= input.shape[a]
    mu = mean(input, dim, keepdim=True)
    d = input - mu
    from .math import abs as _abs
    sq = d * d if not input.is_complex() else _abs(d) ** 2
    if n == 0:
        # Over no elements the variance is NaN, a constant: its tangent is 0 (PyTorch),
        # where 0 / 0 would make the tangent NaN too.
        return sum(sq, dim, keepdim) + float("nan")
    return sum(sq, dim, keepdim) / np.maximum(n - correction, 0)


@backward_name("StdBackward0")
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation over ``dim`` (see ``var``)."""
    from .math import sqrt, where
    v = var(input, dim, unbiased, keepdim, correction=correction)
    # Where the variance is 0 the gradient is 0, not 0 * inf (PyTorch masks it): the
    # inner where keeps sqrt's derivative finite, the outer one sends nothing through it.
    zero = v == 0
    return where(zero, 0.0, sqrt(where(zero, 1.0, v)))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


@backward_name("LogsumexpBackward0")
def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over ``dim``, computed stably."""
    from .math import exp, isinf, log, where
    input = convert(input, float_dtype_for(input.dtype))
    if input.numel() == 0:  # no shift needed (or possible: amax over no elements raises)
        out = log(sum(exp(input), dim, keepdim=True))
        return out if keepdim else out.squeeze(_axes(input, dim, "logsumexp"))
    m = amax(input, dim, keepdim=True).detach()
    m = where(isinf(m), 0.0, m)
    out = log(sum(exp(input - m), dim, keepdim=True)) + m
    return out if keepdim else out.squeeze(_axes(input, dim, "logsumexp"))


def softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    """Softmax over ``dim``: exp(x) / sum(exp(x))."""
    d = eager_array(input)
    if d is not None and dtype is None and dim.__class__ is int:
        out = _small.softmax(d, dim)   # Note [Eager softmax]: one C call
        if out is not None:
            return wrap(out)
        if d.dtype.kind == "f" and d.size and -len(d.shape) <= dim < len(d.shape):
            # Note [Eager softmax]: the general path's five primitives on the arrays
            m = np.maximum.reduce(d, axis=dim, keepdims=True)
            e = E.exp.impl(E.sub.impl(d, m))
            return wrap_array(E.div.impl(e, np.add.reduce(e, axis=dim, keepdims=True)))
    return _softmax(input, dim, dtype)


# Note [Eager softmax]
# softmax of a floating tensor the eager fast path takes (`eager_array`) over an int dim
# in range is what the general path's primitives compute, applied to the array directly:
# reduce_max over the dim (kept as size 1, which `keepdims` does in the same reduction:
# the same values), sub, exp, reduce_sum, div, each by its primitive's impl or ufunc.
# Over the last dim of a C-contiguous float32/float64 array one C call computes those
# five steps with the same bits (`_small.softmax`, Note [Small-tensor kernels]), and one
# computes log_softmax's as `logsumexp` composes them (`_small.log_softmax`: max, the
# `where` that makes an infinite max 0, sub, exp, sum, log, add, sub), where the general
# path took ~35 us on 10 elements.
# Other inputs (a dtype to convert to, an implicit dim, an integer or empty tensor, a 0-d
# one) take the general path.


@backward_name("SoftmaxBackward0")
def _softmax(input, dim=None, dtype=None):
    from .math import exp
    if dtype is not None:
        input = convert(input, _dt.to_dtype(dtype))
    dim = _implicit_dim(input, dim, "softmax", 5)   # the warning names softmax's caller
    # The shift by the max is for stability only; an empty input has none (and no max).
    e = exp(input - amax(input, dim, keepdim=True).detach() if input.numel() else input)
    return e / sum(e, dim, keepdim=True)


def log_softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    """log(softmax(x)) over ``dim``, computed stably."""
    d = eager_array(input)
    if d is not None and dtype is None and dim.__class__ is int:
        out = _small.log_softmax(d, dim)   # Note [Eager softmax]: one C call
        if out is not None:
            return wrap(out)
    return _log_softmax(input, dim, dtype)


@backward_name("LogSoftmaxBackward0")
def _log_softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = convert(input, _dt.to_dtype(dtype))
    dim = _implicit_dim(input, dim, "log_softmax", 5)   # the warning names log_softmax's caller
    return input - logsumexp(input, dim, keepdim=True)


def _implicit_dim(x, dim, fn, stacklevel=4):
    if dim is None:
        import warnings
        warnings.warn(f"Implicit dimension choice for {fn} has been deprecated. Change the call "
                      "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
        return 0 if x.ndim in (0, 1, 3) else 1
    return dim


@backward_name("CumsumBackward0")
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum of ``input`` along ``dim``."""
    if dtype is not None:
        input = convert(input, _dt.to_dtype(dtype))
    elif input._data.dtype.kind in "iub":
        input = convert(input, _dt.int64)
    if input.ndim == 0:
        canonical_dim(dim, 0)  # only 0 and -1 are valid on a 0-d tensor
        return input.clone()
    if input.dtype == _dt.float16:   # Note [float16 accumulates in float32]
        return convert(cumsum(convert(input, _dt.float32), dim), _dt.float16)
    return bind(Rd.cumsum, input, axis=canonical_dim(dim, input.ndim))


# Note [float16 accumulates in float32]
# PyTorch's CPU kernels reduce float16 in float32 and round once at the end, so the mean of
# [60000, 60000] is 60000, not inf (the float16 sum's overflow), and a running sum that
# passes through inf comes back ([60000, inf, 60000] for [6e4, 6e4, -6e4]). NumPy's float16
# sum already accumulates in float32 (its pairwise loop), so `sum` agrees as it is; mean
# (and var through it) and cumsum, which NumPy runs in float16, compute in float32 and
# round once.


@backward_name("CumprodBackward0")
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim`` (running products: exact with zeros, like PyTorch)."""
    if dtype is not None:
        input = convert(input, _dt.to_dtype(dtype))
    elif input._data.dtype.kind in "iub":
        input = convert(input, _dt.int64)
    if input.ndim == 0:
        canonical_dim(dim, 0)  # only 0 and -1 are valid on a 0-d tensor
        return input.clone()
    d = canonical_dim(dim, input.ndim)
    n = input.shape[d]
    outs, acc = [], None
    for i in range(n):
        xi = input.select(d, i)
        acc = xi if acc is None else acc * xi
        outs.append(acc)
    from .shape import stack
    return stack(outs, d) if outs else input.clone()


def all(input, dim=None, keepdim=False):
    """Tests if all elements evaluate to True."""
    from .math import logical_not
    b = convert(input, _dt.bool_)
    out = logical_not(any(logical_not(b), dim, keepdim))
    return convert(out, _dt.uint8) if input.dtype == _dt.uint8 else out   # PyTorch's legacy


def any(input, dim=None, keepdim=False):
    """Tests if any element evaluates to True."""
    b = convert(input, _dt.bool_)
    if input.numel() == 0:
        out = convert(sum(b, dim, keepdim), _dt.bool_)
    else:
        out = _reduce(Rd.reduce_max, b, dim, keepdim, "any")
    return convert(out, _dt.uint8) if input.dtype == _dt.uint8 else out   # PyTorch's legacy


def count_nonzero(input, dim=None):
    return sum(convert(input, _dt.bool_), dim)

