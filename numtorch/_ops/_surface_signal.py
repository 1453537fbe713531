"""Signal-processing windows of ``torch``: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window``, ``kaiser_window``.

Windows are creation functions (like ``linspace``): their values depend only on Python
numbers, so they are computed once in float64 NumPy and cast to ``dtype``; the result is
a leaf (``requires_grad`` makes it one that requires grad). Docstrings follow PyTorch's.
"""
from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from . import creation
from ._common import cpp_type_name, scalar_type_name

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def _window(fn, window_length, periodic, dtype, device, requires_grad, formula):
    """Checks PyTorch's arguments, then ``formula(n, N)`` in float64 for n = 0..N-1 of the
    symmetric window of length N (N = window_length + 1 when periodic, the last value
    dropped: the periodic window is the first N of one period of length N + 1)."""
    if isinstance(window_length, bool) or not isinstance(window_length, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{fn} requires non-negative window_length, got "
                           f"window_length={window_length}")
    d = _dt.get_default_dtype() if dtype is None else dtype
    if d.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{scalar_type_name(d)}'")
    if not d.is_floating_point:
        raise RuntimeError(f"{fn} expects floating point dtypes, got: TensorOptions(dtype="
                           f"{cpp_type_name(d)}, device=cpu, ...)")
    n_total = int(window_length) + (1 if periodic else 0)
    if window_length <= 1:
        values = np.ones(int(window_length))
    else:
        values = formula(np.arange(n_total, dtype=np.float64), n_total)[:int(window_length)]
    return creation._finish(values.astype(d.np), d, device, requires_grad)


def _cosine_sum(*coeffs):
    """sum_k (-1)^k a_k cos(2 pi k n / (N - 1)): Hann, Hamming, Blackman."""
    def formula(n, N):
        phase = 2 * np.pi * n / (N - 1)
        return sum((-1) ** k * a * np.cos(k * phase) for k, a in enumerate(coeffs))
    return formula


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """Hann window function: w[n] = 0.5 - 0.5 cos(2 pi n / (N - 1)), where N is the full
    window size (window_length + 1 when ``periodic``, the default, which suits spectral
    analysis such as ``torch.stft``; the last value is then dropped)."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """Hamming window function: w[n] = alpha - beta cos(2 pi n / (N - 1)), where N is the
    full window size (window_length + 1 when ``periodic``)."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """Blackman window function: w[n] = 0.42 - 0.5 cos(2 pi n / (N - 1)) +
    0.08 cos(4 pi n / (N - 1)), where N is the full window size."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """Bartlett (triangular) window function: w[n] = 1 - |2n / (N - 1) - 1|, where N is the
    full window size."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / (N - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """Kaiser window with window length ``window_length`` and shape parameter ``beta``:
    w[n] = I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta), with N = window_length - 1
    (window_length when ``periodic``) and I0 the zeroth-order modified Bessel function of
    the first kind."""
    def formula(n, N):
        half = (N - 1) / 2
        return np.i0(beta * np.sqrt(np.clip(1 - ((n - half) / half) ** 2, 0, None))) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   formula)
