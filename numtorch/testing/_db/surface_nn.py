"""OpInfo entries: ``nn.functional`` prelu, rrelu (evaluation), hardshrink, softshrink,
pixel_shuffle and pixel_unshuffle (nn/_functional_surface.py)."""
from __future__ import annotations

import numpy as np

import numtorch.nn.functional as F

from ..opinfo import SAME, OpInfo, SampleInput, make, register


def _functional(name, **kw):
    """An entry for ``numtorch.nn.functional.<name>`` (no top-level function)."""
    return OpInfo(f"nn.functional.{name}", op=getattr(F, name), method=None, inplace=None,
                  torch_op=lambda t: getattr(t.nn.functional, name), result_dtype=SAME, **kw)


def _prelu_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3, 4), dtype, requires_grad), (make((3,), dtype, requires_grad),))
    yield SampleInput(make((5,), dtype, requires_grad), (make((1,), dtype, requires_grad),),
                      name="shared")


def _prelu_ref(x, w):
    w = w.reshape((-1,) + (1,) * (x.ndim - 2)) if w.size > 1 else w.reshape(())
    return np.where(x > 0, x, w * x)


def _unary(*args, shape=(3, 4)):
    def gen(dtype, requires_grad):
        yield SampleInput(make(shape, dtype, requires_grad), args)
    return gen


def _shuffle_ref(x, r):
    *b, c, h, w = x.shape
    y = x.reshape(*b, c // (r * r), r, r, h, w)
    nb = len(b)
    return y.transpose(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2).reshape(
        *b, c // (r * r), h * r, w * r)


def _unshuffle_ref(x, r):
    *b, c, h, w = x.shape
    y = x.reshape(*b, c, h // r, r, w // r, r)
    nb = len(b)
    return y.transpose(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3).reshape(
        *b, c * r * r, h // r, w // r)


register(
    _functional("prelu", ref=_prelu_ref, sample_inputs=_prelu_samples),
    _functional("rrelu", ref=lambda x, lo, hi: np.where(x >= 0, x, x * (lo + hi) / 2),
                sample_inputs=_unary(0.1, 0.3)),
    _functional("hardshrink", ref=lambda x, l=0.5: np.where(np.abs(x) > l, x, 0),
                sample_inputs=_unary(0.3)),
    _functional("softshrink", ref=lambda x, l=0.5: np.where(x > l, x - l, np.where(x < -l, x + l, 0)),
                sample_inputs=_unary(0.3)),
    _functional("pixel_shuffle", ref=_shuffle_ref, sample_inputs=_unary(2, shape=(2, 8, 2, 3))),
    _functional("pixel_unshuffle", ref=_unshuffle_ref, sample_inputs=_unary(2, shape=(1, 2, 4, 6))),
)
