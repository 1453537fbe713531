"""Sorting: one primitive, ``sort(x, axis, descending) -> (values, indices)``.

argsort, topk, kthvalue, median and msort are ops built on it. The order is stable (ties
keep their original order) in both directions, and NaN counts as the largest value, as in
PyTorch. The derivative moves each cotangent back to the position its value came from.
"""
from __future__ import annotations

import numpy as np

from .._core.primitive import Primitive
from ._helpers import T, move_bdim


def _sort_impl(x, *, axis, descending):
    if not descending:
        idx = np.argsort(x, axis=axis, kind="stable")
    else:
        # A stable ascending sort of the reversed array, reversed again: descending values,
        # ties in ascending original position, NaN first (PyTorch's order).
        n = x.shape[axis]
        rev = np.flip(x, axis)
        idx = np.flip(n - 1 - np.argsort(rev, axis=axis, kind="stable"), axis)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    return np.take_along_axis(x, idx, axis=axis), idx


def _sort_vjp(cts, out, x, *, axis, descending):
    g_values, _ = cts
    _, idx = out
    return (T.zeros_like(x).scatter_add(axis, idx, g_values),)


def _sort_jvp(primals, tangents, *, axis, descending):
    values, idx = sort.bind(primals[0], axis=axis, descending=descending)
    return (values, idx), (tangents[0].gather(axis, idx), None)


sort = Primitive(
    "sort", impl=_sort_impl, multiple_results=True,
    shape=lambda x, *, axis, descending: ((x.shape, x.dtype), (x.shape, np.dtype(np.int64))),
    vjp=_sort_vjp, jvp=_sort_jvp,
    batch=lambda v, d, *, axis, descending: (
        sort.bind(move_bdim(v[0], d[0], 0), axis=axis + 1, descending=descending), (0, 0)))

# Lower rule (Note [Lower rules], _lower.py)
from ._lower import extern  # noqa: E402

sort.lower = extern("sorting: NumPy")
