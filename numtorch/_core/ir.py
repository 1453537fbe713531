"""The graph IR: a typed list of primitive applications in A-normal form.

A `Graph` prints as runnable Python source (``t3 = prims.mul(t1, t2)  # f32[4, 3]``, with
the user's file:line) and type-checks itself with the primitives' shape rules. Calling a
graph runs it as one region, a single ``graph_call`` node under any transform
(Note [Calling a graph]); ``Graph.inline`` instead binds its primitives one by one. Made by
the trace interpreter (``numtorch.func.make_graph``); consumed by functionalize, the passes
(``_core/passes.py``) and compile. This module knows no particular primitive: the region
primitive lives with the control-flow family (``_prims/control.py``) and installs itself.
Writes are ordinary nodes of primitives that mutate an operand (``copy_to``, Note [Effects]).
"""
from __future__ import annotations

import numpy as np

from . import primitive as _prim
from .primitive import bind

_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
          "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "b8", "complex64": "c64",
          "complex128": "c128"}


def type_str(shape, dtype) -> str:
    """``f32[s0, 64]``: dtype and shape; a size is an int or a symbol (`Sym`)."""
    return f"{_SHORT.get(np.dtype(dtype).name, np.dtype(dtype).name)}{list(shape)}"


class Var:
    """A graph value: a name and an abstract type (shape of ints and `Sym`s, NumPy dtype)."""

    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), np.dtype(dtype)

    def __repr__(self):
        return self.name

    @property
    def type(self):
        return type_str(self.shape, self.dtype)


class Const:
    """A tensor captured by the graph (a closed-over value, not an input).

    ``literal`` says the graph owns the value (Note [Literals and captured tensors]): a
    Python number, a snapshot of a tensor made inside the traced function, a folded
    result. Otherwise the constant *is* a tensor from outside (a parameter, a buffer,
    optimizer state, a global) that its owner may change between calls: the graph reads
    it at each call, and no pass may replace it by an equal-valued one.
    """

    __slots__ = ("name", "value", "literal")

    def __init__(self, name, value, literal=False):
        self.name, self.value, self.literal = name, value, literal

    def __repr__(self):
        return self.name


class Node:
    """``outs = prim(*ins, **params)``, made at the user's file:line ``where``."""

    __slots__ = ("prim", "ins", "params", "outs", "where")

    def __init__(self, prim, ins, params, outs, where=""):
        self.prim, self.ins, self.params, self.outs = prim, tuple(ins), params, tuple(outs)
        self.where = where

    def is_effect(self) -> bool:
        """Whether the node writes an operand (Note [Effects]) besides making a value (the
        one test of it: regions, the runner and the passes ask here)."""
        return self.prim.mutates is not None


def _fmt_param(v, names=None):
    if isinstance(v, Graph):
        return names[id(v)] if names else v.name
    if isinstance(v, np.dtype):
        return f"np.{v.name}" if v.name != "bool" else "np.bool_"
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return repr(v)


# Note [Calling a graph]
# `graph(*args)` runs the graph as one region: the higher-order primitive `graph_call`
# (_prims/control.py), bound once on the graph's inputs. Without a transform and without an
# input that requires grad, that bind reaches the region's `impl`, which runs generated
# Python calling the primitives' impls directly (`_core/runner.py`) or a backend's compiled
# callable; under grad, jvp or vmap the region's rules transform the whole graph and bind
# `graph_call` again on the result, so a region stays one node at any depth of transforms
# (JAX's xla_call). `graph.inline(*args)` is the other way: bind every node in turn, so a
# transform sees (and a trace records) the graph's primitives themselves; passes and the
# eager backend use it, and so do graphs that write an operand (Note [Effects]), which are
# not pure functions and so cannot be a region.
# A region takes its captured constants as leading inputs (`Graph.closed()`): a constant
# may be a tensor that requires grad or a tracer of an enclosing transform, and only as an
# input does the transform see it.

# Note [Graphs with random state]
# A graph whose function drew random numbers takes each generator's state as an input and
# returns its new state (Note [Random state as a value] in _prims/random.py): the last
# ``len(graph.rng)`` inputs are the states of the generators ``graph.rng`` lists, the last
# ``len(graph.rng)`` outputs their states after the graph. So the graph is a pure function
# of its inputs, and passes, transforms and backends need nothing special for draws. Calling
# it (or `inline`) on the function's own inputs only reads those states from the
# generators (or from an enclosing trace, which then threads them further) and writes the
# new ones back, so the graph advances the generators exactly as the traced function did;
# given every input, states included, it is the pure function. A graph rebuilt from it
# (passes) keeps ``rng``; the region `closed()` makes is always the pure function.

class Graph:
    """A traced program: inputs, nodes, outputs (plus captured constants).

    A backend attaches its compiled form by setting ``graph.compiled = fn``: ``fn`` takes
    the NumPy arrays of the region's inputs (``graph.closed()[0].inputs``: the captured
    constants first, then the graph's inputs) and returns a tuple of arrays, one per tensor
    output. Calling the graph (``graph_call``'s impl) then runs ``fn`` instead of the
    generated runner, whenever no transform or autograd intervenes; transformed graphs
    (``graph_call``'s jvp/vjp/batch rules) are new graphs, which a backend may compile too.

    With symbolic sizes (``make_graph(f, dynamic=True)``), ``symbols`` maps each symbol's
    name to the input dimensions it is read from and ``shape_guards`` lists the relations
    between sizes that tracing relied on (_core/symbolic.py, Note [Guards]). Calling such a
    graph runs its concrete copy for the inputs' sizes (Note [Running a symbolic graph]).
    """

    def __init__(self, inputs, nodes, outputs, consts, in_tree=None, out_tree=None, name="forward",
                 shape_env=None, rng=()):
        self.inputs, self.nodes, self.outputs, self.consts = inputs, nodes, outputs, consts
        self.rng = tuple(rng)    # generators of the trailing state inputs (Note [Graphs with random state])
        self.in_tree, self.out_tree, self.name = in_tree, out_tree, name
        self.shape_env = shape_env   # the symbols' ShapeEnv, None for a graph of ints
        self._compiled = None    # a backend's callable on arrays (see the class docstring)
        self._closed = None      # cache of closed()
        self.cache = {}          # transformed graphs (jvp, vjp, batch) and the runner
        # {output position: input position}: outputs a backend may compute in that input's
        # memory, whose old value the caller no longer needs (Note [Donated inputs],
        # _inductor/runner.py); a backend may ignore it
        self.donated = {}

    # -- symbolic sizes -----------------------------------------------------------------
    @property
    def symbols(self) -> dict:
        """{symbol name: [(input index, dim), ...]}: where each size symbol is read from."""
        return self.shape_env.symbols() if self.shape_env is not None else {}

    @property
    def shape_guards(self) -> tuple:
        """The guards (relations between sizes) this graph is valid under."""
        return tuple(self.shape_env.guards) if self.shape_env is not None else ()

    def check_shape_guards(self, *args) -> dict:
        """{symbol: size} for flat inputs ``args``; raises ShapeGuardError if a guard fails."""
        from .symbolic import bind_symbols
        return bind_symbols(self, args)

    def for_sizes(self, args):
        """This graph, or, when its sizes are symbolic, its concrete copy for ``args``' sizes."""
        if self.shape_env is None or not self.shape_env.hints:
            return self
        from .symbolic import concrete_graph
        return concrete_graph(self, args)

    @property
    def compiled(self):
        """A backend's callable running this graph's region on arrays, or None."""
        return self._compiled

    @compiled.setter
    def compiled(self, fn):
        if fn is not None and not callable(fn):
            raise TypeError(f"Graph.compiled must be a callable or None, got {type(fn).__name__}")
        self._compiled = fn
        self.closed()[0]._compiled = fn    # the graph that graph_call holds

    # -- printing -----------------------------------------------------------------------
    def python_code(self) -> str:
        """The graph as Python source defining ``forward`` (runnable with ``prims`` in scope).

        Graphs called as regions (``graph_call`` nodes) are printed first, each once, under
        names unique within the listing.
        """
        subs, names = [], {}
        _collect_subgraphs(self, subs, set())
        for g in [self] + subs:
            name, k = g.name, 1
            while name in names.values():
                name, k = f"{g.name}_{k}", k + 1
            names[id(g)] = name
        return "\n\n".join(_code(g, names) for g in subs + [self])

    def __str__(self):
        return self.python_code()

    __repr__ = __str__

    def print_readable(self):
        print(self.python_code())

    # -- checking -----------------------------------------------------------------------
    def check(self):
        """Type-check every node against its primitive's shape rule; raises TypeError."""
        from .meta import MetaArray
        defined = {id(v) for v in self.inputs} | {id(c) for c in self.consts}
        for node in self.nodes:
            for v in node.ins:
                if id(v) not in defined:
                    raise TypeError(f"graph: {v} used before definition")
            avals = [MetaArray(v.shape, v.dtype) if isinstance(v, Var) else
                     MetaArray(v.value.shape, v.value._data.dtype) for v in node.ins]
            res = node.prim.shape(*avals, **node.params)
            res = res if node.prim.multiple_results else (res,)
            for (shape, dtype), v in zip(res, node.outs):
                if tuple(shape) != v.shape or np.dtype(dtype) != v.dtype:
                    raise TypeError(f"graph: {v.name} = {node.prim.name}(...) has type "
                                    f"{type_str(shape, dtype)} but is annotated {v.type}")
            defined.update(id(v) for v in node.outs)
        return self

    # -- running ------------------------------------------------------------------------
    def __call__(self, *args):
        """Run the graph on flat tensor inputs as one region (Note [Calling a graph]).

        Returns the tuple of outputs (non-tensor outputs as traced). A graph that draws random
        numbers may be given its inputs without the random states (Note [Graphs with random
        state]).
        """
        if len(args) != len(self.inputs):
            if self.rng and len(args) == len(self.inputs) - len(self.rng):
                return self._with_states(self.__call__, args)
            raise TypeError(f"graph expects {self._arity()} inputs, got {len(args)}")
        if self.shape_env is not None:   # symbolic sizes: Note [Running a symbolic graph]
            return self.for_sizes(args)(*args)
        for a, v in zip(args, self.inputs):
            d = getattr(a, "_data", None)
            if d is None or d.shape != v.shape or d.dtype != v.dtype:
                raise TypeError(f"graph {self.name}: input {v.name} must be a Tensor of type "
                                f"{v.type}, got {_describe(a)}")
        return _call_region(self, args)

    def inline(self, *args):
        """Run the graph on flat tensor inputs by binding its primitives one by one.

        A node whose primitive writes an operand (Note [Effects]) makes that operand's
        tensor hold the result, so inputs are mutated as the traced function mutated them.
        """
        if len(args) != len(self.inputs):
            if self.rng and len(args) == len(self.inputs) - len(self.rng):
                return self._with_states(self.inline, args)
            raise TypeError(f"graph expects {self._arity()} inputs, got {len(args)}")
        if self.shape_env is not None:
            return self.for_sizes(args).inline(*args)
        env = {id(v): a for v, a in zip(self.inputs, args)}
        for c in self.consts:
            env[id(c)] = c.value
        for node in self.nodes:
            ins = [env[id(v)] for v in node.ins]
            out = bind(node.prim, *ins, **node.params)
            written = node.prim.mutates
            if written is not None:
                # The written tensor now holds the value; later writes to it go there too.
                _prim.store(ins[written], out)
                out = ins[written]
            outs = out if node.prim.multiple_results else (out,)
            for v, o in zip(node.outs, outs):
                env[id(v)] = o
        return tuple(env[id(o)] if isinstance(o, (Var, Const)) else o for o in self.outputs)

    def _arity(self):
        n = len(self.inputs)
        return f"{n} (or {n - len(self.rng)} without its random states)" if self.rng else str(n)

    def _with_states(self, run, args):
        """``run`` on ``args`` plus the generators' states; writes the new states back."""
        read, write = _rng_io
        outs = run(*args, *[read(g) for g in self.rng])
        k = len(outs) - len(self.rng)
        for g, state in zip(self.rng, outs[k:]):
            write(g, state)
        return outs[:k]

    def has_effects(self) -> bool:
        """Whether a node writes into an operand (Note [Effects]) besides making a value."""
        return any(n.is_effect() for n in self.nodes)

    def closed(self):
        """``(region, consts, positions)``: this graph as a pure region (Note [Calling a graph]).

        ``region`` takes the captured constants as leading inputs and returns only the tensor
        outputs; ``consts`` are the constant tensors to pass; ``positions`` are the indices of
        the tensor outputs among this graph's outputs. A graph already in that form is its
        own region. Cached.
        """
        if self._closed is None:
            positions = tuple(i for i, o in enumerate(self.outputs) if isinstance(o, (Var, Const)))
            if not self.consts and len(positions) == len(self.outputs) and \
                    all(isinstance(o, Var) for o in self.outputs):
                self._closed = (self, (), positions)
            else:
                table = {id(c): Var(c.name, c.value.shape, c.value._data.dtype) for c in self.consts}
                nodes = [Node(n.prim, [table.get(id(v), v) for v in n.ins], n.params, n.outs,
                              n.where) for n in self.nodes]
                region = Graph([table[id(c)] for c in self.consts] + list(self.inputs), nodes,
                               [table.get(id(self.outputs[i]), self.outputs[i]) for i in positions],
                               [], name=self.name)
                self._closed = (region, tuple(c.value for c in self.consts), positions)
        return self._closed

    def primitives(self):
        """The names of the primitives the graph applies, in order."""
        return [n.prim.name for n in self.nodes]


def _collect_subgraphs(graph, out, seen):
    for node in graph.nodes:
        for p in node.params.values():
            if isinstance(p, Graph) and id(p) not in seen:
                seen.add(id(p))
                _collect_subgraphs(p, out, seen)
                out.append(p)


def _code(graph, names):
    args = ", ".join(f"{v.name}: '{v.type}'" for v in graph.inputs)
    lines = [f"def {names[id(graph)]}({args}):"]
    for name, sources in graph.symbols.items():
        lines.append(f"    # {name} = " + " == ".join(
            f"{graph.inputs[i].name}.size({d})" for i, d in sources))
    lines += [f"    # guard: {g}" for g in graph.shape_guards]
    n = len(graph.rng)
    for v, o, g in zip(graph.inputs[len(graph.inputs) - n:], graph.outputs[len(graph.outputs) - n:],
                       graph.rng):
        lines.append(f"    # {v.name}: the state of {g!r}, read at the call; {o} is written back")
    for node in graph.nodes:
        ins = [v.name for v in node.ins]
        ins += [f"{k}={_fmt_param(p, names)}" for k, p in node.params.items()]
        lhs = ", ".join(v.name for v in node.outs) + ("," if len(node.outs) == 1 and
                                                      node.prim.multiple_results else "")
        code = f"    {lhs} = prims.{node.prim.name}({', '.join(ins)})"
        code += f"  # {', '.join(v.type for v in node.outs)}"
        if node.where:
            code += f" {node.where}"
        lines.append(code)
    outs = ", ".join(o.name if isinstance(o, (Var, Const)) else repr(o) for o in graph.outputs)
    lines.append(f"    return ({outs},)" if len(graph.outputs) == 1 else f"    return ({outs})")
    return "\n".join(lines)


def _describe(a):
    d = getattr(a, "_data", None)
    return type(a).__name__ if d is None else type_str(d.shape, d.dtype)


def _inline_region(graph, args):
    return graph.inline(*args)


# How `Graph.__call__` runs a region: installed by _prims/control.py (graph_call); inlining
# until then, so this module needs no primitive.
_call_region = _inline_region
# (read_state(generator), write_state(generator, state)): installed by _prims/random.py
_rng_io = None
