"""One capture's shared state: the trace, the inputs with their sources, guards, side
effects, grad-mode marks and the shape env; `Capture.wrap` turns a value read from a
source into its symbolic value and installs its guards.

Must not interpret bytecode (symbolic.py) or generate code (codegen.py).
"""
from __future__ import annotations

import collections
import operator
import types

import numpy as np

from .._core.symbolic import Sym
from .._core.tensor import Tensor
from ..func._trace import TraceTracer
from . import contexts, numpy_capture
from .builtins_table import user_code
from .guards import CONSTANT_TYPES, Source
from .values import SymFunction, SymIterator, Unsupported


class Capture:
    """Shared state of one capture: the trace, inputs with sources, guards, side effects."""

    def __init__(self, interp, guards, G, C):
        self.interp, self.guards, self.G, self.C = interp, guards, G, C
        self.inputs = []            # (Var, Source, real tensor)
        self.wrapped = {}           # id(real) -> symbolic value (dedup by identity)
        self.source_of = {}         # id(symbolic object) -> Source (pre-existing objects)
        self.preexisting = {}       # id(symbolic container) -> real container
        self.attr_overlay = {}      # (id(obj), name) -> value written during capture
        self.global_overlay = {}    # name -> value written during capture
        self.side_effects = []      # ("method"|"setattr"|"setitem"|"global", ...)
        self.keepalive = []
        self.dynamic = None         # compile(dynamic=...) (shapes.py, Note [Which dims are dynamic])
        self.frame_state = None     # shapes.FrameState of the code object, for automatic dynamic
        self.shape_env = None       # the ShapeEnv, made at the first symbolic size
        self.tnp_inputs = False     # a numtorch._numpy array was read (numpy_capture)
        from .._core import primitive as _p
        self.grad_initial = self.grad_enabled = _p.grad_mode[0]   # Note [Grad mode in the graph]
        self.grad_marks = []        # (node index, grad enabled from there on)
        self.new_objects = {}       # id -> user objects constructed during capture
        interp.lift_rng = self.lift_rng   # Note [Random state in capture]
        self.tensor_sources = {}    # id(parameter or buffer) -> Source, of modules run natively
        self.train = None           # fullgraph=True: numtorch._aot.fullgraph.TrainCapture
        # [(real tensor, traced final value)] written in place (Note [Writes into captured
        # tensors] in _ops/inplace.py), set when capture ends
        self.written = []
        self.lifted = set()

    def _input_shape(self, real, src):
        """The shape a tensor input is captured with: symbols where dims are dynamic."""
        from . import shapes
        shape = tuple(real.shape)
        dims, marked = shapes.dims_for(real, src.expr, self.dynamic, self.frame_state)
        if not dims:
            return shape
        if self.shape_env is None:
            self.shape_env = shapes.new_env(self.interp)
        return shapes.symbolic_shape(self.shape_env, shape, len(self.inputs), dims, marked)

    def is_trace(self, v):
        return isinstance(v, Tensor) and v._data.__class__ is TraceTracer and \
            v._data.interp is self.interp

    def wrap(self, real, src: Source):
        """The symbolic value for ``real`` read from ``src``; installs its guards."""
        hit = self.wrapped.get(id(real))
        if hit is not None and not isinstance(real, CONSTANT_TYPES):
            return hit
        g = self.guards
        if isinstance(real, Tensor):
            shape = self._input_shape(real, src)
            g.tensor(src, real, {d for d, n in enumerate(shape) if n.__class__ is Sym})
            sym = self.tensor_input(real, src, shape)
        elif type(real) in CONSTANT_TYPES:
            g.constant(src, real)
            return real
        elif type(real) in _ITER_TYPES:
            # an iterator handed to a resume function (a loop broken mid-way): its items,
            # read without consuming it, become a symbolic iterator
            items_src = Source(f"{g.const(_iter_items)}({src.expr})", f"items of {src.words}")
            items = _iter_items(real)
            g.length(items_src, items)
            sym = SymIterator([self.wrap(x, items_src.item(i)) for i, x in enumerate(items)])
        elif type(real) in (list, tuple) or isinstance(real, tuple) and hasattr(real, "_make"):
            g.length(src, real)
            items = [self.wrap(x, src.item(i)) for i, x in enumerate(real)]
            sym = items if type(real) is list else tuple(items) if type(real) is tuple else \
                type(real)._make(items)   # a namedtuple
        elif isinstance(real, dict):
            why = dict_subclass_unsupported(type(real), real)
            if why is not None:
                raise Unsupported(why, "use a plain dict, or use it outside the compiled function")
            sym = _empty_like(real)       # Note [Dict subclasses]
            if all(type(k) in (str, int) for k in real):
                g.dict_keys(src, real)
                for k, x in real.items():
                    sym[k] = self.wrap(x, src.item(k))
            else:                         # Note [Dicts keyed by objects]
                keys = []
                for i, (k, x) in enumerate(real.items()):
                    if type(k) in CONSTANT_TYPES:
                        keys.append(repr(k))
                        sym[k] = self.wrap(x, src.item(k))
                        continue
                    ks = self.wrapped.get(id(k))
                    ksrc = self.source_of.get(id(ks)) if ks is not None else None
                    if ksrc is None:      # not read another way (yet): the object itself
                        ksrc = Source(g.const(k), f"key {i} of {src.words}")
                        ks = self.wrap(k, ksrc)
                    keys.append(ksrc.expr)
                    sym[ks] = self.wrap(x, Source(f"{src.expr}[{ksrc.expr}]",
                                                  f"{src.words}[{ksrc.words}]"))
                g.dict_key_objects(src, real, keys)
            if isinstance(real, collections.defaultdict):
                g.identity(src.attr("default_factory"), real.default_factory)
        elif _fresh_closure(real):
            sym = self._closure_function(real, src)
        elif isinstance(real, (types.FunctionType, types.BuiltinFunctionType, type,
                               types.ModuleType)) or _is_module(real):
            g.identity(src, real)
            sym = real
        elif isinstance(real, types.MethodType):
            g.identity(src.attr("__func__"), real.__func__)
            self.wrap(real.__self__, src.attr("__self__"))
            sym = real
        elif (sym := numpy_capture.wrap_array(self, real, src)) is not None:
            pass                     # a NumPy array: a traced numtorch._numpy array
        else:
            g.type_of(src, real)
            sym = real
        self.wrapped[id(real)] = sym
        self.keepalive.append(real)
        self.source_of[id(sym)] = src
        if sym is not real and isinstance(real, (list, dict)):
            self.preexisting[id(sym)] = real
        return sym

    def note_module(self, module):
        """Record where each parameter and buffer of ``module`` (run natively, so they
        are captured as constants) is read from (Note [Captured tensors are guarded]), and
        guard each submodule's state (Note [Library modules' state is guarded])."""
        src = self.source_of.get(id(module))
        if src is None or id(module) in self.tensor_sources:
            return
        self.tensor_sources[id(module)] = src
        stack = [(module, src, False)]
        while stack:
            m, s, under_native = stack.pop()
            d = m.__dict__
            native = under_native or _runs_natively(m)
            if native:
                self._guard_module_state(m, s)
            else:   # its forward is inlined: what it reads is guarded at its source
                self.guards.add(f"{s.expr}.training is {bool(m.training)!r}",
                                f"{s.words}.training == {bool(m.training)}")
            for group in ("_parameters", "_buffers"):
                for name, t in d.get(group, {}).items():
                    if t is not None:
                        self.tensor_sources.setdefault(id(t), s.attr(group).item(name))
            for name, sub in d.get("_modules", {}).items():
                if sub is not None and id(sub) not in self.tensor_sources:
                    self.tensor_sources[id(sub)] = s.attr("_modules").item(name)
                    stack.append((sub, self.tensor_sources[id(sub)], native))

    def _guard_module_state(self, m, s):
        """One guard on what ``m``'s forward may read besides its tensors: Note [Library
        modules' state is guarded]."""
        names, values = [], []
        for k, v in m.__dict__.items():
            if k in _MODULE_STATE_SKIPPED or not (k in _FORWARD_HOOKS or _state_value(v)):
                continue
            names.append(k)
            values.append(type(v)(v) if isinstance(v, (list, dict)) else v)   # a snapshot
        get = self.guards.const(operator.attrgetter(*names, "__class__"))
        want = self.guards.const((*values, type(m)))
        shown = ", ".join(f"{k}={v!r}" for k, v in zip(names, values)
                          if k not in _FORWARD_HOOKS and k != "_modules")
        self.guards.add(f"{get}({s.expr}) == {want}",
                        f"{s.words} is still a {type(m).__name__} with the same submodules, "
                        f"forward hooks and attributes ({shown})")

    def guard_constants(self, tensors):
        """Guards on the captured ``tensors`` that are parameters or buffers of a module
        read from a source: Note [Captured tensors are guarded]."""
        g = self.guards
        for t in {id(t): t for t in tensors}.values():
            src = self.tensor_sources.get(id(t))
            if src is None or not isinstance(t, Tensor) or t._data.__class__ is not np.ndarray:
                continue
            g.identity(src, t)
            k, d = g.const(t), t._data
            nd = g.const(d.dtype)
            g.add(f"{k}._data.__class__ is {g.const(np.ndarray)} and ({k}._data.dtype is {nd} "
                  f"or {k}._data.dtype == {nd}) and {k}._data.shape == {tuple(d.shape)!r}",
                  f"{src.words} is still a {t.dtype} tensor of size {tuple(d.shape)}")

    def lift_written(self, nodes, inputs):
        """Nodes and inputs with each written-back buffer read from a per-call copy
        instead of as a captured constant: Note [A written buffer is read from a copy]."""
        lift = {}
        g = self.guards
        for t, _ in self.written:
            c = self.interp.const_ids.get(id(t))
            if c is None or t._requires_grad or t._data.__class__ is not np.ndarray:
                continue
            v = lift[id(c)] = self.interp.new_var(tuple(t.shape), t._data.dtype, prefix="buf")
            src = self.tensor_sources.get(id(t))
            inputs.append((v, Source(f"{g.const(_copy_of)}({g.const(t)})",
                                     f"a copy of {src.words if src else 'a captured tensor'}"),
                           t))
        self.lifted = {id(v) for v in lift.values()}   # read from copies: never differentiable
        if not lift:
            return nodes
        from .._core.ir import Node
        return [Node(n.prim, [lift.get(id(x), x) for x in n.ins], n.params, n.outs, n.where)
                if any(id(x) in lift for x in n.ins) else n for n in nodes]

    def tensor_input(self, real, src, shape=None):
        """A new graph input for Tensor ``real`` read by ``src`` (guards are the caller's)."""
        from ..func._trace import TraceTracer as TT
        from .._core.tensor import wrap as twrap
        v = self.interp.new_var(tuple(real.shape) if shape is None else shape,
                                real._data.dtype, prefix="arg")
        self.inputs.append((v, src, real))
        return twrap(TT(self.interp, v), requires_grad=False)


    # Note [Random state in capture]
    # A draw in the captured code reads its generator's state (Note [Random state as a
    # value] in _prims/random.py). The first read makes the state a graph input whose source
    # reads the generator's state when the compiled frame runs (`read_state`: the live one,
    # or an enclosing trace's); the state after the frame's last draw is a graph output that
    # the frame writes back (`write_state`) with its other side effects (codegen.py). So
    # every backend compiles an ordinary pure graph, a compiled function run after
    # manual_seed(s) draws eager's numbers, and two calls draw different ones. No guard: a
    # state's type never changes. A generator the frame reads from somewhere (an argument,
    # a global) is re-read there on each run, so another generator of the same type draws
    # its own numbers; one reached only inside numtorch (the default one) is held as is.
    def lift_rng(self, generator):
        """A graph input for ``generator``'s state, read at each run of the frame."""
        from .._core.tensor import wrap as twrap
        from .._prims.random import STATE_SHAPE, read_state
        g = self.guards
        where = self.source_of.get(id(generator))   # an argument, a global, ...: re-read
        gen = where.expr if where is not None else g.const(generator)
        src = Source(f"{g.const(read_state)}({gen})", f"the state of {generator!r}")
        self.side_effects.append(("rng", generator, gen))
        return self.tensor_input(twrap(generator.state_array()), src, STATE_SHAPE)

    def _closure_function(self, real, src):
        """A user closure read from ``src`` (Note [Closures by code, not identity])."""
        g, e = self.guards, src.expr
        g.add(f"type({e}) is {g.const(types.FunctionType)} and {e}.__code__ is "
              f"{g.const(real.__code__)}", f"{src.words} is a function of the same code "
              f"({real.__code__.co_name})")
        g.add(f"{e}.__globals__ is {g.const(real.__globals__)}",
              f"{src.words} has the same globals")
        g.add(f"{e}.__defaults__ == {g.const(real.__defaults__)}",
              f"{src.words}.__defaults__ == {real.__defaults__!r}")
        g.add(f"{e}.__kwdefaults__ == {g.const(real.__kwdefaults__)}",
              f"{src.words}.__kwdefaults__ == {real.__kwdefaults__!r}")
        cells = tuple(("real", k, c, f"{e}.__closure__[{k}]")
                      for k, c in enumerate(real.__closure__))
        return SymFunction(real.__code__, real.__globals__, real.__name__, real.__defaults__,
                           real.__kwdefaults__, cells)


# Note [Captured tensors are guarded]
# A module of numtorch's own (nn.Linear, ...) called in the compiled region runs natively
# on the symbolic values, so its parameters and buffers enter the graph as captured
# constants, not inputs read from sources. They are still guarded, as Dynamo guards them:
# (1) where the module was read from a source, the tensor is the one at
# ``<module>._parameters[name]`` (``module.weight = nn.Parameter(...)`` recompiles, as it
# would change the result), and (2) the tensor still holds an array of the captured dtype
# and shape (``module.double()`` and ``param.data = t`` replace the array: a new dtype or
# shape recompiles; a new array of the same type is read by the graph at the next call,
# Note [Captured tensors are read per call] in numtorch/_inductor/numpy_codegen.py).
# Each submodule's ``training`` flag is guarded too (``model.eval()`` recompiles: BatchNorm
# and Dropout read it natively, so the graph bakes it in).
# Values are not guarded: an optimizer's in-place update is what the graph must see.
# Other captured tensors (made during the capture, or reached without a source) get no
# guard; the graph still reads them per call, and a changed dtype or shape is an error.
# Cost, measured: about 0.2 µs per parameter on a cache hit (four for a two-layer MLP).


# Note [A written buffer is read from a copy]
# A buffer the frame writes (Note [Writes into captured tensors] in _ops/inplace.py) is
# read by the graph and then overwritten in place by the generated write-back. Were it a
# captured constant, the graph's autograd node (one per compiled region) would have saved
# the buffer itself: its backward would see the new value, and the version check fails
# ("modified by an inplace operation") although eager BatchNorm's backward never reads its
# running statistics. So the graph reads a per-call copy, an extra input: the node saves
# the value the forward read, as PyTorch's functionalized graph does, and the buffer keeps
# its storage (views and references of it stay live). The copy costs one buffer per call
# (BatchNorm: one float per channel).
# Note [Library modules' state is guarded]
# numtorch's own modules run natively in a capture (their forward is not inlined), so the
# reads of their attributes leave no sources: the graph holds what BatchNorm's momentum and
# eps, Dropout's p, a Conv's stride or a LeakyReLU's slope were at capture time, the
# submodules a Sequential held and the forward hooks that ran. Dynamo inlines the forward
# and guards each attribute it reads; here every such attribute is guarded instead (of each
# module that runs natively, and of every module under one; a user module whose forward is
# inlined keeps its sourced guards and one on its training flag): one
# guard per module compares an attrgetter of its plain attributes (constants, tuples and
# lists of them, functions and classes, which compare by identity), its ``_modules`` dict
# (submodules compare by identity), its forward-hook dicts and its class with a snapshot
# taken at capture. A change recompiles instead of returning stale results. Tensors are
# guarded separately (Note [Captured tensors are guarded]); attributes of other types
# (an ndarray, a user object) are not guarded, and are listed in the closing notes as such.
_FORWARD_HOOKS = frozenset({"_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                            "_forward_hooks", "_forward_hooks_with_kwargs",
                            "_forward_hooks_always_called", "_modules"})
_MODULE_STATE_SKIPPED = frozenset({"_parameters", "_buffers", "_non_persistent_buffers_set",
                                   "_state_dict_hooks", "_state_dict_pre_hooks",
                                   "_load_state_dict_pre_hooks",
                                   "_load_state_dict_post_hooks", "_backward_hooks",
                                   "_backward_pre_hooks"})


def _runs_natively(m):
    """Whether module ``m`` runs natively when called in a capture (calls.py): numtorch's
    own modules, and any module with forward hooks."""
    return not user_code(type(m)) or bool(m._forward_hooks or m._forward_pre_hooks)


def _state_value(v, depth=0):
    """Whether ``v`` compares with ``==`` by value or identity, cheaply and to a bool."""
    if type(v) in CONSTANT_TYPES:
        return not (type(v) is float and v != v)     # nan != nan: it would never match
    if type(v) in (tuple, list) and depth < 2 and len(v) <= 16:
        return all(_state_value(x, depth + 1) for x in v)
    return isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type))


def _copy_of(t):
    from .._core.tensor import wrap
    return wrap(t._data.copy())


# Note [Dict subclasses]
# A dict subclass read from outside (OrderedDict, defaultdict, a user's ``class D(dict)``)
# becomes a symbolic container of its own type, as a plain dict does: an instance made
# without __init__ holding the symbolic values, guarded by its type and keys (and, for a
# defaultdict, its default_factory). Its C methods then run on it for real (move_to_end,
# popitem, items, ...), its Python methods are inlined, and mutations are replayed on the
# real one. A defaultdict's missing key runs default_factory (inlined when it is the
# user's) and is a store like any other (symbolic.py, BINARY_SUBSCR). Not traced, and a
# graph break naming why: a subclass that overrides one of dict's methods in Python
# (``__getitem__``, ``__missing__``, ``get``, ...: C code would call it natively on
# symbolic values; collections.Counter is one), and an instance with attributes of its own.
_DICT_METHODS = frozenset(dir(dict)) - {
    "__init__", "__repr__", "__str__", "__doc__", "__module__", "__dict__", "__weakref__",
    "__class_getitem__", "__init_subclass__", "__subclasshook__", "__format__"}


def dict_subclass_unsupported(cls, real=None):
    """Why an instance of dict subclass ``cls`` (``real``, if given) is not traced, or None."""
    if cls is dict:
        return None
    for klass in cls.__mro__:
        if klass in (dict, object, collections.OrderedDict, collections.defaultdict):
            continue
        for name, attr in vars(klass).items():
            if name in _DICT_METHODS and isinstance(attr, (types.FunctionType, classmethod,
                                                            staticmethod, property)):
                return (f"a {cls.__name__}, which overrides dict.{name} in Python "
                        f"({klass.__qualname__})")
    if real is not None and getattr(real, "__dict__", None):
        return f"a {cls.__name__} with instance attributes ({', '.join(vars(real))})"
    return None


def _empty_like(real):
    """A new, empty container of ``real``'s dict type, made without its __init__."""
    cls = type(real)
    if cls is dict:
        return {}
    if isinstance(real, collections.defaultdict):
        new = cls.__new__(cls)
        new.default_factory = real.default_factory
        return new
    return cls.__new__(cls)


# Note [Dicts keyed by objects]
# A dict read from outside whose keys are objects (a momentum buffer per parameter, as in
# a hand-written optimizer) becomes a symbolic dict keyed by the keys' symbolic values: a
# tensor key is the same trace tensor as that tensor read any other way (Capture.wrap
# dedups by identity), so ``state[p]`` with ``p`` from a parameter list finds its entry.
# The guard is PyTorch's: the same key objects, by identity, in the same order, where a
# key already read another way (an item of a list argument, a global) is compared with
# what that source reads now, so a dict built afresh each call from its arguments (handed
# to a resume function) does not recompile; other keys are the same objects as at capture.
# Each value is read back as ``d[<key>]``, and stores into the dict are replayed on the
# real one with the keys' real objects (codegen.py), so no trace value reaches it.


# Note [Closures by code, not identity]
# An inner function made afresh on each call (``def inner(y): return y + s``) that reaches
# a frame from outside (an argument of a resume function, an element of a list argument)
# would fail an identity guard every call. Like Dynamo, such a closure is guarded by its
# code object, globals and constant defaults, and its cells are read through the function
# (``L[2].__closure__[0].cell_contents``): so one entry serves every call, and writes to a
# cell go to the cell the function has at run time. Functions with marks (allow/disallow,
# compiled wrappers) or non-constant defaults keep the identity guard.


def _fresh_closure(v):
    from . import markers
    if not isinstance(v, types.FunctionType) or not v.__closure__ or not user_code(v) or \
            contexts.is_contextmanager_function(v):   # a @contextmanager: one per function
        return False
    if markers.is_allowed(v) or markers.is_disallowed(v) or markers.original_of(v) is not None:
        return False
    d = (v.__defaults__ or ()) + tuple((v.__kwdefaults__ or {}).values())
    return all(type(x) in CONSTANT_TYPES for x in d)


_ITER_TYPES = (type(iter([])), type(iter(())), type(iter(range(0))))


def _iter_items(it):
    """The items an iterator has left, without advancing it."""
    fn, args, *state = it.__reduce__()
    seq = list(args[0]) if args else []
    return seq[state[0]:] if state else seq


def _is_module(v):
    from ..nn.modules.module import Module
    return isinstance(v, Module)


def _has_trace(v, cap, depth=0):
    if cap.is_trace(v):
        return True
    if depth < 3 and type(v) in (list, tuple):
        return any(_has_trace(x, cap, depth + 1) for x in v)
    if depth < 3 and type(v) is dict:
        return any(_has_trace(x, cap, depth + 1) for x in v.values())
    return False
