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

    __slots__ = ("region", "needs_grad", "partition", "forward", "backward", "forward_graph",
                 "backward_graph", "n_in",
                 "diff_outputs", "out_types", "requires_grad", "__weakref__")

    def __init__(self, region, needs_grad, compiler, broadcasts=None):
        self.region, self.needs_grad = region, needs_grad
        self.n_in = len(region.inputs)
        self.diff_outputs = tuple(j for j, o in enumerate(region.outputs) if o.dtype.kind in "fc")
        self.partition = p = partition_of(region, needs_grad)
        broadcasts = broadcasts or {}           # Note [Broadcast constants]
        self.forward_graph = _reading_constants(p.forward, broadcasts)
        self.backward_graph = _reading_constants(p.backward, {
            j: broadcasts[i] for j, i in enumerate(p.saved_inputs) if i in broadcasts})
        self.forward = compiler(self.forward_graph)
        self.backward = compiler(self.backward_graph)
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


def partition_of(region, needs_grad):
    """The min-cut `Partition` of the closed ``region`` for the pattern ``needs_grad``,
    computed once and cached on the region (eager autograd's `AotPair` and a grad level's
    `_Split` share it)."""
    key = ("partition", tuple(needs_grad))
    p = region.cache.get(key)
    if p is None:
        p = region.cache[key] = partition(joint_graph(region, needs_grad), len(region.inputs),
                                          len(region.outputs))
    return p


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
    broadcasts = {i: c for i, c in enumerate(consts) if _broadcast(c)}
    consts = tuple(wrap_array(np.ascontiguousarray(c._data)) if i in broadcasts else c
                   for i, c in enumerate(consts))
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
            pair = pairs[key] = AotPair(region, key, compiler, broadcasts)
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
# closed region they are inputs, and the inductor's runner made each one contiguous on
# every call: 13 copies, 1.5 MB per step of the MLP SGD step. Inside the compiled forward
# and backward they are constants again (``_reading_constants``): the kernels read their
# one value as a literal (Note [Literal constants], scheduler.py) instead of a contiguous
# array of it (two arrays of 10 x 64 x 128 zeros in the compiled ensemble's forward), and
# the graph passes see a constant where a pointwise node meets it (a relu's transposed
# operand can then sink into the product reading it, Note [Transposes sink to products],
# _inductor/layout.py). The inputs stay in the signatures, unread, and are passed a
# contiguous copy made once here (for the create_graph path, which differentiates the
# region on them). Only a constant with all strides 0 that needs no gradient counts: it
# holds a single value that capture made from a Python scalar, no parameter or buffer,
# so reading it as a literal cannot miss an update the way a frozen parameter would
# (Note [Captured tensors are read per call] in the inductor).


def _broadcast(t):
    d = t._data
    return d.__class__ is np.ndarray and d.ndim and d.size > 1 and not any(d.strides) \
        and not t._requires_grad


def _reading_constants(graph, values):
    """``graph`` reading ``values[i]`` (a tensor) as a constant wherever it read its input
    ``i``; the inputs stay, unread (Note [Broadcast constants])."""
    if not values:
        return graph
    from .._core.ir import Const, Graph, Node, Var
    env = {id(graph.inputs[i]): Const(f"bc{i}", t, literal=True) for i, t in values.items()}
    nodes = [Node(n.prim, [env.get(id(v), v) for v in n.ins], n.params, n.outs, n.where)
             for n in graph.nodes]
    outputs = [env.get(id(o), o) if isinstance(o, Var) else o for o in graph.outputs]
    return Graph(list(graph.inputs), nodes, outputs, list(graph.consts) + list(env.values()),
                 graph.in_tree, graph.out_tree, graph.name, shape_env=graph.shape_env,
                 rng=graph.rng)


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
        run = getattr(fn, "run_arrays", None)      # Note [Runners on arrays], the inductor's
        if run is None:
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


# ---------------------------------------------------------------------------------------
# Compiled regions under func.grad

# Note [Compiled regions under grad]
# Under `func.grad` (and vjp, jacrev) a compiled region used to be one node whose VJP rule
# is the region's `_vjp` graph (Note [Region rules]): the backward program with the whole
# forward recomputed inside, because a tape node sees only the region's inputs and outputs:
# grad of tanh(x @ w1) @ w2 (256x512, 512x512, 512x10) ran the large product three times,
# 9.2 ms of CPU against 3.9-5.1 ms eager; with the partition below, 4.4 ms. (For an
# elementwise f recomputing is cheap: grad(compile(sum(sin(z) * z))) on 8 x 50K was slow,
# 3.9 ms against eager's 3.0, for another reason, Note [No sincos] in build.py; it now
# takes 0.52 ms either way.) Now
# the grad level (`GradInterpreter.process`, func/_grad.py, asks `grad_of_region` for
# every `graph_call` it tracks) runs a compiled region as eager autograd runs one (Note
# [One node per compiled region]): the min-cut partition of the region for that pattern of
# inputs needing grad (partition.py), as two regions inheriting the region's compiler:
#   - the forward, (primals) -> (outputs, saved activations), bound one level down, where
#     it is an ordinary region: an outer vmap batches it, an outer grad differentiates it
#     (the activations included, by its own rules), tracing records it;
#   - the node this level records holds the primals and the activations, and its VJP rule
#     binds the backward region on (the saved primals, the activations, the cotangents),
#     again one level down, so an outer grad differentiates the backward (grad of grad).
# A region without a compiler (a traced graph called plainly) keeps the recomputing rule:
# its `_vjp` graph runs on the fast runner, where the partition would cost a trace and a
# min cut per region for little gain. The partition is computed once per region and
# pattern, and cached on the region.

class _Split:
    """A region's partition for one pattern of inputs needing grad, as two regions."""

    __slots__ = ("n_in", "needs", "n_out", "diff_outputs", "saved_inputs", "forward",
                 "backward", "__weakref__")

    def __init__(self, region, needs, compiler):
        self.n_in, self.needs, self.n_out = len(region.inputs), needs, len(region.outputs)
        self.diff_outputs = tuple(j for j, o in enumerate(region.outputs) if o.dtype.kind in "fc")
        p = partition_of(region, needs)
        self.saved_inputs = p.saved_inputs
        self.forward, self.backward = p.forward, p.backward
        for g in (p.forward, p.backward):
            g.closed()[0].cache["compiler"] = compiler   # Note [Transformed regions stay compiled]


def grad_of_region(interp, primals, edges, region):
    """The outputs (this grad level's tensors) of the compiled ``region`` called on the
    lower-level ``primals`` at grad level ``interp``, recorded as one node running the
    partitioned backward (Note [Compiled regions under grad]); None for a region without
    a compiler (the caller records its ordinary rule)."""
    compiler = region.cache.get("compiler")
    if compiler is None:
        return None
    needs = tuple(e is not None for e in edges)
    split = region.cache.get(("split", needs))
    if split is None:
        split = region.cache[("split", needs)] = _Split(region, needs, compiler)
    from .._prims.control import call_graph
    from ..autograd import engine
    from ..func._grad import GradTracer
    from .._core.tensor import wrap
    res = call_graph(split.forward, primals)
    outs, activations = tuple(res[:split.n_out]), tuple(res[split.n_out:])
    wrapped = tuple(wrap(GradTracer(interp, o)) for o in outs)
    engine.record(split_call, {"split": split}, edges, (*primals, *activations), outs, wrapped)
    return wrapped


def _split_vjp(cts, out, *saved, split):
    from .._prims.control import call_graph
    primals, activations = saved[:split.n_in], saved[split.n_in:]
    args = [primals[i] for i in split.saved_inputs] + list(activations) + \
        [cts[j] for j in split.diff_outputs]
    grads = iter(call_graph(split.backward, args))
    return tuple(next(grads) if need else None for need in split.needs)


def _split_context(node, outs):
    node.metadata = {"name": "CompiledFunctionBackward"}
    return outs


# The node a grad level records for a compiled region (Note [Compiled regions under
# grad]); never bound: its forward is the partition's forward region.
split_call = Primitive("compiled_region", vjp=_split_vjp, multiple_results=True,
                       register=False)
split_call.vjp_context = _split_context
