"""Hand-written training steps under compile: ``p.grad`` read in capture, writes under
``no_grad`` that leave parameters leaves (Note [Writes under no_grad]), and a momentum
state keyed by parameters (traced: Note [Dicts keyed by objects]) — each equal to the
same code run eagerly."""
import contextlib
import io

import numpy as np
import pytest

import numtorch as torch
import numtorch._dynamo as dynamo


def _model():
    torch.manual_seed(0)
    return torch.nn.Linear(4, 3)


def _train(model, update, steps=3):
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(1))
    for _ in range(steps):
        model.zero_grad()
        (model(x) ** 2).sum().backward()
        update()
    return [p.detach().numpy().copy() for p in model.parameters()]


def test_grad_of_an_argument_and_of_a_list_item_is_read():
    p = torch.randn(3, requires_grad=True)
    (p * p).sum().backward()
    params = [p]
    dynamo.reset()
    np.testing.assert_array_equal(torch.compile(lambda t: t.grad * 2, backend="eager")(p).numpy(),
                                  (p.grad * 2).numpy())
    np.testing.assert_array_equal(torch.compile(lambda: params[0].grad + 1, backend="eager")().numpy(),
                                  (p.grad + 1).numpy())
    q = torch.randn(3, requires_grad=True)          # no grad yet: None, as eagerly
    assert torch.compile(lambda t: t.grad is None, backend="eager")(q) is True


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_sgd_written_by_hand_keeps_parameters_leaves(backend):
    def make():
        model = _model()
        params = list(model.parameters())

        def update():
            with torch.no_grad():
                for p in params:
                    p.add_(p.grad, alpha=-0.1)
        return model, update
    model, update = make()
    expected = _train(model, update)
    dynamo.reset()
    model, update = make()
    compiled = torch.compile(update, backend=backend)
    got = _train(model, compiled)
    for a, b in zip(expected, got):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
    assert all(p.is_leaf and p.grad_fn is None and p.requires_grad for p in model.parameters())
    with contextlib.redirect_stdout(io.StringIO()):
        e = dynamo.explain(update)()
    assert (e.graph_count, e.graph_break_count) == (1, 0)


def test_momentum_state_keyed_by_parameters_equals_eager():
    def make():
        model = _model()
        params, state = list(model.parameters()), {}

        def update():
            with torch.no_grad():
                for p in params:
                    b = state.get(p)
                    if b is None:
                        b = state[p] = p.grad.clone()
                    else:
                        b.mul_(0.9).add_(p.grad)
                    p.add_(b, alpha=-0.1)
        return model, update, state
    model, update, state = make()
    expected = _train(model, update)
    dynamo.reset()
    model, update, cstate = make()
    got = _train(model, torch.compile(update, backend="eager"))
    for a, b in zip(expected, got):
        np.testing.assert_array_equal(b, a)
    for a, b in zip(state.values(), cstate.values()):   # real tensors, not trace values
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    assert all(p.is_leaf for p in model.parameters())
    with contextlib.redirect_stdout(io.StringIO()):
        e = dynamo.explain(update)()
    # traced, as PyTorch traces it (Note [Dicts keyed by objects]): one graph, no break
    assert (e.graph_count, e.graph_break_count) == (1, 0), str(e)
    # the first compiled call stored a state per parameter into the real dict, keyed by
    # the parameters themselves
    assert list(cstate) == list(model.parameters())


def test_value_written_under_no_grad_then_read_with_grad_gets_eagers_gradient():
    def f(w, x):
        with torch.no_grad():
            w.mul_(0.5)
        return (w * x).sum()
    results = []
    for fn in (f, torch.compile(f, backend="eager")):
        dynamo.reset()
        w = torch.ones(3, requires_grad=True)
        fn(w, torch.arange(3.0)).backward()
        results.append((w.detach().numpy().copy(), w.grad.numpy().copy(), w.is_leaf))
    (w1, g1, leaf1), (w2, g2, leaf2) = results
    np.testing.assert_array_equal(w2, w1)
    np.testing.assert_array_equal(g2, g1)
    assert leaf1 and leaf2


def test_batchnorm_counts_one_batch_per_compiled_call():
    """num_batches_tracked.add_(1) on a library module's 0-d buffer ran at capture time
    (the eager fast path folded it), so the first compiled call counted every capture
    attempt (Note [Capture claims constants])."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU())
    ref = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU())
    ref.load_state_dict(m.state_dict())
    dynamo.reset()
    c = torch.compile(m, backend="eager")
    x = torch.randn(8, 4)
    for n in (1, 2, 3):
        np.testing.assert_allclose(c(x).detach().numpy(), ref(x).detach().numpy(), rtol=1e-6)
        assert int(m[1].num_batches_tracked) == int(ref[1].num_batches_tracked) == n
    np.testing.assert_allclose(m[1].running_mean.numpy(), ref[1].running_mean.numpy(), rtol=1e-6)


def test_scalar_ops_on_captured_buffers_are_not_folded():
    """A library module's buffer is state: ``buffer + 1`` under capture is a graph node,
    not a constant computed at capture time."""
    from numtorch._core.primitive import pop, push
    from numtorch.func._trace import TraceInterpreter
    t = torch.ones(3)
    interp = push(TraceInterpreter(claims_constants=True))
    try:
        kinds = {type((t + 1)._data).__name__, type((t * t)._data).__name__}
    finally:
        pop(interp)
    assert kinds == {"TraceTracer"}
