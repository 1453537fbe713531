"""Eager ``F.linear(x, weight, bias)`` on a batch of rows as one autograd node.

This file owns one shortcut of ``F.linear`` (called from ``functional.py``): it must
compute exactly what the composed path computes, and nothing else.

Note [One node for linear]
``F.linear(x, W, b)`` is composed of two ops, ``dot_general(x, W)`` (x W^T) and ``+ b``:
two recorded nodes, a second output array, and in backward a second engine step whose
bias cotangent goes through the broadcast's bookkeeping (Note [Broadcasting operands
under autograd]). In an MLP's SGD step each op runs right after a matrix product has
pushed the interpreter's data out of the caches, where the Python around `+ b` costs
several times its warm price: the bias add took 81-94 us there against 16 us of NumPy
work (128 x 512 float32, one thread; PyTorch's add 26-48 us). PyTorch computes the same
thing as one ``addmm`` (``AddmmBackward0``). In eager mode, for 2-D floating input and
weight and a 1-D bias, all of one dtype, the forward runs here as the composed path's
impls in the same order (the product, then ``np.add`` of the bias, written into the
product's fresh array), so the output has the same bits, and records one node whose rule
is the composed graph's rules side by side: dot_general's for the input and the weight,
the broadcast's (a sum over the rows) for the bias. The gradients have the same bits,
the version checks are the product's (the input's gradient reads the weight and the
weight's reads the input; the bias's reads nothing), and under create_graph the rules
bind numtorch ops as before. Any other case (a transform, meta tensors, other ranks or
dtypes, no bias) takes the composed path.
"""
from __future__ import annotations

from numpy import ndarray

from .._core import primitive as _prim
from .._core.primitive import STACK, Primitive, grad_mode
from .._core.tensor import TENSOR_TYPES, wrap
from .._prims import elementwise as E
from .._prims import shape as _P
from .._prims.contraction import dot_general

_CONTRACTING = ((1,), (1,))   # x (n, k) with W (m, k): x W^T
_NO_BATCH = ((), ())


def fused_linear(input, weight, bias):
    """``F.linear(input, weight, bias)`` as one node (Note [One node for linear]), or None
    where the composed path must run. The caller has checked that ``weight`` is 2-D,
    that the inner sizes agree and that input and weight have one dtype."""
    if bias is None or input.__class__ not in TENSOR_TYPES \
            or weight.__class__ not in TENSOR_TYPES or bias.__class__ not in TENSOR_TYPES:
        return None
    if STACK:   # an interpreter's own rule for linear (vmap's: Note [One node for a batched
        rule = getattr(STACK[-1], "linear", None)   # linear], func/_vmap_linear.py)
        return None if rule is None else rule(input, weight, bias)
    x, w, b = input._data, weight._data, bias._data
    if (x.__class__ is not ndarray or w.__class__ is not ndarray or b.__class__ is not ndarray
            or x.ndim != 2 or b.ndim != 1 or b.shape[0] != w.shape[0]
            or b.dtype != x.dtype or x.dtype.kind != "f"):
        return None
    out = dot_general.impl(x, w, contracting=_CONTRACTING, batch=_NO_BATCH)
    if out.base is None and out.flags.writeable:   # the product's own fresh array
        E.add.ufunc(out, b, out=out)
    else:
        out = E.add.impl(out, b)
    t = wrap(out)
    if not (grad_mode[0] and (input._requires_grad or weight._requires_grad
                              or bias._requires_grad)):
        return t
    edges = tuple([(a.grad_fn, a._output_nr) if a.grad_fn is not None else
                   ((a, 0) if a._requires_grad else None) for a in (input, weight, bias)])
    return _prim.record_node(_addmm, (input, weight, bias), edges, t)


def _vjp(g, out, x, w, b):
    """The composed graph's rules: dot_general's for x and W, the bias broadcast's for b."""
    grad_x, grad_w = dot_general.vjp(g, None, x, w, contracting=_CONTRACTING, batch=_NO_BATCH)
    return grad_x, grad_w, lambda: _P.broadcast_in_dim.vjp(
        g, None, b, shape=tuple(g._data.shape), broadcast_dimensions=(1,))[0]


# PyTorch's node for linear on a batch of rows is AddmmBackward0 (Node.name capitalizes)
_addmm = Primitive("addmm", vjp=_vjp, register=False)
_addmm.vjp_needs = ((1,), (0,), ())   # Note [What backward reads]
