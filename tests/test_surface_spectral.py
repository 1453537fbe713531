"""stft and istft (numtorch/_ops/_surface_spectral.py) against PyTorch: argument variants,
the gradient with respect to the complex spectrum (numtorch's gradcheck takes real inputs
only, so the OpInfo matrix differentiates the window), warnings and errors."""
import warnings

import numpy as np
import pytest

import numtorch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _same(ours, theirs, tol=1e-5):
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def _call(lib, fn, x, n_fft, window, **kw):
    if window is not None:
        real = lib.float64 if x.dtype in (lib.float64, lib.complex128) else lib.float32
        kw["window"] = lib.hann_window(window, dtype=real)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(lib, fn)(x, n_fft, **kw)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("window, kw", [
    (None, {}), (10, dict(hop_length=3, win_length=10)), (None, dict(center=False)),
    (16, dict(normalized=True, onesided=False)), (16, dict(pad_mode="constant")),
    (16, dict(pad_mode="replicate", return_complex=False)), (16, dict(pad_mode="circular")),
], ids=["default", "short_window", "uncentered", "twosided_normalized", "constant",
        "replicate_real_view", "circular"])
def test_stft_matches_torch(dtype, window, kw):
    kw = dict(kw)
    kw.setdefault("return_complex", True)
    x = RNG.standard_normal((2, 50)).astype(dtype)
    for data in (x, x[0]):
        _same(_call(numtorch, "stft", numtorch.tensor(data), 16, window, **kw),
              _call(torch, "stft", torch.tensor(data), 16, window, **kw))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stft_and_istft_gradients_match_torch(dtype):
    x = RNG.standard_normal((2, 50)).astype(dtype)
    grads = []
    for lib in (numtorch, torch):
        a = lib.tensor(x, requires_grad=True)
        w = lib.hann_window(16, dtype=a.dtype)
        spec = lib.stft(a, 16, window=w, return_complex=True)
        spec.abs().sum().backward()
        s = spec.detach().requires_grad_()
        y = lib.istft(s, 16, window=w, length=47)
        y.backward(lib.tensor(np.linspace(-1, 1, 94).reshape(2, 47).astype(dtype)))
        grads.append((a.grad, y, s.grad))
    for ours, theirs in zip(*grads):
        _same(ours, theirs, 1e-4)


@pytest.mark.parametrize("window, kw", [
    (16, {}), (16, dict(length=50)), (16, dict(length=60)), (None, {}),
    (16, dict(normalized=True)), (10, dict(hop_length=3, win_length=10)),
    (16, dict(onesided=False)),
], ids=["default", "length", "length_padded", "no_window", "normalized", "short_window",
        "twosided"])
def test_istft_inverts_like_torch(window, kw):
    x = RNG.standard_normal((2, 50)).astype(np.float32)
    sk = {k: v for k, v in kw.items() if k != "length"}
    results = []
    for lib in (numtorch, torch):
        spec = _call(lib, "stft", lib.tensor(x), 16, window, return_complex=True, **sk)
        results.append(_call(lib, "istft", spec, 16, window, **kw))
    _same(*results, tol=1e-4)
    if "length" in kw and kw["length"] == 50:
        np.testing.assert_allclose(results[0].numpy(), x, atol=1e-5)    # lossless


def test_warnings_match_torch():
    x = numtorch.zeros(20)
    with pytest.warns(UserWarning, match="A window was not provided"):
        numtorch.stft(x, 8, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        numtorch.stft(x, 8, window=numtorch.ones(8), return_complex=False)


@pytest.mark.parametrize("call", [
    lambda t, x: t.stft(x, 16),
    lambda t, x: t.stft(x, 64, return_complex=True, center=False),
    lambda t, x: t.stft(x[None], 16, return_complex=True),
    lambda t, x: t.stft(x, 16, hop_length=0, return_complex=True),
    lambda t, x: t.stft(x, 16, win_length=20, return_complex=True),
    lambda t, x: t.stft(x, 16, window=t.ones(10), return_complex=True),
    lambda t, x: t.stft(x.long(), 16, return_complex=True),
    lambda t, x: t.stft(x, 16, pad_mode="foo", return_complex=True),
    lambda t, x: t.stft(x[:, :5], 16, return_complex=True),
    lambda t, x: t.istft(t.stft(x, 16, return_complex=True).real, 16),
    lambda t, x: t.istft(t.stft(x, 16, window=t.hann_window(16), return_complex=True), 16,
                         window=t.hann_window(16), center=False),
    lambda t, x: t.istft(t.stft(x, 16, return_complex=True), 16, return_complex=True),
], ids=["no_return_complex", "n_fft_large", "3d", "hop", "win_length", "window_size", "int",
        "pad_mode", "reflect_too_short", "istft_real", "istft_nola", "istft_onesided_complex"])
def test_errors_match_torch(call):
    x = np.zeros((2, 50), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            call(torch, torch.tensor(x))
        with pytest.raises(type(theirs.value)) as ours:
            call(numtorch, numtorch.tensor(x))
    assert str(ours.value).splitlines()[0][:60] == str(theirs.value).splitlines()[0][:60]
