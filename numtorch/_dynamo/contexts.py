"""``with`` blocks in capture: which context managers are traced, and how their exits run.

- grad-mode contexts (``no_grad``, ``enable_grad``, ``set_grad_enabled``): mode changes in
  the graph (Note [Grad mode in the graph] in values.py);
- user classes whose ``__enter__``/``__exit__`` are Python: both are inlined;
- ``contextlib.contextmanager`` generator functions: the generator runs as a suspended
  symbolic frame (Note [Generator context managers]);
- ``contextlib.nullcontext``: its ``enter_result``.
Anything else is a graph break at the ``with``. Must not generate code.
"""
from __future__ import annotations

import contextlib
import types

from .builtins_table import user_code
from .values import GradExit, SymRaise

_CM_HELPER = contextlib.contextmanager(lambda: None).__code__   # what @contextmanager returns


def enter(frame, ctx):
    """BEFORE_WITH: ``(exit callable, value of __enter__)`` for context manager ``ctx``."""
    from ..autograd.grad_mode import _GradModeContext, set_grad_enabled
    if isinstance(ctx, _GradModeContext):
        if type(ctx) is set_grad_enabled:      # the mode changed when it was made
            prev = ctx._prev
        else:
            prev = frame.cap.grad_enabled
            frame.set_grad(ctx._value)
        return GradExit(prev), ctx
    if type(ctx) is contextlib.nullcontext:
        return _null_exit, ctx.enter_result
    if isinstance(ctx, SymGeneratorCM):
        return _start(frame, ctx)
    cls = type(ctx)
    en, ex = getattr(cls, "__enter__", None), getattr(cls, "__exit__", None)
    if isinstance(en, types.FunctionType) and isinstance(ex, types.FunctionType) and \
            user_code(en) and user_code(ex) and not cls.__module__.startswith("contextlib"):
        return CtxExit(ctx), frame.call(en, [ctx], {})
    frame.unsupported(f"context manager {cls.__name__} (traced: no_grad, enable_grad, "
                      f"set_grad_enabled, nullcontext, classes with Python __enter__/"
                      f"__exit__ and @contextmanager functions)",
                      "move the with block out of the compiled function")


def _null_exit(*exc):
    return None


def is_contextmanager_function(fn):
    """Whether ``fn`` is what ``@contextlib.contextmanager`` made of a generator function."""
    return isinstance(fn, types.FunctionType) and fn.__code__ is _CM_HELPER and \
        isinstance(getattr(fn, "__wrapped__", None), types.FunctionType)


class SymGeneratorCM:
    """``cm_fn(*args, **kwargs)`` for a ``@contextmanager`` function, not entered yet."""

    __slots__ = ("cm_fn", "args", "kwargs")

    def __init__(self, cm_fn, args, kwargs):
        self.cm_fn, self.args, self.kwargs = cm_fn, args, kwargs


class CtxExit:
    """The ``__exit__`` of a user context manager object ``obj`` entered in capture."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def exit(self, frame, args, kwargs):
        return frame.call(type(self.obj).__exit__, [self.obj, *args], kwargs)


# Note [Generator context managers]
# ``with cm(...) as v:`` for a ``@contextmanager`` generator function runs the generator's
# code as a symbolic frame up to its ``yield`` (``v`` is the yielded value) and leaves it
# suspended there; the with block's exit resumes it: on a normal exit to its end (a second
# yield is contextlib's "generator didn't stop"), on an exception by unwinding the frame to
# its handler at the yield, as ``gen.throw`` would. If the generator then finishes, the
# exception is suppressed; if it raises the same exception, it propagates. A graph break
# inside such a block (a suspended symbolic frame cannot be handed to a resume function)
# makes the frame run eagerly.
class GenExit:
    """The exit of a ``@contextmanager`` block: the generator's suspended frame."""

    __slots__ = ("child",)

    def __init__(self, child):
        self.child = child

    def exit(self, frame, args, kwargs):
        child = self.child
        child.parent = frame
        exc_type = args[0] if args else None
        if exc_type is None:
            kind, _ = child.run()
            if kind == "yield":
                raise SymRaise(RuntimeError("generator didn't stop"))
            return False
        exc = args[1]
        child.pop()                                 # the value sent at the yield
        if not child.handle(exc, child.insts[child.pc - 1]):
            return False                            # not caught there: it propagates
        try:
            kind, _ = child.run()
        except SymRaise as r:
            if r.exc is exc:
                return False
            raise
        if kind == "yield":
            raise SymRaise(RuntimeError("generator didn't stop after throw()"))
        return True


def _start(frame, gcm):
    from .calls import bind_arguments
    from .symbolic import Frame
    fn = gcm.cm_fn.__wrapped__
    code = fn.__code__
    localsplus = bind_arguments(frame, code, gcm.args, gcm.kwargs, fn.__defaults__ or (),
                                fn.__kwdefaults__ or {}, fn.__name__)
    cells = {n: ("real", i, c, None)
             for i, (n, c) in enumerate(zip(code.co_freevars, fn.__closure__ or ()))}
    child = Frame(frame.cap, code, fn.__globals__, localsplus, cells, parent=frame,
                  name=fn.__name__)
    child.suspend = True
    kind, value = child.run()
    if kind != "yield":
        raise SymRaise(RuntimeError("generator didn't yield"))
    return GenExit(child), value
