"""Tracing: ``make_graph(func)(*args)`` records the primitives ``func`` binds into a `Graph`.

The trace interpreter's tracers carry graph variables; every primitive bound on them
becomes a node (its output type from the primitive's shape rule), tagged with the user's
file:line. Values from outside (lower levels) become captured constants. In-place writes
to a traced tensor become ``copy_to`` nodes like any other (Note [Mutations in graphs]).
"""
from __future__ import annotations

import functools
import os
import sys

from numpy import ndarray

from .._core.ir import Const, Graph, Node, Var
from .._core.meta import MetaArray
from .._core.primitive import Interpreter, Tracer, pop, push
from .._core.pytree import tree_flatten, tree_unflatten
from .._core.tensor import Tensor, wrap
from .._prims.random import STATE_DTYPE, STATE_SHAPE
from .._prims.ref import copy_to

# Note [Mutations in graphs]
# An in-place op binds `copy_to(dst, new_value)` and makes the tensor hold the result
# (Note [In-place ops]). The trace interpreter has no special case for it: it records the
# node like any other, and the tensor is rebound to the node's output, so later reads use
# the new variable (the graph stays in SSA form). `make_graph(f)` thus shows where `f`
# writes (`t5 = prims.copy_to(arg0, t4)`), and running the graph writes its inputs as `f`
# did (Note [Effects]). vmap's and jvp's rules and functionalize discharge the write (its
# value, no write below; vmap and functionalize write back into their inputs when they
# return); grad binds it below on primals like any primitive. `functionalize(f)` sits
# above the trace, so `make_graph(functionalize(f))` is purely functional but for the
# final copies back into mutated inputs — PyTorch's make_fx(functionalize(f)) looks so.

# Note [Constants made inside the trace]
# A tensor a creation op makes while this trace is active (``t = torch.zeros(3)`` inside
# the traced or compiled function; Note [Created inside a transform]) is a concrete
# constant, but it belongs to the function: no caller sees it. Two consequences:
# - it is captured as a snapshot of its current value, not by reference: an in-place op
#   later rebinds the Tensor to a trace value (Note [Mutations in graphs]), and the Const
#   must still hold the value the earlier nodes read (a capture by reference made the
#   constant itself a tracer, which escaped: EscapedTracerError under torch.compile).
#   A later eager write (a folded 0-d ``t += 1``) bumps its version, so each version read
#   gets its own snapshot.
# - a write into it (``copy_to(t, v)``) is functionalized: ``t`` simply becomes ``v``, as
#   functionalize does. Recording the write would make each run of the graph mutate the
#   shared constant, so a second call would start from the first call's result.
# Constants from outside the function (parameters, globals) keep their identity: writes
# to them are the function's effects.

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_location() -> str:
    """file:line of the innermost frame outside numtorch (the user's code)."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PACKAGE_DIR):
            return f"{os.path.basename(fn)}:{f.f_lineno}"
        f = f.f_back
    return ""


class TraceTracer(Tracer):
    __slots__ = ("var",)

    requires_grad = False

    def __init__(self, interp, var):
        self.interp, self.var = interp, var

    @property
    def shape(self):
        return self.var.shape

    @property
    def dtype(self):
        return self.var.dtype

    def inner(self):
        return None   # a graph variable stands for no lower-level tensor

    def concrete(self, what):
        raise RuntimeError(
            f"make_graph: {what} needs the tensor's value, but values are symbolic while tracing "
            f"(data-dependent Python control flow cannot be captured in a graph). Use torch.where "
            f"or other tensor ops instead.")


class TraceInterpreter(Interpreter):
    __slots__ = ("nodes", "consts", "const_ids", "counter", "claims_constants", "keep", "rng",
                 "lift_rng", "written")

    def __init__(self, claims_constants=False):
        self.nodes, self.consts, self.const_ids, self.counter = [], [], {}, 0
        self.keep = []   # tensors snapshot by id: alive, so their ids are not reused
        self.claims_constants = claims_constants   # Note [Capture claims constants]
        # Note [Random state as a value] (_prims/random.py): id(generator) ->
        # [generator, the input its state was lifted as, the tensor holding it now]
        self.rng = {}
        self.lift_rng = None   # capture's way to lift a state (an input with a source)
        # Note [Writes into captured tensors] (_ops/inplace.py): id -> (tensor, its payload,
        # version counter, grad_fn, output_nr, requires_grad) before capture's first write
        self.written = {}

    def new_var(self, shape, dtype, prefix="t"):
        v = Var(f"{prefix}{self.counter}", shape, dtype)
        self.counter += 1
        return v

    def mine(self, t):
        d = t._data
        return d.__class__ is TraceTracer and d.interp is self

    def made_here(self, t):
        """Whether ``t`` was created while this trace was active (Note [Constants made inside the trace])."""
        owner = t if t._base is None else t._base
        return self in owner.__dict__.get("_created_under", ())

    def _operand(self, a):
        if isinstance(a, Tensor) and self.mine(a):
            return a._data.var
        key, value = id(a), a
        # Note [Literals and captured tensors] (_core/passes.py): only values the graph owns
        # are literals; a tensor from outside keeps its identity
        literal = isinstance(a, Tensor) and "_from_number" in a.__dict__
        if isinstance(a, Tensor) and self.made_here(a):
            # Note [Constants made inside the trace]: a snapshot per version
            key, literal = (key, a._version_counter.value), True
            if key not in self.const_ids:
                self.keep.append(a)
                d = a._data
                value = wrap(d.copy() if d.__class__ is ndarray else d)
        c = self.const_ids.get(key)
        if c is None:
            c = Const(f"c{len(self.consts)}", value, literal)
            self.consts.append(c)
            self.const_ids[key] = c
        return c

    def _emit(self, prim, ins, params):
        from .._core.meta import abstract
        avals = [abstract(v.value._data) if isinstance(v, Const) else MetaArray(v.shape, v.dtype)
                 for v in ins]
        res = prim.shape(*avals, **params)
        res = res if prim.multiple_results else (res,)
        outs = [self.new_var(s, d) for s, d in res]
        self.nodes.append(Node(prim, ins, params, outs, user_location()))
        tensors = tuple(wrap(TraceTracer(self, v)) for v in outs)
        return tensors if prim.multiple_results else tensors[0]

    def process(self, prim, args, params):
        if prim is copy_to and not self.mine(args[0]) and self.mine(args[1]) and \
                (self.claims_constants or self.made_here(args[0])):
            # a write into a tensor made inside the function (Note [Constants made inside
            # the trace]) or, under capture, into one from outside (Note [Writes into
            # captured tensors] in _ops/inplace.py): it becomes the value, no node
            return wrap(TraceTracer(self, args[1]._data.var))
        return self._emit(prim, [self._operand(a) for a in args], params)

    def process_nullary(self, prim, params):
        return self._emit(prim, [], params)

    def note_write(self, t):
        """Record real tensor ``t`` before capture rebinds it to a traced value (Note
        [Writes into captured tensors] in _ops/inplace.py); other traces record nothing."""
        if self.claims_constants and id(t) not in self.written and not self.mine(t) and \
                not self.made_here(t):
            self.written[id(t)] = (t, t._data, t._version_counter, t.grad_fn, t._output_nr,
                                   t._requires_grad)

    def restore_written(self):
        """Give each recorded tensor back its payload and history; returns
        ``[(tensor, traced final value)]`` in the order of their first writes."""
        out = []
        for t, data, version, grad_fn, output_nr, requires_grad in self.written.values():
            out.append((t, wrap(t._data)))
            t._data, t._version_counter = data, version
            t.grad_fn, t._output_nr, t._requires_grad = grad_fn, output_nr, requires_grad
        self.written.clear()
        return out

    def process_draw(self, prim, args, params):
        if self.mine(args[0]):
            return self._emit(prim, [self._operand(a) for a in args], params)
        return super().process_draw(prim, args, params)   # a state a trace below holds

    def read_rng(self, generator):
        entry = self.rng.get(id(generator))
        if entry is None:
            # the first read: the state becomes an input of the graph (lifted, not read)
            if self.lift_rng is not None:
                t = self.lift_rng(generator)
            else:
                t = wrap(TraceTracer(self, Var(f"rng{len(self.rng)}", STATE_SHAPE, STATE_DTYPE)))
            entry = self.rng[id(generator)] = [generator, t._data.var, t]
        return entry[2]

    def write_rng(self, generator, state):
        self.rng[id(generator)][2] = state


# Note [Dynamic dims]
# ``make_graph(f, dynamic=True)`` makes every dimension of size >= 2 of every tensor input
# a symbol (torch.compile(dynamic=True)); sizes 0 and 1 stay ints, as in PyTorch, and equal
# sizes share a symbol (Note [Duck sizing] in _core/symbolic.py). ``dynamic_dims`` is the
# finer form capture's ``mark_dynamic(t, dim)`` becomes: one entry per flat input leaf (in
# `tree_flatten` order; ignored for non-tensors), each a set of dims made symbolic *and
# marked*: code that needs a marked size as a concrete int raises ConstraintViolationError
# instead of silently specialising (PyTorch's behaviour for mark_dynamic). Both may be
# given: `dynamic` covers the unmarked dims.


def make_graph(func, *, name="forward", dynamic=False, dynamic_dims=None, duck_shape=True):
    """``make_graph(func)(*args)`` traces ``func`` on ``args`` into a `Graph` (like make_fx).

    Works on transformed functions too: ``make_graph(grad(f))(x)`` is the gradient program.
    ``dynamic=True`` or ``dynamic_dims=[{0}, set(), ...]`` (per flat input) trace with
    symbolic sizes, so the graph runs on other sizes (Note [Dynamic dims]); ``duck_shape``
    gives equal input sizes one symbol, PyTorch's default.
    Calling the graph on the tensor leaves of such arguments runs it as one region, a single
    ``graph_call`` node under any transform (Note [Calling a graph] in ``_core/ir.py``);
    ``graph.inline(...)`` binds its primitives one by one instead.
    """
    @functools.wraps(func)
    def wrapper(*args):
        leaves, in_tree = tree_flatten(args)
        if dynamic_dims is not None and len(dynamic_dims) != len(leaves):
            raise ValueError(f"make_graph: dynamic_dims has {len(dynamic_dims)} entries but the "
                             f"arguments flatten to {len(leaves)} leaves (one set of dims per leaf)")
        env = None
        if dynamic or dynamic_dims is not None:
            from .._core.symbolic import ShapeEnv
            env = ShapeEnv(duck_shape=duck_shape, where=user_location)
        interp = push(TraceInterpreter())
        if env is not None:
            env.owner = interp
        try:
            inputs, lifted = [], []
            for i, x in enumerate(leaves):
                if isinstance(x, Tensor):
                    shape = x.shape
                    if env is not None:
                        shape = _symbolic_shape(env, shape, len(inputs), dynamic,
                                                dynamic_dims[i] if dynamic_dims else ())
                    v = Var(f"arg{i}", shape, x._data.dtype)
                    inputs.append(v)
                    lifted.append(wrap(TraceTracer(interp, v), requires_grad=False))
                else:
                    lifted.append(x)
            out = func(*tree_unflatten(lifted, in_tree))
            out_leaves, out_tree = tree_flatten(out)
            outputs = [interp._operand(o) if isinstance(o, Tensor) else o for o in out_leaves]
            # the random states read: trailing inputs, their new values trailing outputs
            # (Note [Graphs with random state] in _core/ir.py)
            for _, var, state in interp.rng.values():
                inputs.append(var)
                outputs.append(interp._operand(state))
        finally:
            pop(interp)
        if env is not None and not env.hints:
            env = None   # every size was 0 or 1: nothing symbolic
        return Graph(inputs, interp.nodes, outputs, interp.consts, in_tree, out_tree, name,
                     env, rng=tuple(g for g, _, _ in interp.rng.values())).check()
    return wrapper


def _symbolic_shape(env, shape, index, dynamic, marked):
    marked = set(marked or ())
    bad = [d for d in marked if not isinstance(d, int) or not -len(shape) <= d < len(shape)]
    if bad:
        raise IndexError(f"make_graph: dynamic_dims[{index}] names dim {bad[0]}, but input "
                         f"{index} has {len(shape)} dimensions")
    marked = {d % len(shape) for d in marked}
    return tuple(env.create_symbol(n, (index, d), marked=d in marked) if dynamic or d in marked
                 else n for d, n in enumerate(shape))
