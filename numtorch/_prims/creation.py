"""Creation primitives: ``full`` and ``iota``, constants whose shape and value may be symbolic.

Eager creation (``torch.zeros``, ``full``, Python scalars as operands) makes NumPy arrays
directly and never binds these; they are bound where a size or a fill value is a symbol
(a traced ``zeros_like(x)`` of a shape ``(s0, 3)``, ``sum / s0`` in ``mean``, ``arange(s0)``),
so the graph computes the value from the input shapes at run time (_core/symbolic.py).
"""
from __future__ import annotations

import numpy as np

from .._core.primitive import Primitive

full = Primitive(
    "full", nondiff=True,
    impl=lambda *, shape, fill_value, dtype: np.full(shape, fill_value, dtype=dtype),
    shape=lambda *, shape, fill_value, dtype: (tuple(shape), np.dtype(dtype)))
full.batch = lambda values, bdims, *, shape, **params: (full.bind(shape=shape, **params), None)
full.vjp_needs = ()

# iota(shape=(n,), dtype): 0, 1, ..., n-1 (XLA's iota, one dimension)
iota = Primitive(
    "iota", nondiff=True,
    impl=lambda *, shape, dtype: np.arange(shape[0], dtype=dtype),
    shape=lambda *, shape, dtype: (tuple(shape), np.dtype(dtype)))
iota.batch = lambda values, bdims, *, shape, **params: (iota.bind(shape=shape, **params), None)
iota.vjp_needs = ()

# Lower rule (Note [Lower rules], _lower.py)
from ._lower import extern  # noqa: E402

full.lower = extern("a constant whose shape or value may be symbolic: NumPy at run time")
iota.lower = extern("a range whose size may be symbolic: NumPy at run time")
