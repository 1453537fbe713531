"""OpInfo entries: ``x[idx]``, ``x[idx] = v``, gather/scatter, index_select/index_add, masks."""
from __future__ import annotations

import numpy as np

import numtorch as torch

from ..opinfo import (ALL_REAL, DATA_DEPENDENT, FLOATING, INTEGRAL, INT64, SAME, OpInfo,
                      SampleInput, make, make_index, make_mask, register)

_DTYPES = FLOATING + (torch.int64, torch.bool)


def _np_index(idx):
    """The NumPy spelling of an index: Tensors become arrays (inside tuples too)."""
    if isinstance(idx, tuple):
        return tuple(_np_index(i) for i in idx)
    if isinstance(idx, np.ndarray) or isinstance(idx, list):
        return np.asarray(idx)
    return idx


def _getitem_samples(dtype, requires_grad):
    def x():
        return make((4, 3, 2), dtype, requires_grad)
    basic = [1, -1, slice(1, 3), (slice(None), 0), (Ellipsis, 1), (None, 2), (1, None, slice(None, None, 2)),
             (slice(3, 0),), (Ellipsis,), (0, 0, 0)]
    for i, idx in enumerate(basic):
        yield SampleInput(x(), (idx,), name=f"basic{i}")
    yield SampleInput(x(), (make_index((2,), 4),), name="int_tensor")
    yield SampleInput(x(), ((slice(None), make_index((2, 2), 3)),), name="int_tensor_dim1")
    yield SampleInput(x(), ((make_index((3,), 4), slice(None), make_index((3,), 2)),),
                      name="separated_advanced")
    yield SampleInput(x(), ((make_index((2,), 4), make_index((2,), 3)),), name="adjacent_advanced")
    yield SampleInput(x(), ([0, 2, -1],), name="list")
    yield SampleInput(x(), (make_mask((4,)),), name="bool_mask", skip=DATA_DEPENDENT)
    yield SampleInput(x(), ((make_mask((4, 3)),),), name="bool_mask_2d", skip=DATA_DEPENDENT)
    yield SampleInput(x(), ((Ellipsis, make_index((2,), 2)),), name="ellipsis_int_tensor")
    yield SampleInput(make((), dtype, requires_grad), ((None,),), name="0d_none")
    yield SampleInput(make((3,), dtype, requires_grad), (True,), name="python_bool")


def _getitem_ref(x, idx):
    return x[_np_index(idx)]


def _index_put_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((4, 3)), ((torch.tensor([3, 0]),), m((2, 3))))
    yield SampleInput(m((4, 3)), ((torch.tensor([0, 2]), torch.tensor([1, 1])), m((2,))),
                      name="pairs")
    yield SampleInput(m((4, 3)), ((make_mask((4, 3)),), m(())), name="mask", skip=DATA_DEPENDENT)
    yield SampleInput(m((4, 3)), ((torch.tensor([1, 1, 2]),), m((3, 3))), dict(accumulate=True),
                      name="accumulate_duplicates")


def _index_put_ref(x, indices, values, accumulate=False):
    out = x.copy()
    idx = tuple(np.asarray(i) for i in indices)
    if accumulate:
        np.add.at(out, idx, values)
    else:
        out[idx] = values
    return out


def _setitem_op(x, idx, value):
    """``y = x.clone(); y[idx] = value``: setitem as a function (differentiable)."""
    y = x.clone()
    y[idx] = value
    return y


def _setitem_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((4, 3)), (1, m((3,))), name="int")
    yield SampleInput(m((4, 3)), ((slice(1, 3), slice(None)), m((2, 1))), name="slice_broadcast")
    yield SampleInput(m((4, 3)), ((Ellipsis, 0), m(())), name="ellipsis")
    yield SampleInput(m((4, 3)), (torch.tensor([2, 0]), m((2, 3))), name="int_tensor")
    yield SampleInput(m((4, 3)), (make_mask((4, 3)), 0.0 if dtype.is_floating_point else 0),
                      name="mask_scalar", skip=DATA_DEPENDENT)
    yield SampleInput(m((4, 3)), ((None, 2), m((3,))), name="none")


def _setitem_ref(x, idx, value):
    out = x.copy()
    out[_np_index(idx)] = value
    return out


register(
    OpInfo("__getitem__", op=lambda x, idx: x[idx], ref=_getitem_ref, dtypes=_DTYPES,
           result_dtype=SAME, sample_inputs=_getitem_samples, method="__getitem__", inplace=None,
           torch_name=None),
    OpInfo("__setitem__", op=_setitem_op, ref=_setitem_ref, dtypes=_DTYPES, result_dtype=SAME,
           sample_inputs=_setitem_samples, method="__setitem__", method_only=True, inplace=None,
           torch_name=None, mutates_input=True),
    OpInfo("index_put", ref=_index_put_ref, dtypes=_DTYPES, result_dtype=SAME,
           sample_inputs=_index_put_samples),
)


# ---------------------------------------------------------------------------------------
# gather / scatter / scatter_add / take_along_dim


def _gather_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((3, 4)), (1, make_index((3, 2), 4)))
    yield SampleInput(m((3, 4)), (0, make_index((2, 4), 3)), name="dim0")
    yield SampleInput(m((3, 4)), (-1, make_index((2, 3), 4)), name="smaller")
    yield SampleInput(m((2, 3, 2)), (1, make_index((2, 5, 2), 3)), name="3d")
    yield SampleInput(m(()), (0, torch.zeros((), dtype=torch.int64)), name="0d")


def _gather_ref(x, dim, index):
    if x.ndim == 0:
        return x.copy()
    d = dim % x.ndim
    sl = tuple(slice(0, n) if k != d else slice(None) for k, n in enumerate(index.shape))
    return np.take_along_axis(x[sl], index, axis=d)


def _scatter_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    # Unique positions per column/row, so scatter's result does not depend on write order.
    perm = torch.tensor([[2, 0, 1, 3], [1, 3, 0, 2]])
    yield SampleInput(m((3, 4)), (0, torch.tensor([[2, 0, 1, 0], [1, 2, 0, 2]]), m((2, 4))),
                      name="dim0")
    yield SampleInput(m((2, 4)), (1, perm[:, :3], m((2, 3))), name="dim1")
    yield SampleInput(m((2, 4)), (1, perm[:, :2], m((3, 3))), name="larger_src")
    yield SampleInput(m((2, 4)), (-1, perm[:, :2]), dict(value=2.0 if dtype.is_floating_point else 2),
                      name="value")


def _scatter_ref(x, dim, index, src=None, value=None, reduce=None):
    out = x.copy()
    d = dim % x.ndim
    src = np.broadcast_to(np.asarray(value if src is None else src, dtype=x.dtype), index.shape) \
        if src is None or np.ndim(src) == 0 else src[tuple(slice(0, n) for n in index.shape)]
    idx = list(np.indices(index.shape, sparse=True))
    idx[d] = index
    out[tuple(idx)] = src
    return out


def _scatter_add_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((3, 4)), (0, make_index((5, 4), 3), m((5, 4))), name="duplicates")
    yield SampleInput(m((2, 4)), (1, make_index((2, 6), 4), m((2, 6))), name="dim1")
    yield SampleInput(m((2, 4)), (-1, make_index((2, 2), 4), m((3, 3))), name="larger_src")
    # index smaller than input in a dim other than `dim`: only that block is written
    yield SampleInput(m((3, 4)), (1, make_index((2, 3), 4), m((2, 3))), name="smaller_index")


def _scatter_add_ref(x, dim, index, src):
    out = x.copy()
    d = dim % x.ndim
    idx = list(np.indices(index.shape, sparse=True))
    idx[d] = index
    np.add.at(out, tuple(idx), src[tuple(slice(0, n) for n in index.shape)])
    return out


def _take_along_dim_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((3, 4)), (make_index((3, 2), 4),), dict(dim=1))
    yield SampleInput(m((3, 4)), (make_index((1, 4), 3),), dict(dim=0), name="broadcast")
    yield SampleInput(m((3, 4)), (make_index((5,), 12),), name="flat")


def _take_along_dim_ref(x, indices, dim=None):
    if dim is None:
        return np.take_along_axis(x.reshape(-1), indices.reshape(-1), 0)
    shape = list(np.broadcast_shapes(x.shape[:dim] + (1,) + x.shape[dim + 1:],
                                     indices.shape[:dim] + (1,) + indices.shape[dim + 1:]))
    xs, ix = list(shape), list(shape)
    xs[dim], ix[dim] = x.shape[dim], indices.shape[dim]
    return np.take_along_axis(np.broadcast_to(x, xs), np.broadcast_to(indices, ix), dim)


register(
    OpInfo("gather", ref=_gather_ref, dtypes=_DTYPES, result_dtype=SAME, sample_inputs=_gather_samples),
    OpInfo("scatter", ref=_scatter_ref, dtypes=_DTYPES, result_dtype=SAME,
           sample_inputs=_scatter_samples),
    OpInfo("scatter_add", ref=_scatter_add_ref, dtypes=FLOATING + INTEGRAL, result_dtype=SAME,
           sample_inputs=_scatter_add_samples),
    OpInfo("take_along_dim", ref=_take_along_dim_ref, dtypes=_DTYPES, result_dtype=SAME,
           sample_inputs=_take_along_dim_samples),
)


# ---------------------------------------------------------------------------------------
# index_select / index_add


def _index_select_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((4, 3)), (0, make_index((5,), 4)))
    yield SampleInput(m((4, 3)), (-1, make_index((2,), 3)), name="negdim")
    yield SampleInput(m((4, 3)), (1, torch.zeros(0, dtype=torch.int64)), name="empty_index")
    yield SampleInput(m(()), (0, torch.zeros(1, dtype=torch.int64)), name="0d")


def _index_select_ref(x, dim, index):
    if x.ndim == 0:  # PyTorch: a 0-d input gives a 0-d result
        return np.take(x.reshape(1), index).reshape(())
    return np.take(x, index, axis=dim)


def _index_add_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((4, 3)), (0, torch.tensor([1, 1, 3]), m((3, 3))), name="duplicates")
    yield SampleInput(m((4, 3)), (1, torch.tensor([2, 0]), m((4, 2))), name="dim1")
    yield SampleInput(m((4, 3)), (-2, torch.tensor([0, 2]), m((2, 3))), dict(alpha=2), name="alpha")


def _index_add_ref(x, dim, index, source, alpha=1):
    out = x.copy()
    moved = np.moveaxis(out, dim, 0)
    np.add.at(moved, index, np.moveaxis(source, dim, 0) * alpha)
    return out


register(
    OpInfo("index_select", ref=_index_select_ref, dtypes=_DTYPES, result_dtype=SAME,
           sample_inputs=_index_select_samples),
    OpInfo("index_add", ref=_index_add_ref, dtypes=FLOATING + INTEGRAL, result_dtype=SAME,
           sample_inputs=_index_add_samples),
)


# ---------------------------------------------------------------------------------------
# Masks and data-dependent shapes


def _masked_fill_samples(dtype, requires_grad):
    value = 1.5 if dtype.is_floating_point else (True if dtype is torch.bool else 3)
    yield SampleInput(make((2, 3), dtype, requires_grad), (make_mask((2, 3)), value))
    yield SampleInput(make((2, 3), dtype, requires_grad), (make_mask((3,)), value), name="broadcast")
    yield SampleInput(make((2, 3), dtype, requires_grad),
                      (make_mask((2, 3)), torch.tensor(value, dtype=dtype)), name="tensor_value")


def _masked_fill_ref(x, mask, value):
    return np.where(mask, np.asarray(value, dtype=x.dtype), x)


def _masked_select_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad), (make_mask((2, 3)),))
    yield SampleInput(make((2, 3), dtype, requires_grad), (make_mask((3,)),), name="broadcast")


def _masked_select_ref(x, mask):
    x, mask = np.broadcast_arrays(x, mask)
    return x[mask]


def _masked_scatter_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad), (make_mask((2, 3)), make((6,), dtype, requires_grad)))
    yield SampleInput(make((2, 3), dtype, requires_grad), (make_mask((3,)), make((2, 4), dtype, requires_grad)),
                      name="broadcast")


def _masked_scatter_ref(x, mask, source):
    x, mask = np.broadcast_arrays(x, mask)
    out = x.copy()
    out[mask] = source.reshape(-1)[:int(mask.sum())]
    return out


def _nonzero_samples(dtype, requires_grad):
    x = make((3, 4), dtype)
    x[0] = 0
    yield SampleInput(x)
    yield SampleInput(x, kwargs=dict(as_tuple=True), name="as_tuple")
    yield SampleInput(make((5,), dtype), name="1d")
    yield SampleInput(torch.ones((), dtype=dtype), name="0d")


def _nonzero_ref(x, as_tuple=False):
    if x.ndim == 0:  # NumPy 2 refuses 0-d; PyTorch treats it as one element with no dims
        n = int(bool(x))
        return (np.zeros(n, np.int64),) if as_tuple else np.zeros((n, 0), np.int64)
    return tuple(np.nonzero(x)) if as_tuple else np.argwhere(x)


def _unique_samples(dtype, requires_grad):
    x = torch.tensor([[3, 1, 2], [1, 3, 0]], dtype=dtype)
    yield SampleInput(x)
    yield SampleInput(x, kwargs=dict(return_inverse=True, return_counts=True), name="inverse_counts")
    yield SampleInput(x, kwargs=dict(dim=1), name="dim")


def _unique_ref(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    res = np.unique(x, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    if isinstance(res, tuple) and return_inverse:
        res = (res[0], res[1].reshape(x.shape)) + res[2:]
    return res


_DATA_DEPENDENT = dict(supports_meta=False, supports_vmap=False)

register(
    OpInfo("masked_fill", ref=_masked_fill_ref, dtypes=_DTYPES, result_dtype=SAME,
           sample_inputs=_masked_fill_samples),
    OpInfo("masked_select", ref=_masked_select_ref, dtypes=_DTYPES, result_dtype=SAME,
           sample_inputs=_masked_select_samples, **_DATA_DEPENDENT),
    OpInfo("masked_scatter", op=lambda x, m, s: x.masked_scatter(m, s), ref=_masked_scatter_ref,
           dtypes=_DTYPES, result_dtype=SAME, sample_inputs=_masked_scatter_samples,
           **_DATA_DEPENDENT),
    OpInfo("nonzero", ref=_nonzero_ref, dtypes=ALL_REAL, result_dtype=INT64, supports_grad=False,
           sample_inputs=_nonzero_samples, **_DATA_DEPENDENT),
    OpInfo("argwhere", ref=_nonzero_ref, dtypes=ALL_REAL, result_dtype=INT64, supports_grad=False,
           sample_inputs=lambda d, r: (s for s in _nonzero_samples(d, r) if not s.kwargs),
           **_DATA_DEPENDENT),
    OpInfo("unique", ref=_unique_ref, dtypes=FLOATING + INTEGRAL, result_dtype=SAME,
           supports_grad=False, sample_inputs=_unique_samples, **_DATA_DEPENDENT),
)
