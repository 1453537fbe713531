"""Short-time Fourier transforms of ``torch``: ``stft`` and ``istft``.

Compositions of existing ops (``index_select`` of constant position tables for the
centering pad and the frames, ``torch.fft`` for the transforms, ``index_add`` for the
overlap-add), so autograd, vmap, meta and compile come from their rules; this file must not
define primitives. Docstrings follow PyTorch's. The argument checks and messages follow
PyTorch's (its messages start with a summary of the call, reproduced here).
"""
from __future__ import annotations

import warnings

import numpy as np

from .._core import dtypes as _dt
from .._core.primitive import STACK
from .._core.tensor import Tensor
from . import creation, index as _index, math, shape
from ._common import check_tensor, scalar_type_name

__all__ = ["stft", "istft"]


def _window_summary(window):
    if window is None:
        return "None"
    return f"{window.type()}{{[{', '.join(str(n) for n in window.shape)}]}}"


def _frame_table(count, n_fft, hop):
    """(count, n_fft) start-plus-offset positions of each frame."""
    return np.arange(count)[:, None] * hop + np.arange(n_fft)[None, :]


def _padded_window(window, win_length, n_fft, dtype, device):
    """The window (ones when None), zero-padded on both sides to n_fft (centered)."""
    if window is None:
        window = creation.ones(win_length, dtype=dtype, device=device)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = shape.cat([creation.zeros(left, dtype=window.dtype, device=device), window,
                            creation.zeros(n_fft - win_length - left, dtype=window.dtype,
                                           device=device)])
    return window


_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _center_pad(x, pad, pad_mode):
    """``x`` padded by ``pad`` on both sides of its last dim: one ``index_select`` of a
    constant position table (``constant`` mode: zeros concatenated)."""
    n = x.shape[-1]
    if pad_mode == "constant":
        zeros = creation.zeros(tuple(x.shape[:-1]) + (pad,), dtype=x.dtype, device=x.device)
        return shape.cat([zeros, x, zeros], -1)
    if pad_mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {pad_mode}")
    if pad_mode == "reflect" and pad >= n:
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({pad}, {pad}) at dimension "
                           f"{x.dim() - 1} of input {list(x.shape)}")
    table = np.pad(np.arange(n), pad, mode=_PAD_MODES[pad_mode])
    return _index.index_select(x, -1, creation.tensor(table, dtype=_dt.int64, device=x.device))


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Short-time Fourier transform (STFT): the Fourier transforms of the frames
    ``input[..., t * hop_length : t * hop_length + n_fft] * window`` of a 1-D (L) or 2-D
    (B, L) signal, as a complex tensor (B?, N, T) with N = n_fft // 2 + 1 frequencies when
    ``onesided`` (the default for real input and window), else n_fft. ``center`` pads the
    signal by n_fft // 2 on both sides with ``pad_mode`` so frame t is centered at
    t * hop_length; ``hop_length`` defaults to n_fft // 4, ``win_length`` to n_fft, ``window``
    to ones (zero-padded to n_fft on both sides when shorter); ``normalized`` multiplies by
    n_fft ** -0.5. ``return_complex`` must be given for real input; False returns the real
    view (B?, N, T, 2)."""
    from .. import fft as _fft   # numtorch.fft loads on first use (tests/test_layering.py)
    check_tensor(input, "input", "stft")
    complex_input = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_input:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.", UserWarning, stacklevel=2)
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is "
                      "known to cause spectral leakage. Other windows such as torch.hann_window "
                      "or torch.hamming_window are recommended to reduce spectral leakage.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(x, message):
        raise RuntimeError(
            f"stft({x.type()}[{', '.join(str(n) for n in x.shape)}], n_fft={n_fft}, "
            f"hop_length={hop}, win_length={win}, window={_window_summary(window)}, "
            f"normalized={int(bool(normalized))}, onesided={onesided}, "
            f"return_complex={int(bool(return_complex))}, align_to_window={align_to_window}) : "
            f"{message}")
    x = input
    if center and x.dim() >= 1:
        x = _center_pad(x, n_fft // 2, pad_mode)
    if x.dim() not in (1, 2):
        fail(x, "expected a 1D or 2D tensor")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        fail(x, "expected a tensor of floating point or complex values")
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        fail(x, f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        fail(x, f"expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        fail(x, f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(x, f"expected a 1D window tensor of size equal to win_length={win}, but got "
                f"window with size {list(window.shape)}")
    if onesided is None:
        onesided = not complex_input
    elif onesided and complex_input:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    real_dtype = _dt.float64 if x.dtype in (_dt.float64, _dt.complex128) else _dt.float32
    w = _padded_window(window, win, n_fft, real_dtype, input.device)
    count = 1 + (length - n_fft) // hop
    table = _frame_table(count, n_fft, hop)
    idx = creation.tensor(table.reshape(-1), dtype=_dt.int64, device=input.device)
    frames = shape.reshape(_index.index_select(x, -1, idx),
                           tuple(x.shape[:-1]) + (count, n_fft))
    frames = math.mul(frames, w)
    norm = "ortho" if normalized else None
    spec = _fft.rfft(frames, dim=-1, norm=norm) if onesided else _fft.fft(frames, dim=-1,
                                                                            norm=norm)
    spec = shape.transpose(spec, -1, -2)
    if return_complex:
        return spec
    from ._surface_shape import view_as_real
    return view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Inverse short-time Fourier transform: the least-squares inverse of ``stft`` with the
    same arguments. Each frame's inverse Fourier transform is multiplied by ``window``,
    the frames are overlap-added at multiples of ``hop_length`` and divided by the
    overlap-added squared window (which must be nonzero: the NOLA condition); with
    ``center`` the n_fft // 2 padding is trimmed. ``length`` trims or zero-pads the
    result."""
    from .. import fft as _fft   # numtorch.fft loads on first use (tests/test_layering.py)
    check_tensor(input, "input", "istft")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    given_onesided = onesided

    def fail(message):
        raise RuntimeError(
            f"istft(CPU{scalar_type_name(input.dtype)}Type["
            f"{', '.join(str(n) for n in input.shape)}], n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_summary(window)}, center={int(bool(center))}, "
            f"normalized={int(bool(normalized))}, onesided={given_onesided}, length={length}, "
            f"return_complex={int(bool(return_complex))}) {message}")
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    if input.dim() not in (2, 3):
        fail(f": expected a tensor with 3 or 4 dimensions of real, or 2 or 3 dimensions of "
             f" complex, but got {input.dim()}")
    if onesided is None:
        onesided = input.shape[-2] != n_fft
    if onesided and (window is not None and window.dtype.is_complex or return_complex):
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    expected = n_fft // 2 + 1 if onesided else n_fft
    if input.shape[-2] != expected:
        fail(f": expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft / 2 + 1 when onesided=True, but got {input.shape[-2]}" if onesided else
             f": expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft when onesided=False, but got {input.shape[-2]}")
    if not 0 < hop <= win:
        fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(f": expected a 1D window tensor of size equal to win_length={win}, but got window "
             f"with size {list(window.shape)}")
    real_dtype = _dt.float64 if input.dtype is _dt.complex128 else _dt.float32
    w = _padded_window(window, win, n_fft, real_dtype, input.device)
    count = input.shape[-1]
    frames = shape.transpose(input, -1, -2)                        # (B?, T, N)
    norm = "ortho" if normalized else None
    if onesided:
        frames = _fft.irfft(frames, n=n_fft, dim=-1, norm=norm)
    else:
        frames = _fft.ifft(frames, n=n_fft, dim=-1, norm=norm)
        if not return_complex:
            frames = math.real(frames)
    frames = math.mul(frames, w)
    total = n_fft + hop * (count - 1)
    table = creation.tensor(_frame_table(count, n_fft, hop).reshape(-1), dtype=_dt.int64,
                            device=input.device)
    lead = tuple(frames.shape[:-2])
    signal = _index.index_add(creation.zeros(lead + (total,), dtype=frames.dtype,
                                             device=input.device), -1, table,
                              shape.reshape(frames, lead + (count * n_fft,)))
    envelope = _index.index_add(creation.zeros(total, dtype=real_dtype, device=input.device), 0,
                                table, shape.reshape(shape.expand(math.mul(w, w), (count, n_fft)),
                                                     (-1,)))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0)
    if length is not None:
        end = min(start + length, total)
    signal = shape.narrow(signal, -1, start, end - start)
    envelope = shape.narrow(envelope, 0, start, end - start)
    if not STACK and not envelope.is_meta:
        env = envelope._concrete("istft()")
        if env.size and np.abs(env).min() < 1e-11:
            fail(f"window overlap add min: {float(np.abs(env).min()):g}")
    signal = math.div(signal, envelope)
    if length is not None and end - start < length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        signal = shape.cat([signal, creation.zeros(lead + (length - (end - start),),
                                                   dtype=signal.dtype, device=input.device)], -1)
    return signal


Tensor.stft = stft
Tensor.istft = istft
