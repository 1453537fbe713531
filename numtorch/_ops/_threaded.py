"""Large eager elementwise arithmetic on numtorch's threads: ``binary`` and ``binary_``.

``binary(prim, a, b)`` returns ``prim.impl(a, b)`` for the primitives add, sub, mul and div
on NumPy arrays, computed by a small OpenMP C kernel split statically over
``numtorch.get_num_threads()`` threads where it applies (float32 or float64 operands of
one dtype, same shape and C-contiguous, or one a 0-d array) and by ``prim.impl`` itself
otherwise; ``binary_(prim, d, o)`` writes ``prim(d, o)`` into ``d`` the same way. The kernel
is built and cached by the compile backend's machinery (numtorch/_inductor/build.py); with
no working compiler NumPy computes. Callers call these only above ``LARGE`` elements (one
comparison on their hot path; Note [Large elementwise ops on numtorch's threads]). This
module knows nothing of Tensors or autograd: it computes a forward value.
"""
from __future__ import annotations

import ctypes

import numpy as np

from .._prims import elementwise as E
from .._threads import get_num_threads

# Note [Large elementwise ops on numtorch's threads]
# PyTorch splits a large elementwise op over its intra-op threads; a NumPy ufunc runs on
# the calling thread, so eager `x + y` on 1000x1000 float32 took 172 us against PyTorch's
# 66 us on a quiet 2-core machine (2 threads each; equal at 1 thread each). Eager add,
# sub, mul and div therefore run a C kernel, `out[i] = a[i] op b[i]` under `omp parallel
# for simd schedule(static)`, on `get_num_threads()` threads, for operands of LARGE
# elements or more, when that count is at least 2. Under load the thread policy drops the
# count to 1 (Note [OpenMP and BLAS threads], _inductor/build.py), and then NumPy's ufunc
# computes, exactly as before: at one thread nothing changes but the size check.
# Bits. Each element is one IEEE operation on the same two values as the ufunc's (the
# build flags forbid contraction; an elementwise op has nothing to reassociate, and the
# static split only decides which thread computes an element), so the result equals
# NumPy's bit for bit at any thread count and size (tests/test_threaded.py), and eager,
# compiled and fallback results keep agreeing. Two things differ from the ufunc: no
# RuntimeWarning on overflow (PyTorch gives none either), and which payload survives when
# both operands are NaNs.
# Measured (quiet machine, load 0.0-0.3, 2 threads, medians of 300-2000 calls, wall, us,
# np.add(a, b) against `binary(E.add, a, b)` in one process, float32):
#     elements    16K   32K   64K    128K   256K   1M
#     NumPy       3.2   5.0   10-11  20-21  46-47  179-181
#     kernel      7.4   8.5   10-11  17     34     93-95
# Below 64K the region's fixed cost (about 4 us: the ctypes call, three addresses, waking
# the worker) loses; LARGE = 128K is the first size measured to win. Eager `x + y` at
# 1000x1000 went from 178-183 to 94-97 us (NumPy's `a + b` beside it); at one thread it
# is NumPy's 179-191 us. Where the thread count is 2 the win needs the kernels' workers
# awake: with a passive OpenMP runtime (the workers sleep right after a region) the
# kernel took 192-205 us at 1M, no better than NumPy, because waking a sleeping thread on
# this machine costs tens of microseconds; Note [A short spin] (_inductor/openmp.py) keeps
# them spinning for about 0.1 ms after a region instead.
# Why C and not a Python pool over the ufunc (ufuncs release the GIL): waking a Python
# thread costs about 50 us here, so splitting the 1000x1000 add over a ThreadPoolExecutor
# took 150-207 us against 164-178 us unsplit on a quiet machine, and was slower at every
# size under load (42 against 14 us at 1e5 elements, 233 against 150 at 1e6, load 8.3).
# Scope. The fast path's calls (two eager tensors of one dtype, or a tensor and a Python
# number, with no autograd recording) and the in-place `add_`/`sub_`/`mul_` (`+=`) take
# it; ops recorded by autograd (`bind`) compute with NumPy, and their backward's
# cotangent arithmetic takes it. The caller's check is one comparison of `.size` (about
# 40 ns on a 10-element op). Where the kernel does not apply (other dtypes, shapes that
# broadcast other than a 0-d operand, strided views, an in-place operand overlapping the
# destination other than exactly), NumPy computes.

LARGE = 1 << 17           # elements; Note [Large elementwise ops on numtorch's threads]

_SOURCE = r"""
#include <stddef.h>
/* out[i] = a[i] OP b[i]; a 0-d operand is read once (AS/BS: its stride, 0 or 1). No
   restrict on out: in-place ops pass out == a, which the simd loop handles (same index). */
#define NT_BINARY(NAME, T, OP, AS, BS)                                                    \
void NAME(T *out, const T *a, const T *b, ptrdiff_t n, int threads) {                   \
    _Pragma("omp parallel for simd schedule(static) num_threads(threads)")              \
    for (ptrdiff_t i = 0; i < n; i++) out[i] = a[i * AS] OP b[i * BS];                   \
}
#define NT_FORMS(OPNAME, OP, T, TN)                                                       \
    NT_BINARY(nt_##OPNAME##_##TN##_vv, T, OP, 1, 1)                                   \
    NT_BINARY(nt_##OPNAME##_##TN##_vs, T, OP, 1, 0)                                       \
    NT_BINARY(nt_##OPNAME##_##TN##_sv, T, OP, 0, 1)
#define NT_OPS(T, TN) NT_FORMS(add, +, T, TN) NT_FORMS(sub, -, T, TN)                     \
                      NT_FORMS(mul, *, T, TN) NT_FORMS(div, /, T, TN)
NT_OPS(float, f32)
NT_OPS(double, f64)
"""

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_NAMES = {E.add: "add", E.sub: "sub", E.mul: "mul", E.div: "div"}
_kernels: dict = {}      # (prim, dtype, form) -> ctypes function; {} until loaded
_unavailable = []        # holds True once loading failed (no compiler, build error)
_from_buffer, _addressof = ctypes.c_char.from_buffer, ctypes.addressof


def _load():
    from .._inductor import build
    lib = build.load_or_none(_SOURCE, "eager elementwise ops on numtorch's threads")
    if lib is None:
        _unavailable.append(True)
        return
    for prim, name in _NAMES.items():
        for dtype, tn in ((_F32, "f32"), (_F64, "f64")):
            for form in ("vv", "vs", "sv"):
                fn = getattr(lib, f"nt_{name}_{tn}_{form}")
                fn.restype = None
                fn.argtypes = (ctypes.c_void_p,) * 3 + (ctypes.c_ssize_t, ctypes.c_int)
                _kernels[(prim, dtype, form)] = fn


def available() -> bool:
    """Whether the threaded kernels can run here (loads them on first call)."""
    if not _kernels and not _unavailable:
        _load()
    return bool(_kernels)


def _address(x):
    # Through the buffer protocol where writeable: ndarray.ctypes builds Python objects.
    return _addressof(_from_buffer(x)) if x.flags.writeable else x.ctypes.data


def _kernel(prim, a, b):
    """(kernel, form, threads) for ``prim(a, b)`` on numtorch's threads, or None where
    NumPy computes."""
    dt = a.dtype
    if prim not in _NAMES or (dt is not _F32 and dt is not _F64) or b.dtype is not dt:
        return None
    if a.shape == b.shape:
        if not (a.flags.c_contiguous and b.flags.c_contiguous):
            return None
        form = "vv"
    elif not b.shape and a.flags.c_contiguous:
        form = "vs"
    elif not a.shape and b.flags.c_contiguous:
        form = "sv"
    else:
        return None
    threads = get_num_threads()
    if threads < 2 or _unavailable or not available():
        return None
    return _kernels[(prim, dt, form)], form, threads


def binary(prim, a, b):
    """``prim.impl(a, b)`` for NumPy arrays ``a``, ``b`` of a broadcast-compatible shape,
    on numtorch's threads where the kernel applies (Note [Large elementwise ops on
    numtorch's threads]), else by ``prim.impl``."""
    k = _kernel(prim, a, b)
    if k is None:
        return prim.impl(a, b)
    fn, form, threads = k
    out = np.empty(b.shape if form == "sv" else a.shape, a.dtype)
    fn(_addressof(_from_buffer(out)), _address(a), _address(b), out.size, threads)
    return out


def binary_(prim, d, o):
    """``prim.ufunc(d, o, out=d)``: ``o`` (an array of ``d``'s dtype that broadcasts to
    ``d``'s shape) combined into the writeable array ``d``, on numtorch's threads where the
    kernel applies (not for an ``o`` that overlaps ``d`` other than exactly)."""
    k = _kernel(prim, d, o)
    if k is not None and k[1] != "sv" and d.flags.writeable:
        pd, po = _addressof(_from_buffer(d)), _address(o)
        # o is d itself or lies apart from it (else NumPy, which copies what overlaps)
        if (pd == po and o.shape == d.shape) or not (pd < po + o.nbytes and po < pd + d.nbytes):
            k[0](pd, pd, po, d.size, k[2])
            return d
    return prim.ufunc(d, o, out=d)
