"""Code generation: the Python function that runs one cache entry.

After a capture, the symbolic state (return value, or the live stack and locals at a graph
break) is turned back into real objects by *generated Python source*: a function
``___run(L, G, C)`` that reads the graph's inputs from their sources, calls the compiled
graph, rebuilds containers around its outputs, replays side effects in program order, and
at a break runs the breaking instruction natively and calls the resume function.

Must not interpret bytecode.
"""
from __future__ import annotations

import math
import types

import numpy as np

from .._core import primitive as _prim
from .._core.symbolic import Sym
from .._core.tensor import Size, Tensor
from . import contexts, numpy_capture
from .guards import CONSTANT_TYPES
from .values import NULL, LazyArg, Unsupported, SymCell, SymFunction, SymIterator, UNBOUND


class Codegen:
    def __init__(self, cap, graph_inputs):
        self.cap = cap
        self.scope = {}
        self.lines = []
        self.outputs = []             # trace tensors the graph must return, in order
        self._out_index = {}
        self._memo = {}
        self._input_src = {id(v): src for v, src, _ in graph_inputs}
        self._tmp = 0

    def const(self, obj):
        name = f"___c{len(self.scope)}"
        self.scope[name] = obj
        return name

    def emit(self, line):
        self.lines.append("    " + line)

    def tmp(self):
        self._tmp += 1
        return f"___t{self._tmp}"

    def expr(self, v):
        """A Python expression evaluating to the real value of symbolic ``v``."""
        cap = self.cap
        if v.__class__ is LazyArg:
            return v.source.expr
        if cap.is_trace(v):
            var = v._data.var
            src = self._input_src.get(id(var))
            if src is not None:
                return src.expr
            i = self._out_index.get(id(var))
            if i is None:
                i = self._out_index[id(var)] = len(self.outputs)
                self.outputs.append(var)
            return f"___o[{i}]"
        if type(v) in CONSTANT_TYPES:
            if type(v) is float and (v != v or v in (float("inf"), float("-inf"))):
                return self.const(v)
            return repr(v)
        if v.__class__ is Sym:       # a symbolic size: computed from the inputs' shapes
            from .shapes import python_expr
            self.scope["math"] = math
            return f"({python_expr(v, cap.shape_env, [s for _, s, _ in cap.inputs])})"
        if id(v) in self._memo:
            return self._memo[id(v)]
        if id(v) in cap.preexisting:
            return cap.source_of[id(v)].expr
        t = type(v)
        if t is tuple or t is Size or isinstance(v, tuple) and hasattr(t, "_make"):
            inner = ", ".join(self.expr(x) for x in v)
            inner = f"({inner}{',' if len(v) == 1 else ''})"
            if t is tuple:
                return inner
            return f"{self.const(t)}._make({inner})" if t is not Size else \
                f"{self.const(Size)}({inner})"
        if t in (list, dict, set):
            if t is list:
                body = "[" + ", ".join(self.expr(x) for x in v) + "]"
            elif t is dict:
                body = "{" + ", ".join(f"{self.expr(k)}: {self.expr(x)}" for k, x in v.items()) + "}"
            else:
                body = "{" + ", ".join(self.expr(x) for x in v) + "}" if v else "set()"
            name = self.tmp()
            self.emit(f"{name} = {body}")
            self._memo[id(v)] = name
            return name
        if t is slice:
            return f"slice({self.expr(v.start)}, {self.expr(v.stop)}, {self.expr(v.step)})"
        if isinstance(v, SymIterator):
            return f"iter({self.expr(v.items[v.pos:])})"
        if isinstance(v, SymFunction):
            cells = ", ".join(self._cell_expr(c) for c in (v.closure or ()))
            name = self.tmp()
            self.emit(f"{name} = ___mkfn({self.const(v.code)}, {self.const(v.f_globals)}, "
                      f"{v.__name__!r}, {self.expr(tuple(v.defaults)) if v.defaults else None}, "
                      f"({cells}{',' if v.closure and len(v.closure) == 1 else ''}))")
            if v.kwdefaults:
                self.emit(f"{name}.__kwdefaults__ = {self.expr(dict(v.kwdefaults))}")
            self._memo[id(v)] = name
            self.scope["___mkfn"] = types.FunctionType
            return name
        if t is contexts.CtxExit:       # a user context manager's exit, at a break
            return f"{self.expr(v.obj)}.__exit__"
        if t is contexts.SymGeneratorCM:   # a @contextmanager call not entered yet
            return f"{self.const(v.cm_fn)}(*{self.expr(v.args)}, **{self.expr(v.kwargs)})"
        if t is contexts.GenExit:
            raise Unsupported("a graph break inside the with block of a @contextmanager "
                              "function (its generator is suspended in capture)",
                              "move the break out of the with block")
        if numpy_capture.is_array(v):   # Note [Which array comes out]
            name = self._memo[id(v)] = self.tmp()
            self.emit(f"{name} = {numpy_capture.materialize(self, v)}")
            return name
        if id(v) in cap.new_objects:   # Note [Objects made during capture] (calls.py)
            name = self.tmp()
            self._memo[id(v)] = name
            self.scope["___copy"] = _fresh_copy
            self.emit(f"{name} = ___copy({self.const(v)})")
            for (oid, attr), x in list(cap.attr_overlay.items()):
                if oid == id(v):
                    self.emit(f"{name}.{attr} = {self.expr(x)}")
            return name
        if isinstance(v, Tensor):
            return self.const(v)    # a real tensor made during capture (no trace inputs)
        src = cap.source_of.get(id(v))
        if src is not None:
            return src.expr
        if isinstance(v, (types.GeneratorType, *_STATEFUL_ITERATORS)):
            # made during capture and consumed by it: a constant would be exhausted (or
            # half-consumed) on the next call. The frame runs eagerly instead.
            raise Unsupported(f"a {type(v).__name__} made in the compiled region cannot "
                              f"cross a graph break", "iterate it before the break")
        return self.const(v)

    def _cell_expr(self, c):
        """A real cell for a frame cell: one per SymCell per run (shared by every inner
        function and resume function using it), the real one for a real cell."""
        if isinstance(c, SymCell):
            name = self._memo.get(id(c))
            if name is None:
                name = self._memo[id(c)] = self.tmp()
                self.scope["___CellType"] = types.CellType
                self.emit(f"{name} = ___CellType({self.expr(c.value)})" if c.bound
                          else f"{name} = ___CellType()")
            return name
        return c[3] or self.const(c[2])

    def closure_expr(self, code, cells):
        """The closure of a resume function of ``code``: its cells, then ``C``."""
        if not code.co_cellvars:
            return "C"
        parts = [self._cell_expr(cells[n]) for n in code.co_cellvars]
        return f"({', '.join(parts)},) + tuple(C)"

    def side_effects(self):
        for t, value in self.cap.written:   # Note [Writes into captured tensors]
            self.scope["___write_back"] = _write_back
            self.emit(f"___write_back({self.const(t)}, {self.expr(value)})")
        for eff in self.cap.side_effects:
            kind = eff[0]
            if kind == "method":
                _, owner, name, args, kwargs = eff
                a = [self.expr(x) for x in args] + [f"{k}={self.expr(x)}" for k, x in kwargs.items()]
                self.emit(f"{self.expr(owner)}.{name}({', '.join(a)})")
            elif kind == "setattr":
                _, obj, name, v = eff
                self.emit(f"setattr({self.expr(obj)}, {name!r}, {self.expr(v)})")
            elif kind == "setitem":
                _, c, k, v = eff
                self.emit(f"{self.expr(c)}[{self.expr(k)}] = {self.expr(v)}")
            elif kind == "delitem":
                _, c, k = eff
                self.emit(f"del {self.expr(c)}[{self.expr(k)}]")
            elif kind == "global":
                _, name, v = eff
                self.emit(f"G[{name!r}] = {self.expr(v)}")
            elif kind == "cell":
                _, cell, v, where = eff
                self.emit(f"{where or self.const(cell)}.cell_contents = {self.expr(v)}")
            elif kind == "rng":   # Note [Random state in capture] (capture.py)
                _, gen, gen_expr = eff
                from .._prims.random import write_state
                state = self.cap.interp.rng[id(gen)][2]
                self.emit(f"{self.const(write_state)}({gen_expr}, {self.expr(state)})")
        if self.cap.grad_enabled != self.cap.grad_initial:
            # a grad-mode block still open at a break (or set_grad_enabled called bare):
            # its mode holds from here on (Note [Grad mode in the graph])
            self.emit(f"{self.const(_prim.grad_mode)}[0] = {self.cap.grad_enabled!r}")

    def resume_args(self, frame_locals, stack):
        """Expressions for a resume function's arguments; the unbound local indices."""
        unbound = [i for i, v in enumerate(frame_locals) if v is UNBOUND]
        args = ["None" if v is UNBOUND else self.expr(v) for v in frame_locals]
        args += ["None" if v is NULL else self.expr(v) for v in stack]
        kinds = ["null" if v is NULL else "value" for v in stack]
        return args, kinds, unbound

    def build(self, graph_call, detach=(), enable_grad=False, keep_history=()):
        """The ``___run`` function: graph call first, then the emitted lines. ``detach``:
        indices of graph outputs that carry no derivative (computed under no_grad);
        ``enable_grad``: run the graph with grad enabled (Note [Grad mode in the graph]);
        ``keep_history``: sources of inputs written under no_grad, whose autograd history
        the call must not change (Note [Writes under no_grad] in eval_frame.py)."""
        head = ["def ___run(L, G, C):"]
        if graph_call is not None and keep_history:
            self.scope["___history"] = _history
            self.scope["___restore_history"] = _restore_history
            head.append(f"    ___h = ___history(({', '.join(keep_history)},))")
        if graph_call is not None and enable_grad:
            # grad is enabled somewhere inside a frame entered with it disabled: run the
            # graph recording (its disabled parts read through stop_gradient)
            self.scope["___enable_grad"] = _enable_grad
            head.append("    with ___enable_grad():")
            head.append(f"        ___o = ___graph({', '.join(graph_call)})")
        elif graph_call is not None:   # a graph of captured constants only has no inputs
            head.append(f"    ___o = ___graph({', '.join(graph_call)})")
        if graph_call is not None and keep_history:
            head.append("    ___restore_history(___h)")
        if detach:
            self.scope["___detach"] = _detach_outputs
            head.append(f"    ___o = ___detach(___o, {tuple(detach)!r})")
        src = "\n".join(head + self.lines) + "\n"
        self.scope.update(self.cap.guards.consts)   # sources may name guard constants
        exec(compile(src, "<numtorch compiled frame>", "exec"), self.scope)
        fn = self.scope["___run"]
        fn.text = src
        return fn


_STATEFUL_ITERATORS = (type(iter([])), type(iter(())), type(iter(range(0))), type(iter({})),
                       map, filter, zip, enumerate, reversed)


def _write_back(t, value):
    """Make captured tensor ``t`` hold its new value ``value``, a graph output (Note
    [Writes into captured tensors] in _ops/inplace.py): as eager's in-place op would."""
    d, v = t._data, value._data
    if d.__class__ is np.ndarray and v.__class__ is np.ndarray and not value._requires_grad:
        np.copyto(d, v, casting="unsafe")
        t._version_counter.value += 1
    else:    # history to record, or a transform's tensors: the op layer's write
        from .._ops.inplace import assign
        assign(t, value)


def _history(tensors):
    return [(t, t.grad_fn, t._output_nr, t._requires_grad) for t in tensors]


def _restore_history(saved):
    for t, grad_fn, output_nr, requires_grad in saved:
        t.grad_fn, t._output_nr, t._requires_grad = grad_fn, output_nr, requires_grad


def _enable_grad():
    from ..autograd.grad_mode import enable_grad
    return enable_grad()


def _detach_outputs(outs, indices):
    outs = list(outs)
    for i in indices:
        if outs[i].requires_grad:
            outs[i] = outs[i].detach()
    return outs


def _fresh_copy(obj):
    """A new object like ``obj`` (made during capture) without calling its __init__."""
    cls = type(obj)
    new = cls.__new__(cls)
    if isinstance(obj, BaseException):
        new.args = obj.args
    if hasattr(obj, "__dict__"):
        new.__dict__.update(obj.__dict__)
    return new
