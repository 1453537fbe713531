"""Reduction kernels of the inductor backend against NumPy references: sums of products
with fma (Note [Sums of products]), float32 sums in float blocks (Note [Float32 blocks])
and lane accumulators (Note [Lane accumulators]), at sizes that are and are not multiples
of the lane counts, size-1 and non-contiguous inputs, and the same bits at 1 and 2 threads.

Skipped where there is no C compiler.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
import numtorch.nn.functional as F
from numtorch._inductor import build, compile_graph
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def compiled(f, *args):
    return compile_graph(make_graph(f)(*args), list(args))


def faq(x, y):
    """The FAQ's sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1)) on tensors."""
    return (x[:, :, None] * y[:, None, :]).sum((-2, -1))


def _exact_faq(x, y):
    x, y = x.astype(np.longdouble), y.astype(np.longdouble)
    return (x[:, :, None] * y[:, None, :]).sum((-2, -1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [64, 33, 1])        # lanes (64 = 2 x 32), no lanes, size 1
def test_sum_of_products_uses_fma_and_matches_numpy(dtype, n):
    rng = np.random.default_rng(n)
    xs, ys = rng.standard_normal((37, n)).astype(dtype), rng.standard_normal((37, n)).astype(dtype)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    c = compiled(faq, x, y)
    assert c.kernel_count == 1
    assert "fma(" in c.source, c.source
    (out,) = c(x, y)
    assert out.dtype == x.dtype
    exact = _exact_faq(xs, ys)
    # the error bound of any summation order: a few roundings of sum |x_j y_k|
    scale = (np.abs(xs).astype(np.longdouble).sum(1) * np.abs(ys).sum(1))
    eps = np.finfo(dtype).eps
    assert np.all(np.abs(out.numpy() - exact) <= 4 * eps * scale + np.finfo(dtype).tiny)


def test_sum_of_products_of_non_contiguous_and_broadcast_inputs():
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((64, 40))               # transposed below: (40, 64), strided
    ys = rng.standard_normal((64,))                  # broadcast over rows
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    f = lambda x, y: (x.t() * y).sum(-1)
    c = compiled(f, x, y)
    assert "fma(" in c.source
    np.testing.assert_allclose(c(x, y)[0].numpy(), xs.T @ ys, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [64, 33])            # the lane form and the simd reduction
def test_fused_sum_of_products_leaves_no_unused_product(n):
    """The printed C of a sum of products declares no local it never reads (the product
    beside each fma, issue #8): every ``vN`` declared is used again."""
    import re
    x = torch.randn(8, n)
    c = compiled(lambda x: ((x * x).sum(-1), faq(x, x), F.layer_norm(x, (n,))), x)
    assert c.source.count("fma(") >= 2
    for name in re.findall(r"\b(?:float|double) (v\d+) = ", c.source):
        assert len(re.findall(rf"\b{name}\b", c.source)) >= 2, name


def test_integer_sum_of_products_stays_exact():
    rng = np.random.default_rng(2)
    xs, ys = rng.integers(-1000, 1000, (9, 64)), rng.integers(-1000, 1000, (9, 64))
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    c = compiled(faq, x, y)
    assert "fma(" not in c.source
    np.testing.assert_array_equal(c(x, y)[0].numpy(), (xs[:, :, None] * ys[:, None, :]).sum((-2, -1)))


@pytest.mark.parametrize("n", [1000, 4096, 1 << 20, 33, 1])
def test_float32_sum_in_blocks_is_as_accurate_as_numpy(n):
    """Note [Float32 blocks]: 1000 ends in a partial block, 1 << 20 is 2048 blocks (a plain
    float accumulator would be off by about 1% there), 33 and 1 have no lanes."""
    rng = np.random.default_rng(n)
    xs = (0.1 + 0.01 * rng.standard_normal((2, n))).astype(np.float32)
    x = torch.from_numpy(xs)
    c = compiled(lambda x: x.sum(-1), x)
    assert ("float v" in c.source and "[8]" in c.source) == (n == 1000)   # float lanes of 8
    (out,) = c(x)
    exact = xs.astype(np.float64).sum(-1)
    numpy_err = np.abs(xs.sum(-1).astype(np.float64) - exact)
    ours = np.abs(out.numpy().astype(np.float64) - exact)
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert np.all(ours <= np.maximum(numpy_err, ulp)), (ours, numpy_err)


@pytest.mark.parametrize("n", [1024, 1000, 37])
def test_softmax_and_layer_norm_rows(n):
    """The benchmark kernels at lane, partial-block and odd widths, and a non-contiguous input."""
    torch_ref = pytest.importorskip("torch")
    rng = np.random.default_rng(n)
    xs = rng.standard_normal((n + 3, 16)).astype(np.float32).T    # (16, n + 3) strided
    xs = xs[:, :n]
    ws, bs = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, w, b = torch.from_numpy(xs), torch.from_numpy(ws), torch.from_numpy(bs)
    soft_c = compiled(lambda x: torch.softmax(x, -1), x)
    norm_c = compiled(lambda x, w, b: F.layer_norm(x, (n,), w, b), x, w, b)
    assert soft_c.kernel_count == 1 and norm_c.kernel_count == 1
    soft, norm = soft_c(x)[0].numpy(), norm_c(x, w, b)[0].numpy()
    rx, rw, rb = (torch_ref.from_numpy(np.ascontiguousarray(a)) for a in (xs, ws, bs))
    np.testing.assert_allclose(soft, torch_ref.softmax(rx, -1).numpy(), rtol=2e-6, atol=1e-9)
    np.testing.assert_allclose(norm, torch_ref.nn.functional.layer_norm(rx, (n,), rw, rb).numpy(),
                               rtol=1e-5, atol=1e-5)


def test_blocked_and_fused_sums_same_bits_at_one_and_two_threads(
        same_bits_at_one_and_two_threads):
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.standard_normal((512, 1000)).astype(np.float32))
    y = torch.from_numpy(rng.standard_normal((512, 64)))
    f = lambda x, y: (x.sum(-1), (x * x).sum(-1), faq(y, y))
    same_bits_at_one_and_two_threads(compiled(f, x, y), x, y)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
@pytest.mark.parametrize("n", [256, 40])            # 32 lanes added pairwise; 8 lanes
def test_lane_products_match_numpy(dtype, n):
    """Note [Lane accumulators]: the lanes of a product combine by multiplication too."""
    rng = np.random.default_rng(n)
    xs = (rng.uniform(0.9, 1.1, (3, n)) if dtype == np.float64 else
          rng.choice([-1, 1, 1, 2], (3, n))).astype(dtype)
    x = torch.from_numpy(xs)
    c = compiled(lambda x: x.prod(-1), x)
    assert "*= " in c.source and ("+ 16]" if n == 256 else "+ 4]") in c.source, c.source
    np.testing.assert_allclose(c(x)[0].numpy(), xs.prod(-1), rtol=1e-13)


def test_one_element_operands_are_read_at_entry():
    """Note [One-element reads at entry]: cross entropy's where(isinf(max), zero, max) with
    a 0-d zero input, on rows of 10: the zero is one local read before the loops, and the
    log-softmax matches NumPy (infinite rows included)."""
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((128, 10)).astype(np.float32)
    xs[3] = -np.inf                                  # max is -inf: the select takes the zero
    zero = np.zeros((), np.float32)

    def f(x, z):
        m = x.amax(-1, keepdim=True)
        m = torch.where(torch.isinf(m), z, m)
        e = torch.exp(x - m)
        return x - (torch.log(e.sum(-1, keepdim=True)) + m), e
    x, z = torch.from_numpy(xs), torch.from_numpy(zero)
    c = compiled(f, x, z)
    import re
    (buf,) = set(re.findall(r"const float sv\d+ = (buf\d+)\[0\];", c.source))
    assert c.source.count(f"{buf}[") == 1          # read at the entry only
    lp, e = (o.numpy() for o in c(x, z))
    m = xs.max(-1, keepdims=True)
    m = np.where(np.isinf(m), np.float32(0), m)
    ref_e = np.exp(xs - m)
    np.testing.assert_allclose(e, ref_e, rtol=2e-7)
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = xs - (np.log(ref_e.sum(-1, keepdims=True)) + m)
    np.testing.assert_allclose(lp, ref, rtol=1e-6, atol=1e-6)
    assert np.isnan(lp[3]).all() and np.isnan(ref[3]).all()


@pytest.mark.parametrize("n", [10, 1000])
def test_stored_values_are_read_back_not_recomputed(n, same_bits_at_one_and_two_threads,
                                                     monkeypatch):
    """Note [Stored values read back]: exp(x - max) stored as an output and summed in the
    same row is computed once per element; the stored values and the sum match NumPy and
    have the same bits at 1 and 2 threads (rows split on the pool)."""
    monkeypatch.setattr(torch._inductor.config.cpp, "parallel_threshold", 0)
    rng = np.random.default_rng(n)
    xs = rng.standard_normal((64, n)).astype(np.float32)

    def f(x):
        e = torch.exp(x - x.amax(-1, keepdim=True))
        return e, e.sum(-1), (e * 2).amax(-1)
    x = torch.from_numpy(xs)
    c = compiled(f, x)
    assert c.kernel_count == 1 and c.source.count(" = nt_exp(") == 1, c.source
    e, s, m = (o.numpy() for o in same_bits_at_one_and_two_threads(c, x))
    ref = np.exp(xs - xs.max(-1, keepdims=True))
    np.testing.assert_allclose(e, ref, rtol=2e-7)
    np.testing.assert_allclose(s, ref.astype(np.float64).sum(-1), rtol=1e-6)
    np.testing.assert_array_equal(m, (e * 2).max(-1))
