"""Large products call NumPy's BLAS from the segment (Note [BLAS calls in segments], gemm.py).

Each product is checked bit for bit against ``np.matmul`` (what eager and the NumPy extern
run) and against float64 einsum; that it ran in the segment (no extern, one segment call);
that the cases NumPy runs otherwise (a vector result: gemv) stay externs; and that a
library whose check product is wrong turns the feature off and still computes through
NumPy. Skipped, not failed, without a C compiler or without NumPy's ILP64 OpenBLAS. That
outputs handed back are fresh per call, on this path and on the extern's, is checked by
test_products.py's ``test_blas_temporaries_are_kept_and_outputs_fresh``.
"""
from __future__ import annotations

import ctypes

import numpy as np

import pytest

import numtorch as torch
from numtorch._core.primitive import bind
from numtorch._inductor import build, compile_graph, gemm
from numtorch._prims.contraction import dot_general
from numtorch.func import make_graph

pytestmark = [
    pytest.mark.skipif(build.compiler() is None, reason="no C compiler"),
    pytest.mark.skipif(gemm.blas_pointers() is None, reason="NumPy's BLAS is not ILP64 OpenBLAS"),
]


def _product(xc, yc):
    return lambda x, y: bind(dot_general, x, y, contracting=((xc,), (yc,)), batch=((), ()))


@pytest.mark.parametrize("xc, yc", [(1, 0), (1, 1), (0, 0), (0, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_have_np_matmul_bits(xc, yc, dtype):
    M, K, N = 96, 300, 70                     # above the C loops' MAX_WORK
    rng = np.random.default_rng(xc + 2 * yc)
    xa = rng.standard_normal((M, K) if xc == 1 else (K, M)).astype(dtype)
    ya = rng.standard_normal((K, N) if yc == 0 else (N, K)).astype(dtype)
    f = lambda x, y: torch.relu(_product(xc, yc)(x, y)) * 2      # noqa: E731
    c = compile_graph(make_graph(f)(torch.tensor(xa), torch.tensor(ya)))
    assert c.extern_count == 0 and c.python_code.count("_seg(") == 1, c.python_code
    assert ("nt_sgemm(" if dtype == "float32" else "nt_dgemm(") in c.source
    out = c(torch.tensor(xa), torch.tensor(ya))[0].numpy()
    a, b = (xa if xc == 1 else xa.T), (ya if yc == 0 else ya.T)
    assert out.tobytes() == (np.maximum(np.matmul(a, b), 0) * 2).tobytes()
    ref = np.maximum(np.einsum("mk,kn->mn", a.astype(np.float64), b.astype(np.float64)), 0) * 2
    np.testing.assert_allclose(out, ref, rtol=1e-4 if dtype == "float32" else 1e-12,
                               atol=1e-3 if dtype == "float32" else 1e-10)


def test_vector_results_and_other_dtypes_stay_numpy_externs():
    """NumPy runs gemv where a side of the result is 1: those stay np.matmul calls, as do
    integer products and the whole feature when ``config.cpp.blas_in_segments`` is off."""
    x = torch.randn(1, 2000)
    w = torch.randn(2000, 700)
    c = compile_graph(make_graph(lambda x, w: torch.relu(x @ w))(x, w))
    assert c.extern_count == 1, c.python_code
    np.testing.assert_array_equal(c(x, w)[0].numpy(), np.maximum(x.numpy() @ w.numpy(), 0))
    xi = torch.tensor(np.ones((200, 200), np.int64))
    c = compile_graph(make_graph(lambda a: a @ a)(xi))
    assert c.extern_count == 1, c.python_code


def test_a_wrong_check_turns_the_feature_off(monkeypatch, caplog):
    """Note [BLAS calls in segments]: pointers that do not compute (here a libc function
    that ignores its arguments) fail the load-time check; the graph is compiled again
    with the product as a NumPy extern, and the error is logged."""
    libc = ctypes.CDLL(None)
    noop = ctypes.cast(libc.sched_yield, ctypes.c_void_p).value
    monkeypatch.setattr(gemm, "_BLAS", {"pointers": (noop, noop)})
    x, w = torch.randn(128, 300), torch.randn(300, 256)
    c = compile_graph(make_graph(lambda x, w: torch.tanh(x @ w))(x, w))
    assert "off" in gemm._BLAS and c.extern_count == 1, c.python_code
    assert "wrong product" in caplog.text
    np.testing.assert_allclose(c(x, w)[0].numpy(), np.tanh(x.numpy() @ w.numpy()),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("xs, ys, contracting", [
    ((64, 784), (10, 128, 784), ((1,), (2,))),     # vmap's stacked weights: x @ W.T per model
    ((64, 10, 128), (64, 784), ((0,), (0,))),      # their gradient: contracted over the batch
    ((6, 7, 50), (50, 3, 4), ((2,), (0,))),
])
def test_products_of_more_dims_are_one_gemm_with_the_impls_bits(xs, ys, contracting):
    """One contracted dim at either end: the other dims fold into one GEMM, the call the
    primitive's impl makes (Note [One GEMM for a contraction])."""
    from numtorch._prims.contraction import _dot_impl
    rng = np.random.default_rng(len(xs) * 10 + len(ys))
    xa, ya = (rng.standard_normal(s).astype(np.float32) for s in (xs, ys))
    f = lambda x, y: bind(dot_general, x, y, contracting=contracting, batch=((), ())) * 3  # noqa: E731
    c = compile_graph(make_graph(f)(torch.tensor(xa), torch.tensor(ya)))
    assert c.extern_count == 0 and "nt_sgemm(" in c.source, c.python_code
    out = c(torch.tensor(xa), torch.tensor(ya))[0].numpy()
    assert out.tobytes() == (_dot_impl(xa, ya, contracting=contracting, batch=((), ())) * 3).tobytes()
    spec = {((1,), (2,)): "bk,mnk->bmn", ((0,), (0,)): "bmn,bk->mnk", ((2,), (0,)): "abk,kcd->abcd"}
    ref = np.einsum(spec[contracting], xa.astype(np.float64), ya.astype(np.float64)) * 3
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-3)
