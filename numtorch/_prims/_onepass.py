"""One-pass C kernels for eager ops that NumPy computes in several passes.

- ``axpy(x, y, alpha)`` writes ``x += alpha * y`` into the NumPy array ``x`` in one pass
  over memory, rounding as ``y * alpha`` and then ``+`` do: ``x.add_(y, alpha=a)``, the
  in-place update of every eager optimizer step (Note [One-pass add with alpha]).
- ``select(c, x, y)`` is ``np.where(c, x, y)`` without a branch per element: every eager
  ``where`` on large operands (Note [Branch-free select], elementwise.py).
- ``relu(x)`` and ``relu_grad(y, g)``: eager ReLU and its gradient, each one pass with no
  mask array (Note [ReLU's zero], _ops/math.py).
- ``transpose_add(p, b)``: ``p.T + b`` into a fresh C-contiguous array, in tiles: eager
  linear's bias add when its product ran the other way round (Note [Rows before columns
  in linear], nn/_fused_linear.py).

The kernels are small C functions built once by the compile backend's build cache
(numtorch/_inductor/build.py); each function returns False or None, and writes nothing,
where its kernel does not apply or no C compiler works, and the caller computes with
NumPy. This module knows nothing of Tensors or autograd: the caller decides that a write
is allowed.
"""
from __future__ import annotations

import ctypes

import numpy as np

# Note [One-pass add with alpha]
# `p.add_(g, alpha=-lr)` is SGD's whole update, and a part of every other optimizer's.
# NumPy has no fused multiply-add ufunc, so it costs two passes: `t = g * alpha` (a
# temporary as large as the parameter) and `p += t`. PyTorch's CPU kernel makes one pass.
# Measured (2 cores, load ~5, CPU time, medians of 15 x 200 calls, float32, the 535K
# parameters of the MLP 784-512-256-10): two NumPy passes 118 us; this kernel, called with
# its pointers already known, 71 us, as fast as one `np.add(p, g, out=p)` (72 us); the
# whole `opt.step()` went from 151 to 96 us.
# It rounds as the two passes do: the product rounded to the dtype, then the sum (the
# compile backend's flags forbid contracting them into an fma), so eager steps, compiled
# steps (tests/aot/test_compiled_step.py checks bit equality) and the NumPy fallback agree
# bit for bit. PyTorch's kernel computes one fma(g, alpha, p) instead, which differs by
# one ulp in about 4 elements in 100,000; matching it would break that equality.
# The kernel is C, built and cached by the compile backend's machinery (no second
# cache): the first use on a machine compiles it (about 0.4 s; later processes load the
# cached library). Where no C compiler works, or for arrays it does not take (dtypes
# other than float32/float64, shapes that differ, non-contiguous or read-only memory,
# operands overlapping partially), the caller's two NumPy passes run. OpenBLAS's axpy
# would need no compiler, but it computes an fma, is reachable only through the private
# symbol names of the OpenBLAS that NumPy's wheel bundles, and runs on its own threads
# (which measured 4x slower than one thread on the loaded 2-core machine), so it is not
# used. The kernel is single-threaded, like NumPy's ufuncs (eager add, sub, mul and div
# are not: Note [Large elementwise ops on numtorch's threads], _ops/_threaded.py).

_SOURCE = r"""
#include <stddef.h>
#include <stdint.h>
void nt_axpy_f32(float *restrict x, const float *restrict y, float alpha, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) x[i] = x[i] + y[i] * alpha;   /* no fma: -ffp-contract=off */
}
void nt_axpy_f64(double *restrict x, const double *restrict y, double alpha, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) x[i] = x[i] + y[i] * alpha;
}
/* out = c ? x : y on the bit patterns (Note [Branch-free select], elementwise.py): x and y
   advance one element per step (sx, sy = 1) or stay on one broadcast element (0); the
   four loops, one per case, each vectorize as a mask and two ands. */
#define NT_SELECT(NAME, U)                                                               \
void NAME(U *restrict out, const unsigned char *restrict c, const U *restrict x,        \
          ptrdiff_t sx, const U *restrict y, ptrdiff_t sy, ptrdiff_t n) {              \
    if (sx && sy) {                                                                     \
        for (ptrdiff_t i = 0; i < n; i++) {                                             \
            U m = (U)0 - (U)c[i]; out[i] = (U)((x[i] & m) | (y[i] & ~m)); }             \
    } else if (sy) {                                                                    \
        U xv = x[0];                                                                    \
        for (ptrdiff_t i = 0; i < n; i++) {                                             \
            U m = (U)0 - (U)c[i]; out[i] = (U)((xv & m) | (y[i] & ~m)); }               \
    } else if (sx) {                                                                    \
        U yv = y[0];                                                                    \
        for (ptrdiff_t i = 0; i < n; i++) {                                             \
            U m = (U)0 - (U)c[i]; out[i] = (U)((x[i] & m) | (yv & ~m)); }               \
    } else {                                                                            \
        U xv = x[0], yv = y[0];                                                         \
        for (ptrdiff_t i = 0; i < n; i++) {                                             \
            U m = (U)0 - (U)c[i]; out[i] = (U)((xv & m) | (yv & ~m)); }                 \
    }                                                                                   \
}
NT_SELECT(nt_select_8, uint8_t)
NT_SELECT(nt_select_16, uint16_t)
NT_SELECT(nt_select_32, uint32_t)
NT_SELECT(nt_select_64, uint64_t)
/* ReLU as PyTorch computes it (Note [ReLU's zero], _ops/math.py): out = x < 0 ? 0 : x,
   so -0.0 and NaN pass; its gradient from the output: 0 where out <= 0 (exactly where
   x <= 0), else g (NaN included). Both loads are unconditional: the loops vectorize. */
#define NT_RELU(T, S)                                                                    \
void nt_relu_##S(T *restrict out, const T *restrict x, ptrdiff_t n) {                   \
    for (ptrdiff_t i = 0; i < n; i++) { T v = x[i]; out[i] = v < 0 ? (T)0 : v; }        \
}                                                                                       \
void nt_relu_grad_##S(T *restrict out, const T *restrict y, const T *restrict g,        \
                      ptrdiff_t n) {                                                    \
    for (ptrdiff_t i = 0; i < n; i++) { T v = y[i], d = g[i]; out[i] = v <= 0 ? (T)0 : d; } \
}
NT_RELU(float, f32)
NT_RELU(double, f64)
/* out (m, n) = p (n, m) transposed, plus b[j] in out's column j, in 32 x 32 tiles so that
   the rows of p a tile reads stay in cache (Note [Rows before columns in linear]) */
#define NT_TADD(T, S)                                                                    \
void nt_transpose_add_##S(T *restrict out, const T *restrict p, const T *restrict b,    \
                          ptrdiff_t n, ptrdiff_t m) {                                   \
    for (ptrdiff_t i0 = 0; i0 < m; i0 += 32)                                            \
        for (ptrdiff_t j0 = 0; j0 < n; j0 += 32) {                                      \
            ptrdiff_t i1 = i0 + 32 < m ? i0 + 32 : m, j1 = j0 + 32 < n ? j0 + 32 : n;   \
            for (ptrdiff_t i = i0; i < i1; i++)                                         \
                for (ptrdiff_t j = j0; j < j1; j++) out[i * n + j] = p[j * m + i] + b[j]; \
        }                                                                               \
}
NT_TADD(float, f32)
NT_TADD(double, f64)
"""

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_BOOL = np.dtype(np.bool_)
_kernels: dict = {}      # dtype -> axpy's ctypes function; {} until loaded
_selects: dict = {}      # itemsize -> select's ctypes function; {} until loaded
_relus: dict = {}        # dtype -> (ReLU's, its gradient's ctypes function); {} until loaded
_tadds: dict = {}        # dtype -> transpose_add's ctypes function; {} until loaded
_unavailable = []        # holds True once loading failed (no compiler, build error)
_from_buffer, _addressof = ctypes.c_char.from_buffer, ctypes.addressof


def _load():
    from .._inductor import build
    lib = build.load_or_none(_SOURCE, "eager one-pass kernels (add_ with alpha, select)")
    if lib is None:
        _unavailable.append(True)
        return
    for dtype, name, scalar in ((_F32, "nt_axpy_f32", ctypes.c_float),
                                (_F64, "nt_axpy_f64", ctypes.c_double)):
        fn = getattr(lib, name)
        fn.restype = None
        fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, scalar, ctypes.c_ssize_t)
        _kernels[dtype] = fn
    for size in (1, 2, 4, 8):
        fn = getattr(lib, f"nt_select_{8 * size}")
        fn.restype = None
        fn.argtypes = (ctypes.c_void_p,) * 3 + (ctypes.c_ssize_t, ctypes.c_void_p,
                                                 ctypes.c_ssize_t, ctypes.c_ssize_t)
        _selects[size] = fn
    for dtype, name in ((_F32, "f32"), (_F64, "f64")):
        fwd, grad = getattr(lib, "nt_relu_" + name), getattr(lib, "nt_relu_grad_" + name)
        fwd.restype = grad.restype = None
        fwd.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ssize_t)
        grad.argtypes = (ctypes.c_void_p,) * 3 + (ctypes.c_ssize_t,)
        _relus[dtype] = fwd, grad
        fn = getattr(lib, "nt_transpose_add_" + name)
        fn.restype = None
        fn.argtypes = (ctypes.c_void_p,) * 3 + (ctypes.c_ssize_t, ctypes.c_ssize_t)
        _tadds[dtype] = fn


def available() -> bool:
    """Whether the one-pass kernels can run here (loads them on first call)."""
    if not _kernels and not _unavailable:
        _load()
    return bool(_kernels)


def axpy(x, y, alpha) -> bool:
    """``x += alpha * y`` in one pass, bit-equal to ``x += y * alpha`` in NumPy (Note [One-pass
    add with alpha]); False, with nothing written, where the kernel does not apply or is
    unavailable."""
    dt = x.dtype
    if (dt is not _F32 and dt is not _F64) or y.dtype is not dt or y.shape != x.shape \
            or alpha.__class__ not in (float, int) or not x.flags.c_contiguous \
            or not y.flags.c_contiguous or not x.flags.writeable or not x.size:
        return False   # (an empty array has no buffer to point at: NumPy adds nothing)
    fn = _kernels.get(dt)
    if fn is None:
        if _unavailable or not available():
            return False
        fn = _kernels[dt]
    n = x.size
    # Addresses through the buffer protocol: ndarray.ctypes builds Python objects, 4x slower.
    px = _addressof(_from_buffer(x))
    py = _addressof(_from_buffer(y)) if y.flags.writeable else y.ctypes.data
    nbytes = n * dt.itemsize
    if px != py and px < py + nbytes and py < px + nbytes:
        return False   # partial overlap: element i would read a y already written
    fn(px, py, alpha, n)
    return True


def _address(a):
    # Through the buffer protocol where it takes the array (writeable, C-contiguous):
    # ndarray.ctypes builds Python objects, 4x slower.
    f = a.flags
    return _addressof(_from_buffer(a)) if f.writeable and f.c_contiguous else a.ctypes.data


def _dense(a):
    """Whether ``a`` fills its memory exactly, in some order of its dims: C-contiguous, or
    a transpose of a C-contiguous array (vmap's batched results often are)."""
    if a.flags.c_contiguous:
        return True
    expect = a.itemsize
    for stride, size in sorted(zip(a.strides, a.shape)):
        if size != 1:
            if stride != expect:
                return False
            expect *= size
    return True


def _step(a, c):
    """1 for an operand laid out in memory as ``c`` is (element i of both at their i-th
    place in memory), 0 for one element broadcast (a 0-d array or a view with zero
    strides), None for any other layout."""
    if a.shape != c.shape:
        return 0 if not a.ndim else None
    if a.flags.c_contiguous and c.flags.c_contiguous:
        return 1
    if a.size and not any(a.strides):
        return 0
    k = a.itemsize   # c is bool: one byte per element
    for sa, sc, n in zip(a.strides, c.strides, a.shape):
        if sa != sc * k and n != 1:
            return None
    return 1


def select(c, x, y):
    """``np.where(c, x, y)`` for a bool ``c`` that fills its memory (C-contiguous or a
    transpose of such) and ``x``, ``y`` of one dtype, each laid out as ``c`` or one element
    broadcast, in one branch-free pass over memory: the same bits, in ``c``'s layout
    (Note [Branch-free select], elementwise.py); None, with nothing computed, for other
    operands or where the kernels are unavailable."""
    dt = x.dtype
    fn = _selects.get(dt.itemsize)
    if fn is None or y.dtype != dt or c.dtype is not _BOOL or dt.hasobject:
        if _unavailable or _selects or not available():
            return None
        return select(c, x, y)   # loaded now
    if not c.size or x.__class__ is not np.ndarray or y.__class__ is not np.ndarray \
            or not _dense(c):
        return None   # (NumPy scalars have no buffer to point at)
    sx, sy = _step(x, c), _step(y, c)
    if sx is None or sy is None:
        return None
    flat = np.empty(c.size, dt)
    fn(_addressof(_from_buffer(flat)), _address(c), _address(x), sx, _address(y), sy, c.size)
    if c.flags.c_contiguous:
        return flat.reshape(c.shape)
    k = dt.itemsize
    return np.ndarray(c.shape, dt, flat, 0, tuple([s * k for s in c.strides]))


def _relu_kernels(dt):
    """(ReLU's kernel, its gradient's) for dtype ``dt``, or None."""
    fns = _relus.get(dt)
    if fns is None and not _relus and not _unavailable and available():
        fns = _relus.get(dt)
    return fns


def relu(x):
    """``where(x < 0, 0, x)`` (PyTorch's ReLU: -0.0 and NaN kept) of a float32 or float64
    array that fills its memory (C-contiguous or a transpose of such: vmap's batched
    values often are), in one pass, the result in ``x``'s layout as NumPy's ufuncs and
    PyTorch's would lay it out; None where the kernel does not apply."""
    fns = _relu_kernels(x.dtype) if x.size and _dense(x) else None
    if fns is None:
        return None
    out = _like(x)
    fns[0](_address(out), _address(x), out.size)
    return out


def relu_grad(y, g):
    """``where(y <= 0, 0, g)``, ReLU's gradient from its output ``y``, for float32 or
    float64 ``y`` and ``g`` of one shape, dtype and layout, filling their memory, in one
    pass; None where the kernel does not apply."""
    fns = _relu_kernels(y.dtype) if g.dtype == y.dtype and g.shape == y.shape and y.size \
        and g.strides == y.strides and _dense(y) else None
    if fns is None:
        return None
    out = _like(y)
    fns[1](_address(out), _address(y), _address(g), out.size)
    return out


def _like(a):
    """A fresh array with ``a``'s shape, dtype and strides, for an ``a`` that fills its
    memory: element i of ``a``'s memory and of the result's at the same place."""
    if a.flags.c_contiguous:
        return np.empty(a.shape, a.dtype)
    return np.ndarray(a.shape, a.dtype, np.empty(a.size, a.dtype), 0, a.strides)


def transpose_add(p, b):
    """``p.T + b`` as a fresh C-contiguous array, for a C-contiguous float32 or float64
    ``p`` of shape (n, m), n, m > 0, and ``b`` of shape (n,) and ``p``'s dtype: the same
    bits as NumPy's add, in one tiled pass (Note [Rows before columns in linear],
    nn/_fused_linear.py); None where the kernel does not apply."""
    dt = p.dtype
    fn = _tadds.get(dt)
    if fn is None:
        if _tadds or _unavailable or not available():
            return None
        fn = _tadds.get(dt)
        if fn is None:
            return None
    if p.ndim != 2 or not p.size or not p.flags.c_contiguous or b.__class__ is not np.ndarray \
            or b.dtype is not dt or b.shape != (p.shape[0],) or not b.flags.c_contiguous:
        return None
    n, m = p.shape
    out = np.empty((m, n), dt)
    fn(_addressof(_from_buffer(out)), _address(p), _address(b), n, m)
    return out
