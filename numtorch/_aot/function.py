"""Running a partitioned forward/backward pair as one node of the eager autograd graph.

``aot_function(graph, compiler)`` returns the callable a backend hands to capture: called
on the graph's inputs, it runs ``compiler``'s forward when no input needs a gradient,
and otherwise binds ``aot_call``, a primitive whose impl runs the compiled forward of the
partition for that pattern of inputs needing grad and whose VJP runs the compiled
backward (Note [One node per compiled region]). Under a transform (grad, vmap, tracing)
it calls the graph's ``graph_call`` region instead, whose rules transform the graph
(Note [Region rules]). This module owns that runtime; the joint graph and the cut are
``partition.py``'s.
"""
from __future__ import annotations

import numpy as np

from .._core import primitive as _prim
from .._core.primitive import Primitive, bind
from .._core.tensor import wrap_array
from .partition import joint_graph, partition

# Note [One node per compiled region]
# PyTorch wraps each compiled forward/backward pair in an autograd.Function, so
# `loss.backward()` runs the eager engine, which runs a compiled backward as one
# operation (the FAQ's training answer). Here the pair is the params of one primitive,
# `aot_call` (an `AotPair`, hashed by identity):
#   impl    runs the compiled forward on arrays: the outputs, then the saved activations;
#   shape   the outputs' and saved values' types;
#   vjp     runs the compiled backward on (saved inputs, saved activations, cotangents).
# Eager autograd records it like any primitive (`autograd_bind`); the engine's
# `vjp_context` hook then moves the saved activations out of the node's outputs into
# `node.saved` after the primal inputs, so they get no grad_fn, are released with the
# node after backward (retain_graph=False), and no cotangent is made for them. The node's
# version check covers the primal inputs the backward reads, as eager autograd's does.
# The compiled backward does not record anything: with create_graph=True (double
# backward) or under a transform the vjp instead differentiates the region's graph with
# `graph_call`'s own vjp rule, whose result an outer level differentiates again.


class AotPair:
    """The partition of one region for one pattern of inputs needing grad, compiled."""

    __slots__ = ("region", "needs_grad", "partition", "forward", "backward", "n_in",
                 "diff_outputs", "out_types", "requires_grad", "__weakref__")

    def __init__(self, region, needs_grad, compiler):
        self.region, self.needs_grad = region, needs_grad
        self.n_in = len(region.inputs)
        self.diff_outputs = tuple(j for j, o in enumerate(region.outputs) if o.dtype.kind in "fc")
        joint = joint_graph(region, needs_grad)
        self.partition = p = partition(joint, self.n_in, len(region.outputs))
        self.forward = compiler(p.forward)
        self.backward = compiler(p.backward)
        self.out_types = tuple((v.shape, v.dtype) for v in p.forward.outputs)
        # which outputs get a grad_fn: floating ones computed from an input needing grad
        dep = {id(v) for v, need in zip(region.inputs, needs_grad) if need}
        for node in region.nodes:
            if any(id(v) in dep for v in node.ins):
                dep.update(id(o) for o in node.outs)
        self.requires_grad = tuple(j in self.diff_outputs and id(o) in dep
                                   for j, o in enumerate(region.outputs))

    def __repr__(self):
        return f"AotPair({self.region.name}, {self.partition!r})"


def _impl(*arrays, pair):
    return pair.forward(*arrays)


def _shape(*avals, pair):
    return pair.out_types


def _vjp(cts, out, *saved, pair):
    primals, activations = saved[:pair.n_in], saved[pair.n_in:]
    cts = [cts[j] for j in pair.diff_outputs]
    args = [primals[i] for i in pair.partition.saved_inputs] + list(activations) + cts
    if _prim.grad_mode[0] or _prim.STACK or any(a._data.__class__ is not np.ndarray for a in args):
        # create_graph or a transform: differentiate the region (Note [One node per
        # compiled region]); it needs all output cotangents, zeros for integer outputs.
        from .._ops.creation import zeros_like
        from .._prims.control import graph_call
        full = [zeros_like(o) for o in out]
        for j, c in zip(pair.diff_outputs, cts):
            full[j] = c
        return graph_call.vjp(tuple(full), out, *primals, graph=pair.region)
    grads = iter(pair.backward(*[a._data for a in args]))
    return tuple(wrap_array(next(grads)) if need else None for need in pair.needs_grad)


def _vjp_context(node, outs):
    pair = node.params["pair"]
    n_out = len(pair.region.outputs)
    primals = node.saved
    node.saved = (*primals, *node.out[n_out:])
    node.out = node.out[:n_out]
    node.checked = [primals[i] for i in pair.partition.saved_inputs]
    node.versions = [t._version_counter.value for t in node.checked]
    node.metadata = {"name": "CompiledFunctionBackward"}
    return [o if r else None for o, r in zip(outs, pair.requires_grad)] + \
        [None] * (len(outs) - n_out)


aot_call = Primitive("aot_call", impl=_impl, shape=_shape, vjp=_vjp, multiple_results=True,
                     register=False)
# Not in ALL_PRIMITIVES: it is bound only on concrete eager tensors (transforms reach the
# region's graph_call instead), so it has no jvp or batch rule; the OpInfo grad(compile)
# column exercises it.
aot_call.vjp_needs = ()          # the version check is set up by _vjp_context
aot_call.vjp_context = _vjp_context


def aot_function(graph, compiler, *, inference=None):
    """The callable that runs ``graph`` (a captured `Graph`) through AOT autograd.

    ``compiler(g)`` compiles a `Graph` ``g`` (its captured constants bound) into a
    function of ``g``'s input arrays returning a tuple of arrays; it compiles the
    forward and the backward of each partition. ``inference(*tensors)``, if given, runs
    the graph when no input needs a gradient (default: ``compiler(graph)``'s function).
    The callable takes the graph's inputs and returns the tuple of its outputs. A graph
    with symbolic sizes is partitioned per concrete sizes (its ``for_sizes`` copy).
    """
    if graph.shape_env is not None:
        return _per_sizes(graph, compiler, inference)
    from .repro import checked_compiler, repro_after
    if repro_after() == "aot":      # the accuracy minifier (repro.py)
        compiler = checked_compiler(compiler)
    region, consts, positions = graph.closed()
    consts = tuple(_materialized(c) for c in consts)
    # under a transform the region's rules derive graphs: they run through ``compiler``
    # too (Note [Transformed regions stay compiled] in _prims/control.py)
    region.cache["compiler"] = compiler
    pairs = {}
    run_inference = None
    # A graph that writes an operand (Note [Effects]) or holds a node whose rules only run
    # eagerly (a classic autograd.Function) is no pure region: with inputs needing grad it
    # runs node by node under eager autograd (not compiled; functionalizing it is not built).
    pure = not region.has_effects() and not any(
        getattr(p, "eager_only", False) for n in region.nodes for p in n.params.values())

    def run(*inputs):
        nonlocal run_inference
        args = (*consts, *inputs)
        needs, concrete = [], True
        record = _prim.grad_mode[0]
        for a in args:
            d = a._data
            if d.__class__ is not np.ndarray:
                concrete = False
                break
            needs.append(record and a._requires_grad and d.dtype.kind in "fc")
        if not concrete or _prim.STACK:
            return graph(*inputs)       # a transform: the region's rules (Note [Region rules])
        if not any(needs):
            if inference is not None:
                return inference(*inputs)
            if not pure:
                return graph(*inputs)   # its writes run node by node (the runner is for pure graphs)
            if run_inference is None:
                run_inference = _on_tensors(compiler(graph))
            return run_inference(*inputs)
        if not pure:
            return graph(*inputs)
        key = tuple(needs)
        pair = pairs.get(key)
        if pair is None:
            pair = pairs[key] = AotPair(region, key, compiler)
        outs = bind(aot_call, *args, pair=pair)
        outs = outs[:len(region.outputs)]
        if len(positions) == len(graph.outputs):
            return outs
        result = list(graph.outputs)
        for i, o in zip(positions, outs):
            result[i] = o
        return tuple(result)
    run.pairs = pairs
    return run


# Note [Broadcast constants]
# Capture turns Python scalars of an expression into constant tensors broadcast to the
# operand's shape (relu's `x <= 0` compares with zeros(128, 512) of strides (0, 0)). In the
# closed region they become inputs of the compiled forward and backward, and the
# inductor's runner made each one contiguous on every call: 13 copies, 1.5 MB per step of
# the MLP SGD step. They are materialized once here instead. Only a constant with all
# strides 0 that needs no gradient is copied: it holds a single value that capture made
# from a Python scalar, no parameter or buffer, so the copy cannot miss an update the way
# a copied parameter would (Note [Captured tensors are read per call] in the inductor).


def _materialized(t):
    d = t._data
    if d.__class__ is np.ndarray and d.ndim and d.size > 1 and not any(d.strides) \
            and not t._requires_grad:
        return wrap_array(np.ascontiguousarray(d))
    return t


def _per_sizes(graph, compiler, inference):
    by_sizes = {}

    def run(*inputs):
        key = tuple(t.shape for t in inputs)
        fn = by_sizes.get(key)
        if fn is None:
            if len(by_sizes) > 64:
                by_sizes.clear()
            concrete = graph.for_sizes(inputs)
            fn = by_sizes[key] = aot_function(concrete, compiler, inference=inference)
        return fn(*inputs)
    run.pairs = {}
    return run


def tensor_compiler(compile_graph):
    """A compiler on arrays (`aot_function`'s ``compiler``) from ``compile_graph(g)``, a
    backend's compiler returning a function of ``g``'s input tensors (the inductor's)."""
    def compiler(graph):
        fn = compile_graph(graph)

        def run(*arrays):
            return tuple(t._data for t in fn(*[wrap_array(a) for a in arrays]))
        run.compiled = fn
        return run
    return compiler


def _on_tensors(fn):
    def run(*tensors):
        return tuple(wrap_array(a) for a in fn(*[t._data for t in tensors]))
    return run


def runner_compiler(graph):
    """``aot_eager``'s compiler: the generated Python runner over the primitives' impls
    (no code generation beyond it), a function of the graph's input arrays."""
    from .._core.runner import runner
    return runner(graph)
