"""Indexing: ``x[idx]``, ``x[idx] = v``, gather/scatter, index_select, masked ops, nonzero.

Note [Indexing by positions]
Basic indexing (ints, slices, None, Ellipsis) is a chain of views. Advanced indexing
(integer or boolean tensors) is one `take` on the advanced dims flattened into a single
axis, with the linear index computed by ordinary integer ops, so it batches and
differentiates through `take`'s rules. Writing (``x[idx] = v``) needs no rule of its own:
indexing an iota tensor (``arange(numel).reshape(shape)``) with the same ``idx`` yields the
flat positions of the selected elements, and one `scatter` into the flattened tensor
writes them. The same trick writes a view's new value back into its base (in-place ops
under transforms).
"""
from __future__ import annotations

import operator

import numpy as np
from numpy import ndarray

from .._core import dtypes as _dt
from .._core.primitive import bind
from .._core.tensor import Tensor, wrap_array
from .._prims import indexing as I
from ._common import (canonical_dim, check_fits, check_tensor, cpp_type_name, is_scalar, match_device,
                      number_array, scalar_type_name, to_tensor)
from .shape import _as_view, flatten, movedim, reshape, select, slice_dim, unsqueeze
from ._backward_names import backward_name


# ---------------------------------------------------------------------------------------
# x[idx]

def _is_advanced(i):
    return isinstance(i, (Tensor, ndarray, list)) or (isinstance(i, tuple) and False)


def _normalize_index(x, idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    idx = tuple(to_tensor(np.asarray(i)) if isinstance(i, (list, ndarray)) else i for i in idx)
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis and not isinstance(i, bool)
                 and not (isinstance(i, Tensor) and i._data.dtype == np.bool_)) + sum(
        i.ndim for i in idx if isinstance(i, Tensor) and i._data.dtype == np.bool_)
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in [i for i in idx if not isinstance(i, Tensor)]:
        k = [j for j, i in enumerate(idx) if i is Ellipsis and not isinstance(i, Tensor)][0]
        idx = idx[:k] + (slice(None),) * (x.ndim - n_real) + idx[k + 1:]
    if n_real > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    return idx


def _basic_numpy_index(idx, shape):
    """``idx`` as a NumPy basic index of an array of ``shape`` that returns a view, or None
    if it is not basic or not valid there (too many indices, an int out of range): the
    general path then raises PyTorch's error. Checked up front, never by trying NumPy."""
    if idx.__class__ is int:   # x[i], the commonest
        return (idx, Ellipsis) if shape and -shape[0] <= idx < shape[0] else None
    items = idx if idx.__class__ is tuple else (idx,)
    dim, nd = 0, len(shape)
    for i in items:
        c = i.__class__
        if c is int:
            if dim >= nd or not -shape[dim] <= i < shape[dim]:
                return None
            dim += 1
        elif c is slice:
            if dim >= nd or (i.step is not None and i.step <= 0):
                return None
            dim += 1
        elif i is Ellipsis:
            return _basic_with_ellipsis(items, shape)
        elif i is not None:
            return None
    return items + (Ellipsis,)


def _basic_with_ellipsis(items, shape):
    """`_basic_numpy_index` for an index with an ellipsis: what follows it indexes the last
    dims, so it is checked against them, from the back."""
    k = next(j for j, i in enumerate(items) if i is Ellipsis)   # `is`: items may be tensors
    head, tail = items[:k], items[k + 1:]
    if any(i is Ellipsis for i in tail):
        return None
    n_tail = sum(1 for i in tail if i is not None)
    if _basic_numpy_index(head, shape[:len(shape) - n_tail]) is None or (
            n_tail and _basic_numpy_index(tail, shape[len(shape) - n_tail:]) is None):
        return None
    return items


def getitem(x, idx):
    """``x[idx]``: NumPy/PyTorch indexing with ints, slices, None, ..., bool and int tensors."""
    d = x._data
    if d.__class__ is ndarray and not x._requires_grad:
        # Eager fast path: NumPy's basic indexing is PyTorch's, and returns a view. Nothing
        # is recorded, so the grad_fn naming of `_getitem` has nothing to name.
        np_idx = _basic_numpy_index(idx, d.shape)
        if np_idx is not None:
            return _as_view(wrap_array(d[np_idx]), x, lambda b: getitem(b, idx))
    return _getitem(x, idx)


@backward_name(lambda x, idx: "SelectBackward0" if isinstance(idx, int) and not isinstance(idx, bool)
               else None)
def _getitem(x, idx):
    idx = _normalize_index(x, idx)
    if any(isinstance(i, (Tensor, bool)) for i in idx):
        return _advanced_getitem(x, idx)
    out, dim = x, 0
    for position, i in enumerate(idx):   # PyTorch's messages count index positions
        if i is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(i, slice):
            if i.step is not None and i.step <= 0:
                raise ValueError("step must be greater than zero")
            if i != slice(None):
                out = slice_dim(out, dim, i.start, i.stop, i.step or 1)
            dim += 1
        else:
            i = _int_index(i)
            n = out.shape[dim]
            if i < -n or i >= n:
                raise IndexError(f"index {i} is out of bounds for dimension {position} with size {n}")
            out = select(out, dim, i)
    return out


def _int_index(i):
    """``i`` as an int index, as ``operator.index`` reads it (not int(): a float index is an
    error in PyTorch), or PyTorch's error."""
    if not hasattr(type(i), "__index__"):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long "
                         f"or byte Variables are valid indices (got {type(i).__name__})")
    return operator.index(i)


def _advanced_getitem(x, idx):
    # 1. basic part: slices and None keep their dims; ints and bools become index tensors.
    out, dim, adv = x, 0, []   # adv: (dim, index tensor)
    for i in idx:
        if i is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(i, bool):
            out = unsqueeze(out, dim)
            adv.append((dim, to_tensor(np.zeros(1 if i else 0, dtype=np.int64))))
            dim += 1
        elif isinstance(i, slice):
            if i != slice(None):
                out = slice_dim(out, dim, i.start, i.stop, i.step or 1)
            dim += 1
        elif isinstance(i, Tensor) and i._data.dtype == np.bool_ and i.ndim == 0:
            # A 0-d mask acts as a bool index that is only known at run time: a new dim
            # of size 1 (True) or 0 (False), as x[x > 0] on a 0-d x gives in PyTorch.
            out = unsqueeze(out, dim)
            adv.append((dim, nonzero(i.reshape(1), as_tuple=True)[0]))
            dim += 1
        elif isinstance(i, Tensor) and i._data.dtype == np.bool_:
            if tuple(i.shape) != tuple(out.shape[dim:dim + i.ndim]):
                raise IndexError(f"The shape of the mask {list(i.shape)} at index {dim} does not "
                                 f"match the shape of the indexed tensor {list(out.shape)}")
            for k, pos in enumerate(nonzero(i, as_tuple=True)):
                adv.append((dim + k, pos))
            dim += i.ndim
        elif isinstance(i, Tensor):
            if i._data.dtype.kind not in "iu":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            adv.append((dim, i))
            dim += 1
        else:
            i = _int_index(i)
            adv.append((dim, to_tensor(i, _dt.int64)))
            dim += 1
    dims = [d for d, _ in adv]
    from .shape import broadcast_tensors
    indices = broadcast_tensors(*[t for _, t in adv])
    # 2. move advanced dims to the front, flatten them, and take once (Note [Indexing by positions]).
    front = movedim(out, dims, list(range(len(dims))))
    sizes = tuple(front.shape[:len(dims)])
    lin = None
    for t, n in zip(indices, sizes):
        _check_bounds(t, n)
        t = t.to(_dt.int64)
        t = t + n * (t < 0).to(_dt.int64)
        lin = t if lin is None else lin * n + t
    flat = reshape(front, (int(np.prod(sizes)),) + tuple(front.shape[len(dims):]))
    if flat.is_meta and not lin.is_meta:  # CPU indices of a meta tensor, as PyTorch allows
        lin = lin.to("meta")
    result = bind(I.take, flat, lin, axis=0)
    # 3. NumPy's rule: adjacent advanced dims stay in place, otherwise they go first.
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    if adjacent and dims[0] != 0:
        k = lin.ndim
        result = movedim(result, list(range(k)), list(range(dims[0], dims[0] + k)))
    return result


def _check_bounds(t, n):
    d = t._data
    if d.__class__ is ndarray and d.size and (d.min() < -n or d.max() >= n):
        bad = d[(d < -n) | (d >= n)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for dimension with size {n}")


def positions(x, idx):
    """Flat positions in ``x`` of the elements ``x[idx]`` selects (Note [Indexing by positions])."""
    from .creation import arange
    iota = reshape(arange(x.numel(), device=x.device), tuple(x.shape))
    return getitem(iota, idx)


def index_put(input, indices, values, accumulate=False):
    """Out-of-place ``input[indices] = values`` (or ``+=`` with ``accumulate``); ``values``
    must have ``input``'s dtype."""
    if isinstance(values, Tensor) and values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(input.dtype)} for the destination and "
                           f"{scalar_type_name(values.dtype)} for the source.")
    return _index_put(input, indices, values, accumulate)


def _index_put(x, idx, value, accumulate=False):
    """``index_put`` casting ``value`` to ``x``'s dtype, as assignment does."""
    pos = positions(x, idx)
    value = to_tensor(value, x.dtype)
    if value.ndim > pos.ndim or any(a not in (1, b) for a, b in zip(
            value.shape[::-1], pos.shape[::-1])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(pos.shape)}")
    value = value.to(x.dtype).expand(tuple(pos.shape)).reshape(-1)
    flat = reshape(x, (-1,)) if x.is_contiguous() else reshape(x.contiguous(), (-1,))
    if accumulate:
        out = bind(I.index_add, flat, pos.reshape(-1), value, axis=0)
    else:
        out = bind(I.scatter, flat, pos.reshape(-1), value, dim=0)
    return reshape(out, tuple(x.shape))


_NUMBERS = (int, float, bool, complex)
_FLOAT16, _FLOAT32 = np.dtype(np.float16), np.dtype(np.float32)


def setitem(x, idx, value):
    """``x[idx] = value`` in place."""
    d = x._data
    if value.__class__ in _NUMBERS or not isinstance(value, Tensor) and is_scalar(value):
        # Note [Scalars that must fit]: float16 is written through float32, as in PyTorch
        dt = d.dtype if d.__class__ is ndarray else x.dtype.np
        check_fits(value, dt if dt is not _FLOAT16 else _FLOAT32)
        if value.__class__ is int and value < 0 and dt.kind == "u":
            value = number_array(value, dt)   # wraps, as in PyTorch; NumPy refuses
    if d.__class__ is ndarray and not (x._requires_grad or (isinstance(value, Tensor) and (
            value._requires_grad or value._data.__class__ is not ndarray))):
        np_idx = _numpy_index(idx)
        if np_idx is not None:
            v = value._data if isinstance(value, Tensor) else value
            try:
                d[np_idx] = v
            except IndexError as e:
                raise IndexError(str(e)) from None
            except ValueError:
                raise RuntimeError(f"shape mismatch: value tensor of shape "
                                   f"{list(np.shape(v))} cannot be broadcast to indexing "
                                   f"result of shape {list(d[np_idx].shape)}") from None
            x._version_counter.value += 1
            return
    # Through `inplace`, so autograd saves a snapshot of x, not the buffer being overwritten.
    from .inplace import inplace
    inplace(x, lambda s: _index_put(s, idx, value), "__setitem__")


def _numpy_index(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    out = []
    for i in items:
        if isinstance(i, Tensor):
            if i._data.__class__ is not ndarray:
                return None
            out.append(i._data)
        else:
            out.append(i)
    return tuple(out)


# ---------------------------------------------------------------------------------------
# gather / scatter / index_select / take_along_dim

def _check_same_ndim(x, index, fn):
    if index.ndim != x.ndim and not (x.ndim == 0 and index.ndim <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input "
                           f"tensor ({fn})")
    if index._data.dtype != np.int64:
        raise RuntimeError(f"{fn}(): Expected dtype int64 for index")


def gather(input, dim, index, *, sparse_grad=False):
    """Gathers values along ``dim`` at ``index`` (``out[i][j] = input[index[i][j]][j]`` for dim 0)."""
    check_tensor(input, "input", "gather")
    _check_same_ndim(input, index, "gather")
    if input.ndim == 0:  # a 0-d input is gathered as a 1-element vector
        return gather(input.reshape(1), 0, index.reshape(-1), sparse_grad=sparse_grad).reshape(
            tuple(index.shape))
    d = canonical_dim(dim, input.ndim)
    _no_negative_index(index, input, d)
    for k in range(input.ndim):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(index.shape)} to be smaller than self {list(input.shape)} "
                               f"apart from dimension {d}")
    if tuple(index.shape[:d]) + tuple(index.shape[d + 1:]) != tuple(input.shape[:d]) + tuple(input.shape[d + 1:]):
        sl = tuple(slice(0, n) if k != d else slice(None) for k, n in enumerate(index.shape))
        input = getitem(input, sl)
    return bind(I.gather, input, index, dim=d)


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return gather(flatten(input), 0, flatten(indices))
    d = canonical_dim(dim, input.ndim)
    shape = list(np.broadcast_shapes(tuple(input.shape[:d] + (1,) + input.shape[d + 1:]),
                                     tuple(indices.shape[:d] + (1,) + indices.shape[d + 1:])))
    s_in = shape.copy()
    s_in[d] = input.shape[d]
    s_ix = shape.copy()
    s_ix[d] = indices.shape[d]
    return gather(input.expand(s_in), d, indices.expand(s_ix))


def _no_negative_index(index, input, d, in_self=False):
    """gather/scatter/index_select/index_add take indices in [0, size): PyTorch's error for a
    negative one, which the primitives (shared with x[i], where -1 is the last) would wrap.
    Checked on concrete indices; a traced index is the primitive's to check."""
    a = index._data
    if a.__class__ is ndarray and a.size and a.min() < 0:
        if in_self:
            raise IndexError("index out of range in self")
        size = input.shape[d] if input.ndim else 1
        raise RuntimeError(f"index {a[a < 0].flat[0]} is out of bounds for dimension {d} with "
                           f"size {size}")


def _scatter_common(input, dim, index, src, fn):
    check_tensor(input, "input", fn)
    _check_same_ndim(input, index, fn)
    d = canonical_dim(dim, input.ndim)
    _no_negative_index(index, input, d)
    if not isinstance(src, Tensor) and is_scalar(src):
        check_fits(src, input.dtype.np)   # Note [Scalars that must fit]
    src = to_tensor(src, input.dtype) if not isinstance(src, Tensor) else src.to(input.dtype)
    src = match_device(input, src)[1]
    if src.ndim == 0 or not isinstance(src, Tensor):
        src = src.expand(tuple(index.shape))
    return d, src


@backward_name(lambda input, dim, index, src=None, *, value=None, reduce=None: None if reduce is not None else "ScatterBackward0" if isinstance(src, Tensor) else "ScatterBackward1")
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """Out-of-place ``scatter_``: writes ``src`` into ``input`` at ``index`` along ``dim``."""
    if src is None:
        src = value
    if reduce == "add":
        return scatter_add(input, dim, index, src)
    d, src = _scatter_common(input, dim, index, src, "scatter")
    return bind(I.scatter, input, index, src, dim=d)


def scatter_add(input, dim, index, src):
    """Out-of-place ``scatter_add_``: adds ``src`` into ``input`` at ``index`` along ``dim``."""
    d, src = _scatter_common(input, dim, index, src, "scatter_add")
    return bind(I.scatter_add, input, index, src, dim=d)


@backward_name("IndexSelectBackward0")
def index_select(input, dim, index):
    """Selects entries of ``input`` along ``dim`` at the 1-D ``index``."""
    check_tensor(input, "input", "index_select")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._data.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32/int64 for index")
    d = canonical_dim(dim, input.ndim) if input.ndim else 0
    _no_negative_index(index, input, d, in_self=True)
    if input.ndim == 0:  # PyTorch: a 0-d input gives a 0-d result
        return bind(I.take, input.reshape(1), index.reshape(-1), axis=0).reshape(())
    return bind(I.take, input, index.reshape(-1).to(_dt.int64), axis=d)


def index_add(input, dim, index, source, *, alpha=1):
    """Out-of-place ``index_add_``: adds ``alpha * source`` at ``index`` along ``dim``."""
    d = canonical_dim(dim, input.ndim)
    _no_negative_index(index, input, d, in_self=True)
    if alpha != 1:
        source = source * alpha
    return bind(I.index_add, input, index.to(_dt.int64), source.to(input.dtype), axis=d)


@backward_name("MaskedFillBackward0")
def masked_fill(input, mask, value):
    """Fills elements of ``input`` with ``value`` where ``mask`` is True."""
    from .math import where
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{cpp_type_name(mask.dtype)}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        value = value.to(input.dtype)
    else:
        check_fits(value, input.dtype.np)   # Note [Scalars that must fit]
        value = to_tensor(value, input.dtype)
    out = where(mask, value, input)
    return out if tuple(out.shape) == tuple(input.shape) else _bad_mask(input, mask)


def _bad_mask(input, mask):
    raise RuntimeError(f"The size of the mask {list(mask.shape)} must be broadcastable to the "
                       f"input {list(input.shape)}")


def masked_select(input, mask):
    """A 1-D tensor of the elements of ``input`` where ``mask`` is True."""
    from .shape import broadcast_tensors
    x, m = broadcast_tensors(input, mask)
    return getitem(x, m)


def masked_scatter(input, mask, source):
    from .shape import broadcast_tensors
    x, m = broadcast_tensors(input, mask)
    n = int(m.sum().item())
    return _index_put(x, m, source.reshape(-1)[:n])


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements (data-dependent shape: not available under vmap)."""
    d = input._concrete("nonzero()")
    idx = np.nonzero(d) if d.ndim else ()  # NumPy 2 refuses 0-d arrays
    if as_tuple:
        return tuple(wrap_array(i.astype(np.int64)) for i in idx) if d.ndim else (
            wrap_array(np.zeros(int(bool(d)), dtype=np.int64)),)
    return wrap_array(np.stack(idx, axis=1).astype(np.int64) if d.ndim else
                      np.zeros((int(bool(d)), 0), dtype=np.int64))


def argwhere(input):
    return nonzero(input)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    d = input._concrete("unique()")
    res = np.unique(d, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    if not isinstance(res, tuple):
        return wrap_array(res)
    out = [wrap_array(res[0])]
    if return_inverse:
        out.append(wrap_array(res[1].reshape(d.shape).astype(np.int64)))
    if return_counts:
        out.append(wrap_array(res[-1].astype(np.int64)))
    return tuple(out)


def one_hot(tensor, num_classes=-1):
    """One-hot encoding of an int64 tensor of class indices (``nn.functional.one_hot``)."""
    from .creation import arange
    if tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    d = tensor._data
    if d.__class__ is ndarray and d.size and (d.min() < 0 or d.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if d.max() >= num_classes
                           else "Class values must be non-negative.")
    return (tensor.unsqueeze(-1) == arange(num_classes, device=tensor.device)).to(_dt.int64)
