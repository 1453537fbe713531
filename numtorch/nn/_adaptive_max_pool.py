"""``nn.functional.adaptive_max_pool1d/2d/3d`` (and their ``_with_indices`` spellings).

A composition of existing ops (so autograd, vmap, meta and compile come from their rules);
this file must not define primitives. Docstrings follow PyTorch's.

Note [Adaptive max pooling by gathering]
Window i of a dim of size n spans [floor(i*n/o), ceil((i+1)*n/o)), so windows differ in
length by at most one and may overlap. Each dim's windows become a constant (o, K) table
of positions, K the longest window, shorter windows padded by repeating their last
position; ``index_select`` along each pooled dim with the flattened table gives every
window's values, and ``max`` over the K1*K2*... taps (taps in row-major order, so a tie
goes to the first position in the window, PyTorch's scan order) gives the values and the
tap, mapped back to the flat position in the input plane for ``return_indices``. A
repeated last position never wins over its first copy (``max`` keeps the first maximum),
and the gradient goes to the chosen position only, as PyTorch's backward scatters it.
The gathered copy is at most (2n/o)**d / (n/o)**d = 2**d times the input.
"""
from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.tensor import Tensor
from .._ops import creation, index as _index, math as M, reduce as R, shape as S
from .._ops._common import scalar_type_name

__all__ = ["adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices"]


def _window_table(n, o):
    """(o, K) positions of each adaptive window, the shorter ones padded with their last."""
    starts = (np.arange(o) * n) // o
    ends = -((-(np.arange(1, o + 1) * n)) // o)
    k = int((ends - starts).max()) if o else 1
    return np.minimum(starts[:, None] + np.arange(k)[None, :], ends[:, None] - 1)


def _output_sizes(input, output_size, nd, fn):
    if nd == 1:
        if isinstance(output_size, (tuple, list)):
            if len(output_size) != 1:
                raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain "
                                   f"one int (got {len(output_size)})")
            output_size = output_size[0]
        output_size = (output_size,)
    elif isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if len(output_size) != nd:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {nd}")
    sizes = tuple(n if o is None else int(o) for n, o in zip(input.shape[-nd:], output_size))
    if any(o < 0 for o in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: "
                           f"{list(input.shape[:-nd]) + list(sizes)}")
    return sizes


def _check_input(input, nd, fn):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for k in range(1, input.ndim):
        if input.shape[k] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {k} being empty")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{fn}" not implemented for '
                                  f"'{scalar_type_name(input.dtype)}'")


def _adaptive_max_poolnd(input, output_size, return_indices, nd, fn):
    _check_input(input, nd, fn)
    sizes = _output_sizes(input, output_size, nd, fn)
    spatial = tuple(input.shape[-nd:])
    lead = tuple(input.shape[:-nd])
    if any(o == 0 for o in sizes):
        out = creation.empty(lead + sizes, dtype=input.dtype, device=input.device)
        empty_idx = creation.empty(lead + sizes, dtype=_dt.int64, device=input.device)
        return (out, empty_idx) if return_indices else out
    tables = [_window_table(n, o) for n, o in zip(spatial, sizes)]
    x = input
    for axis, table in enumerate(tables):     # dim -nd+axis becomes (o, K)
        dim = len(lead) + 2 * axis
        flat = creation.tensor(table.reshape(-1), dtype=_dt.int64, device=input.device)
        x = _index.index_select(x, dim, flat)
        x = S.reshape(x, tuple(x.shape[:dim]) + table.shape + tuple(x.shape[dim + 1:]))
    # (..., o1, K1, o2, K2, ...) -> (..., o1, o2, ..., K1 * K2 * ...)
    nl = len(lead)
    perm = tuple(range(nl)) + tuple(nl + 2 * a for a in range(nd)) + \
        tuple(nl + 2 * a + 1 for a in range(nd))
    x = S.reshape(S.permute(x, perm), lead + sizes + (-1,))
    values, tap = R.max(x, -1)
    if not return_indices:
        return values
    # tap -> per-dim window offset -> input position -> flat position in the plane
    flat_pos = None
    ks = [t.shape[1] for t in tables]
    for axis, table in enumerate(tables):
        stride = int(np.prod(ks[axis + 1:]))
        offset = M.remainder(M.floor_divide(tap, stride), ks[axis])
        shape = [1] * nd
        shape[axis] = sizes[axis]
        rows = creation.tensor(table.reshape(tuple(shape) + (ks[axis],)), dtype=_dt.int64,
                               device=input.device)
        pos = S.squeeze(_index.gather(S.expand(rows, lead + sizes + (ks[axis],)), -1,
                                      S.unsqueeze(offset, -1)), -1)
        flat_pos = pos if flat_pos is None else M.add(M.mul(flat_pos, spatial[axis]), pos)
    return values, flat_pos


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Applies a 1D adaptive max pooling over an input signal composed of several input
    planes; ``return_indices`` also returns the positions of the maxima."""
    return _adaptive_max_poolnd(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Applies a 2D adaptive max pooling over an input signal composed of several input
    planes (``output_size``: an int, or (H, W) where None keeps that size)."""
    return _adaptive_max_poolnd(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Applies a 3D adaptive max pooling over an input signal composed of several input
    planes."""
    return _adaptive_max_poolnd(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    """``adaptive_max_pool1d`` returning ``(output, indices)``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """``adaptive_max_pool2d`` returning ``(output, indices)``."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    """``adaptive_max_pool3d`` returning ``(output, indices)``."""
    return adaptive_max_pool3d(input, output_size, True)
