"""OpInfo entries: ``nn.functional`` resampling, attention and normalization — interpolate
(every mode), scaled_dot_product_attention, group_norm, batch_norm. Values are checked against PyTorch (the oracle column) and
by the per-mode sweep of tests/nn/test_layers_pytorch.py; the matrix adds gradients,
vmap, jvp, meta and graphs."""
from __future__ import annotations

import numpy as np

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


def _batch_norm_samples(dtype, requires_grad):
    def m(*shape):
        return make(shape, dtype, requires_grad)

    def stats(c):   # running statistics: buffers, not differentiated (a variance is > 0)
        return make((c,), dtype), make((c,), dtype, low=0.5, high=2.0)
    yield SampleInput(m(4, 3, 5), (None, None), dict(weight=m(3), bias=m(3), training=True),
                      name="train_affine")
    yield SampleInput(m(5, 4), (None, None), dict(training=True), name="train_2d")
    yield SampleInput(m(2, 3, 2, 2), (None, None), dict(weight=m(3), training=True, eps=1e-3),
                      name="train_weight_only")
    yield SampleInput(m(3, 2, 4), stats(2), dict(weight=m(2), bias=m(2)), name="eval")
    # Writes the running statistics in place; under vmap a batched statistic cannot be
    # written into an unbatched buffer (PyTorch raises the same), so no vmap columns.
    yield SampleInput(m(3, 2, 4), stats(2), dict(bias=m(2), training=True, momentum=0.3),
                      name="train_running", skip=("vmap", "vmap_grad", "jac"))


def _batch_norm_ref(x, running_mean, running_var, weight=None, bias=None, training=False,
                    momentum=0.1, eps=1e-5):
    """Normalizes over all dims but 1 with the batch's (biased) or the running statistics."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    else:
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
    out = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    return out if bias is None else out + bias.reshape(shape)


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
    _functional("batch_norm", ref=_batch_norm_ref, sample_inputs=_batch_norm_samples,
                dtypes=FLOATING, result_dtype=SAME),
    _functional("one_hot", sample_inputs=_one_hot_samples, dtypes=(_dt.int64,),
                result_dtype=lambda s: _dt.int64, supports_grad=False),
    _functional("interpolate", sample_inputs=_interpolate_samples, dtypes=FLOATING,
                result_dtype=SAME),
)
