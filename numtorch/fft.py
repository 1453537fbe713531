"""``torch.fft``: discrete Fourier transforms with PyTorch's arguments (``n``/``s``,
``dim``, ``norm``), dtypes (float32 -> complex64, float64 -> complex128; integers compute
in the default float dtype) and errors.

Each function resizes its input (crop or zero-pad to ``n``), calls one of the three
unnormalized primitives of ``_prims/fft.py`` and scales the result for ``norm``. Autograd,
vmap, jvp and compile come from the primitives' rules; nothing here computes on data.
"""
from __future__ import annotations

import math

from ._core import dtypes as _dt
from ._core.primitive import bind
from ._core.tensor import Tensor, _canonical_dim
from ._ops import shape as _S
from ._ops._common import check_tensor
from ._ops.creation import arange as _arange, zeros as _zeros
from ._prims.fft import fft_c2c, fft_c2r, fft_r2c

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_COMPLEX = {_dt.float32: _dt.complex64, _dt.float64: _dt.complex128}
_NORMS = ("backward", "ortho", "forward")


def _scale(x, norm, n, forward, fname):
    """Scale by PyTorch's ``norm`` convention: forward transforms get 1, 1/sqrt(n) or 1/n for
    "backward", "ortho", "forward"; inverse transforms the reverse."""
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f'{fname}(): Invalid normalization mode: "{norm}"')
    if norm == "ortho":
        return x * (1.0 / math.sqrt(n)) if n > 1 else x
    if (norm == "forward") == forward:
        return x * (1.0 / n) if n > 1 else x
    return x


def _float_input(x, fname):
    check_tensor(x, "input", fname)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(_dt.get_default_dtype())
    if x.dtype == _dt.float16:
        raise RuntimeError(f"{fname}(): Unsupported dtype Half (numtorch's FFTs are float32 "
                           f"and float64)")
    return x


def _as_complex(x):
    return x if x.dtype.is_complex else x.to(_COMPLEX[x.dtype])


def _dims_and_sizes(x, s, dim, fname, single=False):
    """Canonical (dims, sizes) from PyTorch's ``s``/``dim`` conventions; a size of -1 (or
    None) keeps the input's size along that dim."""
    if single:
        dims = (_canonical_dim(dim, x.ndim, "dim"),)
        sizes = (s,)
    else:
        if dim is None:
            dims = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
        else:
            dims = tuple(_canonical_dim(d, x.ndim, "dim") for d in
                         ((dim,) if isinstance(dim, int) else dim))
        if s is not None:
            s = tuple(s)
            if len(s) != len(dims):
                raise RuntimeError(f"{fname}(): When given, dim and shape arguments must have the "
                                   f"same length")
            if len(s) > x.ndim:
                raise RuntimeError(f"{fname}(): Got shape with {len(s)} values but input tensor "
                                   f"only has {x.ndim} dimensions.")
        sizes = s if s is not None else (None,) * len(dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{fname}(): FFT dims must be unique")
    out = []
    for d, n in zip(dims, sizes):
        if n is None or n == -1:
            n = x.shape[d]
        elif isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise RuntimeError(f"{fname}(): Invalid number of data points ({n}) specified")
        out.append(n)
    return dims, tuple(out)


def _resize(x, dims, sizes):
    """Crop or zero-pad ``x`` along each of ``dims`` to ``sizes`` (PyTorch's resize_fft_input)."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if have > n:
            x = _S.narrow(x, d, 0, n)
        elif have < n:
            shape = list(x.shape)
            shape[d] = n - have
            x = _S.cat([x, _zeros(tuple(shape), dtype=x.dtype, device=x.device)], d)
    return x


def _c2c(input, s, dim, norm, forward, fname, single=False):
    x = _float_input(input, fname)
    dims, sizes = _dims_and_sizes(x, s, dim, fname, single)
    x = _resize(x, dims, sizes)
    if not dims:
        return _as_complex(x)
    if x.dtype.is_complex:
        out = bind(fft_c2c, x, axes=dims, forward=forward)
    elif forward:   # a real signal: PyTorch's r2c with the full (two-sided) output
        out = bind(fft_r2c, x, axes=dims, onesided=False)
    else:
        out = bind(fft_c2c, _as_complex(x), axes=dims, forward=False)
    return _scale(out, norm, math.prod(sizes), forward, fname)


def _r2c(input, s, dim, norm, fname, single=False):
    x = _float_input(input, fname)
    if x.dtype.is_complex:
        raise RuntimeError(f"{fname} expects a real input tensor, but got {x.dtype}")
    dims, sizes = _dims_and_sizes(x, s, dim, fname, single)
    if not dims:
        raise RuntimeError(f"{fname}(): must have at least one dimension")
    x = _resize(x, dims, sizes)
    out = bind(fft_r2c, x, axes=dims, onesided=True)
    return _scale(out, norm, math.prod(sizes), True, fname)


def _c2r(input, s, dim, norm, fname, single=False):
    x = _as_complex(_float_input(input, fname))
    if single:
        dims = (_canonical_dim(dim, x.ndim, "dim"),)
        given = (s,)
    else:
        dims, _ = _dims_and_sizes(x, None if s is None else tuple(-1 for _ in s), dim, fname)
        given = tuple(s) if s is not None else (None,) * len(dims)
    if not dims:
        raise RuntimeError(f"{fname}(): must have at least one dimension")
    last_given = given[-1]
    if last_given in (None, -1):
        last = 2 * (x.shape[dims[-1]] - 1)   # may be symbolic under make_graph(dynamic=True)
        if isinstance(last, int) and last < 1:
            raise RuntimeError(f"{fname}(): Invalid number of data points ({last}) specified")
    else:
        last = last_given
        if isinstance(last, bool) or not isinstance(last, int) or last < 1:
            raise RuntimeError(f"{fname}(): Invalid number of data points ({last}) specified")
    sizes = []
    for d, n in zip(dims[:-1], given[:-1]):
        if n is None or n == -1:
            n = x.shape[d]
        elif isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise RuntimeError(f"{fname}(): Invalid number of data points ({n}) specified")
        sizes.append(n)
    x = _resize(x, dims, tuple(sizes) + (last // 2 + 1,))
    out = bind(fft_c2r, x, axes=dims, last_dim_size=last)
    return _scale(out, norm, math.prod(sizes) * last, False, fname)


def fft(input, n=None, dim=-1, norm=None):
    """Computes the one dimensional discrete Fourier transform of ``input``.

    ``n``: signal length; the input is zero-padded or trimmed to it along ``dim``.
    ``norm``: ``"backward"`` (default, no normalization), ``"forward"`` (normalize by
    ``1/n``) or ``"ortho"`` (``1/sqrt(n)``, an orthonormal transform).
    """
    return _c2c(input, n, dim, norm, True, "fft_fft", single=True)


def ifft(input, n=None, dim=-1, norm=None):
    """Computes the one dimensional inverse discrete Fourier transform of ``input``
    (``norm="backward"``, the default, normalizes by ``1/n``)."""
    return _c2c(input, n, dim, norm, False, "fft_ifft", single=True)


def rfft(input, n=None, dim=-1, norm=None):
    """Computes the one dimensional Fourier transform of real-valued ``input``; the output
    holds only the positive frequencies, ``n // 2 + 1`` of them, as the rest are
    redundant (Hermitian symmetry)."""
    return _r2c(input, n, dim, norm, "fft_rfft", single=True)


def irfft(input, n=None, dim=-1, norm=None):
    """Computes the inverse of :func:`rfft`: a real signal of length ``n`` (default
    ``2 * (input.size(dim) - 1)``) from the one-sided Hermitian ``input``. The imaginary
    parts of the zero-frequency (and, for even ``n``, Nyquist) terms are ignored."""
    return _c2r(input, n, dim, norm, "fft_irfft", single=True)


def fftn(input, s=None, dim=None, norm=None):
    """Computes the N dimensional discrete Fourier transform of ``input`` over ``dim``
    (default: all dims, or the last ``len(s)``), each resized to ``s``."""
    return _c2c(input, s, dim, norm, True, "fft_fftn")


def ifftn(input, s=None, dim=None, norm=None):
    """Computes the N dimensional inverse discrete Fourier transform of ``input``."""
    return _c2c(input, s, dim, norm, False, "fft_ifftn")


def rfftn(input, s=None, dim=None, norm=None):
    """Computes the N-dimensional discrete Fourier transform of real ``input``; the last
    transformed dim keeps only ``s[-1] // 2 + 1`` frequencies."""
    return _r2c(input, s, dim, norm, "fft_rfftn")


def irfftn(input, s=None, dim=None, norm=None):
    """Computes the inverse of :func:`rfftn` (real output; the last dim's length defaults
    to ``2 * (input.size(dim[-1]) - 1)``)."""
    return _c2r(input, s, dim, norm, "fft_irfftn")


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """Computes the 2 dimensional discrete Fourier transform (:func:`fftn` over the last
    two dims by default)."""
    return _c2c(input, s, dim, norm, True, "fft_fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """Computes the 2 dimensional inverse discrete Fourier transform."""
    return _c2c(input, s, dim, norm, False, "fft_ifft2")


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """Computes the 2-dimensional discrete Fourier transform of real ``input``."""
    return _r2c(input, s, dim, norm, "fft_rfft2")


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """Computes the inverse of :func:`rfft2`."""
    return _c2r(input, s, dim, norm, "fft_irfft2")


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **_ignored):
    """Computes the discrete Fourier Transform sample frequencies for a signal of size ``n``:
    ``[0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d * n)``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise RuntimeError(f"fftfreq(): argument 'n' must be a non-negative int, got {n!r}")
    k = _arange(n, dtype=dtype or _dt.get_default_dtype(), device=device)
    out = _S.roll(k - (n // 2), -((n // 2))) if n else k
    # roll turns [-n//2, ..., ceil(n/2) - 1] into [0, ..., ceil(n/2) - 1, -n//2, ..., -1]
    out = out / (d * n) if n else out
    return out.requires_grad_(requires_grad) if requires_grad else out


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **_ignored):
    """Computes the sample frequencies for :func:`rfft` with a signal of size ``n``:
    ``[0, 1, ..., n // 2] / (d * n)``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise RuntimeError(f"rfftfreq(): argument 'n' must be a non-negative int, got {n!r}")
    out = _arange(n // 2 + 1, dtype=dtype or _dt.get_default_dtype(), device=device)
    out = out / (d * n)   # n = 0 gives [nan], as PyTorch does
    return out.requires_grad_(requires_grad) if requires_grad else out


def _shift(input, dim, sign, fname):
    check_tensor(input, "input", fname)
    if dim is None:
        dims = tuple(range(input.ndim))
    else:
        dims = tuple(_canonical_dim(d, input.ndim, "dim") for d in
                     ((dim,) if isinstance(dim, int) else dim))
    if not dims:
        return input.clone() if isinstance(input, Tensor) else input
    shifts = tuple(sign * (input.shape[d] // 2) for d in dims)
    return _S.roll(input, shifts, dims)


def fftshift(input, dim=None):
    """Reorders n-dimensional FFT data, as provided by :func:`fftn`, to have negative
    frequency terms first (the zero frequency moves to the centre)."""
    return _shift(input, dim, 1, "fftshift")


def ifftshift(input, dim=None):
    """Inverse of :func:`fftshift`."""
    return _shift(input, dim, -1, "ifftshift")
