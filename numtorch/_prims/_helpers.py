"""Helpers shared by the primitive families: shape rules and batching utilities.

Each family file defines its primitives with one-line rules built from these. Rules use
numtorch ops (imported lazily as ``T``) so that they are differentiable and batchable.
"""
from __future__ import annotations

import numpy as np

from .._core import primitive as _prim
from .._core.tensor import wrap


class _LazyTorch:
    """``T.sin(x)`` inside a rule: the public namespace, resolved at first use (no cycle)."""

    def __getattr__(self, name):
        import numtorch
        value = getattr(numtorch, name)
        setattr(self, name, value)
        return value


T = _LazyTorch()


def same_shape(*avals, **params):
    """Shape rule of an elementwise primitive: operands agree in shape and dtype."""
    first = avals[0]
    for a in avals[1:]:
        if a.shape != first.shape or a.dtype != first.dtype:
            raise TypeError(f"elementwise primitive expects equal shapes and dtypes, got "
                            f"{[(x.shape, str(x.dtype)) for x in avals]}")
    return first.shape, first.dtype


def move_bdim(x, bdim, to=0):
    """Move batch dimension ``bdim`` of ``x`` to position ``to`` (a no-op if already there)."""
    nd = len(x.shape)
    bdim, to = bdim % nd, to % nd
    if bdim == to:
        return x
    # One transpose, bound directly: a batch rule's operand needs no view bookkeeping.
    perm = list(range(nd))
    del perm[bdim]
    perm.insert(to, bdim)
    return _shape_prims().transpose.bind(x, permutation=tuple(perm))


def bdim_size(values, bdims):
    for v, d in zip(values, bdims):
        if d is not None:
            return v.shape[d]
    raise AssertionError("no batched operand")


def batch_all_to_front(values, bdims):
    """Move every batch dim to 0, broadcasting unbatched operands; for elementwise rules."""
    size = bdim_size(values, bdims)
    out = []
    for v, d in zip(values, bdims):
        if d is None:   # a zero-stride view: one broadcast_in_dim, nothing materialized
            out.append(broadcast_unbatched(v, size))
        else:
            out.append(move_bdim(v, d, 0))
    return out


# Note [Unbatched constants]
# An elementwise rule broadcasts each unbatched operand along a new leading batch dim
# (primitives are strict, so it cannot rely on NumPy's broadcasting). Most such operands
# are plain arrays: the numbers the ops layer broadcast (``lr * g``, ReLU's zero, the 2 of
# ``x ** 2``). For those `bind` would reach the NumPy impl anyway, after scanning the
# arguments and the stack; `broadcast_unbatched` calls the impl itself and wraps its
# zero-stride view. It does so only where `bind` would have done exactly that: a NumPy
# payload that does not require grad, concrete sizes, and no interpreter that claims
# constants or owns symbolic sizes (Note [Capture claims constants], Note [Symbolic
# params]). A tracer of a lower level (an outer grad's parameter) still binds: that level
# must record the broadcast, whose vjp sums over the batch.

def broadcast_unbatched(v, size):
    """``v`` broadcast to ``(size,) + v.shape`` (a view): an unbatched operand of a rule."""
    shp = _shape_prims()
    d = v._data
    shape = d.shape if d.__class__ is np.ndarray else tuple(v.shape)
    dims = tuple(range(1, len(shape) + 1))
    if (d.__class__ is np.ndarray and not v._requires_grad and size.__class__ is int
            and not _prim.SYMBOLIC_OWNERS and not (_prim.STACK and _prim.STACK[-1].claims_constants)):
        return wrap(shp._bid_impl(d, shape=(size,) + shape, broadcast_dimensions=dims))
    return shp.broadcast_in_dim.bind(v, shape=(size,) + shape, broadcast_dimensions=dims)


def _shape_prims():
    # numtorch._prims.shape imports this module: resolved at first use, then kept (an
    # import statement costs ~1 µs, and this runs in every batch rule that moves a dim).
    global _SHAPE
    if _SHAPE is None:
        from . import shape
        _SHAPE = shape
    return _SHAPE


_SHAPE = None


def normalize_axes(axes, ndim):
    return tuple(sorted(a % ndim for a in axes))


def shift_axes(axes, bdim):
    """Axes of the per-example array mapped to the batched array whose batch dim is ``bdim``."""
    return tuple(a + 1 if a >= bdim else a for a in axes)


def np_dtype(d):
    return np.dtype(d)
