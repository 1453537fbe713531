"""Backends: what runs a captured graph (``"eager"``, ``"aot_eager"``, ``"inductor"``,
callables ``backend(gm, example_inputs)``), and the GraphModule-like ``gm`` they receive.

Must not capture anything.
"""
from __future__ import annotations

import functools
import importlib

from .._core.tensor import Tensor
from .._prims.control import direct_caller

_BACKENDS: dict = {}


class GraphModule:
    """A captured graph as PyTorch backends see it: ``.graph`` (iterable nodes), ``.code``,
    ``print_readable()``, ``forward(*inputs)`` and calling it (returns a tuple)."""

    def __init__(self, graph):
        self.graph = _GraphView(graph)
        self._graph = graph
        # forward(*inputs): graph(*inputs), straight to its runner when nothing needs a
        # bind (Note [Direct region calls] in _prims/control.py); the eager backend returns
        # it, so a compiled call's hit path is the guard, ___run and this
        self.forward = direct_caller(graph)

    @property
    def code(self):
        return self._graph.python_code()

    def print_readable(self, print_output=True):
        text = self.code
        if print_output:
            print(text)
        return text

    def __call__(self, *inputs):
        return self.forward(*inputs)

    def __repr__(self):
        return f"GraphModule(\n{self.code}\n)"


# Note [Ops as the user called them]
# A captured graph holds primitives, but PyTorch's backends and `explain` see the graph at
# the level the user wrote it: one FX node per call of a torch function
# (``call_function``, target the function), of a tensor method (``call_method``, target
# its name) or of a module (inlined by Dynamo into its functional calls). The FAQ's
# toy_example reports "Op Count: 5" because ``b.sum()`` is a call_method that explain does
# not count. So capture stamps every node a real call made with that call's `CallSite`
# (its ``where``: every pass that rebuilds nodes copies ``where`` already), and `gm.graph`
# shows one node per call site; a module numtorch calls for real is one ``call_function``
# (PyTorch would show the functional call(s) it inlines to, usually one). Nodes made
# outside a user call (e.g. a grad-mode stop_gradient inserted later) keep their own view.
class CallSite(str):
    """The user's ``file:line`` of a call made during capture, and what was called."""

    def __new__(cls, where, fn, args):
        self = super().__new__(cls, where)
        if isinstance(getattr(fn, "__self__", None), Tensor):
            self.op, self.target = "call_method", fn.__name__      # t.sum(): a Tensor's
        else:
            self.op, self.target = "call_function", fn
        return self


def _target_name(target):
    if isinstance(target, str):
        return target
    if hasattr(target, "forward") and not hasattr(target, "__name__"):
        return type(target).__name__
    return getattr(target, "__name__", None) or repr(target)


class _GraphView:
    """``gm.graph``: iterate its nodes (``node.op``, ``node.target``, ``node.name``), one
    per call the user's code made (Note [Ops as the user called them])."""

    def __init__(self, graph):
        self._graph = graph
        self.nodes = [_NodeView("placeholder", v.name, v.name) for v in graph.inputs]
        last = None
        for n in graph.nodes:
            name = ", ".join(v.name for v in n.outs) or n.prim.name
            site = n.where
            if isinstance(site, CallSite):
                if site is last:                  # another primitive of the same call
                    self.nodes[-1].name = name
                    continue
                self.nodes.append(_NodeView(site.op, site.target, name))
            else:
                self.nodes.append(_NodeView("call_function", n.prim.name, name))
            last = site
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
    """AOT autograd without code generation: with inputs that require grad, the joint
    graph is partitioned and the forward/backward pair runs as one autograd node
    (numtorch._aot); the graphs run on the generated Python runner."""
    from .._aot import aot_function, runner_compiler
    return aot_function(gm._graph, runner_compiler)


@register_backend(name="inductor")
def inductor(gm, example_inputs, options=None):
    """numtorch._inductor.compile_graph (through AOT autograd when inputs require grad);
    without it the graph runs as ``"aot_eager"``. ``options``: inductor config for this
    compile (Note [Compile mode and options], numtorch/_inductor/runner.py)."""
    try:
        mod = importlib.import_module("numtorch._inductor")
    except ImportError:
        return aot_eager(gm, example_inputs)
    compile_graph = getattr(mod, "compile_graph", None)
    if compile_graph is None:
        return aot_eager(gm, example_inputs)
    if options:
        compile_graph = functools.partial(compile_graph, options=options)
    from .._aot import aot_function, tensor_compiler
    graph = gm._graph
    if graph.shape_env is not None:
        kernels = _per_sizes(graph, compile_graph)
    else:
        kernels = compile_graph(graph, example_inputs)
    # the kernels' own per-call function: one Python call less on each cache hit
    run = aot_function(graph, tensor_compiler(compile_graph),
                       inference=getattr(kernels, "run", kernels))
    run.kernels = kernels
    return run


# Note [Symbolic graphs meet a static backend]
# The C kernels are generated for concrete sizes. A graph captured with symbolic sizes
# (dynamic shapes) is compiled once per distinct set of input sizes, from its concrete
# copy (Graph.for_sizes): capture is still shape-generic (no recompile of the frame, no
# new guards), only the kernels are specialised. A symbolic C codegen is issue #8's.
# AOT autograd partitions per concrete sizes the same way (numtorch._aot.aot_function).
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
# The C kernels read arrays. Under a transform (grad, vmap, ...) the inputs are tracers,
# so the call goes to the graph's `graph_call` region instead: its rules transform the
# graph (Note [Region rules]). With inputs (or captured parameters) that require grad,
# AOT autograd compiles the partitioned forward and backward graphs and runs them as one
# autograd node (numtorch._aot, Note [One node per compiled region]).


def lookup_backend(backend, mode=None, options=None):
    """The compile function for ``backend``, a name or a callable; graphs of a
    DistributedDataParallel module are split at its buckets (ddp_optimizer.py).
    ``mode``/``options`` (torch.compile's) configure ``"inductor"``; a callable receives
    them as keyword arguments, as PyTorch passes them; other named backends ignore them."""
    from .ddp_optimizer import ddp_aware
    if callable(backend):
        kwargs = {k: v for k, v in (("mode", mode), ("options", options)) if v is not None}
        return _checked(ddp_aware(functools.partial(backend, **kwargs) if kwargs else backend))
    if isinstance(backend, str):
        if backend not in _BACKENDS:
            raise ValueError(f"compile: unknown backend {backend!r}; expected one of "
                             f"{list_backends()} or a callable backend(gm, example_inputs)")
        fn = _BACKENDS[backend]
        if backend == "inductor" and (options or mode not in (None, "default")):
            from .._inductor import check_options, list_mode_options
            merged = {**list_mode_options(mode), **(options or {})}
            check_options(merged)
            fn = functools.partial(fn, options=merged)
        return _checked(ddp_aware(fn))
    raise TypeError(f"compile: backend must be a string or a callable, got "
                    f"{type(backend).__name__}")


def _checked(backend):
    """``backend``, compared with eager on each graph's first call when
    NUMTORCH_REPRO_AFTER=dynamo (the accuracy minifier, numtorch._aot.repro)."""
    import os
    if os.environ.get("NUMTORCH_REPRO_AFTER") is None:
        return backend
    from .._aot.repro import checked_backend, repro_after
    return checked_backend(backend) if repro_after() == "dynamo" else backend
