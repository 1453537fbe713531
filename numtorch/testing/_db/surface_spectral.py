"""OpInfo entries: stft and istft (_ops/_surface_spectral.py); NumPy's FFT of explicitly
framed signals is the reference."""
from __future__ import annotations

import numpy as np

import numtorch as torch

from ..opinfo import FLOATING, OpInfo, SampleInput, make, register

_COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}
_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64}


def _window(n, dtype, requires_grad=False):
    return torch.hann_window(n, dtype=dtype, requires_grad=requires_grad)


def _stft_samples(dtype, requires_grad):
    yield SampleInput(make((2, 10), dtype, requires_grad), (8,),
                      dict(window=_window(8, dtype), return_complex=True))
    yield SampleInput(make((21,), dtype, requires_grad), (8, 3, 6),
                      dict(window=_window(6, dtype, requires_grad), center=False,
                           normalized=True, return_complex=True), name="short_window")
    yield SampleInput(make((1, 12), dtype, requires_grad), (6,),
                      dict(window=_window(6, dtype), onesided=False, pad_mode="constant",
                           return_complex=True), name="twosided")


def _frames(x, n_fft, hop, window, center, pad_mode="reflect"):
    if center:
        pad = [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)]
        x = np.pad(x, pad, mode="reflect" if pad_mode == "reflect" else "constant")
    count = 1 + (x.shape[-1] - n_fft) // hop
    idx = np.arange(count)[:, None] * hop + np.arange(n_fft)
    return x[..., idx] * window


def _padded(window, n_fft):
    left = (n_fft - len(window)) // 2
    return np.pad(window, (left, n_fft - len(window) - left))


def _stft_ref(x, n_fft, hop_length=None, win_length=None, window=None, center=True,
              pad_mode="reflect", normalized=False, onesided=None, return_complex=True):
    hop = n_fft // 4 if hop_length is None else hop_length
    w = _padded(window, n_fft)
    frames = _frames(x, n_fft, hop, w, center, pad_mode)
    spec = np.fft.rfft(frames, axis=-1) if onesided is not False else np.fft.fft(frames, axis=-1)
    if normalized:
        spec = spec / np.sqrt(n_fft)
    return np.swapaxes(spec, -1, -2).astype(np.complex64 if x.dtype == np.float32
                                            else np.complex128)


def _istft_samples(dtype, requires_grad):
    # the differentiable argument is the (real) window: numtorch's gradcheck takes real
    # inputs only (tests/test_surface_segment.py checks the spectrum's gradient with PyTorch)
    def spec(shape, n_fft, **kw):
        return torch.stft(make(shape, dtype), n_fft, return_complex=True, **kw).detach()
    w8, w6 = _window(8, dtype), torch.hamming_window(6, dtype=dtype)
    yield SampleInput(spec((2, 10), 8, window=w8), (8,),
                      dict(window=_window(8, dtype, requires_grad), length=12))
    yield SampleInput(spec((21,), 8, hop_length=3, win_length=6, window=w6), (8, 3, 6),
                      dict(window=torch.hamming_window(6, dtype=dtype,
                                                       requires_grad=requires_grad),
                           length=24), name="short_window_length")
    yield SampleInput(spec((1, 12), 6, window=_window(6, dtype), normalized=True), (6,),
                      dict(window=_window(6, dtype, requires_grad), normalized=True),
                      name="normalized")


def _istft_ref(spec, n_fft, hop_length=None, win_length=None, window=None, center=True,
               normalized=False, onesided=None, length=None, return_complex=False):
    hop = n_fft // 4 if hop_length is None else hop_length
    w = _padded(window, n_fft)
    frames = np.fft.irfft(np.swapaxes(spec, -1, -2), n=n_fft, axis=-1)
    if normalized:
        frames = frames * np.sqrt(n_fft)
    frames = frames * w
    count = frames.shape[-2]
    total = n_fft + hop * (count - 1)
    out = np.zeros(frames.shape[:-2] + (total,))
    env = np.zeros(total)
    for t in range(count):
        out[..., t * hop:t * hop + n_fft] += frames[..., t, :]
        env[t * hop:t * hop + n_fft] += w * w
    start = n_fft // 2 if center else 0
    end = total - start if length is None else min(start + length, total)
    out = out[..., start:end] / env[start:end]
    if length is not None and out.shape[-1] < length:
        out = np.concatenate([out, np.zeros(out.shape[:-1] + (length - out.shape[-1],))], -1)
    return out.astype(np.float32 if spec.dtype == np.complex64 else np.float64)


register(
    OpInfo("stft", ref=_stft_ref, result_dtype=lambda s: _COMPLEX[s.input.dtype],
           dtypes=FLOATING, sample_inputs=_stft_samples, inplace=None),
    OpInfo("istft", ref=_istft_ref, result_dtype=lambda s: _REAL[s.input.dtype],
           dtypes=FLOATING, sample_inputs=_istft_samples, inplace=None),
)
