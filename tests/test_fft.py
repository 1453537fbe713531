"""numtorch.fft against PyTorch: every transform over dtypes (real, complex, integer),
norm modes and n/s/dim resizing, values and dtypes; gradients of real and complex inputs;
vmap; argument errors. The OpInfo entries (numtorch/testing/_db/fft.py) add the matrix
(finite differences, jvp vs vjp, vmap, graphs, compile) against numpy.fft."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as nt

_ONE_D = ["fft", "ifft", "rfft", "irfft"]
_N_D = ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]
_ND_ARGS = [dict(), dict(s=(3, 6)), dict(dim=(0, 2)), dict(s=(2, 7), dim=(2, 0)), dict(s=(4,)),
            dict(dim=(1,))]


def _input(dtype, rng):
    x = rng.standard_normal((3, 4, 5)) * 3
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal((3, 4, 5))
    return x.astype(dtype)


def _same(torch, name, x, kw):
    """Ours equals PyTorch's (values and dtype), or both raise."""
    try:
        expected = getattr(torch.fft, name)(torch.tensor(x), **kw)
    except Exception:  # noqa: BLE001 - PyTorch refuses: so must we
        with pytest.raises(Exception):
            getattr(nt.fft, name)(nt.tensor(x), **kw)
        return
    out = getattr(nt.fft, name)(nt.tensor(x), **kw)
    assert str(out.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1], (name, kw)
    single = expected.dtype in (torch.float32, torch.complex64)
    np.testing.assert_allclose(out.numpy(), expected.resolve_conj().numpy(),
                               rtol=1e-5 if single else 1e-12, atol=1e-4 if single else 1e-10,
                               err_msg=f"{name} {kw}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_transforms_match_torch(dtype, norm):
    torch = pytest.importorskip("torch")
    x = _input(dtype, np.random.default_rng(0))
    for name in _ONE_D:
        for n in (None, 3, 8):
            for dim in (-1, 0, 1):
                _same(torch, name, x, dict(n=n, dim=dim, norm=norm))
    for name in _N_D:
        for kw in _ND_ARGS:
            if name.endswith("2") and any(len(v) != 2 for v in kw.values()):
                continue
            _same(torch, name, x, dict(kw, norm=norm))


@pytest.mark.parametrize("name, kw", [("fft", dict(n=9, dim=1, norm="forward")), ("ifft", dict(n=5, dim=0)),
                                      ("rfft", dict(n=5)), ("rfft", dict(norm="ortho")),
                                      ("irfft", dict()), ("irfft", dict(n=7)),
                                      ("irfft", dict(n=4, dim=1, norm="forward")),
                                      ("fftn", dict(s=(3, 5))), ("rfftn", dict(s=(2, 7), dim=(2, 0))),
                                      ("irfftn", dict(s=(4, 6), dim=(0, 1))), ("irfft2", dict())])
@pytest.mark.parametrize("complex_input", [False, True])
def test_gradients_match_torch(name, kw, complex_input):
    torch = pytest.importorskip("torch")
    if complex_input and name.startswith("r"):
        pytest.skip("rfft takes real input")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 6))
    if complex_input:
        x = x + 1j * rng.standard_normal((3, 4, 6))
    tx, ox = torch.tensor(x, requires_grad=True), nt.tensor(x, requires_grad=True)
    to, oo = getattr(torch.fft, name)(tx, **kw), getattr(nt.fft, name)(ox, **kw)
    w = rng.standard_normal(tuple(to.shape)) + 1j * rng.standard_normal(tuple(to.shape))
    for lib, out in ((torch, to), (nt, oo)):
        if out.is_complex():
            loss = (lib.real(out) * lib.tensor(w.real) + lib.imag(out) * lib.tensor(w.imag)).sum()
        else:
            loss = (out * lib.tensor(w.real)).sum()
        loss.backward()
    np.testing.assert_allclose(ox.grad.numpy(), tx.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-10)


def test_vmap_and_round_trips():
    x = nt.randn(4, 3, 8, dtype=nt.float64)
    np.testing.assert_allclose(nt.vmap(nt.fft.rfft)(x).numpy(), nt.fft.rfft(x).numpy(), atol=1e-12)
    np.testing.assert_allclose(nt.vmap(lambda v: nt.fft.fftn(v, dim=(0, 1)), in_dims=2)(x).numpy(),
                               nt.fft.fftn(x.movedim(2, 0), dim=(1, 2)).numpy(), atol=1e-12)
    np.testing.assert_allclose(nt.fft.irfft(nt.fft.rfft(x), n=8).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(nt.fft.ifftn(nt.fft.fftn(x)).real.numpy(), x.numpy(), atol=1e-12)


def test_freqs_and_shifts_match_torch():
    torch = pytest.importorskip("torch")
    for n in (0, 1, 4, 5):
        for d in (1.0, 0.5):
            np.testing.assert_allclose(nt.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
            np.testing.assert_allclose(nt.fft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy())
    x = np.random.default_rng(0).standard_normal((4, 5))
    for dim in (None, 0, (0, 1), -1):
        for name in ("fftshift", "ifftshift"):
            np.testing.assert_array_equal(getattr(nt.fft, name)(nt.tensor(x), dim).numpy(),
                                          getattr(torch.fft, name)(torch.tensor(x), dim).numpy())


def test_fft_argument_errors():
    x = nt.randn(4, 6)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        nt.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(-2\) specified"):
        nt.fft.irfft(x, n=-2)
    with pytest.raises(ValueError, match='Invalid normalization mode: "bogus"'):
        nt.fft.fft(x, norm="bogus")
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor"):
        nt.fft.rfft(x.to(nt.complex64))
    with pytest.raises(IndexError, match="Dimension out of range"):
        nt.fft.fft(x, dim=2)
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        nt.fft.fftn(x, dim=(0, 0))
    with pytest.raises(RuntimeError, match="dim and shape arguments must have the same length"):
        nt.fft.fftn(x, s=(2, 3), dim=(0,))
    with pytest.raises(TypeError, match="argument 'input' must be Tensor"):
        nt.fft.fft([1.0, 2.0])
    with pytest.raises(RuntimeError, match="argument 'n' must be a non-negative int"):
        nt.fft.fftfreq(-1)
