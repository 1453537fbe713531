"""``func.linearize`` by partial evaluation (Note [Linearize by partial evaluation]).

References: ``func.jvp`` at the same point (a different code path: the JVP interpreter run
eagerly, no graph), finite differences, and PyTorch's linearize where installed.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch.func import jvp, linearize, vmap

F64 = torch.float64


def _mlp(x, w):
    return torch.tanh(x @ w).sum(-1), torch.sin(x) * torch.exp(x)


def _point(seed=0):
    rng = np.random.default_rng(seed)
    return (torch.tensor(rng.standard_normal((4, 3))), torch.tensor(rng.standard_normal((3, 5))))


def test_values_equal_jvp_and_finite_differences():
    x, w = _point()
    out, jvp_fn = linearize(_mlp, x, w)
    ref_out = _mlp(x, w)
    for a, b in zip(out, ref_out):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    tx, tw = _point(1)
    got = jvp_fn(tx, tw)
    want = jvp(_mlp, (x, w), (tx, tw))[1]
    eps = 1e-6
    fd = [(p - m) / (2 * eps) for p, m in zip(_mlp(x + eps * tx, w + eps * tw),
                                              _mlp(x - eps * tx, w - eps * tw))]
    for g, j, d in zip(got, want, fd):
        np.testing.assert_allclose(g.numpy(), j.numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g.numpy(), d.numpy(), rtol=1e-6, atol=1e-8)


def test_the_linear_graph_holds_no_primal_work():
    x, w = _point()
    _, jvp_fn = linearize(_mlp, x, w)
    lin = jvp_fn.graph
    prims = lin.primitives()
    # tanh, sin, exp, cos and x @ w are primal work: computed once, read as residuals
    assert not {"tanh", "sin", "exp", "cos"} & set(prims), lin
    # what is left is linear in the tangents: the joint graph's nodes that read one
    joint = torch.func.make_graph(lambda *a: (jvp(_mlp, a[:2], a[2:])))(x, w, x, w)
    reads_tangent = {id(v) for v in joint.inputs[2:]}
    count = 0
    for node in joint.nodes:
        if any(id(v) in reads_tangent for v in node.ins):
            reads_tangent.update(id(v) for v in node.outs)
            count += 1
    assert len(lin.nodes) == count
    assert [v.shape for v in lin.inputs] == [(4, 3), (3, 5)]


def test_calling_twice_does_not_rerun_or_retrace():
    calls = []

    def f(x):
        calls.append(1)
        return torch.sin(x) ** 2

    x = torch.tensor([0.1, 0.5, 2.0], dtype=F64)
    out, jvp_fn = linearize(f, x)
    assert len(calls) == 1
    t1, t2 = torch.ones(3, dtype=F64), torch.tensor([1.0, -2.0, 3.0], dtype=F64)
    region = jvp_fn.graph.closed()[0]
    r1 = jvp_fn(t1)
    runner = region.cache["runner"]   # the linear graph's generated code, made at the first call
    r2 = jvp_fn(t2)
    assert len(calls) == 1 and region.cache["runner"] is runner
    d = 2 * np.sin(x.numpy()) * np.cos(x.numpy())
    np.testing.assert_allclose(r1.numpy(), d, rtol=1e-12)
    np.testing.assert_allclose(r2.numpy(), d * t2.numpy(), rtol=1e-12)


def test_under_vmap():
    x, w = _point()
    _, jvp_fn = linearize(lambda x: torch.tanh(x @ w), x)
    basis = torch.eye(12, dtype=F64).reshape(12, 4, 3)
    jac = vmap(jvp_fn)(basis)                          # the Jacobian, one column per basis tangent
    ref = torch.func.jacfwd(lambda x: torch.tanh(x @ w))(x)   # (4, 5, 4, 3)
    np.testing.assert_allclose(jac.numpy(), ref.reshape(4, 5, 12).permute(2, 0, 1).numpy(),
                               rtol=1e-12)
    # and linearize itself under vmap (batched primals)
    xs = torch.stack([x, 2 * x])
    got = vmap(lambda p: linearize(torch.sin, p)[1](torch.ones_like(p)))(xs)
    np.testing.assert_allclose(got.numpy(), np.cos(xs.numpy()), rtol=1e-12)


def test_outputs_that_ignore_the_input_and_pytrees():
    c = torch.tensor([1.0, 2.0], dtype=F64)
    out, jvp_fn = linearize(lambda d: {"y": d["a"] * 3, "c": c}, {"a": c})
    t = jvp_fn({"a": torch.tensor([1.0, 1.0], dtype=F64)})
    assert t["y"].tolist() == [3.0, 3.0] and t["c"].tolist() == [0.0, 0.0]
    assert out["c"].tolist() == [1.0, 2.0]


def test_tangent_errors_name_the_tangent():
    _, jvp_fn = linearize(torch.sin, torch.zeros(3, dtype=F64))
    with pytest.raises(RuntimeError, match="tangent:0 with shape"):
        jvp_fn(torch.zeros(4, dtype=F64))
    with pytest.raises(RuntimeError, match="tangent:0 with dtype"):
        jvp_fn(torch.zeros(3))
    with pytest.raises(RuntimeError, match="same argspec"):
        jvp_fn(torch.zeros(3, dtype=F64), torch.zeros(3, dtype=F64))
    with pytest.raises(RuntimeError, match="primal:0 is float"):
        linearize(torch.sin, [1.0])


def test_matches_pytorch():
    pt = pytest.importorskip("torch")
    x = np.array([0.3, -1.1, 2.0])
    t = np.array([1.0, 0.5, -2.0])
    _, fn = linearize(lambda v: torch.exp(v).cumsum(0), torch.tensor(x))
    _, ref = pt.func.linearize(lambda v: pt.exp(v).cumsum(0), pt.tensor(x))
    np.testing.assert_allclose(fn(torch.tensor(t)).numpy(), ref(pt.tensor(t)).numpy(), rtol=1e-12)


def test_random_draws_happen_once_as_eagerly():
    # dropout's mask is drawn by the primal part (once, advancing the generator as eager
    # does) and read by the linear map as a residual (Note [Partial evaluation of effects
    # and draws])
    x = torch.linspace(0.5, 2.0, 8, dtype=F64)
    f = lambda v: torch.nn.functional.dropout(v, 0.5) * torch.sin(v)  # noqa: E731
    torch.manual_seed(3)
    out, jvp_fn = linearize(f, x)
    after = torch.rand(1)
    torch.manual_seed(3)
    ref = f(x)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    assert torch.rand(1).item() == after.item()
    mask = (ref.numpy() != 0) * 2.0
    t = jvp_fn(torch.ones(8, dtype=F64))
    xs = x.numpy()
    np.testing.assert_allclose(t.numpy(), mask * (np.sin(xs) + xs * np.cos(xs)), rtol=1e-12)
    assert "sin" not in jvp_fn.graph.primitives()


def test_differentiable_through_the_linear_map():
    # the residuals are tensors of the primal computation: grad and eager autograd see
    # through the linear graph to them (d/dx of cos(x) * t is -sin(x) * t)
    from numtorch.func import grad
    x = torch.tensor([0.3, 1.2], dtype=F64)
    t = torch.tensor([1.0, 2.0], dtype=F64)
    want = -np.sin(x.numpy()) * t.numpy()
    g = grad(lambda p: linearize(torch.sin, p)[1](t).sum())(x)
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    w = x.clone().requires_grad_(True)
    _, jvp_fn = linearize(torch.sin, w)
    jvp_fn(t).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-12)
