"""Symbolic sizes: make_graph(f, dynamic=True) traces shape-generic graphs.

Each graph is checked against eager numtorch on sizes other than the traced ones; guards
are checked by what they accept and reject, not by their text alone.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import numtorch as torch
from numtorch import nn
from numtorch._core.ir import Var
from numtorch._core.symbolic import ConstraintViolationError, ShapeGuardError, Sym
from numtorch.func import make_graph


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a.detach()), np.asarray(b.detach()), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [lambda x: torch.softmax(x, dim=1),
                                lambda x: torch.log_softmax(x, dim=-1),
                                lambda x: torch.softmax(x, dim=0)], ids=["softmax", "log_softmax", "dim0"])
def test_softmax_graph_is_shape_generic(fn):
    g = make_graph(fn, dynamic=True)(torch.randn(8, 5))
    assert "f32[s0, s1]" in str(g)
    assert g.shape_guards == ()
    for shape in [(3, 7), (8, 5), (20, 2)]:
        x = torch.randn(*shape)
        _close(g(x)[0], fn(x))


def test_mlp_loss_graph_runs_on_other_batch_sizes():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))

    def loss(x, y):
        out = model(x)
        return nn.functional.cross_entropy(out, y) + nn.functional.mse_loss(out, torch.zeros_like(out))

    x, y = torch.randn(8, 5), torch.randint(0, 3, (8,))
    g = make_graph(loss, dynamic=True)(x, y)
    # duck sizing: x's rows and y's length are one symbol; the features meet the weight
    assert g.inputs[0].type == "f32[s0, s1]" and g.inputs[1].type == "i64[s0]"
    assert [str(gd.expr) for gd in g.shape_guards] == ["Eq(s1, 5)"]
    assert "prims.full(shape=(), fill_value=3*s0" in str(g)   # mse_loss's mean divisor
    for n in (2, 3, 17, 64):
        x, y = torch.randn(n, 5), torch.randint(0, 3, (n,))
        _close(g(x, y)[0], loss(x, y))


def test_sizes_zero_and_one_specialise():
    g = make_graph(lambda x: x.sum(0), dynamic=True)(torch.randn(1, 4, 0))
    assert g.inputs[0].shape[0] == 1 and g.inputs[0].shape[2] == 0
    assert isinstance(g.inputs[0].shape[1], Sym)
    with pytest.raises(ShapeGuardError, match="sizes 0 and 1 specialise"):
        g(torch.randn(1, 1, 0))


def test_duck_sizing_shares_symbols_and_checks_them():
    g = make_graph(lambda a, b: a * 2, dynamic=True)(torch.randn(4, 3), torch.randn(4))
    assert g.symbols == {"s0": [(0, 0), (1, 0)], "s1": [(0, 1)]}
    g(torch.randn(6, 3), torch.randn(6))
    with pytest.raises(ShapeGuardError, match="duck sizing"):
        g(torch.randn(6, 3), torch.randn(7))


def test_broadcasting_two_symbols_records_an_equality_guard():
    f = lambda a, b: a + b   # noqa: E731
    g = make_graph(f, dynamic=True, duck_shape=False)(torch.randn(4, 3), torch.randn(4, 3))
    assert g.inputs[0].type == "f32[s0, s1]" and g.inputs[1].type == "f32[s2, s3]"
    assert sorted(str(gd).split("  #")[0] for gd in g.shape_guards) == ["s0 == s2", "s1 == s3"]
    assert "# guard: s0 == s2" in str(g)
    a, b = torch.randn(6, 5), torch.randn(6, 5)
    _close(g(a, b)[0], f(a, b))
    assert g.check_shape_guards(a, b) == {"s0": 6, "s1": 5, "s2": 6, "s3": 5}
    with pytest.raises(ShapeGuardError, match="s0 == s2"):
        g(torch.randn(6, 5), torch.randn(7, 5))


def test_broadcasting_a_symbol_against_one_records_nothing():
    f = lambda a, b: a * b   # noqa: E731
    g = make_graph(f, dynamic=True)(torch.randn(4, 3), torch.randn(1, 3))
    assert g.shape_guards == ()
    a, b = torch.randn(9, 3), torch.randn(1, 3)
    _close(g(a, b)[0], f(a, b))


def test_reshape_minus_one_infers_a_symbolic_size_and_guards_divisibility():
    f = lambda x: x.reshape(-1, 4).sum(1)   # noqa: E731
    g = make_graph(f, dynamic=True)(torch.randn(6, 2))
    assert [str(gd.expr) for gd in g.shape_guards] == ["Eq(Mod(s0*s1, 4), 0)"]
    x = torch.randn(10, 2)
    _close(g(x)[0], f(x))
    with pytest.raises(ShapeGuardError, match="Mod"):
        g(torch.randn(5, 3))
    # divisible for every size: no guard; the inferred size is exact (2*s0, not floor)
    h = make_graph(lambda x: x.view(-1, 2).flatten(), dynamic_dims=[{0}])(torch.randn(6, 4))
    assert h.shape_guards == () and "f32[2*s0, 2]" in str(h)
    x = torch.randn(5, 4)
    _close(h(x)[0], x.view(-1, 2).flatten())


def test_numel_size_and_mean_divisor_are_symbolic():
    def f(x):
        return x.mean() * x.numel() / x.size(0) + x.shape[1]
    g = make_graph(f, dynamic=True)(torch.randn(4, 3))
    assert g.shape_guards == ()
    x = torch.randn(7, 5)
    _close(g(x)[0], f(x))


def test_type_checker_accepts_symbols_and_rejects_wrong_annotations():
    g = make_graph(lambda x: torch.exp(x).sum(0), dynamic=True)(torch.randn(4, 3))
    assert g.check() is g
    assert g.nodes[-1].outs[0].type == "f32[s1]"
    s0 = g.inputs[0].shape[0]
    g.nodes[-1].outs = (Var("bad", (s0,), np.float32),)
    with pytest.raises(TypeError, match=r"has type f32\[s1\] but is annotated f32\[s0\]"):
        g.check()


def test_marked_dynamic_dim_that_must_specialise_raises_naming_it():
    x = torch.randn(4, 3)
    with pytest.raises(ConstraintViolationError, match=r"s0 \(dimension 0 of input 0\) was marked"):
        make_graph(lambda x: torch.zeros(int(x.shape[0])), dynamic_dims=[{0}])(x)
    g = make_graph(lambda x: x.sum(1), dynamic_dims=[{0}])(x)
    assert g.inputs[0].type == "f32[s0, 3]"
    with pytest.raises(ShapeGuardError):
        g(torch.randn(4, 5))   # only dim 0 is generic
    with pytest.raises(ValueError, match="one set of dims per leaf"):
        make_graph(lambda x: x, dynamic_dims=[{0}, {1}])(x)


def test_unmarked_dim_specialises_with_a_guard():
    g = make_graph(lambda x: torch.zeros(int(x.shape[0])) + x[:, 0], dynamic=True)(torch.randn(4, 3))
    assert "s0 == 4" in [str(gd).split("  #")[0] for gd in g.shape_guards]
    with pytest.raises(ShapeGuardError, match="s0 == 4"):
        g(torch.randn(5, 3))


def test_data_dependent_output_size_names_the_problem():
    with pytest.raises(RuntimeError, match="needs the tensor's value"):
        make_graph(lambda x: torch.nonzero(x), dynamic=True)(torch.randn(4, 3))


def test_import_does_not_load_sympy():
    code = "import sys, numtorch; assert 'sympy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_arange_of_a_symbolic_size_is_a_graph_node():
    def f(x):
        return x * torch.arange(x.shape[0]).reshape(-1, 1) + torch.arange(1, x.shape[1], 2).sum()
    g = make_graph(f, dynamic=True)(torch.randn(4, 6))
    assert "prims.iota(shape=(s0,)" in str(g) and g.shape_guards == ()
    for shape in [(3, 7), (5, 2), (9, 9)]:
        x = torch.randn(*shape)
        _close(g(x)[0], f(x))


def test_sizes_as_floats_stay_symbolic():
    def f(x):
        return x / x.shape[0] + 0.5 * x.shape[1]
    g = make_graph(f, dynamic=True)(torch.randn(4, 6))
    assert g.shape_guards == () and "fill_value=0.5*s1" in str(g)
    x = torch.randn(7, 3)
    _close(g(x)[0], f(x))


def test_transforms_of_a_symbolic_graph_on_other_sizes():
    f = lambda x: (torch.log_softmax(x, dim=1) * x).sum()   # noqa: E731
    g = make_graph(f, dynamic=True)(torch.randn(4, 6))
    x = torch.randn(9, 2, dtype=torch.float32)
    _close(torch.func.grad(lambda x: g(x)[0])(x), torch.func.grad(f)(x))
    xs = torch.randn(3, 5, 4)
    _close(torch.func.vmap(lambda x: g(x)[0])(xs), torch.func.vmap(f)(xs))


def test_concrete_copy_compiles_with_the_inductor_backend():
    from numtorch._inductor.runner import compile_graph

    def f(x):
        return x * torch.arange(x.shape[0]).reshape(-1, 1) / x.shape[1] + torch.ones_like(x)
    g = make_graph(f, dynamic=True)(torch.randn(4, 6))
    x = torch.randn(5, 3)
    concrete = g.for_sizes([x])
    assert concrete.symbols == {} and concrete.inputs[0].type == "f32[5, 3]"
    _close(compile_graph(concrete)(x)[0], f(x))
