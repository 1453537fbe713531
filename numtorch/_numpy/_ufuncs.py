"""NumPy's ufuncs on ndarrays: NEP 50 dtype resolution around the shared Tensor kernels.

This module owns the ``ufunc`` objects of ``numtorch._numpy`` (``add``, ``sin``, …): their
dtype resolution, broadcasting check, ``out=``/``where=``/``dtype=`` handling and the
``reduce``/``accumulate``/``outer`` methods. The kernel of each ufunc is the numtorch op
in ``numtorch._ops.numpy_api.UFUNCS``, the same table the eager interop on Tensors uses
(Note [One implementation per NumPy function]); this module must not define kernels.
"""
from __future__ import annotations

import functools

import numpy as np

from .._core.tensor import Tensor
from .._ops import creation as C, math as M
from .._ops.numpy_api import UFUNCS
from ._ndarray import ndarray, to_tensor, cast

# Note [NEP 50 through NumPy's own resolver]
# NumPy 2's ``ufunc.resolve_dtypes`` takes the operand dtypes, with the Python types
# ``int``/``float``/``complex`` standing for weak Python scalars, and returns the loop's
# input and output dtypes exactly as NumPy would pick them (NEP 50, value-independent).
# We cast the operands to the loop's input dtypes, so the numtorch kernel sees one dtype
# and its PyTorch promotion has nothing to decide, then cast the result to the loop's
# output dtype. Resolution errors are NumPy's own (UFuncTypeError, a TypeError). A weak
# Python int that does not fit the loop dtype raises NumPy's OverflowError, because it is
# converted with ``np.asarray(value, dtype)``. Results are cached per dtype tuple.

_WEAK = (int, float, complex)


@functools.lru_cache(maxsize=4096)
def _resolve(np_ufunc, keys, dtype, casting):
    if dtype is None:
        return np_ufunc.resolve_dtypes(keys + (None,) * np_ufunc.nout, casting=casting)
    sig = (None,) * np_ufunc.nin + (dtype,) * np_ufunc.nout
    return np_ufunc.resolve_dtypes(keys + (None,) * np_ufunc.nout, signature=sig,
                                   casting=casting)


def _shape_str(shape):
    return "(" + ",".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def check_broadcast(shapes):
    """NumPy's ValueError for operands whose shapes do not broadcast."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(_shape_str(s) for s in shapes) + " ") from None


def _check_matmul(a, b):
    """NumPy's ValueError for matmul operands (gufunc signature (n?,k),(k,m?)->(n?,m?))."""
    sig = "with gufunc signature (n?,k),(k,m?)->(n?,m?)"
    for i, s in enumerate((a, b)):
        if not s:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions "
                             f"(has 0, gufunc core {sig} requires 1)")
    k_b = b[-2] if len(b) > 1 else b[0]
    if a[-1] != k_b:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"{sig} (size {k_b} is different from {a[-1]})")
    check_broadcast([a[:-2], b[:-2]])


def _key(x):
    t = type(x)
    return t if t in _WEAK else x.dtype.np


def _single_out(out, name):
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"The 'out' tuple must have exactly one entry per ufunc output "
                             f"(numpy.{name} has one)")
        out = out[0]
    if out is not None and not isinstance(out, (ndarray, np.ndarray)):
        raise TypeError(f"return arrays must be of ArrayType, got {type(out).__name__}")
    return out


def write_out(result: Tensor, out, name, casting="same_kind", where=None):
    """Store ``result`` into ``out`` (ours, or a plain NumPy array) with NumPy's casting check."""
    if out is None:
        return ndarray(result)
    src = result.dtype.np
    if not np.can_cast(src, out.dtype, casting):
        raise TypeError(f"Cannot cast ufunc '{name}' output from {src!r} to {out.dtype!r} "
                        f"with casting rule {casting!r}")
    if isinstance(out, np.ndarray):  # a plain NumPy array: a copy of the value, no autograd
        mask = True if where is None else where.__array__()
        np.copyto(out, result.__array__(), casting=casting, where=mask)
        return out
    value = cast(result, out.dtype)
    if where is not None:
        value = M.where(where, value, out.tensor)
    out.tensor.copy_(value)
    return out


class ufunc:
    """A NumPy ufunc on numtorch tensors (``numtorch._numpy.add`` …), NEP 50 promotion."""

    __slots__ = ("np_ufunc", "impl", "__name__", "nin", "nout")

    def __init__(self, np_ufunc, impl):
        self.np_ufunc, self.impl = np_ufunc, impl
        self.__name__, self.nin, self.nout = np_ufunc.__name__, np_ufunc.nin, np_ufunc.nout

    def __repr__(self):
        return f"<numtorch._numpy ufunc '{self.__name__}'>"

    def __call__(self, *inputs, out=None, where=True, casting="same_kind", order="K",
                 dtype=None, subok=True, signature=None):
        name = self.__name__
        if len(inputs) != self.nin:
            raise TypeError(f"{name}() takes from {self.nin} to {self.nin + 1} positional "
                            f"arguments but {len(inputs)} were given")
        if signature is not None:
            raise TypeError(f"numtorch._numpy.{name}: 'signature' is not supported")
        out = _single_out(out, name)
        ops = [x if type(x) in _WEAK else to_tensor(x) for x in inputs]
        keys = tuple(_key(x) for x in ops)
        loop = _resolve(self.np_ufunc, keys, None if dtype is None else np.dtype(dtype),
                        casting)
        if self.np_ufunc is np.matmul:
            _check_matmul(*[tuple(x.shape) for x in ops if isinstance(x, Tensor)])
        args = [cast(x, loop[i]) if isinstance(x, Tensor)
                else C.as_tensor(np.asarray(x, dtype=loop[i])) for i, x in enumerate(ops)]
        try:
            result = cast(self.impl(*args), loop[self.nin])
        except Exception:
            # Shapes are checked only when the kernel fails (free on the fast path), so
            # that a broadcast failure is NumPy's ValueError, not the kernel's error.
            check_broadcast([tuple(x.shape) for x in args])
            raise
        w = None
        if where is not True:
            w = cast(to_tensor(where), np.bool_)
            if out is None:  # NumPy leaves these elements uninitialised; we give zeros
                result = M.where(w, result, C.zeros_like(result))
                w = None
        return write_out(result, out, name, casting, w)

    # -- ufunc methods -------------------------------------------------------------------
    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=True):
        """``ufunc.reduce``: the namespace reduction of the same meaning (sum for add …)."""
        from . import _funcs
        fn = _REDUCTIONS.get(self.__name__)
        if fn is None or initial is not None or where is not True:
            raise TypeError(f"numtorch._numpy: {self.__name__}.reduce"
                            + (" with initial=/where=" if fn else "") + " is not supported")
        kwargs = {"dtype": dtype} if fn in ("sum", "prod") else {}
        return getattr(_funcs, fn)(array, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        from . import _funcs
        fn = {"add": "cumsum", "multiply": "cumprod"}.get(self.__name__)
        if fn is None:
            raise TypeError(f"numtorch._numpy: {self.__name__}.accumulate is not supported")
        return getattr(_funcs, fn)(array, axis=axis, dtype=dtype, out=out)

    def outer(self, A, B, **kwargs):
        a, b = to_tensor(A), to_tensor(B)
        a = a.reshape(tuple(a.shape) + (1,) * b.ndim)
        return self(ndarray(a), ndarray(b), **kwargs)


_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
               "logical_and": "all", "logical_or": "any"}

# Every ufunc of the shared table, under NumPy's name (``mod`` is ``remainder`` etc.).
UFUNC_OBJECTS = {np_uf: ufunc(np_uf, impl) for np_uf, impl in UFUNCS.items()}
globals().update({np_uf.__name__: uf for np_uf, uf in UFUNC_OBJECTS.items()})
mod, true_divide, abs, conj = remainder, divide, absolute, conjugate  # noqa: F821  NumPy's aliases


def array_ufunc(self, np_ufunc, method, *inputs, **kwargs):
    """``ndarray.__array_ufunc__``: plain NumPy ufuncs on our arrays run our ufuncs."""
    ours = UFUNC_OBJECTS.get(np_ufunc)
    if ours is None:
        raise TypeError(f"numpy.{np_ufunc.__name__} is not supported by numtorch._numpy (a "
                        "silent conversion to a NumPy array would drop gradients)")
    if "out" in kwargs:
        kwargs["out"] = _single_out(kwargs["out"], np_ufunc.__name__)
    if method == "__call__":
        return ours(*inputs, **kwargs)
    return getattr(ours, method)(*inputs, **kwargs)


ndarray.__array_ufunc__ = array_ufunc
