"""Streaming stores of the inductor backend (Note [Streaming stores], codegen.py): kernels
that store rows through a stack array and non-temporal stores give the same bits as
kernels storing in place and match NumPy, for row lengths whose bytes are not a multiple
of the vector width (unaligned heads and tails), several dtypes and 1 or 2 threads; and
the rule decides as documented (big stores stream; small ones and kernels bound by math
functions don't).

Skipped where there is no C compiler.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
import numtorch.nn.functional as F
from numtorch._inductor import build, codegen, compile_graph, config
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def compiled(f, *args, threshold):
    saved = config.cpp.stream_threshold
    config.cpp.stream_threshold = threshold
    try:
        return compile_graph(make_graph(f)(*args), list(args))
    finally:
        config.cpp.stream_threshold = saved


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
    assert "nt_stream(buf" in streamed.source and "nt_stream_fence();" in streamed.source
    assert "#pragma omp for schedule(static) nowait" in streamed.source
    assert "nt_stream(buf" not in in_place.source          # 9 rows: far below the cache
    (out,) = same_bits_at_one_and_two_threads(streamed, *args)
    (ref,) = in_place(*args)
    assert out.numpy().tobytes() == ref.numpy().tobytes()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.numpy(), _numpy_layer_norm(xs, ws, bs), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float64])
def test_streamed_pointwise_rows_of_other_dtypes(dtype):
    rng = np.random.default_rng(2)
    xs = rng.integers(0, 50, (5, 29)).astype(dtype)
    x = torch.from_numpy(xs)
    c = compiled(lambda x: x * 3 + x.t().t(), x, threshold=0)
    assert "nt_stream(buf" in c.source
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
    assert c.kernel_count == 1 and "nt_stream(buf" in c.source and "row0[" in c.source
    (out,) = c(x)
    y = xs * 3 + 1
    np.testing.assert_allclose(out.numpy(), y / y.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_math_bound_kernels_store_in_place():
    """A kernel calling a math function per element anywhere is bound by arithmetic, so it
    stores in place even when its stores are large: the GELU*sigmoid+tanh mix (erf, exp
    and tanh in the stored loop), softmax and log_softmax (exp in the sum loop; the
    output loop only divides or subtracts)."""
    x = torch.randn(4, 64)
    xs = x.numpy()
    c = compiled(lambda x: F.gelu(x) * torch.sigmoid(x) + x.tanh(), x, threshold=0)
    assert "nt_stream(buf" not in c.source
    for f in (lambda x: torch.softmax(x, -1), lambda x: torch.log_softmax(x, -1)):
        c = compiled(f, x, threshold=0)
        assert c.kernel_count == 1 and "nt_stream(buf" not in c.source
        np.testing.assert_allclose(c(x)[0].numpy(), f(x).numpy(), rtol=1e-6, atol=1e-6)
    # a math function of a value constant along the row (the log1p of the row sum) does
    # not count
    c = compiled(lambda x: x / x.abs().sum(-1, keepdim=True).log1p(), x, threshold=0)
    assert "nt_stream(buf" in c.source and "log1p(" in c.source
    np.testing.assert_allclose(c(x)[0].numpy(), xs / np.log1p(np.abs(xs).sum(-1, keepdims=True)),
                               rtol=1e-6)


def test_default_threshold_is_a_quarter_of_the_last_level_cache():
    assert config.cpp.stream_threshold is None
    llc = codegen.last_level_cache()
    assert llc >= 1 << 16
    assert codegen.stream_threshold() == llc // 4
