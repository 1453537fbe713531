"""The eager shortcuts of the shape ops (Note [Eager views], Note [Eager cat and stack]).

A view op, split, chunk, cat or stack on tensors the eager fast path takes (`eager_array`,
Note [Eager fast path] in _common.py) makes here what its general path in ``shape.py``
makes, without the binds; ``shape.py`` calls these first and imports `_as_view` (Note
[Views]) from here.
"""
from __future__ import annotations

import builtins

import numpy as np
from numpy import ndarray

from .._core.tensor import Size, Tensor, wrap, wrap_sharing
from .._prims import _small, shape as S
from ._common import broadcast_to as _broadcast_to, eager_array


def _as_view(out: Tensor, base: Tensor, fn) -> Tensor:
    if out is base:
        return out
    root = base._base if base._base is not None else base
    parent_fn = base._view_fn
    out._base = root
    out._version_counter = base._version_counter
    out._view_fn = fn if parent_fn is None else (lambda b: fn(parent_fn(b)))
    return out


# Note [Eager views]
# A view op on a tensor the eager fast path takes (`eager_array`, Note [Eager fast path],
# _common.py) makes what its general path makes without checking its arguments again and
# without a bind: the general path, having checked them, caches the NumPy-level params it
# bound (a new shape, a permutation, a broadcast) per (op, input shape, arguments) in
# `_VIEWS` (`_remember_view`); the next call with the same key applies the primitive's
# impl to the array directly and wraps the result as `_as_view` wraps a bind's: the root
# base, the shared version counter, and the same view function. Keys hold Python ints
# only, so a bool, a NumPy integer, a list or a symbolic size takes the general path, with
# its checks and errors. Not cached: calls that return the input itself (a reshape to its
# own shape), and reshapes that copied; a cached reshape is taken only for C-contiguous
# memory, where NumPy's reshape is always a view (other layouts: the general path decides).
# The view function, which depends on the params only, is made once, with the entry.
# split and chunk slice directly (`_eager_split`), after the same checks as narrow's.

_VIEWS: dict = {}                 # (op, input shape, int args) -> (kind, params, view fn)
_RESHAPE, _TRANSPOSE, _EXPAND = "reshape", "transpose", "expand"
_SHAPE_ARGS = (tuple, Size)       # view((2, 5)) is view(2, 5)


def _eager_view(op, input, args, packed=False):
    """The view ``op(input, *args)`` made directly (Note [Eager views]), or None; ``packed``:
    the op takes its sizes or dims packed in one tuple too."""
    d = eager_array(input)
    if d is None:
        return None
    if packed and len(args) == 1 and args[0].__class__ in _SHAPE_ARGS:
        args = args[0]
    for a in args:
        if a.__class__ is not int:
            return None
    entry = _VIEWS.get((op, d.shape, args))
    if entry is None:
        return None
    kind, p, fn = entry
    if kind is _RESHAPE:
        if not d.flags.c_contiguous:
            return None
        out = d.reshape(p)
    elif kind is _TRANSPOSE:
        out = d.transpose(p)
    else:
        # The impl's result for C-contiguous memory is a read-only strided view whose
        # strides follow from the input's (cached per input strides, for this shape).
        dense = d.size and d.flags.c_contiguous
        strides = p[2].get(d.strides) if dense else None
        if strides is None:
            out = S.broadcast_in_dim.impl(d, shape=p[0], broadcast_dimensions=p[1])
            if dense and len(p[2]) < 8:
                p[2][d.strides] = out.strides
        else:
            out = np.ndarray(p[0], d.dtype, d, 0, strides)
            out.setflags(write=False)
    return _as_view(wrap_sharing(out, input._version_counter), input, fn)


def _remember_view(op, input, args, out, kind, p, packed=False):
    """Cache the params the general path of ``op`` bound for ``args`` (Note [Eager views])."""
    d = input._data
    if out is input or d.__class__ is not ndarray or out._data.__class__ is not ndarray or (
            kind is _RESHAPE and out._base is None) or len(_VIEWS) >= 4096:
        return
    if packed and len(args) == 1 and args[0].__class__ in _SHAPE_ARGS:
        args = args[0]
    for a in args:
        if a.__class__ is not int:
            return
    from .shape import _reshape, _transpose   # the general path's helpers (shape imports us)
    fn = (lambda b: _reshape(b, p)) if kind is _RESHAPE else (lambda b: _transpose(b, p)) if \
        kind is _TRANSPOSE else (lambda b: _broadcast_to(b, p[0]))
    _VIEWS[(op, d.shape, tuple(args))] = (kind, p, fn)


# Note [Eager cat and stack]
# cat and stack of tensors the eager fast path takes (`eager_array`), all of one dtype and
# rank, with an int ``dim`` in range and sizes that match off ``dim`` (stack: the same
# shape), are the one `concatenate` the general path binds, applied to the arrays (stack's
# with each array given its new dim of size 1, the reshape `unsqueeze` binds); anything
# else (promotion, errors, the empty 1-D tensors cat skips) takes the general path. For
# C-contiguous arrays of a numeric dtype that concatenation is one C call copying blocks
# (`_small.cat`, Note [Small-tensor kernels]): np.concatenate costs ~0.7 us on two
# 10-element arrays, and stack's reshape of it another ~0.25.

def _eager_cat(tensors, dim, new_dim):
    """``cat(tensors, dim)`` (``stack`` with ``new_dim``) by Note [Eager cat and stack], or None."""
    c = tensors.__class__
    if c is not list and c is not tuple or dim.__class__ is not int:
        return None
    arrays = []
    for t in tensors:
        d = eager_array(t)
        if d is None:
            return None
        arrays.append(d)
    out = _small.cat(arrays, dim, new_dim)   # C-contiguous arrays: one C call, memcpy
    if out is not None:
        return wrap(out)
    if not arrays:
        return None
    dt, shape = arrays[0].dtype, arrays[0].shape
    same = True
    for d in arrays:
        if d.dtype is not dt:
            return None
        if d.shape != shape:
            same = False
    nd = len(shape) + new_dim
    if not -nd <= dim < nd or not nd:
        return None
    if dim < 0:
        dim += nd
    if new_dim:
        if not same:
            return None
        if dim == 0 and len(shape) == 1:   # one layout: the pieces end to end, as rows
            return wrap(np.concatenate(arrays).reshape((len(arrays),) + shape))
        new = shape[:dim] + (1,) + shape[dim:]
        arrays = [d.reshape(new) for d in arrays]
    elif not same or (nd == 1 and not shape[0]):
        for d in arrays:
            s = d.shape
            if len(s) != nd or s[:dim] != shape[:dim] or s[dim + 1:] != shape[dim + 1:] or (
                    nd == 1 and not s[0]):
                return None   # errors, and the empty 1-D tensors cat skips: the general path
    return wrap(np.concatenate(arrays, axis=dim))


def _eager_split(tensor, step, dim):
    """`split`'s pieces of a tensor the eager fast path takes, for a positive int ``step``
    and an int ``dim`` in range (Note [Eager views]), else None."""
    d = eager_array(tensor)
    if d is None or step.__class__ is not int or dim.__class__ is not int or step <= 0:
        return None
    nd = len(d.shape)
    if not -nd <= dim < nd:
        return None
    if dim < 0:
        dim += nd
    n = d.shape[dim]
    if n <= step:
        return (tensor,)   # one piece, all of it: `_slice` returns the input itself
    vc, lead = tensor._version_counter, (_ALL,) * dim
    out = []
    for start in range(0, n, step):
        stop = start + step if start + step < n else n
        piece = wrap_sharing(d[lead + (builtins.slice(start, stop),)], vc)
        out.append(_as_view(piece, tensor, _slicer(d.shape, dim, start, stop)))
    return tuple(out)


_ALL = builtins.slice(None)


def _slicer(shape, dim, start, stop):
    """The view function of `slice_dim(x, dim, start, stop)` on a base of ``shape``: the
    same params, computed when it is called (rarely: Note [Views])."""
    def fn(b):
        from .shape import _slice
        starts = tuple(start if i == dim else 0 for i in range(len(shape)))
        limits = tuple(stop if i == dim else s for i, s in enumerate(shape))
        return _slice(b, starts, limits, (1,) * len(shape))
    return fn
