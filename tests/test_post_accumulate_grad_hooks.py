"""Tensor.register_post_accumulate_grad_hook and autograd's queue_callback (used by DDP)."""
import numpy as np
import pytest

import numtorch as torch
from numtorch.autograd import engine


def _mlp():
    torch.manual_seed(0)
    w1 = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    w2 = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    x = torch.randn(6, 4, dtype=torch.float64)
    return w1, w2, x


def test_hook_sees_the_accumulated_grad_while_earlier_layers_wait():
    w1, w2, x = _mlp()
    live = engine._leaf_hooks_live[0]   # other tests may leave leaf hooks registered
    seen = []
    h2 = w2.register_post_accumulate_grad_hook(
        lambda p: seen.append(("w2", p.grad.numpy().copy(), w1.grad)))
    h1 = w1.register_post_accumulate_grad_hook(lambda p: seen.append(("w1", p.grad.numpy().copy(), None)))
    ((x @ w1).tanh() @ w2).pow(2).sum().backward()
    # w2 is finalized before w1's gradient exists: the hook runs during backward
    assert [s[0] for s in seen] == ["w2", "w1"]
    assert seen[0][2] is None
    np.testing.assert_array_equal(seen[0][1], w2.grad.numpy())
    np.testing.assert_array_equal(seen[1][1], w1.grad.numpy())
    h1.remove()
    h2.remove()
    assert engine._leaf_hooks_live[0] == live


def test_gradients_are_unchanged_by_early_accumulation():
    w1, w2, x = _mlp()
    loss = lambda: (((x @ w1).sin() @ w2) * (x @ w1).sum()).sum()   # noqa: E731  w1 used twice
    loss().backward()
    ref = (w1.grad.numpy().copy(), w2.grad.numpy().copy())
    w1.grad = w2.grad = None
    calls = []
    hs = [p.register_post_accumulate_grad_hook(lambda p: calls.append(p)) for p in (w1, w2)]
    loss().backward()
    loss().backward()   # accumulates onto the existing .grad
    assert len(calls) == 4 and calls[0] is w2
    np.testing.assert_allclose(w1.grad.numpy(), 2 * ref[0], rtol=1e-14)
    np.testing.assert_allclose(w2.grad.numpy(), 2 * ref[1], rtol=1e-14)
    for h in hs:
        h.remove()


def test_hook_order_matches_pytorch():
    torch_ = pytest.importorskip("torch")
    w1, w2, x = _mlp()
    order = []
    hs = [p.register_post_accumulate_grad_hook(lambda p, n=n: order.append(n))
          for n, p in (("w1", w1), ("w2", w2))]
    ((x @ w1).relu() @ w2).sum().backward()
    t1, t2 = (torch_.tensor(p.detach().numpy(), requires_grad=True) for p in (w1, w2))
    torder = []
    for n, p in (("w1", t1), ("w2", t2)):
        p.register_post_accumulate_grad_hook(lambda p, n=n: torder.append(n))
    ((torch_.tensor(x.numpy()) @ t1).relu() @ t2).sum().backward()
    assert order == torder
    for h in hs:
        h.remove()


def test_hook_argument_errors():
    w1, w2, x = _mlp()
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        x.register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w1 * 2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(TypeError, match="hook to be callable"):
        w1.register_post_accumulate_grad_hook(3)


def test_queue_callback_runs_once_after_backward():
    w1, w2, x = _mlp()
    log = []

    def hook(p):
        log.append("hook")
        engine.queue_callback(lambda: log.append(("done", w1.grad is not None)))
    h = w2.register_post_accumulate_grad_hook(hook)
    (x @ w1 @ w2).sum().backward()
    assert log == ["hook", ("done", True)]
    (x @ w1 @ w2).sum().backward()
    assert log.count("hook") == 2 and len(log) == 4
    h.remove()
