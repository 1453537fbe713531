"""cumsum in C: which cumsum externs run inside a segment, and their C.

``cumsum`` is an extern by its lower rule (a scan, not a reduction: NumPy's cumsum). Like
the index externs of gather.py, the common case runs instead as a function of the graph's
library, in the segment table beside the kernels (Note [Scans in C]); this module decides
which steps qualify (``plan``) and writes their C (``function``). It does not schedule,
build or run anything.

Note [Scans in C]
np.cumsum adds in the output's dtype, sequentially along the axis: out[0] = x[0] (a copy:
a first -0.0 stays -0.0), out[i] = out[i - 1] + x[i], one rounding per element, float32
in float32. A C loop doing the same additions in the same order gives the same bits; what
can change is only which elements are computed together:
- along the last axis (inner == 1), each row is one chain of dependent additions (0.83 ms
  for 1024x1024 float32, one thread: the add's latency per element), so rows are scanned
  SCAN_ROWS at a time, one accumulator each, their additions interleaved: 0.32 ms. (8 rows
  at a time took 2.4 ms and 12 rows 6.3: the rows' 16 or 24 read and write streams are
  4 KB apart, in the same L1 sets, and evict each other.)
- along another axis (inner > 1), row i of the (N, inner) slab is row i - 1 plus x's row
  i: a vectorised loop over the contiguous inner elements, 0.30-0.37 ms.
np.cumsum on the same array: 3.5 ms along the last axis, 10.8 ms along the first;
torch.compile 1.2 and 6.5 ms (one thread's CPU time, minimum of 30 interleaved calls).
Planned for C-contiguous operands (the runner makes inputs contiguous) of float32,
float64 or int64 with the output's dtype (int64 wraps, -fwrapv, as NumPy's does), and no
size-0 dim; anything else stays a NumPy extern.
"""
from __future__ import annotations

import math

import numpy as np

from .._core.ir import Const, Var
from .scheduler import C_TYPES, dtype_of, shape_of

SCAN_ROWS = 4           # rows scanned together along the last axis (Note [Scans in C])
_TYPES = ("float32", "float64", "int64")


def plan(step):
    """(outer, N, inner, C type) when the extern ``step`` is a cumsum running in C (Note
    [Scans in C]), else None: the operand viewed as (outer, N, inner), N along the axis."""
    if getattr(getattr(step, "prim", None), "name", None) != "cumsum" or len(step.outs) != 1 \
            or len(step.ins) != 1 or not isinstance(step.ins[0], (Var, Const)):
        return None
    x = step.ins[0]
    xs, dt = tuple(shape_of(x)), np.dtype(dtype_of(x)).name
    axis = step.params.get("axis")
    if dt not in _TYPES or np.dtype(step.outs[0].dtype).name != dt or type(axis) is not int \
            or not xs or not all(type(n) is int and n > 0 for n in xs) \
            or tuple(step.outs[0].shape) != xs:
        return None
    axis %= len(xs)
    return math.prod(xs[:axis]), xs[axis], math.prod(xs[axis + 1:]), C_TYPES[dt]


def function(name, step, p):
    """The C lines of a segment-table function (``void name(void *const *b)``: b[0] the
    operand, b[1] the output) computing the cumsum planned as ``p``."""
    outer, n, inner, t = p
    head = [f"NT_KERNEL void {name}(void *const *b) {{",
            f"    /* cumsum {tuple(shape_of(step.ins[0]))} {step.params}: Note [Scans in C] (scan.py) */",
            f"    const {t} *restrict x = b[0];",
            f"    {t} *restrict o = b[1];"]
    if inner > 1:       # row i of each (n, inner) slab: row i - 1 plus x's row i
        return head + [
            f"    for (int64_t p = 0; p < {outer}; p++) {{",
            f"        const {t} *restrict xp = x + p * {n * inner};",
            f"        {t} *restrict op = o + p * {n * inner};",
            f"        for (int64_t q = 0; q < {inner}; q++) op[q] = xp[q];",
            f"        for (int64_t i = 1; i < {n}; i++) {{",
            "            #pragma omp simd",
            f"            for (int64_t q = 0; q < {inner}; q++) "
            f"op[i * {inner} + q] = op[(i - 1) * {inner} + q] + xp[i * {inner} + q];",
            "        }", "    }", "}"]
    rows = range(SCAN_ROWS)
    first = " ".join(f"{t} a{r} = x[(p + {r}) * {n}]; o[(p + {r}) * {n}] = a{r};" for r in rows)
    step_ = " ".join(f"a{r} = a{r} + x[(p + {r}) * {n} + i]; o[(p + {r}) * {n} + i] = a{r};"
                     for r in rows)
    return head + [
        "    int64_t p = 0;",
        f"    for (; p + {SCAN_ROWS} <= {outer}; p += {SCAN_ROWS}) {{    /* rows interleaved */",
        f"        {first}",
        f"        for (int64_t i = 1; i < {n}; i++) {{ {step_} }}",
        "    }",
        f"    for (; p < {outer}; p++) {{",
        f"        {t} a = x[p * {n}];",
        f"        o[p * {n}] = a;",
        f"        for (int64_t i = 1; i < {n}; i++) {{ a = a + x[p * {n} + i]; o[p * {n} + i] = a; }}",
        "    }", "}"]
