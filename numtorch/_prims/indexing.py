"""Indexing primitives: gather/scatter/scatter_add along a dim, take/index_add along an axis.

`gather(x, index, dim)` is torch.gather (NumPy's take_along_axis); its transpose is
`scatter_add`. `take(x, index, axis)` picks whole slices by an index array of any shape
(index_select, embedding, advanced indexing); its transpose is `index_add`. Index operands
are int64 tensors and carry no derivative.
"""
from __future__ import annotations

import numpy as np

from .._core.primitive import Primitive
from ._helpers import T, bdim_size, move_bdim


def _check_index(index, size, what):
    if index.size and (index.min() < -size or index.max() >= size):
        bad = index[(index < -size) | (index >= size)].flat[0]
        raise IndexError(f"{what}: index {bad} is out of bounds for dimension with size {size}")


def _gather_impl(x, index, *, dim):
    _check_index(index, x.shape[dim], "gather")
    return np.take_along_axis(x, index, axis=dim)


def _scatter_add_impl(x, index, src, *, dim):
    # np.add.at on a flat view with one linear index: NumPy's fast path for one 1-D index
    # (1.8x faster than a tuple of index arrays at 100k x 64 into 10k rows); the same
    # additions in the same order (index's C order), so the same bits.
    _check_index(index, x.shape[dim], "scatter_add")
    out = x.copy()                     # C order, so out.reshape(-1) is a view
    idx = list(np.indices(index.shape, sparse=True))
    idx[dim] = np.where(index < 0, index + x.shape[dim], index)
    flat = np.ravel_multi_index(tuple(idx), x.shape) if out.size else index
    np.add.at(out.reshape(-1), flat.reshape(-1),
              src[tuple(slice(0, n) for n in index.shape)].reshape(-1))
    return out


def _scatter_impl(x, index, src, *, dim):
    _check_index(index, x.shape[dim], "scatter")
    out = x.copy()
    idx = list(np.indices(index.shape, sparse=True))
    idx[dim] = index
    out[tuple(idx)] = src[tuple(slice(0, n) for n in index.shape)]
    return out


def _batched_index_args(values, bdims):
    """Move batch dims to 0 and broadcast unbatched operands (index included)."""
    size = bdim_size(values, bdims)
    return [move_bdim(v, d, 0) if d is not None else
            T.broadcast_to(v.unsqueeze(0), (size,) + tuple(v.shape)) for v, d in zip(values, bdims)]


gather = Primitive(
    "gather", impl=_gather_impl,
    shape=lambda x, index, *, dim: (index.shape, x.dtype),
    vjp=lambda g, out, x, index, *, dim: (
        scatter_add.bind(T.zeros_like(x), index, g, dim=dim), None),
    jvp=lambda p, t, *, dim: (gather.bind(*p, dim=dim), gather.bind(t[0], p[1], dim=dim)),
    batch=lambda v, d, *, dim: (gather.bind(*_batched_index_args(v, d), dim=dim + 1), 0))


def _zeros_for(x, t):
    return t if t is not None else T.zeros_like(x)


scatter_add = Primitive(
    "scatter_add", impl=_scatter_add_impl,
    shape=lambda x, index, src, *, dim: (x.shape, x.dtype),
    vjp=lambda g, out, x, index, src, *, dim: (g, None, _pad_to(_gather_block(g, index, dim), src)),
    jvp=lambda p, t, *, dim: (scatter_add.bind(*p, dim=dim), scatter_add.bind(
        _zeros_for(p[0], t[0]), p[1], _zeros_for(p[2], t[2]), dim=dim)),
    batch=lambda v, d, *, dim: (scatter_add.bind(*_batched_index_args(v, d), dim=dim + 1), 0))

scatter = Primitive(
    "scatter", impl=_scatter_impl,
    shape=lambda x, index, src, *, dim: (x.shape, x.dtype),
    vjp=lambda g, out, x, index, src, *, dim: (
        scatter.bind(g, index, T.zeros_like(src), dim=dim), None,
        _pad_to(_gather_block(g, index, dim), src)),
    jvp=lambda p, t, *, dim: (scatter.bind(*p, dim=dim), scatter.bind(
        _zeros_for(p[0], t[0]), p[1], _zeros_for(p[2], t[2]), dim=dim)),
    batch=lambda v, d, *, dim: (scatter.bind(*_batched_index_args(v, d), dim=dim + 1), 0))


def _gather_block(g, index, dim):
    """gather(g, index) where index may be smaller than g in the dims other than ``dim``
    (torch.scatter writes only the leading block there): the gather reads that block."""
    if any(n != m for k, (n, m) in enumerate(zip(g.shape, index.shape)) if k != dim):
        g = g[tuple(slice(None) if k == dim else slice(0, m) for k, m in enumerate(index.shape))]
    return gather.bind(g, index, dim=dim)


def _pad_to(g, src):
    """src may be larger than index in every dim (torch.scatter reads its leading block)."""
    if tuple(g.shape) == tuple(src.shape):
        return g
    return T.nn.functional.pad(g, [p for n, m in reversed(list(zip(g.shape, src.shape)))
                                   for p in (0, m - n)])


# take(x, index, axis): out.shape = x.shape[:axis] + index.shape + x.shape[axis+1:]

def _take_impl(x, index, *, axis):
    _check_index(index, x.shape[axis], "index")
    return np.take(x, index, axis=axis)


def _index_add_impl(x, index, src, *, axis):
    _check_index(index, x.shape[axis], "index_add")
    out = np.array(x, copy=True)
    moved = np.moveaxis(out, axis, 0)
    src_moved = np.moveaxis(src, list(range(axis, axis + index.ndim)), list(range(index.ndim)))
    flat_idx = index.reshape(-1)
    src_flat = src_moved.reshape((flat_idx.size,) + moved.shape[1:])
    if flat_idx.size and moved.ndim == 2 and np.unique(flat_idx).size == flat_idx.size:
        moved[flat_idx] += src_flat
    else:
        np.add.at(moved, flat_idx, src_flat)
    return out


def _take_shape(x, index, *, axis):
    return x.shape[:axis] + index.shape + x.shape[axis + 1:], x.dtype


def _take_batch(values, bdims, *, axis):
    (x, index), (dx, di) = values, bdims
    if di is None:
        x = move_bdim(x, dx, 0)
        return take.bind(x, index, axis=axis + 1), 0
    # A batched index: gather per example via a flattened batch*size axis.
    size = bdim_size(values, bdims)
    index = move_bdim(index, di, 0)
    if dx is None:
        return take.bind(x, index, axis=axis), axis
    x = move_bdim(x, dx, 0)
    x = T.movedim(x, axis + 1, 1)  # (B, n, ...rest)
    n = x.shape[1]
    flat = x.reshape((size * n,) + tuple(x.shape[2:]))
    offs = (T.arange(size) * n).reshape((size,) + (1,) * (index.ndim - 1))
    out = take.bind(flat, index + offs, axis=0)  # (B, *idx, ...rest)
    # move the index dims back to position axis (+1 for the batch dim)
    k = index.ndim - 1
    if axis:
        perm = [0] + list(range(1 + k, 1 + k + axis)) + list(range(1, 1 + k)) + \
            list(range(1 + k + axis, out.ndim))
        out = out.permute(perm)
    return out, 0


take = Primitive(
    "take", impl=_take_impl, shape=_take_shape,
    vjp=lambda g, out, x, index, *, axis: (index_add.bind(T.zeros_like(x), index, g, axis=axis), None),
    jvp=lambda p, t, *, axis: (take.bind(*p, axis=axis), take.bind(t[0], p[1], axis=axis)),
    batch=_take_batch)


def _index_add_batch(values, bdims, *, axis):
    (x, index, src), (dx, di, ds) = values, bdims
    if di is None:
        size = bdim_size(values, bdims)
        x = move_bdim(x, dx, 0) if dx is not None else T.broadcast_to(x.unsqueeze(0), (size,) + tuple(x.shape))
        src = move_bdim(src, ds, 0) if ds is not None else T.broadcast_to(src.unsqueeze(0), (size,) + tuple(src.shape))
        return index_add.bind(x, index, src, axis=axis + 1), 0
    # Batched index: flatten (B, n) into one axis and offset the indices per example.
    size = bdim_size(values, bdims)
    x, index, src = _batched_index_args(values, bdims)
    xm = T.movedim(x, axis + 1, 1)
    n = xm.shape[1]
    flat = xm.reshape((size * n,) + tuple(xm.shape[2:]))
    k = index.ndim - 1
    offs = (T.arange(size) * n).reshape((size,) + (1,) * k)
    srcm = T.movedim(src, tuple(range(axis + 1, axis + 1 + k)), tuple(range(1, 1 + k)))
    out = index_add.bind(flat, index + offs, srcm, axis=0)
    out = out.reshape((size, n) + tuple(xm.shape[2:]))
    return T.movedim(out, 1, axis + 1), 0


index_add = Primitive(
    "index_add", impl=_index_add_impl,
    shape=lambda x, index, src, *, axis: (x.shape, x.dtype),
    vjp=lambda g, out, x, index, src, *, axis: (g, None, take.bind(g, index, axis=axis)),
    jvp=lambda p, t, *, axis: (index_add.bind(*p, axis=axis), index_add.bind(
        _zeros_for(p[0], t[0]), p[1], _zeros_for(p[2], t[2]), axis=axis)),
    batch=_index_add_batch)


# Note [What backward reads] (autograd/engine.py): cotangents read the index only.
gather.vjp_needs = take.vjp_needs = ((1,), ())
scatter.vjp_needs = ((1,), (), (1,))
scatter_add.vjp_needs = index_add.vjp_needs = ((), (), (1,))


# Lower rules (Note [Lower rules]): data-dependent indices (and eager's bounds errors) stay
# NumPy calls between kernels.
from ._lower import extern  # noqa: E402

for _p in (gather, scatter, scatter_add, take, index_add):
    _p.lower = extern("data-dependent indices with bounds checks: NumPy")
