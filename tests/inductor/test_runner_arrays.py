"""The runner's twin on arrays (Note [Runners on arrays], numtorch/_inductor/runner.py):
``CompiledGraph.run_arrays`` computes what calling the graph computes, on arrays, and AOT
autograd runs compiled forwards and backwards through it. Skipped without a C compiler.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._aot.function import tensor_compiler
from numtorch._inductor import build, compile_graph
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def test_run_arrays_matches_the_tensor_runner_and_numpy():
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((32, 20)).astype(np.float32))
    w = torch.tensor(rng.standard_normal((20, 8)).astype(np.float32))
    c0 = torch.tensor(rng.standard_normal(8).astype(np.float32))      # captured
    f = lambda x, w: (torch.relu(x @ w + c0).sum(0), x, c0 * 2)       # noqa: E731
    c = compile_graph(make_graph(f)(x, w))
    assert c.run_arrays is not None and "def run_arrays" not in c.python_code
    got = c.run_arrays(x.numpy(), w.numpy())
    want = c(x, w)
    assert all(type(a) is np.ndarray for a in got)
    for a, t in zip(got, want):
        assert a.tobytes() == t.numpy().tobytes()
    xa, wa = x.numpy(), w.numpy()
    np.testing.assert_allclose(got[0], np.maximum(xa @ wa + c0.numpy(), 0).sum(0), rtol=1e-5)
    assert got[1] is xa                       # an input returned as itself


def test_graph_with_writes_has_no_array_twin():
    def f(x):
        x.add_(1.0)
        return x * 2
    c = compile_graph(make_graph(f)(torch.zeros(4)))
    assert c.run_arrays is None


def test_aot_compiler_runs_the_array_twin():
    x, w = torch.randn(6, 5), torch.randn(5, 3)
    g = make_graph(lambda x, w: torch.tanh(x @ w))(x, w)
    run = tensor_compiler(compile_graph)(g)
    assert run is run.compiled.run_arrays
    (out,) = run(x.numpy(), w.numpy())
    np.testing.assert_allclose(out, np.tanh(x.numpy() @ w.numpy()), rtol=1e-5, atol=1e-6)
