"""Model ensembles under vmap: the batch rules on the ensemble's path give a Python loop's values.

Note [Rows before columns in a batched product] (a product with one batched operand may
be computed with its operands swapped and its result transposed back): values and
gradients against a loop over the examples, both operand orders, several free dims, and
the cases the rule must leave alone.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import numtorch as torch
import numtorch.nn as nn
import numtorch.nn.functional as F
from numtorch.func import functional_call, grad, stack_module_state, vmap


def _t(rng, *shape):
    return torch.tensor(rng.standard_normal(shape).astype(np.float32))


def _close(a, b):
    # float32 sums in another order (one GEMM against several, summed cotangents):
    # rounding-level agreement, relative to the largest entry (gradients cancel)
    a, b = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(b).max()))


def test_shared_input_against_stacked_weights_matches_a_loop():
    rng = np.random.default_rng(0)
    x, W, b = _t(rng, 64, 30), _t(rng, 10, 128, 30), _t(rng, 10, 128)
    out = vmap(lambda W, b: F.linear(x, W, b))(W, b)
    _close(out, torch.stack([F.linear(x, W[i], b[i]) for i in range(10)]))
    # the faster order ran: the batched result is the transpose of a contiguous array
    assert vmap(lambda W: F.linear(x, W))(W).stride() == (128 * 64, 1, 64)
    xs = _t(rng, 2, 3, 5, 30)   # several free dims of the shared input
    out = vmap(lambda W: xs @ W.T)(W)
    _close(out, torch.stack([xs @ W[i].T for i in range(10)]))


def test_batched_input_against_shared_weight_keeps_the_plans_order():
    # per-example inputs against shared weights: the batch stays the result's slowest dim
    rng = np.random.default_rng(1)
    xs, W = _t(rng, 6, 3, 2, 30), _t(rng, 128, 30)
    out = vmap(lambda xi: xi @ W.T)(xs)
    _close(out, torch.stack([xs[i] @ W.T for i in range(6)]))
    assert out.is_contiguous()
    out = vmap(lambda xi: F.linear(xi, W), in_dims=1)(xs)   # batch dim in the middle
    _close(out, torch.stack([F.linear(xs[:, i], W) for i in range(3)]))


@pytest.mark.parametrize("shapes", [((300, 30), (10, 8, 30)), ((1, 30), (4, 1, 30))])
def test_products_the_rule_leaves_alone_match_a_loop(shapes):
    # more rows than columns, or a 1 x 1 result per example: the plan's order
    rng = np.random.default_rng(2)
    x, W = _t(rng, *shapes[0]), _t(rng, *shapes[1])
    out = vmap(lambda W: x @ W.T)(W)
    _close(out, torch.stack([x @ W[i].T for i in range(len(W))]))


def test_gradients_through_the_swapped_product_match_a_loop():
    rng = np.random.default_rng(3)
    x, W, b = _t(rng, 16, 12), _t(rng, 5, 40, 12), _t(rng, 5, 40)

    def loss(x, W, b):
        return vmap(lambda W, b: F.linear(x, W, b).relu())(W, b).square().sum()

    def loop_loss(x, W, b):
        return sum(F.linear(x, W[i], b[i]).relu().square().sum() for i in range(5))
    for argnum in range(3):
        _close(grad(loss, argnums=argnum)(x, W, b), grad(loop_loss, argnums=argnum)(x, W, b))
    # per-example gradients through the product with the batched operand on the left
    xs = _t(rng, 7, 12)
    g = vmap(grad(lambda W, xi: F.linear(xi[None], W).tanh().sum()), in_dims=(None, 0))(W[0], xs)
    ref = torch.stack([grad(lambda W: F.linear(xs[i][None], W).tanh().sum())(W[0])
                       for i in range(7)])
    _close(g, ref)


def test_ensemble_of_mlps_matches_the_python_loop_with_gradients():
    torch.manual_seed(0)
    models = [nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 3)) for _ in range(4)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    x = torch.randn(8, 20)
    out = vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(
        params, buffers, x)
    _close(out, torch.stack([m(x) for m in models]))
    out.square().sum().backward()
    for i, m in enumerate(models):
        m(x).square().sum().backward()
        for name, p in m.named_parameters():
            _close(params[name].grad[i], p.grad)


def test_relu_under_vmap_is_relu_of_the_batched_value():
    # Note [Elementwise composites under vmap]: eager ReLU's value (-0.0 and NaN kept,
    # PyTorch's) and ReluBackward0 on the batched value, at any batch dim
    pt = pytest.importorskip("torch")
    a = np.array([[-1.0, -0.0, 0.0, np.nan], [2.0, -np.nan, -3.0, np.inf]] * 3, np.float32)
    for in_dim in (0, 1):
        w = torch.tensor(a, requires_grad=True)
        out = vmap(torch.relu, in_dims=in_dim)(w * 1)
        ref_w = pt.tensor(a, requires_grad=True)
        ref = pt.relu(ref_w * 1)
        ref = ref if in_dim == 0 else ref.t()
        np.testing.assert_array_equal(out.detach().numpy().view(np.int32),
                                      ref.detach().numpy().view(np.int32))
        g = np.arange(a.size, dtype=np.float32).reshape(out.shape)
        out.backward(torch.tensor(g))
        ref.backward(pt.tensor(g))
        np.testing.assert_array_equal(w.grad.numpy(), ref_w.grad.numpy())
    # below another transform's level, relu keeps that level's rules: grad of vmap of relu
    x = torch.tensor([[-1.0, 2.0], [3.0, -4.0]], dtype=torch.float64)
    np.testing.assert_array_equal(grad(lambda x: vmap(torch.relu)(x).sum())(x).numpy(),
                                  (x.numpy() > 0).astype(np.float64))
    # and vmap of grad of relu (a grad tracer inside: the composed path)
    np.testing.assert_array_equal(vmap(grad(lambda r: torch.relu(r).sum()))(x).numpy(),
                                  (x.numpy() > 0).astype(np.float64))


def _composed(monkeypatch):
    """Turn off vmap's rule for F.linear: the composed path's batch rules run."""
    from numtorch.func._vmap import VmapInterpreter
    monkeypatch.delattr(VmapInterpreter, "linear")


@pytest.mark.parametrize("case", ["shared x, swapped", "shared x, plan's order", "batched x"])
def test_batched_linear_node_has_the_composed_paths_bits(case, monkeypatch):
    # Note [One node for a batched linear]: output, layout and every gradient bit-equal to
    # the composed path's, and one node where the composed path records four
    rng = np.random.default_rng(4)
    m = {"shared x, swapped": 6, "shared x, plan's order": 50}.get(case, 6)
    x, W, b = _t(rng, m, 12), _t(rng, 3, 5, 12), _t(rng, 3, 5)
    if case == "batched x":
        x = _t(rng, 3, m, 12)
    cot = _t(rng, 3, m, 5)
    in_dims = (0 if case == "batched x" else None, 0, 0)

    def run():
        xs, Ws, bs = (t.detach().requires_grad_() for t in (x, W, b))
        out = vmap(F.linear, in_dims=in_dims)(xs, Ws, bs)
        nodes = [out.grad_fn.name()] + [n.name() for n, _ in out.grad_fn.next_functions if n]
        out.backward(cot)
        return out.detach().numpy(), [t.grad.numpy() for t in (xs, Ws, bs)], nodes
    fused, fused_grads, fused_nodes = run()
    _composed(monkeypatch)
    composed, composed_grads, composed_nodes = run()
    assert fused.strides == composed.strides
    assert np.array_equal(fused, composed)
    for a, c in zip(fused_grads, composed_grads):
        assert np.array_equal(a, c)
    assert fused_nodes[0] == "AddmmBackward0" and composed_nodes[0] == "AddBackward0"
    _close(torch.tensor(fused), torch.stack([F.linear(x[i] if case == "batched x" else x, W[i], b[i])
                                             for i in range(3)]))


def test_batched_linear_node_second_order_and_other_transforms(monkeypatch):
    # create_graph through the node (the composed rules bind numtorch ops), and the
    # transforms it leaves to the composed path: a grad level between vmap and the values
    rng = np.random.default_rng(5)
    x, W, b = _t(rng, 4, 6).double(), _t(rng, 3, 7, 6).double(), _t(rng, 3, 7).double()

    def loss(W):
        return vmap(lambda W, b: F.linear(x, W, b).tanh())(W, b).square().sum()
    hvp = lambda W, v: torch.autograd.grad(torch.autograd.grad(loss(W), W, create_graph=True)[0],
                                           W, v)[0]
    v = torch.tensor(rng.standard_normal(W.shape))
    Wr = W.detach().requires_grad_()
    fused = hvp(Wr, v)
    f = lambda W, b: F.linear(x, W, b).tanh().square().sum()
    _close(vmap(grad(f))(W, b), torch.stack([grad(f)(W[i], b[i]) for i in range(3)]))
    _composed(monkeypatch)
    np.testing.assert_array_equal(fused.numpy(), hvp(Wr, v).numpy())
