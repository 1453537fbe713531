"""NumPy interop: NumPy ufuncs and functions called on Tensors run numtorch ops.

This module owns ``Tensor.__array_ufunc__`` (NEP 13) and ``Tensor.__array_function__``
(NEP 18) and the table that maps NumPy's names and arguments (``axis``, ``keepdims``,
``ddof``) to numtorch's (``dim``, ``keepdim``, ``correction``). ``np.asarray(t)`` is
``Tensor.__array__`` and lives in ``_core/tensor.py``.

It must not convert a Tensor to an ndarray behind the user's back: that would drop
gradients and break transforms. A NumPy function without a mapping raises a TypeError
naming it (Note [NumPy dispatch]).

The entries of ``FUNCTIONS`` (np.sum, np.concatenate, …) live in ``numpy_functions.py``;
this module keeps the two protocols, the ufunc table and the argument helpers both use.
``UFUNCS`` and ``FUNCTIONS`` are the one implementation of each NumPy function in numtorch:
``numtorch._numpy`` (NumPy's semantics on ndarrays) calls these same entries after choosing
NumPy's dtypes, so here they keep PyTorch's promotion and float32 default for Tensor
callers (Note [One implementation per NumPy function] in ``numtorch/_numpy/_funcs.py``).

>>> import numpy as np, numtorch as torch
>>> x = torch.tensor([0.0, 1.0], requires_grad=True)
>>> y = np.sum(np.sin(x) * 2)
>>> type(y).__name__, y.grad_fn is not None
('Tensor', True)
"""
from __future__ import annotations

import builtins
import operator

import numpy as np
from numpy import ndarray

from .._core import dtypes as _dt
from .._core.tensor import Tensor
from . import creation as C, linalg as L, math as M, reduce as R
from ._common import result_type

# Note [NumPy dispatch]
# NumPy hands a call on a Tensor to us: a ufunc (np.add, np.sin, also operators such as
# ``ndarray + tensor`` and ``np.float64(2) * tensor``) through ``__array_ufunc__``, any
# other public function (np.sum, np.concatenate, ...) through ``__array_function__``.
# Both run the numtorch op of the same meaning with PyTorch's semantics (promotion,
# errors), so NumPy code records autograd, batches under vmap and traces. Operands that
# are ndarrays (or lists) become Tensors with ``as_tensor`` (sharing memory); NumPy
# scalars become Python scalars, which PyTorch treats as weak ("wrapped numbers").
# Results are Tensors (a 0-d Tensor where NumPy returns a scalar). ``out=`` writes into
# a Tensor with ``copy_`` (an in-place op, so autograd's rules for it apply) or into an
# ndarray. Arguments we do not support raise a TypeError naming them, never ignored.

_NOVALUE = getattr(np, "_NoValue", object())


def _given(v) -> bool:
    return v is not None and v is not _NOVALUE


def _reject(fn, **args):
    """Raise a TypeError for each NumPy argument given that numtorch does not support."""
    for name, v in args.items():
        if _given(v):
            raise TypeError(f"numpy.{fn}() on a Tensor: argument '{name}' is not supported by "
                            "numtorch's NumPy dispatch")


def _t(x) -> Tensor:
    """A Tensor operand: Tensors as they are, everything else through ``as_tensor``."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.generic):
        x = np.asarray(x)
    return C.as_tensor(x)


def _operand(x):
    """An elementwise operand: NumPy and Python scalars stay scalars (weak), arrays become Tensors."""
    if isinstance(x, Tensor) or isinstance(x, (bool, int, float, complex)):
        return x
    if isinstance(x, np.generic) and x.dtype.kind in "biufc":
        return x.item()
    return _t(x)


def _dim(axis):
    """NumPy's ``axis`` (None, int, or sequence) as numtorch's ``dim``."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(operator.index(a) for a in axis)
    return operator.index(axis)


def _keep(keepdims) -> bool:
    return bool(keepdims) if _given(keepdims) else False


def _dtype(dtype):
    return _dt.to_dtype(dtype) if dtype is not None else None


def _write_out(result, out, fn):
    """Store ``result`` into NumPy's ``out`` (a Tensor, an ndarray, or a 1-tuple of one)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"numpy.{fn}() on a Tensor: expected one output, got {len(out)}")
        out = out[0]
    if out is None:
        return result
    if isinstance(out, Tensor):
        return out.copy_(result)
    if isinstance(out, ndarray):
        np.copyto(out, result.detach().__array__(), casting="same_kind")
        return out
    raise TypeError(f"numpy.{fn}() on a Tensor: 'out' must be a Tensor or ndarray, "
                    f"got {type(out).__name__}")


def _promoted(op):
    """``op(a, b)`` on operands promoted to one dtype: NumPy's contractions mix dtypes freely,
    numtorch's (PyTorch's) require equal ones; promotion follows PyTorch's rules."""
    def fn(a, b, *args, **kwargs):
        a, b = _t(a), _t(b)
        if a._data.dtype != b._data.dtype:
            dt = result_type(a, b)
            a, b = a.to(dt), b.to(dt)
        return op(a, b, *args, **kwargs)
    return fn


# ---------------------------------------------------------------------------------------
# Ufuncs (__array_ufunc__)

def _ufunc_table():
    pairs = {
        "add": M.add, "subtract": M.sub, "multiply": M.mul, "true_divide": M.div,
        "divide": M.div, "floor_divide": M.floor_divide, "power": M.pow,
        "float_power": M.float_power, "remainder": M.remainder, "mod": M.remainder,
        "fmod": M.fmod, "negative": M.neg, "positive": M.positive, "absolute": M.abs,
        "fabs": M.abs, "sign": M.sign, "exp": M.exp, "exp2": M.exp2, "expm1": M.expm1,
        "log": M.log, "log2": M.log2, "log10": M.log10, "log1p": M.log1p, "sqrt": M.sqrt,
        "square": M.square, "reciprocal": M.reciprocal, "sin": M.sin, "cos": M.cos,
        "tan": M.tan, "arcsin": M.asin, "arccos": M.acos, "arctan": M.atan,
        "arctan2": M.atan2, "sinh": M.sinh, "cosh": M.cosh, "tanh": M.tanh,
        "arcsinh": M.asinh, "arccosh": M.acosh, "arctanh": M.atanh, "floor": M.floor,
        "ceil": M.ceil, "trunc": M.trunc, "rint": M.round, "maximum": M.maximum,
        "minimum": M.minimum, "fmax": M.fmax, "fmin": M.fmin, "equal": M.eq,
        "not_equal": M.ne, "less": M.lt, "less_equal": M.le, "greater": M.gt,
        "greater_equal": M.ge, "logical_and": M.logical_and, "logical_or": M.logical_or,
        "logical_xor": M.logical_xor, "logical_not": M.logical_not,
        "bitwise_and": M.bitwise_and, "bitwise_or": M.bitwise_or,
        "bitwise_xor": M.bitwise_xor, "invert": M.bitwise_not, "isnan": M.isnan,
        "isinf": M.isinf, "isfinite": M.isfinite, "conjugate": M.conj, "hypot": M.hypot,
        "logaddexp": M.logaddexp, "matmul": _promoted(L.matmul),
    }
    return {getattr(np, name): fn for name, fn in pairs.items()}


UFUNCS = _ufunc_table()

# ufunc.reduce / ufunc.accumulate: numtorch reduction and its keyword for the dtype.
_REDUCE = {np.add: R.sum, np.multiply: None, np.maximum: R.amax, np.minimum: R.amin,
           np.logical_and: R.all, np.logical_or: R.any}
_ACCUMULATE = {np.add: R.cumsum, np.multiply: R.cumprod}


def array_ufunc(self, ufunc, method, *inputs, out=None, **kwargs):
    """``Tensor.__array_ufunc__``: run the numtorch op that ``ufunc`` names (Note [NumPy dispatch])."""
    for x in inputs + (out or ()):
        if not isinstance(x, (Tensor, ndarray, np.generic, bool, int, float, complex, list)):
            return NotImplemented
    name = f"{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    if method == "__call__":
        result = _call_ufunc(ufunc, inputs, kwargs, name)
    elif method == "reduce":
        result = _reduce_ufunc(ufunc, inputs, kwargs, name)
    elif method == "accumulate":
        result = _accumulate_ufunc(ufunc, inputs, kwargs, name)
    elif method == "outer" and ufunc.nin == 2 and ufunc in UFUNCS:
        _reject(name, **kwargs)
        a, b = _t(inputs[0]), _t(inputs[1])
        result = UFUNCS[ufunc](a.reshape(tuple(a.shape) + (1,) * b.ndim), b)
    else:
        raise TypeError(f"numpy.{name} has no numtorch mapping for Tensors; use a numtorch op "
                        "(or convert explicitly with t.detach().numpy(), which stops gradients)")
    return _write_out(result, out, name)


def _call_ufunc(ufunc, inputs, kwargs, name):
    fn = UFUNCS.get(ufunc)
    if fn is None:
        raise TypeError(f"numpy.{name} has no numtorch mapping for Tensors; use a numtorch op "
                        "(or convert explicitly with t.detach().numpy(), which stops gradients)")
    dtype = kwargs.pop("dtype", None)
    if kwargs.pop("where", True) is not True:
        raise TypeError(f"numpy.{name}() on a Tensor: argument 'where' is not supported")
    kwargs.pop("casting", None), kwargs.pop("order", None), kwargs.pop("subok", None)
    _reject(name, **kwargs)
    if ufunc.nin == 1:
        args = (_t(inputs[0]),)
    else:
        args = tuple(_operand(x) for x in inputs)
        if not builtins.any(isinstance(a, Tensor) for a in args):
            args = (_t(args[0]),) + args[1:]
    if dtype is not None:
        d = _dt.to_dtype(dtype)
        args = tuple(a.to(d) if isinstance(a, Tensor) else a for a in args)
    return fn(*args)


def _reduce_ufunc(ufunc, inputs, kwargs, name):
    if ufunc not in _REDUCE:
        raise TypeError(f"numpy.{name} has no numtorch mapping for Tensors")
    axis = kwargs.pop("axis", 0)
    keepdim = _keep(kwargs.pop("keepdims", False))
    dtype = _dtype(kwargs.pop("dtype", None))
    _reject(name, initial=kwargs.pop("initial", None), where=kwargs.pop("where", None), **kwargs)
    x = _t(inputs[0])
    if dtype is not None:
        x = x.to(dtype)
    if ufunc is np.multiply:
        return _prod(x, _dim(axis), keepdim)
    fn = _REDUCE[ufunc]
    dim = _dim(axis)
    if fn in (R.amax, R.amin):
        return fn(x, () if dim is None else dim, keepdim)
    return fn(x, dim, keepdim)


def _accumulate_ufunc(ufunc, inputs, kwargs, name):
    if ufunc not in _ACCUMULATE:
        raise TypeError(f"numpy.{name} has no numtorch mapping for Tensors")
    axis = kwargs.pop("axis", 0)
    dtype = _dtype(kwargs.pop("dtype", None))
    _reject(name, **kwargs)
    return _ACCUMULATE[ufunc](_t(inputs[0]), operator.index(axis), dtype=dtype)


def _prod(x, dim, keepdim):
    """``prod`` over an int, None, or a tuple of dims (one reduction per dim)."""
    if not isinstance(dim, tuple):
        return R.prod(x, dim, keepdim)
    for d in sorted((d % x.ndim for d in dim), reverse=True):
        x = R.prod(x, d, keepdim)
    return x


# ---------------------------------------------------------------------------------------
# Functions (__array_function__)

FUNCTIONS: dict = {}


def implements(*np_funcs):
    """Register a NumPy-signature wrapper as the Tensor implementation of ``np_funcs``."""
    def deco(fn):
        for f in np_funcs:
            FUNCTIONS[f] = fn
        return fn
    return deco


def array_function(self, func, types, args, kwargs):
    """``Tensor.__array_function__``: the numtorch equivalent of ``func`` (Note [NumPy dispatch])."""
    impl = FUNCTIONS.get(func)
    if impl is None:
        raise TypeError(
            f"{func.__module__}.{func.__name__} has no numtorch mapping, so it cannot take a "
            "Tensor (a silent conversion to ndarray would drop gradients). Use a numtorch op, "
            "or convert explicitly with t.detach().numpy().")
    for t in types:
        if not issubclass(t, (Tensor, ndarray)):
            return NotImplemented
    return impl(*args, **kwargs)


# The entries of FUNCTIONS (numpy_functions.py registers them with `implements`).
from . import numpy_functions  # noqa: E402,F401

Tensor.__array_ufunc__ = array_ufunc
Tensor.__array_function__ = array_function
