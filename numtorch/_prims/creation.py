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

# Lower rules (Note [Lower rules], _lower.py): movements with no operand; an element of
# ``full`` is its value, one of ``iota`` its index.
from ._lower import movement  # noqa: E402

full.lower = movement(lambda load, idx, shapes, out, *, shape, fill_value, dtype:
                      load.const(fill_value))
iota.lower = movement(lambda load, idx, shapes, out, *, shape, dtype: f"({idx[0]})")
