"""The symbolic interpreter: runs a frame's bytecode with trace tensors (TorchDynamo's model).

A `Frame` executes CPython 3.11 instructions on a symbolic stack. Values are real Python
objects, except that tensors are trace-interpreter tensors, so numtorch's own functions,
methods and modules are simply *called* on them and their primitives land in the graph.
What this file models is Python: locals, the stack, globals and closure cells, attribute
access, containers, builtins, and inlining of user functions. Everything read from outside
the frame goes through `Capture.wrap` with its source, which installs the guards.

What cannot be traced raises `Unsupported` (with the reason, a suggested fix and the user
stack); the top-level frame turns that into a graph break (eval_frame.py decides how it
resumes). Side effects on objects that existed before the call are recorded in
``Capture.side_effects`` and replayed by the generated code, never performed at capture.

This file must not generate code or know about backends.
"""
from __future__ import annotations

import builtins
import collections
import functools
import inspect
import math
import operator
import os
import types

from .._core.symbolic import ConstraintViolationError, Sym
from .._core.tensor import Tensor
from ..func._trace import TraceTracer
from . import config, numpy_capture
from .bytecode import exception_table, instructions
from .guards import CONSTANT_TYPES, Source
from .builtins_table import user_code_file
from .builtins_table import (PURE_BUILTINS, MUTATING_METHODS, BINARY_OPS, COMPARE_OPS,
                             UNARY_OPS, is_numtorch_callable, user_code)
from .backends import CallSite
from .capture import Capture, _has_trace, _is_module, dict_subclass_unsupported
from .values import (NULL, UNBOUND, _UNBOUND, GradExit, LazyArg, SymCell, SymFunction,
                     SymIterator, SymRaise, Unsupported, _MAX_YIELDS, call_operands)


_od = collections.OrderedDict()
_ITERABLE_VIEWS = (zip, enumerate, reversed, map, filter, type({}.items()), type({}.keys()),
                   type({}.values()), type(_od.items()), type(_od.keys()), type(_od.values()),
                   type(reversed(_od)))

class Frame:
    """One symbolic frame: the top-level one (``parent`` None) or an inlined call."""

    def __init__(self, cap: Capture, code, f_globals, localsplus, cells, parent=None, name=None):
        self.cap, self.code, self.f_globals, self.parent = cap, code, f_globals, parent
        self.insts, self.by_offset = instructions(code)
        self.locals = localsplus          # list over co_varnames; `_UNBOUND` where unbound
        # name -> SymCell | ("real", index, cell, source of the cell object or None)
        self.cells = cells
        self.stack, self.kw_names, self.pc, self.cur = [], None, 0, None
        self.exc_info = None              # the exception being handled (sys.exception())
        self.name = name or code.co_name
        self.builtins = f_globals.get("__builtins__", builtins)
        if isinstance(self.builtins, types.ModuleType):
            self.builtins = self.builtins.__dict__

    # -- errors with the user's stack -----------------------------------------------------
    def user_stack(self):
        frames, f = [], self
        while f is not None:
            inst = f.cur if f.cur is not None else f.insts[min(f.pc, len(f.insts) - 1)]
            frames.append((f.code.co_filename, inst.line, f.name))
            f = f.parent
        return frames[::-1]

    def unsupported(self, reason, hint):
        raise Unsupported(reason, hint, self.user_stack())

    # -- running --------------------------------------------------------------------------
    def run(self, stop=None):
        """Interpret until RETURN_VALUE (returns ("return", value)) or until ``stop(inst)``
        asks to break (returns ("break", inst))."""
        insts = self.insts
        while True:
            inst = insts[self.pc]
            if stop is not None and stop(self, inst):
                return "break", inst
            self.cur = inst
            handler = getattr(self, inst.opname, None)
            if handler is None:
                self.unsupported(f"unsupported bytecode {inst.opname}",
                                 "move this statement out of the compiled function")
            self.pc += 1
            try:
                out = handler(inst)
            except Unsupported as u:
                self.pc -= 1
                if not u.stack:                  # raised below the frame (Capture.wrap)
                    u.stack = self.user_stack()
                raise
            except SymRaise as r:
                if not self.handle(r.exc, inst):
                    self.pc -= 1
                    if self.parent is None:
                        self.unsupported(f"exception {type(r.exc).__name__}({r.exc}) raised "
                                         f"out of the compiled frame",
                                         "it is raised as in eager (the rest of the frame "
                                         "runs eagerly); catch it inside if it is expected")
                    raise
                continue
            if out is not None:
                return out

    def handler_for(self, offset):
        for start, end, target, depth, lasti in exception_table(self.code):
            if start <= offset < end:
                return target, depth, lasti
        return None

    def handle(self, exc, inst):
        """Unwind to the handler of the instruction that raised ``exc``, if this frame has
        one (Note [Exceptions in capture])."""
        h = self.handler_for(inst.offset)
        if h is None:
            return False
        target, depth, lasti = h
        del self.stack[depth:]
        if lasti:
            self.push(inst.offset)
        self.push(exc)
        self.pc = self.by_offset[target]
        return True

    def jump(self, inst):
        self.pc = self.by_offset[inst.target]

    def push(self, v):
        self.stack.append(v)

    def pop(self):
        return self.stack.pop()

    def popn(self, n):
        if not n:
            return []
        out = self.stack[-n:]
        del self.stack[-n:]
        return out

    # -- simple opcodes -------------------------------------------------------------------
    def NOP(self, inst):
        pass

    RESUME = CACHE = EXTENDED_ARG = PRECALL = NOP

    def MAKE_CELL(self, inst):
        name = inst.argval
        cell = self.cells.get(name)
        if not isinstance(cell, SymCell):
            idx = self.code.co_varnames.index(name) if name in self.code.co_varnames else -1
            v = self.locals[idx] if idx >= 0 else _UNBOUND
            if v.__class__ is LazyArg:
                v = self.cap.wrap(v.value, v.source)
            self.cells[name] = SymCell(v, v is not _UNBOUND)

    def COPY_FREE_VARS(self, inst):
        pass

    def PUSH_NULL(self, inst):
        self.push(NULL)

    def POP_TOP(self, inst):
        self.pop()

    def COPY(self, inst):
        self.push(self.stack[-inst.arg])

    def SWAP(self, inst):
        s = self.stack
        s[-1], s[-inst.arg] = s[-inst.arg], s[-1]

    def LOAD_CONST(self, inst):
        self.push(inst.argval)

    def _local_index(self, inst):
        return self.code.co_varnames.index(inst.argval)

    def LOAD_FAST(self, inst):
        i = self._local_index(inst)
        v = self.locals[i]
        if v.__class__ is LazyArg:   # first read of an argument: wrap it (guards) now
            v = self.locals[i] = self.cap.wrap(v.value, v.source)
        if v is _UNBOUND:
            self.unsupported(f"local variable '{inst.argval}' referenced before assignment",
                             "assign the variable on every path before using it")
        self.push(v)

    def STORE_FAST(self, inst):
        self.locals[self._local_index(inst)] = self.pop()

    def DELETE_FAST(self, inst):
        self.locals[self._local_index(inst)] = _UNBOUND

    def LOAD_GLOBAL(self, inst):
        name = inst.argval
        if inst.arg & 1:
            self.push(NULL)
        self.push(self.load_global(name))

    def IMPORT_NAME(self, inst):
        # an import inside the compiled function runs now, at capture, as Dynamo does: the
        # module is a constant of the graph's code (importing again at run time would
        # find the same module in sys.modules)
        fromlist, level = self.pop(), self.pop()
        try:
            mod = builtins.__import__(inst.argval, self.f_globals, None, fromlist, level)
        except ImportError as e:
            self.unsupported(f"import {inst.argval} failed: {e}", "import it at module level")
        self.push(mod)

    def IMPORT_FROM(self, inst):
        mod = self.stack[-1]
        if not hasattr(mod, inst.argval):
            self.unsupported(f"from {mod.__name__} import {inst.argval}: no such name",
                             "import it at module level")
        self.push(getattr(mod, inst.argval))

    def load_global(self, name):
        cap = self.cap
        if self.f_globals is cap.G and name in cap.global_overlay:
            return cap.global_overlay[name]
        if name in self.f_globals:
            if self.f_globals is cap.G:
                src = Source(f"G[{name!r}]", name)
            else:
                mod = self.f_globals.get("__name__", "?")
                src = Source(f"{cap.guards.const(self.f_globals)}[{name!r}]", f"{mod}.{name}")
            return cap.wrap(self.f_globals[name], src)
        if name in self.builtins:
            return self.builtins[name]
        self.unsupported(f"name '{name}' is not defined", "define it before calling")

    def STORE_GLOBAL(self, inst):
        v = self.pop()
        if self.f_globals is not self.cap.G:
            self.unsupported("global store in an inlined function from another module",
                             "move the global write out of the compiled region")
        self.cap.global_overlay[inst.argval] = v
        self.cap.side_effects.append(("global", inst.argval, v))

    def _cell(self, name):
        return self.cells[name]

    def LOAD_DEREF(self, inst):
        cell = self._cell(inst.argval)
        if isinstance(cell, SymCell):
            if not cell.bound:
                self.unsupported(f"free variable '{inst.argval}' referenced before assignment",
                                 "assign it before use")
            self.push(cell.value)
        else:
            real, where = cell[2], cell[3]
            key = ("cell", id(real))
            if key in self.cap.attr_overlay:
                self.push(self.cap.attr_overlay[key])
            else:
                where = where or self.cap.guards.const(real)
                self.push(self.cap.wrap(real.cell_contents, Source(f"{where}.cell_contents",
                                                                   inst.argval)))

    LOAD_CLASSDEREF = LOAD_DEREF

    def STORE_DEREF(self, inst):
        cell, v = self._cell(inst.argval), self.pop()
        if isinstance(cell, SymCell):
            cell.value, cell.bound = v, True
        else:
            self.cap.attr_overlay[("cell", id(cell[2]))] = v
            self.cap.side_effects.append(("cell", cell[2], v, cell[3]))

    def LOAD_CLOSURE(self, inst):
        self.push(self._cell(inst.argval))

    # -- attributes -----------------------------------------------------------------------
    def LOAD_ATTR(self, inst):
        self.push(self.load_attr(self.pop(), inst.argval))

    def LOAD_METHOD(self, inst):
        obj = self.pop()
        attr = self.load_attr(obj, inst.argval)
        self.push(NULL)
        self.push(attr)

    def load_attr(self, obj, name):
        cap = self.cap
        key = (id(obj), name)
        if key in cap.attr_overlay:
            return cap.attr_overlay[key]
        if isinstance(obj, SymFunction):
            self.unsupported("attribute of a function made inside the compiled region",
                             "define the function outside the compiled function")
        # a property whose getter is user code is inlined, like any method
        prop = getattr(type(obj), name, None) if not isinstance(obj, type) else None
        if isinstance(prop, property) and prop.fget is not None and user_code(prop.fget):
            return self.call(prop.fget, [obj], {})
        try:
            real = getattr(obj, name)
        except Exception as e:
            self.unsupported(f"getattr({type(obj).__name__}, {name!r}) raised "
                             f"{type(e).__name__}: {e}", "check the attribute name")
        if name == "grad" and cap.is_trace(obj):
            return self._grad_of(obj, real)
        if cap.is_trace(obj) or isinstance(obj, (SymIterator, SymCell)) or \
                numpy_capture.is_symbolic_array(obj, cap):
            return real
        if isinstance(obj, types.ModuleType) and not user_code(obj):
            return real          # library modules: their attributes are not guarded
        src = cap.source_of.get(id(obj))
        if src is None or type(obj) in (list, tuple, set) or isinstance(obj, dict) or \
                isinstance(obj, tuple) and hasattr(obj, "_make"):   # a namedtuple's field
            return real
        if isinstance(real, types.MethodType) and real.__self__ is obj:
            return real          # bound method: identity of the function is guarded below
        return cap.wrap(real, src.attr(name))

    def _grad_of(self, sym, traced_grad):
        """``t.grad`` of a tensor input: the real tensor's ``.grad``, read from its source
        (a graph input when it is a tensor, a guard when it is None). The trace tensor
        standing for ``t`` has no grad of its own: reading it gave None (a hand-written
        SGD step ``p -= lr * p.grad`` failed compiled)."""
        src = self.cap.source_of.get(id(sym))
        real = next((r for _, s, r in self.cap.inputs if s is src), None) if src else None
        if real is None:
            return traced_grad          # made inside the graph: its grad is its own
        return self.cap.wrap(real.grad, src.attr("grad"))

    def STORE_ATTR(self, inst):
        obj, v = self.pop(), self.pop()
        self.store_attr(obj, inst.argval, v)

    def store_attr(self, obj, name, v):
        if isinstance(obj, (SymFunction, SymIterator)) or self.cap.is_trace(obj):
            self.unsupported(f"attribute write '{name}' on a "
                             f"{type(obj).__name__} during capture",
                             "set the attribute outside the compiled function")
        self.cap.attr_overlay[(id(obj), name)] = v
        if id(obj) not in self.cap.new_objects:   # Note [Objects made during capture]
            self.cap.side_effects.append(("setattr", obj, name, v))

    # -- containers -----------------------------------------------------------------------
    def BUILD_TUPLE(self, inst):
        self.push(tuple(self.popn(inst.arg)))

    def BUILD_LIST(self, inst):
        self.push(list(self.popn(inst.arg)))

    def BUILD_SET(self, inst):
        self.push(set(self.popn(inst.arg)))

    def BUILD_MAP(self, inst):
        items = self.popn(2 * inst.arg)
        self.push({items[i]: items[i + 1] for i in range(0, len(items), 2)})

    def BUILD_CONST_KEY_MAP(self, inst):
        keys = self.pop()
        self.push(dict(zip(keys, self.popn(inst.arg))))

    def BUILD_STRING(self, inst):
        self.push("".join(self.popn(inst.arg)))

    def BUILD_SLICE(self, inst):
        self.push(slice(*self.popn(inst.arg)))

    def LIST_APPEND(self, inst):
        v = self.pop()
        self.stack[-inst.arg].append(v)

    def SET_ADD(self, inst):
        v = self.pop()
        self.stack[-inst.arg].add(v)

    def MAP_ADD(self, inst):
        v = self.pop()
        k = self.pop()
        self.stack[-inst.arg][k] = v

    def LIST_EXTEND(self, inst):
        v = self.pop()
        self.stack[-inst.arg].extend(self.iterate(v))

    def SET_UPDATE(self, inst):
        v = self.pop()
        self.stack[-inst.arg].update(self.iterate(v))

    def DICT_UPDATE(self, inst):
        v = self.pop()
        self.stack[-inst.arg].update(v)

    DICT_MERGE = DICT_UPDATE

    def LIST_TO_TUPLE(self, inst):
        self.push(tuple(self.pop()))

    def UNPACK_SEQUENCE(self, inst):
        items = self.iterate(self.pop())
        if len(items) != inst.arg:
            self.unsupported(f"cannot unpack {len(items)} values into {inst.arg}",
                             "check the number of targets")
        self.stack.extend(reversed(items))

    def UNPACK_EX(self, inst):
        items = self.iterate(self.pop())
        before, after = inst.arg & 0xFF, inst.arg >> 8
        mid = items[before:len(items) - after]
        vals = items[:before] + [mid] + items[len(items) - after:]
        self.stack.extend(reversed(vals))

    def iterate(self, v):
        """The items of an iterable, materialized (for unrolling)."""
        if isinstance(v, SymIterator):
            items = v.items[v.pos:]
            v.pos = len(v.items)
            return items
        if self.cap.is_trace(v) or numpy_capture.is_symbolic_array(v, self.cap):
            if not v.shape:
                self.unsupported("iteration over a 0-d tensor", "index it instead")
            return [v[i] for i in range(v.shape[0])]
        if isinstance(v, (list, tuple, str, range, dict, set, frozenset, bytes)) or \
                type(v) in _ITERABLE_VIEWS:
            if type(v) in (map, filter):
                self.unsupported("map/filter objects", "use a list comprehension")
            return list(v)
        if isinstance(v, Tensor):
            return list(v)
        if _is_module(v) and hasattr(v, "__iter__") and not user_code(type(v).__iter__):
            return list(v)   # ModuleList / Sequential
        if isinstance(v, types.GeneratorType) and \
                inspect.getgeneratorstate(v) == inspect.GEN_CREATED and \
                not user_code_file(v.gi_code.co_filename) and id(v) not in self.cap.source_of:
            # a fresh generator of numtorch's (module.parameters()) made by a call during
            # capture: drained now, as the loop would
            return list(v)
        self.unsupported(f"iteration over {type(v).__name__}",
                         "iterate over a list, tuple, range or dict")

    def GET_ITER(self, inst):
        self.push(SymIterator(self.iterate(self.pop())))

    def FOR_ITER(self, inst):
        it = self.stack[-1]
        if it.pos < len(it.items):
            self.push(it.items[it.pos])
            it.pos += 1
        else:
            self.pop()
            self.jump(inst)

    # -- operators --------------------------------------------------------------------------
    def _apply(self, fn, args, what):
        for a in args:
            if not (self.cap.is_trace(a) or type(a) in CONSTANT_TYPES or
                    type(a) in (list, tuple, dict, set, slice, frozenset) or
                    isinstance(a, dict) and dict_subclass_unsupported(type(a)) is None or
                    isinstance(a, Tensor) or not user_code(type(a))):
                dunder = what
                self.unsupported(f"operator {dunder} on a user-defined {type(a).__name__}",
                                 "use plain tensors and numbers in compiled code")
        return self.call_real(fn, args, {}, what)

    def BINARY_OP(self, inst):
        b, a = self.pop(), self.pop()
        fn = BINARY_OPS[inst.arg]
        if inst.arg >= 13 and isinstance(a, list) and id(a) in self.cap.preexisting:
            self.unsupported("in-place operator on a list that existed before the call",
                             "build a new list instead")
        self.push(self._apply(fn, (a, b), inst.argrepr if hasattr(inst, "argrepr") else fn))

    def COMPARE_OP(self, inst):
        b, a = self.pop(), self.pop()
        self.push(self._apply(COMPARE_OPS[inst.argval], (a, b), inst.argval))

    def IS_OP(self, inst):
        b, a = self.pop(), self.pop()
        self.push((a is not b) if inst.arg else (a is b))

    def CONTAINS_OP(self, inst):
        b, a = self.pop(), self.pop()
        if self.cap.is_trace(b):
            self.unsupported("`in` on a tensor", "compare with tensor ops")
        r = self._apply(operator.contains, (b, a), "in")
        self.push((not r) if inst.arg else r)

    def _unary(name):
        def op(self, inst):
            self.push(self._apply(UNARY_OPS[name], (self.pop(),), name))
        return op

    UNARY_NEGATIVE = _unary("UNARY_NEGATIVE")
    UNARY_INVERT = _unary("UNARY_INVERT")
    UNARY_POSITIVE = _unary("UNARY_POSITIVE")

    def UNARY_NOT(self, inst):
        self.push(not self.truth(self.pop()))

    def BINARY_SUBSCR(self, inst):
        k, c = self.pop(), self.pop()
        if isinstance(c, dict) and type(c) is dict:
            self.push(c[k])
        elif isinstance(c, collections.defaultdict) and c.default_factory is not None and \
                not self.cap.is_trace(k) and k not in c:
            # a missing key: default_factory's value is stored (Note [Dict subclasses])
            v = self.call(c.default_factory, [], {})
            self.setitem(c, k, v)
            self.push(v)
        else:
            self.push(self._apply(operator.getitem, (c, k), "[]"))

    def STORE_SUBSCR(self, inst):
        k, c, v = self.pop(), self.pop(), self.pop()
        self.setitem(c, k, v)

    def setitem(self, c, k, v):
        if id(c) in self.cap.preexisting or (_is_module(c)):
            self.cap.side_effects.append(("setitem", c, k, v))
            c[k] = v
        elif isinstance(c, (list, dict)) or self.cap.is_trace(c) or \
                numpy_capture.is_symbolic_array(c, self.cap):
            self.call_real(operator.setitem, (c, k, v), {}, "[]=")
        elif isinstance(c, Tensor):
            self.unsupported("item assignment into a tensor that is not an input",
                             "pass the tensor as an argument")
        else:
            self.unsupported(f"item assignment into {type(c).__name__}",
                             "use a list or dict")

    def DELETE_SUBSCR(self, inst):
        k, c = self.pop(), self.pop()
        if id(c) in self.cap.preexisting:
            self.cap.side_effects.append(("delitem", c, k))
        del c[k]

    def FORMAT_VALUE(self, inst):
        spec = self.pop() if inst.arg & 0x04 else ""
        v = self.pop()
        if isinstance(v, Tensor) or numpy_capture.is_symbolic_array(v, self.cap):
            self.unsupported("f-string of a tensor (needs its values)",
                             "format the tensor outside the compiled function")
        conv = inst.arg & 0x03
        v = {0: v, 1: str(v), 2: repr(v), 3: ascii(v)}[conv] if conv else v
        self.push(format(v, spec))

    # -- control flow -----------------------------------------------------------------------
    def truth(self, v):
        if isinstance(v, Tensor) or numpy_capture.is_symbolic_array(v, self.cap):
            self.unsupported("generic_jump TensorVariable(): data-dependent control flow "
                             "(`if`/`while` on a tensor value)",
                             "use torch.where or torch.cond, or compute the condition "
                             "outside the compiled function")
        if not isinstance(v, CONSTANT_TYPES + (list, tuple, dict, set, range, type(NULL))) \
                and user_code(type(v)) and (hasattr(type(v), "__bool__") or
                                            hasattr(type(v), "__len__")):
            self.unsupported(f"truth value of a user-defined {type(v).__name__}",
                             "test an attribute instead")
        return bool(v)

    def JUMP_FORWARD(self, inst):
        self.jump(inst)

    JUMP_BACKWARD = JUMP_BACKWARD_NO_INTERRUPT = JUMP_FORWARD

    def _pop_jump(when):
        def op(self, inst):
            v = self.stack[-1]
            if when in (True, False):
                t = self.truth(v)
            else:
                t = v is None
            self.pop()
            if t == (when if when in (True, False) else when == "none"):
                self.jump(inst)
        return op

    POP_JUMP_FORWARD_IF_TRUE = POP_JUMP_BACKWARD_IF_TRUE = _pop_jump(True)
    POP_JUMP_FORWARD_IF_FALSE = POP_JUMP_BACKWARD_IF_FALSE = _pop_jump(False)
    POP_JUMP_FORWARD_IF_NONE = POP_JUMP_BACKWARD_IF_NONE = _pop_jump("none")
    POP_JUMP_FORWARD_IF_NOT_NONE = POP_JUMP_BACKWARD_IF_NOT_NONE = _pop_jump("not none")

    def JUMP_IF_TRUE_OR_POP(self, inst):
        if self.truth(self.stack[-1]):
            self.jump(inst)
        else:
            self.pop()

    def JUMP_IF_FALSE_OR_POP(self, inst):
        if not self.truth(self.stack[-1]):
            self.jump(inst)
        else:
            self.pop()

    def RETURN_VALUE(self, inst):
        return "return", self.pop()

    # -- generators ---------------------------------------------------------------------
    # Note [Generators in capture]
    # A generator called in compiled code is run to exhaustion when called and its items
    # iterated like a list (loops are unrolled anyway). Its body thus runs before the
    # consumer's loop body rather than interleaved: the same graph, since both are traced
    # into one graph, unless the two communicate through a mutable object each reads
    # after the other wrote, which capture does not detect. `send`/`yield from` are not
    # modelled (a break), and a generator yielding more than _MAX_YIELDS items breaks.
    def RETURN_GENERATOR(self, inst):
        self.push(None)

    def YIELD_VALUE(self, inst):
        if getattr(self, "suspend", False):    # Note [Generator context managers] (contexts.py)
            v = self.pop()
            self.push(None)                    # the value sent when it resumes
            return "yield", v
        ys = getattr(self, "yields", None)
        if ys is None:
            self.unsupported("yield outside an inlined generator", "return a list")
        if len(ys) >= _MAX_YIELDS:
            self.unsupported(f"a generator yielding more than {_MAX_YIELDS} items",
                             "iterate over it outside the compiled function")
        ys.append(self.pop())
        self.push(None)

    # -- exceptions (Note [Exceptions in capture]) -----------------------------------------
    def RAISE_VARARGS(self, inst):
        cause = self.pop() if inst.arg == 2 else None
        if inst.arg == 0:
            exc = self.exc_info
            if exc is None:
                self.unsupported("bare raise with no active exception", "raise an exception")
        else:
            exc = self.pop()
            if isinstance(exc, type):
                exc = self.call(exc, [], {})
        if not isinstance(exc, BaseException):
            self.unsupported(f"raise of a {type(exc).__name__}", "raise an exception")
        if inst.arg == 2:
            exc.__cause__ = cause
        raise SymRaise(exc)

    def PUSH_EXC_INFO(self, inst):
        v = self.pop()
        self.push(self.exc_info)
        self.exc_info = v
        self.push(v)

    def POP_EXCEPT(self, inst):
        self.exc_info = self.pop()

    def CHECK_EXC_MATCH(self, inst):
        right = self.pop()
        self.push(isinstance(self.stack[-1], right))

    def RERAISE(self, inst):
        raise SymRaise(self.pop())

    def LOAD_ASSERTION_ERROR(self, inst):
        self.push(AssertionError)

    def WITH_EXCEPT_START(self, inst):
        exc = self.stack[-1]
        self.push(self.call(self.stack[-4], [type(exc), exc, None], {}))

    # -- with blocks (contexts.py) --------------------------------------------------------
    def BEFORE_WITH(self, inst):
        from .contexts import enter
        exit_fn, value = enter(self, self.stack[-1])
        self.pop()
        self.push(exit_fn)
        self.push(value)

    def set_grad(self, mode):
        from .._core import primitive as _p
        cap = self.cap
        cap.grad_marks.append((len(cap.interp.nodes), mode))
        cap.grad_enabled = _p.grad_mode[0] = mode

    # -- functions ------------------------------------------------------------------------
    def KW_NAMES(self, inst):
        self.kw_names = self.code.co_consts[inst.arg]

    def CALL(self, inst):
        n = inst.arg
        args = self.popn(n)
        top, below = self.pop(), self.pop()
        fn, args = call_operands(below, top, args)
        kw = {}
        if self.kw_names:
            names, self.kw_names = self.kw_names, None
            vals = args[len(args) - len(names):]
            args = args[:len(args) - len(names)]
            kw = dict(zip(names, vals))
        self.push(self.call(fn, args, kw))

    def CALL_FUNCTION_EX(self, inst):
        kw = self.pop() if inst.arg & 1 else {}
        args = self.iterate(self.pop())
        fn = self.pop()
        if self.stack and self.stack[-1] is NULL:
            self.pop()
        self.push(self.call(fn, list(args), dict(kw)))

    def MAKE_FUNCTION(self, inst):
        code = self.pop()
        closure = self.pop() if inst.arg & 0x08 else None
        if inst.arg & 0x04:
            self.pop()   # annotations
        kwdefaults = self.pop() if inst.arg & 0x02 else None
        defaults = self.pop() if inst.arg & 0x01 else None
        self.push(SymFunction(code, self.f_globals, code.co_name, defaults, kwdefaults, closure))

    def call(self, fn, args, kwargs):
        from .calls import call_function
        return call_function(self, fn, args, kwargs)

    def call_real(self, fn, args, kwargs, what):
        """Call ``fn`` for real on symbolic values (numtorch code, pure builtins)."""
        interp = self.cap.interp
        n = len(interp.nodes)
        owner = fn if _is_module(fn) else getattr(fn, "__self__", None)
        if owner is not None and _is_module(owner):
            self.cap.note_module(owner)   # Note [Captured tensors are guarded] (capture.py)
        if any(a.__class__ is SymFunction for a in args):
            args = [a.materialize() if a.__class__ is SymFunction else a for a in args]
        try:
            out = fn(*args, **kwargs)
            if len(interp.nodes) > n:   # the user's file:line, not numtorch's frames
                inst = self.insts[max(self.pc - 1, 0)]
                where = CallSite(f"{os.path.basename(self.code.co_filename)}:{inst.line}",
                                 fn, args)
                for node in interp.nodes[n:]:
                    node.where = where
            return out
        except (Unsupported, ConstraintViolationError):
            raise
        except Exception as e:
            del interp.nodes[n:]
            name = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
            msg = str(e).split("\n")[0]
            if "needs the tensor's value" in msg or "data-dependent" in msg:
                self.unsupported(f"{name} needs a tensor's value (data-dependent): {msg}",
                                 "keep the value a tensor (use torch.where), or set "
                                 "numtorch._dynamo.config.capture_scalar_outputs")
            if self.handler_for(self.insts[max(self.pc - 1, 0)].offset) is not None and \
                    not isinstance(e, ConstraintViolationError):
                raise SymRaise(e) from None    # caught by the frame's own try
            self.unsupported(f"{name} raised {type(e).__name__}: {msg}",
                             "if this is a bug in your code, it also fails eagerly")


_ = (functools, math, PURE_BUILTINS, MUTATING_METHODS, is_numtorch_callable, config, _has_trace,
     NULL, UNBOUND, LazyArg, SymCell)
