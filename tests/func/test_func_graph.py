"""make_graph: typed graphs of primitives, printed as Python, re-runnable and re-transformable."""
import pytest

import numtorch as torch
from numtorch.func import functionalize, grad, make_graph, vmap


def f(x, w):
    y = x @ w
    return y.sin().sum()


def test_graph_prints_typed_a_normal_form_with_user_lines():
    g = make_graph(f)(torch.randn(3, 4), torch.randn(4))
    src = g.python_code()
    assert src.splitlines()[0] == "def forward(arg0: 'f32[3, 4]', arg1: 'f32[4]'):"
    assert "prims.dot_general(arg0, arg1" in src and "# f32[3]" in src
    assert "test_func_graph.py:" in src      # the user's file:line
    assert g.primitives() == ["dot_general", "sin", "reduce_sum"]


def test_graph_runs_and_is_transformable_again():
    x, w = torch.randn(3, 4, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    g = make_graph(f)(x, w)
    assert torch.allclose(g(x, w)[0], f(x, w))
    assert torch.allclose(grad(lambda v: g(x, v)[0])(w), grad(f, argnums=1)(x, w))
    xs = torch.randn(5, 3, 4, dtype=torch.float64)
    assert torch.allclose(vmap(lambda a: g(a, w)[0])(xs), torch.stack([f(a, w) for a in xs]))


def test_graph_of_a_transformed_function():
    x, w = torch.randn(3, 4, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    gg = make_graph(grad(f, argnums=1))(x, w)
    assert "cos" in gg.primitives()
    assert torch.allclose(gg(x, w)[0], grad(f, argnums=1)(x, w))
    gv = make_graph(vmap(torch.sin))(torch.randn(4, 2))
    assert gv.primitives() == ["sin"]


def test_graph_type_check_catches_a_wrong_annotation():
    g = make_graph(f)(torch.randn(3, 4), torch.randn(4))
    g.nodes[1].outs[0].shape = (7,)
    with pytest.raises(TypeError, match="annotated f32\\[7\\]"):
        g.check()


def test_data_dependent_control_flow_is_a_clear_error():
    with pytest.raises(RuntimeError, match="data-dependent"):
        make_graph(lambda x: x if x.sum() > 0 else -x)(torch.randn(3))


def mutating(a):
    b = a.clone()
    b.add_(1)
    a.mul_(2)
    return b * 3


def test_make_graph_shows_mutations_and_functionalize_removes_them():
    plain = make_graph(mutating)(torch.ones(3))
    assert plain.primitives().count("copy_") == 2          # b.add_ and a.mul_
    func = make_graph(functionalize(mutating))(torch.ones(3))
    prims = func.primitives()
    assert prims.count("copy_") == 1 and prims[-1] == "copy_"   # only the input copy-back
    a = torch.ones(3)
    out = func(a)[0]
    assert torch.equal(out, torch.full((3,), 6.0)) and torch.equal(a, torch.full((3,), 2.0))


def test_functionalize_matches_eager_including_input_mutation_through_a_view():
    def h(a):
        a[1:] = a[1:] * 10
        return a.sum()
    a1, a2 = torch.arange(3.0), torch.arange(3.0)
    assert torch.equal(functionalize(h)(a1), h(a2))
    assert torch.equal(a1, a2)
    g = make_graph(functionalize(h))(torch.arange(3.0))
    assert "scatter" in g.primitives() and g.primitives()[-1] == "copy_"
    with pytest.raises(RuntimeError, match="remove="):
        functionalize(h, remove="everything")
