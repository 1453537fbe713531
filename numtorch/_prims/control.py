"""Control-flow primitives: ``graph_call``, a traced `Graph` called as one unit.

``graph_call(*inputs, graph=g)`` is a higher-order primitive (JAX's ``xla_call``, the
primitive behind ``jit``; Autodidax builds the same thing): its one param is a closed
`Graph` (no captured constants, tensor outputs only; ``Graph.closed``), hashable by
identity. Its rules work on whole graphs (Note [Region rules]), so a compiled region stays
one node under grad, jvp, vmap and tracing at any depth. ``Graph.__call__`` binds it
(Note [Calling a graph] in ``_core/ir.py``). This module owns the primitive and every rule
of it; it must not know any backend: a backend attaches ``graph.compiled`` and ``impl``
runs that.
"""
from __future__ import annotations

import numpy as np

from .._core import ir as _ir
from .._core import primitive as _prim
from .._core.primitive import Primitive, bind
from .._core.runner import runner
from .._core.tensor import wrap_array as _wrap_array

# Note [Region rules]
# Each rule traces a new graph from the region's graph with the ordinary transforms and
# binds `graph_call` again on it; the new graph is cached on the region's graph, keyed by
# the rule and what the traced program depends on:
#   jvp    which inputs have a (nonzero) tangent, and the tangents' dtypes. The graph
#          takes (primals, those tangents) and returns (outputs, the tangents that are not
#          zero); which outputs have one is recorded with it.
#   vjp    which inputs are floating, and the cotangents' dtypes. The graph is the backward
#          program: it takes (primals, output cotangents) and returns the cotangents of the
#          floating inputs, by `func.vjp` of the inlined region. It recomputes the forward
#          inside; a compiled region under a grad level runs its min-cut partition
#          instead (Note [Compiled regions under grad], numtorch/_aot/function.py).
#          Reverse mode records one tape node for the region (Note [One reverse mode]);
#          under an outer grad level the backward region is itself differentiated the
#          same way, so grad(grad(region)) is a region of a region's backward.
#   batch  the batch dims and the batched inputs' shapes (the batch size). The graph is
#          `vmap` of the inlined region with those in_dims and every output at dim 0.
# Tracing runs the rules of the region's primitives once per key; each later call costs
# one bind. A transformed graph is itself a region, so its own rules apply under further
# transforms (jacfwd(jacrev(region)) is a batch of a jvp of a vjp graph).

# Note [Transformed regions stay compiled]
# A backend that compiles a region for one use may leave its compiler on the region,
# `region.cache["compiler"]`: a function from a closed `Graph` to a callable on its input
# arrays returning a tuple of arrays (AOT autograd's compilers, numtorch/_aot/function.py).
# `impl` then runs the region through it (compiled at its first run, not before: most
# regions are never transformed), and every graph a rule derives from the region inherits
# the compiler (`_make_graph`), so grad, vmap and jvp of a compiled function run compiled
# graphs at any depth, as JAX's jit does. A region without one runs on the fast runner.

graph_call = Primitive("graph_call", multiple_results=True)


def _impl(*arrays, graph):
    run = graph._compiled
    if run is None:
        run = graph.cache.get("runner")
        if run is None:
            compiler = graph.cache.get("compiler")   # Note [Transformed regions stay compiled]
            run = graph.cache["runner"] = runner(graph) if compiler is None else compiler(graph)
    return run(*arrays)


def _shape(*avals, graph):
    if len(avals) != len(graph.inputs):
        raise TypeError(f"graph_call: the graph {graph.name} takes {len(graph.inputs)} inputs, "
                        f"got {len(avals)}")
    return tuple((v.shape, v.dtype) for v in graph.outputs)


def _derived(graph, key, build):
    """The transformed graph for ``key``, traced once (Note [Region rules])."""
    d = graph.cache.get(key)
    if d is None:
        d = graph.cache[key] = build()
    return d


def _make_graph(f, args, name, parent):
    """``f`` traced on ``args`` as a closed region derived from region ``parent``, whose
    compiler it inherits (Note [Transformed regions stay compiled])."""
    from ..func._trace import make_graph
    closed = make_graph(f, name=name)(*args).closed()
    compiler = parent.cache.get("compiler")
    if compiler is not None:
        closed[0].cache["compiler"] = compiler
    return closed


def _call(derived, args):
    region, consts, _ = derived
    return bind(graph_call, *consts, *args, graph=region)


def _jvp(primals, tangents, *, graph):
    nonzero = tuple(i for i, t in enumerate(tangents) if t is not None)
    n_out = len(graph.outputs)

    def build():
        from .._core.primitive import pop, push
        from .._core.tensor import wrap
        from ..func._jvp import JvpInterpreter, JvpTracer
        has_tangent = []

        def jvp_of_region(*args):
            values = list(args[:len(primals)])
            interp = push(JvpInterpreter())
            try:
                for i, t in zip(nonzero, args[len(primals):]):
                    values[i] = wrap(JvpTracer(interp, values[i], t))
                outs = graph.inline(*values)
                out_p, out_t = [], []
                for o in outs:
                    mine = interp.mine(o)
                    out_p.append(o._data.primal if mine else o)
                    has_tangent.append(mine)
                    if mine:
                        out_t.append(o._data.tangent)
            finally:
                pop(interp)
            return (*out_p, *out_t)
        traced = _make_graph(jvp_of_region, (*primals, *(tangents[i] for i in nonzero)),
                             f"{graph.name}_jvp", graph)
        return traced, tuple(has_tangent)
    key = ("jvp", nonzero, tuple(tangents[i]._data.dtype for i in nonzero))
    derived, has_tangent = _derived(graph, key, build)
    res = _call(derived, (*primals, *(tangents[i] for i in nonzero)))
    it = iter(res[n_out:])
    return res[:n_out], tuple(next(it) if h else None for h in has_tangent)


def _vjp(cts, out, *primals, graph):
    floats = tuple(i for i, p in enumerate(primals) if p._data.dtype.kind in "fc")
    if not floats:
        return (None,) * len(primals)

    def build():
        from ..func._grad import vjp

        def backward_of_region(*args):
            values, cotangents = list(args[:len(primals)]), args[len(primals):]

            def region(*xs):
                for i, x in zip(floats, xs):
                    values[i] = x
                return graph.inline(*values)
            _, vjp_fn = vjp(region, *(values[i] for i in floats))
            return vjp_fn(tuple(cotangents))
        return _make_graph(backward_of_region, (*primals, *cts), f"{graph.name}_vjp", graph)
    derived = _derived(graph, ("vjp", floats, tuple(c._data.dtype for c in cts)), build)
    res = iter(_call(derived, (*primals, *cts)))
    in_cts = [None] * len(primals)
    for i in floats:
        in_cts[i] = next(res)
    return tuple(in_cts)


def _batch(values, bdims, *, graph):
    shapes = tuple(tuple(v.shape) if d is not None else None for v, d in zip(values, bdims))

    def build():
        from ..func._vmap import vmap

        def batched_region(*args):
            return vmap(graph.inline, in_dims=tuple(bdims), out_dims=0)(*args)
        return _make_graph(batched_region, values, f"{graph.name}_batch", graph)
    derived = _derived(graph, ("batch", tuple(bdims), shapes), build)
    outs = _call(derived, values)
    return outs, (0,) * len(outs)


graph_call.impl, graph_call.shape = _impl, _shape
graph_call.jvp, graph_call.vjp, graph_call.batch = _jvp, _vjp, _batch


# ---------------------------------------------------------------------------------------
# Calling a graph as a region (installed as `Graph.__call__`'s way, Note [Calling a graph])

def call_graph(graph, args):
    """Run ``graph`` on the tensors ``args`` as one ``graph_call``; returns its outputs."""
    closed = graph._closed or graph.closed()
    region, consts, positions = closed
    flags = region.cache.get("flags") or _flags(region)
    if flags[0] or (flags[1] and _prim.STACK):
        # Effects are not a pure region; nor is a node whose rules only run eagerly (a
        # classic forward(ctx, ...) autograd.Function: Note [Classic ctx]), since a
        # region's rules transform it. A random draw must reach the active transform
        # (vmap's randomness policy) as it would eagerly; without a transform the region
        # is a pure function of its random states (Note [Graphs with random state]), so
        # eager autograd's backward of it recomputes the same draws.
        return graph.inline(*args)
    outs = bind(graph_call, *consts, *args, graph=region)
    if region is graph:
        return outs
    result = list(graph.outputs)
    for i, o in zip(positions, outs):
        result[i] = o
    return tuple(result)


def _flags(region):
    """(not a pure region: it writes an operand or holds an eager-only node, draws random
    numbers), cached on ``region``."""
    flags = region.cache["flags"] = (region.has_effects() or any(
        getattr(p, "eager_only", False) for n in region.nodes for p in n.params.values()),
        _draws(region))
    return flags


# Note [Direct region calls]
# Outside every transform and with no input that autograd records (none requires grad, or
# grad mode is off), `graph(*args)` ends in `graph_call`'s impl: the runner on the inputs'
# arrays. The path there (Graph.__call__'s checks, call_graph, bind's scan of the operands,
# eval_bind) costs about 2 µs a call, as much as a small graph's whole run, and a compiled
# function with breaks (the FAQ's toy_example) calls three graphs. `direct_caller` returns
# a function that takes that case straight to the runner, with the same input check and the
# same output wrapping (wrap_array, as eval_bind), and hands every other case (a transform
# active, an input or a captured constant to differentiate, a meta or traced payload, a
# wrong input, which the slow path reports) to `graph(*args)`. A graph that is not a pure
# region (writes, eager-only nodes) or has symbolic sizes always takes `graph(*args)`.
def direct_caller(graph):
    """A function equal to ``graph(*args)`` that skips ``bind`` when nothing needs it
    (Note [Direct region calls])."""
    if graph.shape_env is not None:
        return graph.__call__
    region, consts, positions = graph._closed or graph.closed()
    if (region.cache.get("flags") or _flags(region))[0]:
        return graph.__call__
    types = tuple((v.shape, v.dtype) for v in graph.inputs)
    n_in, whole, outputs = len(types), region is graph, graph.outputs
    stack, grad_mode, ndarray, wrap_array = _prim.STACK, _prim.grad_mode, np.ndarray, _wrap_array

    def call(*args):
        if stack or len(args) != n_in:
            return graph(*args)
        grad = grad_mode[0]
        arrays = []
        for c in consts:   # read per call (Note [Captured tensors are read per call])
            d = c._data
            if d.__class__ is not ndarray or (grad and c._requires_grad):
                return graph(*args)
            arrays.append(d)
        for a, (shape, dtype) in zip(args, types):
            d = getattr(a, "_data", None)
            if d.__class__ is not ndarray or d.shape != shape or d.dtype != dtype or \
                    (grad and a._requires_grad):
                return graph(*args)
            arrays.append(d)
        run = region._compiled
        if run is None:
            run = region.cache.get("runner")
            if run is None:
                run = region.cache["runner"] = runner(region)
        outs = run(*arrays)
        if whole:
            return tuple([wrap_array(o) for o in outs])
        result = list(outputs)
        for i, o in zip(positions, outs):
            result[i] = wrap_array(o)
        return tuple(result)
    return call


def _draws(graph):
    """Whether ``graph`` (or a region it calls) draws random numbers."""
    return any(n.prim.draws or any(isinstance(p, _ir.Graph) and _draws(p)
                                   for p in n.params.values()) for n in graph.nodes)


_ir._call_region = call_graph

# Lower rule (Note [Lower rules], _lower.py)
from ._lower import extern  # noqa: E402

graph_call.lower = extern("a region runs its own graph (inlining it into the caller's kernels is not built)")
