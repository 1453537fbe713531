"""dtypes: PyTorch's dtype objects over NumPy's, and PyTorch's type promotion.

This module owns the mapping between `numtorch.float32`-style dtype objects and NumPy
dtypes, the default dtype, and `result_type`. It must not know about tensors beyond the
three operand classes promotion distinguishes (see Note [Type promotion]).
"""
from __future__ import annotations

import builtins
import functools

import numpy as np


class dtype:
    """A tensor element type (``numtorch.float32`` …), a thin name over a NumPy dtype."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name: str, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.is_signed = self.np.kind in "fci"
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        return {float32: complex64, float64: complex128, float16: complex64}.get(self, self)


bool_ = dtype("bool", np.bool_)
uint8 = dtype("uint8", np.uint8)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)

ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update(half=float16, float=float32, double=float64, short=int16, int=int32,
                long=int64, cfloat=complex64, cdouble=complex128)


def from_name(name: str) -> dtype:
    return _BY_NAME[name]


def from_numpy(np_dtype) -> dtype:
    """The numtorch dtype of a NumPy dtype; a clear TypeError for ones PyTorch lacks."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        pass
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types "
            "are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool.") from None


def to_dtype(d) -> dtype:
    """Accept a numtorch dtype, a NumPy dtype/type, or a Python type; return a numtorch dtype."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return _default[0]
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool_
    if d is builtins.complex:
        return _default[0].to_complex()
    try:
        return from_numpy(np.dtype(d))
    except TypeError:
        raise TypeError(f"dtype must be a numtorch dtype, got {d!r}") from None


# ---------------------------------------------------------------------------------------
# Default dtype
_default = [float32]


def get_default_dtype() -> dtype:
    """Get the current default floating point dtype (initially ``float32``)."""
    return _default[0]


def set_default_dtype(d) -> None:
    """Set the default floating point dtype; only float32 and float64 are supported, as in PyTorch."""
    d = to_dtype(d)
    if d not in (float32, float64, float16):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d
    promote_types.cache_clear()
    _result_type_cached.cache_clear()


# ---------------------------------------------------------------------------------------
# Note [Type promotion]
# PyTorch does not use NumPy's rules. Operands fall in three classes of falling priority:
# dimensioned tensors, zero-dim tensors, and Python scalars ("wrapped numbers"). Each class
# is promoted within itself; then a lower class only matters if it is of a higher
# *category* (bool < integer < floating < complex) than the classes above it. So
# int32[3] + 2.5 -> float32 (the default dtype), float16[3] + 2.5 -> float16, and
# float32[3] + float64[] -> float32. Within one category NumPy's lattice agrees with
# PyTorch's; across categories the higher category wins (NumPy would widen float16 + int64
# to float64, PyTorch keeps float16). Results are cached per dtype tuple: this runs on the
# eager fast path of every binary op.

def _category(d: dtype) -> int:
    if d is bool_:
        return 0
    if d.is_complex:
        return 3
    if d.is_floating_point:
        return 2
    return 1


@functools.lru_cache(maxsize=None)
def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype to which both ``a`` and ``b`` can be promoted (``torch.promote_types``)."""
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if ca == cb:
        if ca == 1 and {a, b} == {uint8, int8}:
            return int16
        return from_numpy(np.promote_types(a.np, b.np))
    hi, lo = (a, b) if ca > cb else (b, a)
    if hi.is_complex and lo.is_floating_point:
        return complex128 if lo is float64 or hi is complex128 else complex64
    return hi


def _combine(higher, lower):
    # PyTorch's combine_categories: a lower-priority class raises the category only.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(value) -> dtype:
    """The dtype PyTorch gives a Python scalar used as a wrapped number."""
    if isinstance(value, builtins.bool):
        return bool_
    if isinstance(value, builtins.int):
        return int64
    if isinstance(value, builtins.float):
        return _default[0]
    if isinstance(value, builtins.complex):
        return _default[0].to_complex()
    return from_numpy(np.asarray(value).dtype)


@functools.lru_cache(maxsize=4096)
def _result_type_cached(dims, zeros, scalars):
    def fold(ds):
        out = None
        for d in ds:
            out = d if out is None else promote_types(out, d)
        return out
    return _combine(fold(dims), _combine(fold(zeros), fold(scalars)))


def result_type_of(dims=(), zeros=(), scalars=()) -> dtype:
    """Promotion over dtypes already split into the three classes of Note [Type promotion]."""
    return _result_type_cached(tuple(dims), tuple(zeros), tuple(scalars))
