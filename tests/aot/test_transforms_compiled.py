"""grad, vmap and jvp of a function compiled with the inductor run compiled graphs
(Note [Transformed regions stay compiled] in numtorch/_prims/control.py).

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
    """The names of the graphs the inductor compiles; any region run on the fast runner
    fails the test."""
    names = []
    compile_graph = inductor.compile_graph

    def counting(graph, *args, **kwargs):
        names.append(graph.name)
        return compile_graph(graph, *args, **kwargs)

    def no_runner(graph):
        raise AssertionError(f"region {graph.name} ran on the fast runner, not compiled")
    monkeypatch.setattr(inductor, "compile_graph", counting)
    monkeypatch.setattr(control, "runner", no_runner)
    torch._dynamo.reset()
    return names


def f(z):
    return (z.sin() * z).sum()


def test_grad_runs_the_compiled_backward(compiled_graphs):
    cf = torch.compile(f, backend="inductor")
    x = torch.randn(5, dtype=torch.float64)
    np.testing.assert_allclose(grad(cf)(x).numpy(), grad(f)(x).numpy(), rtol=1e-12)
    assert any(n.endswith("_vjp") for n in compiled_graphs), compiled_graphs
    before = len(compiled_graphs)
    grad(cf)(torch.randn(5, dtype=torch.float64))    # the derived graphs are cached
    assert len(compiled_graphs) == before


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
    """The Hessian as jacfwd(jacrev(compiled)): a batch of a jvp of a vjp graph, each
    compiled; checked against the analytic Hessian of sum(sin(z) * z)."""
    cf = torch.compile(f, backend="inductor")
    x = torch.randn(4, dtype=torch.float64)
    hess = jacfwd(jacrev(cf))(x).numpy()
    z = x.numpy()
    np.testing.assert_allclose(hess, np.diag(2 * np.cos(z) - z * np.sin(z)), atol=1e-12)
    assert any("_vjp" in n and "_jvp" in n for n in compiled_graphs), compiled_graphs
