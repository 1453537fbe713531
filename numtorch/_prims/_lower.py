"""Family helpers for the ``lower`` rule of primitives (the compile backend's codegen rule).

A primitive's ``lower`` says how the inductor backend (``numtorch._inductor``) generates
code for it; this file only defines the small, inert descriptions that the family files
attach beside their other rules (one line each). It must not import the backend or build
any code: interpreting these descriptions is ``numtorch._inductor.lowering``'s job.

Four families (Note [Lower rules]):
  pointwise(c, **by_kind)   a scalar C expression of the operands ``{0}``, ``{1}``, ...;
                            ``{T}`` is the output's C type. ``by_kind`` overrides the
                            expression per dtype kind of the first operand ("f" float,
                            "i" signed, "u" unsigned, "b" bool); None there means "extern
                            for that dtype" (integer division by zero must raise as eager).
  reduction(init, combine)  reduce over ``axes``: ``init`` a value name ("zero", "one",
                            "lowest", "highest"), ``combine`` one of "sum", "prod", "max",
                            "min".
  movement(index)           ``index(load, idx, shapes, out_shape, **params)`` returns a C
                            expression of the output element at the index expressions
                            ``idx`` (strings), reading operand k with ``load(k, index)``
                            (``load.const(v)`` is a literal of the output's type): index
                            arithmetic, never a copy.
  extern(reason)            run the primitive's NumPy ``impl`` between kernels (BLAS,
                            LAPACK, sorting, random draws, data-dependent indexing).
"""
from __future__ import annotations

# Note [Lower rules]
# The backend needs three things from a primitive: for an elementwise one, the C
# expression of one output element from its operands' elements; for a reduction, how to
# start and combine an accumulator; for a movement, where an output element comes from.
# Everything else is an extern. Rules are data (strings and index functions), so the
# coverage test can check them without a C compiler, and the fallback without a compiler
# can ignore them.


class Pointwise:
    __slots__ = ("c", "by_kind")
    kind = "pointwise"

    def __init__(self, c, by_kind):
        self.c, self.by_kind = c, by_kind

    def expr_for(self, dtype_kind):
        """The C format string for operands of dtype kind ``dtype_kind``, or None (extern)."""
        return self.by_kind.get(dtype_kind, self.c)


class Reduction:
    __slots__ = ("init", "combine")
    kind = "reduction"

    def __init__(self, init, combine):
        self.init, self.combine = init, combine


class Movement:
    __slots__ = ("index",)
    kind = "movement"

    def __init__(self, index):
        self.index = index


class Extern:
    __slots__ = ("reason",)
    kind = "extern"

    def __init__(self, reason):
        self.reason = reason


def pointwise(c, **by_kind):
    """A pointwise lower rule: C expression ``c`` of the operands (see the module docstring)."""
    return Pointwise(c, by_kind)


def reduction(init, combine):
    """A reduction lower rule: accumulator start ``init`` and ``combine`` name."""
    return Reduction(init, combine)


def movement(index):
    """A movement lower rule: ``index(load, idx, shapes, out_shape, **params) -> C expr``."""
    return Movement(index)


def extern(reason):
    """Declare a primitive extern: the backend calls its NumPy impl (``reason`` says why)."""
    return Extern(reason)


# Frequent extern reasons, shared so the closing notes can group them.
FLOAT_ONLY = dict(i=None, u=None, b=None)   # integer operands: extern (eager's errors)
NOT_INT = dict(i=None, u=None)
