"""The Tensor class: a payload plus autograd metadata.

The payload is a NumPy array (eager), a Tracer (inside a transform) or a MetaArray
(``device='meta'``). This module owns the payload protocol, the eval interpreter at the
bottom of the stack, and the tensor's intrinsic properties. Math lives in ``_ops``; the
methods that forward to it are attached by ``_ops/methods.py``.
"""
from __future__ import annotations

import builtins as _builtins
import operator

import numpy as np
from numpy import ndarray

from . import dtypes as _dt
from . import primitive as _prim
from .meta import MetaArray


class Size(tuple):
    """``torch.Size``: a tuple of dimension sizes."""

    __slots__ = ()

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def __getitem__(self, item):
        if item.__class__ is slice:
            return Size(tuple.__getitem__(self, item))
        return tuple.__getitem__(self, item)


# Note [Warn-once user warnings]
# A few of PyTorch's UserWarnings come from C++ TORCH_WARN_ONCE: they are shown once per
# process, whatever Python's warning filters say about repeats. numtorch keeps the same
# behaviour with a module-level flag per warning (tests reset the flag to see it again).
_warned_scalar_of_requires_grad = [False]


def _warn_scalar_of_requires_grad(t):
    """PyTorch 2.13 warns once when ``float()``/``complex()`` (not ``int``, ``bool`` or
    ``.item()``) converts a tensor that requires grad while grad mode is on."""
    if _warned_scalar_of_requires_grad[0] or not _prim.grad_mode[0] or not t.requires_grad:
        return
    _warned_scalar_of_requires_grad[0] = True
    import warnings
    warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                  "unexpected behavior.\nConsider using tensor.detach() first.", UserWarning,
                  stacklevel=3)


class CudaNotAvailableError(RuntimeError, AssertionError):
    """Raised when a program asks for CUDA (or MPS), which numtorch does not have.

    It is a RuntimeError that says why, and also an AssertionError, the type PyTorch's
    CPU-only build raises ("Torch not compiled with CUDA enabled"), so code that catches
    either keeps working."""


# Device types a program may name: numtorch computes on 'cpu' (and shapes on 'meta');
# 'cuda' and 'mps' can be named (``torch.device("cuda" if torch.cuda.is_available() else
# "cpu")`` is everyday code) but placing a tensor there raises CudaNotAvailableError.
_DEVICE_TYPES = ("cpu", "meta", "cuda", "mps")


class device:
    """``torch.device``: ``'cpu'`` or ``'meta'``; ``'cuda'``/``'mps'`` can be named but not used.

    >>> device("cuda:1")
    device(type='cuda', index=1)
    """

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            raise CudaNotAvailableError(f"torch.device({type}): a bare device index means a "
                                        "CUDA device, which numtorch does not have (it runs on "
                                        "the CPU only)")
        if not isinstance(type, str):
            raise TypeError(f"device(): argument 'type' must be str, not {_builtins.type(type).__name__}")
        if ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of cpu, cuda, mps, meta device type at start of "
                               f"device string: {type} (numtorch runs on the CPU only)")
        self.type, self.index = type, index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return device, (self.type, self.index)

    def _check_usable(self, what="a tensor"):
        """Raises unless numtorch can place ``what`` on this device; returns self."""
        if self.type in ("cuda", "mps"):
            raise CudaNotAvailableError(
                f"{what} on device '{self}': {self.type.upper()} is not available in numtorch "
                f"(it runs on the CPU only; Torch not compiled with {self.type.upper()} "
                f"enabled). Use device='cpu', or pick it with torch.cuda.is_available().")
        return self


CPU = device("cpu")
META = device("meta")


class VersionCounter:
    """Counts in-place writes; shared by a tensor and all its views (Note [Version counter])."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


# Note [Version counter]
# Autograd saves the tensors a backward rule needs. If one of them is later modified in
# place, the saved value no longer is the one the derivative was taken at. Each tensor
# shares a counter with its views; in-place ops bump it and the backward engine compares
# it with the value seen when the tensor was saved, raising PyTorch's error on mismatch.


class Tensor:
    """A multi-dimensional array with PyTorch's semantics (``torch.Tensor``)."""

    __slots__ = ("_data", "_requires_grad", "grad_fn", "_grad", "_version_counter", "_base",
                 "_hooks", "_retains_grad", "_output_nr", "_view_fn", "_is_param", "__weakref__",
                 "__dict__")

    # ``Tensor(…)`` as a constructor (``__new__``) and ``repr`` build on the ops layer and
    # on ``printing``, both above this module: they are attached from there, as the
    # methods are (``_ops/methods.py``), so the core never imports upwards.

    def __init__(self, *args, **kwargs):
        pass

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        TENSOR_TYPES.add(cls)   # subclasses (nn.Parameter) take the eager fast paths too

    # -- payload ------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim=None):
        """Returns the size of the tensor, or of dimension ``dim``."""
        shape = self._data.shape
        if dim is None:
            return Size(shape)
        return shape[_canonical_dim(dim, len(shape))]

    @property
    def dtype(self) -> _dt.dtype:
        return _dt.from_numpy(self._data.dtype)

    @property
    def ndim(self) -> int:
        return len(self._data.shape)

    def dim(self) -> int:
        return len(self._data.shape)

    ndimension = dim

    def numel(self) -> int:
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    nelement = numel

    @property
    def device(self) -> device:
        return META if self._is_meta() else CPU

    @property
    def is_meta(self) -> bool:
        return self._is_meta()

    def _is_meta(self):
        d = self._data
        while True:
            if d.__class__ is ndarray:
                return False
            if d.__class__ is MetaArray:
                return True
            inner = d.inner()
            if inner is None:   # a trace variable: no device of its own
                return False
            d = inner._data

    is_cuda = False

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def element_size(self) -> int:
        return self._data.dtype.itemsize

    # -- autograd metadata ---------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        if self._requires_grad:
            return True
        d = self._data
        return d.__class__ is not ndarray and d.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        """Change if autograd should record operations on this tensor (in place)."""
        if not self.is_leaf:
            if requires_grad:
                self._requires_grad = True
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach().")
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients "
                f"(got dtype {self.dtype})")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        if self._grad is None and not self.is_leaf and not self._retains_grad:
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"grad of type {type(value).__name__}")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(f"assigned grad has data of a different size: expected "
                                   f"{list(self.shape)}, got {list(value.shape)}")
        self._grad = value

    @property
    def _version(self) -> int:
        return self._version_counter.value

    @property
    def data(self):
        """The tensor's data, detached from autograd (shares storage)."""
        return self.detach()

    @data.setter
    def data(self, value):
        self._data = value._data
        self._version_counter = value._version_counter

    # -- conversion ----------------------------------------------------------------------
    def numpy(self, *, force=False) -> ndarray:
        """Returns the tensor as a NumPy ndarray sharing its memory."""
        d = self._data
        if d.__class__ is not ndarray:
            if isinstance(d, MetaArray):
                raise NotImplementedError("Cannot copy out of meta tensor; no data!")
            if not force:
                _no_data_under_transform(self, "numpy()")
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return d

    def item(self):
        """Returns the value of this tensor as a standard Python number."""
        d = self._concrete("item()")
        if d.size != 1:
            raise RuntimeError(f"a Tensor with {d.size} elements cannot be converted to Scalar")
        return d.reshape(()).item()

    def tolist(self):
        """Returns the tensor as a (nested) list of Python numbers."""
        return self._concrete("tolist()").tolist()

    def _concrete(self, what):
        d = self._data
        while d.__class__ is not ndarray:
            if isinstance(d, MetaArray):
                raise RuntimeError(f"Tensor.{what} cannot be called on a meta tensor: it has no data")
            d = d.concrete(what)
        return d

    def __bool__(self):
        d = self._concrete("__bool__")
        if d.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        return bool(d.reshape(()))

    def __float__(self):
        _warn_scalar_of_requires_grad(self)
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        _warn_scalar_of_requires_grad(self)
        return complex(self.item())

    def __len__(self):
        shape = self._data.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        shape = self._data.shape
        if not shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(shape[0]))

    def __hash__(self):
        return id(self)

    def __array__(self, dtype=None, copy=None):
        d = self._concrete("__array__")
        return d if dtype is None else d.astype(dtype, copy=False)

    def __format__(self, spec):
        if self.ndim == 0 and self._data.__class__ is ndarray:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto):
        return (_rebuild, (np.array(self._concrete("pickle")), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        d = self._data
        if d.__class__ is ndarray:
            new = wrap(d.copy())
        elif isinstance(d, MetaArray):
            new = wrap(MetaArray(d.shape, d.dtype))
        else:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol")
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        new._requires_grad = self._requires_grad
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        if self.__class__ is not Tensor:
            new.__class__ = self.__class__
            new.__dict__.update(self.__dict__)
        new.__dict__.pop("_broadcast_view", None)   # a view of self's array (_ops/_common.py)
        memo[id(self)] = new
        return new


TENSOR_TYPES = {Tensor}


def _no_data_under_transform(t, what):
    raise RuntimeError(
        f"Tensor.{what} was called on a tensor inside a function transform (vmap, grad, ...). "
        "Its value is not concrete there; use torch ops (e.g. torch.where instead of "
        "data-dependent Python control flow).")


def _canonical_dim(dim, ndim, name="dim"):
    """Wrap a possibly negative ``dim`` into range, raising PyTorch's IndexError if out of range."""
    lo, hi = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name} must be an int, got {type(dim).__name__}")
    if dim < lo or dim > hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], "
                         f"but got {dim})")
    return int(dim) % ndim if ndim > 0 else 0


# ---------------------------------------------------------------------------------------
# Construction and the eval interpreter.

_new = object.__new__


def wrap(payload, requires_grad=False) -> Tensor:
    """Wrap a payload (ndarray, Tracer, MetaArray) into a fresh Tensor (the fields here and
    in `wrap_sharing` are the same)."""
    t = _new(Tensor)
    t._data = payload
    t._requires_grad = requires_grad
    t.grad_fn = None
    t._grad = None
    t._version_counter = vc = _new(VersionCounter)   # VersionCounter() without a Python frame
    vc.value = 0
    t._base = None
    t._hooks = None
    t._retains_grad = False
    t._output_nr = 0
    t._view_fn = None
    return t


def wrap_sharing(payload, version_counter) -> Tensor:
    """`wrap`, sharing ``version_counter`` (a view's, or an output's value that a backward
    node keeps) instead of making a new one; the same fields as `wrap` sets."""
    t = _new(Tensor)
    t._data = payload
    t._requires_grad = False
    t.grad_fn = None
    t._grad = None
    t._version_counter = version_counter
    t._base = None
    t._hooks = None
    t._retains_grad = False
    t._output_nr = 0
    t._view_fn = None
    return t


def wrap_array(value) -> Tensor:
    """Wrap a NumPy result, turning NumPy scalars into 0-d arrays."""
    return wrap(value if value.__class__ is ndarray else np.asarray(value))


def _rebuild(arr, requires_grad):
    """Unpickle a tensor (``Tensor.__reduce_ex__``'s reconstructor)."""
    t = wrap_array(arr)
    t._requires_grad = requires_grad
    return t


_data_of = operator.attrgetter("_data")


def eval_bind(prim, args, params):
    """The bottom interpreter: run ``prim.impl`` on NumPy arrays, or its shape rule on meta."""
    n = len(args)
    if n == 1:
        d = args[0]._data
        if d.__class__ is not ndarray:
            return _meta_eval(prim, [d], params)
        out = prim.impl(d, **params)
    elif n == 2:   # the common case, without building a list
        x, y = args[0]._data, args[1]._data
        if x.__class__ is not ndarray or y.__class__ is not ndarray:
            return _meta_eval(prim, [x, y], params)
        out = prim.impl(x, y, **params) if params else prim.impl(x, y)
    else:
        arrays = list(map(_data_of, args))   # no comprehension: a call in Python 3.11
        for d in arrays:
            if d.__class__ is not ndarray:
                return _meta_eval(prim, arrays, params)
        out = prim.impl(*arrays, **params)
    if prim.multiple_results:
        return tuple(wrap_array(o) for o in out)
    return wrap(out if out.__class__ is ndarray else np.asarray(out))


def _meta_eval(prim, arrays, params):
    if not all(isinstance(d, MetaArray) or (d.__class__ is ndarray and d.ndim == 0) for d in arrays):
        raise RuntimeError(f"{prim.name}: Expected all tensors to be on the same device, "
                           "but found at least two devices, meta and cpu!")
    out = prim.shape(*arrays, **params)
    if prim.multiple_results:
        return tuple(wrap(MetaArray(s, d)) for s, d in out)
    return wrap(MetaArray(*out))


_prim.eval_bind = _prim.eager_eval = eval_bind
_prim.wrap = wrap
