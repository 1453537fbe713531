"""Tables of what the symbolic interpreter may call for real: operators and pure builtins.

Owns the classification of callables (numtorch's own code, user code, pure builtins,
mutating container methods). Must not interpret anything.
"""
from __future__ import annotations

import builtins
import math
import operator
import os
import sys
import types

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_DYNAMO = os.path.dirname(os.path.abspath(__file__))

# BINARY_OP's argument (3.11's nb_* order) → the operator function
BINARY_OPS = [operator.add, operator.and_, operator.floordiv, operator.lshift, operator.matmul,
              operator.mul, operator.mod, operator.or_, operator.pow, operator.rshift,
              operator.sub, operator.truediv, operator.xor,
              operator.iadd, operator.iand, operator.ifloordiv, operator.ilshift,
              operator.imatmul, operator.imul, operator.imod, operator.ior, operator.ipow,
              operator.irshift, operator.isub, operator.itruediv, operator.ixor]
COMPARE_OPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
               ">": operator.gt, ">=": operator.ge}
UNARY_OPS = {"UNARY_NEGATIVE": operator.neg, "UNARY_INVERT": operator.invert,
             "UNARY_POSITIVE": operator.pos}

# Builtins without side effects that are safe to call on symbolic values: they only read
# their arguments (a tensor argument is a trace tensor; what needs its value raises and
# becomes a graph break).
PURE_BUILTINS = {builtins.len, builtins.isinstance, builtins.issubclass, builtins.min,
                 builtins.max, builtins.abs, builtins.sorted, builtins.sum, builtins.any,
                 builtins.all, builtins.divmod, builtins.round, builtins.pow, builtins.hasattr,
                 builtins.callable, builtins.id, builtins.hash, builtins.repr, builtins.chr,
                 builtins.ord, builtins.format}
PURE_TYPES = {int, float, bool, str, tuple, list, dict, set, frozenset, range, enumerate, zip,
              reversed, slice, complex, type, object}
MUTATING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "move_to_end",
                    "setdefault", "add", "discard", "sort", "reverse", "popitem",
                    "__setitem__", "__delitem__"}
_PURE_MODULES = {"math", "operator", "cmath", "_operator"}


def _file_of(obj):
    code = getattr(obj, "__code__", None)
    if code is not None:
        return code.co_filename
    mod = sys.modules.get(getattr(obj, "__module__", None) or "")
    return getattr(mod, "__file__", None) or ""


def is_numtorch_callable(fn) -> bool:
    """numtorch's own functions/methods/classes (outside _dynamo): called for real."""
    f = _file_of(fn)
    return bool(f) and f.startswith(_PKG) and not f.startswith(_DYNAMO)


def user_code_file(filename) -> bool:
    """Is code from ``filename`` the user's (not numtorch's)?"""
    return not filename.startswith(_PKG)


_HEAPTYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE


def user_code(obj) -> bool:
    """Is ``obj`` (a function, class or module) written outside numtorch and the stdlib's C?"""
    if isinstance(obj, types.ModuleType):
        f = getattr(obj, "__file__", None) or ""
        return bool(f) and not f.startswith(_PKG) and "site-packages" not in f and \
            not f.startswith(os.path.dirname(os.__file__))
    if isinstance(obj, type):
        mod = obj.__module__
        if mod == "builtins":   # a builtin type, or a class made by code exec'd without a
            return bool(obj.__flags__ & _HEAPTYPE)   # __name__: a class statement's is a heap type
        m = sys.modules.get(mod)
        return m is None or user_code(m) if m is not None else True
    if isinstance(obj, types.FunctionType):
        f = obj.__code__.co_filename
        return not f.startswith(_PKG)
    return False


def pure_c_function(fn) -> bool:
    """math.*, operator.* and the pure builtins: safe to call for real."""
    if fn in PURE_BUILTINS or fn in PURE_TYPES:
        return True
    return isinstance(fn, types.BuiltinFunctionType) and \
        getattr(fn, "__module__", None) in _PURE_MODULES


_ = math
