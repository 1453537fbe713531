"""gather and scatter_add run in the graph's library (Note [Index externs in C], gather.py).

Each is checked against a Python loop over the index (an independent reference; for
scatter_add, ``np.add.at`` for the bits, which eager runs), that it really ran in C (no
extern left), that an index out of range raises eager's IndexError (Note [Faults in
segments], launcher.py) and leaves the graph usable, and that the cases it does not plan
stay NumPy externs with eager's results. Skipped, not failed, without a C compiler.
"""
from __future__ import annotations

import itertools

import numpy as np

import pytest

import numtorch as torch
from numtorch._inductor import build, compile_graph
from numtorch._prims.indexing import gather, scatter_add
from numtorch.func import make_graph

needs_cc = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")

CASES = [  # x shape, dim, index size along dim
    ((128, 10), 1, 1),           # cross entropy's target
    ((128, 10), -1, 3),
    ((6, 5, 4), 1, 7),           # more indices than the dimension has
    ((6, 5, 4), 0, 2),
    ((6, 5, 4), 2, 4),
    ((9,), 0, 5),
]


def _loop_gather(x, index, dim):
    out = np.empty(index.shape, x.dtype)
    for pos in itertools.product(*map(range, index.shape)):
        src = list(pos)
        src[dim] = index[pos]
        out[pos] = x[tuple(src)]
    return out


def _index(rng, xs, dim, n):
    shape = list(xs)
    shape[dim] = n
    return rng.integers(-xs[dim], xs[dim], shape)       # negative ones count from the end


@needs_cc
@pytest.mark.parametrize("xs, dim, n", CASES)
@pytest.mark.parametrize("dtype, index_dtype", [("float32", "int64"), ("float64", "int32"),
                                                ("int32", "int64")])
def test_gather_in_c_matches_a_loop(xs, dim, n, dtype, index_dtype):
    rng = np.random.default_rng(len(xs) + n)
    xa = (rng.standard_normal(xs) * 100).astype(dtype)
    ia = _index(rng, xs, dim % len(xs), n).astype(index_dtype)
    c = compile_graph(make_graph(lambda x, i: gather.bind(x * 2, i, dim=dim) + 1)(
        torch.tensor(xa), torch.tensor(ia)))
    assert c.extern_count == 0 and c.python_code.count("_seg(") == 1, c.python_code
    out = c(torch.tensor(xa), torch.tensor(ia))[0].numpy()
    want = _loop_gather(xa * 2, ia, dim % len(xs)) + 1
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)


@needs_cc
@pytest.mark.parametrize("xs, dim, n", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scatter_add_in_c_has_np_add_at_bits(xs, dim, n, dtype):
    """Repeated indices add in index order, one rounding each, as np.add.at does."""
    rng = np.random.default_rng(3 * len(xs) + n)
    d = dim % len(xs)
    xa = rng.standard_normal(xs).astype(dtype)
    ia = _index(rng, xs, d, n)
    sa = (rng.standard_normal(ia.shape) * 1e3).astype(dtype)
    c = compile_graph(make_graph(lambda x, i, s: scatter_add.bind(x + 0, i, s * 1, dim=dim))(
        torch.tensor(xa), torch.tensor(ia), torch.tensor(sa)))
    assert c.extern_count == 0, c.python_code
    out = c(torch.tensor(xa), torch.tensor(ia), torch.tensor(sa))[0].numpy()
    want = xa.copy()
    idx = list(np.indices(ia.shape, sparse=True))
    idx[d] = ia
    np.add.at(want, tuple(idx), sa)
    assert out.tobytes() == want.tobytes()
    # and against float64 sums of a loop (independent of NumPy's ufunc)
    ref = xa.astype(np.float64)
    for pos in itertools.product(*map(range, ia.shape)):
        dst = list(pos)
        dst[d] = ia[pos]
        ref[tuple(dst)] += sa[pos]
    np.testing.assert_allclose(out, ref, rtol=1e-4 if dtype == "float32" else 1e-12, atol=1e-3)


@needs_cc
@pytest.mark.parametrize("prim", ["gather", "scatter_add"])
def test_an_index_out_of_range_raises_eagers_error(prim):
    x = torch.randn(4, 5)
    good = torch.tensor(np.array([[0], [1], [-5], [4]]))
    bad = torch.tensor(np.array([[0], [7], [-6], [4]]))     # 7 is the first bad one
    src = torch.randn(4, 1)
    if prim == "gather":
        f = lambda x, i: gather.bind(x * 1, i, dim=1) * 2           # noqa: E731
        args = (x,)
    else:
        f = lambda x, i, s: scatter_add.bind(x * 1, i, s * 1, dim=1) * 2   # noqa: E731
        args = (x, src)
    c = compile_graph(make_graph(lambda *a: f(*a))(*args[:1], good, *args[1:]))
    assert c.extern_count == 0, c.python_code
    with pytest.raises(IndexError) as eager:
        f(*args[:1], bad, *args[1:])
    with pytest.raises(IndexError) as compiled:
        c(*args[:1], bad, *args[1:])
    assert str(compiled.value) == str(eager.value) == \
        f"{prim}: index 7 is out of bounds for dimension with size 5"
    # the fault is cleared: the next call computes
    np.testing.assert_array_equal(c(*args[:1], good, *args[1:])[0].numpy(),
                                  f(*args[:1], good, *args[1:]).numpy())


@needs_cc
def test_unplanned_cases_stay_numpy_externs():
    """A float16 gather (no C type for it); an integer scatter_add (C's signed overflow is
    undefined, NumPy's wraps): NumPy externs, eager's results."""
    x = torch.tensor(np.arange(20.0, dtype=np.float16).reshape(4, 5))
    i = torch.tensor(np.array([[4, 0], [1, 1], [2, 3], [0, 0]]))
    c = compile_graph(make_graph(lambda x, i: gather.bind(x, i, dim=1))(x, i))
    assert c.extern_count == 1
    np.testing.assert_array_equal(c(x, i)[0].numpy(),
                                  np.array([[4, 0], [6, 6], [12, 13], [15, 15]], np.float16))
    xi = torch.tensor(np.full((2, 3), np.iinfo(np.int32).max, np.int32))
    ii = torch.tensor(np.array([[0, 0, 2], [1, 1, 1]]))
    si = torch.tensor(np.ones((2, 3), np.int32))
    c = compile_graph(make_graph(lambda x, i, s: scatter_add.bind(x, i, s, dim=1))(xi, ii, si))
    assert c.extern_count == 1
    np.testing.assert_array_equal(c(xi, ii, si)[0].numpy(),
                                  scatter_add.bind(xi, ii, si, dim=1).numpy())
