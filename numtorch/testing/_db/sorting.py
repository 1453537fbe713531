"""OpInfo entries: sort, argsort, msort, topk, kthvalue, median (the `sort` primitive)."""
from __future__ import annotations

import numpy as np

import numtorch as torch

from ..opinfo import FLOATING, INTEGRAL, INT64, SAME, OpInfo, SampleInput, make as _make, register


def make(shape, dtype, requires_grad=False):
    """Tie-free values: PyTorch leaves the index order of equal elements unspecified."""
    if dtype.is_floating_point:
        return _make(shape, dtype, requires_grad)
    n = int(np.prod(shape))
    return (torch.randperm(n) - n // 2).reshape(shape).to(dtype)


def _stable_argsort(x, axis, descending):
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    return np.flip(n - 1 - np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


def _sort_ref(x, dim=-1, descending=False, stable=False):
    if x.ndim == 0:
        return x, np.zeros((), np.int64)
    idx = _stable_argsort(x, dim, descending)
    return np.take_along_axis(x, idx, dim), idx


def _samples(extra):
    def gen(dtype, requires_grad):
        yield SampleInput(make((5,), dtype, requires_grad))
        yield SampleInput(make((3, 4), dtype, requires_grad), (0,))
        yield SampleInput(make((2, 3, 4), dtype, requires_grad), (-1,))
        yield from extra(dtype, requires_grad)
    return gen


def _sort_extra(dtype, requires_grad):
    yield SampleInput(make((3, 4), dtype, requires_grad), (1, True), name="descending")
    yield SampleInput(make((), dtype, requires_grad), name="scalar")


def _topk_ref(x, k, dim=-1, largest=True, sorted=True):
    v, i = _sort_ref(x, dim, largest)
    return np.take(v, range(k), axis=dim), np.take(i, range(k), axis=dim)


def _kth_ref(x, k, dim=-1, keepdim=False):
    v, i = _sort_ref(x, dim)
    v, i = np.take(v, k - 1, axis=dim), np.take(i, k - 1, axis=dim)
    if keepdim:
        v, i = np.expand_dims(v, dim), np.expand_dims(i, dim)
    return v, i


def _median_ref(x, dim=None, keepdim=False):
    if dim is None:
        return np.sort(x.reshape(-1))[(x.size - 1) // 2]
    return _kth_ref(x, (x.shape[dim] + 1) // 2, dim, keepdim)


def _topk_samples(dtype, requires_grad):
    yield SampleInput(make((6,), dtype, requires_grad), (3,))
    yield SampleInput(make((3, 5), dtype, requires_grad), (2, 0))
    yield SampleInput(make((3, 5), dtype, requires_grad), (2,), dict(largest=False), name="smallest")


def _kth_samples(dtype, requires_grad):
    yield SampleInput(make((6,), dtype, requires_grad), (2,))
    yield SampleInput(make((3, 5), dtype, requires_grad), (3, 1, True), name="keepdim")


def _median_samples(dtype, requires_grad):
    yield SampleInput(make((7,), dtype, requires_grad))
    yield SampleInput(make((4, 3), dtype, requires_grad), (0,), name="even")
    yield SampleInput(make((4, 3), dtype, requires_grad), (1, True), name="keepdim")


_DTYPES = FLOATING + INTEGRAL

register(
    OpInfo("sort", ref=_sort_ref, dtypes=_DTYPES, result_dtype=SAME,
           sample_inputs=_samples(_sort_extra)),
    OpInfo("argsort", ref=lambda x, dim=-1, descending=False: _sort_ref(x, dim, descending)[1],
           dtypes=_DTYPES, result_dtype=INT64, supports_grad=False,
           sample_inputs=_samples(lambda d, r: iter(()))),
    OpInfo("msort", ref=lambda x: np.sort(x, axis=0, kind="stable"), dtypes=_DTYPES,
           result_dtype=SAME, sample_inputs=lambda d, r: iter(
               [SampleInput(make((4, 3), d, r)), SampleInput(make((5,), d, r))])),
    OpInfo("topk", ref=_topk_ref, dtypes=_DTYPES, result_dtype=SAME, sample_inputs=_topk_samples),
    OpInfo("kthvalue", ref=_kth_ref, dtypes=_DTYPES, result_dtype=SAME,
           sample_inputs=_kth_samples),
    OpInfo("median", ref=_median_ref, dtypes=_DTYPES, result_dtype=SAME,
           sample_inputs=_median_samples),
)
