"""``make_tensor``: random tensors of a given shape and dtype for tests (``torch.testing``)."""
from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.tensor import wrap_array
from .._prims.random import default_generator


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None, generator=None):
    """A tensor of ``shape`` filled with values uniform in [low, high).

    Defaults follow PyTorch: floats in [-9, 9], signed integers in [-9, 10), unsigned in
    [0, 10), bools random. ``generator`` (a ``numtorch.Generator``) makes the draw
    reproducible independently of the global seed.

    >>> import numtorch as torch
    >>> make_tensor(2, 3, dtype=torch.float64, low=0, high=1).shape
    torch.Size([2, 3])
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    dtype = _dt.to_dtype(dtype)
    rng = (generator or default_generator)._np
    full = shape[:-1] + (shape[-1] * 2,) if noncontiguous and shape else shape
    kind = dtype.np.kind
    if kind == "b":
        arr = rng.integers(0, 2, size=full).astype(bool)
    elif kind in "iu":
        lo = 0 if kind == "u" else -9
        lo = int(max(lo, np.iinfo(dtype.np).min, low if low is not None else lo))
        hi = int(min(10, np.iinfo(dtype.np).max + 1) if high is None else high)
        arr = rng.integers(lo, max(hi, lo + 1), size=full).astype(dtype.np)
        if exclude_zero:
            arr[arr == 0] = 1
    else:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        real = rng.uniform(lo, hi, size=full)
        if kind == "c":
            real = real + 1j * rng.uniform(lo, hi, size=full)
        arr = real.astype(dtype.np)
        if exclude_zero:
            arr[arr == 0] = np.finfo(dtype.np).eps
    if noncontiguous and shape:
        arr = arr[..., ::2]
    t = wrap_array(arr)
    if device is not None and str(device) == "meta":
        t = t.to("meta")
    if requires_grad:
        t.requires_grad_(True)
    return t
