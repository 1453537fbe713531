"""The backward engine's order (Note [Execution order] in autograd/engine.py): nodes run
newest first, leaf hooks run as soon as the leaf's last consumer has, and autograd.grad
does not run the node of an intermediate it was asked about. PyTorch is the oracle."""
import numpy as np
import pytest

import numtorch
from numtorch.autograd import engine


def _hooked_mlp(torch, log):
    """A two-branch MLP whose leaves, activations and nodes log when their hooks run."""
    w1 = torch.tensor(np.full((3, 3), 0.5), requires_grad=True)
    w2 = torch.tensor(np.full((3, 3), 0.25), requires_grad=True)
    w3 = torch.tensor(np.full((3, 3), 2.0), requires_grad=True)
    b1 = torch.tensor(np.ones(3), requires_grad=True)
    handles = [t.register_hook(lambda g, n=name: log.append(n))
               for name, t in (("w1", w1), ("w2", w2), ("w3", w3), ("b1", b1))]
    x = torch.tensor(np.arange(6.0).reshape(2, 3))
    h1 = x @ w1 + b1
    h1.register_hook(lambda g: log.append("h1"))
    h2 = torch.relu(h1) @ w2
    h2.register_hook(lambda g: log.append("h2"))
    h3 = (h1 * 2).exp()
    h3.grad_fn.register_hook(lambda gi, go: log.append(h3.grad_fn.name()))
    y = (h2 @ w3).sum() + h3.sum()
    return y, (w1, w2, w3, b1), handles


def test_hooks_run_in_pytorchs_order():
    torch = pytest.importorskip("torch")
    logs = {}
    grads = {}
    live = engine._leaf_hooks_live[0]   # other tests may leave hooks registered
    for name, lib in (("torch", torch), ("numtorch", numtorch)):
        log = logs[name] = []
        y, leaves, handles = _hooked_mlp(lib, log)
        y.backward()
        grads[name] = [t.grad.detach().numpy() for t in leaves]
        for h in handles:
            h.remove()
    # PyTorch runs a leaf's AccumulateGrad (and its hooks) as soon as it is ready, so w3's
    # hook comes before the hooks of the activations below it
    assert logs["numtorch"] == logs["torch"]
    assert logs["torch"][0] == "w3"
    for ours, theirs in zip(grads["numtorch"], grads["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert engine._leaf_hooks_live[0] == live   # removing the handles unregistered them


def test_nodes_run_newest_first():
    """Of the nodes ready to run, the most recently created runs first (PyTorch's
    ready queue); node post hooks show the order."""
    torch = pytest.importorskip("torch")
    orders = {}
    for name, lib in (("torch", torch), ("numtorch", numtorch)):
        order = orders[name] = []
        a = lib.tensor(np.linspace(0.1, 1.0, 4), requires_grad=True)
        b = a.exp()          # older branch
        c = a * 3
        d = c.sin()          # newer branch
        out = (b * d).sum() + (c + b).sum()
        for t in (b, c, d):
            t.grad_fn.register_hook(lambda gi, go, t=t: order.append(t.grad_fn.name()))
        out.backward()
        np.testing.assert_allclose(a.grad.detach().numpy(), (
            np.exp(a.detach().numpy()) * (np.sin(3 * a.detach().numpy()) + 1)
            + 3 * np.exp(a.detach().numpy()) * np.cos(3 * a.detach().numpy()) + 3), rtol=1e-12)
    assert orders["numtorch"] == orders["torch"] == ["SinBackward0", "MulBackward0",
                                                     "ExpBackward0"]


@pytest.mark.parametrize("lib_name", ["numtorch", "torch"])
def test_grad_of_an_intermediate_keeps_its_node(lib_name):
    """autograd.grad(c, b) for an intermediate b captures b's gradient without running (or
    freeing) b's node: a later backward through b still works, as in PyTorch."""
    lib = numtorch if lib_name == "numtorch" else pytest.importorskip("torch")
    a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    b = a * 2
    ran = []
    b.grad_fn.register_hook(lambda gi, go: ran.append(1))
    (gb,) = lib.autograd.grad((b * 3).sum(), b)
    np.testing.assert_array_equal(gb.detach().numpy(), [3.0, 3.0, 3.0])
    assert ran == []
    (ga,) = lib.autograd.grad((b * 4).sum(), a)
    np.testing.assert_array_equal(ga.detach().numpy(), [8.0, 8.0, 8.0])
    assert ran == [1]
    # a target on the path to another target still runs
    b = a * 2
    d = b.exp()
    gd, ga = lib.autograd.grad((d * b).sum(), [d, a])
    np.testing.assert_allclose(ga.detach().numpy(),
                               2 * (np.exp(2 * np.arange(1.0, 4.0)) * (2 * np.arange(1.0, 4.0)) +
                                    np.exp(2 * np.arange(1.0, 4.0))), rtol=1e-12)
    np.testing.assert_array_equal(gd.detach().numpy(), 2 * np.arange(1.0, 4.0))
