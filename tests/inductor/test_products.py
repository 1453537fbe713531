"""Small matrix products run in the graph's library (Note [Small products in C], gemm.py).

Each product is checked against NumPy's einsum in float64 (an independent reference),
that it really ran in C (``product_count``), that its bits do not depend on the thread
count, and that outputs handed back are never overwritten by a later call. Skipped, not
failed, without a C compiler.
"""
from __future__ import annotations

import numpy as np

import pytest

import numtorch as torch
from numtorch._inductor import build, compile_graph, config
from numtorch._prims.contraction import dot_general
from numtorch.func import make_graph

needs_cc = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")

LETTERS = "abcdefgh"


def _einsum_spec(xs, ys, contracting, batch):
    """The einsum string of a dot_general (batch, x free, y free: JAX's order)."""
    (xc, yc), (xb, yb) = contracting, batch
    x, y = list(LETTERS[:len(xs)]), [None] * len(ys)
    for a, b in zip(xc + xb, yc + yb):
        y[b] = x[a]
    fresh = iter(LETTERS[len(xs):])
    y = [c or next(fresh) for c in y]
    out = [x[d] for d in xb] + [x[d] for d in range(len(xs)) if d not in xc + xb] + \
          [y[d] for d in range(len(ys)) if d not in yc + yb]
    return f"{''.join(x)},{''.join(y)}->{''.join(out)}"


CASES = [  # x shape, y shape, contracting, batch
    ((32, 10, 40), (32, 40, 40), ((2,), (1,)), ((0,), (0,))),     # bmm
    ((32, 10, 40), (32, 40, 40), ((2,), (2,)), ((0,), (0,))),     # x @ w.mT (packed)
    ((32, 10, 40), (32, 10, 40), ((1,), (1,)), ((0,), (0,))),     # x.mT @ y (weight grad)
    ((32, 40, 40), (32, 10, 40), ((1,), (2,)), ((0,), (0,))),     # 40x10 out: transposed tile
    ((32, 10, 40), (32, 40, 1), ((2,), (1,)), ((0,), (0,))),      # matrix-vector
    ((32, 10, 1), (32, 1, 40), ((2,), (1,)), ((0,), (0,))),       # outer products, K = 1
    ((32, 10, 40), (32, 10, 40), ((0, 1), (0, 1)), ((), ())),     # two contracted dims
    ((32, 10, 40), (40, 40), ((2,), (1,)), ((), ())),             # nn.Linear: x @ w.T
    ((7, 13), (13, 5), ((1,), (0,)), ((), ())),                   # odd sizes: tail blocks
    ((3, 5, 7, 2), (3, 5, 7, 4), ((2,), (2,)), ((0, 1), (0, 1))),  # two batch dims
    ((32, 1, 40), (32, 10, 40), ((2,), (2,)), ((0,), (0,))),      # vector x matrix: transposed
    ((32, 40, 1), (32, 10, 1), ((2,), (2,)), ((0,), (0,))),       # outer products, n < m
    ((300, 200), (200, 1), ((1,), (0,)), ((), ())),               # a long matrix-vector
]


def _product(contracting, batch):
    return lambda x, y: dot_general.bind(x, y, contracting=contracting, batch=batch)


@needs_cc
@pytest.mark.parametrize("xs, ys, contracting, batch", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_small_products_match_einsum(xs, ys, contracting, batch, dtype,
                                     same_bits_at_one_and_two_threads):
    rng = np.random.default_rng(len(xs) + sum(ys))
    xa, ya = (rng.standard_normal(s).astype(dtype) for s in (xs, ys))
    x, y = torch.tensor(xa), torch.tensor(ya)
    c = compile_graph(make_graph(_product(contracting, batch))(x, y))
    assert (c.product_count, c.extern_count) == (1, 0), c
    # a graph-level work threshold of 0 makes the batch loop parallel where there is one
    out = same_bits_at_one_and_two_threads(c, x, y)[0].numpy()
    ref = np.einsum(_einsum_spec(xs, ys, contracting, batch), xa.astype(np.float64),
                    ya.astype(np.float64))
    assert out.dtype == np.dtype(dtype) and out.shape == ref.shape
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * np.abs(ref).max())


def test_block_orientation():
    """Note [Register blocks]: (normal, packed) per product; no orientation packs where the
    other reads its operand in place; outer products store row-major."""
    from numtorch._inductor.gemm import _orientation
    # M, N, K, x's m stride, y's n stride
    assert _orientation(10, 1, 40, 40, 0) == (True, False)     # matrix-vector: no pack
    assert _orientation(1, 10, 40, 0, 40) == (False, False)    # vector-matrix: transposed
    assert _orientation(40, 10, 1, 1, 1) == (True, False)      # outer product, n < m
    assert _orientation(40, 10, 40, 1, 40) == (False, False)   # x.mT @ y.mT: x in place
    assert _orientation(10, 40, 40, 40, 40) == (True, True)    # x @ w.mT: packed w
    assert _orientation(40, 10, 40, 40, 40) == (False, True)   # 40x10 out: transposed tile


@needs_cc
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vector_blocks_sum_like_the_portable_loops(dtype, monkeypatch):
    """Note [Vector accumulators]: the AVX-512, AVX2 and portable blocks of a product run
    the same fused multiply-adds in the same order, so each gives the same bits (the
    portable one is what a machine without AVX2 and FMA runs; here each is forced with
    -mno-* flags, the last flags winning over -march=native)."""
    cases = CASES[:6] + CASES[10:12]
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(dtype) for xs, ys, _, _ in cases for s in (xs, ys)]

    def f(*ts):
        return tuple(_product(c, b)(ts[2 * k], ts[2 * k + 1])
                     for k, (_, _, c, b) in enumerate(cases))
    tensors = [torch.tensor(a) for a in arrays]
    results = {}
    for extra in ((), ("-mno-avx512f",), ("-mno-avx512f", "-mno-avx2", "-mno-fma")):
        monkeypatch.setattr(build, "FLAGS", build.FLAGS + extra)
        c = compile_graph(make_graph(f)(*tensors))
        assert (c.product_count, c.extern_count) == (len(cases), 0), c
        results[extra] = [t.numpy() for t in c(*tensors)]
    first, *others = results.values()
    for other in others:
        for a, b in zip(first, other):
            assert a.tobytes() == b.tobytes()
    for k, (xs, ys, contracting, batch) in enumerate(cases):
        ref = np.einsum(_einsum_spec(xs, ys, contracting, batch), *(a.astype(np.float64)
                        for a in arrays[2 * k:2 * k + 2]))
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(first[k], ref, rtol=tol, atol=tol * np.abs(ref).max())


@needs_cc
def test_products_between_kernels_and_fresh_outputs():
    """A product feeding kernels, kernels feeding a product, in one segment; the returned
    tensors are not overwritten by the next call (kept buffers are temporaries only)."""
    def f(x, w):
        h = torch.tanh(x @ w + 1)            # product, then a kernel
        return h @ w.T, (h * 2).sum(-1)      # a product of a kernel's output; a reduction
    x, w = torch.randn(16, 24), torch.randn(24, 24) * 0.2
    c = compile_graph(make_graph(f)(x, w))
    assert c.product_count == 2 and c.extern_count == 0, c
    assert c.python_code.count("_seg(") == 1, c.python_code
    first = c(x, w)
    saved = [t.numpy().copy() for t in first]
    x2 = torch.randn(16, 24)
    second = c(x2, w)
    for t, s in zip(first, saved):
        np.testing.assert_array_equal(t.numpy(), s)
    for got, want in zip(second, f(x2, w)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    assert not np.shares_memory(first[0].numpy(), second[0].numpy())


@needs_cc
def test_large_products_stay_blas_externs(monkeypatch):
    monkeypatch.setattr(config.cpp, "blas_in_segments", False)   # Note [BLAS calls in segments]
    x, w = torch.randn(128, 784), torch.randn(784, 512)     # the MLP step's first layer
    c = compile_graph(make_graph(lambda x, w: torch.relu(x @ w))(x, w))
    assert (c.product_count, c.extern_count) == (0, 1), c
    monkeypatch.setattr(config.cpp, "small_products", False)
    x, w = torch.randn(8, 8), torch.randn(8, 8)
    c = compile_graph(make_graph(lambda x, w: torch.relu(x @ w))(x, w))
    assert (c.product_count, c.extern_count) == (0, 1), c
    np.testing.assert_allclose(c(x, w)[0].numpy(), np.maximum(x.numpy() @ w.numpy(), 0),
                               rtol=1e-6)


@needs_cc
def test_integer_and_complex_products_stay_externs():
    for dtype in (torch.int64, torch.complex64):
        x = torch.ones(4, 4, dtype=dtype)
        c = compile_graph(make_graph(lambda a: a @ a)(x))
        assert c.product_count == 0 and c.extern_count == 1, c


@needs_cc
def test_batch_dims_that_are_not_one_stride_stay_externs():
    """y's batch dims 0 and 2 are not one strided dimension of its array: NumPy runs it."""
    xs, ys, contracting, batch = (3, 5, 7, 2), (3, 7, 5, 4), ((2,), (1,)), ((0, 1), (0, 2))
    xa, ya = np.random.default_rng(1).standard_normal(xs), np.random.default_rng(2).standard_normal(ys)
    x, y = torch.tensor(xa), torch.tensor(ya)
    c = compile_graph(make_graph(_product(contracting, batch))(x, y))
    assert (c.product_count, c.extern_count) == (0, 1), c
    np.testing.assert_allclose(c(x, y)[0].numpy(),
                               np.einsum(_einsum_spec(xs, ys, contracting, batch), xa, ya),
                               rtol=1e-12)


@needs_cc
@pytest.mark.parametrize("in_segments", [False, True], ids=["numpy-extern", "blas-in-segment"])
def test_blas_temporaries_are_kept_and_outputs_fresh(in_segments, monkeypatch):
    """Note [Extern outputs are kept] (runner.py): a BLAS product only kernels read writes
    a kept array (np.matmul out=, or the segment's own buffer when BLAS is called from the
    segment, Note [BLAS calls in segments]); products returned to the caller stay fresh per
    call."""
    if in_segments:
        from numtorch._inductor import gemm
        if gemm.blas_pointers() is None:
            pytest.skip("NumPy's BLAS is not ILP64 OpenBLAS")
    monkeypatch.setattr(config.cpp, "blas_in_segments", in_segments)

    def f(x, w, v):
        h = x @ w                          # temporary: kept
        return torch.relu(h) @ v, h.sum()  # the second product is an output: fresh
    x, w, v = torch.randn(128, 300), torch.randn(300, 256) * 0.1, torch.randn(256, 300) * 0.1
    c = compile_graph(make_graph(f)(x, w, v))
    if in_segments:    # both products and the kernels: one call of one segment
        assert c.extern_count == 0 and c.python_code.count("_seg(") == 1, c.python_code
    else:
        assert c.extern_count == 2 and c.python_code.count("out=") == 1, c.python_code
    first = c(x, w, v)
    saved = [t.numpy().copy() for t in first]
    x2 = torch.randn(128, 300)
    second = c(x2, w, v)
    for t, s in zip(first, saved):
        np.testing.assert_array_equal(t.numpy(), s)
    for got, want in zip(second, f(x2, w, v)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)
    assert not np.shares_memory(first[0].numpy(), second[0].numpy())
