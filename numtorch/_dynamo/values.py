"""The symbolic values of capture: what the interpreter's stack and locals hold besides
real objects and trace tensors (NULL, unbound, lazy arguments, cells and functions made
during capture, iterators being unrolled, a grad-mode block's exit), and the exceptions
capture raises (`Unsupported`, `SymRaise`).

Must not interpret bytecode, install guards or generate code.
"""
from __future__ import annotations

import types

class Unsupported(Exception):
    """What stops capture here; becomes a graph break (or an error under fullgraph)."""

    def __init__(self, reason, hint, stack=()):
        super().__init__(reason)
        self.reason, self.hint, self.stack = reason, hint, list(stack)


_MAX_YIELDS = 1000


class SymRaise(Exception):
    """A Python exception raised by the code being captured (Note [Exceptions in capture])."""

    def __init__(self, exc):
        super().__init__(repr(exc))
        self.exc = exc


# Note [Exceptions in capture]
# ``raise``, ``assert`` and exceptions from calls inside a ``try`` are modelled: the
# exception object is real; the frame's exception table (bytecode.exception_table) says
# where its handler is, at which stack depth, as CPython unwinds; an exception leaving an
# inlined frame unwinds into its caller at the call. One that leaves the top frame (or
# is raised where no handler of the raising frame catches it, for library errors) is a
# graph break at that instruction: the generated code runs it natively, so the exception
# propagates exactly as in eager, with the side effects before it done.


class _Null:
    __slots__ = ()

    def __repr__(self):
        return "NULL"


NULL = _Null()


def call_operands(below, top, args):
    """(callable, positional args) of 3.11's CALL, given the two stack slots under ``args``.

    CPython 3.11 lays a call out as ``[NULL, callable, *args]`` (PUSH_NULL, a global load)
    or ``[callable, self, *args]`` (LOAD_METHOD finding a method). Both the symbolic
    interpreter and the break code (eval_frame) decode it here, so they cannot disagree.
    """
    if below is NULL:
        return top, list(args)
    if top is NULL:
        return below, list(args)
    return below, [top, *args]


class SymCell:
    """A closure cell created during capture (its contents may be trace tensors)."""

    __slots__ = ("value", "bound")

    def __init__(self, value=None, bound=False):
        self.value, self.bound = value, bound


class SymFunction:
    """A function made by MAKE_FUNCTION during capture: inlined when called."""

    def __init__(self, code, f_globals, name, defaults, kwdefaults, closure):
        self.code, self.f_globals, self.__name__ = code, f_globals, name
        self.defaults, self.kwdefaults, self.closure = defaults or (), kwdefaults or {}, closure


    def __call__(self, *args, **kwargs):
        # numtorch code called for real (a transform given this function inside a closure
        # or container) calls it: run the real function, on the current cell values
        return self.materialize()(*args, **kwargs)

    def materialize(self):
        """A real function (cells hold the current values) for numtorch code that calls
        it for real on trace tensors, e.g. ``grad(lambda x: ...)``."""
        cells = tuple(types.CellType(c.value) if isinstance(c, SymCell) and c.bound else
                      types.CellType() if isinstance(c, SymCell) else c[2]
                      for c in (self.closure or ()))
        fn = types.FunctionType(self.code, self.f_globals, self.__name__,
                                tuple(self.defaults) or None, cells or None)
        fn.__kwdefaults__ = dict(self.kwdefaults) or None
        return fn


class SymIterator:
    """An iterator over a list of already-materialized items (loops are unrolled)."""

    __slots__ = ("items", "pos")

    def __init__(self, items):
        self.items, self.pos = list(items), 0


# Note [Grad mode in the graph]
# ``with torch.no_grad()`` / ``enable_grad()`` / ``set_grad_enabled(b)`` are captured, not
# breaks (PyTorch puts _set_grad_enabled calls in its FX graph). Capture tracks the mode
# symbolically (and sets the real flag, so ``torch.is_grad_enabled()`` answers as in eager;
# eval_frame restores it), records where in the node list it changed (``grad_marks``), and
# eval_frame rewrites the graph so each node run with grad disabled reads its operands
# through ``stop_gradient``: its results carry no derivative, as in eager. Outputs that thus
# carry none are detached by the generated code, so ``requires_grad`` matches eager too.
# The ``__exit__`` the with-block pushes is a real `GradExit` (restores the mode when
# called), so a graph break inside the block resumes correctly: the generated code sets
# the block's mode before the breaking instruction, and the resume function's own
# bytecode calls the exit at the block's end or on an exception.


class GradExit:
    """The ``__exit__`` of a captured grad-mode block: restores mode ``prev``."""

    __slots__ = ("prev",)

    def __init__(self, prev):
        self.prev = prev

    def __call__(self, *exc):
        from .._core import primitive as _p
        _p.grad_mode[0] = self.prev
        return False


class LazyArg:
    """An argument of the top frame not read yet: guarded only when first read."""

    __slots__ = ("value", "source")

    def __init__(self, value, source):
        self.value, self.source = value, source


class _Unbound:
    __slots__ = ()

    def __repr__(self):
        return "<unbound>"


_UNBOUND = _Unbound()
UNBOUND = _UNBOUND
