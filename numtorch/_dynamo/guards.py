"""Sources and guards: where each captured value came from, and the generated check.

A *source* is a Python expression over the frame's inputs — ``L[0]`` (an argument),
``G['w']`` (a global), ``C[1].cell_contents`` (a closure cell), then ``.attr`` and
``[key]`` on those. The symbolic interpreter gives every value it reads from outside a
source; reading it installs a guard on that source (tensor type/dtype/shape/requires_grad,
constants by type and value, identity of functions/classes/modules). The guards of a cache
entry are compiled into ONE generated Python function ``guard(L, G, C)`` (Note [Generated
guards]), so a cache hit is one call evaluating one boolean expression.

This file must not interpret bytecode or touch graphs.
"""
from __future__ import annotations

import math
import operator
import types

import numpy as np

from .._core.tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from .._core import primitive as _primitive


class Source:
    """A Python expression (``expr``) that re-reads a value from ``L``/``G``/``C``."""

    __slots__ = ("expr", "words")

    def __init__(self, expr, words):
        self.expr, self.words = expr, words

    def attr(self, name):
        return Source(f"{self.expr}.{name}", f"{self.words}.{name}")

    def item(self, key):
        return Source(f"{self.expr}[{key!r}]", f"{self.words}[{key!r}]")

    def __repr__(self):
        return self.words


def local_source(i, name):
    return Source(f"L[{i}]", name)


def global_source(name):
    return Source(f"G[{name!r}]", f"G[{name!r}]")


def closure_source(i, name):
    return Source(f"C[{i}].cell_contents", name)


CONSTANT_TYPES = (int, float, bool, str, bytes, type(None), complex, type(Ellipsis))

# Note [Generated guards]
# Each guard is a (Python expression, description in words) pair. The expressions are
# joined with `and` into the body of one generated function; on a miss, the failing guard
# is found by evaluating them one by one, which gives the recompile reason in words
# ("L['x'].shape == (10,)" failed, i.e. "x: size changed from (10,) to (4,)"). Constants
# that are not literals (dtypes, functions, modules) are bound as ``___k<n>`` globals of the
# generated function, and identity checks use ``is``.


class GuardSet:
    """The guards one capture installs, in installation order (deduplicated)."""

    def __init__(self):
        self.checks = []          # (expr, words)
        self.seen = set()
        self.consts = {}          # name -> object
        self._const_ids = {}

    def const(self, obj):
        name = self._const_ids.get(id(obj))
        if name is None:
            name = f"___k{len(self.consts)}"
            self.consts[name] = obj
            self._const_ids[id(obj)] = name
        return name

    def add(self, expr, words):
        if expr not in self.seen:
            self.seen.add(expr)
            self.checks.append((expr, words))

    # -- the guard kinds ------------------------------------------------------------------
    def tensor(self, src, t, dynamic=()):
        """Type, dtype, sizes (but the ``dynamic`` dims, whose guards come from the shape
        env: Note [Shape guards are cache guards] in shapes.py) and requires_grad."""
        e = src.expr
        self.add(f"type({e}) is {self.const(type(t))}", f"{src.words} is a {type(t).__name__}")
        # Note [Fast tensor guards]: the checks read the payload (an ndarray, or a tracer
        # under a transform) directly: Tensor.dtype/.shape build a torch dtype / a Size on
        # each call, which made the guards most of a cache hit's cost.
        d = t._data
        plain = d.__class__ is np.ndarray
        if plain:
            self.add(f"{e}._data.__class__ is {self.const(np.ndarray)}",
                     f"{src.words} is a plain tensor (no transform's tracer)")
        nd = self.const(d.dtype)
        self.add(f"({e}._data.dtype is {nd} or {e}._data.dtype == {nd})",
                 f"{src.words}.dtype == {t.dtype}")
        shape = tuple(d.shape)
        if not dynamic:
            self.add(f"{e}._data.shape == {shape!r}", f"{src.words}.size() == {shape}")
        else:
            self.add(f"len({e}._data.shape) == {len(shape)}", f"{src.words}.dim() == {len(shape)}")
            for i, n in enumerate(shape):
                if i not in dynamic:
                    self.add(f"{e}._data.shape[{i}] == {n}", f"{src.words}.size()[{i}] == {n}")
        rg = t.requires_grad
        if plain:
            self.add(f"{'' if rg else 'not '}{e}._requires_grad",
                     f"{src.words}.requires_grad == {rg}")
        else:
            self.add(f"{e}.requires_grad == {rg!r}", f"{src.words}.requires_grad == {rg}")

    def constant(self, src, v):
        e = src.expr
        self.add(f"type({e}) is {self.const(type(v))}", f"{src.words} is a {type(v).__name__}")
        if isinstance(v, float) and v != v:
            self.add(f"{e} != {e}", f"{src.words} is nan")
        else:
            self.add(f"{e} == {v!r}", f"{src.words} == {v!r}")

    def identity(self, src, v):
        self.add(f"{src.expr} is {self.const(v)}", f"{src.words} is the same object as before "
                 f"({type(v).__name__} {getattr(v, '__qualname__', '')})".rstrip())

    def type_of(self, src, v):
        self.add(f"type({src.expr}) is {self.const(type(v))}",
                 f"{src.words} is a {type(v).__name__}")

    def length(self, src, v):
        self.type_of(src, v)
        self.add(f"len({src.expr}) == {len(v)}", f"len({src.words}) == {len(v)}")

    def dict_keys(self, src, v):
        self.type_of(src, v)
        self.add(f"tuple({src.expr}) == {self.const(tuple(v))}",
                 f"{src.words} has the keys {tuple(v)}")

    def dict_key_objects(self, src, v, keys):
        """The dict has, in order, the keys the expressions ``keys`` evaluate to, compared
        by identity (Note [Dicts keyed by objects] in capture.py)."""
        self.type_of(src, v)
        self.add(f"len({src.expr}) == {len(v)} and all(map({self.const(operator.is_)}, "
                 f"{src.expr}, ({', '.join(keys)},)))",
                 f"{src.words} has the same {len(v)} key objects in the same order")

    def global_state(self, depth):
        self.add(f"{self.const(_primitive.grad_mode)}[0] is {is_grad_enabled()!r}",
                 f"grad mode is {'enabled' if is_grad_enabled() else 'disabled'}")
        self.add(f"len({self.const(_primitive.STACK)}) == {depth}",
                 f"{depth} transform level(s) active")

    # -- code generation ------------------------------------------------------------------
    def source(self):
        body = " and ".join(f"({e})" for e, _ in self.checks) or "True"
        return f"def ___guard(L, G, C):\n    return {body}\n"

    def build(self):
        """The generated guard function and its source text."""
        src = self.source()
        scope = dict(self.consts)
        scope["math"] = math     # shape guards may use math.floor (shapes.py)
        exec(compile(src, "<numtorch guard>", "exec"), scope)
        fn = scope["___guard"]
        fn.checks, fn.scope, fn.text = list(self.checks), scope, src
        return fn


def failure_reason(guard, L, G, C) -> str:
    """In words, the first guard of ``guard`` that fails on these inputs."""
    for expr, words in guard.checks:
        try:
            ok = eval(expr, guard.scope, {"L": L, "G": G, "C": C})
        except Exception:
            ok = False
        if not ok:
            return f"{words} (guard: {expr})"
    return "unknown"


def is_constant(v):
    return type(v) in CONSTANT_TYPES


def identity_guarded(v):
    """Objects guarded by identity: functions, classes, modules, methods of modules."""
    return isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type, types.ModuleType,
                          types.MethodType)) or callable(v) and not isinstance(v, Tensor)
