"""The backend's graph passes (numtorch/_inductor/simplify.py): chains of movement nodes
fold into one, identities drop, and the compiled graph still equals eager.

Runs through the NumPy code where there is no C compiler (the pass is the same)."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._inductor import build, compile_graph, config
from numtorch._inductor.simplify import optimize, simplify_movement
from numtorch.func import make_graph
from numtorch.testing import assert_close


def _prims(graph):
    return [n.prim.name for n in graph.nodes]


CASES = {   # name: (function, input shape, primitives left after optimize)
    "transpose of a transpose is gone": (lambda x: x.t().t() * 2, (3, 4), ["mul"]),
    "three permutes are one": (lambda x: x.permute(1, 2, 0).permute(2, 0, 1).permute(0, 2, 1).exp(),
                               (2, 3, 4), ["transpose", "exp"]),
    "reshape chain is one": (lambda x: x.reshape(6, 4).reshape(2, 12).reshape(24).sin(),
                             (4, 6), ["reshape", "sin"]),
    "reshape back is gone": (lambda x: x.reshape(24).reshape(4, 6) + 1, (4, 6), ["add"]),
    "broadcast of a broadcast is one": (
        lambda x: x.reshape(1, 5).expand(3, 5).reshape(1, 3, 5).expand(2, 3, 5).cos(),
        (5,), ["broadcast_in_dim", "cos"]),
    "cast to the same dtype is gone": (lambda x: x.to(torch.float32).abs(), (4,), ["abs"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_movement_chains_fold(name):
    f, shape, left = CASES[name]
    x = torch.randn(*shape)
    g = make_graph(f)(x)
    printed = []
    opt = optimize(g, log=printed.append)
    assert sorted(_prims(opt)) == sorted(left), opt.python_code()
    assert len(printed) == 5 and "# before simplify_movement" in printed[0]
    assert_close(opt(x), g(x))
    assert_close(opt(x), (f(x),))
    c = compile_graph(g, options={"cpp.numpy_fallback": build.compiler() is None})
    assert_close(c(x), (f(x),))


def test_an_identity_output_stays_a_new_tensor():
    """Note [One movement per chain]: a graph output is never replaced by the input."""
    x = torch.randn(3, 4)
    g = make_graph(lambda x: x.t().t())(x)
    opt = simplify_movement(g)
    assert opt.outputs[0] is not opt.inputs[0]
    out = compile_graph(g, options={"cpp.numpy_fallback": True})(x)[0]
    assert out is not x and np.array_equal(out.numpy(), x.numpy())


def test_captured_tensors_are_read_at_call_time():
    """Note [Literal constants]: an in-place update of a captured tensor is seen by the
    next call (it is not baked in as a literal, though all its elements are equal)."""
    w = torch.full((4,), 2.0)
    x = torch.ones(4)
    f = lambda x: x * w + 1.5
    c = compile_graph(make_graph(f)(x), options={"cpp.numpy_fallback": build.compiler() is None})
    if c.kind == "c":
        assert "0x1.8" in c.source and "0x1.0000000000000p+1" not in c.source  # 1.5, not 2.0
    w.fill_(5.0)
    assert_close(c(x)[0], f(x))


def test_freezing_folds_constants():
    """Note [Folding captured tensors]: fold_constants runs only under config.freezing."""
    g = make_graph(lambda x: x + 1)(torch.ones(2))
    for freezing in (False, True):
        printed = []
        saved, config.freezing = config.freezing, freezing
        try:
            optimize(g, log=printed.append)
        finally:
            config.freezing = saved
        assert any("before fold_constants" in p for p in printed) == freezing


def test_cse_and_dce_run():
    x = torch.randn(5)
    g = make_graph(lambda x: (x.exp() + x.exp(), x.sin() * 0)[0])(x)
    assert _prims(optimize(g)) == ["exp", "add"]


def _edge_values(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(4096) * np.exp(rng.uniform(-60, 60, 4096))
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 1e-310, 3e38, -3e38, 1e200]
    with np.errstate(over="ignore"):
        return torch.tensor(np.concatenate([x, special]).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_literal_square_is_a_product_with_eagers_bits(dtype):
    """Note [Powers with a literal exponent]: `x ** 2` becomes `x * x`, bit-equal to eager
    (NumPy's power), on
    values across the range, zeros of both signs, infinities, NaN and subnormals."""
    f = lambda x: x ** 2 + 1
    x = _edge_values(dtype)
    g = make_graph(f)(x)
    assert "pow" not in _prims(optimize(g)) and "mul" in _prims(optimize(g))
    c = compile_graph(g, options={"cpp.numpy_fallback": build.compiler() is None})
    if c.kind == "c":
        assert "pow" not in c.source.split("*/")[-1]      # none in the code, past the graph comment
    bits = np.uint32 if dtype == np.float32 else np.uint64
    assert np.array_equal(c(x)[0].numpy().view(bits), f(x).numpy().view(bits))


def test_a_captured_exponent_stays_a_power():
    """Note [Powers with a literal exponent], Note [Literal constants]: a captured tensor of
    twos is read per call,
    so `x ** w` stays pow and sees the tensor's later values."""
    w = torch.full((4,), 2.0)
    x = torch.tensor([1.5, 2.0, 3.0, 0.5])
    f = lambda x: x ** w
    g = make_graph(f)(x)
    assert "pow" in _prims(optimize(g))
    c = compile_graph(g, options={"cpp.numpy_fallback": build.compiler() is None})
    assert_close(c(x)[0], f(x))
    w.fill_(3.0)
    assert_close(c(x)[0], x ** 3)


def test_which_literal_powers_become_products():
    """Note [Powers with a literal exponent]: which exponents are rewritten, per dtype."""
    def prims(f, dtype=torch.float32):
        return _prims(optimize(make_graph(f)(torch.rand(5, dtype=dtype))))
    for f in (lambda x: x ** 0.5, lambda x: x ** 2.5, lambda x: x ** 9, lambda x: x ** -9):
        assert "pow" in prims(f)
    assert "pow" in prims(lambda x: x ** 3, torch.float64)        # double products round twice
    assert "pow" not in prims(lambda x: x ** -1, torch.float64)
    assert "pow" not in prims(lambda x: x ** 3) and "convert_element_type" in prims(lambda x: x ** 3)
    ints = make_graph(lambda x: x ** 2)(torch.arange(5))
    assert_close(optimize(ints)(torch.arange(5))[0], torch.arange(5) ** 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_literal_reciprocal_is_a_division_with_eagers_bits(dtype):
    f = lambda x: x ** -1
    x = _edge_values(dtype)
    c = compile_graph(make_graph(f)(x), options={"cpp.numpy_fallback": build.compiler() is None})
    bits = np.uint32 if dtype == np.float32 else np.uint64
    assert np.array_equal(c(x)[0].numpy().view(bits), f(x).numpy().view(bits))


@pytest.mark.parametrize("n", [3, 4, 5, 8, -2, -3, -8])
def test_float32_integer_powers_are_correctly_rounded(n):
    """Note [Powers with a literal exponent]: float32 x ** n through float64 products is the
    correctly rounded power (checked exactly with rationals), within one ulp of eager's
    NumPy power, with C's pow on signed zeros, infinities and NaN."""
    from fractions import Fraction
    rng = np.random.default_rng(n + 10)
    lim = 30 / abs(n)                    # results well inside float32's normal range
    x = (rng.choice([-1.0, 1.0], 600) * 10.0 ** rng.uniform(-lim, lim, 600)).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0], np.float32)
    xt = torch.tensor(np.concatenate([x, special]))
    f = lambda x: x ** n
    c = compile_graph(make_graph(f)(xt), options={"cpp.numpy_fallback": build.compiler() is None})
    got = c(xt)[0].numpy()
    for xi, r in zip(x, got[:len(x)]):
        exact = Fraction(float(xi)) ** n
        below, above = np.nextafter(r, np.float32(-np.inf)), np.nextafter(r, np.float32(np.inf))
        # r is the nearest float32: the exact value lies within half the gap on each side
        assert Fraction(float(below)) + Fraction(float(r)) <= 2 * exact <= Fraction(float(r)) + Fraction(float(above)), (xi, n)
    with np.errstate(all="ignore"):
        ref = np.power(special, np.float32(n))
    assert np.array_equal(got[len(x):].view(np.uint32), ref.view(np.uint32))
    eager = f(xt).numpy()[:len(x)]
    assert np.all(np.abs(got[:len(x)].view(np.int32).astype(np.int64) - eager.view(np.int32)) <= 1)


def test_literals_of_the_graph_become_c_literals():
    """Note [Literal constants]: the 0-d tensors Python numbers become are the graph's own,
    so the kernel multiplies by a C literal instead of reading memory."""
    if build.compiler() is None:
        pytest.skip("no C compiler")
    x = torch.randn(8)
    g = make_graph(lambda x: x * 1.25 - 0.75)(x)
    assert all(c.literal for c in g.consts)
    c = compile_graph(g)
    body = c.source.split("*/")[-1]
    assert "0x1.4" in body and "0x1.8" in body        # 1.25 and 0.75 as hex literals
    assert_close(c(x)[0], x * 1.25 - 0.75)
