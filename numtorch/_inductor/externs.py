"""Which primitives the inductor backend runs as externs (their NumPy ``impl`` called
between kernels) and why, generated from the primitives' lower rules and the scheduler's
conditions: ``python -m numtorch._inductor.externs`` prints the table.

This module only reports; ``scheduler.lowerable`` (and ``gemm.plan`` for products,
``gather.plan`` for gather and scatter_add, ``scan.plan`` for cumsum) decide.
Each row names the primitive, when it is an extern ("always", or the dtypes or condition
that make it one) and the reason, so the list in the issue's closing note is a printout,
not a recount by hand.
"""
from __future__ import annotations

from .scheduler import C_TYPES

_KIND_NAMES = {"f": "float", "i": "signed integer", "u": "unsigned integer", "b": "bool"}

# Conditions of scheduler.lowerable that hold for any primitive (the rows with primitive "*").
GENERAL = (
    ("*", "an operand or result of a dtype not in C_TYPES (float16, complex)",
     "the generator writes C for " + ", ".join(sorted(C_TYPES)) + " only"),
    ("*", "a sum or product reduction of bool operands",
     "the shape rule says bool but np.add/np.multiply.reduce give int64; torch's sum and "
     "prod convert bools first, so their graphs never hold one"),
)


def extern_table():
    """Rows ``(primitive, when, reason)``, sorted by primitive: every primitive that is
    declared extern (its ``lower`` is ``extern(reason)``), that has no C expression for
    some dtype kinds, that writes an operand, or that has several results without an
    extern declaration; then the conditions that make any primitive an extern (``"*"``)."""
    from .._core.primitive import ALL_PRIMITIVES
    rows = []
    for name in sorted(ALL_PRIMITIVES):
        prim = ALL_PRIMITIVES[name]
        rule = getattr(prim, "lower", None)
        if rule is None:
            rows.append((name, "always", "no lower rule"))
        elif rule.kind == "extern":
            when = "always"
            if name == "dot_general":     # gemm.plan: Note [Small products in C]
                when = ("unless small enough for a C loop, or a 2-D float product BLAS runs "
                        "from the segment (Notes [Small products in C], [BLAS calls in "
                        "segments], gemm.py)")
            elif name in ("gather", "scatter_add"):     # gather.plan
                when = ("unless the index is shaped like the operand outside dim (Note [Index "
                        "externs in C], gather.py)")
            elif name == "cumsum":      # scan.plan
                when = ("unless of float32, float64 or int64 with no size-0 dim (Note [Scans "
                        "in C], scan.py)")
            rows.append((name, when, rule.reason))
        elif prim.mutates is not None:
            rows.append((name, "always", "a write (Note [Effects]): runs after the kernels"))
        elif prim.multiple_results:
            rows.append((name, "always", "several results: a kernel computes one value per node"))
        elif rule.kind == "pointwise":
            kinds = [k for k in "fiub" if rule.expr_for(k) is None]
            if kinds:
                rows.append((name, "operands of kind " + ", ".join(_KIND_NAMES[k] for k in kinds),
                             "no C expression there: the NumPy impl keeps eager's semantics "
                             "(errors such as integer division by zero, bool arithmetic)"))
    return rows + list(GENERAL)


def format_table(rows=None):
    """The table as text, grouped by reason (the closing note's list)."""
    rows = extern_table() if rows is None else rows
    groups = {}
    for name, when, reason in rows:
        groups.setdefault((reason, when), []).append(name)
    lines = []
    order = sorted(groups.items(), key=lambda g: (g[1] == ["*"], g[0][1] != "always", g[0]))
    for (reason, when), names in order:
        lines.append(f"- {', '.join(names)} ({when}): {reason}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_table())
