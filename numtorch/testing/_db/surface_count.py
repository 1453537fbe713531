"""OpInfo entries: isin, gcd, lcm, nanmedian, bincount, histc (_ops/_surface_count.py)."""
from __future__ import annotations

import math

import numpy as np

import numtorch as torch

from ..opinfo import (BOOL, DATA_DEPENDENT, FLOATING, INTEGRAL, SAME, OpInfo, SampleInput, make,
                      make_index, register, tensor_of)


def _isin_samples(dtype, requires_grad):
    yield SampleInput(make((3, 4), dtype, low=-3, high=3), (make((5,), dtype, low=-3, high=3),))
    yield SampleInput(make((4,), dtype, low=-3, high=3), (make((2, 2), dtype, low=-3, high=3),),
                      dict(invert=True), name="invert")


def _gcd_samples(big):
    def gen(dtype, requires_grad):
        yield SampleInput(make((3, 4), dtype, low=-30, high=30),
                          (make((3, 4), dtype, low=-30, high=30),))
        # consecutive Fibonacci numbers take Euclid's longest path (gcd only: their lcm
        # overflows int32)
        yield SampleInput(tensor_of([0, 0, 12, -18] + ([832040] if big else []), dtype),
                          (tensor_of([0, 5, 8, 12] + ([514229] if big else []), dtype),),
                          name="edges")
    return gen


def _lcm_ref(a, b):
    return np.lcm(a, b)


def _nanmedian_samples(dtype, requires_grad):
    yield SampleInput(make((7,), dtype, requires_grad, distinct=True))
    yield SampleInput(make((3, 4), dtype, requires_grad, distinct=True), (1,), name="dim")
    yield SampleInput(make((4, 3), dtype, requires_grad, distinct=True), (0, True), name="keepdim")
    yield SampleInput(tensor_of([[1.0, math.nan, 3.0, 2.0], [5.0, 4.0, math.nan, math.nan]], dtype),
                      (1,), name="nan", grad=False)


def _nanmedian_ref(x, dim=None, keepdim=False):
    def lower(v):
        v = np.sort(v[~np.isnan(v)])
        return v[(len(v) - 1) // 2] if len(v) else np.nan
    if dim is None:
        return np.asarray(lower(x.reshape(-1)), x.dtype)
    vals = np.apply_along_axis(lower, dim, x).astype(x.dtype)
    idx = np.apply_along_axis(lambda v: np.flatnonzero(v == lower(v))[0], dim, x)
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


def _bincount_samples(dtype, requires_grad):
    yield SampleInput(make_index((10,), 5))
    yield SampleInput(make_index((6,), 3), (make((6,), dtype),), dict(minlength=5), name="weights")


def _bincount_ref(x, weights=None, minlength=0):
    return np.bincount(x, weights, minlength)


def _histc_samples(dtype, requires_grad):
    yield SampleInput(make((20,), dtype), (5,))
    yield SampleInput(make((3, 4), dtype), (4, -1, 1), name="range")


def _histc_ref(x, bins=100, min=0, max=0):
    lo, hi = (min, max) if min != max else (x.min(), x.max())
    return np.histogram(x, bins, (lo, hi))[0].astype(x.dtype)


_NO_GRAD = dict(supports_grad=False, method=None, inplace=None)

register(
    OpInfo("isin", ref=np.isin, result_dtype=BOOL, dtypes=FLOATING + INTEGRAL,
           sample_inputs=_isin_samples, **_NO_GRAD),
    OpInfo("gcd", ref=np.gcd, result_dtype=SAME, dtypes=INTEGRAL,
           sample_inputs=_gcd_samples(True),
           supports_grad=False),
    OpInfo("lcm", ref=_lcm_ref, result_dtype=SAME, dtypes=INTEGRAL,
           sample_inputs=_gcd_samples(False),
           supports_grad=False),
    OpInfo("nanmedian", ref=_nanmedian_ref, result_dtype=SAME, sample_inputs=_nanmedian_samples),
    OpInfo("bincount", ref=_bincount_ref, sample_inputs=_bincount_samples,
           supports_grad=False, supports_vmap=False, supports_meta=False),
    OpInfo("histc", ref=_histc_ref, result_dtype=SAME, sample_inputs=_histc_samples,
           supports_grad=False, supports_vmap=False, supports_meta=False),
)
