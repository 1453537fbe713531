"""Reverse mode: the tape (graph of `Node`s built from VJP rules) and the backward engine.

Eager autograd (``requires_grad``/``.backward()``) and ``func.grad`` share this machinery
(Note [One reverse mode]). This module owns recording and running backward; it must not
know individual primitives: their VJP rules do the math. Which nodes a backward runs
(`autograd.grad`'s walk) is in _order.py; what it does at the leaves (AccumulateGrad,
hooks, queued callbacks) is in _leaves.py.
"""
from __future__ import annotations

import functools
import heapq
from heapq import heappop, heappush
import itertools

from numpy import asarray as _asarray, ndarray

from .._core import primitive as _prim
from .._core.meta import MetaArray
from .._core.tensor import Tensor, VersionCounter, eval_bind, wrap, wrap_array, wrap_sharing
from .._ops.creation import zeros_like as _ops_zeros_like
from .._ops.math import add as _ops_add
from ._leaves import (  # noqa: F401 - re-exported: engine.queue_callback, engine._leaf_hooks_live
    _accumulate, _add, _finish_leaves, _leaf_hooks_live, _queued_callbacks, _run_hooks,
    _run_queued_callbacks, queue_callback)

# Note [One reverse mode]
# Reverse mode is a tape of VJP rules, PyTorch's way. A Node remembers a primitive, its
# params, the primal inputs its rule needs, and edges to the nodes (or leaf tensors) that
# produced those inputs. Eager autograd is the implicit outermost grad level: nodes hang
# off ordinary tensors (`grad_fn`). `func.grad` opens a fresh level whose tracers carry
# their own nodes, with the *lower-level* tensors saved inside; because VJP rules are
# written in numtorch ops, running a level's backward binds at the levels below it and so
# is itself differentiated by any outer level. Forward mode uses JVP rules; the OpInfo
# tests check that the two agree.
#
# Note [Lazy cotangents]
# A VJP rule returns one entry per primal input: a Tensor, None (no gradient), or a
# zero-argument function that computes it. The engine calls such a function only when
# that input needs a gradient; dot_general and conv use this so that the first layer of a
# network never computes a gradient for its input data.


# PyTorch's names for the backward nodes of primitives that correspond to one of its ops
# (grad_fn prints these); the others are named after the primitive.
_TORCH_NODE_NAMES = {
    "reduce_sum": "SumBackward0", "dot_general": "MmBackward0", "reshape": "ViewBackward0",
    "select": "WhereBackward0", "concatenate": "CatBackward0", "copy": "CloneBackward0",
    "convert_element_type": "ToCopyBackward0", "broadcast_in_dim": "ExpandBackward0",
    "slice": "SliceBackward0", "reduce_max": "AmaxBackward0",
    "reduce_min": "AminBackward0", "reduce_prod": "ProdBackward0", "take": "IndexBackward0",
    "scatter": "IndexPutBackward0", "maximum": "MaximumBackward0", "minimum": "MinimumBackward0",
    "sigmoid": "SigmoidBackward0", "pad": "ConstantPadNdBackward0", "conv": "ConvolutionBackward0",
    "copy_to": "CopyBackwards",
}


_next_seq = itertools.count().__next__
_new = object.__new__
_EVAL_BIND = eval_bind   # the eager one (Note [Recording a node])

# Note [Recording a node]
# Every op on a tensor that requires grad makes a Node, so its making is kept short
# (classic MAML records about 7,000 per call). The node's plan (which primals and outputs
# its rule reads, which it never reads: Notes [What backward reads], [Saved values]) is
# cached on the primitive (`Primitive.node_plans`) per pattern of inputs needing
# gradients, a small int for one or two inputs. A rule without `vjp_needs` reads
# everything and has no plan (a graph_call's number of results varies from call to call).
# The rare work (stand-ins for large unread values) sits in helpers the common node never
# calls; the values read at one or two positions (mul, matmul, pow) or the output alone
# (relu, exp) are listed without a loop. `autograd_bind` computes the eager value of a
# one- or two-operand primitive itself (eval_bind and wrap, inlined) before making the
# node: the same impl call and the same Tensor fields, two Python frames fewer per
# recorded op; the ops layer's eager shortcuts for recorded same-shape elementwise ops
# and matrix products call it directly (what `bind` decides for eager operands with no
# transform active, without its frame and checks). Together these took the bytecodes of
# a recorded `x * y` from 515 to 370.


class Node:
    """A backward function in the autograd graph (``grad_fn``)."""

    __slots__ = ("prim", "params", "saved", "checked", "versions", "out", "next_edges",
                 "pre_hooks", "post_hooks", "metadata", "seq", "sum_to", "own_out",
                 "__weakref__")

    def __init__(self, prim, params, saved, out, next_edges):
        # Runs once per recorded op (Note [Recording a node]): no comprehensions (each is a
        # call in Python 3.11), one cached plan per primitive and pattern of inputs needing
        # gradients, and nothing computed that the plan says is not needed.
        self.seq = _next_seq()   # creation order (Notes [Post-accumulate-grad hooks], [Execution order])
        self.prim = prim
        self.params = params
        self.next_edges = next_edges
        self.pre_hooks = None
        self.post_hooks = None
        self.metadata = None
        self.sum_to = None   # Note [Broadcasting operands under autograd]
        self.own_out = False  # Note [A node keeps its output's value, not the output]
        if prim.vjp_needs is None:   # the rule reads everything: nothing to plan (the
            checked = list(saved)     # number of results may differ from call to call)
            if prim.multiple_results:
                for o in out:
                    if o.__class__ is Tensor:
                        checked.append(o)
            elif out.__class__ is Tensor:
                checked.append(out)
            self.saved = saved
            self.out = out
            self.checked = checked
            self.versions = [t._version_counter.value for t in checked]
            return
        n = len(next_edges)   # the plan's key, spelled out for one and two inputs
        if n == 2:
            key = (next_edges[0] is None) + 2 * (next_edges[1] is None)
        elif n == 1:
            key = next_edges[0] is None
        else:
            key = tuple(map(_is_none, next_edges))
        plan = prim.node_plans.get(key)
        if plan is None:
            plan = _plan(prim, next_edges, len(out) if prim.multiple_results else 1, key)
        read, reads_out, dropped, drops_out = plan
        if dropped:   # stand-ins: Note [Saved values]
            for i in dropped:   # small arrays stay: look before copying `saved`
                d = saved[i]._data
                if d.__class__ is not ndarray or d.nbytes >= _STAND_IN_BYTES:
                    saved = _with_stand_ins(saved, dropped)
                    break
        if drops_out and out.__class__ is not _Unread:
            out = _out_with_stand_ins(prim, out, drops_out)
        self.saved = saved
        self.out = out
        # the versions read explicitly (a dotted attrgetter is 4x slower); tuples where
        # the plan is one of the common ones
        if read:
            if reads_out is None:
                if len(read) == 1:
                    c = saved[read[0]]
                    self.checked = (c,)
                    self.versions = (c._version_counter.value,)
                    return
                if len(read) == 2:   # matmul, mul, pow
                    c, c1 = saved[read[0]], saved[read[1]]
                    self.checked = (c, c1)
                    self.versions = (c._version_counter.value, c1._version_counter.value)
                    return
            checked = [saved[i] for i in read]
        elif reads_out is None:   # most nodes: nothing to version-check
            self.checked = self.versions = _NOTHING_CHECKED
            return
        elif not prim.multiple_results:   # relu, exp, tanh: the output alone
            if out.__class__ is Tensor:
                self.checked = (out,)
                self.versions = (out._version_counter.value,)
            else:
                self.checked = self.versions = _NOTHING_CHECKED
            return
        else:
            checked = []
        if reads_out is not None:
            if prim.multiple_results:
                checked.extend(out[k] for k in reads_out if out[k].__class__ is Tensor)
            elif out.__class__ is Tensor:
                checked.append(out)
        if checked:
            self.checked = checked
            self.versions = [t._version_counter.value for t in checked]
        else:
            self.checked = self.versions = _NOTHING_CHECKED

    def name(self) -> str:
        if self.metadata and "name" in self.metadata:
            return self.metadata["name"]
        torch_name = _TORCH_NODE_NAMES.get(self.prim.name)
        if torch_name:
            return torch_name
        return "".join(p.capitalize() for p in self.prim.name.split("_")) + "Backward0"

    def __repr__(self):
        return f"<{self.name()} object>"

    @property
    def next_functions(self):
        return tuple((e[0] if e is not None and isinstance(e[0], Node) else
                      (AccumulateGrad(e[0]) if e is not None else None),
                      e[1] if e is not None else 0) for e in self.next_edges)

    def register_hook(self, fn):
        if self.post_hooks is None:
            self.post_hooks = []
        self.post_hooks.append(fn)

    def register_prehook(self, fn):
        self._add_pre_hook(0, fn)

    def _add_pre_hook(self, output_nr, fn):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        self.pre_hooks.setdefault(output_nr, []).append(fn)

    def apply(self, cts):
        """Input cotangents for output cotangents ``cts`` (a list, one per output)."""
        if self.saved is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access "
                "saved tensors after they have already been freed). Saved intermediate values "
                "of the graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        for s, v in zip(self.checked, self.versions):
            if s._version_counter.value != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{s.dtype}{list(s.shape)}] is at version "
                    f"{s._version_counter.value}; expected version {v} instead. Hint: the "
                    f"operation that failed was {self.name()}.")
        ct = tuple(cts) if self.prim.multiple_results else cts[0]
        return self.prim.vjp(ct, self.out, *self.saved, **self.params)

    def release(self):
        self.saved = None
        self.checked = None
        self.out = None


# Note [What backward reads]
# A node keeps every primal (rules may read shapes), but only the values its VJP rule reads
# for the inputs that need gradients are version-checked: `y = x * 3; x.add_(1)` is fine,
# as in PyTorch, because the gradient of x reads the constant, not x. A primitive states
# this in `vjp_needs`: per input, the primal indices (and "out") its cotangent reads; None
# means "everything, and the output". A primitive with several results names the ones it
# reads "out0", "out1", ... ("out": all of them): batch_norm's backward reads its mean and
# variance but not its full-size output, which is then not kept (Note [Saved values]).

def _out_positions(entries, n_outs):
    """Output positions named by the "out"/"out<k>" entries of a `vjp_needs` set."""
    positions = set()
    for e in entries:
        if e == "out":
            positions.update(range(n_outs))
        elif isinstance(e, str):
            positions.add(int(e[3:]))
    return positions


def _plan(prim, edges, n_outs, key):
    """(indices of the primals read, positions of the outputs read or None, indices of the
    primals dropped, positions of the outputs dropped) for a node of ``prim`` with these
    edges (Notes [What backward reads], [Saved values]); cached on the primitive per
    pattern of inputs needing gradients. A single-result primitive's output is position 0.
    (A rule without `vjp_needs` has no plan: it reads everything.)"""
    needs = prim.vjp_needs
    read = set()
    for i, e in enumerate(edges):
        if e is not None and needs:   # (): the rule reads shapes only
            read.update(needs[i])
    if prim.vjp_context is not None:   # a per-call backward reads `saved` its own way
        kept, kept_outs = set(range(len(edges))), set(range(n_outs))
    else:
        kept = set()
        for n in needs:
            kept.update(n)
        kept_outs = _out_positions(kept, n_outs)
    reads_out = tuple(sorted(_out_positions(read, n_outs)))
    plan = (tuple(sorted(i for i in read if not isinstance(i, str))),
            reads_out or None,
            tuple(i for i in range(len(edges)) if i not in kept),
            tuple(k for k in range(n_outs) if k not in kept_outs))
    prim.node_plans[key] = plan
    return plan


def _with_stand_ins(saved, dropped):
    """``saved`` with stand-ins for the primals the rule never reads (Note [Saved values])."""
    saved = list(saved)
    for i in dropped:
        saved[i] = stand_in(saved[i])
    return tuple(saved)


def _out_with_stand_ins(prim, out, drops_out):
    """``out`` with stand-ins for the outputs the rule never reads (Note [Saved values])."""
    if prim.multiple_results:
        return tuple(stand_in(o) if k in drops_out and o.__class__ is Tensor else o
                     for k, o in enumerate(out))
    if out.__class__ is Tensor:
        d = out._data
        if d.__class__ is not ndarray or d.nbytes >= _STAND_IN_BYTES:
            return stand_in(out)
    return out


_NOTHING_CHECKED = ()   # the checked values and versions of a node that reads none


def _is_none(e):
    return e is None


# Note [Saved values]
# A node holds only the values its VJP rule can read (any entry of `vjp_needs`, whichever
# inputs need gradients); every other primal, and the output when no entry reads it, is
# replaced by a stand-in of the same shape and dtype that owns no memory: a read-only
# zero-stride view of one zero (rules still read shapes, and some build zeros_like of a
# primal: scatter's). Under vmap or grad the stand-in is the same tracer over a stand-in
# (`Tracer.stand_in`). PyTorch saves the same way (SavedVariable), and it is what lets the
# graphs of MAML's inner steps (vmap over inner grad steps, under an outer .backward())
# free each step's intermediates instead of keeping every activation of every step alive.
# Arrays under 64 KiB are kept as they are: a stand-in would cost more time than it frees.
# A rule reading a value its `vjp_needs` does not declare would read zeros: the gradient
# tests (finite differences under grad, grad of grad and vmap of grad, per primitive) catch
# that. Nodes with a per-call context (autograd.Function, AOT regions) keep everything:
# their backward reads `saved` in its own way.

_STAND_IN_BYTES = 1 << 16


_ZERO_BYTES = bytes(64)   # one element of any dtype, read-only


def stand_in(t):
    """A tensor with ``t``'s shape and dtype that owns no memory (Note [Saved values])."""
    d = t._data
    if d.__class__ is ndarray:
        if d.nbytes < _STAND_IN_BYTES:
            return t
        return wrap(ndarray(d.shape, d.dtype, _ZERO_BYTES, 0, (0,) * d.ndim))
    if d.__class__ is MetaArray:
        return t
    d = d.stand_in()
    return t if d is None else wrap(d)


class AccumulateGrad:
    """The node view of a leaf tensor (``next_functions`` shows these, as PyTorch does)."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "AccumulateGrad"


def edge_of(t):
    """Where a gradient for ``t`` flows: (node, output_nr), (leaf, 0), or None."""
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        return (t, 0)
    return None


def _differentiable(payload) -> bool:
    return payload.dtype.kind in "fc"


def record(prim, params, edges, saved, out, outs_as_tensors):
    """Attach a Node for ``prim`` (inputs reached through ``edges``) to ``outs_as_tensors``."""
    node = Node(prim, params, saved, out, edges)
    if prim.vjp_context is not None:   # a custom Function's ctx (autograd/function.py)
        outs_as_tensors = prim.vjp_context(node, outs_as_tensors)
    for i, o in enumerate(outs_as_tensors):   # i: the output's position in `out`
        if o is not None and _differentiable(o._data):
            o.grad_fn = node
            o._requires_grad = True
            o._output_nr = i
    return node


def autograd_bind(prim, args, params):
    """Eager autograd level: evaluate below, then record a Node on the outputs."""
    if not prim.multiple_results and prim.vjp_context is None and eval_bind is _EVAL_BIND:
        # Note [Recording a node]: eval_bind and wrap, inlined for one or two arrays (unless
        # a test replaced eval_bind to see the calls reaching NumPy)
        n, r = len(args), None
        if n == 2:
            a, b = args
            x, y = a._data, b._data
            if x.__class__ is ndarray and y.__class__ is ndarray:
                r = prim.impl(x, y, **params) if params else prim.impl(x, y)
                edges = ((a.grad_fn, a._output_nr) if a.grad_fn is not None else
                         ((a, 0) if a._requires_grad else None),
                         (b.grad_fn, b._output_nr) if b.grad_fn is not None else
                         ((b, 0) if b._requires_grad else None))
        elif n == 1:
            a = args[0]   # it requires grad: bind records only then
            x = a._data
            if x.__class__ is ndarray:
                r = prim.impl(x, **params)
                edges = ((a.grad_fn, a._output_nr) if a.grad_fn is not None else (a, 0),)
        if r is not None:
            if r.__class__ is not ndarray:
                r = _asarray(r)
            if r.dtype.kind not in "fc":   # _differentiable, inlined
                return wrap(r)
            out = _new(Tensor)
            out._data = r
            out._requires_grad = True
            out._grad = None
            out._version_counter = vc = _new(VersionCounter)
            vc.value = 0
            out._base = None
            out._hooks = None
            out._retains_grad = False
            out._output_nr = 0
            out._view_fn = None
            out.grad_fn = node = Node(prim, params, args, wrap_sharing(r, vc) if (
                _READS_OUT.get(prim) if prim in _READS_OUT else _reads_out(prim)) else _UNREAD,
                edges)
            node.own_out = True
            return out
    out = eval_bind(prim, args, params)
    if prim.multiple_results:
        outs = out
        if not any(o._data.dtype.kind in "fc" for o in outs):
            return out
    else:
        if out._data.dtype.kind not in "fc":   # _differentiable, inlined: one per op
            return out
        outs = (out,)
    if len(args) == 1:   # edge_of, inlined: one call per recorded op
        a = args[0]
        edges = ((a.grad_fn, a._output_nr) if a.grad_fn is not None else
                 ((a, 0) if a._requires_grad else None),)
    elif len(args) == 2:
        a, b = args
        edges = ((a.grad_fn, a._output_nr) if a.grad_fn is not None else
                 ((a, 0) if a._requires_grad else None),
                 (b.grad_fn, b._output_nr) if b.grad_fn is not None else
                 ((b, 0) if b._requires_grad else None))
    else:
        edges = tuple(map(edge_of, args))
    if prim.multiple_results or prim.vjp_context is not None:
        record(prim, params, edges, args, out, outs)
    else:   # record, inlined for the one differentiable output
        out.grad_fn = node = Node(prim, params, args, _value_of(out) if (
            _READS_OUT.get(prim) if prim in _READS_OUT else _reads_out(prim)) else _UNREAD, edges)
        node.own_out = True
        out._requires_grad = True
    return out


# Note [A node keeps its output's value, not the output]
# A node's VJP rule may read the forward result (exp, tanh, sigmoid). Keeping the output
# Tensor itself in `node.out` would make a reference cycle (out.grad_fn is the node), and
# every graph that backward does not free (autograd.grad(create_graph=True), which retains
# it; nodes no cotangent reached; forward passes never differentiated), arrays included,
# would wait for Python's cycle collector: after one run of MAML classic
# (benchmarks/transforms.py) gc.collect() found 50,592 unreachable objects before this,
# none after. (The collector's time is another matter: with gc on, that run takes about
# 30% more CPU either way, as the collector traverses the live graph's objects; the
# benchmarks time with gc off, for both frameworks.) So an eager node keeps a tensor that shares the output's value and version
# counter but has no grad_fn (`_value_of`), as PyTorch's SavedVariable keeps an output
# without its grad_fn, and `own_out` says so. Under create_graph, where the rule's use of
# the output must be differentiated, the engine hands the rule a fresh tensor with the
# node as grad_fn (`_live_output`, PyTorch's unpack): the new nodes keep that tensor, it
# keeps the node, and nothing keeps them back. A rule that never reads its output (no
# "out" in its `vjp_needs`: add, mul, dot_general, select, most of MAML's nodes) gets
# `_UNREAD` instead, which it must not touch, not even for a shape (the rules read shapes
# from their inputs): no second Tensor is made per recorded op for nothing (about 6,000
# per call of the classic MAML benchmark), and any rule that reads it anyway raises an
# internal error naming what it read. Nodes with several outputs or a custom
# context (autograd.Function, AOT regions), and the nodes of func.grad (which keep
# lower-level tensors), keep `out` as it is.

def _value_of(out):
    """A Tensor with ``out``'s payload and version counter, without its autograd links."""
    return wrap_sharing(out._data, out._version_counter)


class _Unread:
    """The output an eager node keeps for a rule that does not read it (Note [A node keeps
    its output's value, not the output]): any use raises."""

    __slots__ = ()

    def __getattr__(self, name):
        raise RuntimeError(f"internal error: a vjp rule read .{name} of its output, which its "
                           "primitive's vjp_needs says it never reads (Note [What backward "
                           "reads]); add 'out' to its vjp_needs")

    def __repr__(self):
        return "<output not kept>"


_UNREAD = _Unread()


def _reads_out(prim):
    """Whether ``prim``'s vjp rule may compute with its output (Note [What backward reads]);
    a rule that does not gets `_UNREAD` in its place."""
    needs = prim.vjp_needs
    reads = needs is None or prim.vjp_context is not None or any(
        isinstance(e, str) for n in needs for e in n)
    _READS_OUT[prim] = reads
    return reads


_READS_OUT: dict = {}   # prim -> _reads_out(prim)


def _live_output(node, value):
    """``node``'s output again, with ``node`` as its grad_fn (for rules under create_graph)."""
    t = wrap_sharing(value._data, value._version_counter)
    t.grad_fn = node
    t._requires_grad = True
    return t


_prim.autograd_bind = autograd_bind


# Note [Broadcasting operands under autograd]
# Primitives are strict (one shape for all operands), so `a + bias` is, in general,
# `add(a, broadcast_in_dim(bias))`: two recorded nodes, and in backward a third engine
# step for the broadcast's transpose. Eager autograd records it as one node instead, as
# PyTorch does (AddBackward0's next function is bias's AccumulateGrad; PyTorch's engine
# sums a gradient over the broadcast dimensions in `validate_outputs`). The node saves the
# strict operands the primitive's rule expects (broadcast views of the originals) and has
# edges to the originals; `sum_to[i]`, for an operand that was broadcast and needs a
# gradient, is (stand-in of the original, the broadcast's params), and the engine sends
# the rule's cotangent through `broadcast_in_dim`'s own vjp (`record_node`'s caller
# passes it) before the shape check and post hooks. Values are the same as the two-node
# graph's; grad of grad works as before, because the sum is bound like any op.
# The ops layer takes this path only in eager mode, and only when the rule reads no
# broadcast operand that needs a gradient (add, sub; mul when only the broadcast operand
# needs one): a rule reading one would compute with a view outside the graph, and under
# create_graph the gradient through it would be lost. A broadcast view shares the
# original's version counter, so an in-place write to it is still caught.

def record_node(prim, saved, edges, out, sum_to=None, params=None):
    """Record one Node for ``out = prim(*saved, **params)`` (no params by default), a
    primitive's single result that an eager fast path of the ops layer computed itself
    (``params`` is kept by the node: a dict its caller never writes); ``edges`` lead to
    where the operands' gradients go. Where ``saved[i]`` is a broadcast view of the
    operand (Note [Broadcasting operands under autograd]), ``sum_to[i]`` is (the
    broadcast's vjp rule, the operand, the broadcast's params); ``sum_to`` is None when
    no operand needing a gradient was broadcast."""
    node = Node(prim, _NO_PARAMS if params is None else params, saved, _value_of(out) if (
        _READS_OUT.get(prim) if prim in _READS_OUT else _reads_out(prim)) else _UNREAD, edges)
    node.own_out = True   # Note [A node keeps its output's value, not the output]
    if sum_to is not None:
        for i, entry in enumerate(sum_to):
            if entry is not None:   # the original's shape, not its memory
                sum_to[i] = (entry[0], stand_in(entry[1]), entry[2])
        node.sum_to = sum_to
    out.grad_fn = node
    out._requires_grad = True
    return out


_NO_PARAMS: dict = {}   # shared, never written: the params of a parameterless primitive


def _summed_to_inputs(sum_to, in_cts, saved):
    """(cotangents, shape-carrying primals) of a node recorded by `record_node`:
    each broadcast operand's cotangent summed back to its shape, lazily (Note [Lazy
    cotangents]): autograd.grad may not need it."""
    in_cts, primals = list(in_cts), list(saved)
    for i, entry in enumerate(sum_to):
        if entry is not None and in_cts[i] is not None:
            primals[i] = entry[1]
            in_cts[i] = functools.partial(_sum_to, in_cts[i], entry)
    return in_cts, primals


def _sum_to(ct, entry):
    if ct.__class__ is not Tensor:
        ct = ct()
    vjp, original, params = entry
    return vjp(ct, None, original, **params)[0]


_prim.record_node = record_node


# ---------------------------------------------------------------------------------------
# The backward engine.

def run_backward(roots, grads, *, retain_graph=False, create_graph=False, inputs=None,
                 accumulate=True, allow_unused=False):
    """Propagate ``grads`` from ``roots`` back through the graph.

    With ``accumulate`` the leaves' ``.grad`` fields receive their gradients (``backward``);
    otherwise the gradients of ``inputs`` are returned (``autograd.grad``).
    """
    prev_mode = _prim.grad_mode[0]
    _prim.grad_mode[0] = bool(create_graph)
    try:
        result = _run_backward(roots, grads, retain_graph, create_graph, inputs, accumulate,
                               allow_unused)
    except BaseException:
        _queued_callbacks.clear()
        raise
    finally:
        _prim.grad_mode[0] = prev_mode
    if _queued_callbacks:
        _run_queued_callbacks()
    return result


def _run_backward(roots, grads, retain_graph, create_graph, inputs, accumulate, allow_unused):
    buffers = {}          # node -> list of cotangents per output
    leaf_grads = {}       # id(leaf) -> (leaf, cotangent)
    root_nodes = []
    for r, g in zip(roots, grads):
        e = edge_of(r)
        if e is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not "
                               "have a grad_fn")
        node, nr = e
        if node.__class__ is Node:
            buf = buffers.get(node)
            if buf is None:
                buf = buffers[node] = [None] * _n_outputs(node)
            buf[nr] = _add(buf[nr], g)
            root_nodes.append(node)
        else:
            leaf_grads[id(node)] = (node, _add(leaf_grads.get(id(node), (None, None))[1], g))

    targets = None
    captured = None
    if inputs is not None:
        targets = [edge_of(t) for t in inputs]
        for t, e in zip(inputs, targets):
            if e is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
        captured = {}
    needed, capture_only = (None, ()) if accumulate else _reaching(root_nodes, targets)
    target_nodes = {(id(e[0]), e[1]): i for i, e in enumerate(targets)} if targets else {}
    # Note [Execution order]: a heap of the nodes holding cotangents, newest first.
    heap = [(-n.seq, n) for n in buffers if needed is None or n in needed]
    heapq.heapify(heap)
    # Note [Post-accumulate-grad hooks]: leaves with hooks are finalized early.
    order = early = None
    if accumulate and _leaf_hooks_live[0]:
        order = sorted(_walk(root_nodes), key=_seq_of)   # popped from the end: newest first
        early = _last_uses(reversed(order))
    owned = set()
    # Leaves that receive gradients: all of them for .backward(), else only the targets.
    leaf_ids = None if needed is None else {id(e[0]) for e in targets}

    # Note [The backward loop]
    # This loop runs once per node (about 10,000 times in one run of the classic MAML
    # benchmark), so Node.apply is inlined (the version check reads each checked value's
    # counter directly, nothing for most nodes; apply raises PyTorch's errors when something
    # is wrong), a node that holds a target is found by one set lookup, a single-output
    # consumer's buffer is made holding its first cotangent, the heap is popped in the loop
    # itself (a generator's step costs more than the pop), and a rule of one or two primals
    # without params is called without building an argument tuple and dict.
    target_set = {e[0] for e in targets if e[0].__class__ is Node} if targets else ()
    while True:   # the heap popped here, not by a generator: a generator's step costs more
        if order is None:
            if not heap:
                break
            node = heappop(heap)[1]
        elif order:
            node = order.pop()
        else:
            break
        buf = buffers.pop(node, None)
        if buf is None:   # only in `early`'s order, which lists every reachable node
            if node in early:
                _finish_leaves(early.pop(node), leaf_grads, create_graph, owned)
            continue
        if node.pre_hooks:
            for nr, hooks in node.pre_hooks.items():
                if buf[nr] is not None:
                    buf[nr] = _run_hooks(hooks, buf[nr])
        if node in target_set:
            for nr in range(len(buf)):
                i = target_nodes.get((id(node), nr))
                if i is not None:
                    captured[i] = _add(captured.get(i), buf[nr])
            if node in capture_only:
                continue   # as in PyTorch, a target's own node runs (and is freed) only if
                #            it leads to another target (Note [Execution order])
        prim = node.prim
        saved = node.saved
        if saved is None:
            node.apply(buf)   # raises: freed by an earlier backward
        checked = node.checked
        if checked:   # most check one or two values: no zip for them
            versions = node.versions
            if checked[0]._version_counter.value != versions[0] or len(checked) > 1 and (
                    checked[1]._version_counter.value != versions[1] or len(checked) > 2):
                for kept, version in zip(checked, versions):
                    if kept._version_counter.value != version:
                        node.apply(buf)   # raises: modified in place
        if prim.multiple_results:
            in_cts = prim.vjp(tuple([b if b is not None else _zeros_like(o)
                                     for b, o in zip(buf, node.out)]),
                              node.out, *saved, **node.params)
        elif create_graph and node.own_out and (
                _READS_OUT.get(prim) if prim in _READS_OUT else _reads_out(prim)):
            # Note [A node keeps its output's value, not the output]
            in_cts = prim.vjp(buf[0], _live_output(node, node.out), *saved, **node.params)
        elif node.params or len(saved) > 2:
            in_cts = prim.vjp(buf[0], node.out, *saved, **node.params)
        elif len(saved) == 2:   # add, sub, mul, div: a plain call, no argument tuple or dict
            in_cts = prim.vjp(buf[0], node.out, saved[0], saved[1])
        else:
            in_cts = prim.vjp(buf[0], node.out, *saved)
        primals = saved
        if node.sum_to is not None:   # Note [Broadcasting operands under autograd]
            in_cts, primals = _summed_to_inputs(node.sum_to, in_cts, saved)
        if node.post_hooks:   # hooks see tensors: None where no gradient flows, no lazy entries
            in_cts = [None if e is None or ct is None else ct if ct.__class__ is Tensor else ct()
                      for e, ct in zip(node.next_edges, in_cts)]
            for h in node.post_hooks:
                h(in_cts, buf)
        for e, ct, primal in zip(node.next_edges, in_cts, primals):
            if e is None or ct is None:
                continue
            target, nr = e
            is_node = target.__class__ is Node
            if needed is not None and (target not in needed if is_node else
                                       id(target) not in leaf_ids):
                continue   # cannot reach what autograd.grad asked for (Note [Execution order])
            if ct.__class__ is not Tensor:   # Note [Lazy cotangents]
                ct = ct()
            if ct._data.shape != primal._data.shape:
                raise RuntimeError(
                    f"internal error: the vjp rule of {node.prim.name} returned a cotangent of "
                    f"shape {tuple(ct.shape)} for an input of shape {tuple(primal.shape)}")
            if is_node:
                b = buffers.get(target)
                if b is not None:
                    prev = b[nr]
                    b[nr] = ct if prev is None else _ops_add(prev, ct)
                else:
                    if target.prim.multiple_results:
                        b = buffers[target] = [None] * _n_outputs(target)
                        b[nr] = ct
                    else:
                        buffers[target] = [ct]
                    heappush(heap, (-target.seq, target))   # Note [Execution order]
            else:
                prev = leaf_grads.get(id(target))
                leaf_grads[id(target)] = (target, ct if prev is None else _add(prev[1], ct))
        if not retain_graph:
            node.saved = node.checked = node.out = None   # Node.release, inlined
        if early and node in early:
            _finish_leaves(early.pop(node), leaf_grads, create_graph, owned)

    if accumulate:
        for leaf, g in leaf_grads.values():
            _accumulate(leaf, g, create_graph, owned)
        return None

    results = []
    for i, (t, e) in enumerate(zip(inputs, targets)):
        if e[0].__class__ is Node:
            g = captured.get(i)
        else:
            g = leaf_grads.get(id(t), (None, None))[1]
            if g is not None and t._hooks:
                g = _run_hooks(t._hooks, g)
        if g is None and not allow_unused:
            raise RuntimeError("One of the differentiated Tensors appears to not have been "
                               "used in the graph. Set allow_unused=True if this is the "
                               "desired behavior.")
        if g is not None and not create_graph:
            g = g.detach()
        results.append(g)
    return tuple(results)


def _n_outputs(node):
    if node.out is None:     # released by an earlier backward: apply raises PyTorch's error
        node.apply(None)
    return len(node.out) if node.prim.multiple_results else 1


def _zeros_like(t):
    return _ops_zeros_like(t)


from ._order import _last_uses, _reaching, _seq_of, _walk  # noqa: E402,F401 - they read Node
