"""Eager ``cross_entropy`` of a batch of logits and class indices as one autograd node.

This file owns one shortcut of ``F.cross_entropy`` (called from ``_functional_losses``):
it must compute exactly what the composed path computes, and nothing else.

Note [One node for cross entropy]
``F.cross_entropy(logits, target)`` is composed of numtorch ops (log_softmax through
logsumexp, then nll_loss's gather and mean): about 15 ops and 14 recorded nodes, whose
Python overhead costs more than the NumPy work on an (N, C) batch: forward and backward
took 370 us of CPU at 128 x 10 float32, against PyTorch's 77-83 us, about 7% of an MLP's
SGD step (one thread, load 5); one node takes 178 us. PyTorch runs it as two kernels
with one backward each. In eager mode, for the everyday case (2-D floating logits,
int64 class indices, no class weights, no label smoothing, reduction 'mean', no target
equal to ``ignore_index``), the forward runs here as the same primitive impls the composed
ops call, in the same order, so the loss has the same bits, and records one node
(``NllLossBackward0``, PyTorch's name) whose rule is the composed graph's backward written
out: the gradient reaching the logits is ``c + (sum(-c) * (1 / s)) * e`` with ``c`` the
scattered ``-g / N``, ``e = exp(x - max)`` and ``s`` its row sums, each op as the composed
nodes bind it, so ``.grad`` has the same bits too when the logits have no other consumer
(with other consumers, the two terms reach the logits as one sum, as in PyTorch, where
LogSoftmaxBackward0 sends one gradient). The rule is written in numtorch ops and
recomputes ``e`` and ``s`` from the logits, so create_graph differentiates it again. Any
other case (a transform, meta tensors, weights, ...) takes the composed path.
The forward checks the targets in two reductions (min and max; the full check only
when one is out of range or ignore_index lies between them), computes logp at the
targets only (elementwise, so the gathered bits), and the backward scatters with one
indexed add: forward 57 -> 28 us, forward and backward 91 -> 56 us at 128 x 10
(PyTorch 29 and 171 us; one thread, load ~3).
"""
from __future__ import annotations

import numpy as np
from numpy import ndarray

from .._core import primitive as _prim
from .._core.primitive import STACK, Primitive, grad_mode
from .._core.tensor import TENSOR_TYPES, wrap
from .._ops import math as M
from .._ops import reduce as R
from .._ops import shape as S
from .._ops.creation import zeros_like
from .._ops.index import scatter_add
from .._prims import elementwise as E
from .._prims import reduction as Rd


def fused_cross_entropy(input, target, ignore_index, check_bounds):
    """``cross_entropy(input, target, ignore_index=ignore_index)`` with reduction 'mean'
    as one node (Note [One node for cross entropy]), or None where the composed path must
    run. ``check_bounds(target, C, ignore_index)`` raises for an out-of-range target and
    says whether a target may equal ``ignore_index``."""
    if STACK or input.__class__ not in TENSOR_TYPES or target.__class__ not in TENSOR_TYPES:
        return None
    x, t = input._data, target._data
    if (x.__class__ is not ndarray or t.__class__ is not ndarray or x.ndim != 2
            or t.ndim != 1 or x.dtype.kind != "f" or t.dtype != np.int64
            or t.shape[0] != x.shape[0] or not x.size):
        return None
    if check_bounds(target, x.shape[1], ignore_index):
        return None
    n = x.shape[0]
    # logsumexp(x, 1): the shift by the (detached) row max, an infinite max replaced by 0
    m = Rd.reduce_max.impl(x, axes=(1,)).reshape(n, 1)
    m = E.select.impl(E.isinf.impl(m), np.zeros((), x.dtype), m)
    e = E.exp.impl(E.sub.impl(x, m))
    s = Rd.reduce_sum.impl(e, axes=(1,)).reshape(n, 1)
    lse = E.add.impl(E.log.impl(s), m).reshape(n)
    # nll_loss: -logp[i, t_i], summed, divided by N (mean's sum, then `/ n`). logp = x - lse
    # is elementwise, so computing it at the targets only gives the gathered bits.
    picked = E.sub.impl(x[_rows(n), t], lse)
    loss = E.div.impl(Rd.reduce_sum.impl(E.neg.impl(picked), axes=(0,)), np.asarray(n, x.dtype))
    out = wrap(loss if loss.__class__ is ndarray else np.asarray(loss))
    if not (input._requires_grad and grad_mode[0]):
        return out
    edge = (input.grad_fn, input._output_nr) if input.grad_fn is not None else (input, 0)
    _prim.record_node(_nll_log_softmax, (input, target, wrap(e), wrap(s)),
                      (edge, None, None, None), out)
    out.grad_fn.metadata = {"name": "NllLossBackward0"}
    return out


def _vjp(g, out, x, target, e, s):
    """The logits' cotangent, as the composed graph's nodes compute it (bind for bind)."""
    def grad_x():
        gd, xd, td = g._data, x._data, target._data
        if not grad_mode[0] and gd.__class__ is ndarray and xd.__class__ is ndarray:
            return wrap(_grad_array(gd, xd, td, e._data, s._data))
        # create_graph: numtorch ops, with exp(x - m) and its row sums recomputed from x so
        # that they are differentiated too
        n = xd.shape[0]
        c = scatter_add(zeros_like(x), 1, S.reshape(target, (n, 1)),
                        S.reshape(-(g / n).expand(n), (n, 1)))
        ex, sums = _row_sums(x)
        return c + (R.sum(-c, 1, keepdim=True) * (1 / sums)) * ex
    return grad_x, None, None, None


def _grad_array(g, x, t, e, s):
    n = x.shape[0]
    # nll_loss's backward: the mean's g / n, negated, scattered into zeros at the targets
    # (one target per row, so `+=` at distinct places is scatter_add's 0 + src, -0.0 too)
    c = np.zeros(x.shape, x.dtype)
    c[_rows(n), t] += E.neg.impl(E.div.impl(g, np.asarray(n, x.dtype)))
    # log_softmax's: x - lse sends c to x and -c, summed over the row, to lse = log(s) + m;
    # log's rule multiplies by 1 / s, exp's by e; the two parts reaching x are added
    ct_s = E.mul.impl(Rd.reduce_sum.impl(E.neg.impl(c), axes=(1,)).reshape(n, 1),
                      E.div.impl(np.asarray(1, x.dtype), s))
    return E.add.impl(c, E.mul.impl(ct_s, e))


def _rows(n):
    """``arange(n)``, cached per n (read-only): the row index of a gather at the targets."""
    r = _ROWS.get(n)
    if r is None:
        r = np.arange(n)
        r.setflags(write=False)
        if len(_ROWS) < 64:
            _ROWS[n] = r
    return r


_ROWS: dict = {}


def _row_sums(x):
    """(exp(x - m), its row sums) with m the detached row max (0 where infinite)."""
    m = R.amax(x.detach(), 1, keepdim=True)
    m = M.where(M.isinf(m), 0.0, m)
    e = M.exp(x - m)
    return e, R.sum(e, 1, keepdim=True)


_nll_log_softmax = Primitive("nll_log_softmax", vjp=_vjp, register=False)
