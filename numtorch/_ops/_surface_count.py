"""Everyday membership, integer and counting functions of ``torch``: ``isin``, ``gcd``,
``lcm``, ``nanmedian``, ``bincount``, ``histc``.

Compositions of existing ops; this file must not define primitives. ``bincount`` and
``histc`` without explicit bounds size their result from the values (as in PyTorch, their
output shape depends on data), so they need concrete inputs. Docstrings follow PyTorch's.
"""
from __future__ import annotations


import numpy as np

from .._core import dtypes as _dt
from .._core.tensor import Tensor
from . import creation, index as _index, math, reduce, shape, sorting
from ._common import canonical_dim, check_tensor, scalar_type_name, to_tensor
from .. import return_types as _rt

__all__ = ["isin", "gcd", "lcm", "nanmedian", "bincount", "histc"]


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Tests if each element of ``elements`` is in ``test_elements``; returns a boolean
    tensor of the shape of ``elements`` (``invert`` negates it). Either may be a scalar."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): at least one of 'elements' and 'test_elements' must be a "
                        "Tensor")
    e = elements if isinstance(elements, Tensor) else to_tensor(elements)
    t = test_elements if isinstance(test_elements, Tensor) else to_tensor(test_elements)
    hit = reduce.any(math.eq(shape.unsqueeze(e, -1), shape.reshape(t, (-1,))), -1) \
        if t.numel() else creation.zeros(tuple(e.shape), dtype=_dt.bool_, device=e.device)
    return math.logical_not(hit) if invert else hit


# Euclid's algorithm needs at most this many steps for the dtype's values (consecutive
# Fibonacci numbers are the worst case), so the loop has a fixed length and traces.
_EUCLID_STEPS = {"uint8": 14, "int8": 13, "int16": 25, "int32": 48, "int64": 94}


def _check_integral(fn, a, b):
    for name, x in (("input", a), ("other", b)):
        check_tensor(x, name, fn)
    for x in (a, b):
        if x.dtype.name not in _EUCLID_STEPS:
            raise NotImplementedError(f'"{fn}_cpu" not implemented for '
                                      f"'{scalar_type_name(x.dtype)}'")


def gcd(input, other):
    """Computes the element-wise greatest common divisor (GCD) of ``input`` and ``other``
    (non-negative; gcd(0, 0) = 0)."""
    _check_integral("gcd", input, other)
    a, b = math.abs(input), math.abs(other)
    a, b = shape.broadcast_tensors(a, b)
    d = _dt.promote_types(a.dtype, b.dtype)
    a, b = a.to(d), b.to(d)
    one, zero = to_tensor(1, d), to_tensor(0, d)
    for _ in range(_EUCLID_STEPS[d.name]):
        nz = math.ne(b, 0)
        a, b = math.where(nz, b, a), math.where(nz, math.remainder(a, math.where(nz, b, one)),
                                                 zero)
    return a


def lcm(input, other):
    """Computes the element-wise least common multiple (LCM) of ``input`` and ``other``
    (non-negative; 0 when either is 0)."""
    _check_integral("lcm", input, other)
    g = gcd(input, other)
    safe = math.where(math.eq(g, 0), to_tensor(1, g.dtype), g)
    out = math.abs(math.mul(math.floor_divide(input, safe), other))
    return math.where(math.eq(g, 0), to_tensor(0, g.dtype), out).to(g.dtype)




def nanmedian(input, dim=None, keepdim=False):
    """Returns the median of the values in ``input``, ignoring NaN values (the lower of the
    two middle values for an even count; NaN only if all values are NaN). With ``dim``,
    a namedtuple (values, indices) of the medians of each row and their positions."""
    check_tensor(input, "input", "nanmedian")
    x = shape.reshape(input, (-1,)) if dim is None or input.dim() == 0 else \
        shape.movedim(input, canonical_dim(dim, input.dim()), -1)
    if x.shape[-1] == 0:
        if dim is None:
            return creation.full((), float("nan"), dtype=input.dtype, device=input.device)
        raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
    srt = sorting.sort(x, -1)                                  # NaN sorts last
    count = reduce.sum(math.logical_not(math.isnan(x)), -1, True)
    k = math.clamp_min(math.floor_divide(math.sub(count, 1), 2), 0)
    values = _index.gather(srt.values, -1, k)
    indices = _index.gather(srt.indices, -1, k)
    if dim is None:
        return shape.reshape(values, ())
    if input.dim() == 0:
        return _rt.nanmedian(shape.reshape(values, ()), shape.reshape(indices, ()))
    d = canonical_dim(dim, input.dim())
    values, indices = shape.movedim(values, -1, d), shape.movedim(indices, -1, d)
    if not keepdim:
        values, indices = shape.squeeze(values, d), shape.squeeze(indices, d)
    return _rt.nanmedian(values, indices)


def bincount(input, weights=None, minlength=0):
    """Count the frequency of each value in an array of non-negative ints: a tensor of size
    max(input) + 1 (at least ``minlength``); with ``weights``, sums the weights instead."""
    check_tensor(input, "input", "bincount")
    data = input._concrete("bincount()")
    if input.dim() != 1 or input.dtype.np.kind not in "iub" or (data.size and data.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = max(int(data.max()) + 1 if data.size else 0, int(minlength))
    idx = input.to(_dt.int64)
    if weights is None:
        return _index.index_add(creation.zeros(n, dtype=_dt.int64, device=input.device), 0, idx,
                                creation.ones(input.shape[0], dtype=_dt.int64, device=input.device))
    d = weights.dtype if weights.dtype.is_floating_point else _dt.float64
    return _index.index_add(creation.zeros(n, dtype=d, device=input.device), 0, idx,
                            weights.to(d))


def histc(input, bins=100, min=0, max=0):
    """Computes the histogram of a tensor: ``bins`` equal-width bins between ``min`` and
    ``max`` (the data's minimum and maximum when both are 0); elements outside are ignored."""
    check_tensor(input, "input", "histc")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{scalar_type_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and input.numel():
        data = input._concrete("histc()")
        lo, hi = float(data.min()), float(data.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    x = shape.reshape(input, (-1,)).detach()
    inside = math.logical_and(math.ge(x, lo), math.le(x, hi))
    pos = math.floor(math.mul(math.sub(x, lo), bins / (hi - lo))).to(_dt.int64)
    pos = math.clamp(pos, 0, bins - 1)                 # the maximum falls in the last bin
    ones = inside.to(input.dtype)
    return _index.index_add(creation.zeros(bins, dtype=input.dtype, device=input.device), 0,
                            pos, ones)


def _attach_methods():
    for name in ("isin gcd lcm nanmedian bincount histc").split():
        if name != "isin":
            setattr(Tensor, name, globals()[name])


_attach_methods()
