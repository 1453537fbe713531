"""The kernels' own math functions against NumPy over their whole float32 range (Note
[Inline float exp]): at most 1 ulp from the correctly rounded value, and NaN, infinities,
signed zeros, overflow and denormal results as IEEE exp gives them.

Skipped where there is no C compiler.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._inductor import build, compile_graph
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def compiled(f, *args):
    return compile_graph(make_graph(f)(*args), list(args))


def _ordinal(a):
    """float32 values as integers in the order of the floats (adjacent floats differ by 1)."""
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, np.int64(-(2 ** 31)) - i, i)


def _all_float32(stride):
    """Every ``stride``-th float32 bit pattern (both signs, denormals, inf and NaN included)."""
    return np.arange(0, 2 ** 32, stride, dtype=np.uint64).astype(np.uint32).view(np.float32)


def test_exp_within_one_ulp_over_the_float32_range():
    xs = np.concatenate([_all_float32(997), np.float32([88.72283, 88.72284, -87.33655,
                                                        -103.97208, -103.97209, -104.0, 89.0])])
    x = torch.from_numpy(xs)
    c = compiled(lambda x: x.exp(), x)
    assert "nt_exp(" in c.source
    # widening the signalling-NaN bit patterns raises FE_INVALID (they come out quiet)
    with np.errstate(over="ignore", invalid="ignore"):
        out, ref = c(x)[0].numpy(), np.exp(xs.astype(np.float64)).astype(np.float32)
    nan = np.isnan(xs)
    np.testing.assert_array_equal(np.isnan(out), nan)
    assert np.abs(_ordinal(out[~nan]) - _ordinal(ref[~nan])).max() <= 1


def test_exp_and_sigmoid_specials():
    # huge and infinite x: the arithmetic's result is garbage there, the selects replace it
    xs = np.float32([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 100.0, -100.0, -150.0,
                     1e30, -1e30, 3.4e38, -3.4e38, 2.0 ** 31, -2.0 ** 31])
    x = torch.from_numpy(xs)
    c = compiled(lambda x: (x.exp(), torch.sigmoid(x)), x)
    e, s = (t.numpy() for t in c(x))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(e, np.exp(xs))      # exact at these points
        ref = 1 / (1 + np.exp(-xs))                       # float32, as eager computes it
    np.testing.assert_allclose(s, ref, rtol=3e-7, atol=0)
    np.testing.assert_array_equal(s, torch.sigmoid(x).numpy())
    assert np.isnan(s[0]) and s[1] == 1 and s[2] == 0


def test_float64_exp_keeps_libm():
    xs = np.linspace(-700, 700, 1001)
    x = torch.from_numpy(xs)
    c = compiled(lambda x: x.exp(), x)
    np.testing.assert_allclose(c(x)[0].numpy(), np.exp(xs), rtol=4e-16)
