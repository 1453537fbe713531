"""The accuracy minifier: compare compiled graphs with eager, find the first diverging node,
write a standalone repro (the torch.compile FAQ's "why are my results wrong").

``NUMTORCH_REPRO_AFTER`` chooses where the check runs: ``"dynamo"`` compares each captured
graph's compiled callable with running the graph eagerly (the backend wrapper,
`checked_backend`); ``"aot"`` compares each forward and backward graph AOT autograd
compiles (`checked_compiler`). ``NUMTORCH_REPRO_LEVEL`` (PyTorch's levels): 4 checks
accuracy on the first call and, on a mismatch, bisects and raises `AccuracyError`; below
4 only a crash of the compiled code is turned into a repro. The repro (``repro.py`` plus
``repro.npz`` in ``NUMTORCH_REPRO_DIR``, default the working directory) runs the one
diverging primitive on the values it saw, eagerly and through the inductor backend, and
prints both. This module only observes: it never changes what a backend computes.
"""
from __future__ import annotations

import os

import numpy as np

from .._core.ir import Graph, Node, Var


class AccuracyError(RuntimeError):
    """A compiled graph's results differ from eager's (raised at NUMTORCH_REPRO_LEVEL=4)."""


def repro_after():
    """``"dynamo"``, ``"aot"`` or None (NUMTORCH_REPRO_AFTER); other values raise."""
    v = os.environ.get("NUMTORCH_REPRO_AFTER") or None
    if v not in (None, "dynamo", "aot"):
        raise ValueError(f"NUMTORCH_REPRO_AFTER must be 'dynamo' or 'aot', got {v!r}")
    return v


def repro_level():
    v = os.environ.get("NUMTORCH_REPRO_LEVEL", "2")
    if not v.isdigit() or not 1 <= int(v) <= 4:
        raise ValueError(f"NUMTORCH_REPRO_LEVEL must be 1, 2, 3 or 4, got {v!r}")
    return int(v)


# Note [Bisecting a wrong graph]
# A prefix of the graph (its first k nodes, every value they make an output) is compiled
# and compared with eager; whether a prefix mismatches is monotone in k (a prefix of a
# mismatching prefix may match, never the reverse), so a binary search finds the first
# node whose own outputs diverge in log2(n) compilations. The repro then isolates that
# node alone: its operands become inputs holding the values eager computed for them, so
# the script is a single primitive call, however large the graph was.

def _mismatch(got, expected, rtol, atol):
    from .._core.tensor import Tensor
    got = [g for g in got if isinstance(g, Tensor)]
    expected = [e for e in expected if isinstance(e, Tensor)]
    if len(got) != len(expected):
        return True
    for g, e in zip(got, expected):
        g, e = np.asarray(g._data), np.asarray(e._data)
        if g.shape != e.shape or g.dtype != e.dtype:
            return True
        if e.dtype.kind in "fc":
            if not np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True):
                return True
        elif not np.array_equal(g, e):
            return True
    return False


def _prefix(graph, k):
    nodes = graph.nodes[:k]
    outs = [v for n in nodes for v in n.outs]
    used = {id(v) for n in nodes for v in n.ins}
    return Graph(list(graph.inputs), nodes, outs, [c for c in graph.consts if id(c) in used],
                 name=f"{graph.name}_prefix{k}")


def _eager(graph, inputs):
    from ..autograd.grad_mode import no_grad
    with no_grad():
        return graph.inline(*inputs)


def first_divergence(graph, compile_fn, inputs, *, rtol=1e-4, atol=1e-5):
    """Index of the first node of ``graph`` whose outputs differ between
    ``compile_fn(prefix)(*inputs)`` and eager (Note [Bisecting a wrong graph]), or None."""
    lo, hi = 1, len(graph.nodes)
    bad = None
    while lo <= hi:
        k = (lo + hi) // 2
        p = _prefix(graph, k)
        if _mismatch(compile_fn(p)(*inputs), _eager(p, inputs), rtol, atol):
            bad, hi = k, k - 1
        else:
            lo = k + 1
    return None if bad is None else bad - 1


def write_repro(graph, index, inputs, directory=None):
    """Write ``repro.py`` and ``repro.npz``: node ``index`` of ``graph`` alone, on the
    operand values eager computes for it; returns the script's path."""
    directory = directory or os.environ.get("NUMTORCH_REPRO_DIR") or os.getcwd()
    os.makedirs(directory, exist_ok=True)
    node = graph.nodes[index]
    env = {id(v): t for v, t in zip(graph.inputs, inputs)}
    for c in graph.consts:
        env[id(c)] = c.value
    prefix = _prefix(graph, index)
    for v, t in zip(prefix.outputs, _eager(prefix, inputs) if index else ()):
        env[id(v)] = t
    operands = [Var(f"x{i}", env[id(v)].shape, env[id(v)]._data.dtype) for i, v in enumerate(node.ins)]
    single = Graph(operands, [Node(node.prim, operands, node.params, node.outs, node.where)],
                   list(node.outs), [], name="repro")
    arrays = {f"x{i}": np.asarray(env[id(v)]._data) for i, v in enumerate(node.ins)}
    np.savez(os.path.join(directory, "repro.npz"), **arrays)
    path = os.path.join(directory, "repro.py")
    with open(path, "w") as f:
        f.write(_SCRIPT.format(prim=node.prim.name, where=node.where or "?", graph=graph.name,
                               index=index, code=single.python_code(),
                               names=", ".join(f"'x{i}'" for i in range(len(node.ins)))))
    return path


_SCRIPT = '''"""Accuracy repro written by numtorch's minifier (NUMTORCH_REPRO_AFTER): node {index} of
graph {graph}, prims.{prim} (made at {where}), differs between eager and the compiled code."""
import os
import types

import numpy as np

import numtorch
from numtorch._core.primitive import ALL_PRIMITIVES
from numtorch.func import make_graph

prims = types.SimpleNamespace(**{{n: p.bind for n, p in ALL_PRIMITIVES.items()}})

{code}


if __name__ == "__main__":
    data = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "repro.npz"))
    args = [numtorch.from_numpy(data[n]) for n in ({names},)]
    eager = repro(*args)
    from numtorch._inductor import compile_graph
    compiled = compile_graph(make_graph(repro)(*args))(*args)
    for e, c in zip(eager, compiled):
        print("eager:   ", e.numpy().ravel()[:8])
        print("compiled:", c.numpy().ravel()[:8])
        print("max abs difference:", float(np.nanmax(np.abs(e.numpy() - c.numpy()))))
'''


def check(graph, compile_fn, compiled, inputs, where, *, rtol=1e-4, atol=1e-5):
    """Run ``compiled`` on ``inputs`` and compare with eager; at level 4 a mismatch bisects,
    writes the repro and raises `AccuracyError`. Returns the compiled results."""
    try:
        got = compiled(*inputs)
    except Exception as e:
        path = write_repro(graph, len(graph.nodes) - 1, inputs) if graph.nodes else None
        raise RuntimeError(f"{where}: the compiled graph {graph.name} raised {e!r}; repro "
                           f"written to {path}") from e
    if repro_level() >= 4 and _mismatch(got, _eager(graph, inputs), rtol, atol):
        index = first_divergence(graph, compile_fn, inputs, rtol=rtol, atol=atol)
        if index is None:
            raise AccuracyError(f"{where}: the compiled graph {graph.name} differs from eager, "
                                f"but no prefix of it does (a fusion across the whole graph)")
        node = graph.nodes[index]
        path = write_repro(graph, index, inputs)
        raise AccuracyError(
            f"{where}: the compiled graph {graph.name} differs from eager; the first diverging "
            f"node is {', '.join(v.name for v in node.outs)} = prims.{node.prim.name}(...) "
            f"at {node.where or '?'}; repro written to {path}")
    return got


def _pure(graph):
    from .._core.passes import is_pure
    return all(is_pure(n) for n in graph.nodes)


def checked_backend(backend):
    """``backend`` with each captured graph checked on its first call (REPRO_AFTER=dynamo)."""
    def wrapped(gm, example_inputs):
        from .._dynamo.backends import GraphModule
        run = backend(gm, example_inputs)
        graph = gm._graph
        if not _pure(graph):      # a second run would draw or write again: not comparable
            return run
        state = {"checked": False}

        def compile_fn(g):
            return backend(GraphModule(g), example_inputs)

        def first(*inputs):
            if state["checked"] or any(t._data.__class__ is not np.ndarray for t in inputs):
                return run(*inputs)
            state["checked"] = True
            return check(graph, compile_fn, run, inputs, "NUMTORCH_REPRO_AFTER=dynamo")
        return first
    wrapped.__name__ = getattr(backend, "__name__", "backend")
    return wrapped


def checked_compiler(compiler):
    """AOT autograd's ``compiler`` with each forward/backward graph checked on its first
    call (REPRO_AFTER=aot); compiled functions take and return arrays."""
    from .._core.tensor import wrap_array

    def on_tensors(fn):
        return lambda *ts: tuple(wrap_array(a) for a in fn(*[t._data for t in ts]))

    def wrapped(graph):
        fn = compiler(graph)
        if not _pure(graph):
            return fn
        state = {"checked": False}

        def first(*arrays):
            if state["checked"]:
                return fn(*arrays)
            state["checked"] = True
            got = check(graph, lambda g: on_tensors(compiler(g)), on_tensors(fn),
                        [wrap_array(a) for a in arrays], "NUMTORCH_REPRO_AFTER=aot")
            return tuple(t._data for t in got)
        first.compiled = getattr(fn, "compiled", None)
        return first
    return wrapped
