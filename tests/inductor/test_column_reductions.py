"""Reductions that keep their operand's last dim (Note [Column reductions], codegen.py)
against NumPy: column blocks of full, ragged and single width, size-0 and size-1 dims,
reductions over several leading or a middle axis, non-contiguous operands, max/min with
NaN, products, integers, sums of products, kernels fusing a second reduction and pointwise
values after the first, and the same bits at 1 and 2 threads.

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


def _column_form(c):
    """Whether the compiled graph's C runs a column block (its lanes are ``ol``)."""
    return "for (int64_t ol = 0; ol < ow; ol++)" in c.source


def _within_an_ulp(out, exact):
    """float32 sums accumulated in double round once: within one ulp of the exact sum."""
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert np.all(np.abs(out.astype(np.float64) - exact) <= ulp), np.abs(out - exact).max()


@pytest.mark.parametrize("shape", [(128, 512), (130, 100), (33, 64), (128, 10), (5, 2),
                                   (1, 70), (1000, 3)])
def test_column_sum_matches_numpy(shape):
    """64-wide blocks, a ragged last block (100 = 64 + 36), one block narrower than 64,
    a single row, many rows of few columns."""
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    xs = rng.standard_normal(shape).astype(np.float32)
    x = torch.from_numpy(xs)
    c = compiled(lambda x: x.sum(0), x)
    assert _column_form(c) and "reduce_sum" in c.source
    (out,) = c(x)
    assert out.shape == (shape[1],) and out.dtype == torch.float32
    _within_an_ulp(out.numpy(), xs.astype(np.float64).sum(0))


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0), (70, 1)])
def test_column_sum_of_size_0_and_size_1_dims(shape):
    xs = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x = torch.from_numpy(xs)
    c = compiled(lambda x: (x.sum(0), x.amax(0) if shape[0] else x.sum(0)), x)
    for out, ref in zip(c(x), (xs.sum(0), xs.max(0) if shape[0] else xs.sum(0))):
        np.testing.assert_array_equal(out.numpy(), ref)


def test_leading_and_middle_axes_and_non_contiguous_operands():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 6, 70)).astype(np.float32)
    t = rng.standard_normal((90, 128)).astype(np.float32)     # transposed below: strided rows
    x, y = torch.from_numpy(a), torch.from_numpy(t)
    c = compiled(lambda x, y: (x.sum((0, 1)), x.sum(1), y.t().sum(0), x[:, ::2, 1:].sum(0)), x, y)
    assert _column_form(c)
    outs = [o.numpy() for o in c(x, y)]
    refs = [a.astype(np.float64).sum((0, 1)), a.astype(np.float64).sum(1),
            t.T.astype(np.float64).sum(0), a[:, ::2, 1:].astype(np.float64).sum(0)]
    for out, ref in zip(outs, refs):
        assert out.shape == ref.shape
        _within_an_ulp(out, ref)


def test_max_min_prod_and_integer_columns():
    rng = np.random.default_rng(8)
    xs = rng.standard_normal((37, 100)).astype(np.float32)
    xs[5, 3] = np.nan                                      # NaN wins, as np.max
    xs[:, 70] = -np.inf
    ps = rng.uniform(0.9, 1.1, (20, 100))
    ks = rng.integers(-1000, 1000, (50, 100))
    x, p, k = torch.from_numpy(xs), torch.from_numpy(ps), torch.from_numpy(ks)
    c = compiled(lambda x, p, k: (x.amax(0), x.amin(0), p.prod(0), k.sum(0)), x, p, k)
    assert _column_form(c)
    mx, mn, pr, ks_sum = (o.numpy() for o in c(x, p, k))
    np.testing.assert_array_equal(mx, xs.max(0))
    np.testing.assert_array_equal(mn, xs.min(0))
    np.testing.assert_allclose(pr, ps.prod(0), rtol=1e-14)
    np.testing.assert_array_equal(ks_sum, ks.sum(0))
    assert ks_sum.dtype == np.int64


def test_sum_of_products_and_fused_second_reduction():
    """A column sum of products (fma) and batch norm's statistics: the variance's kernel
    reads the mean (a reduction of the same kernel) at its lane, and stores a pointwise
    value of the column shape."""
    rng = np.random.default_rng(9)
    xs, ys = rng.standard_normal((128, 300)), rng.standard_normal((128, 300))
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)

    def f(x, y):
        mean = x.sum(0) / x.shape[0]
        var = ((x - mean) * (x - mean)).sum(0) / x.shape[0]
        return (x * y).sum(0), mean, var, torch.rsqrt(var + 1e-5)
    c = compiled(f, x, y)
    assert _column_form(c) and "fma(" in c.source and c.kernel_count == 1
    dot, mean, var, inv = (o.numpy() for o in c(x, y))
    np.testing.assert_allclose(dot, (xs * ys).sum(0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean, xs.mean(0), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(var, xs.var(0), rtol=1e-12)
    np.testing.assert_allclose(inv, 1 / np.sqrt(xs.var(0) + 1e-5), rtol=1e-12)


def test_relu_backward_bias_gradient():
    """The MLP backward's shape: a masked gradient stored for a product, then its sum over
    the batch (the bias gradient)."""
    rng = np.random.default_rng(10)
    hs = np.maximum(rng.standard_normal((128, 512)), 0).astype(np.float32)
    gs = rng.standard_normal((128, 512)).astype(np.float32)
    h, g = torch.from_numpy(hs), torch.from_numpy(gs)

    def f(h, g):
        d = torch.where(h <= 0, torch.zeros(()), g)
        return d, d.sum(0)
    c = compiled(f, h, g)
    d, db = (o.numpy() for o in c(h, g))
    ref = np.where(hs <= 0, np.float32(0), gs)
    np.testing.assert_array_equal(d, ref)
    _within_an_ulp(db, ref.astype(np.float64).sum(0))


def test_column_blocks_same_bits_at_one_and_two_threads(same_bits_at_one_and_two_threads):
    """Large enough to run the blocks on two threads (Note [Column reductions])."""
    rng = np.random.default_rng(11)
    x = torch.from_numpy(rng.standard_normal((600, 1000)).astype(np.float32))
    c = compiled(lambda x: (x.sum(0), (x * x).sum(0), x.amax(0)), x)
    assert "_part, b, " in c.source and _column_form(c)       # chunks on the pool
    same_bits_at_one_and_two_threads(c, x)
