"""The fast runner: a pure graph compiled to a Python function over NumPy arrays.

``runner(graph)`` generates the source of a function that calls each node's primitive
``impl`` directly, with the params as bound constants: the eval interpreter's work
(Note [Fast runner]) without a `bind`, a Tensor or a dict per node. The ``graph_call``
primitive (``_prims/control.py``) uses it as its ``impl`` when no backend has attached a
compiled callable. This module must not bind: anything that needs a transform, autograd
or the meta device goes through `bind` before reaching here.
"""
from __future__ import annotations

import numpy as np

# Note [Fast runner]
# What the bottom interpreter (`eval_bind`, _core/tensor.py) does per primitive, the
# generated code does too, so results are bit-identical to eager: call `prim.impl` on the
# arrays with the node's params, and turn a NumPy scalar result into a 0-d array (impls
# may return one, e.g. a full reduction; only 0-d outputs can be one, so only they are
# checked). Params are passed as keyword arguments naming module-level constants of the
# generated code, so no dict is built per call. The graph must be pure (no node writing
# an operand, Note [Effects]: those graphs are inlined instead, Note [Calling a graph]). A random draw
# is an ordinary node: its impl draws from its state operand (Note [Random state as a value]).

_IDENT_OK = str.isidentifier


def runner(graph):
    """A function ``f(*arrays) -> tuple of arrays`` running ``graph``'s primitives' impls."""
    # __name__: the generated code's warnings are numtorch's (Note [Silent floating-point
    # errors], numtorch/_prims/elementwise.py)
    ns = {"ndarray": np.ndarray, "asarray": np.asarray, "__name__": __name__}
    names = {}

    def name(v):
        n = names.get(id(v))
        if n is None:
            n = names[id(v)] = f"v{len(names)}"
        return n

    def const(value, prefix):
        key = f"{prefix}{len(ns)}"
        ns[key] = value
        return key

    args = [name(v) for v in graph.inputs]
    lines = [f"def run({', '.join(args)}):"]
    for c in graph.consts:   # a graph that was not closed: its constants' arrays are bound
        lines.append(f"    {name(c)} = {const(c.value._data, 'c')}")
    for node in graph.nodes:
        if node.is_effect():
            raise ValueError(f"runner: the graph writes an operand ({node.prim.name}); such "
                             f"graphs run by Graph.inline, not as a region")
        fn = const(node.prim.impl, f"{node.prim.name}_")
        ins = [name(v) for v in node.ins]
        for k, p in node.params.items():
            ins.append(f"{k}={const(p, 'p')}" if _IDENT_OK(k) else None)
        if None in ins:   # a param that is not a keyword name: pass them as a dict
            ins = [name(v) for v in node.ins] + [f"**{const(dict(node.params), 'p')}"]
        outs = [name(v) for v in node.outs]
        lhs = ", ".join(outs) + ("," if node.prim.multiple_results and len(outs) == 1 else "")
        if node.prim.multiple_results and not outs:
            lhs = "_"
        lines.append(f"    {lhs} = {fn}({', '.join(ins)})")
        for v, n in zip(node.outs, outs):
            if len(v.shape) == 0:
                lines.append(f"    if {n}.__class__ is not ndarray: {n} = asarray({n})")
    outs = [name(o) for o in graph.outputs]
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    source = "\n".join(lines)
    code = compile(source, f"<numtorch graph {graph.name}>", "exec")
    exec(code, ns)
    run = ns["run"]
    run.source = source
    return run
