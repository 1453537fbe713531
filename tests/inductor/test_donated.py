"""Donated inputs (Note [Donated inputs], numtorch/_inductor/runner.py): an output that
`Graph.donated` allows to live in an input's memory is computed there only where that
cannot change a value the kernels read; elsewhere it gets fresh memory as before.

Oracle: NumPy on copies of the inputs taken before the call (a kernel writing in place
where it must not would read its own writes and differ). Skipped without a C compiler.
"""
from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import numtorch as torch
from numtorch._aot.optimizer import STEPS
from numtorch._inductor import build, compile_graph
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")

RNG = np.random.default_rng(0)


def _t(*shape):
    return torch.tensor(RNG.standard_normal(shape).astype(np.float32))


def _compiled(f, donated, *args):
    g = make_graph(f)(*args)
    g.donated = donated
    return compile_graph(g, list(args))


def _run(c, *args):
    """(outputs, whether each output is its donated input's array), checking the values
    against NumPy's result of the same f on copies taken first."""
    before = [a.numpy().copy() for a in args]
    outs = c(*args)
    shares = [any(np.shares_memory(o.numpy(), a.numpy()) for a in args) for o in outs]
    return outs, shares, before


def test_sgd_update_is_computed_in_the_parameters_memory():
    p, g = _t(64, 33), _t(64, 33)
    c = _compiled(lambda p, g: p + g * -0.1, {0: 0}, p, g)
    (out,), shares, (p0, g0) = _run(c, p, g)
    assert shares == [True]
    np.testing.assert_array_equal(p.numpy(), p0 + g0 * np.float32(-0.1))
    # a second call updates again from the new values
    c(p, g)
    np.testing.assert_array_equal(p.numpy(), (p0 + g0 * np.float32(-0.1)) + g0 * np.float32(-0.1))


def test_an_input_another_output_reads_is_not_written():
    # p feeds the donated output and a second output: writing p in place could change
    # what the second reads, whatever the loop order
    p, g = _t(16, 8), _t(16, 8)
    c = _compiled(lambda p, g: (p + g, p * 2.0), {0: 0}, p, g)
    (a, b), shares, (p0, g0) = _run(c, p, g)
    assert shares == [False, False]
    np.testing.assert_array_equal(a.numpy(), p0 + g0)
    np.testing.assert_array_equal(b.numpy(), p0 * np.float32(2.0))
    np.testing.assert_array_equal(p.numpy(), p0)


@pytest.mark.parametrize("case", ["transposed", "reduced", "product"])
def test_reads_at_other_elements_keep_fresh_memory(case):
    # element (i, j) of the output reads other elements of p: in place it would read
    # elements already overwritten
    fs = {"transposed": lambda p: p + p.T,
          "reduced": lambda p: p - p.sum(0),
          "product": lambda p: p + p @ p}
    refs = {"transposed": lambda p: p + p.T,
            "reduced": lambda p: p - p.sum(0, dtype=np.float32),
            "product": lambda p: p + p @ p}
    p = _t(24, 24)
    c = _compiled(fs[case], {0: 0}, p)
    (out,), shares, (p0,) = _run(c, p)
    assert shares == [False]
    np.testing.assert_allclose(out.numpy(), refs[case](p0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(p.numpy(), p0)


def test_non_contiguous_input_gets_fresh_memory():
    base = _t(8, 12)
    p, g = base[:, ::2], _t(8, 6)
    assert not p.numpy().flags.c_contiguous
    c = _compiled(lambda p, g: p * 0.5 + g, {0: 0}, p, g)
    (out,), shares, (p0, g0) = _run(c, p, g)
    assert shares == [False]
    np.testing.assert_array_equal(out.numpy(), p0 * np.float32(0.5) + g0)


def test_no_donation_without_the_mark():
    p, g = _t(8, 8), _t(8, 8)
    c = _compiled(lambda p, g: p + g, {}, p, g)
    (out,), shares, _ = _run(c, p, g)
    assert shares == [False]


def test_compiled_plain_sgd_writes_parameters_in_place_and_matches_eager():
    """The compiled optimizer step (Note [Writes leave the step graph]) with the inductor:
    plain SGD's parameters are computed in their own memory (the runner hands the kernel
    each parameter's array as its output), bit-equal to eager's step."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3))
    ref = copy.deepcopy(model)
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref))
    step = torch.compile(opt.step)
    arrays = [p.detach().numpy() for p in model.parameters()]
    for k in range(3):
        rng = np.random.default_rng(k)
        for p, q in zip(model.parameters(), ref.parameters()):
            g = rng.standard_normal(p.shape).astype(np.float32)
            p.grad, q.grad = torch.tensor(g), torch.tensor(g.copy())
        step()
        ref_opt.step()
    for p, q, a in zip(model.parameters(), ref.parameters(), arrays):
        assert np.shares_memory(p.detach().numpy(), a)
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    (compiled,) = STEPS[opt].values()
    (run, _), = compiled.cache.values()
    code = run.compiled.kernels.python_code           # each parameter donated
    assert len(set(re.findall(r"buf\d+ = x\d+ if", code))) == 4, code
