"""Graph passes the backend runs before scheduling (``optimize``), and the movement pass.

``simplify_movement`` folds chains of movement nodes into one (transpose of a transpose,
reshape of a reshape, broadcast of a broadcast) and drops the ones that change nothing
(identity permutations, reshapes and broadcasts to the operand's own shape, casts to the
operand's dtype, full slices); ``simplify_arithmetic`` writes powers with a literal exponent as
products (Note [Powers with a literal exponent]). ``optimize`` runs them with the generic passes of
``numtorch/_core/passes.py`` (CSE, DCE; constant folding only under ``config.freezing``,
Note [Folding captured tensors]). Each pass is a function graph -> graph; this module
holds only these rules, the constants' literal values and the pipeline, no scheduling or
code.

Note [One movement per chain]
The C code generator already composes a chain of movements into one index expression
(Note [Fusion by inlining]), but each link adds arithmetic the compiler must see through
(a reshape of a reshape divides and takes remainders twice), and the NumPy code runs one
view per link. Folding the chain at the graph level gives both one index map. A dropped
identity node is replaced by its operand only when the node is not itself a graph output,
so an output never becomes the same tensor object as an input where eager returns a new
one (a view).

Note [Folding captured tensors]
A graph's constants are tensors it captured (module parameters and buffers included):
the kernels read them at call time, so an optimizer's in-place update is seen by the next
call. Folding a node whose operands are constants would freeze their current values into
the code. That is TorchInductor's ``freezing`` (off by default there too), so
``fold_constants`` runs only under ``config.freezing``.
"""
from __future__ import annotations

import numpy as np

from .._core import passes
from .._core.ir import Const
from .._core.passes import Rule
from . import config


def _producer(node, rw, name):
    """The node of primitive ``name`` that made ``node``'s operand, or None."""
    p = rw.producer(node.ins[0])
    return p if p is not None and p.prim.name == name and not p.is_effect() else None


def _identity(node, rw):
    """Whether ``node`` may be replaced by its operand (Note [One movement per chain])."""
    out = node.outs[0]
    return all(o is not out for o in rw.graph.outputs)


def _transpose(node, rw):
    perm = tuple(node.params["permutation"])
    inner = _producer(node, rw, "transpose")
    if inner is not None:
        p1 = inner.params["permutation"]
        composed = tuple(p1[i] for i in perm)
        x = inner.ins[0]
        if composed == tuple(range(len(perm))) and _identity(node, rw):
            return x
        return rw.emit(node.prim, x, permutation=composed)
    if perm == tuple(range(len(perm))) and _identity(node, rw):
        return node.ins[0]
    return None


def _unit_map(a, b):
    """For a reshape from shape ``a`` to ``b`` that only inserts or removes size-1 dims:
    {dim of a: dim of b} for the dims of size > 1; else None."""
    ka, kb = [i for i, n in enumerate(a) if n != 1], [i for i, n in enumerate(b) if n != 1]
    if [a[i] for i in ka] != [b[i] for i in kb]:
        return None
    return dict(zip(ka, kb))


def _reshape(node, rw):
    inner = _producer(node, rw, "reshape")
    x = inner.ins[0] if inner is not None else node.ins[0]
    out_shape = tuple(node.outs[0].shape)
    if tuple(_shape(x)) == out_shape and _identity(node, rw):
        return x
    if inner is not None:
        return rw.emit(node.prim, x, new_shape=tuple(node.params["new_shape"]))
    bcast = _producer(node, rw, "broadcast_in_dim")
    if bcast is not None:        # unit dims added to or removed from a broadcast's result
        where = _unit_map(bcast.params["shape"], out_shape)
        dims = bcast.params["broadcast_dimensions"]
        if where is not None and all(d in where for d in dims):
            return rw.emit(bcast.prim, bcast.ins[0], shape=out_shape,
                           broadcast_dimensions=tuple(where[d] for d in dims))
    return None


def _broadcast(node, rw):
    shape, dims = tuple(node.params["shape"]), tuple(node.params["broadcast_dimensions"])
    inner = _producer(node, rw, "broadcast_in_dim")
    if inner is not None:
        x = inner.ins[0]
        composed = tuple(dims[d] for d in inner.params["broadcast_dimensions"])
        return rw.emit(node.prim, x, shape=shape, broadcast_dimensions=composed)
    unit = _producer(node, rw, "reshape")
    if unit is not None:         # a broadcast of x with unit dims added or removed
        x = unit.ins[0]
        where = _unit_map(_shape(x), unit.outs[0].shape)
        if where is not None and len(where) == len(_shape(x)):
            return rw.emit(node.prim, x, shape=shape,
                           broadcast_dimensions=tuple(dims[where[k]] for k in range(len(where))))
    x = node.ins[0]
    if tuple(_shape(x)) == shape and dims == tuple(range(len(shape))) and _identity(node, rw):
        return x
    return None


def _convert(node, rw):
    x = node.ins[0]
    if _dtype(x) == node.outs[0].dtype and _identity(node, rw):
        return x
    return None


def _slice(node, rw):
    p, x = node.params, node.ins[0]
    full = all(s == 0 and lim == n and st == 1 for s, lim, st, n in zip(
        p["start_indices"], p["limit_indices"], p["strides"] or [1] * len(_shape(x)), _shape(x)))
    return x if full and _identity(node, rw) else None


# Note [Literal constants]
# A constant whose elements are all equal becomes a C literal (``x * 1.5`` multiplies by a
# literal instead of reading a broadcast array) when nothing can change it between calls:
# a literal of the graph (`Const.literal`, Note [Literals and captured tensors]: the 0-d
# tensor a Python number became, a tensor made inside the traced function) that no node
# of the graph writes, or a read-only array (the trace's broadcast of a Python number). A
# tensor the program holds (a global, a parameter) is writable, may be written in place
# between calls, and so is read from memory at every call. A read-only view of a writable
# tensor made during tracing (``w.expand(4)`` of a captured ``w``) is still baked in: the
# trace already evaluated it as a value of the graph.
# The literal matters beyond one load: with ``x ** 2`` the exponent as a literal lets the C
# compiler turn ``pow(x, 2)`` into ``x * x`` (exact, so eager's bits: NumPy's power gives
# the square's bits too), where an exponent read from memory kept a libm call per element.


def literal_value(c, written):
    """The one value of constant ``c`` if nothing changes it between calls and its elements
    are all equal (Note [Literal constants]), else None. ``written``: ids of the values the
    graph writes."""
    from .scheduler import C_TYPES
    a = c.value._data
    fixed = (c.literal and id(c) not in written) or not a.flags.writeable
    if a.__class__ is not np.ndarray or a.size == 0 or a.dtype.name not in C_TYPES or not fixed:
        return None
    flat = a.reshape(-1)
    first = flat[0]
    if a.size > 1 and not (np.all(flat == first) or (first != first and np.all(flat != flat))):
        return None
    return first.item()


# Note [Powers with a literal exponent]
# `x ** n` binds pow with the literal n broadcast to x's shape. In C, pow(x, n) stayed a
# libm call per element: the vectoriser turns it into libmvec's SIMD pow before GCC's late
# pass could expand it, libmvec's pow takes a slow path for negative bases (compiled
# `x ** 3` of normal draws: 20 ns per element against torch.compile's 0.2), and it is not
# eager's bits. Where a product is the power's exact or correctly rounded value, the
# graph says so:
#   n = 2     x * x: the exact square rounded once, the bits NumPy's power gives too.
#   n = -1    1 / x: one correctly rounded division, NumPy's power's bits (float32 and
#             float64, 10^7 draws over the whole range).
#   float32, 3 <= |n| <= 8 or n = -2: the product (and reciprocal) in float64, then one
#             rounding to float32. x^2 is exact in double, each further product adds at
#             most 2^-53 relative error, and float32's range raised to the 8th stays
#             inside double's, so the result is the correctly rounded power except within
#             (|n| - 1) * 2^-29 of a rounding midpoint. NumPy's float32 power is not
#             correctly rounded (it differs from this in ~10% of draws, by one ulp), so
#             compiled and eager differ there in the last bit, as with libmvec before,
#             and compiled is the more accurate. Special values follow C's pow for integer
#             exponents: signed zeros, infinities, NaN.
# float64 with other integers keeps pow: products in double differ from the correctly
# rounded power in ~20% of draws. Only a literal exponent qualifies (a captured tensor of
# twos may be changed between calls).

_WIDENED_POWERS = frozenset({-8, -7, -6, -5, -4, -3, -2, 3, 4, 5, 6, 7, 8})


def _power(node, rw, written):
    from .._prims.elementwise import convert_element_type, div, mul
    y = node.ins[1]
    b = rw.producer(y)
    c = b.ins[0] if b is not None and b.prim.name == "broadcast_in_dim" else y
    if not isinstance(c, Const) or c.value._data.dtype.kind != "f":
        return None
    n = literal_value(c, written)
    x = node.ins[0]
    if n == 2:
        return rw.emit(mul, x, x)
    dtype = np.dtype(_dtype(x))
    if n == -1:
        return rw.emit(div, _filled(rw, 1, dtype, _shape(x)), x)
    if dtype != np.float32 or n not in _WIDENED_POWERS:
        return None
    wide = rw.emit(convert_element_type, x, dtype=np.dtype(np.float64))
    p = wide
    for _ in range(abs(int(n)) - 1):
        p = rw.emit(mul, p, wide)
    if n < 0:
        p = rw.emit(div, _filled(rw, 1, np.dtype(np.float64), _shape(x)), p)
    return rw.emit(convert_element_type, p, dtype=dtype)


def _filled(rw, value, dtype, shape):
    """A literal ``value`` broadcast to ``shape``, as the trace writes a Python number."""
    from .._prims.shape import broadcast_in_dim
    one = rw.const(np.array(value, dtype))
    return rw.emit(broadcast_in_dim, one, shape=tuple(shape), broadcast_dimensions=())


def _shape(v):
    return v.shape if hasattr(v, "shape") else tuple(v.value.shape)


def _dtype(v):
    return v.dtype if hasattr(v, "dtype") else v.value._data.dtype


MOVEMENT_RULES = (Rule("transpose", _transpose), Rule("reshape", _reshape),
                  Rule("broadcast_in_dim", _broadcast), Rule("convert_element_type", _convert),
                  Rule("slice", _slice))


def simplify_movement(graph):
    """Fold chains of movement nodes into one and drop identities (Note [One movement per
    chain]); the nodes left dead are removed by `dce`."""
    return passes.rewrite(graph, MOVEMENT_RULES)


def simplify_arithmetic(graph):
    """Powers with a literal exponent as products (Note [Powers with a literal exponent])."""
    written = passes.written_ids(graph)
    return passes.rewrite(graph, (Rule("pow", lambda node, rw: _power(node, rw, written),
                                       name="power"),))


def forward_writes(graph):
    """Readers of a written value (``copy_to``'s output) read the value written (its
    ``src``) instead; the chain of writes itself is kept (Note [Horizontal fusion])."""
    from .._core.ir import Graph, Node
    env, nodes = {}, []
    for n in graph.nodes:
        if n.is_effect():
            k = n.prim.mutates
            ins = [v if i == k else env.get(id(v), v) for i, v in enumerate(n.ins)]
            node = Node(n.prim, ins, n.params, n.outs, n.where)
            if n.prim.name == "copy_to":
                env[id(n.outs[0])] = ins[1]
        else:
            node = Node(n.prim, [env.get(id(v), v) for v in n.ins], n.params, n.outs, n.where)
        nodes.append(node)
    return Graph(list(graph.inputs), nodes, list(graph.outputs), list(graph.consts),
                 graph.in_tree, graph.out_tree, graph.name)


def optimize(graph, log=None):
    """The backend's pass pipeline: (constant folding under ``config.freezing``), movement
    and arithmetic simplification, forwarded writes, CSE, DCE. ``log`` (e.g. ``print``) receives each graph before and after."""
    pipeline = ((passes.fold_constants,) if config.freezing else ()) + \
        (simplify_movement, simplify_arithmetic, forward_writes, passes.cse, passes.dce)
    return passes.optimize(graph, pipeline, log=log)
