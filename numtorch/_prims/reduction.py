"""Reduction primitives: reduce_sum/max/min/prod over a tuple of axes, argmax/argmin, cumsum.

Strict: reduced axes are removed (the ops layer handles keepdim and dtype upcasts).
Batch rules move the batch dim to the front and shift the axes by one.
"""
from __future__ import annotations

import numpy as np

from .._core.primitive import Primitive
from ._helpers import T, move_bdim


def _reduced_shape(shape, axes):
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _kept_dims(ndim, axes):
    return tuple(i for i in range(ndim) if i not in axes)


def _expand_back(g, x, axes):
    """Broadcast a reduced cotangent back to the operand's shape."""
    shape = tuple(x._data.shape)
    return broadcast_in_dim.bind(g, shape=shape, broadcast_dimensions=_kept_dims(len(shape), axes))


def _axes_batch(prim):
    def batch(values, bdims, *, axes, **params):
        x = move_bdim(values[0], bdims[0], 0)
        return prim.bind(x, axes=tuple(a + 1 for a in axes), **params), 0
    return batch


def _reduction(name, impl, **rules):
    p = Primitive(name, impl=impl,
                  shape=lambda x, *, axes: (_reduced_shape(x.shape, axes), x.dtype), **rules)
    p.batch = _axes_batch(p)
    return p


reduce_sum = _reduction("reduce_sum", lambda x, *, axes: np.add.reduce(x, axis=axes),
                        vjp=lambda g, out, x, *, axes: (_expand_back(g, x, axes),))
reduce_sum.jvp = lambda p, t, *, axes: (reduce_sum.bind(p[0], axes=axes),
                                        reduce_sum.bind(t[0], axes=axes))


def _extremum_weights(x, out, axes):
    # PyTorch's amax/amin gradient: split evenly among the elements equal to the extremum.
    mask = (x == _expand_back(out, x, axes)).to(x.dtype)
    count = _expand_back(reduce_sum.bind(mask, axes=axes), x, axes)
    return mask / count


def _extremum(name, impl):
    p = _reduction(name, impl)
    p.vjp = lambda g, out, x, *, axes: (_expand_back(g, x, axes) * _extremum_weights(x, out, axes),)
    p.jvp = lambda prim, t, *, axes: (lambda out: (out, reduce_sum.bind(
        t[0] * _extremum_weights(prim[0], out, axes), axes=axes)))(p.bind(prim[0], axes=axes))
    return p


reduce_max = _extremum("reduce_max", lambda x, *, axes: np.maximum.reduce(x, axis=axes))
reduce_min = _extremum("reduce_min", lambda x, *, axes: np.minimum.reduce(x, axis=axes))


def _prod_partials(x, out, axes):
    """d prod / d x_i = product of the others, exact when x holds zeros."""
    zero = x == 0
    zeros = _expand_back(reduce_sum.bind(zero.to(x.dtype), axes=axes), x, axes)
    nonzero_prod = _expand_back(reduce_prod.bind(T.where(zero, T.ones_like(x), x), axes=axes), x, axes)
    safe = T.where(zero, T.ones_like(x), x)
    return T.where(zeros == 0, _expand_back(out, x, axes) / safe,
                   T.where((zeros == 1) & zero, nonzero_prod, T.zeros_like(x)))


reduce_prod = _reduction("reduce_prod", lambda x, *, axes: np.prod(x, axis=axes),
                         vjp=lambda g, out, x, *, axes: (_expand_back(g, x, axes) * _prod_partials(x, out, axes),))
reduce_prod.jvp = lambda p, t, *, axes: (lambda out: (out, reduce_sum.bind(
    t[0] * _prod_partials(p[0], out, axes), axes=axes)))(reduce_prod.bind(p[0], axes=axes))


def _arg_reduction(name, np_fn):
    p = Primitive(name, impl=lambda x, *, axis: np_fn(x, axis=axis).astype(np.int64, copy=False),
                  shape=lambda x, *, axis: (_reduced_shape(x.shape, (axis,)), np.dtype(np.int64)),
                  nondiff=True)
    p.batch = lambda v, d, *, axis: (p.bind(move_bdim(v[0], d[0], 0), axis=axis + 1), 0)
    return p


argmax = _arg_reduction("argmax", np.argmax)
argmin = _arg_reduction("argmin", np.argmin)

# cumsum(x, axis): linear; its transpose is a reversed cumsum.
cumsum = Primitive("cumsum", impl=lambda x, *, axis: np.cumsum(x, axis=axis),
                   shape=lambda x, *, axis: (x.shape, x.dtype),
                   vjp=lambda g, out, x, *, axis: (T.flip(cumsum.bind(T.flip(g, (axis,)), axis=axis), (axis,)),))
cumsum.jvp = lambda p, t, *, axis: (cumsum.bind(p[0], axis=axis), cumsum.bind(t[0], axis=axis))
cumsum.batch = lambda v, d, *, axis: (cumsum.bind(move_bdim(v[0], d[0], 0), axis=axis + 1), 0)

from .shape import broadcast_in_dim  # noqa: E402


# Note [What backward reads] (autograd/engine.py)
reduce_sum.vjp_needs = cumsum.vjp_needs = ()
reduce_max.vjp_needs = reduce_min.vjp_needs = reduce_prod.vjp_needs = ((0, "out"),)


# Lower rules (Note [Lower rules], _lower.py)
from ._lower import extern, reduction  # noqa: E402

reduce_sum.lower = reduction("zero", "sum")
reduce_prod.lower = reduction("one", "prod")
reduce_max.lower = reduction("lowest", "max")
reduce_min.lower = reduction("highest", "min")
argmax.lower = argmin.lower = extern("index-valued reduction: NumPy's argmax/argmin")
cumsum.lower = extern("a scan, not a reduction: NumPy's cumsum")
