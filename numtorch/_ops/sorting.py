"""Sorting ops: sort, argsort, msort, topk, kthvalue, median, all on the `sort` primitive."""
from __future__ import annotations


from .._core import dtypes as _dt
from .._core.primitive import bind
from .._prims.sorting import sort as sort_p
from ._common import canonical_dim, check_tensor, scalar_type_name as _scalar_type_name
from ._backward_names import backward_name
from .. import return_types as _rt


_NO_ORDER = {   # PyTorch's errors for dtypes its CPU sorting kernels do not take
    ("c", "sort"): (RuntimeError, " Sort does not support complex dtypes on CPU"),
    ("c", "argsort"): (RuntimeError, " Sort does not support complex dtypes on CPU"),
    ("c", "msort"): (RuntimeError, " Sort does not support complex dtypes on CPU"),
    ("c", "topk"): (RuntimeError, " topk does not support complex dtypes on CPU"),
    ("b", "topk"): (RuntimeError, "topk does not support bool dtypes on CPU"),
    ("c", "kthvalue"): (NotImplementedError, "\"kthvalue_cpu\" not implemented for '{}'"),
}


def _sorted(input, dim, descending, fn):
    check_tensor(input, "input", fn)
    kind = input._data.dtype.kind
    if kind in "bc" and (kind, fn) in _NO_ORDER:
        error, message = _NO_ORDER[kind, fn]
        raise error(message.format(_scalar_type_name(input.dtype)))
    if input.ndim == 0:
        canonical_dim(dim, 0)  # only 0 and -1 are valid on a 0-d tensor
        from .creation import zeros
        return input.clone(), zeros((), dtype=int, device=input.device)
    d = canonical_dim(dim, input.ndim)
    values, indices = bind(sort_p, input, axis=d, descending=bool(descending))
    return values, indices


def sort(input, dim=-1, descending=False, stable=False):
    """Sorts ``input`` along ``dim``; returns the namedtuple (values, indices).

    The sort is always stable (ties keep their order), which ``stable=False`` permits.
    """
    return _rt.sort(*_sorted(input, dim, descending, "sort"))


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim``."""
    return _sorted(input, dim, descending, "argsort")[1]


def msort(input):
    """Sorts ``input`` along its first dimension."""
    return _sorted(input, 0, False, "msort")[0]


@backward_name("TopkBackward0")
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim``: namedtuple (values, indices)."""
    check_tensor(input, "input", "topk")
    n = input.shape[canonical_dim(dim, input.ndim)] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range: k={k} for a dimension of size {n}")
    values, indices = _sorted(input, dim, largest, "topk")
    if input.ndim == 0:
        return _rt.topk(values, indices)
    d = canonical_dim(dim, input.ndim)
    return _rt.topk(values.narrow(d, 0, k), indices.narrow(d, 0, k))


def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element (1-based) along ``dim``: namedtuple (values, indices)."""
    check_tensor(input, "input", "kthvalue")
    d = canonical_dim(dim, input.ndim) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise IndexError(f"kthvalue(): selected number k out of range for dimension {d}: "
                         f"k={k} but the size is {n}")
    values, indices = _sorted(input, dim, False, "kthvalue")
    if input.ndim == 0:
        return _rt.kthvalue(values, indices)
    v, i = values.select(d, k - 1), indices.select(d, k - 1)
    if keepdim:
        v, i = v.unsqueeze(d), i.unsqueeze(d)
    return _rt.kthvalue(v, i)


@backward_name(lambda input, dim=None, keepdim=False: "MedianBackward0" if dim is None else "MedianBackward1")
def median(input, dim=None, keepdim=False):
    """The lower median: of all elements (a tensor), or along ``dim`` (values, indices)."""
    check_tensor(input, "input", "median")
    if input._data.dtype.kind in "bc":
        kernel = "median_cpu" if dim is None else "median_out"
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_scalar_type_name(input.dtype)}'")
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            raise IndexError("median() input tensor cannot be empty")
        return _nan_first(flat, *kthvalue(flat, (flat.numel() + 1) // 2, 0), 0, False)[0]
    d = canonical_dim(dim, input.ndim) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    values, indices = kthvalue(input, (n + 1) // 2, dim, keepdim)
    if input.ndim == 0:
        return _rt.median(values, indices)
    return _rt.median(*_nan_first(input, values, indices, d, keepdim))


def _nan_first(input, values, indices, d, keepdim):
    """median's NaN: where a row has one, the row's first NaN and its position (kthvalue
    sorts NaN last, so it would pick a number); PyTorch's median propagates NaN, and its
    gradient goes to that element (nanmedian is the one that skips them)."""
    if input._data.dtype.kind != "f":
        return values, indices
    from . import index, math, reduce
    nan = math.isnan(input)
    where_nan = reduce.argmax(nan.to(_dt.uint8), d, True)
    has_nan = reduce.any(nan, d, True)
    nan_value = index.gather(input, d, where_nan)
    if not keepdim:
        has_nan, where_nan, nan_value = (t.squeeze(d) for t in (has_nan, where_nan, nan_value))
    return math.where(has_nan, nan_value, values), math.where(has_nan, where_nan, indices)
