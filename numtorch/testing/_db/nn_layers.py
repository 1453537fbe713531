"""OpInfo entries: ``nn.functional`` resampling and attention — interpolate (every mode),
scaled_dot_product_attention. Values are checked against PyTorch (the oracle column) and
by the per-mode sweep of tests/nn/test_layers_pytorch.py; the matrix adds gradients,
vmap, jvp, meta and graphs."""
from __future__ import annotations

import numtorch.nn.functional as F

from ..opinfo import SAME, FLOATING, OpInfo, SampleInput, make, register


def _functional(name, **kw):
    """An entry for ``numtorch.nn.functional.<name>`` (no top-level function)."""
    return OpInfo(f"nn.functional.{name}", op=getattr(F, name), method=None, inplace=None,
                  torch_op=lambda t: getattr(t.nn.functional, name), **kw)


def _interpolate_samples(dtype, requires_grad):
    cases = [((2, 3, 5), dict(scale_factor=2.0), "nearest1d"),
             ((1, 2, 3, 4), dict(size=(5, 3)), "nearest2d"),
             ((1, 1, 2, 3, 2), dict(scale_factor=(1.5, 1.0, 2.0)), "nearest3d"),
             ((1, 2, 3, 4), dict(size=(7, 2), mode="nearest-exact"), "nearest_exact"),
             ((2, 2, 5), dict(size=8, mode="linear"), "linear"),
             ((1, 2, 3, 4), dict(scale_factor=1.7, mode="bilinear", align_corners=True),
              "bilinear_aligned"),
             ((1, 2, 4, 3), dict(size=(3, 6), mode="bilinear"), "bilinear"),
             ((1, 1, 2, 3, 2), dict(size=(3, 2, 4), mode="trilinear"), "trilinear"),
             ((1, 2, 4, 4), dict(size=(6, 3), mode="bicubic"), "bicubic"),
             ((1, 2, 3, 3), dict(scale_factor=2.0, mode="bicubic", align_corners=True),
              "bicubic_aligned"),
             ((1, 2, 6, 4), dict(size=(3, 2), mode="area"), "area")]
    for shape, kwargs, name in cases:
        yield SampleInput(make(shape, dtype, requires_grad), (), kwargs, name=name)


register(
    _functional("interpolate", sample_inputs=_interpolate_samples, dtypes=FLOATING,
                result_dtype=SAME),
)
