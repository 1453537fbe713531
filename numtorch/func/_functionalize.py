"""``functionalize``: run a function with its in-place ops turned into out-of-place ones.

Inside, every tensor is a tracer of a pass-through interpreter, so in-place ops rebind
payloads instead of writing buffers (Note [In-place ops]); at the end, inputs that were
mutated receive their final values with one ``copy_`` each, as PyTorch does.
"""
from __future__ import annotations

import functools

from .._core.primitive import Interpreter, Tracer, bind, pop, push
from .._core.pytree import tree_flatten, tree_unflatten
from .._core.tensor import Tensor, wrap


class FunctionalTracer(Tracer):
    __slots__ = ("value",)

    def __init__(self, interp, value):
        self.interp, self.value = interp, value

    def inner(self):
        return self.value


class FunctionalizeInterpreter(Interpreter):
    __slots__ = ()

    def mine(self, t):
        d = t._data
        return d.__class__ is FunctionalTracer and d.interp is self

    def _unwrap(self, args):
        return [a._data.value if isinstance(a, Tensor) and self.mine(a) else a for a in args]

    def _wrap(self, out):
        if isinstance(out, tuple):
            return tuple(self._wrap(o) for o in out)
        return wrap(FunctionalTracer(self, out)) if isinstance(out, Tensor) else out

    def process(self, prim, args, params):
        if prim.mutates is not None:
            # A write's value stays at this level; no write reaches the levels below
            # (Note [Effects]). The tensor is rebound to it by whoever bound the write.
            return self._wrap(prim.discharge(*self._unwrap(args), **params))
        return self._wrap(bind(prim, *self._unwrap(args), **params))


def functionalize(func, *, remove="mutations"):
    """Returns a function computing what ``func`` does, without in-place ops inside.

    ``remove='mutations_and_views'`` is accepted too: numtorch's graphs never alias, so
    views already appear as out-of-place primitives.
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for "
                           f"remove={remove}. Valid options are: remove='mutations' and "
                           f"remove='mutations_and_views'")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        leaves, spec = tree_flatten(args)
        interp = push(FunctionalizeInterpreter())
        try:
            lifted = [wrap(FunctionalTracer(interp, x)) if isinstance(x, Tensor) else x
                      for x in leaves]
            initial = [t._data if isinstance(t, Tensor) else None for t in lifted]
            out = func(*tree_unflatten(lifted, spec), **kwargs)
            out_leaves, out_spec = tree_flatten(out)
            results = [o._data.value if isinstance(o, Tensor) and interp.mine(o) else o
                       for o in out_leaves]
            for x, t, first in zip(leaves, lifted, initial):
                if isinstance(t, Tensor) and t._data is not first:
                    x.copy_(t._data.value)
        finally:
            pop(interp)
        return tree_unflatten(results, out_spec)
    return wrapper
