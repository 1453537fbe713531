"""The direct call of a captured graph (Note [Direct region calls] in _prims/control.py):
``GraphModule.forward`` runs the graph's runner without a bind when no transform is active
and nothing is differentiated, and gives every other case to ``graph(*args)``. Each test
checks which path ran (by making the bind path fail or count) and that the result equals
eager's."""
import numpy as np
import pytest

import numtorch as torch
import numtorch._dynamo as dynamo
from numtorch._core import ir
from numtorch._dynamo.backends import GraphModule
from numtorch.func import make_graph


@pytest.fixture(autouse=True)
def _reset():
    dynamo.reset()
    yield
    dynamo.reset()


@pytest.fixture
def region_calls(monkeypatch):
    """Counts the calls that went through Graph.__call__'s region path (the bind path)."""
    calls = []
    real = ir._call_region

    def counting(graph, args):
        calls.append(graph.name)
        return real(graph, args)
    monkeypatch.setattr(ir, "_call_region", counting)
    return calls


def _graph(f, *args):
    return make_graph(f)(*args)


def test_plain_inputs_skip_bind_and_equal_eager(region_calls):
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    f = lambda x, y: ((x * 2 + y).sin(), x.sum())
    gm = GraphModule(_graph(f, x, y))
    out = gm(x, y)
    assert region_calls == []
    for o, e in zip(out, f(x, y)):
        assert isinstance(o, torch.Tensor) and not o.requires_grad
        np.testing.assert_array_equal(o.numpy(), e.numpy())
    assert out[1].shape == () and isinstance(out[1].numpy(), np.ndarray)


def test_input_requiring_grad_takes_autograd_path(region_calls):
    x = torch.randn(5, requires_grad=True)
    gm = GraphModule(_graph(lambda x: (x.exp() * x,), x))
    (out,) = gm(x)
    assert region_calls == [gm._graph.name]
    out.sum().backward()
    xe = x.detach()
    np.testing.assert_allclose(x.grad.numpy(), (xe.exp() * (xe + 1)).numpy(), rtol=1e-6)
    region_calls.clear()
    with torch.no_grad():     # nothing to record: the direct path, and no grad_fn
        (out,) = gm(x)
    assert region_calls == [] and out.grad_fn is None and not out.requires_grad


def test_captured_constant_requiring_grad_is_differentiated():
    w = torch.randn(3, requires_grad=True)
    f = torch.compile(lambda x: (x * w).sum(), backend="eager")
    x = torch.randn(3)
    f(x).backward()
    np.testing.assert_allclose(w.grad.numpy(), x.numpy(), rtol=1e-6)
    with torch.no_grad():
        assert f(x).grad_fn is None
    # the constant is read per call: a changed value is seen by the direct path too
    with torch.no_grad():
        w.mul_(2)
        np.testing.assert_allclose(f(x).item(), (x * w).sum().item(), rtol=1e-6)


def test_under_transforms_the_region_rules_run(region_calls):
    f = torch.compile(lambda x: (x.sin() * x).sum(), backend="eager")
    x = torch.randn(3, 4)
    f(x[0])
    region_calls.clear()
    g = torch.vmap(torch.func.grad(f))(x)
    assert region_calls, "a transform must see the compiled region"
    np.testing.assert_allclose(g.numpy(), (x.cos() * x + x.sin()).numpy(), rtol=1e-5)


def test_inside_a_trace_the_region_is_recorded():
    gm = GraphModule(_graph(lambda x: (x + 1,), torch.ones(2)))
    outer = make_graph(lambda x: gm(x)[0] * 3)(torch.ones(2))
    assert "graph_call" in outer.primitives()
    np.testing.assert_array_equal(outer(torch.arange(2.0))[0].numpy(), [3.0, 6.0])


def test_wrong_input_gets_the_graphs_error():
    gm = GraphModule(_graph(lambda x: (x + 1,), torch.ones(2)))
    with pytest.raises(TypeError, match="must be a Tensor of type f32"):
        gm(torch.ones(3))
    with pytest.raises(TypeError, match="must be a Tensor"):
        gm(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="expects 1 inputs"):
        gm(torch.ones(2), torch.ones(2))


def test_meta_inputs_give_meta_outputs():
    gm = GraphModule(_graph(lambda x: (x.sin(),), torch.ones(2, 3)))
    (out,) = gm(torch.empty(2, 3, device="meta"))
    assert out.device.type == "meta" and out.shape == (2, 3)


def test_graph_with_writes_is_inlined_in_order():
    buf = torch.zeros(3)

    def step(x):
        buf.add_(x)
        return buf * 2
    f = torch.compile(step, backend="eager")
    for _ in range(3):
        out = f(torch.ones(3))
    np.testing.assert_array_equal(buf.numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(out.numpy(), [6.0, 6.0, 6.0])


def test_toy_example_hit_calls_no_region(region_calls, capsys):
    def toy_example(a, b):
        x = a / (torch.abs(a) + 1)
        print("woo")
        if b.sum() < 0:
            b = b * -1
        return x * b
    ct = torch.compile(toy_example, backend="eager")
    a, b = torch.randn(10), torch.randn(10)
    ct(a, b)
    region_calls.clear()
    for bb in (b, -b):
        np.testing.assert_array_equal(ct(a, bb).numpy(), toy_example(a, bb).numpy())
    assert region_calls == []
    assert capsys.readouterr().out.count("woo") == 5
