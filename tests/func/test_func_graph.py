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
    assert plain.primitives().count("copy_to") == 2          # b.add_ and a.mul_
    func = make_graph(functionalize(mutating))(torch.ones(3))
    prims = func.primitives()
    assert prims.count("copy_to") == 1 and prims[-1] == "copy_to"   # only the input copy-back
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
    assert "scatter" in g.primitives() and g.primitives()[-1] == "copy_to"
    with pytest.raises(RuntimeError, match="remove="):
        functionalize(h, remove="everything")


def writes_twice_and_through_a_view(a, s):
    a.add_(s)
    a[1:].mul_(10)
    return a * 2


def _fresh():
    return torch.arange(4.0, dtype=torch.float64), torch.tensor(0.5, dtype=torch.float64)


def test_writes_are_ordinary_copy_to_nodes_in_ssa_form():
    g = make_graph(writes_twice_and_through_a_view)(*_fresh())
    assert all(n.prim is not None for n in g.nodes)
    writes = [n for n in g.nodes if n.prim.name == "copy_to"]
    assert len(writes) == 2 and writes[0].ins[0] is g.inputs[0]
    assert writes[1].ins[0] is writes[0].outs[0]           # the second write sees the first
    assert g.nodes[-1].ins[0] is writes[1].outs[0]          # `a * 2` reads the written value
    assert "= prims.copy_to(arg0, " in g.python_code()


def test_running_a_graph_writes_its_inputs_as_the_function_did():
    g = make_graph(writes_twice_and_through_a_view)(*_fresh())
    a_ref, s = _fresh()
    expected = writes_twice_and_through_a_view(a_ref, s)
    a, s = _fresh()
    version = a._version
    out = g(a, s)[0]
    assert torch.equal(out, expected) and torch.equal(a, a_ref)
    assert a._version > version                             # autograd sees the write
    # Replayed under another trace, the outer function reads the written value.
    a, s = _fresh()
    outer = make_graph(lambda x, y: (g(x, y)[0], x + 0))(a, s)
    a2, s2 = _fresh()
    r = outer(a2, s2)
    assert torch.equal(r[1], a_ref) and torch.equal(a2, a_ref)
    # vmap of the graph writes the batch as vmap of the function does.
    b1 = torch.arange(12.0, dtype=torch.float64).reshape(3, 4)
    b2 = b1.clone()
    vmap(writes_twice_and_through_a_view, in_dims=(0, None))(b1, s)
    vmap(lambda x, y: g(x, y)[0], in_dims=(0, None))(b2, s)
    assert torch.equal(b1, b2)


def test_graph_writes_record_copy_backwards_under_autograd():
    # Eager autograd records the write as a node (PyTorch's CopyBackwards): the gradient
    # reaches the written value, not the overwritten one.
    g = make_graph(lambda a, s: a.copy_(s * 3).sum())(torch.zeros(3), torch.ones(3))
    a, s = torch.zeros(3), torch.ones(3, requires_grad=True)
    g(a, s)[0].backward()
    assert torch.equal(s.grad, torch.full((3,), 3.0)) and torch.equal(a, torch.full((3,), 3.0))
    assert a.grad_fn is not None


def test_ops_layer_does_not_import_transforms():
    import pathlib
    ops = pathlib.Path(torch.__file__).parent / "_ops"
    offenders = [p.name for p in ops.glob("*.py") if "..func" in p.read_text()]
    assert offenders == []
