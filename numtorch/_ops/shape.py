"""Shape and view ops: reshape/view, permute, transpose, expand, squeeze, cat, stack, split, …

Note [Views]
Eager mode keeps NumPy's aliasing: a view op returns a tensor whose array is a NumPy view
of its base, so in-place writes through either are seen by both. `_as_view` records the
base, shares the version counter (Note [Version counter]) and keeps a function that
replays the view on a new base; in-place ops under transforms use it to write a view's
new value back into its base functionally (see ``_ops/inplace.py``).
"""
from __future__ import annotations

import builtins
import math

import numpy as np
from numpy import ndarray

from .._core import dtypes as _dt
from .._core import primitive as _prim
from .._core.primitive import Primitive, bind
from .._core.tensor import Tensor, wrap, wrap_sharing
from .._core.symbolic import Sym, as_size, same_shape
from .._prims import shape as S
from .._prims._lower import movement
from ._common import (broadcast_shapes, broadcast_to as _broadcast_to, canonical_dim,
                      check_tensor, convert, eager_array, result_type)
from ._backward_names import backward_name
from ._eager_shape import (_EXPAND, _RESHAPE, _TRANSPOSE, _as_view, _eager_cat, _eager_split,
                           _eager_view, _remember_view)


def _infer_shape(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(as_size(s) for s in shape)


def _reshape(x, shape):
    if same_shape(x._data.shape, shape):
        return x
    return bind(S.reshape, x, new_shape=shape)


def reshape(input, *shape):
    """Returns a tensor with the same data and number of elements as ``input`` in ``shape``."""
    out = _eager_view("reshape", input, shape, True)   # Note [Eager views]
    if out is not None:
        return out
    args = shape
    shape = _infer_shape(_shape_args(shape), input.numel())
    out = _reshape(input, shape)
    d, base = out._data, input._data
    if d.__class__ is ndarray and base.__class__ is ndarray and not np.may_share_memory(d, base):
        return out  # NumPy had to copy: not a view, as in PyTorch
    out = _as_view(out, input, lambda b: _reshape(b, shape))
    _remember_view("reshape", input, args, out, _RESHAPE, shape, True)
    return out


def view(input, *shape):
    """A view of ``input`` with a new shape; fails if the memory layout does not allow it."""
    out = _eager_view("view", input, shape, True)   # Note [Eager views]
    if out is not None:
        return out
    if len(shape) == 1 and isinstance(shape[0], (_dt.dtype, type)) or (
            len(shape) == 1 and isinstance(shape[0], str)):
        return _view_dtype(input, shape[0])
    args = shape
    shape = _infer_shape(_shape_args(shape), input.numel())
    d = input._data
    if d.__class__ is ndarray and d.shape != shape:
        try:
            v = d.view()
            v.shape = shape
        except AttributeError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            ) from None
    out = _as_view(_reshape(input, shape), input, lambda b: _reshape(b, shape))
    _remember_view("view", input, args, out, _RESHAPE, shape, True)
    return out


def _view_dtype(input, dtype):
    d = _dt.to_dtype(dtype)
    return wrap(input._concrete("view(dtype)").view(d.np))


def view_as(input, other):
    return view(input, tuple(other.shape))


def reshape_as(input, other):
    return reshape(input, tuple(other.shape))


def flatten(input, start_dim=0, end_dim=-1):
    """Flattens dims ``start_dim`` through ``end_dim`` into one."""
    out = _eager_view("flatten", input, (start_dim, end_dim))   # Note [Eager views]
    if out is not None:
        return out
    nd = input.ndim
    if nd == 0:
        shape = (1,)
    else:
        s, e = canonical_dim(start_dim, nd), canonical_dim(end_dim, nd)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        shape = tuple(input.shape)
        shape = shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:]
    out = reshape(input, shape)
    _remember_view("flatten", input, (start_dim, end_dim), out, _RESHAPE, shape)
    return out


def ravel(input):
    return flatten(input)


def unflatten(input, dim, sizes):
    d = canonical_dim(dim, input.ndim)
    shape = tuple(input.shape)
    sizes = list(sizes)
    if -1 in sizes:
        known = math.prod(s for s in sizes if s != -1)
        sizes[sizes.index(-1)] = shape[d] // known
    if math.prod(sizes) != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
                           f"of dim {dim} ({shape[d]}) in the input tensor")
    return view(input, shape[:d] + tuple(sizes) + shape[d + 1:])


def squeeze(input, dim=None):
    """Removes dims of size 1 (all of them, or those in ``dim``)."""
    op = "squeeze" if dim is None else "squeeze_dims"
    out = _eager_view(op, input, () if dim is None else (dim,))   # Note [Eager views]
    if out is not None:
        return out
    out = _squeeze(input, dim)
    if out._data.__class__ is ndarray:
        _remember_view(op, input, () if dim is None else (dim,), out, _RESHAPE, out._data.shape)
    return out


@backward_name(lambda input, dim=None: "SqueezeBackward0" if dim is None else
               "SqueezeBackward2" if isinstance(dim, (tuple, list)) else "SqueezeBackward1")
def _squeeze(input, dim=None):
    shape = tuple(input.shape)
    if dim is None:
        dims = {i for i, s in enumerate(shape) if s == 1}
    else:
        dims = {canonical_dim(d, len(shape)) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
        dims = {d for d in dims if len(shape) and shape[d] == 1}
    new = tuple(s for i, s in enumerate(shape) if i not in dims)
    return _as_view(_reshape(input, new), input, lambda b: _reshape(b, new))


def unsqueeze(input, dim):
    """Inserts a dimension of size 1 at ``dim``."""
    out = _eager_view("unsqueeze", input, (dim,))   # Note [Eager views]
    if out is not None:
        return out
    out = _unsqueeze(input, dim)
    if out._data.__class__ is ndarray:
        _remember_view("unsqueeze", input, (dim,), out, _RESHAPE, out._data.shape)
    return out


@backward_name("UnsqueezeBackward0")
def _unsqueeze(input, dim):
    shape = tuple(input.shape)
    d = canonical_dim(dim, len(shape) + 1)
    new = shape[:d] + (1,) + shape[d:]
    return _as_view(_reshape(input, new), input, lambda b: _reshape(b, new))


def _transpose(x, perm):
    if perm == tuple(range(len(perm))):
        return x
    return bind(S.transpose, x, permutation=perm)


def permute(input, *dims):
    """Returns a view of ``input`` with its dimensions permuted."""
    out = _eager_view("permute", input, dims, True)   # Note [Eager views]
    if out is not None:
        return out
    out, perm = _permute(input, *dims)
    _remember_view("permute", input, dims, out, _TRANSPOSE, perm, True)
    return out


@backward_name("PermuteBackward0")
def _permute(input, *dims):
    """(`permute`'s view, the permutation)."""
    dims = _shape_args(dims)
    nd = input.ndim
    perm = _PERMS.get((dims, nd))   # validated before (`.T` of every Linear weight)
    if perm is not None:
        return _as_view(_transpose(input, perm), input, lambda b: _transpose(b, perm)), perm
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    perm = tuple(canonical_dim(d, nd) for d in dims)
    if len(set(perm)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if all(d.__class__ is int for d in dims):
        _PERMS[(dims, nd)] = perm
    return _as_view(_transpose(input, perm), input, lambda b: _transpose(b, perm)), perm


_PERMS: dict = {}


# Note [Transposing an eager matrix]
# ``W.T`` of a weight is in every hand-written layer (``x @ W.T + b``; MAML's inner loop
# takes it 576 times a call). For an eager 2-D tensor `reversed_dims` builds what the
# general path below builds, directly: the NumPy view (``d.T``) in a tensor sharing the
# input's version counter, with `_as_view`'s base and view function (one shared function,
# not a closure per call, unless the input is itself a view), and, when the input needs a
# gradient, the transpose node that `bind` would record, through `record_node` (the same
# Node, params and saved input), named PermuteBackward0 as the decorator names it. It skips
# the decorator, `_transpose`, `bind` and the interpreters' checks, which for a plain
# ndarray with no transform active decide exactly this (3.4 -> 1.3 us with a grad, 2.0 ->
# 0.7 without). Anything else (a transform, a meta tensor, other ranks) takes the general
# path; tests/test_transpose_fast_path.py compares the two.

def reversed_dims(input):
    """``Tensor.T``: ``input`` with its dimensions reversed (a view): `permute` without
    its argument checks, which a reversal always passes."""
    d = input._data
    if d.__class__ is ndarray and len(d.shape) == 2 and not _prim.STACK:
        # Note [Transposing an eager matrix]
        out = wrap_sharing(d.T, input._version_counter)
        base = input._base
        out._base = input if base is None else base
        parent_fn = input._view_fn
        out._view_fn = _reverse_2d if parent_fn is None else (
            lambda b: _reverse_2d(parent_fn(b)))
        if input._requires_grad and _prim.grad_mode[0] and d.dtype.kind in "fc":
            edge = (input.grad_fn, input._output_nr) if input.grad_fn is not None else (input, 0)
            _prim.record_node(S.transpose, (input,), (edge,), out, params=_REVERSE_2D)
            out.grad_fn.metadata = {"name": "PermuteBackward0"}
        return out
    return _reversed_dims(input)


def _reverse_2d(b):
    """The view function of a transposed matrix (Note [Views])."""
    return _transpose(b, _REVERSE_2D["permutation"])


_REVERSE_2D = {"permutation": (1, 0)}   # shared by every fast-path node: never written


@backward_name("PermuteBackward0")
def _reversed_dims(input):
    """`reversed_dims` for any tensor (Note [Transposing an eager matrix])."""
    nd = len(input._data.shape)
    perm = _REVERSED.get(nd)
    if perm is None:
        perm = _REVERSED[nd] = tuple(reversed(range(nd)))
    return _as_view(_transpose(input, perm), input, lambda b: _transpose(b, perm))


_REVERSED: dict = {}   # ndim -> its reversed dims (`.T` of every Linear weight)


def transpose(input, dim0, dim1):
    """Returns a view with dimensions ``dim0`` and ``dim1`` swapped."""
    out = _eager_view("transpose", input, (dim0, dim1))   # Note [Eager views]
    if out is not None:
        return out
    out, perm = _transpose_dims(input, dim0, dim1)
    _remember_view("transpose", input, (dim0, dim1), out, _TRANSPOSE, perm)
    return out


@backward_name("TransposeBackward0")
def _transpose_dims(input, dim0, dim1):
    """(`transpose`'s view, the permutation)."""
    nd = input.ndim
    a, b = canonical_dim(dim0, nd), canonical_dim(dim1, nd)
    if nd == 0:
        return input, ()
    perm = list(range(nd))
    perm[a], perm[b] = perm[b], perm[a]
    return _permute(input, perm)


swapaxes = swapdims = transpose


def t(input):
    """Transposes a tensor of at most 2 dimensions."""
    out = _eager_view("t", input, ())   # Note [Eager views]
    if out is not None:
        return out
    out = _t(input)
    _remember_view("t", input, (), out, _TRANSPOSE, (1, 0))
    return out


@backward_name("TBackward0")
def _t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return _transpose_dims(input, 0, 1)[0] if input.ndim == 2 else input


def adjoint(input):
    from .math import conj
    return conj(transpose(input, -2, -1))


def movedim(input, source, destination):
    """Moves the dimension(s) ``source`` to position(s) ``destination``."""
    nd = input.ndim
    src = [canonical_dim(s, nd) for s in (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [canonical_dim(s, nd) for s in (destination if isinstance(destination, (tuple, list)) else (destination,))]
    if len(src) != len(dst):
        raise RuntimeError("movedim: Invalid source or destination dims: source and destination "
                           "must have the same number of dims")
    if nd == 0:  # dims 0 and -1 name a 0-d tensor itself: nothing moves
        return input
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order)


moveaxis = movedim


def expand(input, *sizes):
    """Returns a view with singleton dimensions expanded to ``sizes`` (-1 keeps a size)."""
    out = _eager_view("expand", input, sizes, True)   # Note [Eager views]
    if out is not None:
        return out
    args = sizes
    sizes = _shape_args(sizes)
    shape = tuple(input.shape)
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(shape)}}}, size={list(sizes)}): the "
                           f"number of sizes provided ({len(sizes)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({len(shape)})")
    off = len(sizes) - len(shape)
    target = tuple(shape[i - off] if s == -1 and i >= off else s for i, s in enumerate(sizes))
    out = _as_view(_broadcast_to(input, target), input, lambda b: _broadcast_to(b, target))
    nd = len(target)
    _remember_view("expand", input, args, out, _EXPAND,   # strides per input strides
                   (target, tuple(range(nd - len(shape), nd)), {}), True)
    return out


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def broadcast_to(input, size):
    """Broadcasts ``input`` to the shape ``size``."""
    return expand(input, tuple(size))


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*[tuple(t.shape) for t in tensors])
    return tuple(expand(t, shape) for t in tensors)


def _slice(x, starts, limits, strides):
    if all(s == 0 for s in starts) and limits == x._data.shape and all(st == 1 for st in strides):
        return x
    return bind(S.slice_p, x, start_indices=starts, limit_indices=limits, strides=strides)


def narrow(input, dim, start, length):
    """Returns a view of ``input`` narrowed to ``length`` elements from ``start`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = canonical_dim(dim, input.ndim)
    n = input.shape[d]
    if start < 0:
        start += n
    if start < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return slice_dim(input, d, start, start + length, 1)


def slice_dim(x, dim, start, stop, step=1):
    """View of x[..., start:stop:step, ...] along ``dim`` (Python slice semantics)."""
    shape = tuple(x.shape)
    start, stop, step = builtins.slice(start, stop, step).indices(shape[dim])
    if step <= 0:
        raise ValueError("step must be greater than zero")
    stop = builtins.max(stop, start)
    starts = tuple(start if i == dim else 0 for i in range(len(shape)))
    limits = tuple(stop if i == dim else s for i, s in enumerate(shape))
    strides = tuple(step if i == dim else 1 for i in range(len(shape)))
    return _as_view(_slice(x, starts, limits, strides), x, lambda b: _slice(b, starts, limits, strides))


def select(input, dim, index):
    """Slices ``input`` along ``dim`` at ``index``, removing that dimension (a view)."""
    nd = input.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = canonical_dim(dim, nd)
    n = input.shape[d]
    index = int(index)
    if index < -n or index >= n:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {n}")
    index %= n
    return squeeze(slice_dim(input, d, index, index + 1), d)


def _cat_operands(tensors, fn):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if len(tensors) == 0:
        raise RuntimeError(f"{fn}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    dt = result_type(*tensors) if len(tensors) > 1 else tensors[0].dtype
    return [convert(t, dt) for t in tensors]


def cat(tensors, dim=0, *, out=None):
    """Concatenates tensors along an existing dimension ``dim``."""
    if out is None:
        res = _eager_cat(tensors, dim, False)   # Note [Eager cat and stack]
        if res is not None:
            return res
    ts = _cat_operands(tensors, "cat")
    for i, t in enumerate(ts):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    ts = [t for t in ts if not (t.ndim == 1 and t.shape[0] == 0)] or ts[:1]
    nd = ts[0].ndim
    d = canonical_dim(dim, nd)
    ref = tuple(ts[0].shape)
    for i, t in enumerate(ts):
        s = tuple(t.shape)
        if len(s) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {len(s)}")
        for k in range(nd):
            if k != d and s[k] != ref[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref[k]} but got size {s[k]} for tensor "
                                   f"number {i} in the list.")
    if len(ts) == 1:
        return ts[0].clone()
    return bind(S.concatenate, *ts, dim=d)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """Concatenates tensors along a new dimension ``dim``; all must have the same shape."""
    if out is None:
        res = _eager_cat(tensors, dim, True)   # Note [Eager cat and stack]
        if res is not None:
            return res
    return _stack(tensors, dim)


@backward_name("StackBackward0")
def _stack(tensors, dim=0):
    ts = _cat_operands(tensors, "stack")
    shape = tuple(ts[0].shape)
    for i, t in enumerate(ts):
        if tuple(t.shape) != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} "
                               f"at entry 0 and {list(t.shape)} at entry {i}")
    d = canonical_dim(dim, len(shape) + 1)
    return cat([unsqueeze(t, d) for t in ts], d)


def hstack(tensors):
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([atleast_2d(t) for t in tensors], 0)


row_stack = vstack


def dstack(tensors):
    return cat([atleast_3d(t) for t in tensors], 2)


def column_stack(tensors):
    return hstack([t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors])


def atleast_1d(input):
    return reshape(input, (1,)) if input.ndim == 0 else input


def atleast_2d(input):
    return reshape(input, (1,) * (2 - input.ndim) + tuple(input.shape)) if input.ndim < 2 else input


def atleast_3d(input):
    if input.ndim >= 3:
        return input
    if input.ndim == 2:
        return unsqueeze(input, -1)
    return reshape(input, (1, input.numel(), 1))


def split(tensor, split_size_or_sections, dim=0):
    """Splits ``tensor`` into chunks of a given size, or of the given sizes, along ``dim``."""
    out = _eager_split(tensor, split_size_or_sections, dim)   # Note [Eager views]
    return out if out is not None else _split(tensor, split_size_or_sections, dim)


@backward_name(lambda tensor, split_size_or_sections, dim=0: "SplitBackward0" if isinstance(split_size_or_sections, int) else "SplitWithSizesBackward0")
def _split(tensor, split_size_or_sections, dim=0):
    d = canonical_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, (int, Sym)):
        # the number of pieces must be a Python int: a symbolic size specialises here
        step = split_size_or_sections
        if step <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        sizes = [builtins.min(step, n - i) for i in range(0, n, step)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                               f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    """Splits ``input`` into ``chunks`` pieces (the last may be smaller)."""
    d = eager_array(input)
    if d is not None and chunks.__class__ is int and dim.__class__ is int and chunks > 0 and \
            -len(d.shape) <= dim < len(d.shape):
        n = d.shape[dim]
        out = _eager_split(input, builtins.max(1, -(-n // chunks)), dim)   # Note [Eager views]
        if out is not None:
            return out
    return _chunk(input, chunks, dim)


@backward_name("SplitBackward0")
def _chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = input.shape[canonical_dim(dim, input.ndim)]
    return split(input, builtins.max(1, -(-n // chunks)), dim)


def tensor_split(input, indices_or_sections, dim=0):
    d = canonical_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
    else:
        idx = [0] + [builtins.min(builtins.max(i, 0), n) for i in indices_or_sections] + [n]
        sizes = [builtins.max(0, b - a) for a, b in zip(idx, idx[1:])]
    return split(input, sizes, d)


@backward_name("UnbindBackward0")
def unbind(input, dim=0):
    """Removes a dimension, returning a tuple of all slices along it."""
    d = canonical_dim(dim, input.ndim)
    return tuple(select(input, d, i) for i in range(input.shape[d]))


def flip(input, dims):
    """Reverses the order of elements along ``dims``."""
    nd = input.ndim
    dims = tuple(sorted(canonical_dim(d, nd) for d in (dims if isinstance(dims, (tuple, list)) else (dims,))))
    if not dims or nd == 0:  # dims 0 and -1 name a 0-d tensor itself
        return input.clone()
    return bind(S.flip, input, dims=dims)


def fliplr(input):
    return flip(input, (1,))


def flipud(input):
    return flip(input, (0,))


@backward_name("RollBackward0")
def roll(input, shifts, dims=None):
    """Rolls ``input`` along ``dims`` by ``shifts`` (flattened first if ``dims`` is None)."""
    if dims is None:
        return roll(flatten(input), shifts, 0).reshape(tuple(input.shape))
    shifts = shifts if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = dims if isinstance(dims, (tuple, list)) else (dims,)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    out = input
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    for s, d in zip(shifts, dims):
        d = canonical_dim(d, input.ndim)
        n = input.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            out = cat([narrow(out, d, n - s, s), narrow(out, d, 0, n - s)], d)
    return out


@backward_name("RepeatBackward0")
def repeat(input, *sizes):
    """Repeats ``input`` along each dimension ``sizes`` times (copies the data)."""
    sizes = _shape_args(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    x = reshape(input, (1,) * (len(sizes) - input.ndim) + tuple(input.shape))
    shape = tuple(x.shape)
    inter = tuple(v for s, n in zip(sizes, shape) for v in (1, n))
    big = tuple(v for s, n in zip(sizes, shape) for v in (s, n))
    out = _broadcast_to(_reshape(x, inter), big)
    return clone(_reshape(out, tuple(s * n for s, n in zip(sizes, shape))))


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats, dim=None):
    """Repeats each element ``repeats`` times (an int) along ``dim``."""
    if dim is None:
        input, dim = flatten(input), 0
    if not isinstance(repeats, int):
        from .index import index_select
        reps = np.asarray(repeats._concrete("repeat_interleave") if isinstance(repeats, Tensor) else repeats)
        idx = np.repeat(np.arange(input.shape[dim]), reps)
        from .creation import from_numpy
        return index_select(input, dim, from_numpy(idx))
    d = canonical_dim(dim, input.ndim)
    shape = tuple(input.shape)
    x = unsqueeze(input, d + 1)
    x = expand(x, shape[:d + 1] + (repeats,) + shape[d + 1:])
    return reshape(x, shape[:d] + (shape[d] * repeats,) + shape[d + 1:])


def contiguous(input, memory_format=None):
    """Returns a tensor with contiguous memory (``input`` itself if it already is)."""
    d = input._data
    if d.__class__ is ndarray and not d.flags.c_contiguous:
        out = clone(input)   # clone keeps the layout, as PyTorch's does; force C order
        if not out._data.flags.c_contiguous:
            out._data = np.ascontiguousarray(out._data)
        return out
    return input


def clone(input, *, memory_format=None):
    """Returns a copy of ``input``; gradients flow back to ``input``."""
    return bind(S.copy, input)


def _stop_gradient_impl(x):
    return x


# stop_gradient: identity on values, no derivative at any level (detach).
stop_gradient = Primitive("stop_gradient", impl=_stop_gradient_impl,
                          shape=lambda x: (x.shape, x.dtype), nondiff=True,
                          batch=lambda v, d: (bind(stop_gradient, v[0]), d[0]))
stop_gradient.lower = movement(lambda load, idx, shapes, out: load(0, idx))   # identity


def detach(input):
    """Returns a new tensor detached from the graph, sharing storage with ``input``."""
    d = eager_array(input, nondiff=True)
    if d is not None:   # Note [Eager fast path]: a primitive without derivatives, evaluated
        return wrap_sharing(d, input._version_counter)   # (the identity)
    out = bind(stop_gradient, input)
    out._version_counter = input._version_counter
    return out


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of ``input`` w.r.t. ``dim1`` and ``dim2`` (appended as the last dim)."""
    nd = input.ndim
    a, b = canonical_dim(dim1, nd), canonical_dim(dim2, nd)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    x = movedim(input, (a, b), (-2, -1))
    *batch, n, m = tuple(x.shape)
    length = builtins.max(0, builtins.min(n, m - offset) if offset >= 0 else builtins.min(n + offset, m))
    start = offset if offset >= 0 else -offset * m
    flat = reshape(x, tuple(batch) + (n * m,))
    if length == 0:
        from .creation import zeros
        return zeros(tuple(batch) + (0,), dtype=input.dtype, device=input.device)
    return slice_dim(flat, len(batch), start, start + (length - 1) * (m + 1) + 1, m + 1)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Places the last dim of ``input`` on the diagonal of new ``dim1``×``dim2`` matrices."""
    *batch, n = tuple(input.shape)
    m = n + builtins.abs(offset)
    lo = offset if offset >= 0 else -offset * m
    hi = m * m - (lo + (n - 1) * (m + 1) + 1) if n else m * m
    cfg = tuple((0, 0, 0) for _ in batch) + ((lo, hi, m) if n else (0, m * m, 0),)
    flat = bind(S.pad, input, padding_value=0.0, config=cfg)
    out = reshape(flat, tuple(batch) + (m, m))
    nd = out.ndim
    if (canonical_dim(dim1, nd), canonical_dim(dim2, nd)) != (nd - 2, nd - 1):
        out = movedim(out, (-2, -1), (dim1, dim2))
    return out


def diag(input, diagonal=0):
    """The ``diagonal``-th diagonal of a 2-D tensor, or a 2-D tensor with a 1-D diagonal."""
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return globals()["diagonal"](input, diagonal).clone()
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.ndim}D")


def diagflat(input, offset=0):
    return diag_embed(flatten(input), offset)


def _triangle(x, diagonal, upper):
    """Zero the elements outside a triangle; the mask lives on x's device, the zero has x's dtype."""
    from .creation import arange, zeros
    from .math import where
    if x.ndim < 2:
        raise RuntimeError(f"{'triu' if upper else 'tril'}: input tensor must have at least 2 "
                           "dimensions")
    n, m = x.shape[-2], x.shape[-1]
    rows = arange(n, device=x.device).unsqueeze(1)
    cols = arange(m, device=x.device).unsqueeze(0)
    mask = (cols - rows >= diagonal) if upper else (cols - rows <= diagonal)
    return where(mask, x, zeros((), dtype=x.dtype))


@backward_name("TrilBackward0")
def tril(input, diagonal=0):
    """The lower triangle of the last two dims; elements above ``diagonal`` are zero."""
    return _triangle(input, diagonal, False)


@backward_name("TriuBackward0")
def triu(input, diagonal=0):
    """The upper triangle of the last two dims; elements below ``diagonal`` are zero."""
    return _triangle(input, diagonal, True)


def meshgrid(*tensors, indexing="ij"):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing == "xy" and len(tensors) >= 2:
        out = meshgrid(tensors[1], tensors[0], *tensors[2:], indexing="ij")
        return (out[1], out[0]) + tuple(out[2:])
    shape = tuple(t.numel() for t in tensors)
    n = len(tensors)
    return tuple(expand(reshape(t, tuple(-1 if i == k else 1 for i in range(n))), shape)
                 for k, t in enumerate(tensors))
