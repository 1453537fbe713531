"""F.interpolate and nn.Upsample against PyTorch: every mode over random sizes, scale
factors and align_corners (values and input gradients), the modules' repr, and the
argument errors. The OpInfo entry (numtorch/testing/_db/nn_layers.py) adds the transforms."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as nt
import numtorch.nn.functional as F

from nn_helpers import arr, oracle

_MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1),
          ("nearest-exact", 2), ("linear", 1), ("bilinear", 2), ("trilinear", 3),
          ("bicubic", 2), ("area", 1), ("area", 2)]


def _cases(mode, nd, rng, n=10):
    for trial in range(n):
        ins = tuple(int(v) for v in rng.integers(1, 8, nd))
        kw = {}
        if trial % 2:
            kw["size"] = tuple(int(v) for v in rng.integers(1, 11, nd))
        else:
            kw["scale_factor"] = float(rng.choice([0.5, 1.5, 2.0, 2.7, 3.0, 1 / 3]))
            if trial % 3 == 0:
                kw["recompute_scale_factor"] = True
        if mode in ("linear", "bilinear", "trilinear", "bicubic"):
            kw["align_corners"] = trial % 4 >= 2
        yield ins, kw


@pytest.mark.parametrize("mode, nd", _MODES, ids=[f"{m}{d}d" for m, d in _MODES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_interpolate_matches_torch_values_and_grads(mode, nd, dtype):
    torch = oracle()
    rng = np.random.default_rng(nd * 7 + len(mode))
    checked = 0
    for ins, kw in _cases(mode, nd, rng):
        x = rng.standard_normal((2, 3) + ins).astype(dtype)
        tx = torch.tensor(x, requires_grad=True)
        try:
            ref = torch.nn.functional.interpolate(tx, mode=mode, **kw)
        except RuntimeError:   # an empty output: ours must raise the same error
            with pytest.raises(RuntimeError, match="sizes should be greater than 0"):
                F.interpolate(nt.tensor(x), mode=mode, **kw)
            continue
        ox = nt.tensor(x, requires_grad=True)
        out = F.interpolate(ox, mode=mode, **kw)
        atol = 1e-5 if dtype == "float32" else 1e-12
        assert tuple(out.shape) == tuple(ref.shape), (ins, kw)
        np.testing.assert_allclose(arr(out), arr(ref), rtol=atol, atol=atol, err_msg=str((ins, kw)))
        if ref.numel():
            g = rng.standard_normal(tuple(ref.shape)).astype(dtype)
            ref.backward(torch.tensor(g))
            out.backward(nt.tensor(g))
            np.testing.assert_allclose(arr(ox.grad), arr(tx.grad), rtol=atol, atol=atol * 10,
                                       err_msg=str((ins, kw)))
        checked += 1
    assert checked >= 5


def test_upsample_modules_match_torch_and_print_alike():
    torch = oracle()
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
    for ours, theirs in [(nt.nn.Upsample(scale_factor=2, mode="bilinear"),
                          torch.nn.Upsample(scale_factor=2, mode="bilinear")),
                         (nt.nn.Upsample(size=(5, 7)), torch.nn.Upsample(size=(5, 7))),
                         (nt.nn.UpsamplingNearest2d(scale_factor=3),
                          torch.nn.UpsamplingNearest2d(scale_factor=3)),
                         (nt.nn.UpsamplingBilinear2d(size=4), torch.nn.UpsamplingBilinear2d(size=4))]:
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(arr(ours(nt.tensor(x))), arr(theirs(torch.tensor(x))),
                                   rtol=1e-12, atol=1e-12)


def test_interpolate_argument_errors():
    x = nt.ones(1, 2, 3, 3)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=4, scale_factor=2.0)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=4, mode="nearest", align_corners=True)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        F.interpolate(x, size=4, mode="linear")
    with pytest.raises(NotImplementedError, match="got 2D"):
        F.interpolate(nt.ones(2, 3), size=4)
    with pytest.raises(NotImplementedError, match="got bogus"):
        F.interpolate(x, size=4, mode="bogus")
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        F.interpolate(x, size=(4, 4, 4))
    with pytest.raises(TypeError, match="argument 'size' must be int"):
        F.interpolate(x, size=2.5)
    with pytest.raises(ValueError, match="argument 'scale_factor' must be positive"):
        F.interpolate(x, scale_factor=-1.0)
    with pytest.raises(TypeError, match="argument 'input' must be Tensor"):
        F.interpolate(np.ones((1, 2, 3)), size=4)
    with pytest.raises(NotImplementedError, match="antialias"):
        F.interpolate(x, size=2, mode="bilinear", antialias=True)
