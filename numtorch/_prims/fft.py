"""Discrete Fourier transform primitives: complex-to-complex, real-to-complex and
complex-to-real, over given axes, always unnormalized (Note [FFT primitives]).

The impls are NumPy's pocketfft (``numpy.fft``); every other rule is written with
numtorch ops. Normalization, ``n``/``s`` resizing and dtype promotion belong to the ops
(``numtorch/fft.py``), never here.
"""
from __future__ import annotations

import numpy as np

from .._core.primitive import Primitive
from ._helpers import T, move_bdim
from ._lower import extern

# Note [FFT primitives]
# Three linear primitives, as in PyTorch's ATen (_fft_c2c, _fft_r2c, _fft_c2r), without its
# normalization argument: scaling by 1/n or 1/sqrt(n) is a real scalar multiply that the
# ops apply, so every rule here is about the unscaled transform.
#   fft_c2c(x, axes, forward)   sum_k x_k e^{-+2 pi i jk/n} over each axis (- if forward)
#   fft_r2c(x, axes, onesided)  the forward transform of a real x; onesided keeps the first
#                               n//2 + 1 entries of the last axis (the rest are conjugates)
#   fft_c2r(x, axes, last_dim_size)  the inverse of a Hermitian spectrum given by its
#                               onesided half (last axis last_dim_size//2 + 1 long): real
# Each is linear, so jvp applies the primitive to the tangent, and the vjp is the adjoint
# (A^H g, PyTorch's convention for complex gradients): c2c's is c2c in the other direction;
# r2c's zero-fills the missing half and takes the real part of the inverse c2c; c2r's is
# r2c of the real cotangent with the entries whose mirror image was dropped counted twice
# (PyTorch's fft_c2r_backward).

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def _shift_batch(prim):
    def batch(values, bdims, *, axes, **params):
        x = move_bdim(values[0], bdims[0], 0)
        return prim.bind(x, axes=tuple(a + 1 for a in axes), **params), 0
    return batch


def _linear_jvp(prim):
    return lambda primals, tangents, **params: (prim.bind(primals[0], **params),
                                                prim.bind(tangents[0], **params))


# complex -> complex ----------------------------------------------------------------------

def _c2c_impl(x, *, axes, forward):
    if not axes or x.size == 0:
        return x.copy()
    fn = np.fft.fftn if forward else np.fft.ifftn
    return fn(x, axes=axes, norm="backward" if forward else "forward").astype(x.dtype, copy=False)


def _c2c_shape(x, *, axes, forward):
    if np.dtype(x.dtype).kind != "c":
        raise TypeError(f"fft_c2c expects a complex operand, got {x.dtype}")
    return x.shape, x.dtype


fft_c2c = Primitive("fft_c2c", impl=_c2c_impl, shape=_c2c_shape)
fft_c2c.jvp = _linear_jvp(fft_c2c)
fft_c2c.vjp = lambda g, out, x, *, axes, forward: (fft_c2c.bind(g, axes=axes, forward=not forward),)
fft_c2c.batch = _shift_batch(fft_c2c)


# real -> complex -------------------------------------------------------------------------

def _r2c_impl(x, *, axes, onesided):
    out_dtype = _COMPLEX_OF[x.dtype]
    if onesided:
        if x.size == 0:
            return np.zeros(_r2c_shape(x, axes=axes, onesided=True)[0], out_dtype)
        return np.fft.rfftn(x, axes=axes, norm="backward").astype(out_dtype, copy=False)
    if x.size == 0:
        return x.astype(out_dtype)
    return np.fft.fftn(x, axes=axes, norm="backward").astype(out_dtype, copy=False)


def _r2c_shape(x, *, axes, onesided):
    dtype = np.dtype(x.dtype)
    if dtype not in _COMPLEX_OF:
        raise TypeError(f"fft_r2c expects a real floating operand, got {x.dtype}")
    shape = list(x.shape)
    if onesided:
        shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return tuple(shape), _COMPLEX_OF[dtype]


def _r2c_vjp(g, out, x, *, axes, onesided):
    if onesided:
        last = axes[-1]
        missing = x.shape[last] - g.shape[last]
        if missing:
            shape = list(g.shape)
            shape[last] = missing
            g = T.cat([g, T.zeros(tuple(shape), dtype=g.dtype, device=g.device)], last)
    return (T.real(fft_c2c.bind(g, axes=axes, forward=False)),)


fft_r2c = Primitive("fft_r2c", impl=_r2c_impl, shape=_r2c_shape, vjp=_r2c_vjp)
fft_r2c.jvp = _linear_jvp(fft_r2c)
fft_r2c.batch = _shift_batch(fft_r2c)


# complex -> real -------------------------------------------------------------------------

def _c2r_impl(x, *, axes, last_dim_size):
    out_shape, out_dtype = _c2r_shape(x, axes=axes, last_dim_size=last_dim_size)
    if x.size == 0 or 0 in out_shape:
        return np.zeros(out_shape, out_dtype)
    s = [x.shape[a] for a in axes[:-1]] + [last_dim_size]
    return np.fft.irfftn(x, s=s, axes=axes, norm="forward").astype(out_dtype, copy=False)


def _c2r_shape(x, *, axes, last_dim_size):
    dtype = np.dtype(x.dtype)
    if dtype not in _REAL_OF:
        raise TypeError(f"fft_c2r expects a complex operand, got {x.dtype}")
    if x.shape[axes[-1]] != last_dim_size // 2 + 1:
        raise TypeError(f"fft_c2r: the last axis has {x.shape[axes[-1]]} entries, expected "
                        f"last_dim_size // 2 + 1 = {last_dim_size // 2 + 1}")
    shape = list(x.shape)
    shape[axes[-1]] = last_dim_size
    return tuple(shape), _REAL_OF[dtype]


def _c2r_vjp(g, out, x, *, axes, last_dim_size):
    gi = fft_r2c.bind(g, axes=axes, onesided=True)
    last = axes[-1]
    double = last_dim_size - gi.shape[last]   # entries whose mirror image was dropped
    if double > 0:
        w = np.ones(gi.shape[last], dtype=_REAL_OF[np.dtype(gi.dtype.np)])
        w[1:1 + double] = 2.0
        shape = [1] * gi.ndim
        shape[last] = -1
        gi = gi * T.tensor(w, device=gi.device).reshape(shape)
    return (gi,)


fft_c2r = Primitive("fft_c2r", impl=_c2r_impl, shape=_c2r_shape, vjp=_c2r_vjp)
fft_c2r.jvp = _linear_jvp(fft_c2r)
fft_c2r.batch = _shift_batch(fft_c2r)

for _p in (fft_c2c, fft_r2c, fft_c2r):
    _p.vjp_needs = ()   # linear: the rules read shapes only
    _p.lower = extern("FFT: NumPy's pocketfft")
