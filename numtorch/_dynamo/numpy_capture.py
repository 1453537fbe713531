"""NumPy programs under capture: NumPy arrays become traced ``numtorch._numpy`` arrays.

``compile`` of a function that takes and returns ``numpy.ndarray``s traces its NumPy code
as numtorch ops (the FAQ's "Can I compile NumPy code using torch.compile?"). This module
owns the three points where NumPy meets the symbolic interpreter:

- *inputs*: a ``numpy.ndarray`` read from a source (argument, global, closure, attribute)
  becomes a graph input (a Tensor sharing its memory) boxed in a ``numtorch._numpy.ndarray``;
  a ``numtorch._numpy.ndarray`` (``wrap_numpy``'s arguments) is boxed around its Tensor's
  graph input. Guards: type, dtype and shape.
- *calls*: a NumPy function (``np.sum``, a ufunc, ``np.linalg.norm``) is replaced by the
  ``numtorch._numpy`` function of the same name, which the interpreter calls for real on the
  symbolic arrays, so its numtorch ops land in the graph with NumPy's dtypes (NEP 50,
  float64 defaults). NumPy functions ``numtorch._numpy`` lacks, and ``numpy.random`` (its
  draws are not graph nodes: Note [NumPy's generator semantics]), are graph breaks: NumPy
  runs them on real arrays. With ``config.trace_numpy = False`` every NumPy call and the
  first use of a NumPy array is a graph break.
- *conversions*: ``t.numpy()`` and ``torch.from_numpy(a)`` of traced values box and unbox
  (Note [Tensor <-> ndarray in capture]), so mixed PyTorch/NumPy code stays one graph.
- *outputs*: a traced array that leaves the graph (returned, live across a graph break,
  passed to code that runs natively) is materialized by the generated code (Note [Which
  array comes out]).

It must not interpret bytecode (symbolic.py), generate whole frames (codegen.py) or
implement NumPy functions (``numtorch._numpy`` does, once: Note [One implementation per
NumPy function]).
"""
from __future__ import annotations

import sys

import numpy as np

from . import config

# Note [Which array comes out]
# Inside a capture every NumPy array is a ``numtorch._numpy.ndarray`` boxing a trace tensor.
# When the generated code must hand a real array to Python, it builds the kind of array the
# frame's caller works with: a ``numpy.ndarray`` (the Tensor's NumPy data, no copy), unless
# the frame received ``numtorch._numpy`` arrays, in which case it builds those (so code
# written for ``import numtorch._numpy as np`` keeps its arrays and gradients). An input
# array that comes back unchanged (or written in place: the graph writes into its memory)
# is returned as the very same object. ``wrap_numpy``'s frame takes Tensors, so a break
# inside wrapped NumPy code hands NumPy arrays to the native part — as in PyTorch, where
# "NumPy arrays are materialized" at a break and ``requires_grad`` does not cross it — and
# ``wrap_numpy`` turns NumPy arrays it gets back into Tensors.

_TABLE = None
_SCALAR_TYPES = None


def _tnp():
    import numtorch._numpy as tnp
    return tnp


def is_array(v) -> bool:
    """Is ``v`` a ``numtorch._numpy.ndarray`` (no import when that package is not loaded)?"""
    m = sys.modules.get("numtorch._numpy")
    return m is not None and type(v) is m.ndarray


def is_symbolic_array(v, cap) -> bool:
    """Is ``v`` a ``numtorch._numpy.ndarray`` boxing a trace tensor of this capture?"""
    tnp = _tnp()
    return type(v) is tnp.ndarray and cap.is_trace(v.tensor)


def wrap_array(cap, real, src):
    """The symbolic value of an array input, or None when ``real`` is not an array.

    Raises `Unsupported` for NumPy arrays that cannot be traced (``trace_numpy`` off, a
    dtype numtorch lacks), so their first use is a graph break and NumPy runs the rest.
    """
    from .values import Unsupported
    tnp = _tnp()
    g = cap.guards
    if type(real) is tnp.ndarray:
        g.type_of(src, real)
        cap.tnp_inputs = True
        return tnp.ndarray(cap.wrap(real.tensor, src.attr("tensor")))
    if type(real) is not np.ndarray:
        return None
    if not config.trace_numpy:
        raise Unsupported("a NumPy array with numtorch._dynamo.config.trace_numpy = False",
                          "set config.trace_numpy = True to trace NumPy code")
    from .._core import dtypes as _dt
    try:
        _dt.from_numpy(real.dtype)
    except Exception:
        raise Unsupported(f"a NumPy array of dtype {real.dtype} (numtorch has no such dtype)",
                          "use a dtype numtorch supports, or accept the graph break") from None
    e = src.expr
    g.type_of(src, real)
    g.add(f"{e}.dtype == {g.const(real.dtype)}", f"{src.words}.dtype == {real.dtype}")
    g.add(f"{e}.shape == {real.shape!r}", f"{src.words}.shape == {real.shape}")
    tsrc = src.__class__(f"{g.const(_as_tensor)}({e})", f"{src.words} as a Tensor")
    return tnp.ndarray(cap.tensor_input(_as_tensor(real), tsrc))


def _as_tensor(a):
    """The graph input for a NumPy array: a Tensor sharing its memory (writes reach it)."""
    from .._core.tensor import wrap_array
    return wrap_array(a)


def _to_numpy(t):
    """A graph output as a NumPy array (its data, not a copy)."""
    d = t._data
    return d if d.__class__ is np.ndarray else t.detach().numpy(force=True)


def _table():
    """id(NumPy callable) → the ``numtorch._numpy`` function of the same name."""
    global _TABLE, _SCALAR_TYPES
    if _TABLE is None:
        tnp = _tnp()
        table = {}
        for ns, ours in ((np, tnp), (np.linalg, tnp.linalg)):
            for name in dir(ours):
                mine, theirs = getattr(ours, name), getattr(ns, name, None)
                if name.startswith("_") or theirs is None or not callable(mine) or \
                        mine is theirs or isinstance(theirs, type):
                    continue
                table[id(theirs)] = mine
        _TABLE = table
        _SCALAR_TYPES = {t for t in np.sctypeDict.values() if issubclass(t, np.generic)}
    return _TABLE


# NumPy helpers on dtypes and Python values only: called for real (they see no arrays).
_PURE = {id(f) for f in (np.dtype, np.finfo, np.iinfo, np.can_cast, np.promote_types,
                         np.issubdtype)}


def is_numpy_callable(fn) -> bool:
    """Is ``fn`` one of NumPy's own functions, ufuncs, scalar types or methods?"""
    if isinstance(fn, np.ufunc) or id(fn) in _PURE:
        return True
    if isinstance(fn, type):
        return issubclass(fn, np.generic)
    mod = getattr(fn, "__module__", None) or ""
    if mod == "numpy" or mod.startswith("numpy."):
        return True
    owner = getattr(fn, "__self__", None)
    return owner is not None and (isinstance(owner, np.ufunc) or
                                  type(owner).__module__.startswith("numpy.random"))


def numpy_call(frame, fn, args, kwargs):
    """Run NumPy callable ``fn`` during capture: its ``numtorch._numpy`` twin, called for real
    on the symbolic arrays, or a graph break (`Unsupported`) where there is none."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
    if not config.trace_numpy:
        frame.unsupported(f"NumPy function np.{name} with config.trace_numpy = False",
                          "set numtorch._dynamo.config.trace_numpy = True to trace it")
    if id(fn) in _PURE:
        return frame.call_real(fn, args, kwargs, name)
    table = _table()
    if isinstance(fn, type):         # np.float32(3): a 0-d array under compile (FAQ)
        cap = frame.cap
        if fn in _SCALAR_TYPES and not any(is_symbolic_array(a, cap) or cap.is_trace(a)
                                           for a in args):
            return frame.call_real(fn, args, kwargs, name)   # a constant, exactly NumPy's
        tnp = _tnp()
        return frame.call_real(lambda x=0: tnp.asarray(x, dtype=fn), args, kwargs, name)
    mod = getattr(fn, "__module__", None) or ""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, np.ufunc):      # np.add.reduce → numtorch._numpy.add.reduce
        ours = getattr(table.get(id(owner)), fn.__name__, None)
        name = f"{owner.__name__}.{fn.__name__}"
    else:
        ours = table.get(id(fn))
    if ours is None or mod.startswith("numpy.random"):
        why = ("numpy.random draws are not graph nodes" if mod.startswith("numpy.random")
               else "numtorch._numpy has no such function")
        frame.unsupported(f"NumPy function np.{name}: {why}; NumPy runs it at a graph break",
                          "use a function numtorch._numpy supports to keep one graph")
    return frame.call_real(ours, args, kwargs, name)


# Note [Tensor <-> ndarray in capture]
# Mixed programs convert with ``t.numpy()`` and ``torch.from_numpy(a)`` (the FAQ: "mixed
# PyTorch-NumPy programs"). On traced values both are free: ``t.numpy()`` boxes the trace
# tensor in a ``numtorch._numpy`` array (NumPy's semantics from here on), and
# ``from_numpy``/``as_tensor``/``asarray`` unbox it (``tensor`` copies, as eagerly). No
# data moves and no graph break happens.

def _bridges():
    from .._core.tensor import Tensor
    from .._ops import creation as C
    return Tensor.numpy, {C.from_numpy: False, C.as_tensor: False, C.asarray: False,
                          C.tensor: True}


def is_bridge(cap, fn, args) -> bool:
    """Is this call a Tensor <-> array conversion of a traced value?"""
    to_np, from_np = _bridges()
    if getattr(fn, "__func__", None) is to_np:
        return cap.is_trace(fn.__self__)
    try:
        return fn in from_np and bool(args) and is_symbolic_array(args[0], cap)
    except TypeError:      # an unhashable callable
        return False


def bridge(frame, fn, args, kwargs):
    """Run a conversion of `is_bridge` on traced values (Note [Tensor <-> ndarray in capture])."""
    to_np, from_np = _bridges()
    if getattr(fn, "__func__", None) is to_np:
        return _tnp().ndarray(fn.__self__)
    t = args[0].tensor
    dtype = kwargs.get("dtype")
    if dtype is not None:
        t = frame.call_real(t.to, [dtype], {}, "to")
    return frame.call_real(t.clone, [], {}, "clone") if from_np[fn] else t


def type_query(cap, fn, args):
    """``type(x)`` / ``isinstance(x, cls)`` of a symbolic array: the class of the array it
    will be at run time (Note [Which array comes out]), not of the capture's box."""
    cls = _tnp().ndarray if cap.tnp_inputs else np.ndarray
    return cls if fn is type else issubclass(cls, args[1])


def materialize(gen, v):
    """A Python expression for the real array of symbolic ``v`` (Note [Which array comes
    out]); called by `Codegen.expr`, which memoizes per symbolic value."""
    cap = gen.cap
    src = cap.source_of.get(id(v))
    if src is not None:          # an input array: the same object (in-place writes reach it)
        return src.expr
    t = gen.expr(v.tensor)
    if getattr(cap, "tnp_inputs", False):
        return f"{gen.const(_tnp().ndarray)}({t})"
    if not cap.is_trace(v.tensor):   # a constant made during capture: a fresh copy per call
        return f"{gen.const(_to_numpy)}({t}).copy()"
    return f"{gen.const(_to_numpy)}({t})"
