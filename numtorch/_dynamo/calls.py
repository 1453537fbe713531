"""Calls during capture: what is inlined, what is called for real, what breaks the graph.

- user Python functions, methods of user classes, user ``nn.Module.forward``, functions
  made during capture: *inlined* (a new symbolic `Frame` over the callee's bytecode);
- numtorch's own functions, methods, modules and classes, pure builtins, ``math``/
  ``operator``, container methods: *called for real* on the symbolic values;
- print, unknown C functions, ``graph_break()``, disallowed or disabled functions, class
  construction of user classes: `Unsupported` → a graph break.

Must not generate code.
"""
from __future__ import annotations

import builtins
import contextlib
import functools
import inspect
import itertools
import types

from .._core.tensor import Tensor
from . import contexts, markers, numpy_capture
from .builtins_table import (_DYNAMO, MUTATING_METHODS, PURE_TYPES, is_numtorch_callable,
                             pure_c_function, user_code)
from ..autograd.grad_mode import set_grad_enabled
from .capture import _has_trace, _is_module
from .symbolic import Frame
from .values import _UNBOUND, GradExit, SymCell, SymFunction

_MAX_INLINE_DEPTH = 64


def call_function(frame, fn, args, kwargs):
    cap = frame.cap
    if fn.__class__ is GradExit:           # the end of a captured grad-mode with block
        frame.set_grad(fn.prev)
        return False
    if fn.__class__ in (contexts.CtxExit, contexts.GenExit):   # the end of a with block
        return fn.exit(frame, args, kwargs)
    if contexts.is_contextmanager_function(fn):
        return contexts.SymGeneratorCM(fn, tuple(args), dict(kwargs))
    if fn is set_grad_enabled:             # Note [Grad mode in the graph]
        if len(args) + len(kwargs) != 1 or type(([*args, *kwargs.values()])[0]) is not bool:
            frame.unsupported("set_grad_enabled with a non-constant mode",
                              "pass True or False")
        obj = object.__new__(set_grad_enabled)
        obj._prev, obj._value = cap.grad_enabled, ([*args, *kwargs.values()])[0]
        frame.set_grad(obj._value)
        return obj
    if cap.train is not None:              # fullgraph=True: zero_grad, backward, step
        from .._aot.fullgraph import NOT_MINE
        out = cap.train.call(frame, fn, args, kwargs)
        if out is not NOT_MINE:
            return out
    if markers.is_disallowed(fn):
        frame.unsupported(f"call to {_name(fn)}, which is disallowed in the graph "
                          f"(disallow_in_graph / disable)",
                          "this is by request; remove the mark to capture it")
    if fn is markers.graph_break:
        frame.unsupported("graph_break() was called", "remove the graph_break() call")
    if markers.is_allowed(fn) or _dynamo_api(fn):
        return frame.call_real(fn, args, kwargs, _name(fn))
    if numpy_capture.is_numpy_callable(fn):     # np.sum → numtorch._numpy.sum, or a break
        return numpy_capture.numpy_call(frame, fn, args, kwargs)
    if numpy_capture.is_bridge(cap, fn, args):   # t.numpy(), torch.from_numpy(a)
        return numpy_capture.bridge(frame, fn, args, kwargs)
    if fn in (builtins.type, builtins.isinstance) and args and \
            numpy_capture.is_symbolic_array(args[0], cap):
        return numpy_capture.type_query(cap, fn, args)
    compiled = markers.original_of(fn)
    if compiled is not None:
        fn = compiled        # a compiled function called from compiled code: inline it
    if isinstance(fn, SymFunction):
        return inline(frame, fn.code, fn.f_globals, args, kwargs, fn.defaults,
                      fn.kwdefaults, fn.closure, fn.__name__)
    if isinstance(fn, types.MethodType):
        self_ = fn.__self__
        if fn.__name__ in ("_make", "_replace", "_asdict") and \
                _namedtuple(self_ if isinstance(self_, type) else type(self_)):
            return frame.call_real(fn, args, kwargs, fn.__name__)   # they only repack
        if isinstance(fn.__func__, types.FunctionType) and user_code(fn.__func__):
            return call_function(frame, fn.__func__, [self_] + list(args), kwargs)
        return frame.call_real(fn, args, kwargs, _name(fn))
    if isinstance(fn, types.FunctionType):
        if is_numtorch_callable(fn):
            return frame.call_real(fn, args, kwargs, _name(fn))
        return inline(frame, fn.__code__, fn.__globals__, args, kwargs, fn.__defaults__ or (),
                      fn.__kwdefaults__ or {}, fn.__closure__, fn.__name__, real=fn)
    if _is_module(fn):
        if fn._forward_hooks or fn._forward_pre_hooks or not user_code(type(fn)):
            return frame.call_real(fn, args, kwargs, type(fn).__name__)
        fwd = type(fn).forward
        return call_function(frame, fwd, [fn] + list(args), kwargs)
    if isinstance(fn, functools.partial):
        return call_function(frame, fn.func, list(fn.args) + list(args),
                             {**fn.keywords, **kwargs})
    if fn is builtins.getattr:
        if len(args) == 3:
            try:
                return frame.load_attr(args[0], args[1])
            except Exception:
                return args[2]
        return frame.load_attr(*args)
    if fn is builtins.setattr:
        obj, name, v = args
        frame.store_attr(obj, name, v)
        return None
    if fn is builtins.iter and len(args) == 1:
        from .values import SymIterator
        return SymIterator(frame.iterate(args[0]))
    if fn is builtins.next and args and type(args[0]).__name__ == "SymIterator":
        it = args[0]
        if it.pos < len(it.items):
            it.pos += 1
            return it.items[it.pos - 1]
        if len(args) > 1:
            return args[1]
        frame.unsupported("next() on an exhausted iterator", "check the loop bounds")
    if fn in (builtins.list, builtins.tuple, builtins.set, builtins.dict) and args and \
            not isinstance(args[0], (dict,)) and type(args[0]).__name__ == "SymIterator":
        return fn(frame.iterate(args[0]))
    if fn in (builtins.map, builtins.filter, builtins.sorted, builtins.min, builtins.max) \
            and (fn in (builtins.map, builtins.filter) or "key" in kwargs):
        return _higher_order(frame, fn, args, kwargs)
    if fn in _ITERTOOLS and not any(_user_callable(a) for a in list(args) + list(kwargs.values())):
        # Note [itertools and reduce]: the combinators' items, computed now over the
        # symbolic items of their iterables, as a symbolic iterator
        from .values import SymIterator
        n_iterables = 0 if fn is itertools.repeat else 1 if fn is itertools.islice else len(args)
        cols = [frame.iterate(a) if i < n_iterables else a for i, a in enumerate(args)]
        return SymIterator(list(fn(*cols, **kwargs)))
    if fn is functools.reduce:
        return _reduce(frame, *args, **kwargs)
    if fn in (builtins.enumerate, builtins.zip, builtins.reversed, builtins.sorted,
              builtins.sum, builtins.min, builtins.max, builtins.any, builtins.all,
              builtins.list, builtins.tuple) and args:
        args = [frame.iterate(a) if type(a).__name__ == "SymIterator" or
                (fn is not builtins.sum and cap.is_trace(a) and fn is not builtins.reversed)
                else a for a in args]
        if any(_user_callable(v) for v in kwargs.values()):
            frame.unsupported(f"{fn.__name__} with a user key function",
                              "sort outside the compiled function")
        return frame.call_real(fn, args, kwargs, fn.__name__)
    if fn is builtins.print:
        frame.unsupported("builtin: print (a side effect that must happen at run time)",
                          "move the print out of the compiled function, or accept the break")
    if pure_c_function(fn):
        if any(_user_callable(a) for a in args):
            frame.unsupported(f"{_name(fn)} with a user function argument",
                              "write the loop explicitly")
        return frame.call_real(fn, args, kwargs, _name(fn))
    if isinstance(fn, types.BuiltinMethodType) or type(fn).__name__ in (
            "method-wrapper", "method_descriptor"):
        owner = getattr(fn, "__self__", None)
        name = getattr(fn, "__name__", "")
        if name == "__init__" and id(owner) in cap.new_objects:
            pass   # a base class's C __init__ (object, BaseException) on a new object
        elif id(owner) in cap.preexisting and name in MUTATING_METHODS:
            # a mutation of a container that existed before the call: applied to the
            # symbolic copy now, replayed on the real object by the generated code
            cap.side_effects.append(("method", owner, name, list(args), dict(kwargs)))
        elif owner is not None and not isinstance(owner, (list, dict, set, str, tuple, int,
                                                           float, bytes, frozenset)) \
                and not isinstance(owner, Tensor) and not is_numtorch_callable(type(owner)):
            frame.unsupported(f"method {name} of {type(owner).__name__}",
                              "call it outside the compiled function")
        return frame.call_real(fn, args, kwargs, name)
    if isinstance(fn, type):
        if fn in PURE_TYPES or is_numtorch_callable(fn) or fn is contextlib.nullcontext or \
                issubclass(fn, BaseException) and not user_code(fn):
            return frame.call_real(fn, args, kwargs, fn.__name__)
        if fn is builtins.super:
            return _super(frame, args)
        if _namedtuple(fn):
            # a namedtuple: its generated __new__ only packs the items (rebuilt by
            # ``_make`` in the generated code, codegen.py)
            return frame.call_real(fn, args, kwargs, fn.__name__)
        if fn is functools.partial and not any(_has_trace(a, cap) for a in
                                               list(args) + list(kwargs.values())):
            return functools.partial(*args, **kwargs)   # of constants: called by inlining
        return construct(frame, fn, args, kwargs)
    if is_numtorch_callable(fn) or is_numtorch_callable(type(fn)):
        return frame.call_real(fn, args, kwargs, _name(fn))
    frame.unsupported(f"call to an unknown C function {_name(fn)}",
                      f"mark it with numtorch._dynamo.allow_in_graph if it only uses tensor "
                      f"ops, or call it outside the compiled function")


# Note [Objects made during capture]
# A user class called in compiled code is constructed as CPython would: its (C) __new__
# makes a real, fresh object at capture time and its __init__ is inlined. Attribute writes
# on it go to the capture's overlay only (nobody else can see the object), so they are
# no side effects. If the object outlives the graph (returned, stored, handed to a resume
# function), the generated code rebuilds it per call: a copy of the fresh object (what C
# __init__s set, e.g. an exception's args) with the overlay's attributes (codegen.py).
# nn.Module subclasses are not constructed this way (their __setattr__ registers
# parameters): that remains a graph break.


def construct(frame, cls, args, kwargs):
    from ..nn.modules.module import Module
    new = getattr(cls.__new__, "__func__", cls.__new__)
    if not _user_class(cls) or issubclass(cls, Module) or type(cls) is not type or \
            isinstance(new, types.FunctionType):
        frame.unsupported(f"construction of {cls.__name__} (only plain user classes and "
                          f"exceptions are constructed in capture)",
                          "build the object outside the compiled function and pass it in")
    try:
        obj = cls.__new__(cls)
    except Exception as e:
        frame.unsupported(f"{cls.__name__}.__new__ raised {e!r}", "construct it outside")
    frame.cap.new_objects[id(obj)] = obj
    init = cls.__init__
    if isinstance(init, types.FunctionType):
        call_function(frame, init, [obj, *args], kwargs)
    elif args or kwargs:
        if issubclass(cls, BaseException):
            init(obj, *args, **kwargs)    # BaseException.__init__: sets args (constants)
        else:
            frame.unsupported(f"{cls.__name__}() takes no arguments", "fix the call")
    return obj


def _user_class(cls):
    """Written in Python by the user (a class exec'd without ``__name__`` claims to be a
    builtin: its Python methods tell)."""
    if user_code(cls):
        return True
    return not cls.__module__.startswith("numtorch") and any(
        isinstance(v, types.FunctionType) and user_code(v)
        for k in cls.__mro__[:-1] for v in vars(k).values())


def _super(frame, args):
    """``super()`` (zero-argument: the ``__class__`` cell and the first argument) or
    ``super(cls, obj)``: a real super object whose methods are inlined when called."""
    if args:
        return builtins.super(*args)
    cell = frame.cells.get("__class__")
    if cell is None or isinstance(cell, SymCell):
        frame.unsupported("super() outside a method", "pass the class explicitly")
    first = frame.locals[0] if frame.locals else None
    if first.__class__.__name__ == "LazyArg":
        first = frame.locals[0] = frame.cap.wrap(first.value, first.source)
    return builtins.super(cell[2].cell_contents, first)


# Note [itertools and reduce]
# itertools' combinators are C iterators over their arguments' items: with those items
# symbolic (trace tensors, lists of them) they run now, at capture, on the symbolic items
# and their results become a symbolic iterator, as map/filter do (the items are only
# rearranged, never computed, so nothing is baked in). Their iterable arguments are the
# frame's iterables (repeat's object and islice's bounds are taken as they are); a user function among
# them (accumulate's func, starmap's) is a graph break. functools.reduce calls its
# function (inlined when it is the user's) along the items, as a loop would.
_ITERTOOLS = {itertools.chain, itertools.chain.from_iterable, itertools.product,
              itertools.permutations, itertools.combinations,
              itertools.combinations_with_replacement, itertools.islice, itertools.repeat,
              itertools.zip_longest, itertools.pairwise}


def _namedtuple(cls):
    return issubclass(cls, tuple) and hasattr(cls, "_make") and hasattr(cls, "_fields")


def _reduce(frame, function, iterable, *initial):
    items = list(frame.iterate(iterable))
    if initial:
        acc = initial[0]
    elif items:
        acc = items.pop(0)
    else:
        frame.unsupported("reduce() of an empty iterable with no initial value",
                          "give reduce an initial value")
    for x in items:
        acc = frame.call(function, [acc, x], {})
    return acc


def _higher_order(frame, fn, args, kwargs):
    """map/filter (eagerly, to a symbolic iterator), sorted/min/max with a key: the user
    function is called (inlined) per item; keys must be Python constants."""
    from .guards import CONSTANT_TYPES
    from .values import SymIterator
    if fn is builtins.map:
        if len(args) < 2 or kwargs:
            frame.unsupported("map() needs a function and iterables", "fix the call")
        cols = [frame.iterate(a) for a in args[1:]]
        return SymIterator([frame.call(args[0], list(xs), {}) for xs in zip(*cols)])
    if fn is builtins.filter:
        if len(args) != 2 or kwargs:
            frame.unsupported("filter() takes a function and an iterable", "fix the call")
        pred = args[0]
        return SymIterator([x for x in frame.iterate(args[1]) if frame.truth(
            x if pred is None else frame.call(pred, [x], {}))])
    kwargs = dict(kwargs)
    key = kwargs.pop("key")
    reverse = kwargs.pop("reverse", False)
    default = kwargs.pop("default", _NO_DEFAULT)
    if kwargs or type(reverse) is not bool or fn is builtins.sorted and len(args) != 1:
        frame.unsupported(f"{fn.__name__}() with these arguments", "fix the call")
    items = frame.iterate(args[0]) if len(args) == 1 else list(args)
    keys = [x if key is None else frame.call(key, [x], {}) for x in items]

    def const(k):
        return type(k) in CONSTANT_TYPES or type(k) is tuple and all(map(const, k))
    if not all(const(k) for k in keys):
        frame.unsupported(f"{fn.__name__}() with a key that is not a Python constant "
                          f"(a tensor's order needs its values)", "use torch.sort/argmax")
    order = builtins.sorted(range(len(items)), key=keys.__getitem__, reverse=reverse)
    if fn is builtins.sorted:
        return [items[i] for i in order]
    if not items:
        if default is _NO_DEFAULT:
            frame.unsupported(f"{fn.__name__}() of an empty sequence", "pass default=")
        return default
    pick = (builtins.min if fn is builtins.min else builtins.max)(range(len(items)),
                                                               key=keys.__getitem__)
    return items[pick]


_NO_DEFAULT = object()


def _dynamo_api(fn):
    """numtorch._dynamo's own functions (allow_in_graph, is_compiling, …): called for real."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith(_DYNAMO) and \
        not hasattr(fn, "_numtorch_dynamo_orig")


def _user_callable(v):
    return isinstance(v, (types.FunctionType, SymFunction)) and \
        (isinstance(v, SymFunction) or user_code(v))


def _name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def inline(frame, code, f_globals, args, kwargs, defaults, kwdefaults, closure, name,
           real=None):
    """Run ``code`` as a nested symbolic frame with arguments bound as CPython would."""
    depth, f = 0, frame
    while f is not None:
        depth, f = depth + 1, f.parent
    if depth > _MAX_INLINE_DEPTH:
        frame.unsupported("recursion too deep to inline", "avoid recursion in compiled code")
    if code.co_flags & (0x80 | 0x100 | 0x200):
        frame.unsupported(f"call to the coroutine function {name}",
                          "call it outside the compiled function")
    localsplus = bind_arguments(frame, code, args, kwargs, defaults, kwdefaults, name)
    cells = {}
    for i, n in enumerate(code.co_freevars):
        c = closure[i]
        cells[n] = c if isinstance(c, (SymCell, tuple)) else ("real", i, c, None)
    child = Frame(frame.cap, code, f_globals, localsplus, cells, parent=frame, name=name)
    if code.co_flags & 0x20:
        # a generator: run to exhaustion now, its items become a symbolic iterator
        # (Note [Generators in capture] in symbolic.py)
        child.yields = []
        child.run()
        from .values import SymIterator
        return SymIterator(child.yields)
    kind, value = child.run()
    return value


def bind_arguments(frame, code, args, kwargs, defaults, kwdefaults, name):
    nargs, nkw = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    out = [_UNBOUND] * len(names)
    pos = list(args)
    if len(pos) > nargs and not code.co_flags & 0x04:
        frame.unsupported(f"{name}() takes {nargs} positional arguments but {len(pos)} "
                          f"were given", "fix the call")
    for i, v in enumerate(pos[:nargs]):
        out[i] = v
    extra_kw = {}
    for k, v in kwargs.items():
        if k in names[code.co_posonlyargcount:nargs + nkw]:
            out[names.index(k)] = v
        else:
            extra_kw[k] = v
    if defaults:
        for j, d in enumerate(defaults):
            i = nargs - len(defaults) + j
            if out[i] is _UNBOUND:
                out[i] = d
    for i in range(nargs, nargs + nkw):
        if out[i] is _UNBOUND and names[i] in (kwdefaults or {}):
            out[i] = kwdefaults[names[i]]
    k = nargs + nkw
    if code.co_flags & 0x04:
        out[k] = tuple(pos[nargs:])
        k += 1
    if code.co_flags & 0x08:
        out[k] = extra_kw
    elif extra_kw:
        frame.unsupported(f"{name}() got an unexpected keyword argument "
                          f"{next(iter(extra_kw))!r}", "fix the call")
    for i in range(nargs + nkw):
        if out[i] is _UNBOUND:
            frame.unsupported(f"{name}() missing argument {names[i]!r}", "fix the call")
    return out


_ = inspect
