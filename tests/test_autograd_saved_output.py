"""A node keeps its output's value, not the output (Note [A node keeps its output's value,
not the output], numtorch/autograd/engine.py): no reference cycles, and rules that read
the output still differentiate to any order and still see in-place writes."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import numtorch as torch


@pytest.fixture
def no_gc():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def _graph_refs(*roots):
    """Weak references to ``roots`` and to every node of their autograd graphs."""
    refs, seen, stack = [weakref.ref(t) for t in roots], set(), [t.grad_fn for t in roots]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or type(node).__name__ == "AccumulateGrad":
            continue                     # a leaf's accumulator lives as long as the leaf
        seen.add(id(node))
        refs.append(weakref.ref(node))
        stack.extend(n for n, _ in node.next_functions)
    return refs


def test_graphs_are_freed_without_the_cycle_collector(no_gc):
    # weak references, not gc.collect()'s count: unrelated garbage left by earlier tests
    # (a dynamo GraphModule, say) may become unreachable during this test
    x = torch.randn(4, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    y = torch.tanh(torch.relu(x * 2 + b).exp()).sum()     # a forward never differentiated
    loss = (torch.sigmoid(x @ x.T) + b.sum()).sum()
    (g,) = torch.autograd.grad(loss, [x], create_graph=True)  # retains the graph
    h = g.pow(2).sum()
    h.backward()
    refs = _graph_refs(y, loss, g, h)
    assert len(refs) > 10
    del y, loss, g, h
    assert [r() for r in refs if r() is not None] == []


@pytest.mark.parametrize("fn, derivs", [
    (torch.exp, [np.exp] * 4),
    (torch.tanh, [np.tanh, lambda a: 1 - np.tanh(a) ** 2,
                  lambda a: -2 * np.tanh(a) * (1 - np.tanh(a) ** 2),
                  lambda a: (1 - np.tanh(a) ** 2) * (6 * np.tanh(a) ** 2 - 2)]),
    (torch.sqrt, [np.sqrt, lambda a: 0.5 * a ** -0.5, lambda a: -0.25 * a ** -1.5,
                  lambda a: 0.375 * a ** -2.5]),
])
def test_rules_reading_the_output_differentiate_to_third_order(fn, derivs):
    a = np.linspace(0.5, 2.0, 7)
    x = torch.tensor(a, requires_grad=True)
    y = fn(x)
    np.testing.assert_allclose(y.detach().numpy(), derivs[0](a), rtol=1e-12)
    for k in (1, 2, 3):
        (y,) = torch.autograd.grad(y.sum(), [x], create_graph=True)
        np.testing.assert_allclose(y.detach().numpy(), derivs[k](a), rtol=1e-10)


def test_an_output_written_in_place_is_still_caught():
    x = torch.randn(5, requires_grad=True)
    y = x.exp()            # exp's rule reads its output
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_the_node_keeps_the_value_the_output_had():
    # Reassigning .data after the forward does not change what backward reads (as in
    # PyTorch, whose saved output is the value at save time).
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    y = x.exp()
    y.data = torch.zeros(2)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)


def test_the_kept_value_matches_pytorch():
    pt = pytest.importorskip("torch")
    grads = []
    for lib in (torch, pt):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        y = x.exp()
        y.data = lib.zeros(2)
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
