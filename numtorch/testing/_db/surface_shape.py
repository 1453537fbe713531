"""OpInfo entries: the everyday shape and index functions (_ops/_surface_utils.py,
_ops/_surface_shape.py)."""
from __future__ import annotations

import numpy as np

from ..opinfo import ALL_REAL, SAME, OpInfo, SampleInput, make, register


def _split_with_sizes_samples(dtype, requires_grad):
    yield SampleInput(make((5, 2), dtype, requires_grad), ([2, 3],))
    yield SampleInput(make((2, 4), dtype, requires_grad), ([1, 0, 3], -1), name="negdim_empty")


def _split_with_sizes_ref(x, sizes, dim=0):
    return np.split(x, np.cumsum(sizes)[:-1], axis=dim)


register(
    OpInfo("split_with_sizes", ref=_split_with_sizes_ref, result_dtype=SAME, dtypes=ALL_REAL,
           sample_inputs=_split_with_sizes_samples),
)
