"""Streaming stores of the inductor backend (Note [Streaming stores], streaming.py): kernels
that store rows through a stack array and non-temporal stores give the same bits as
kernels storing in place and match NumPy, for row lengths whose bytes are not a multiple
of the vector width (unaligned heads and tails), several dtypes and 1 or 2 threads; and
the rule decides as documented (big stores stream; small ones and kernels bound by math
functions don't).

Skipped where there is no C compiler.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import numtorch as torch
import numtorch.nn.functional as F
from numtorch._inductor import build, compile_graph, config, streaming
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def compiled(f, *args, threshold):
    saved = config.cpp.stream_threshold
    config.cpp.stream_threshold = threshold
    try:
        return compile_graph(make_graph(f)(*args), list(args))
    finally:
        config.cpp.stream_threshold = saved


def streams(c):
    """Whether the compiled graph's kernels stream rows: straight from registers in
    vector chunks (Note [Streaming from registers]) or through a stack row (nt_stream)."""
    return re.search(r"NT_STREAM_ONE\(v\d+ \+ v\d+, v\d+\)", c.source) is not None or \
        "nt_stream(buf" in c.source


def _layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def _numpy_layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * w + b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [3, 37, 1024])     # shorter than a vector, ragged, aligned
def test_streamed_layer_norm_matches_in_place_and_numpy(dtype, n, same_bits_at_one_and_two_threads,
                                                        monkeypatch):
    monkeypatch.setattr(config.cpp, "parallel_threshold", 0)     # rows split among threads
    rng = np.random.default_rng(n)
    xs = rng.standard_normal((9, n)).astype(dtype)
    ws, bs = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    args = [torch.from_numpy(a) for a in (xs, ws, bs)]
    streamed = compiled(_layer_norm, *args, threshold=0)
    in_place = compiled(_layer_norm, *args, threshold=None)
    assert streams(streamed) and "nt_stream_fence();" in streamed.source
    assert "_part, b, " in streamed.source    # chunks on the pool, each ending in the fence
    assert not streams(in_place)          # 9 rows: far below the cache
    (out,) = same_bits_at_one_and_two_threads(streamed, *args)
    (ref,) = in_place(*args)
    assert out.numpy().tobytes() == ref.numpy().tobytes()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.numpy(), _numpy_layer_norm(xs, ws, bs), rtol=tol, atol=tol)


@pytest.mark.parametrize("n", [5, 64, 1000])
def test_rows_stream_from_registers_with_ragged_heads(n, same_bits_at_one_and_two_threads,
                                                      monkeypatch):
    """One inner dim: the row is computed and streamed in vector chunks, the head before
    the first aligned chunk and the tail stored in place (Note [Streaming from
    registers]). Rows of 5 and 1000 floats are not multiples of a vector, so their heads
    differ from row to row (20 and 4000 bytes apart). Same bits as in place."""
    monkeypatch.setattr(config.cpp, "parallel_threshold", 0)
    rng = np.random.default_rng(n)
    xs = rng.standard_normal((7, n)).astype(np.float32)
    x = torch.from_numpy(xs)

    def f(x):
        return (x - x.mean(-1, keepdim=True)) * 2
    streamed = compiled(f, x, threshold=0)
    in_place = compiled(f, x, threshold=None)
    assert re.search(r"NT_STREAM_ONE\(v\d+ \+ v\d+, v\d+\)", streamed.source)
    assert "nt_stream(buf" not in streamed.source and not streams(in_place)
    (out,) = same_bits_at_one_and_two_threads(streamed, x)
    assert out.numpy().tobytes() == in_place(x)[0].numpy().tobytes()
    ref = (xs - xs.astype(np.float64).mean(-1, keepdims=True)) * 2
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_rows_of_several_inner_dims_stream_through_a_stack_row():
    """Rows over two inner dims are computed into a stack row and copied out (nt_stream)."""
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((3, 5, 7)).astype(np.float64)
    x = torch.from_numpy(xs)

    def f(x):
        return x - x.sum((1, 2), keepdim=True)
    c = compiled(f, x, threshold=0)
    assert "nt_stream(buf" in c.source
    (out,) = c(x)
    assert out.numpy().tobytes() == compiled(f, x, threshold=None)(x)[0].numpy().tobytes()
    np.testing.assert_allclose(out.numpy(), xs - xs.sum((1, 2), keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float64])
def test_streamed_pointwise_rows_of_other_dtypes(dtype):
    rng = np.random.default_rng(2)
    xs = rng.integers(0, 50, (5, 29)).astype(dtype)
    x = torch.from_numpy(xs)
    c = compiled(lambda x: x * 3 + x.t().t(), x, threshold=0)
    assert streams(c)
    (out,) = c(x)
    np.testing.assert_array_equal(out.numpy(), xs * 3 + xs)


def test_streamed_rows_read_from_a_row_cache():
    """y = 3x + 1 is the sum's operand and is read again by the output loop, so it is kept
    in a row array (Note [Row cache]); the output rows stream from there."""
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((6, 130)).astype(np.float32)
    x = torch.from_numpy(xs)

    def f(x):
        y = x * 3 + 1
        return y / y.sum(-1, keepdim=True)
    c = compiled(f, x, threshold=0)
    assert c.kernel_count == 1 and streams(c) and "row0[" in c.source
    (out,) = c(x)
    y = xs * 3 + 1
    np.testing.assert_allclose(out.numpy(), y / y.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_math_bound_values_store_in_place_and_row_cached_ones_stream():
    """A stored value whose own computation calls a math function per element is bound by
    arithmetic, so it stores in place even when its stores are large: the GELU*sigmoid+tanh
    mix (erf, exp and tanh in the stored loop). Softmax and log_softmax stream: softmax's
    output loop reads the exp back from the row cache and divides, log_softmax's only
    subtracts (the log of the row sum is constant along the row)."""
    x = torch.randn(4, 64)
    xs = x.numpy()
    c = compiled(lambda x: F.gelu(x) * torch.sigmoid(x) + x.tanh(), x, threshold=0)
    assert not streams(c)
    for f, cached in ((lambda x: torch.softmax(x, -1), True),
                      (lambda x: torch.log_softmax(x, -1), False)):    # x - max - log(sum)
        c = compiled(f, x, threshold=0)
        assert c.kernel_count == 1 and streams(c) and ("row0[" in c.source) == cached
        np.testing.assert_allclose(c(x)[0].numpy(), f(x).numpy(), rtol=1e-6, atol=1e-6)
    # a math function of a value constant along the row (the log1p of the row sum) does
    # not count
    c = compiled(lambda x: x / x.abs().sum(-1, keepdim=True).log1p(), x, threshold=0)
    assert streams(c) and "log1p(" in c.source
    np.testing.assert_allclose(c(x)[0].numpy(), xs / np.log1p(np.abs(xs).sum(-1, keepdims=True)),
                               rtol=1e-6)


def test_default_threshold_is_a_quarter_of_the_last_level_cache():
    assert config.cpp.stream_threshold is None
    llc = streaming.last_level_cache()
    assert llc >= 1 << 16
    assert streaming.stream_threshold() == llc // 4
