"""The meta device: shape-only payloads, and the abstract value type used by shape rules."""
from __future__ import annotations

import numpy as np

from .symbolic import Sym


class MetaArray:
    """A payload with a shape and a dtype and no data (``device='meta'``)."""

    __slots__ = ("shape", "dtype")

    requires_grad = False   # the Tensor holding it carries the flag

    def __init__(self, shape, dtype):
        # a size is an int or a symbol (Note [Guards] in symbolic.py); int() would specialise
        self.shape = tuple(s if s.__class__ is int or s.__class__ is Sym else int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __repr__(self):
        return f"MetaArray({self.shape}, {self.dtype})"


# Abstract values handed to shape rules: anything with .shape and .dtype. MetaArray is
# exactly that, so shape rules see the same type whether called by the meta device or by
# a tracer that only needs shapes.
ShapedArray = MetaArray


def abstract(payload) -> MetaArray:
    return MetaArray(payload.shape, payload.dtype)
