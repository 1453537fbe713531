"""Everyday grouping functions of ``torch``: ``mode``, ``scatter_reduce`` (and
``Tensor.scatter_reduce_``), ``unique_consecutive``.

``mode`` and ``scatter_reduce`` are compositions of existing ops (so autograd, vmap, meta
and compile come from their rules); this file must not define primitives.
``unique_consecutive``'s output shape depends on the values, so, like ``unique``, it needs
concrete data and returns tensors without history. Docstrings follow PyTorch's.

Note [Segment reductions by sorting]
``scatter_reduce`` with ``prod``, ``amax`` or ``amin`` has no primitive to build on (the
indexing primitives only scatter, add and gather). Along the scattered dim each target
position receives the values whose index names it; sorting the index (stably) makes each
target's values one contiguous run, and a segmented inclusive scan (log2(m) doubling steps
of ``where(same run, combine(x[j - s], x[j]), x[j])``) leaves each run's reduction at its
last element, which one ``scatter`` writes to the target (the other elements go to an
extra slot that is cut off). Work is O(m log m) and memory O(m) per slice, where a one-hot
(targets x values) mask would be quadratic. Gradients of ``prod`` come from the products
themselves (no division, so zeros are exact). For ``amax``/``amin`` PyTorch splits the
gradient evenly among all values equal to the result (``self`` included); the scan's
``maximum`` would not, so the values are computed without history and the gradient enters
through ``value + (lin - lin.detach())``, where ``lin`` is that even-split linear
combination (zero in value, exact in every derivative, first and higher order). Eagerly,
on concrete arrays and outside any transform, NumPy's unbuffered ``ufunc.at`` computes the
prod/amax/amin values instead of the sort and scan (about 10x faster: 100k x 64 values into
10k rows, amax, 1.2 s -> 0.1 s); the scan remains the path that transforms and traces see,
and prod's path when it needs a gradient. As in
PyTorch, with ``include_self=False`` a ``self`` equal to the result still counts in the
split (and then gets no share), so the shares of the scattered values sum to less than 1.
"""
from __future__ import annotations


import numpy as np

from .._core import dtypes as _dt
from .._core.primitive import STACK
from .._core.tensor import Tensor, wrap_array
from . import creation, index as _index, math, reduce, shape, sorting
from ._common import canonical_dim, check_tensor, scalar_type_name, to_tensor
from .. import return_types as _rt

__all__ = ["mode", "scatter_reduce", "unique_consecutive"]



def mode(input, dim=-1, keepdim=False):
    """Returns a namedtuple (values, indices) where ``values`` is the mode value of each
    row of ``input`` in the dimension ``dim``, i.e. a value which appears most often in that
    row, and ``indices`` is the index location of each mode value found. Of several modes
    the smallest is returned, at the last position it occurs."""
    check_tensor(input, "input", "mode")
    if input.dim() == 0:
        canonical_dim(dim, 1)
        return _rt.mode(input.clone(), creation.zeros((), dtype=_dt.int64, device=input.device))
    d = canonical_dim(dim, input.dim())
    if input.shape[d] == 0:
        if input.numel() == 0 and any(n == 0 for k, n in enumerate(input.shape) if k != d):
            out_shape = tuple(n if k != d else 1 for k, n in enumerate(input.shape)) if keepdim \
                else tuple(n for k, n in enumerate(input.shape) if k != d)
            return _rt.mode(creation.empty(out_shape, dtype=input.dtype, device=input.device),
                         creation.empty(out_shape, dtype=_dt.int64, device=input.device))
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    x = shape.movedim(input, d, -1)
    m = x.shape[-1]
    srt = sorting.sort(x, -1)                                 # stable: equal values keep order
    sv = srt.values
    start = math.ne(shape.narrow(sv, -1, 1, m - 1), shape.narrow(sv, -1, 0, m - 1))
    first = creation.ones(tuple(sv.shape[:-1]) + (1,), dtype=_dt.bool_, device=input.device)
    run = math.sub(reduce.cumsum(shape.cat([first, start], -1).to(_dt.int64), -1), 1)
    counts = _index.scatter_add(creation.zeros(tuple(run.shape), dtype=_dt.int64,
                                               device=input.device), -1, run,
                                creation.ones(tuple(run.shape), dtype=_dt.int64,
                                              device=input.device))
    best = reduce.argmax(counts, -1, True)                   # the first: the smallest value
    last = math.sub(_index.gather(reduce.cumsum(counts, -1), -1, best), 1)
    values, indices = _index.gather(sv, -1, last), _index.gather(srt.indices, -1, last)
    values, indices = shape.movedim(values, -1, d), shape.movedim(indices, -1, d)
    if not keepdim:
        values, indices = shape.squeeze(values, d), shape.squeeze(indices, d)
    return _rt.mode(values, indices)


# ---------------------------------------------------------------------------------------
# scatter_reduce

_REDUCES = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "amax", "amin": "amin",
            "max": "amax", "min": "amin"}   # PyTorch also takes max and min, undocumented


def _check_scatter_reduce(input, dim, index, src, reduce):
    check_tensor(input, "input", "scatter_reduce")
    check_tensor(index, "index", "scatter_reduce")
    check_tensor(src, "src", "scatter_reduce")
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if index.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if src.dtype != input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    nd = max(input.dim(), 1)
    if max(index.dim(), 1) != nd or max(src.dim(), 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    d = canonical_dim(dim, nd)
    ishape = tuple(input.shape) or (1,)
    xshape, sshape = tuple(index.shape) or (1,), tuple(src.shape) or (1,)
    if any(xshape[k] > sshape[k] or (k != d and xshape[k] > ishape[k]) for k in range(nd)):
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                           f"{list(input.shape)} apart from dimension {d} and to be no larger "
                           f"size than src {list(src.shape)}")
    data = index._data
    if isinstance(data, np.ndarray) and data.size and (data.min() < -ishape[d]
                                                       or data.max() >= ishape[d]):
        bad = data[(data < -ishape[d]) | (data >= ishape[d])].flat[0]
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size "
                           f"{ishape[d]}")
    return d


def _identity(reduce, dtype):
    if reduce == "prod":
        return 1
    if dtype.is_floating_point:
        return -np.inf if reduce == "amax" else np.inf
    if dtype is _dt.bool_:
        return reduce == "amin"
    info = np.iinfo(dtype.np)
    return int(info.min) if reduce == "amax" else int(info.max)


_UFUNCS = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _numpy_reduce(input, dim, index, src, reduce, include_self):
    """prod/amax/amin by NumPy's unbuffered ``ufunc.at`` on concrete arrays (Note [Segment
    reductions by sorting]: the eager fast path); the result carries no history."""
    out = np.array(input._data, copy=True)
    at = list(np.indices(tuple(index.shape), sparse=True))
    at[dim] = index._data
    at = tuple(at)
    if not include_self:
        out[at] = _identity(reduce, input.dtype)
    _UFUNCS[reduce].at(out, at, src._data)
    return wrap_array(out)


def _segment_reduce(input, index, src, reduce):
    """(seg, hit) along the last dim: seg[..., k] is the ``reduce`` of the src values whose
    index is k (the identity where none is), hit[..., k] whether any is (Note [Segment
    reductions by sorting]). input: (..., n); index, src: (..., m), leading dims <= input's."""
    n, m = input.shape[-1], index.shape[-1]
    order = sorting.argsort(index, -1, stable=True)
    keys, vals = _index.gather(index, -1, order), _index.gather(src, -1, order)
    combine = {"prod": math.mul, "amax": math.maximum, "amin": math.minimum}[reduce]
    step = 1
    while step < m:
        same = math.eq(shape.narrow(keys, -1, step, m - step), shape.narrow(keys, -1, 0, m - step))
        tail = shape.narrow(vals, -1, step, m - step)
        tail = math.where(same, combine(shape.narrow(vals, -1, 0, m - step), tail), tail)
        vals = shape.cat([shape.narrow(vals, -1, 0, step), tail], -1)
        step *= 2
    ends = math.ne(shape.narrow(keys, -1, 0, m - 1), shape.narrow(keys, -1, 1, m - 1))
    last = creation.ones(tuple(keys.shape[:-1]) + (1,), dtype=_dt.bool_, device=input.device)
    slot = math.where(shape.cat([ends, last], -1), keys, to_tensor(n, _dt.int64))
    wide = tuple(input.shape[:-1]) + (n + 1,)
    base = creation.full(wide, _identity(reduce, input.dtype), dtype=input.dtype,
                         device=input.device)
    seg = shape.narrow(_index.scatter(base, -1, slot, vals), -1, 0, n)
    hit = _index.scatter(creation.zeros(wide, dtype=_dt.bool_, device=input.device), -1, slot,
                         creation.ones(tuple(slot.shape), dtype=_dt.bool_, device=input.device))
    return seg, shape.narrow(hit, -1, 0, n)


def _even_split(input, index, src, value, include_self):
    """``value`` with PyTorch's amax/amin gradient: split evenly among the equal values
    (Note [Segment reductions by sorting])."""
    dt = input.dtype
    x, s = input.detach(), src.detach()
    zeros = creation.zeros(tuple(input.shape), dtype=dt, device=input.device)
    own = math.eq(x, value)
    hits = math.eq(s, _index.gather(value, -1, index))
    count = math.add(own.to(dt), _index.scatter_add(zeros, -1, index, hits.to(dt)))
    count = math.where(math.eq(count, 0), to_tensor(1, dt), count)   # NaN results
    w_own = math.div(own.to(dt), count)
    if not include_self:   # PyTorch still counts an equal self in the split, then drops it
        w_own = _index.scatter(w_own, -1, index, creation.zeros(tuple(index.shape), dtype=dt,
                                                                device=input.device))
    w_src = math.div(hits.to(dt), _index.gather(count, -1, index))
    lin = math.add(math.mul(w_own, input), _index.scatter_add(zeros, -1, index,
                                                             math.mul(w_src, src)))
    lin_value = lin.detach()
    delta = math.where(math.isfinite(lin_value), math.sub(lin, lin_value), to_tensor(0, dt))
    return math.add(value, delta)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Out-of-place version of :meth:`torch.Tensor.scatter_reduce_`: reduces all values
    from the ``src`` tensor to the indices specified in the ``index`` tensor of ``input``
    along ``dim``, with ``reduce`` one of "sum", "prod", "mean", "amax", "amin"; with
    ``include_self`` the values of ``input`` take part in the reduction, else only the
    scattered values do (positions no index names keep their ``input`` value)."""
    d = _check_scatter_reduce(input, dim, index, src, reduce)
    reduce = _REDUCES[reduce]
    if input.dim() == 0:
        return scatter_reduce(input.reshape(1), 0, index.reshape(1), src.reshape(1), reduce,
                              include_self=include_self).reshape(())
    index = index.to(_dt.int64)
    if tuple(src.shape) != tuple(index.shape):
        src = _index.getitem(src, tuple(slice(0, k) for k in index.shape))
    if index.numel() == 0:
        return input.clone()
    concrete = not STACK and all(type(t._data) is np.ndarray for t in (input, index, src))
    wants_grad = input.requires_grad or src.requires_grad
    if reduce in _UFUNCS and concrete and not wants_grad:
        return _numpy_reduce(input, d, index, src, reduce, include_self)
    x, idx, s = (shape.movedim(t, d, -1) for t in (input, index, src))
    if reduce in ("sum", "mean"):
        base = x if include_self else _index.scatter(x, -1, idx, creation.zeros_like(s))
        out = _index.scatter_add(base, -1, idx, s)
        if reduce == "mean":
            ones = creation.ones_like(x)
            start = ones if include_self else _index.scatter(ones, -1, idx, creation.zeros_like(s))
            count = _index.scatter_add(start, -1, idx, creation.ones_like(s))
            out = math.div(out, count) if x.dtype.is_floating_point or x.dtype.is_complex \
                else math.div(out, count, rounding_mode="floor").to(x.dtype)
        return shape.movedim(out, -1, d)
    if reduce == "prod":
        seg, hit = _segment_reduce(x, idx, s, "prod")
        out = math.mul(x, seg) if include_self else math.where(hit, seg, x)
        return shape.movedim(out, -1, d)
    if concrete:   # the value by NumPy, the gradient by _even_split's ops
        value = shape.movedim(_numpy_reduce(input, d, index, src, reduce, include_self), d, -1)
    else:
        xd, sd = x.detach(), s.detach()
        seg, hit = _segment_reduce(xd, idx, sd, reduce)
        if include_self:
            value = (math.maximum if reduce == "amax" else math.minimum)(xd, seg)
        else:
            value = math.where(hit, seg, xd)
    differentiable = x.dtype.is_floating_point and (
        STACK or input.requires_grad or src.requires_grad)
    out = _even_split(x, idx, s, value, include_self) if differentiable else value
    return shape.movedim(out, -1, d)


# ---------------------------------------------------------------------------------------
# unique_consecutive

def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Eliminates all but the first element from every consecutive group of equivalent
    elements (of the flattened ``input``, or of the slices along ``dim``). Returns the
    output, and with ``return_inverse`` the index of each input element (slice) in it, with
    ``return_counts`` the size of each group."""
    check_tensor(input, "input", "unique_consecutive")
    data = input._concrete("unique_consecutive()")
    if dim is None:
        flat = data.reshape(-1)
        change = flat[1:] != flat[:-1]
        lead_shape = data.shape
    else:
        d = canonical_dim(dim, data.ndim)
        zero = [k for k, n in enumerate(data.shape) if n == 0]
        if len(zero) > 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique "
                               "cannot be applied ")
        if zero and zero[0] != d:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        flat = np.moveaxis(data, d, 0)
        rows = flat.reshape(flat.shape[0], int(np.prod(flat.shape[1:])))
        change = np.any(rows[1:] != rows[:-1], axis=1)
        lead_shape = (data.shape[d],)
    keep = np.concatenate([[True], change]) if len(flat) else np.zeros(0, bool)
    starts = np.flatnonzero(keep)
    out = flat[starts]
    if dim is not None:
        out = np.moveaxis(out, 0, d)
    result = [wrap_array(np.ascontiguousarray(out))]
    if return_inverse:
        result.append(wrap_array((np.cumsum(keep) - 1).astype(np.int64).reshape(lead_shape)))
    if return_counts:
        result.append(wrap_array(np.diff(np.append(starts, len(flat))).astype(np.int64)))
    return result[0] if len(result) == 1 else tuple(result)


def _attach_methods():
    from .methods import _inplace_method
    Tensor.mode = mode
    Tensor.scatter_reduce = scatter_reduce
    Tensor.scatter_reduce_ = _inplace_method(scatter_reduce, "scatter_reduce_")
    Tensor.unique_consecutive = unique_consecutive


_attach_methods()
