"""vmap's rule for ``F.linear`` with stacked weights: one eager node (an ensemble's layer).

This file owns one shortcut of ``F.linear`` under ``vmap`` (``VmapInterpreter.linear``,
called from nn/_fused_linear.py): it must compute exactly what the composed path's batch
rules compute at the level below, and nothing else.

Note [One node for a batched linear]
An ensemble under ``vmap(functional_call)`` calls ``F.linear(x, W, b)`` with ``W`` and
``b`` batched (``stack_module_state``'s parameters) and ``x`` unbatched (the shared input)
or batched (the previous layer's output). Composed, that is dot_general, a broadcast of
``b`` and an add, each a trip through the batching interpreter and its batch rule, and
at the level below four recorded nodes when the stacked parameters require grad: the
product, its transpose (Note [Rows before columns in a batched product]), the broadcast
and the add; about 60 us of Python per layer (PyTorch has a batch rule for linear).
Where the values under the batch dims are eager arrays (a vmap right above eager
autograd, as in an ensemble), this rule computes what those batch rules would, with the
same impls in the same order: the product by `batch_plan`'s operand order and params,
its transpose as a view, the bias added into the product's fresh array; so the output
has the same bits and layout. It records one node whose rule is the composed graph's
rules in sequence: the transpose's inverse and dot_general's rule for the operands, the
broadcast's (a sum over the rows) for the bias, so the gradients have the same bits too,
and under create_graph they bind numtorch ops as before. Any other case (another
transform between, batch dims not leading, no bias, other ranks or dtypes) composes.
"""
from __future__ import annotations

from numpy import add, may_share_memory, ndarray

from .._core import primitive as _prim
from .._core.primitive import Primitive, grad_mode
from .._core.tensor import wrap
from .._prims import shape as _P
from .._prims.contraction import batch_plan, dot_general
from ._vmap import BatchTracer

_CONTRACTING = ((1,), (1,))   # per example: x (m, k) with W (n, k), x W^T
_NO_BATCH = ((), ())


def _plan(x_shape, w_shape):
    """(swap, params, perm): the batch rule's product of x and the stacked W, and the
    permutation that puts its result in (B, m, n) order (None: already there)."""
    x_batched = len(x_shape) == 3
    swap, params, perm, out_bdim = batch_plan(x_shape, w_shape, x_batched, True, _CONTRACTING,
                                              _NO_BATCH)
    if out_bdim:   # (m, B, n): the add's batch rule moves the batch dim to the front
        assert perm is None
        perm = (1, 0, 2)
    return swap, params, perm


def batched_linear(interp, input, weight, bias):
    """``F.linear(input, weight, bias)`` under ``interp``'s vmap as one eager node (Note
    [One node for a batched linear]), or None where the composed path must run."""
    dw, db, dx = weight._data, bias._data, input._data
    if (dw.__class__ is not BatchTracer or db.__class__ is not BatchTracer
            or dw.interp is not interp or db.interp is not interp or dw.bdim or db.bdim):
        return None
    W, b = dw.value, db.value
    if dx.__class__ is BatchTracer:
        if dx.interp is not interp or dx.bdim:
            return None
        x = dx.value
    else:
        x = input
    xa, wa, ba = x._data, W._data, b._data
    if (xa.__class__ is not ndarray or wa.__class__ is not ndarray or ba.__class__ is not ndarray
            or wa.ndim != 3 or ba.ndim != 2 or xa.ndim != (3 if x is not input else 2)
            or ba.shape != wa.shape[:2] or xa.shape[-1] != wa.shape[2]
            or (xa.ndim == 3 and xa.shape[0] != wa.shape[0])
            or xa.dtype != wa.dtype or ba.dtype != wa.dtype or wa.dtype.kind != "f"):
        return None
    swap, params, perm = _plan(xa.shape, wa.shape)
    impl = dot_general.impl
    out = impl(wa, xa, **params) if swap else impl(xa, wa, **params)
    if perm is not None:
        out = out.transpose(perm)
    bb = ba[:, None, :]
    if out.flags.writeable and not may_share_memory(out, xa) and not may_share_memory(out, wa):
        add(out, bb, out=out)   # the product's own fresh array: the add's values, in place
    else:
        out = add(out, bb)
    t = wrap(out)
    if grad_mode[0] and (x._requires_grad or W._requires_grad or b._requires_grad):
        edges = tuple([(a.grad_fn, a._output_nr) if a.grad_fn is not None else
                       ((a, 0) if a._requires_grad else None) for a in (x, W, b)])
        _prim.record_node(_batched_addmm, (x, W, b), edges, t)
    return wrap(BatchTracer(interp, t, 0))


def _vjp(g, out, x, w, b):
    """The composed graph's rules: the transposes' inverse and dot_general's for x and W,
    the bias broadcast's for b."""
    swap, params, perm = _plan(tuple(x._data.shape), tuple(w._data.shape))
    if perm is not None:
        inverse = tuple(perm.index(d) for d in range(len(perm)))
        gp = _P.transpose.bind(g, permutation=inverse)
    else:
        gp = g
    if swap:
        grad_w, grad_x = dot_general.vjp(gp, None, w, x, **params)
    else:
        grad_x, grad_w = dot_general.vjp(gp, None, x, w, **params)
    return grad_x, grad_w, lambda: _P.broadcast_in_dim.vjp(
        g, None, b, shape=tuple(g._data.shape), broadcast_dimensions=(0, 2))[0]


# the stacked layers' node: PyTorch's name for linear's node on a batch of rows
_batched_addmm = Primitive("addmm", vjp=_vjp, register=False)
_batched_addmm.vjp_needs = ((1,), (0,), ())   # Note [What backward reads]
