"""Backends: what runs a captured graph (``"eager"``, ``"aot_eager"``, ``"inductor"``,
callables ``backend(gm, example_inputs)``), and the GraphModule-like ``gm`` they receive.

Must not capture anything.
"""
from __future__ import annotations

import importlib

import numpy as np

_BACKENDS: dict = {}


class GraphModule:
    """A captured graph as PyTorch backends see it: ``.graph`` (iterable nodes), ``.code``,
    ``print_readable()``, ``forward(*inputs)`` and calling it (returns a tuple)."""

    def __init__(self, graph):
        self.graph = _GraphView(graph)
        self._graph = graph

    @property
    def code(self):
        return self._graph.python_code()

    def print_readable(self, print_output=True):
        text = self.code
        if print_output:
            print(text)
        return text

    def forward(self, *inputs):
        return self._graph(*inputs)

    __call__ = forward

    def __repr__(self):
        return f"GraphModule(\n{self.code}\n)"


class _GraphView:
    """``gm.graph``: iterate its nodes (``node.op``, ``node.target``, ``node.name``)."""

    def __init__(self, graph):
        self._graph = graph
        self.nodes = [_NodeView("placeholder", v.name, v.name) for v in graph.inputs]
        for n in graph.nodes:
            target = n.prim.name
            self.nodes += [_NodeView("call_function", target, ", ".join(v.name for v in n.outs) or target)]
        self.nodes.append(_NodeView("output", "output", "output"))

    def __iter__(self):
        return iter(self.nodes)

    def __str__(self):
        return self._graph.python_code()


class _NodeView:
    __slots__ = ("op", "target", "name")

    def __init__(self, op, target, name):
        self.op, self.target, self.name = op, target, name

    def __repr__(self):
        return self.name


def register_backend(compiler_fn=None, name=None):
    """Register ``compiler_fn(gm, example_inputs)`` under ``name`` (default: its name);
    usable as a decorator."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name)
    if not callable(compiler_fn):
        raise TypeError(f"register_backend expects a callable, got {type(compiler_fn).__name__}")
    _BACKENDS[name or compiler_fn.__name__] = compiler_fn
    return compiler_fn


def list_backends(exclude_tags=()):
    """The names of the registered backends."""
    return sorted(_BACKENDS)


@register_backend(name="eager")
def eager(gm, example_inputs):
    """Run the captured graph by binding its primitives."""
    return gm.forward


@register_backend(name="aot_eager")
def aot_eager(gm, example_inputs):
    """AOT autograd's joint graph is not built yet (part 3): runs as ``"eager"``."""
    return gm.forward


@register_backend(name="inductor")
def inductor(gm, example_inputs):
    """numtorch._inductor.compile_graph when it exists; else the graph runs as ``"eager"``."""
    try:
        mod = importlib.import_module("numtorch._inductor")
    except ImportError:
        return gm.forward
    compile_graph = getattr(mod, "compile_graph", None)
    if compile_graph is None:
        return gm.forward
    graph = gm._graph
    if graph.shape_env is not None:
        return _concrete_or_region(_per_sizes(graph, compile_graph), gm.forward)
    return _concrete_or_region(compile_graph(graph, example_inputs), gm.forward)


# Note [Symbolic graphs meet a static backend]
# The C kernels are generated for concrete sizes. A graph captured with symbolic sizes
# (dynamic shapes) is compiled once per distinct set of input sizes, from its concrete
# copy (Graph.for_sizes): capture is still shape-generic (no recompile of the frame, no
# new guards), only the kernels are specialised. A symbolic C codegen is issue #8's.
def _per_sizes(graph, compile_graph):
    kernels = {}

    def run(*inputs):
        key = tuple(t.shape for t in inputs)
        fn = kernels.get(key)
        if fn is None:
            if len(kernels) > 64:
                kernels.clear()
            concrete = graph.for_sizes(inputs)
            fn = kernels[key] = compile_graph(concrete, list(inputs))
        return fn(*inputs)
    return run


# Note [Kernels see concrete inputs only]
# The C kernels read arrays. Under a transform (grad, vmap, ...) or with inputs that
# require grad, the inputs are tracers or need recording, so the call goes to the graph's
# `graph_call` region instead: its rules transform the graph (Note [Region rules]) and the
# result is right, though not fused. Compiling the transformed graphs is AOT autograd's
# part (issue #9).
def _concrete_or_region(kernels, region):
    def run(*inputs):
        for t in inputs:
            if t._data.__class__ is not np.ndarray or t._requires_grad:
                return region(*inputs)
        return kernels(*inputs)
    run.kernels = kernels
    return run


def lookup_backend(backend):
    if callable(backend):
        return backend
    if isinstance(backend, str):
        if backend not in _BACKENDS:
            raise ValueError(f"compile: unknown backend {backend!r}; expected one of "
                             f"{list_backends()} or a callable backend(gm, example_inputs)")
        return _BACKENDS[backend]
    raise TypeError(f"compile: backend must be a string or a callable, got "
                    f"{type(backend).__name__}")
