"""Products in the graph's library: which ``dot_general`` externs run inside a segment, and their C.

A ``dot_general`` is an extern (NumPy's BLAS through ``np.matmul``) unless it runs as a
function of the segment table (Note [Segments as data], launcher.py): as a loop in C when
``plan`` finds it small enough (Note [Small products in C]), or as a call of NumPy's own
BLAS from C when ``blas_plan`` accepts it (Note [BLAS calls in segments]). Then
codegen.generate puts it in the segment beside the kernels (``segment_function``, which
also hands out gather.py's index externs) and the runner neither calls NumPy for it nor
ends a segment at it. This module decides which products qualify and writes their C; it
does not schedule, build or run anything.

Note [Small products in C]
The compiled MAML step (32 tasks x 5 inner steps of an MLP 1-40-40-1) has 118 batched
products of 10x40-sized matrices. As NumPy externs each cost a Python call, a fresh
output array and one BLAS call per task (np.matmul loops over the batch): 57 µs per
product under cProfile, 3.5 ms of the 7.5-8.5 ms step, and every product ended a segment
(62 ctypes calls). BLAS's per-call overhead is what it costs at these sizes, not the
arithmetic: 32 x 10x40x40 takes 30 µs through np.matmul, and np.matmul of a transposed
batch (``a.mT @ a``, the weight gradient) takes its non-BLAS loop, 45-70 µs. A product whose
operand read as rows (K x N, or K x M when the block computes the output's transpose,
Note [Register blocks]) fits in L2 (``ROWS_BYTES``; if it is not row-major it is first
packed, and then must fit in L1, ``PACK_BYTES``) and whose matrices are small
(``MAX_WORK`` multiply-adds each) runs here instead: for each
batch index, a block of output rows accumulates ``out[m, :] += x[m, k] * y[k, :]`` for k
in order, vectorised fused multiply-adds over the rows (Note [Register blocks]). The
whole MAML step is now one segment (one ctypes call) and its products take 2.5 ms less CPU. Each output element is one sequential sum over k, as a
BLAS kernel computes it in float32 (not the kernels' double accumulation, Note [Exact math
in kernels], codegen.py: products follow BLAS, which eager uses); the order is fixed by
the source, so the bits are the same at any thread count. Larger products stay BLAS
externs, whose blocking wins there (the MLP step's 128x784x512).
"""
from __future__ import annotations

import math

import numpy as np

from .._core.ir import Const, Var
from . import config
from .scheduler import dtype_of, shape_of

PACK_BYTES = 32 * 1024       # the right operand's packed copy: L1-sized, on the stack
ROWS_BYTES = 256 * 1024      # a row-major right operand read in place: L2-sized
MAX_WORK = 1 << 20           # multiply-adds per matrix; above, BLAS's blocking pays
_TYPES = {"float32": ("float", "fmaf"), "float64": ("double", "fma")}


def _merged(shape, strides, dims):
    """(size, stride) of ``dims`` of an array viewed as one dimension, or None when they
    cannot be one (strided) dimension. No dims: size 1."""
    dims = [d for d in dims if shape[d] != 1]
    size = math.prod(shape[d] for d in dims)
    if not dims:
        return 1, 0
    for a, b in zip(dims, dims[1:]):
        if strides[a] != strides[b] * shape[b]:
            return None
    return size, strides[dims[-1]]


def _contiguous_strides(shape):
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return out[::-1]


def plan(step):
    """(B, M, N, K, x strides (b, m, k), y strides (b, k, n), C type, fma) when the
    ``dot_general`` extern ``step`` runs in C (Note [Small products in C]; not with
    ``config.cpp.small_products`` off), else None.
    Strides count elements of the operands' C-contiguous arrays."""
    if (not config.cpp.small_products or getattr(step.prim, "name", None) != "dot_general"
            or len(step.ins) != 2):
        return None
    x, y = step.ins
    out = step.outs[0]
    if not all(isinstance(v, (Var, Const)) for v in (x, y)):
        return None
    dts = {np.dtype(dtype_of(v)).name for v in (x, y)}
    if len(dts) != 1 or (dt := dts.pop()) not in _TYPES or np.dtype(out.dtype).name != dt:
        return None
    xs, ys = tuple(shape_of(x)), tuple(shape_of(y))
    if not all(type(n) is int for n in xs + ys + tuple(out.shape)) or 0 in xs + ys:
        return None
    (xc, yc), (xb, yb) = step.params["contracting"], step.params["batch"]
    xf = [d for d in range(len(xs)) if d not in xc and d not in xb]
    yf = [d for d in range(len(ys)) if d not in yc and d not in yb]
    xst, yst = _contiguous_strides(xs), _contiguous_strides(ys)
    parts = [_merged(xs, xst, xb), _merged(xs, xst, xf), _merged(xs, xst, xc),
             _merged(ys, yst, yb), _merged(ys, yst, yc), _merged(ys, yst, yf)]
    if any(p is None for p in parts):
        return None
    (B, xsb), (M, xsm), (K, xsk), (_, ysb), (_, ysk), (N, ysn) = parts
    normal, pack = _orientation(M, N, K, xsm, ysn)
    C = N if normal else M          # the operand read as rows, v[k, c], holds K x C values
    if K * C * np.dtype(dt).itemsize > (PACK_BYTES if pack else ROWS_BYTES) or M * N * K > MAX_WORK:
        return None
    return B, M, N, K, (xsb, xsm, xsk), (ysb, ysk, ysn), *_TYPES[dt]


def function(name, step, p, threshold):
    """The C lines of a segment-table function (``void name(void *const *b)``, b holding
    x, y and the output) computing the product planned as ``p``; it runs its batch on
    ``nt_threads`` threads when the work is above ``threshold`` multiply-adds
    (Note [Register blocks])."""
    B, M, N, K, (xsb, xsm, xsk), (ysb, ysk, ysn), t, fma = p
    # rows r and vector columns c: out[m, n] (c = n), or out's transpose (c = m); s[r, k]
    # is read as scalars, v[k, c] as rows (Note [Register blocks] says which and why)
    normal = _orientation(M, N, K, xsm, ysn)[0]
    if normal:
        R, C, (s, ssb, ssr, ssk), (v, vsb, vsk, vsc), orr, oc = \
            M, N, ("x", xsb, xsm, xsk), ("y", ysb, ysk, ysn), N, 1
    else:
        R, C, (s, ssb, ssr, ssk), (v, vsb, vsk, vsc), orr, oc = \
            N, M, ("y", ysb, ysn, ysk), ("x", xsb, xsk, xsm), 1, N
    parallel = B > 1 and B * M * N * K > threshold
    lines = [f"NT_KERNEL void {name}(void *const *b) {{",
             f"    /* dot_general {tuple(shape_of(step.ins[0]))} x {tuple(shape_of(step.ins[1]))} "
             f"{step.params}: "
             "Note [Small products in C] (gemm.py) */",
             f"    const {t} *restrict x = b[0], *restrict y = b[1];",
             f"    {t} *restrict o = b[2];"]
    lines += ["    #pragma omp parallel for schedule(static) num_threads(nt_threads)"] * parallel
    lines += [f"    for (int64_t i = 0; i < {B}; i++) {{",
              f"        const {t} *restrict si = {s} + i * {ssb};",
              f"        {t} *restrict oi = o + i * {M * N};"]
    if vsc != 1 and C > 1:
        lines += [f"        {t} vi[{K * C}];",
                  f"        for (int64_t k = 0; k < {K}; k++)",
                  f"            for (int64_t c = 0; c < {C}; c++) "
                  f"vi[k * {C} + c] = {v}[i * {vsb} + k * {vsk} + c * {vsc}];"]
        vsk = C
    else:
        lines.append(f"        const {t} *restrict vi = {v} + i * {vsb};")

    def block(r0, count):
        acc = [f"{t} acc[{count}][{C}];",
               f"for (int64_t j = 0; j < {count}; j++)",
               "    #pragma omp simd",
               f"    for (int64_t c = 0; c < {C}; c++) acc[j][c] = 0;",
               f"for (int64_t k = 0; k < {K}; k++) {{",
               f"    const {t} *restrict vk = vi + k * {vsk};",
               f"    for (int64_t j = 0; j < {count}; j++) {{",
               f"        const {t} a = si[({r0} + j) * {ssr} + k * {ssk}];",
               "        #pragma omp simd",
               f"        for (int64_t c = 0; c < {C}; c++) acc[j][c] = {fma}(a, vk[c], acc[j][c]);",
               "    }", "}",
               f"for (int64_t j = 0; j < {count}; j++)",
               "    #pragma omp simd",
               f"    for (int64_t c = 0; c < {C}; c++) oi[({r0} + j) * {orr} + c * {oc}] = acc[j][c];"]
        return acc

    def vblock(r0, count, pieces):
        # the same sums, with each row's accumulators as named vectors (Note [Vector
        # accumulators]): ``pieces`` splits a row into (offset, lanes) runs
        acc = lambda j, q: f"a{j}_{q}"                           # noqa: E731
        typ = lambda n: f"nt_{t}{n}" if n > 1 else t            # noqa: E731
        out = [f"{typ(n)} {acc(j, q)} = {{0}};" if n > 1 else f"{t} {acc(j, q)} = 0;"
               for j in range(count) for q, (_, n) in enumerate(pieces)]
        out += [f"for (int64_t k = 0; k < {K}; k++) {{",
                f"    const {t} *restrict vk = vi + k * {vsk};"]
        out += [f"    const {typ(n)} v{q} = *(const {typ(n)} *)(vk + {off});" if n > 1 else
                f"    const {t} v{q} = vk[{off}];" for q, (off, n) in enumerate(pieces)]
        for j in range(count):
            out.append(f"    {{ const {t} a = si[({r0} + {j}) * {ssr} + k * {ssk}];")
            out += [f"      {acc(j, q)} = NT_VFMA({fma}, {n}, a, v{q}, {acc(j, q)});" if n > 1 else
                    f"      {acc(j, q)} = {fma}(a, v{q}, {acc(j, q)});"
                    for q, (_, n) in enumerate(pieces)]
            out.append("    }")
        out.append("}")
        if oc != 1:        # a transposed tile: rows of a local copy, then its columns
            out.append(f"{t} tile[{count}][{C}];")
        for j in range(count):
            for q, (off, n) in enumerate(pieces):
                at = f"oi + ({r0} + {j}) * {orr} + {off}" if oc == 1 else f"&tile[{j}][{off}]"
                out.append(f"*({typ(n)} *)({at}) = {acc(j, q)};" if n > 1 else
                           f"*({at}) = {acc(j, q)};")
        if oc != 1:
            out += [f"for (int64_t c = 0; c < {C}; c++)",
                    f"    for (int64_t j = 0; j < {count}; j++) oi[{r0} + j + c * {oc}] = tile[j][c];"]
        return out

    def blocks(rows, make):
        out, full = [], R - R % rows
        if full:
            out += [f"        for (int64_t r = 0; r < {full}; r += {rows}) {{"]
            out += ["            " + line for line in make("r", rows)] + ["        }"]
        if R % rows:
            out += ["        {"] + ["            " + line for line in make(full, R % rows)] + ["        }"]
        return out

    lines += ["#if defined(__AVX512F__)"]       # 32 registers of 64 bytes
    size = 4 if t == "float" else 8
    p512 = _pieces(C, 64 // size)
    lines += blocks(_rows(R, len(p512), K, 24), lambda r0, n: vblock(r0, n, p512))
    lines += ["#elif defined(__AVX2__) && defined(__FMA__)"]  # 16 registers of 32 bytes
    p256 = _pieces(C, 32 // size)
    lines += blocks(_rows(R, len(p256), K, 12), lambda r0, n: vblock(r0, n, p256))
    lines += ["#else"]
    lines += blocks(_rows(R, -(-C * size // 32), K, 12), block)
    lines += ["#endif"]
    return lines + ["    }", "}"]


def _pieces(C, lanes):
    """A row of C values as (offset, length) runs: vectors of ``lanes``, then halves of
    that down to single values (Note [Vector accumulators])."""
    out, off, n = [], 0, lanes
    while off < C:
        while n > C - off:
            n //= 2
        out.append((off, n))
        off += n
    return out


def _orientation(M, N, K, xsm, ysn):
    """(normal, packed): whether the register blocks compute out[m, n] with n in vectors
    (else out's transpose, m in vectors), and whether that reads its vector operand
    through a packed copy (Note [Register blocks])."""
    pack_n, pack_t = ysn != 1 and N > 1, xsm != 1 and M > 1
    if pack_n != pack_t:
        return pack_t, False
    return K <= 2 or N % 8 == 0 or N >= M, pack_n


def _rows(R, per_row, K, registers):
    """Output rows per register block: at most as many as keep ``registers`` accumulators
    busy, ``per_row`` for each row, and blocks of even size (R = 10 by 8: two blocks of 5,
    not 8 and a 2-row block with too few chains) (Note [Register blocks]); one when K <= 2 (nothing to reuse)."""
    if K <= 2:
        return 1
    most = max(1, min(R, registers // per_row))
    return -(-R // -(-R // most))           # the same blocks, as even as they can be


# Note [Register blocks]
# Each output element is a chain of K dependent fused multiply-adds; a loop that finishes
# one output row before the next waits on the FMA latency (a 10-wide row: 355 µs for the
# 32 x 40x10x40 product, against 49 µs in NumPy). So a block of ``rows`` output rows keeps
# its accumulators (``rows`` x C values) in vector registers while k runs, giving that many
# independent chains. ``rows`` fills 24 of AVX-512's 32 registers, or 12 of AVX2's 16
# (the C text has a block for each, chosen by ``__AVX512F__``/``__AVX2__``: -march=native
# decides, Note [Vector accumulators]), with blocks of even size; with K <= 2 nothing is
# reused and a block is one row. The vector dimension C is the output's last (n), or m
# with the block computing the transposed tile and storing it transposed
# (``_orientation``):
# - never pack when the other orientation reads its vector operand in place: a matrix
#   times a vector (N = 1) became a 40-row transposed pack per task and one serial chain;
# - with K <= 2 (an outer product) the stores dominate, so they stay row-major;
# - otherwise the dimension that fills vectors better (n unless n % 8 and n < m). When
#   both orientations pack, packing the smaller operand (K x 10 instead of K x 40) was
#   tried and lost: 10-wide rows fill vectors badly (gemm 836 against 729 µs), and still
#   lost with the packed rows padded with zeros to one whole vector (928 against 744 µs).
# Measured on the compiled MAML step's 18 distinct products (each timed alone in a C
# harness, best of 30, weighted by its count among the step's 118; Zen 4 with AVX-512):
# 1044 µs with 256-bit blocks of the acc-array loops and the old orientation rule; 904 µs
# with AVX-512-sized blocks; 840 µs with the orientation and K <= 2 rules; 729 µs with
# vector accumulators and even blocks. The summation order per element is still
# k = 0, 1, ...: blocking changes which elements are computed together, not how one is
# summed, so the bits do not change (tests/inductor/test_products.py compares the three
# blocks' bits).
#
# Note [Vector accumulators]
# Written as ``acc[rows][C]`` arrays under ``#pragma omp simd``, the blocks left GCC to
# keep the accumulators in registers; with AVX-512-sized blocks (8 rows x 40) it did not:
# it zeroed them with memset and copied them out with memmove (9% of the MAML step's time
# in those two calls). The AVX-512 and AVX2 blocks therefore name each accumulator: a row
# is split into vectors of the register width, then halves of it down to single values
# (40 floats: 16 + 16 + 8), each a GCC vector type (``nt_float16`` ...: launcher.PRELUDE,
# no header: <immintrin.h> costs 0.15 s of compiling per unit), and each update is
# ``NT_VFMA``, a loop of ``fmaf`` over the lanes that GCC compiles to one vector FMA: the
# same rounding as the portable loops' ``fmaf``. A transposed tile goes through a local
# array so that its columns are written as runs. The portable ``acc`` loops remain for
# machines without AVX2 and FMA.


# ---------------------------------------------------------------------------------------
# Large products: BLAS called from the segment (Note [BLAS calls in segments])

# Note [BLAS calls in segments]
# A product too large for the loops above ran as a NumPy extern: the runner called
# ``np.matmul`` between two segments, so the compiled MLP step's forward was six calls
# from Python (three products, three segments) and its backward five, each one after a
# product had evicted the interpreter's code and data from the core's caches. A 2-D product
# of float32 or float64 matrices now runs in the segment as the same BLAS call NumPy makes:
# ``cblas_?gemm`` of NumPy's own OpenBLAS (row-major, transposes as flags, alpha 1, beta
# 0), reached through a function pointer the runner hands the library when it loads
# (``nt_set_gemm``, the prelude of launcher.py), so the bits are NumPy's and the thread
# count is the one numtorch gives NumPy's BLAS. A graph's kernels and products then run in
# one ctypes call. Only where NumPy itself calls gemm: both matrices with more than one
# row and column in the result (NumPy calls gemv for a vector), not one operand times its
# own transpose (NumPy calls syrk), and only with the ILP64 OpenBLAS of NumPy's wheels
# (``scipy_cblas_?gemm64_``), whose integer arguments are the int64_t the C passes;
# elsewhere, or with ``config.cpp.blas_in_segments`` off, the product stays a NumPy extern.
# The prelude's ``nt_gemm_check`` runs a 2x2 product through both pointers when a library
# loads; a wrong answer turns the feature off for the process (a logged error) and the
# graphs are compiled again without it.
_BLAS: dict = {}          # "pointers": (sgemm, dgemm) addresses or None; "off": reason


def blas_pointers():
    """(sgemm, dgemm) addresses of NumPy's ILP64 OpenBLAS's cblas functions, or None
    (Note [BLAS calls in segments])."""
    if "pointers" not in _BLAS:
        import ctypes
        from .. import _threads
        found, lib = None, _threads.blas()
        if lib is not None:
            s = getattr(lib._lib, "scipy_cblas_sgemm64_", None)
            d = getattr(lib._lib, "scipy_cblas_dgemm64_", None)
            if s is not None and d is not None:
                found = tuple(ctypes.cast(f, ctypes.c_void_p).value for f in (s, d))
        _BLAS["pointers"] = found
    return _BLAS["pointers"]


def blas_plan(step):
    """(M, N, K, transpose x, transpose y, lda, ldb, C type) when the ``dot_general``
    extern ``step`` runs as a BLAS call in its segment (Note [BLAS calls in segments]),
    else None. Operands are the runner's C-contiguous arrays."""
    if (not config.cpp.blas_in_segments or "off" in _BLAS
            or getattr(getattr(step, "prim", None), "name", None) != "dot_general"
            or len(step.ins) != 2 or step.params["batch"] != ((), ())):
        return None
    x, y = step.ins
    if not all(isinstance(v, (Var, Const)) for v in (x, y)) or x is y:
        return None
    dts = {np.dtype(dtype_of(v)).name for v in (x, y, step.outs[0])}
    if len(dts) != 1 or (dt := dts.pop()) not in _TYPES:
        return None
    xs, ys = tuple(shape_of(x)), tuple(shape_of(y))
    (xc, yc) = step.params["contracting"]
    # one contracted dim at either end of each operand: the other dims fold into one, as
    # the impl's single GEMM does (Note [One GEMM for a contraction], _prims/contraction.py)
    if len(xc) != 1 or not all(type(n) is int for n in xs + ys) or \
            xc[0] not in (0, len(xs) - 1) or yc[0] not in (0, len(ys) - 1) or \
            len(xs) < 2 or len(ys) < 2:
        return None
    tx, ty = xc[0] == 0, yc[0] != 0
    K = xs[xc[0]]
    M, N = math.prod(xs) // max(K, 1), math.prod(ys) // max(K, 1)
    if M < 2 or N < 2 or K < 2 or blas_pointers() is None:
        return None
    return M, N, K, tx, ty, M if tx else K, K if ty else N, _TYPES[dt][0]


def blas_function(name, step, p):
    """The C lines of a segment-table function (``b``: x, y, the output) making the BLAS
    call planned as ``p`` (Note [BLAS calls in segments])."""
    M, N, K, tx, ty, lda, ldb, t = p
    f = "nt_sgemm" if t == "float" else "nt_dgemm"
    return [f"NT_KERNEL void {name}(void *const *b) {{",
            f"    /* dot_general {tuple(shape_of(step.ins[0]))} x {tuple(shape_of(step.ins[1]))} "
            f"{step.params}: Note [BLAS calls in segments] (gemm.py) */",
            f"    {f}(101, {112 if tx else 111}, {112 if ty else 111}, {M}, {N}, {K}, 1, "
            f"b[0], {lda}, b[1], {ldb}, 0, b[2], {N});",
            "}"]


def set_pointers(lib):
    """Hand a loaded library the BLAS functions and check them (Note [BLAS calls in
    segments]); False, with the feature turned off for the process, when the check fails."""
    import ctypes
    import logging
    s, d = blas_pointers()
    lib.nt_set_gemm.argtypes, lib.nt_set_gemm.restype = [ctypes.c_void_p, ctypes.c_void_p], None
    lib.nt_set_gemm(s, d)
    lib.nt_gemm_check.restype = ctypes.c_int
    if lib.nt_gemm_check() != 1:
        _BLAS["off"] = "the library's check product was wrong"
        logging.getLogger("numtorch._inductor").error(
            "inductor: BLAS calls from kernels' libraries gave a wrong product; products "
            "run through NumPy from now on")
        return False
    return True


def in_segment(step):
    """Whether the extern ``step`` runs as a function of its segment: a small product, a
    BLAS call, an index extern (Note [Index externs in C], gather.py) or a cumsum (Note
    [Scans in C], scan.py)."""
    from . import gather, scan
    return bool(plan(step) or blas_plan(step) or gather.plan(step) or scan.plan(step))


def segment_function(name, step, threshold):
    """(C lines, buffer vars) of the segment function running the extern ``step``, or
    None where it stays a NumPy call (``in_segment``)."""
    from . import gather, scan
    args = [*step.ins, step.outs[0]]
    if (p := plan(step)) is not None:              # Note [Small products in C]
        return function(name, step, p, threshold), args
    if (p := blas_plan(step)) is not None:         # Note [BLAS calls in segments]
        return blas_function(name, step, p), args
    if (p := gather.plan(step)) is not None:       # Note [Index externs in C], gather.py
        return gather.function(name, step, p), args
    if (p := scan.plan(step)) is not None:         # Note [Scans in C], scan.py
        return scan.function(name, step, p), args
    return None
