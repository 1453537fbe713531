"""OpInfo entries: the everyday shape and index functions (_ops/_surface_utils.py,
_ops/_surface_shape.py)."""
from __future__ import annotations

import itertools

import numpy as np

import numtorch as torch

from ..opinfo import (ALL_REAL, FLOATING, INTEGRAL, SAME, OpInfo, SampleInput, make, register,
                      tensor_of)


def _split_with_sizes_samples(dtype, requires_grad):
    yield SampleInput(make((5, 2), dtype, requires_grad), ([2, 3],))
    yield SampleInput(make((2, 4), dtype, requires_grad), ([1, 0, 3], -1), name="negdim_empty")


def _split_with_sizes_ref(x, sizes, dim=0):
    return np.split(x, np.cumsum(sizes)[:-1], axis=dim)


register(
    OpInfo("split_with_sizes", ref=_split_with_sizes_ref, result_dtype=SAME, dtypes=ALL_REAL,
           sample_inputs=_split_with_sizes_samples),
)


def _m(dtype, requires_grad):
    return lambda shape, **kw: make(shape, dtype, requires_grad, **kw)


def _diff_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((3, 4)))
    yield SampleInput(m((4, 3)), (2, 0), name="n2_dim0")
    yield SampleInput(m((2, 3)), (1, -1, m((2, 1)), m((2, 2))), name="prepend_append")
    yield SampleInput(m((3,)), (4,), name="n_past_length")


def _diff_ref(x, n=1, dim=-1, prepend=None, append=None):
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n=n, axis=dim, **kw)


def _take_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((3, 4)), (tensor_of([[0, 11], [-1, 5]], torch.int64),))
    yield SampleInput(m(()), (tensor_of([0, 0, -1], torch.int64),), name="0d")


def _take_ref(x, idx):
    return np.take(x.reshape(-1), idx)


def _kron_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((2, 3)), (m((3, 2)),))
    yield SampleInput(m((2,)), (m((2, 3)),), name="ranks")
    yield SampleInput(m((2, 1, 2)), (m((2, 2)),), name="3d")


def _rot90_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((2, 3)))
    for k, dims in ((2, (0, 1)), (3, (1, 0)), (-1, (2, 0)), (4, (0, 2))):
        yield SampleInput(m((2, 3, 2)), (k, dims), name=f"k{k}")


def _rot90_ref(x, k=1, dims=(0, 1)):
    return np.rot90(x, k, axes=dims)


def _dir_split_samples(min_dims):
    def gen(dtype, requires_grad):
        m = _m(dtype, requires_grad)
        shape = (4, 6, 2)[:max(min_dims, 2)] if min_dims < 3 else (2, 2, 6)
        yield SampleInput(m(shape), (2,))
        yield SampleInput(m(shape), ([1, 3],), name="indices")
        if min_dims == 1:
            yield SampleInput(m((6,)), (3,), name="1d")
    return gen


def _dir_split_ref(np_fn):
    return lambda x, s: np_fn(x, s)


def _block_diag_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((2, 2)), (m((3,)), m(()), m((1, 2))))
    yield SampleInput(m((2, 3)), name="one")


def _block_diag_ref(*ts):
    ts = [np.atleast_2d(t) for t in ts]
    out = np.zeros((sum(t.shape[0] for t in ts), sum(t.shape[1] for t in ts)), ts[0].dtype)
    r = c = 0
    for t in ts:
        out[r:r + t.shape[0], c:c + t.shape[1]] = t
        r, c = r + t.shape[0], c + t.shape[1]
    return out


def _cartesian_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((2,)), (m((3,)), m((2,))))
    yield SampleInput(m((3,)), name="one")


def _cartesian_ref(*ts):
    if len(ts) == 1:
        return ts[0]
    return np.array(list(itertools.product(*ts)), dtype=ts[0].dtype)


def _combinations_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((4,)))
    yield SampleInput(m((3,)), (3,), dict(with_replacement=True), name="replacement")
    yield SampleInput(m((2,)), (3,), name="too_long")


def _combinations_ref(x, r=2, with_replacement=False):
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    return np.array(list(pick(x, r)), dtype=x.dtype).reshape(-1, r)


def _vander_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((3,)))
    yield SampleInput(m((4,)), (), dict(N=2, increasing=True), name="N")
    yield SampleInput(m((2,)), (), dict(N=4), name="wide")


def _vander_ref(x, N=None, increasing=False):
    return np.vander(x, N, increasing=increasing)


def _trapezoid_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((3, 4)))
    yield SampleInput(m((3, 4)), (m((3,)).sort().values,), dict(dim=0), name="x1d")
    yield SampleInput(m((3, 4)), (m((3, 4)),), name="xnd")
    yield SampleInput(m((5,)), (), dict(dx=0.5), name="dx")


def _trapezoid_ref(y, x=None, *, dx=None, dim=-1):
    return np.trapezoid(y, x, dx=1.0 if dx is None else dx, axis=dim)


def _cumtrapz_ref(y, x=None, *, dx=None, dim=-1):
    yy = np.moveaxis(y, dim, -1)
    if x is None:
        w = np.full(yy.shape[-1] - 1, 1.0 if dx is None else dx)
    else:
        xx = np.moveaxis(x, dim, -1) if x.ndim > 1 else x
        w = np.diff(xx, axis=-1)
    return np.moveaxis(np.cumsum((yy[..., 1:] + yy[..., :-1]) / 2 * w, -1), -1, dim)


def _scatter_samples(kind):
    def gen(dtype, requires_grad):
        m = _m(dtype, requires_grad)
        if kind == "select":
            yield SampleInput(m((3, 4)), (m((4,)), 0, 1))
            yield SampleInput(m((2, 3, 2)), (m((2, 2)), 1, -1), name="negindex")
        elif kind == "slice":
            yield SampleInput(m((5, 2)), (m((2, 2)), 0, 1, 5, 2))
            yield SampleInput(m((2, 4)), (m((2, 2)),), dict(dim=1, start=2), name="kwargs")
        else:
            yield SampleInput(m((3, 3)), (m((2,)), 1))
            yield SampleInput(m((2, 3, 3)), (m((2, 2)), -1, 1, 2), name="batched")
    return gen


def _select_scatter_ref(x, src, dim, i):
    out = x.copy()
    idx = [slice(None)] * x.ndim
    idx[dim] = i
    out[tuple(idx)] = src
    return out


def _slice_scatter_ref(x, src, dim=0, start=None, end=None, step=1):
    out = x.copy()
    idx = [slice(None)] * x.ndim
    idx[dim] = slice(start, end, step)
    out[tuple(idx)] = src
    return out


def _diagonal_scatter_ref(x, src, offset=0, dim1=0, dim2=1):
    out = x.copy()
    view = np.diagonal(out, offset, dim1, dim2)
    pos = np.diagonal(np.arange(x.size).reshape(x.shape), offset, dim1, dim2)
    out.reshape(-1)[pos.reshape(-1)] = src.reshape(-1)
    del view
    return out


def _index_copy_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((4, 3)), (0, tensor_of([3, 0], torch.int64), m((2, 3))))
    yield SampleInput(m((2, 4)), (-1, tensor_of([1, 2, 0], torch.int64), m((2, 3))), name="negdim")


def _index_copy_ref(x, dim, idx, src):
    out = np.moveaxis(x.copy(), dim, 0)
    out[idx] = np.moveaxis(src, dim, 0)
    return np.moveaxis(out, 0, dim)


def _index_fill_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((4, 3)), (0, tensor_of([3, 0], torch.int64), 2.5))
    yield SampleInput(m((2, 3, 2)), (1, tensor_of([1], torch.int64), tensor_of(-1.0, dtype)),
                      name="tensor_value")


def _index_fill_ref(x, dim, idx, value):
    out = np.moveaxis(x.copy(), dim, 0)
    out[idx] = value
    return np.moveaxis(out, 0, dim)


def _renorm_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((3, 4), low=-3, high=3), (2, 0, 2.0))
    yield SampleInput(m((2, 3, 2), low=-3, high=3), (1, 1, 3.0), name="p1")


def _renorm_ref(x, p, dim, maxnorm):
    others = tuple(i for i in range(x.ndim) if i != dim)
    norms = np.sum(np.abs(x) ** p, axis=others, keepdims=True) ** (1 / p)
    return x * np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


def _unfold_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((7,)), (0, 3, 2))
    yield SampleInput(m((3, 4)), (1, 2, 1), name="dim1")
    yield SampleInput(m((4, 3)), (0, 4, 1), name="whole")


def _unfold_ref(x, dim, size, step):
    w = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    idx = [slice(None)] * w.ndim
    idx[dim] = slice(None, None, step)
    return w[tuple(idx)]


def _view_as_real_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad))


def _view_as_complex_samples(dtype, requires_grad):
    yield SampleInput(make((3, 2), dtype, requires_grad))
    yield SampleInput(make((2, 2, 2), dtype, requires_grad), name="3d")


_COMPLEX = (torch.complex64, torch.complex128)

register(
    OpInfo("diff", ref=_diff_ref, result_dtype=SAME, dtypes=FLOATING + INTEGRAL,
           sample_inputs=_diff_samples),
    OpInfo("take", ref=_take_ref, result_dtype=SAME, sample_inputs=_take_samples),
    OpInfo("kron", ref=np.kron, result_dtype=SAME, sample_inputs=_kron_samples),
    OpInfo("rot90", ref=_rot90_ref, result_dtype=SAME, sample_inputs=_rot90_samples),
    OpInfo("hsplit", ref=_dir_split_ref(np.hsplit), result_dtype=SAME,
           sample_inputs=_dir_split_samples(1)),
    OpInfo("vsplit", ref=_dir_split_ref(np.vsplit), result_dtype=SAME,
           sample_inputs=_dir_split_samples(2)),
    OpInfo("dsplit", ref=_dir_split_ref(np.dsplit), result_dtype=SAME,
           sample_inputs=_dir_split_samples(3)),
    OpInfo("block_diag", ref=_block_diag_ref, result_dtype=SAME, sample_inputs=_block_diag_samples),
    OpInfo("cartesian_prod", ref=_cartesian_ref, result_dtype=SAME,
           sample_inputs=_cartesian_samples),
    OpInfo("combinations", ref=_combinations_ref, result_dtype=SAME,
           sample_inputs=_combinations_samples),
    OpInfo("vander", ref=_vander_ref, result_dtype=SAME, sample_inputs=_vander_samples),
    OpInfo("trapezoid", ref=_trapezoid_ref, sample_inputs=_trapezoid_samples, aliases=("trapz",)),
    OpInfo("cumulative_trapezoid", ref=_cumtrapz_ref, sample_inputs=_trapezoid_samples),
    OpInfo("view_as_real", ref=lambda z: np.stack([z.real, z.imag], -1), dtypes=_COMPLEX,
           sample_inputs=_view_as_real_samples),
    OpInfo("view_as_complex", ref=lambda x: x[..., 0] + 1j * x[..., 1],
           sample_inputs=_view_as_complex_samples),
    OpInfo("select_scatter", ref=_select_scatter_ref, result_dtype=SAME,
           sample_inputs=_scatter_samples("select")),
    OpInfo("slice_scatter", ref=_slice_scatter_ref, result_dtype=SAME,
           sample_inputs=_scatter_samples("slice")),
    OpInfo("diagonal_scatter", ref=_diagonal_scatter_ref, result_dtype=SAME,
           sample_inputs=_scatter_samples("diagonal")),
    OpInfo("index_copy", ref=_index_copy_ref, result_dtype=SAME, sample_inputs=_index_copy_samples),
    OpInfo("index_fill", ref=_index_fill_ref, result_dtype=SAME, sample_inputs=_index_fill_samples),
    OpInfo("renorm", ref=_renorm_ref, result_dtype=SAME, sample_inputs=_renorm_samples),
    OpInfo("unfold", op=lambda x, *a: x.unfold(*a), ref=_unfold_ref, result_dtype=SAME,
           sample_inputs=_unfold_samples, method_only=True, method="unfold", torch_name=None),
)
