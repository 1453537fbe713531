"""Layouts chosen at the graph level (numtorch/_inductor/layout.py): products in BLAS's
faster orientation and transposes moved into products.

Each rewritten graph is compiled twice, with ``layout_rewrites`` on and off, and the two
must give the same bits at 1 and 2 threads (kernels' and BLAS's): the Notes promise the
rewrite changes no bit. Each result is also checked against an independent float64
reference (NumPy einsum), and the rewritten graph's nodes say what was rewritten: the
product swapped, no transpose left, or (the declined cases) the transpose kept.
"""
from __future__ import annotations

import numpy as np

import pytest

import numtorch as torch
from numtorch._inductor import build, compile_graph, gemm
from numtorch._inductor.layout import choose_layouts
from numtorch._prims.contraction import dot_general
from numtorch.func import make_graph, vmap

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")
needs_blas = pytest.mark.skipif(gemm.blas_pointers() is None,
                                reason="NumPy's BLAS is not ILP64 OpenBLAS")


def _nodes(graph, name):
    """``graph``'s nodes of primitive ``name``; transposes only of values, not of the
    constants a kernel reads as literals."""
    from numtorch._core.ir import Var
    return [n for n in graph.nodes if n.prim.name == name and
            (name != "transpose" or isinstance(n.ins[0], Var))]


def _same_bits_on_and_off(graph, args, reference=None):
    """The graph compiled with and without the rewrites, called at 1 and 2 threads (the
    kernels' and BLAS's): every output has the same bits at each count, and those of
    ``reference()`` (eager's, computed at that count: OpenBLAS's bits depend on its thread
    count) where given. Returns the rewritten compile and its 2-thread outputs as arrays."""
    on = compile_graph(graph, options={"layout_rewrites": True})
    off = compile_graph(graph, options={"layout_rewrites": False})
    saved = torch.get_num_threads()
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            a, b = on(*args), off(*args)
            for u, v in zip(a, b):
                assert u.numpy().tobytes() == v.numpy().tobytes(), f"{n} threads"
            if reference is not None:
                for u, v in zip(a, reference()):
                    assert u.numpy().tobytes() == np.asarray(v).tobytes(), f"{n} threads"
    finally:
        torch.set_num_threads(saved)
    return on, [u.numpy() for u in a]


def _ensemble(E=4, B=16, K=300, H=64, O=10, seed=0):
    """vmap of a 2-layer MLP over E stacked models sharing the input (the compiled
    ensemble's shape, smaller): its graph, inputs and a float64 reference."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in
              ((E, H, K), (E, H), (E, O, H), (E, O), (B, K))]
    w1, b1, w2, b2, x = arrays
    f = vmap(lambda w1, b1, w2, b2, x: torch.relu(x @ w1.T + b1) @ w2.T + b2,
             in_dims=(0, 0, 0, 0, None))
    args = [torch.tensor(a) for a in arrays]
    d = [a.astype(np.float64) for a in arrays]
    h = np.maximum(np.einsum("bk,ehk->ebh", d[4], d[0]) + d[1][:, None, :], 0)
    ref = np.einsum("ebh,eoh->ebo", h, d[2]) + d[3][:, None, :]
    return make_graph(f)(*args), args, ref


@needs_blas
def test_ensemble_runs_without_transposes_and_with_the_same_bits():
    """Note [Products in BLAS's faster orientation] and [Transposes sink to products]:
    the first product is W @ x.T (operands swapped), the bias and ReLU run on its layout,
    the second product takes it as dimension numbers: no transpose is left."""
    graph, args, ref = _ensemble()
    new = choose_layouts(graph)
    assert not _nodes(new, "transpose"), new
    first = _nodes(new, "dot_general")[0]
    assert first.ins[0].shape == (4, 64, 300) and first.outs[0].shape == (4, 64, 16), new
    c, (out,) = _same_bits_on_and_off(graph, args)
    assert c.extern_count == 0, c.python_code
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@needs_blas
@pytest.mark.parametrize("M, N, K", [(16, 256, 300), (8, 4096, 64), (33, 700, 129),
                                     (64, 1280, 784), (16, 700, 129)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_swapped_products_have_np_matmul_bits(M, N, K, dtype):
    """``(x @ w.T).T`` runs as ``w @ x.T`` in float32, with the bits of eager's
    ``np.matmul(x, w.T).T``; float64 keeps its orientation, because OpenBLAS's dgemm sums
    some of these shapes (33 x 700 x 129, 16 x 700 x 129) in another order when swapped
    (Note [Products in BLAS's faster orientation])."""
    rng = np.random.default_rng(M + N + K)
    xa, wa = (rng.standard_normal(s).astype(dtype) for s in ((M, K), (N, K)))
    args = [torch.tensor(xa), torch.tensor(wa)]
    graph = make_graph(lambda x, w: (x @ w.T).T * 2)(*args)
    new = choose_layouts(graph)
    (d,) = _nodes(new, "dot_general")
    if dtype == "float32":
        assert d.outs[0].shape == (N, M) and not _nodes(new, "transpose"), new
    else:
        assert d.outs[0].shape == (M, N) and _nodes(new, "transpose"), new
    _, (out,) = _same_bits_on_and_off(graph, args, lambda: [np.matmul(xa, wa.T).T * 2])
    ref = np.einsum("mk,nk->nm", xa.astype(np.float64), wa.astype(np.float64)) * 2
    tol = 1e-4 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * np.abs(ref).max())


def test_declined_swaps():
    """No swap where BLAS was not measured faster (N < 4 M), where the product has another
    reader, or where the transpose leads with the first operand's dim."""
    x, w = torch.randn(64, 300), torch.randn(128, 300)
    for f in (lambda x, w: (x @ w.T).T * 2,                        # N = 2 M
              lambda x, w: ((x @ w.T).T * 2, x @ w.T)):            # a second reader
        new = choose_layouts(make_graph(f)(x, w))
        assert _nodes(new, "transpose") and _nodes(new, "dot_general")[0].ins[0].shape == (64, 300)
    x3 = torch.randn(8, 64, 300)                                  # (8, 64, 256): m leads
    w = torch.randn(256, 300)
    new = choose_layouts(make_graph(lambda x, w: (x @ w.T).transpose(1, 2) * 2)(x3, w))
    assert _nodes(new, "transpose") and _nodes(new, "dot_general")[0].ins[0].shape == (8, 64, 300)


def test_sinking_stops_where_it_cannot_pay():
    """Transposes of different permutations, or a transpose next to a value in its own
    layout, stay where they are; so does one whose product would leave the segment (its
    contracted dim would land inside the operand). The values stay exact."""
    rng = np.random.default_rng(3)
    a, b, c = (torch.tensor(rng.standard_normal(s).astype(np.float32))
               for s in ((6, 5, 7), (7, 6, 5), (5, 6, 7)))
    cases = [
        (lambda a, b: (a * 2).permute(1, 0, 2) + (b * 3).permute(2, 1, 0), (a, b)),
        (lambda a, c: (a * 2).permute(1, 0, 2) * c, (a, c)),
    ]
    for f, args in cases:
        graph = make_graph(f)(*args)
        new = choose_layouts(graph)
        assert len(_nodes(new, "transpose")) == len(_nodes(graph, "transpose")), new
        _same_bits_on_and_off(graph, args, lambda: [f(*args).numpy()])
    t, x = torch.randn(10, 64, 128), torch.randn(64, 300)
    f = lambda t, x: dot_general.bind(                      # noqa: E731
        (t * 2).permute(1, 0, 2), x, contracting=((0,), (0,)), batch=((), ()))
    graph = make_graph(f)(t, x)
    assert _nodes(choose_layouts(graph), "transpose")


def test_sunk_chains_reaching_outputs_and_permuted_broadcasts():
    """A pointwise chain read by a product and returned: the product takes the sunk
    value, the output is still in the user's layout (a transpose of it); a broadcast
    whose dims would come out of order is read through a transpose instead."""
    rng = np.random.default_rng(5)
    shapes = ((8, 600), (6, 40, 600), (6, 40), (8, 40), (6, 10, 40))
    args = [torch.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes]

    def h(x, w):
        h = dot_general.bind(x, w, contracting=((1,), (2,)), batch=((), ()))   # (8, 6, 40)
        return h.permute(1, 0, 2)                                              # (6, 8, 40)

    def both(a, w2):
        return a, dot_general.bind(a, w2, contracting=((2,), (2,)), batch=((0,), (0,)))

    def f(x, w, b, c, w2):              # b on dims (0, 2): (0, 1) of (6, 40, 8)
        return both(torch.relu(h(x, w) + b[:, None, :]), w2)

    def g(x, w, b, c, w2):              # c on dims (1, 2): (2, 1) of (6, 40, 8), out of order
        return both(torch.relu(h(x, w) + c) * 2, w2)

    for fn in (f, g):
        graph = make_graph(fn)(*args)
        new = choose_layouts(graph)
        first, second = _nodes(new, "dot_general")
        assert first.ins[0].shape == (6, 40, 600) and second.ins[0].shape == (6, 40, 8), new
        (made,) = [n for n in new.nodes if n.outs[0] is new.outputs[0]]
        assert made.prim.name == "transpose", new
        # eager's bits for the returned chain (the batched product's loops sum as BLAS's
        # kernel does, not with np.matmul's bits: Note [Small products in C])
        c, (a, p) = _same_bits_on_and_off(graph, args, lambda: [fn(*args)[0].numpy()])
        ref = np.einsum("ebh,eoh->ebo", a.astype(np.float64), args[4].numpy().astype(np.float64))
        np.testing.assert_allclose(p, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@needs_blas
@pytest.mark.parametrize("seed", range(4))
def test_transposes_taken_by_blas_give_eager_bits(seed):
    """A transposed operand of a BLAS product is passed as BLAS's transpose flag, as
    ``np.matmul`` passes eager's transposed view: eager's bits (Note [Transposes sink to
    products]; the compile without the rewrite, which writes the transposed copy out and
    calls BLAS without the flag, is no reference here: OpenBLAS may sum otherwise)."""
    rng = np.random.default_rng(seed)
    M, N, K = (int(n) for n in rng.integers(40, 300, size=3))
    xa, wa = (rng.standard_normal(s).astype(np.float32) for s in ((K, M), (K, N)))
    x, w = torch.tensor(xa), torch.tensor(wa)
    f = lambda x, w: ((x * 2).t() @ w) * 3                # noqa: E731
    graph = make_graph(f)(x, w)
    assert not _nodes(choose_layouts(graph), "transpose")
    c = compile_graph(graph)
    saved = torch.get_num_threads()
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            assert c(x, w)[0].numpy().tobytes() == f(x, w).numpy().tobytes(), f"{n} threads"
    finally:
        torch.set_num_threads(saved)
