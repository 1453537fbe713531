"""OpInfo entries: ``nn.functional`` resampling and attention — interpolate (every mode),
scaled_dot_product_attention. Values are checked against PyTorch (the oracle column) and
by the per-mode sweep of tests/nn/test_layers_pytorch.py; the matrix adds gradients,
vmap, jvp, meta and graphs."""
from __future__ import annotations

import numtorch.nn.functional as F
from numtorch._core import dtypes as _dt

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


def _sdpa_samples(dtype, requires_grad):
    def m(*shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m(2, 3, 4), (m(2, 5, 4), m(2, 5, 6)), name="plain")
    yield SampleInput(m(1, 2, 3, 4), (m(1, 2, 3, 4), m(1, 2, 3, 4)), dict(is_causal=True),
                      name="causal")
    yield SampleInput(m(2, 3, 4), (m(2, 5, 4), m(2, 5, 4)),
                      dict(attn_mask=make((3, 5), dtype), scale=0.3), name="float_mask_scale")
    mask = make((2, 3, 5), _dt.bool_)
    mask[..., 0] = True   # every query sees a key (an all-masked row has zero gradient)
    yield SampleInput(m(2, 3, 4), (m(2, 5, 4), m(2, 5, 4)), dict(attn_mask=mask),
                      name="bool_mask")


def _group_norm_samples(dtype, requires_grad):
    def m(*shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m(2, 6, 3), (3,), dict(weight=m(6), bias=m(6)), name="affine")
    yield SampleInput(m(2, 4, 2, 3), (2,), name="2d")
    yield SampleInput(m(1, 4, 2), (4,), dict(eps=1e-3), name="one_channel_per_group")


def _one_hot_samples(dtype, requires_grad):
    yield SampleInput(make((5,), dtype, low=0, high=4), (4,))
    yield SampleInput(make((2, 3), dtype, low=0, high=3), (3,), name="2d")
    # num_classes=-1 reads the largest value (no graph, meta or vmap form, as in PyTorch):
    # tests/nn/test_functional.py::test_one_hot covers it.


register(
    _functional("scaled_dot_product_attention", sample_inputs=_sdpa_samples, dtypes=FLOATING,
                result_dtype=SAME),
    _functional("group_norm", sample_inputs=_group_norm_samples, dtypes=FLOATING,
                result_dtype=SAME),
    _functional("one_hot", sample_inputs=_one_hot_samples, dtypes=(_dt.int64,),
                result_dtype=lambda s: _dt.int64, supports_grad=False),
    _functional("interpolate", sample_inputs=_interpolate_samples, dtypes=FLOATING,
                result_dtype=SAME),
)
