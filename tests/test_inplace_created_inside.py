"""In-place writes into tensors created inside a traced or compiled function.

Note [Constants made inside the trace] (numtorch/func/_trace.py): such a tensor is
captured as a snapshot and writes into it are functionalized. Each case is compared with
running the function eagerly, twice (a recorded write into the constant would make the
second call start from the first call's result).
"""
import numpy as np
import pytest

import numtorch as torch
from numtorch._core.ir import Const
from numtorch.func import make_graph


def add_into_zeros(x):
    t = torch.zeros(3)
    t.add_(x)
    return t * 2


def read_then_write(x):
    t = torch.ones(3)
    y = x + t              # reads the value before the write
    t.mul_(x)
    t[0] = 5.0             # an indexed write (through a view)
    return y, t + 1


def constant_write(x):
    t = torch.ones(3)
    y = x + t
    t.add_(1.0)            # no traced operand: eager under make_graph; y must still see 1
    return y, x * t


CASES = [add_into_zeros, read_then_write, constant_write]
INPUTS = [np.array([1.0, -2.0, 3.5], np.float32), np.array([0.5, 4.0, -1.0], np.float32)]


def _np(out):
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("backend", ["eager", "inductor"])
@pytest.mark.parametrize("fn", CASES)
def test_compile_matches_eager(fn, backend):
    compiled = torch.compile(fn, backend=backend)
    for a in INPUTS:
        want = _np(fn(torch.tensor(a)))
        got = _np(compiled(torch.tensor(a)))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("fn", CASES)
def test_make_graph_matches_eager(fn):
    graph = make_graph(fn)(torch.tensor(INPUTS[0]))
    # functionalized: the graph writes no constant
    assert not any(n.prim.name == "copy_to" and isinstance(n.ins[0], Const)
                   for n in graph.nodes), graph
    for a in INPUTS:
        want = _np(fn(torch.tensor(a)))
        got = _np(graph(torch.tensor(a)))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_write_into_outside_constant_is_still_recorded():
    # a tensor from outside the function is not functionalized: the write is its effect
    def f(x, buf):
        buf.add_(x)
        return buf * 1

    g = make_graph(f)(torch.ones(3), torch.zeros(3))
    assert [n.prim.name for n in g.nodes].count("copy_to") == 1, g
