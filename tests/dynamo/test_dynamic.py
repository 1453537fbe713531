"""Dynamic shapes in compile: automatic dynamic, dynamic=True/False, mark_dynamic/static,
config switches, shape guards as cache guards. Each case checks results against eager and
the number of compiled graphs; where PyTorch is installed the same program's count under
torch.compile (torch._dynamo.testing.CompileCounter) is checked too."""
import contextlib
import io

import numpy as np
import pytest

import numtorch
import numtorch._dynamo as dynamo
from numtorch._core.symbolic import ConstraintViolationError


@pytest.fixture(autouse=True)
def _reset():
    dynamo.reset()
    yield
    dynamo.reset()


def _inputs(lib, shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s).astype(np.float32)) if isinstance(s, tuple) else s
            for s in shapes]


def _count(lib, f, calls, **kw):
    """Compile ``f`` with a counting backend, call it on each input list; the number of
    graphs compiled and the outputs."""
    n, outs = [0], []

    def backend(gm, example_inputs):
        n[0] += 1
        return gm.forward
    lib._dynamo.reset()
    cf = lib.compile(f, backend=backend, **kw)
    with contextlib.redirect_stdout(io.StringIO()):
        for shapes in calls:
            outs.append(cf(*_inputs(lib, shapes)))
    lib._dynamo.reset()
    return n[0], outs


def _check(src, calls, expected, **kw):
    """numtorch compiles ``expected`` graphs and equals eager; PyTorch agrees on the count."""
    ns = {"torch": numtorch}
    exec(src, ns)
    f = ns["f"]
    count, outs = _count(numtorch, f, calls, **kw)
    for shapes, out in zip(calls, outs):
        with contextlib.redirect_stdout(io.StringIO()):
            ref = f(*_inputs(numtorch, shapes))
        _same(out, ref)
    assert count == expected
    torch = pytest.importorskip("torch")
    tns = {"torch": torch}
    exec(src, tns)
    assert _count(torch, tns["f"], calls, **kw)[0] == expected


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, numtorch.Tensor):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)
    else:
        assert a == b and type(a) is type(b)


ROWS = [[(n, 3)] for n in (4, 5, 6, 7)]


def test_automatic_dynamic_compiles_twice_for_four_sizes():
    _check("def f(x):\n    return (x * 2).sum(0)\n", ROWS, 2)


def test_dynamic_false_recompiles_each_size():
    _check("def f(x):\n    return x * 2\n", ROWS, 4, dynamic=False)


def test_dynamic_true_is_generic_but_sizes_0_and_1_specialise():
    _check("def f(x):\n    return x.sum(0) * 2\n", ROWS + [[(1, 3)]], 2, dynamic=True)


def test_returned_size_is_computed_from_the_input():
    _check("def f(x):\n    return x + 1, x.shape[0] * 2, x.size()\n", ROWS, 2)


def test_a_relation_used_by_python_is_a_cache_guard():
    src = """
def f(x):
    if x.shape[0] > 2:
        return x * 2
    return x - 1
"""
    _check(src, [[(4,)], [(5,)], [(2,)], [(3,)]], 2, dynamic=True)


def test_int_of_a_size_specialises_it():
    src = """
def f(x):
    y = x
    for i in range(x.shape[0]):
        y = y + i
    return y
"""
    _check(src, [[(4,)], [(5,)], [(5,)], [(6,)]], 3, dynamic=True)


def test_duck_sizing_guards_equal_sizes():
    src = "def f(x, y):\n    return x + y\n"
    _check(src, [[(4,), (4,)], [(5,), (5,)], [(4,), (1,)], [(3,), (3,)]], 2, dynamic=True)


def test_shape_guard_text_and_reason_in_words():
    seen = []

    def backend(gm, ex):
        seen.append(gm)
        return gm.forward

    def f(x, y):
        return x + y
    cf = numtorch.compile(f, backend=backend, dynamic=True)
    cf(numtorch.ones(4), numtorch.ones(4))
    assert "s0" in seen[0].code                    # one symbol, shared (duck sizing)
    cf(numtorch.ones(4), numtorch.ones(1))
    from numtorch._dynamo.eval_frame import _CACHES
    (reason,) = [r for c in _CACHES.values() for r in c.recompile_reasons]
    assert "y.size()[0] == x.size()[0]" in reason


def test_mark_dynamic_first_call_symbolic_and_mark_static_wins():
    graphs = []

    def backend(gm, ex):
        graphs.append(gm)
        return gm.forward

    def f(x):
        return x * 2
    cf = numtorch.compile(f, backend=backend)
    x = numtorch.ones(4, 3)
    dynamo.mark_dynamic(x, 0)
    cf(x)
    assert "s0" in graphs[0].code and "3]" in graphs[0].code    # only dim 0 is symbolic
    assert cf(numtorch.ones(9, 3)).shape == (9, 3) and len(graphs) == 1
    dynamo.reset()
    graphs.clear()
    cf = numtorch.compile(f, backend=backend, dynamic=True)
    for n in (4, 5, 6):
        y = numtorch.ones(n, 3)
        dynamo.mark_static(y, 0)
        cf(y)
    assert len(graphs) == 3


def test_mark_dynamic_then_specialising_raises():
    def f(x):
        return x.reshape(int(x.shape[0]) // 2, 2)
    x = numtorch.ones(4)
    dynamo.mark_dynamic(x, 0)
    with pytest.raises(ConstraintViolationError, match="marked dynamic"):
        numtorch.compile(f, backend="eager")(x)


def test_mark_dynamic_bad_input():
    with pytest.raises(TypeError, match="expected a Tensor"):
        dynamo.mark_dynamic([1, 2], 0)
    with pytest.raises(IndexError, match="dimension 2 out of range"):
        dynamo.mark_dynamic(numtorch.ones(3), 2)
    with pytest.raises(TypeError, match="index must be an int"):
        dynamo.mark_static(numtorch.ones(3), "0")


def test_config_switches(monkeypatch):
    src = "def f(x):\n    return x * 2\n"
    monkeypatch.setattr(dynamo.config, "automatic_dynamic_shapes", False)
    ns = {"torch": numtorch}
    exec(src, ns)
    assert _count(numtorch, ns["f"], ROWS)[0] == 4
    monkeypatch.setattr(dynamo.config, "automatic_dynamic_shapes", True)
    monkeypatch.setattr(dynamo.config, "assume_static_by_default", False)
    assert _count(numtorch, ns["f"], ROWS)[0] == 1


def test_dynamic_shapes_with_a_graph_break():
    src = """
def f(x):
    y = x * x.shape[0]
    print("woo")
    return y + x.shape[0]
"""
    _check(src, ROWS, 4)    # two frames (f and its resume function), each static then dynamic


def test_inductor_backend_runs_a_symbolic_graph_per_size():
    def f(x):
        return (torch_relu(x) * x.shape[0]).sum(1)
    cf = numtorch.compile(f, dynamic=True)
    for n in (3, 5, 8):
        x = numtorch.randn(n, 4)
        np.testing.assert_allclose(cf(x).numpy(), f(x).numpy(), rtol=1e-5)


torch_relu = numtorch.relu
