"""Values read by several segments are stored once (Note [Values read by several
segments], scheduler.py): the cost rule's thresholds, results against NumPy, and an
unrolled update loop (MAML's inner steps in small) whose kernels stop growing with the
number of steps.

Skipped where there is no C compiler.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import numtorch as torch
from numtorch._inductor import build, compile_graph
from numtorch._inductor.scheduler import Computation
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def compiled(f, *args):
    # without the layout rewrites: they would hand the products ``(a + b).t()`` as ``a + b``
    # with renamed dims (Note [Transposes sink to products], layout.py), and these graphs
    # are here for the shared values that the transposed copies make
    return compile_graph(make_graph(f)(*args), list(args), options={"layout_rewrites": False})


def stored_arithmetic(c):
    """Names of the pointwise primitives whose values the kernels store, graph outputs
    and extern operands aside (what the rule added)."""
    outs = {id(v) for v in c.graph.outputs}
    extern_ins = {id(v) for s in c.schedule.externs() for v in s.ins}
    return sorted(comp.node.prim.name for comp in c.schedule.comps.values()
                  if isinstance(comp, Computation) and comp.stored and not comp.is_reduction
                  and comp.node.prim.lower.kind == "pointwise"
                  and id(comp.var) not in outs | extern_ins)


def _args(k, n=6, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, n)) for _ in range(k)]
    return arrays, [torch.from_numpy(a) for a in arrays]


def test_two_input_value_read_in_two_segments_stays_inline():
    """Recomputed: 2 readers x 2 inputs = 4 reads; stored: 2 + 1 write + 2 = 5."""
    (a, b, w), args = _args(3)
    c = compiled(lambda a, b, w: (a + b) * 2 + (a + b).t() @ w, *args)
    assert stored_arithmetic(c) == []
    np.testing.assert_allclose(c(*args)[0].numpy(), (a + b) * 2 + (a + b).T @ w, rtol=1e-12)


def test_three_input_value_read_in_two_segments_is_stored():
    """Recomputed: 2 x 3 = 6 reads; stored: 3 + 1 + 2 = 6: stored (the tie stores)."""
    (a, b, d, w), args = _args(4)
    f = lambda a, b, d, w: (a + b + d) * 2 + (a + b + d).t() @ w
    c = compiled(f, *args)
    assert stored_arithmetic(c) == ["add"]
    np.testing.assert_allclose(c(*args)[0].numpy(), (a + b + d) * 2 + (a + b + d).T @ w, rtol=1e-12)


def test_two_input_value_read_in_three_segments_is_stored():
    (a, b, w), args = _args(3)
    f = lambda a, b, w: (((a + b).t() @ w) * (a + b)) @ w + (a + b) * 2
    c = compiled(f, *args)
    assert stored_arithmetic(c) == ["add"]
    np.testing.assert_allclose(c(*args)[0].numpy(), (((a + b).T @ w) * (a + b)) @ w + (a + b) * 2,
                               rtol=1e-12)


def _descent(steps):
    def f(p, x):
        for _ in range(steps):
            p = p - 0.1 * (x @ p.t())
        return p
    return f


def _buffers_per_kernel(c):
    functions = re.split(r"^NT_KERNEL void ", c.source, flags=re.M)[1:]
    return [len(re.findall(r"\*restrict buf\d+ = b\[", fn)) for fn in functions]


def test_unrolled_updates_do_not_grow_with_the_step_count():
    """p_k = p_(k-1) - lr * (x @ p_(k-1).T): inlined, the kernel of step k read k + 1
    buffers; stored (every other step at worst), no kernel reads more than five."""
    (p, x), args = _args(2, n=8)
    widths = []
    for steps in (4, 8):
        c = compiled(_descent(steps), *args)
        ref = p
        for _ in range(steps):
            ref = ref - 0.1 * (x @ ref.T)
        np.testing.assert_allclose(c(*args)[0].numpy(), ref, rtol=1e-10)
        widths.append(max(_buffers_per_kernel(c)))
        assert "sub" in stored_arithmetic(c)
    assert widths[0] == widths[1] <= 5, widths      # inlined: 6 and 10
