"""grad, vmap and jvp of a function compiled with the inductor run compiled graphs
(Note [Transformed regions stay compiled] in numtorch/_prims/control.py); grad runs the
region's min-cut partition (Note [Compiled regions under grad], numtorch/_aot/function.py).

A compiled region under a transform runs graphs the region's rules derive from it (its
backward, its batched form). These tests fail if any of them runs on the fast Python
runner instead of the backend's compiled code, and count what the inductor compiled.
Oracle: the same transforms of the uncompiled function (and finite differences for the
nested case).
"""
import shutil

import numpy as np
import pytest

import numtorch as torch
import numtorch._inductor as inductor
from numtorch._prims import control
from numtorch.func import grad, jacfwd, jacrev, jvp, vmap

pytestmark = pytest.mark.skipif(not any(shutil.which(c) for c in ("cc", "gcc", "clang")),
                                reason="no C compiler")


@pytest.fixture
def compiled_graphs(monkeypatch):
    """The names of the graphs the inductor compiles (the graphs themselves in
    ``compiled_graphs.graphs``); any region run on the fast runner fails the test."""
    names = _Names()
    compile_graph = inductor.compile_graph

    def counting(graph, *args, **kwargs):
        names.append(graph.name)
        names.graphs.append(graph)
        return compile_graph(graph, *args, **kwargs)

    def no_runner(graph):
        raise AssertionError(f"region {graph.name} ran on the fast runner, not compiled")
    monkeypatch.setattr(inductor, "compile_graph", counting)
    monkeypatch.setattr(control, "runner", no_runner)
    torch._dynamo.reset()
    return names


class _Names(list):
    def __init__(self):
        super().__init__()
        self.graphs = []


def f(z):
    return (z.sin() * z).sum()


def test_grad_runs_the_compiled_partition(compiled_graphs):
    cf = torch.compile(f, backend="inductor")
    x = torch.randn(5, dtype=torch.float64)
    np.testing.assert_allclose(grad(cf)(x).numpy(), grad(f)(x).numpy(), rtol=1e-12)
    assert {"f_forward", "f_backward"} <= set(compiled_graphs), compiled_graphs
    assert not any(n.endswith("_vjp") for n in compiled_graphs), compiled_graphs
    before = len(compiled_graphs)
    grad(cf)(torch.randn(5, dtype=torch.float64))    # the derived graphs are cached
    assert len(compiled_graphs) == before


def test_grad_saves_the_product_instead_of_recomputing_it(compiled_graphs):
    """The backward of tanh(x @ w) reads the saved product: one dot_general (the weight
    gradient), where the recomputing vjp graph had two; matches finite differences."""
    def loss(w, x):
        return torch.tanh(x @ w).square().sum()
    closs = torch.compile(loss, backend="inductor")
    rng = np.random.default_rng(0)
    w = torch.tensor(rng.standard_normal((6, 3)) * 0.3)
    x = torch.tensor(rng.standard_normal((4, 6)))
    got = grad(closs)(w, x).numpy()
    np.testing.assert_allclose(got, grad(loss)(w, x).numpy(), rtol=1e-12)
    eps, fd = 1e-6, np.zeros((6, 3))
    for i in range(6):
        for j in range(3):
            d = np.zeros((6, 3))
            d[i, j] = eps
            fd[i, j] = (loss(torch.tensor(w.numpy() + d), x).item()
                        - loss(torch.tensor(w.numpy() - d), x).item()) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
    backward, = [g for g in compiled_graphs.graphs if g.name == "loss_backward"]
    assert backward.primitives().count("dot_general") == 1, backward.primitives()


def test_nested_grad_and_vmap_of_grad(compiled_graphs):
    """grad(grad(compiled)) differentiates the partition's backward (its saved
    activations included); vmap(grad(compiled)) batches both halves. Analytic oracle:
    d/dz sum(sin(z) z) = cos(z) z + sin(z), d2/dz2 = 2 cos(z) - z sin(z)."""
    cf = torch.compile(f, backend="inductor")
    x = torch.randn(5, dtype=torch.float64)
    z = x.numpy()
    second = grad(lambda t: grad(cf)(t).sum())(x).numpy()
    np.testing.assert_allclose(second, 2 * np.cos(z) - z * np.sin(z), rtol=1e-12)
    xs = torch.randn(3, 5, dtype=torch.float64)
    zs = xs.numpy()
    np.testing.assert_allclose(vmap(grad(cf))(xs).numpy(), np.cos(zs) * zs + np.sin(zs),
                               rtol=1e-12)
    assert not any(n.endswith("_vjp") for n in compiled_graphs), compiled_graphs


def test_vmap_and_jvp_run_compiled_graphs(compiled_graphs):
    cf = torch.compile(f, backend="inductor")
    xs = torch.randn(3, 5, dtype=torch.float64)
    np.testing.assert_allclose(vmap(cf)(xs).numpy(), vmap(f)(xs).numpy(), rtol=1e-12)
    assert any(n.endswith("_batch") for n in compiled_graphs), compiled_graphs
    t = torch.randn(5, dtype=torch.float64)
    out, tangent = jvp(cf, (xs[0],), (t,))
    ref_out, ref_tangent = jvp(f, (xs[0],), (t,))
    np.testing.assert_allclose(tangent.numpy(), ref_tangent.numpy(), rtol=1e-12)
    assert any(n.endswith("_jvp") for n in compiled_graphs), compiled_graphs


def test_nested_transforms_stay_compiled(compiled_graphs):
    """The Hessian as jacfwd(jacrev(compiled)): batches of jvps of the partition's
    forward and backward graphs, each compiled; checked against the analytic Hessian of sum(sin(z) * z)."""
    cf = torch.compile(f, backend="inductor")
    x = torch.randn(4, dtype=torch.float64)
    hess = jacfwd(jacrev(cf))(x).numpy()
    z = x.numpy()
    np.testing.assert_allclose(hess, np.diag(2 * np.cos(z) - z * np.sin(z)), atol=1e-12)
    # jacrev's partition, each half under jacfwd's jvp and batch rules
    assert any("_forward" in n and "_jvp" in n for n in compiled_graphs), compiled_graphs
    assert any("_backward" in n and "_jvp" in n for n in compiled_graphs), compiled_graphs
