"""The compiled forward/backward pair as one eager autograd node (numtorch._aot.function),
and the "aot_eager" and "inductor" backends that use it.

Oracle: eager autograd on the same function (float64).
"""
import numpy as np
import pytest

import numtorch as torch
from numtorch._aot import aot_function, runner_compiler
from numtorch.func import grad, make_graph, vmap


def _setup():
    torch.manual_seed(0)
    w1 = torch.randn(6, 5, dtype=torch.float64, requires_grad=True)
    b1 = torch.randn(6, dtype=torch.float64, requires_grad=True)
    w2 = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    x = torch.randn(4, 5, dtype=torch.float64)

    def f(x):
        h = torch.tanh(x @ w1.T + b1)
        return (h @ w2.T).sin().sum(), h
    return f, (w1, b1, w2), x


class Counting:
    """A compiler that counts how often each compiled graph runs."""

    def __init__(self):
        self.calls = {}

    def __call__(self, graph):
        fn = runner_compiler(graph)
        name = graph.name

        def run(*arrays):
            self.calls[name] = self.calls.get(name, 0) + 1
            return fn(*arrays)
        return run


def test_gradients_match_eager_and_backward_is_one_compiled_node():
    f, params, x = _setup()
    compiler = Counting()
    run = aot_function(make_graph(f)(x), compiler)
    loss, h = run(x)
    assert loss.grad_fn.name() == "CompiledFunctionBackward"
    assert h.grad_fn is loss.grad_fn             # one node for the whole region
    assert compiler.calls == {"forward_forward": 1}
    (loss + h.sum()).backward()
    assert compiler.calls == {"forward_forward": 1, "forward_backward": 1}
    got = [p.grad.clone() for p in params]
    for p in params:
        p.grad = None
    el, eh = f(x)
    (el + eh.sum()).backward()
    for g, p in zip(got, params):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(loss.detach().numpy(), el.detach().numpy(), rtol=1e-14)


def test_saved_activations_are_released_after_backward():
    f, params, x = _setup()
    run = aot_function(make_graph(f)(x), runner_compiler)
    loss, _ = run(x)
    node = loss.grad_fn
    pair, = run.pairs.values()
    assert pair.partition.saved, "the tanh layer saves activations"
    assert len(node.saved) == len(pair.region.inputs) + len(pair.partition.saved)
    loss.backward()
    assert node.saved is None
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_inplace_change_of_a_saved_input_is_an_error():
    f, (w1, b1, w2), x = _setup()
    run = aot_function(make_graph(f)(x), runner_compiler)
    loss, _ = run(x)
    with torch.no_grad():
        w2.mul_(2)   # the backward reads w2 (the gradient of h)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_no_input_needs_grad_runs_the_inference_graph():
    f, params, x = _setup()
    compiler = Counting()
    run = aot_function(make_graph(f)(x), compiler)
    with torch.no_grad():
        loss, _ = run(x)
    assert loss.grad_fn is None and not run.pairs
    np.testing.assert_allclose(loss.numpy(), f(x)[0].detach().numpy(), rtol=1e-14)


def test_double_backward_differentiates_the_region():
    f, (w1, b1, w2), x = _setup()
    xr = x.clone().requires_grad_()
    run = aot_function(make_graph(lambda x: f(x)[0])(xr), runner_compiler)
    gx, = torch.autograd.grad(run(xr)[0], xr, create_graph=True)
    ggx, = torch.autograd.grad(gx.pow(2).sum(), xr)
    xe = x.clone().requires_grad_()
    ex, = torch.autograd.grad(f(xe)[0], xe, create_graph=True)
    eex, = torch.autograd.grad(ex.pow(2).sum(), xe)
    np.testing.assert_allclose(ggx.numpy(), eex.numpy(), rtol=1e-12, atol=1e-13)


def test_transforms_reach_the_region():
    f, params, x = _setup()
    run = aot_function(make_graph(lambda x: f(x)[0])(x), runner_compiler)
    g = grad(lambda x: run(x)[0])(x)
    e = grad(lambda x: f(x)[0])(x)
    np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=1e-13)
    xs = torch.randn(3, 4, 5, dtype=torch.float64)
    vb = vmap(lambda x: run(x)[0])(xs)
    ve = vmap(lambda x: f(x)[0])(xs)
    np.testing.assert_allclose(vb.detach().numpy(), ve.detach().numpy(), rtol=1e-13)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_function_with_inputs_requiring_grad(backend):
    torch.manual_seed(1)
    w = torch.randn(8, 5, dtype=torch.float64, requires_grad=True)
    x = torch.randn(16, 5, dtype=torch.float64)

    def f(w, x):
        return torch.nn.functional.softplus(x @ w.T).pow(2).mean()
    cf = torch.compile(f, backend=backend)
    for _ in range(2):
        w.grad = None
        cf(w, x).backward()
        got = w.grad.clone()
        w.grad = None
        f(w, x).backward()
        np.testing.assert_allclose(got.numpy(), w.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_inductor_backward_runs_kernels():
    from numtorch._inductor import build
    if build.compiler() is None:
        pytest.skip("no C compiler")
    from numtorch._dynamo.backends import GraphModule, lookup_backend
    w = torch.randn(8, 5, requires_grad=True)
    x = torch.randn(16, 5)
    g = make_graph(lambda w, x: torch.tanh(x @ w.T).sum())(w, x)
    run = lookup_backend("inductor")(GraphModule(g), [w, x])
    run(w, x)[0].backward()
    pair, = run.pairs.values()
    assert pair.backward.compiled.kernel_count >= 1
    assert pair.forward.compiled.kernel_count >= 1


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_broadcast_constants_are_read_as_constants(backend):
    """Note [Broadcast constants]: relu's zeros (a Python scalar broadcast by capture) are
    constants of the compiled forward and backward, not inputs they read; forward,
    gradients and double backward stay eager's."""
    from numtorch._inductor import build
    if backend == "inductor" and build.compiler() is None:
        pytest.skip("no C compiler")
    from numtorch._dynamo.backends import GraphModule, lookup_backend
    torch.manual_seed(2)
    w = torch.randn(8, 5, dtype=torch.float64, requires_grad=True)
    x = torch.randn(16, 5, dtype=torch.float64)
    f = lambda w, x: (torch.relu(x @ w.T) ** 2).sum()          # noqa: E731
    g = make_graph(f)(w, x)
    run = lookup_backend(backend)(GraphModule(g), [w, x])
    loss = run(w, x)[0]
    pair, = run.pairs.values()
    region_consts = g.closed()[1]
    zeros = [i for i, c in enumerate(region_consts) if not any(c._data.strides)]
    assert zeros, "relu's comparison captures a broadcast zero"
    for graph, positions in ((pair.forward_graph, zeros),
                             (pair.backward_graph, [j for j, i in enumerate(pair.partition.saved_inputs)
                                                    if i in zeros])):
        read = {id(v) for n in graph.nodes for v in n.ins}
        assert not any(id(graph.inputs[i]) in read for i in positions), graph
    loss.backward()
    we = w.detach().clone().requires_grad_()
    le = f(we, x)
    le.backward()
    np.testing.assert_allclose(loss.detach().numpy(), le.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(w.grad.numpy(), we.grad.numpy(), rtol=1e-13, atol=1e-15)
    w.grad = None
    gw, = torch.autograd.grad(run(w, x)[0], w, create_graph=True)
    ggw, = torch.autograd.grad(gw.pow(2).sum(), w)
    ew, = torch.autograd.grad(f(we, x), we, create_graph=True)
    eew, = torch.autograd.grad(ew.pow(2).sum(), we)
    np.testing.assert_allclose(ggw.numpy(), eew.numpy(), rtol=1e-12, atol=1e-13)
