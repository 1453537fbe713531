"""Everyday utilities of the ``torch`` namespace that have no derivative: type queries
(``is_tensor``, ``finfo``, ``iinfo``, ``typename``, ``can_cast``), global flags
(float32 matmul precision, deterministic algorithms, anomaly mode), small creation and
index helpers (``scalar_tensor``, ``empty_strided``, ``tril_indices``, ``unravel_index``)
and the Tensor properties that describe storage (``nbytes``, ``storage_offset`` …).

This file owns only these queries and flags; it must not define differentiable math (the
differentiable surface lives in ``_surface_math.py`` and friends, composed of existing ops).
"""
from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.tensor import Tensor
from . import creation, shape as _shape

__all__ = ["is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel", "finfo",
           "iinfo", "typename", "is_same_size", "can_cast", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
           "set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "is_inference_mode_enabled", "scalar_tensor", "empty_strided", "split_with_sizes",
           "tril_indices", "triu_indices", "unravel_index"]


def _require_tensor(fn, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(x).__name__}")


# ---------------------------------------------------------------------------------------
# Type queries

def is_tensor(obj) -> bool:
    """Returns True if ``obj`` is a PyTorch tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:
    """Returns True if the data type of ``input`` is a floating point data type."""
    _require_tensor("is_floating_point", input)
    return input.is_floating_point()


def is_complex(input) -> bool:
    """Returns True if the data type of ``input`` is a complex data type."""
    _require_tensor("is_complex", input)
    return input.is_complex()


def is_nonzero(input) -> bool:
    """Returns True if ``input`` is a single element tensor which is not equal to zero after
    type conversions; raises for tensors with zero or more than one element."""
    _require_tensor("is_nonzero", input)
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def numel(input) -> int:
    """Returns the total number of elements in the ``input`` tensor."""
    _require_tensor("numel", input)
    return input.numel()


def is_same_size(input, other) -> bool:
    """Returns True if ``input`` and ``other`` have the same size."""
    _require_tensor("is_same_size", input)
    _require_tensor("is_same_size", other)
    return tuple(input.shape) == tuple(other.shape)


_TYPENAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
              "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
              "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
              "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def typename(obj) -> str:
    """String representation of the type of an object: ``torch.FloatTensor`` for a float32
    tensor, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return "torch." + _TYPENAMES.get(obj.dtype.name, "Tensor")
    module = type(obj).__module__ or ""
    name = type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


def can_cast(from_, to) -> bool:
    """Determines if a type conversion is allowed under PyTorch casting rules: no cast to a
    lower category (complex > floating > integral > boolean)."""
    def category(d):
        k = d.np.kind
        return 3 if k == "c" else 2 if k == "f" else 0 if k == "b" else 1
    for name, d in (("from_", from_), ("to", to)):
        if not isinstance(d, _dt.dtype):
            position = 1 if name == "from_" else 2
            raise TypeError(f"can_cast(): argument '{name}' (position {position}) must be "
                            f"torch.dtype, not {type(d).__name__}")
    return category(from_) <= category(to)


class finfo:
    """Machine limits of a floating point ``torch.dtype``: ``bits``, ``eps``, ``max``,
    ``min``, ``tiny`` (= ``smallest_normal``), ``resolution`` and ``dtype`` (its name)."""

    def __init__(self, type=None):
        d = _dt.get_default_dtype() if type is None else type
        if not isinstance(d, _dt.dtype) or d.np.kind not in "fc":
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = np.finfo(d.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)   # PyTorch: 10**-digits, exactly
        self.dtype = info.dtype.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer ``torch.dtype``: ``bits``, ``max``, ``min``, ``dtype``."""

    def __init__(self, type):
        if isinstance(type, _dt.dtype) and type.np.kind == "b":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(type, _dt.dtype) or type.np.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = info.dtype.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# ---------------------------------------------------------------------------------------
# Global flags

# Note [Flags without effect]
# numtorch computes float32 matmuls in float32 on NumPy's BLAS, is deterministic on one
# machine for a given thread count, and has no anomaly checks in its backward engine. The
# flags below are kept (validated, readable back) so scripts that set them run unedited;
# they change nothing numtorch computes. Each docstring says so.
_FLAGS = {"matmul_precision": "highest", "deterministic": False, "deterministic_warn_only": False,
          "anomaly": False, "anomaly_check_nan": True}


def set_float32_matmul_precision(precision) -> None:
    """Sets the internal precision of float32 matrix multiplications: ``"highest"``,
    ``"high"`` or ``"medium"``. numtorch always computes in full float32 precision whatever
    the setting (Note [Flags without effect]); the value is kept for
    ``get_float32_matmul_precision``."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        import warnings
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _FLAGS["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """Returns the current value of float32 matrix multiplication precision
    (``"highest"`` by default)."""
    return _FLAGS["matmul_precision"]


def use_deterministic_algorithms(mode, *, warn_only=False) -> None:
    """Sets whether PyTorch operations must use deterministic algorithms. numtorch's ops are
    deterministic already (Note [Flags without effect]); the flag is kept for
    ``are_deterministic_algorithms_enabled``."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
                        f"not {type(mode).__name__}")
    _FLAGS["deterministic"] = bool(mode)
    _FLAGS["deterministic_warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Returns True if the global deterministic flag is turned on."""
    return _FLAGS["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Returns True if the global deterministic flag is set to warn only."""
    return _FLAGS["deterministic_warn_only"]


def set_anomaly_enabled(enabled, check_nan=True) -> None:
    """Turns anomaly detection on or off. numtorch's backward engine does not check for
    anomalies (Note [Flags without effect]); the flag is kept for ``is_anomaly_enabled``."""
    _FLAGS["anomaly"] = bool(enabled)
    _FLAGS["anomaly_check_nan"] = bool(check_nan)


def is_anomaly_enabled() -> bool:
    """Returns True if anomaly detection is enabled."""
    return _FLAGS["anomaly"]


def is_anomaly_check_nan_enabled() -> bool:
    """Returns True if anomaly detection would check for NaN in backward results."""
    return _FLAGS["anomaly_check_nan"]


def is_inference_mode_enabled() -> bool:
    """Returns True if inference mode is currently enabled."""
    from ..autograd import grad_mode
    return grad_mode.inference_depth[0] > 0


# ---------------------------------------------------------------------------------------
# Creation and index helpers

def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False) -> Tensor:
    """Returns a 0-dimensional tensor holding ``s``, of the default floating dtype unless
    ``dtype`` is given."""
    if isinstance(s, Tensor):
        s = s.item()
    return creation.full((), s, dtype=_dt.get_default_dtype() if dtype is None else dtype,
                         device=device, requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False) -> Tensor:
    """Creates a tensor with the specified ``size`` and ``stride``, filled with undefined
    data (numtorch fills it with zeros)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    if any(s < 0 for s in size):
        bad = next(s for s in size if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {list(size)}")
    dt = _dt.get_default_dtype() if dtype is None else dtype
    out = creation.zeros(size, dtype=dt, device=device)
    order = sorted(range(len(size)), key=lambda i: stride[i])
    dense, acc = True, 1
    for i in order:
        dense = dense and (size[i] == 1 or stride[i] == acc)
        acc *= size[i]
    if dense and out._data.__class__ is np.ndarray and all(size):
        # A dense layout (a permutation of a contiguous one) is honoured exactly; any other
        # (overlapping or gapped strides) gets a contiguous tensor: its values are undefined
        # either way, and numtorch's in-place writes assume no element aliases another.
        buf = np.zeros(acc, dtype=dt.np)
        arr = np.lib.stride_tricks.as_strided(buf, size, tuple(st * buf.itemsize for st in stride))
        out = creation.from_numpy(arr)
    return out.requires_grad_(True) if requires_grad else out


def split_with_sizes(input, split_sizes, dim=0):
    """Splits ``input`` into chunks of the given ``split_sizes`` along ``dim`` (which must
    sum to the size of that dimension)."""
    _require_tensor("split_with_sizes", input)
    sizes = [int(s) for s in split_sizes]
    d = dim + input.dim() if dim < 0 else dim
    n = input.shape[d]
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {dim}), but got split_sizes={sizes}")
    return _shape.split(input, sizes, dim)


def _tri_indices(row, col, offset, dtype, device, upper):
    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name} must be non-negative, got{v}")
    r, c = np.triu_indices(row, offset, col) if upper else np.tril_indices(row, offset, col)
    return creation.tensor(np.stack([r, c]).astype(np.int64), dtype=dtype, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None) -> Tensor:
    """Returns the indices of the lower triangular part of a ``row``-by-``col`` matrix in a
    2-by-N tensor (row coordinates first), ``offset`` selecting the diagonal."""
    return _tri_indices(row, col, offset, _dt.int64 if dtype is None else dtype, device, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None) -> Tensor:
    """Returns the indices of the upper triangular part of a ``row``-by-``col`` matrix in a
    2-by-N tensor (row coordinates first), ``offset`` selecting the diagonal."""
    return _tri_indices(row, col, offset, _dt.int64 if dtype is None else dtype, device, True)


def unravel_index(indices, shape):
    """Converts a tensor of flat indices into a tuple of coordinate tensors that index into
    an arbitrary tensor of the specified ``shape``."""
    if not isinstance(indices, Tensor):
        indices = creation.tensor(indices)
    if indices.dtype.np.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    flat = indices._concrete("numpy").astype(np.int64)
    n = int(np.prod(shape, dtype=np.int64))
    if flat.size and (flat.min() < -n or flat.max() >= n):
        raise RuntimeError("'indices' must be in range [-{0}, {0})".format(n))
    flat = np.where(flat < 0, flat + n, flat)
    coords = np.unravel_index(flat, shape) if shape else ()
    return tuple(creation.tensor(np.asarray(c, dtype=np.int64)) for c in coords)


# ---------------------------------------------------------------------------------------
# Tensor properties about storage

def _root_data(t):
    while t._base is not None:
        t = t._base
    return t._data


def _storage_offset(self) -> int:
    """Returns the tensor's offset in its underlying storage, in number of elements."""
    d, root = self._data, _root_data(self)
    if d.__class__ is not np.ndarray or root.__class__ is not np.ndarray or d is root:
        return 0
    delta = d.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return delta // d.itemsize if np.shares_memory(d, root) else 0


def _get_device(self) -> int:
    """The device ordinal of a CUDA tensor; -1 for a CPU tensor."""
    return -1


def _is_same_size(self, other) -> bool:
    return is_same_size(self, other)


def _is_inference(self) -> bool:
    """Returns True if the tensor is an inference tensor (numtorch has none: inference mode
    only turns recording off)."""
    return False


def attach_methods():
    """Sets the Tensor methods and properties of this file (called once from methods.py)."""
    Tensor.nbytes = property(lambda self: self.numel() * self._data.dtype.itemsize,
                             doc="Total bytes consumed by the elements of the tensor.")
    Tensor.itemsize = property(lambda self: self._data.dtype.itemsize,
                               doc="Size in bytes of an individual element.")
    Tensor.is_cpu = property(lambda self: True, doc="True: numtorch tensors live on the CPU.")
    Tensor.is_signed = lambda self: self.dtype.is_signed
    Tensor.is_nonzero = is_nonzero
    Tensor.is_same_size = _is_same_size
    Tensor.get_device = _get_device
    Tensor.is_inference = _is_inference
    Tensor.storage_offset = _storage_offset


attach_methods()
