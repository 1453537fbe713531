"""gather and scatter_add in C: which index externs run inside a segment, and their C.

``gather`` and ``scatter_add`` are externs by their lower rule (data-dependent indices,
checked against the dimension's size). Like the small products of gemm.py, the common
case runs instead as a function of the graph's library, in the segment table beside the
kernels (Note [Index externs in C]); this module decides which steps qualify (``plan``)
and writes their C (``function``). It does not schedule, build or run anything.

Note [Index externs in C]
Cross entropy's target (``gather`` of the log-probabilities in the forward, ``scatter_add``
of the cotangent in the backward) made the compiled MLP step call NumPy twice between
kernels: 128 indices each, but each call ran after a large product had evicted NumPy's
code and data from the caches, so ``_check_index`` + ``np.take_along_axis`` took 50 µs
and ``np.add.at`` 28 µs at 2 threads (against 7 and 9 µs in a loop), and each split a
segment. Here they are loops of the library: the index is read in C order; a negative
index counts from the end, as in eager (``_check_index``, numtorch/_prims/indexing.py);
an index out of range stops the segment and the runner raises eager's IndexError naming
the first bad index in C order and the size (Note [Faults in segments], launcher.py).
``scatter_add`` copies ``x`` and adds ``src`` element by element in index order, one
rounding per addition as ``np.add.at`` does, so the bits are eager's. Planned only for
C-contiguous operands (the runner makes inputs contiguous) with ``index`` shaped like
``x`` except along ``dim`` (and ``src`` like ``index``), int64 or int32 indices, any
C type for gather and float32/float64 for scatter_add (C's signed overflow is undefined
where NumPy's wraps); anything else stays a NumPy extern.
"""
from __future__ import annotations

import math

import numpy as np

from .._core.ir import Const, Var
from .scheduler import C_TYPES, dtype_of, shape_of

_INDEX_TYPES = {"int64": "int64_t", "int32": "int32_t"}
# fault codes, shared with the runner's message (Note [Faults in segments], launcher.py)
FAULTS = {"gather": 1, "scatter_add": 2}


def plan(step):
    """(outer, J, N, inner, value C type, index C type) when the extern ``step`` runs in
    C (Note [Index externs in C]), else None: the operands viewed as (outer, N, inner)
    for ``x`` and (outer, J, inner) for the index, with N the size along ``dim``."""
    name = getattr(getattr(step, "prim", None), "name", None)
    if name not in FAULTS or len(step.outs) != 1:
        return None
    ins = step.ins
    if not all(isinstance(v, (Var, Const)) for v in ins):
        return None
    x, index = ins[0], ins[1]
    xs, ix = tuple(shape_of(x)), tuple(shape_of(index))
    dt, it = np.dtype(dtype_of(x)).name, np.dtype(dtype_of(index)).name
    dim = step.params.get("dim")
    if (dt not in C_TYPES or it not in _INDEX_TYPES or np.dtype(step.outs[0].dtype).name != dt
            or type(dim) is not int or len(xs) != len(ix) or not xs):
        return None
    dim = dim % len(xs)
    if not all(type(n) is int for n in xs + ix) or \
            any(a != b for d, (a, b) in enumerate(zip(xs, ix)) if d != dim):
        return None
    if name == "scatter_add":
        if len(ins) != 3 or dt not in ("float32", "float64") or \
                tuple(shape_of(ins[2])) != ix or np.dtype(dtype_of(ins[2])).name != dt:
            return None
    elif len(ins) != 2:
        return None
    outer, inner = math.prod(xs[:dim]), math.prod(xs[dim + 1:])
    return outer, ix[dim], xs[dim], inner, C_TYPES[dt], _INDEX_TYPES[it]


def function(name, step, p):
    """The C lines of a segment-table function (``void name(void *const *b)``, b holding
    the step's operands then its output) computing the step planned as ``p``."""
    outer, J, N, inner, t, it = p
    what = step.prim.name
    head = [f"NT_KERNEL void {name}(void *const *b) {{",
            f"    /* {what} {tuple(shape_of(step.ins[0]))} by {tuple(shape_of(step.ins[1]))}, "
            f"{step.params}: Note [Index externs in C] (gather.py) */",
            f"    const {t} *restrict x = b[0];",
            f"    const {it} *restrict ix = b[1];"]
    # the index element e = (p * J + j) * inner + q reads or writes x[(p * N + k) * inner + q]
    loop = [f"    for (int64_t p = 0; p < {outer}; p++)",
            f"        for (int64_t j = 0; j < {J}; j++)",
            f"            for (int64_t q = 0; q < {inner}; q++) {{",
            f"                const int64_t e = (p * {J} + j) * {inner} + q;",
            "                int64_t k = ix[e];",
            f"                if (k < 0) k += {N};",
            f"                if (k < 0 || k >= {N}) {{ nt_fault_at({FAULTS[what]}, ix[e], {N}); return; }}"]
    if what == "gather":
        return head + [f"    {t} *restrict o = b[2];"] + loop + [
            f"                o[e] = x[(p * {N} + k) * {inner} + q];",
            "            }", "}"]
    return head + [f"    const {t} *restrict s = b[2];",
                   f"    {t} *restrict o = b[3];",
                   f"    for (int64_t e = 0; e < {outer * N * inner}; e++) o[e] = x[e];"] + loop + [
        f"                o[(p * {N} + k) * {inner} + q] += s[e];",
        "            }", "}"]
