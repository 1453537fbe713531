"""The ``ndarray`` of ``numtorch._numpy``: a NumPy-semantics array that wraps one Tensor.

This module owns the ndarray class (attributes, conversion, indexing and assignment,
operators, methods) and the conversions between user values and Tensors (`asarray`,
`to_tensor`, `normalize_axis`). It must not implement NumPy functions itself: operators
and methods call the namespace functions (`_ufuncs`, `_funcs`), which call the one shared
implementation in ``numtorch._ops.numpy_api`` (Note [One implementation per NumPy function]).

Because an ndarray is a Tensor underneath, NumPy code on it records autograd, batches under
``vmap`` and traces into graphs.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from .._core import dtypes as _dt
from .._core.tensor import Tensor
from .._ops import creation as C, index as I, shape as S

AxisError = np.exceptions.AxisError


# Note [ndarray is a Tensor box]
# An ndarray holds exactly one Tensor (``.tensor``) and nothing else: no strides, no
# base, no flags. Views NumPy would share memory with are the Tensor's views (basic
# slicing, reshape, transpose), so assignment through them reaches the base as in NumPy.
# Deviations (documented in the package docstring): a negative-step slice is a copy (as in
# torch.compile's NumPy support), NumPy scalars come back as 0-d ndarrays, and the dtypes
# are those numtorch has (no uint16/32/64, float128, strings, datetimes, structured).


def np_dtype(t: Tensor) -> np.dtype:
    return t.dtype.np


def to_tensor(x, dtype=None) -> Tensor:
    """A Tensor for any array-like (ndarray, Tensor, NumPy array/scalar, nested sequence, scalar).

    Python and NumPy values become constants with NumPy's dtype (float64 for floats, int64
    for ints); ``dtype`` (a NumPy dtype) casts the result when given.
    """
    if isinstance(x, ndarray):
        t = x.tensor
    elif isinstance(x, Tensor):
        t = x
    else:
        if isinstance(x, (list, tuple)) and builtins.any(
                isinstance(e, (ndarray, Tensor)) for e in x):
            return S.stack([to_tensor(e, dtype) for e in x], 0) if x else to_tensor([], dtype)
        arr = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
        if arr.dtype == object:
            raise TypeError(f"numtorch._numpy: cannot make an array from {type(x).__name__} "
                            "(object arrays are not supported)")
        return C.as_tensor(arr)
    return cast(t, dtype) if dtype is not None else t


def cast(t: Tensor, dtype) -> Tensor:
    """``t`` converted to the NumPy dtype ``dtype`` (no op when it already has it)."""
    dtype = np.dtype(dtype)
    if t.dtype.np == dtype:
        return t
    return t.to(_dt.from_numpy(dtype))


def asarray(a, dtype=None, order=None, *, copy=None, like=None) -> "ndarray":
    """Convert the input to an array (``numpy.asarray``): ndarrays pass through unchanged."""
    if isinstance(a, ndarray) and (dtype is None or a.dtype == np.dtype(dtype)) and not copy:
        return a
    t = to_tensor(a, dtype)
    if copy and (t is getattr(a, "tensor", None) or t is a):
        t = S.clone(t)
    return ndarray(t)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """Create an array (``numpy.array``): a copy of ``object`` unless ``copy=False``."""
    t = to_tensor(object, dtype)
    if copy and isinstance(object, (ndarray, Tensor)):
        t = S.clone(t)
    while t.ndim < ndmin:
        t = S.unsqueeze(t, 0)
    return ndarray(t)


def wrap(x):
    """Tensors (also inside tuples/lists) as ndarrays; other values unchanged."""
    if isinstance(x, Tensor):
        return ndarray(x)
    if isinstance(x, tuple):
        return tuple(wrap(e) for e in x)
    if isinstance(x, list):
        return [wrap(e) for e in x]
    return x


def normalize_axis(axis, ndim, *, allow_tuple=True):
    """NumPy's ``axis`` (None, int, or a sequence of ints) checked against ``ndim``.

    Out-of-range axes raise ``numpy.exceptions.AxisError`` (a ValueError and an IndexError,
    as NumPy raises); repeated axes raise ValueError. Returns None, an int or a tuple.
    """
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        if not allow_tuple:
            raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
        out = tuple(normalize_axis(a, ndim) for a in axis)
        if len(set(out)) != len(out):
            raise ValueError("duplicate value in 'axis'")
        return out
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an "
                        "integer") from None
    if not -max(ndim, 1) <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
        raise AxisError(a, ndim)
    return a % ndim if ndim else 0


# ---------------------------------------------------------------------------------------
# Indexing

def _index_item(i):
    if isinstance(i, ndarray):
        return i.tensor
    if isinstance(i, (list, np.ndarray)):
        return to_tensor(i)
    if isinstance(i, np.generic):
        return i.item()
    return i


def _dims_consumed(i) -> int:
    if i is None:
        return 0
    if isinstance(i, Tensor) and i.dtype is _dt.bool_:
        return max(i.ndim, 1)
    return 1


def _positive_steps(t: Tensor, index: tuple):
    """Rewrite negative-step slices as a flip of that dimension plus a positive slice.

    Returns (tensor, index); the flip copies (Note [ndarray is a Tensor box]).
    """
    if not builtins.any(isinstance(i, slice) and i.step is not None and i.step < 0
                        for i in index):
        return t, index
    n_ellipsis_dims = t.ndim - builtins.sum(_dims_consumed(i) for i in index
                                            if i is not Ellipsis)
    out, dim = [], 0
    for i in index:
        if i is Ellipsis:
            dim += n_ellipsis_dims
        elif isinstance(i, slice) and i.step is not None and i.step < 0:
            n = t.shape[dim]
            r = range(*i.indices(n))
            t = S.flip(t, (dim,))
            i = slice(0, 0) if not r else slice(n - 1 - r[0], n - r[-1], -i.step)
            dim += 1
        else:
            dim += _dims_consumed(i)
        out.append(i)
    return t, tuple(out)


def _normalize_index(index):
    return tuple(_index_item(i) for i in (index if isinstance(index, tuple) else (index,)))


def getitem(t: Tensor, index) -> Tensor:
    idx = _normalize_index(index)
    for i in idx:
        if isinstance(i, float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             "(`None`) and integer or boolean arrays are valid indices")
    t, idx = _positive_steps(t, idx)
    return I.getitem(t, idx if len(idx) != 1 else idx[0])


def setitem(t: Tensor, index, value) -> None:
    """``t[index] = value`` with NumPy's casting of ``value`` to ``t``'s dtype."""
    idx = _normalize_index(index)
    v = value.tensor if isinstance(value, ndarray) else value
    if isinstance(v, Tensor):
        v = cast(v, np_dtype(t))
    else:
        v = C.as_tensor(np.asarray(v).astype(np_dtype(t)))
    flipped, pidx = _positive_steps(t, idx)
    if flipped is t:
        t[idx if len(idx) != 1 else idx[0]] = v
        return
    # A negative-step target: assign into the flipped copy, then write it back flipped.
    flipped[pidx if len(pidx) != 1 else pidx[0]] = v
    t.copy_(_unflip(flipped, t, idx))


def _unflip(flipped, t, idx):
    dims, dim = [], 0
    n_ellipsis_dims = t.ndim - builtins.sum(_dims_consumed(i) for i in idx if i is not Ellipsis)
    for i in idx:
        if i is Ellipsis:
            dim += n_ellipsis_dims
            continue
        if isinstance(i, slice) and i.step is not None and i.step < 0:
            dims.append(dim)
        dim += _dims_consumed(i)
    return S.flip(flipped, tuple(dims))


# ---------------------------------------------------------------------------------------
# The array class

def _binary(name, reflected=False):
    def op(self, other):
        from . import _ufuncs
        if not isinstance(other, (ndarray, Tensor, np.ndarray, np.generic, bool, int, float,
                                  complex, list, tuple)):
            return NotImplemented
        fn = getattr(_ufuncs, name)
        return fn(other, self) if reflected else fn(self, other)
    op.__name__ = name
    return op


def _inplace(name):
    def op(self, other):
        from . import _ufuncs
        getattr(_ufuncs, name)(self, other, out=self)
        return self
    return op


def _unary(name):
    def op(self):
        from . import _ufuncs
        return getattr(_ufuncs, name)(self)
    return op


def _method(name, *, first=None):
    """An ndarray method that calls the namespace function ``name`` with ``self`` first."""
    def m(self, *args, **kwargs):
        from . import _funcs
        return getattr(_funcs, name)(self, *args, **kwargs)
    m.__name__ = name
    m.__doc__ = f"``a.{name}(...)`` is ``numpy.{name}(a, ...)``."
    return m


class ndarray:
    """A NumPy array on a numtorch Tensor (``numtorch._numpy.ndarray``).

    ``a.tensor`` is the Tensor; NumPy's attributes, methods, indexing and operators follow
    NumPy 2.x semantics (NEP 50 promotion, float64 defaults, 0-d arrays for scalars).
    """

    __slots__ = ("tensor",)
    __array_priority__ = 1000  # plain ndarray (op) ours defers to our reflected operators

    def __init__(self, t):
        if not isinstance(t, Tensor):
            t = to_tensor(t)
        self.tensor = t

    # -- attributes ----------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(self.tensor.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.tensor.dtype.np

    @property
    def ndim(self) -> int:
        return self.tensor.ndim

    @property
    def size(self) -> int:
        return self.tensor.numel()

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def T(self) -> "ndarray":
        return self.transpose()

    @property
    def mT(self) -> "ndarray":
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return ndarray(S.transpose(self.tensor, -2, -1))

    @property
    def real(self) -> "ndarray":
        from . import _funcs
        return _funcs.real(self)

    @property
    def imag(self) -> "ndarray":
        from . import _funcs
        return _funcs.imag(self)

    @property
    def flat(self):
        return iter(self.ravel())

    # -- conversion ----------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        arr = self.tensor.__array__()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def item(self, *args):
        if args:
            return self[args if len(args) > 1 else args[0]].item()
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.tensor.reshape(()).item()

    def tolist(self):
        return self.tensor.tolist()

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self.dtype.kind not in "biu" or self.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return operator.index(self.item())

    def __len__(self):
        if not self.ndim:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.ndim:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        try:
            body = repr(self.__array__())
        except Exception:  # under a transform there is no concrete data to show
            return f"ndarray(shape={self.shape}, dtype={self.dtype}, tensor={self.tensor!r})"
        return body

    __str__ = __repr__
    __hash__ = None

    # -- indexing ------------------------------------------------------------------------
    def __getitem__(self, index):
        return ndarray(getitem(self.tensor, index))

    def __setitem__(self, index, value):
        setitem(self.tensor, index, value)

    # -- NumPy's protocols: plain NumPy functions called on our arrays --------------------
    __array_ufunc__ = None  # set in _ufuncs (needs the ufunc table)

    def __array_function__(self, func, types, args, kwargs):
        from . import _dispatch
        return _dispatch.array_function(func, types, args, kwargs)

    # -- operators -----------------------------------------------------------------------
    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("subtract"), _binary("subtract", True)
    __mul__, __rmul__ = _binary("multiply"), _binary("multiply", True)
    __truediv__, __rtruediv__ = _binary("true_divide"), _binary("true_divide", True)
    __floordiv__, __rfloordiv__ = _binary("floor_divide"), _binary("floor_divide", True)
    __mod__, __rmod__ = _binary("remainder"), _binary("remainder", True)
    __pow__, __rpow__ = _binary("power"), _binary("power", True)
    __matmul__, __rmatmul__ = _binary("matmul"), _binary("matmul", True)
    __and__, __rand__ = _binary("bitwise_and"), _binary("bitwise_and", True)
    __or__, __ror__ = _binary("bitwise_or"), _binary("bitwise_or", True)
    __xor__, __rxor__ = _binary("bitwise_xor"), _binary("bitwise_xor", True)
    __eq__, __ne__ = _binary("equal"), _binary("not_equal")
    __lt__, __le__ = _binary("less"), _binary("less_equal")
    __gt__, __ge__ = _binary("greater"), _binary("greater_equal")
    __iadd__, __isub__ = _inplace("add"), _inplace("subtract")
    __imul__, __itruediv__ = _inplace("multiply"), _inplace("true_divide")
    __ifloordiv__, __imod__ = _inplace("floor_divide"), _inplace("remainder")
    __ipow__, __imatmul__ = _inplace("power"), _inplace("matmul")
    __iand__, __ior__, __ixor__ = (_inplace("bitwise_and"), _inplace("bitwise_or"),
                                   _inplace("bitwise_xor"))
    __neg__, __pos__ = _unary("negative"), _unary("positive")
    __abs__, __invert__ = _unary("absolute"), _unary("invert")

    def __divmod__(self, other):
        return self // other, self % other

    # -- methods -------------------------------------------------------------------------
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        t = cast(self.tensor, dtype)
        return ndarray(S.clone(t) if copy and t is self.tensor else t)

    def copy(self, order="C"):
        return ndarray(S.clone(self.tensor))

    def reshape(self, *shape, order="C", copy=None):
        from . import _funcs
        shape = shape[0] if len(shape) == 1 else shape
        return _funcs.reshape(self, shape, order=order, copy=copy)

    def transpose(self, *axes):
        from . import _funcs
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _funcs.transpose(self, axes or None)

    def flatten(self, order="C"):
        from . import _funcs
        return ndarray(S.clone(_funcs.ravel(self, order).tensor))

    def fill(self, value):
        self[...] = value

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """Sort in place (``ndarray.sort``)."""
        from . import _funcs
        self.tensor.copy_(_funcs.sort(self, axis, kind, order, stable=stable).tensor)

    def view(self, dtype=None):
        if dtype is not None and np.dtype(dtype) != self.dtype:
            raise NotImplementedError("numtorch._numpy: ndarray.view(dtype) reinterpreting "
                                      "bytes is not supported")
        return ndarray(S.view(self.tensor, tuple(self.shape)))

    def conj(self):
        from . import _ufuncs
        return _ufuncs.conjugate(self)

    conjugate = conj

    def dot(self, b, out=None):
        from . import _funcs
        return _funcs.dot(self, b, out=out)

    def __deepcopy__(self, memo):
        return self.copy()


for _name in ("sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin", "all",
              "any", "cumsum", "cumprod", "ptp", "ravel", "squeeze", "swapaxes", "argsort",
              "clip", "round", "nonzero", "repeat", "diagonal", "trace", "take", "nansum"):
    setattr(ndarray, _name, _method(_name))
