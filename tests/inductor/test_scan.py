"""cumsum as a function of the segment (Note [Scans in C], scan.py) against eager (np.cumsum)
bit for bit: along the last axis (rows interleaved by four, and the rows left over), along
other axes (vectorised over the inner elements), 1-d, 1x1, 1023x1025, 3-d, transposed
and broadcast operands made by kernels, signed zeros, infinities and NaNs, int64 wrapping;
int32 and float16 converted around the scan.

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


def _bits_equal(out, ref):
    assert out.shape == ref.shape and out.dtype == ref.dtype
    assert out.numpy().tobytes() == ref.numpy().tobytes()


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed + sum(shape))
    if np.dtype(dtype).kind == "i":
        return torch.from_numpy(rng.integers(-2 ** 62, 2 ** 62, shape).astype(dtype))   # wraps
    return torch.from_numpy((rng.standard_normal(shape) * 100).astype(dtype))


@pytest.mark.parametrize("shape,axis", [((1024, 1024), 1), ((1024, 1024), 0), ((1023, 1025), 1),
                                        ((1023, 1025), 0), ((1, 1), 0), ((1, 1), 1), ((7,), 0),
                                        ((5, 3), 1), ((3, 5, 7), 1), ((3, 5, 7), -1),
                                        ((3, 5, 7), 0), ((6, 1, 4), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_cumsum_in_c_has_eager_bits(shape, axis, dtype):
    x = _data(shape, dtype)
    f = lambda x: torch.cumsum(x, axis)
    c = compiled(f, x)
    assert c.extern_count == 0 and "Note [Scans in C]" in c.source, c.source
    _bits_equal(c(x)[0], f(x))


def test_signed_zeros_infinities_and_nans():
    xs = np.array([[-0.0, -0.0, 0.0, -0.0, 1.0],
                   [np.inf, 1.0, -np.inf, 2.0, 3.0],
                   [np.nan, 1.0, 2.0, 3.0, 4.0],
                   [1e38, 1e38, 1e38, -1e38, 0.5],
                   [-0.0, 1e-45, -1e-45, 0.0, -0.0]], dtype=np.float32)
    x = torch.from_numpy(xs)
    for axis in (0, 1):
        f = lambda x: torch.cumsum(x, axis)
        _bits_equal(compiled(f, x)(x)[0], f(x))


def test_operands_made_by_kernels_and_consumers_after():
    x, b = _data((300, 130), np.float32), _data((300,), np.float32, seed=1)
    f = lambda x, b: (torch.cumsum(x.t() + b, 1) * 0.5, torch.cumsum(x[::2, 1:], 0))
    c = compiled(f, x, b)
    assert c.extern_count == 0, c.source
    for out, ref in zip(c(x, b), f(x, b)):
        _bits_equal(out, ref)


def test_int32_and_float16_are_converted_around_a_scan_in_c():
    """torch.cumsum of int32 is int64, of float16 accumulates in float32 (Note [float16
    accumulates in float32]): the graph converts, and the scan is C's (float16's
    conversions stay NumPy externs: float16 is not generated)."""
    x = torch.from_numpy(np.arange(54, dtype=np.int32).reshape(6, 9) * 40_000_000)
    f = lambda x: torch.cumsum(x, 1)
    c = compiled(f, x)
    assert c.extern_count == 0 and "Note [Scans in C]" in c.source
    _bits_equal(c(x)[0], f(x))
    h = _data((6, 9), np.float32).to(torch.float16)
    c = compiled(f, h)
    assert "Note [Scans in C]" in c.source and c.extern_count == 2
    _bits_equal(c(h)[0], f(h))
