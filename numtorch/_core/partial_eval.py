"""Partial evaluation: split a `Graph` into what its known inputs determine and the rest.

``partial_eval(graph, known)`` is JAX's ``partial_eval_jaxpr``: the *known* graph runs every
node whose operands are all known (inputs marked known, captured constants, and values made
from them) and returns the known outputs plus the *residuals*, the known values the rest
reads; the *unknown* graph takes (residuals, unknown inputs) and computes the remaining
outputs. ``func.linearize`` splits its joint (primal, tangent) graph this way: the known
part is the primal program, run once; the unknown part is the linear tangent map, which
``bind_inputs`` closes over the residuals. AOT autograd's forward/backward partition is the
same split plus a choice of what to recompute (``_aot/partition.py``).

This module only rewrites graphs: it runs nothing and knows no particular primitive.
"""
from __future__ import annotations

from .ir import Const, Graph, Node, Var
from .passes import dce

# Note [Partial evaluation of effects and draws]
# A node is known when all its operands are, whatever its primitive: a write into a known
# input (Note [Effects]) happens when the known graph runs, once, as the traced function
# did it; a write into an unknown value stays in the unknown graph. Random states are
# inputs like any other (Note [Graphs with random state]): the caller marks the trailing
# state inputs known, draws then land in the known graph (a draw's value is a residual when
# the rest reads it, as dropout's mask is), and the known graph keeps ``rng`` with the
# states returned last, so calling it without them advances the generators as eager did.


def partial_eval(graph, known, instantiate=None):
    """Split ``graph`` by which of its inputs are known (one bool per input).

    ``instantiate`` (one bool per output, default all False) names outputs that the unknown
    graph must return even when they are known (``linearize``'s tangent of an output that
    does not depend on the input is a known zero, but the linear map returns it).

    Returns ``(known_graph, unknown_graph, residual_count)``. ``known_graph`` takes the
    known inputs, in order, and returns the known outputs that are not instantiated (in
    order, random states excepted) followed by the ``residual_count`` residuals, then the
    new random states (Note [Partial evaluation of effects and draws]). ``unknown_graph``
    takes the residuals followed by the unknown inputs and returns the other outputs, in
    order.
    """
    known = tuple(bool(k) for k in known)
    if len(known) != len(graph.inputs):
        raise ValueError(f"partial_eval: known has {len(known)} entries, but the graph has "
                         f"{len(graph.inputs)} inputs")
    n_out = len(graph.outputs)
    instantiate = (False,) * n_out if instantiate is None else tuple(bool(i) for i in instantiate)
    if len(instantiate) != n_out:
        raise ValueError(f"partial_eval: instantiate has {len(instantiate)} entries, but the "
                         f"graph has {n_out} outputs")
    n_rng = len(graph.rng)
    if n_rng and not all(known[len(known) - n_rng:]):
        raise ValueError("partial_eval: the random-state inputs (the last len(graph.rng)) must "
                         "be known")
    is_known = {id(v) for v, k in zip(graph.inputs, known) if k}
    is_known.update(id(c) for c in graph.consts)
    known_nodes, unknown_nodes = [], []
    for node in graph.nodes:
        if all(id(v) in is_known for v in node.ins):
            known_nodes.append(node)
            is_known.update(id(v) for v in node.outs)
        else:
            unknown_nodes.append(node)

    def value_known(o):
        return not isinstance(o, (Var, Const)) or id(o) in is_known

    residuals, seen = [], set()

    def read(v):   # a known Var the unknown graph reads becomes a residual
        if isinstance(v, Var) and id(v) in is_known and id(v) not in seen:
            seen.add(id(v))
            residuals.append(v)

    for node in unknown_nodes:
        for v in node.ins:
            read(v)
    split = n_out - n_rng
    known_outs, unknown_outs = [], []
    for i, o in enumerate(graph.outputs[:split]):
        if value_known(o) and not instantiate[i]:
            known_outs.append(o)
        else:
            unknown_outs.append(o)
            read(o)
    known_graph = dce(_graph([v for v, k in zip(graph.inputs, known) if k], known_nodes,
                             known_outs + residuals + list(graph.outputs[split:]), graph,
                             f"{graph.name}_known", rng=graph.rng))
    unknown_graph = dce(_graph(residuals + [v for v, k in zip(graph.inputs, known) if not k],
                               unknown_nodes, unknown_outs, graph, f"{graph.name}_unknown"))
    return known_graph.check(), unknown_graph.check(), len(residuals)


def bind_inputs(graph, values):
    """``graph`` with its first ``len(values)`` inputs replaced by the constants ``values``
    (tensors): a graph of the remaining inputs (``linearize`` closes over residuals so)."""
    k = len(values)
    if k > len(graph.inputs):
        raise ValueError(f"bind_inputs: {k} values for a graph of {len(graph.inputs)} inputs")
    table = {id(v): Const(f"r{i}", x) for i, (v, x) in enumerate(zip(graph.inputs, values))}
    nodes = [Node(n.prim, [table.get(id(v), v) for v in n.ins], n.params, n.outs, n.where)
             for n in graph.nodes]
    outputs = [table.get(id(o), o) if isinstance(o, Var) else o for o in graph.outputs]
    return Graph(list(graph.inputs[k:]), nodes, outputs, list(graph.consts) + list(table.values()),
                 graph.in_tree, graph.out_tree, graph.name, rng=graph.rng).check()


def _graph(inputs, nodes, outputs, source, name, rng=()):
    used = {id(v) for n in nodes for v in n.ins} | {id(o) for o in outputs}
    consts = [c for c in source.consts if id(c) in used]
    return Graph(inputs, nodes, outputs, consts, name=name, rng=rng)
