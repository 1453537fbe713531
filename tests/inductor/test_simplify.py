"""The backend's graph passes (numtorch/_inductor/simplify.py): chains of movement nodes
fold into one, identities drop, and the compiled graph still equals eager.

Runs through the NumPy code where there is no C compiler (the pass is the same)."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._inductor import build, compile_graph, config
from numtorch._inductor.simplify import optimize, simplify_movement
from numtorch.func import make_graph
from numtorch.testing import assert_close


def _prims(graph):
    return [n.prim.name for n in graph.nodes]


CASES = {   # name: (function, input shape, primitives left after optimize)
    "transpose of a transpose is gone": (lambda x: x.t().t() * 2, (3, 4), ["mul"]),
    "three permutes are one": (lambda x: x.permute(1, 2, 0).permute(2, 0, 1).permute(0, 2, 1).exp(),
                               (2, 3, 4), ["transpose", "exp"]),
    "reshape chain is one": (lambda x: x.reshape(6, 4).reshape(2, 12).reshape(24).sin(),
                             (4, 6), ["reshape", "sin"]),
    "reshape back is gone": (lambda x: x.reshape(24).reshape(4, 6) + 1, (4, 6), ["add"]),
    "broadcast of a broadcast is one": (
        lambda x: x.reshape(1, 5).expand(3, 5).reshape(1, 3, 5).expand(2, 3, 5).cos(),
        (5,), ["broadcast_in_dim", "cos"]),
    "cast to the same dtype is gone": (lambda x: x.to(torch.float32).abs(), (4,), ["abs"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_movement_chains_fold(name):
    f, shape, left = CASES[name]
    x = torch.randn(*shape)
    g = make_graph(f)(x)
    printed = []
    opt = optimize(g, log=printed.append)
    assert sorted(_prims(opt)) == sorted(left), opt.python_code()
    assert len(printed) == 4 and "# before simplify_movement" in printed[0]
    assert_close(opt(x), g(x))
    assert_close(opt(x), (f(x),))
    c = compile_graph(g, options={"cpp.numpy_fallback": build.compiler() is None})
    assert_close(c(x), (f(x),))


def test_an_identity_output_stays_a_new_tensor():
    """Note [One movement per chain]: a graph output is never replaced by the input."""
    x = torch.randn(3, 4)
    g = make_graph(lambda x: x.t().t())(x)
    opt = simplify_movement(g)
    assert opt.outputs[0] is not opt.inputs[0]
    out = compile_graph(g, options={"cpp.numpy_fallback": True})(x)[0]
    assert out is not x and np.array_equal(out.numpy(), x.numpy())


def test_captured_tensors_are_read_at_call_time():
    """Note [Literal constants]: an in-place update of a captured tensor is seen by the
    next call (it is not baked in as a literal, though all its elements are equal)."""
    w = torch.full((4,), 2.0)
    x = torch.ones(4)
    f = lambda x: x * w + 1.5
    c = compile_graph(make_graph(f)(x), options={"cpp.numpy_fallback": build.compiler() is None})
    if c.kind == "c":
        assert "0x1.8" in c.source and "0x1.0000000000000p+1" not in c.source  # 1.5, not 2.0
    w.fill_(5.0)
    assert_close(c(x)[0], f(x))


def test_freezing_folds_constants():
    """Note [Folding captured tensors]: fold_constants runs only under config.freezing."""
    g = make_graph(lambda x: x + 1)(torch.ones(2))
    for freezing in (False, True):
        printed = []
        saved, config.freezing = config.freezing, freezing
        try:
            optimize(g, log=printed.append)
        finally:
            config.freezing = saved
        assert any("before fold_constants" in p for p in printed) == freezing


def test_cse_and_dce_run():
    x = torch.randn(5)
    g = make_graph(lambda x: (x.exp() + x.exp(), x.sin() * 0)[0])(x)
    assert _prims(optimize(g)) == ["exp", "add"]
