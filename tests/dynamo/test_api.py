"""compile's API and the FAQ's capture examples: explain, fullgraph, disable/disallow/
graph_break/allow_in_graph, CompileProfiler, run, the cache limit, recompile reasons,
modules, backends, logs, transforms meeting compile."""
import logging
import warnings

import operator

import numpy as np

import pytest

import numtorch as torch
import numtorch._dynamo as dynamo
from numtorch._dynamo.utils import CompileProfiler


@pytest.fixture(autouse=True)
def _reset():
    dynamo.reset()
    yield
    dynamo.reset()


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    print("woo")
    if b.sum() < 0:
        b = b * -1
    return x * b


def counting():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append((gm, example_inputs))
        return gm.forward
    return backend, graphs


def test_toy_example_explain(capsys):
    a, b = torch.randn(10), torch.rand(10)       # b.sum() >= 0: the FAQ's path
    e = dynamo.explain(toy_example)(a, b)
    assert capsys.readouterr().out == "woo\n"          # printed once, at run time
    assert (e.graph_count, e.graph_break_count) == (3, 2)
    # the FAQ's figures: b.sum() is a tensor method, which explain does not count
    assert e.ops_per_graph == [[torch.abs, operator.add, operator.truediv], [operator.lt],
                               [operator.mul]]
    assert e.op_count == 5
    r1, r2 = e.break_reasons
    assert "print" in r1.reason and "move the print" in r1.hint
    line = toy_example.__code__.co_firstlineno
    assert r1.user_stack[-1][1:] == (line + 2, "toy_example")
    assert "generic_jump" in r2.reason and "torch.where" in r2.hint
    assert r2.user_stack[-1][1] == line + 3
    assert r2.user_stack[-1][2].startswith("torch_dynamo_resume_in_toy_example")
    text = str(e)
    assert "Graph Count: 3" in text and "Graph Break Count: 2" in text
    assert "Break Reason 1:" in text and "Out Guards:" in text


def test_toy_example_compiled_equals_eager_both_branches(capsys):
    backend, graphs = counting()
    f = torch.compile(toy_example, backend=backend)
    for sign in (1.0, -1.0):
        a, b = torch.randn(10), torch.abs(torch.randn(10)) * sign
        np.testing.assert_allclose(f(a, b).numpy(), toy_example(a, b).numpy(), rtol=1e-6)
    assert capsys.readouterr().out == "woo\n" * 4
    # graph 1 (before print), graph 2 (the condition), then each branch's tail
    assert len(graphs) == 4


def test_fullgraph_raises_at_first_break_with_location():
    f = torch.compile(toy_example, fullgraph=True, backend="eager")
    with pytest.raises(dynamo.Unsupported) as info:
        f(torch.randn(10), torch.randn(10))
    msg = str(info.value)
    assert "print" in msg and f"test_api.py:{toy_example.__code__.co_firstlineno + 2}" in msg


def test_disable_is_a_break_and_runs_eagerly():
    calls = []

    @dynamo.disable
    def helper(x):
        calls.append(torch.compiler.is_compiling())
        return x * 2

    def f(x):
        return helper(x + 1) - 1
    e = dynamo.explain(f)(torch.ones(3))
    assert (e.graph_count, e.graph_break_count) == (2, 1)
    assert "disallowed" in e.break_reasons[0].reason
    out = torch.compile(f, backend="eager")(torch.ones(3))
    assert out.tolist() == [3.0, 3.0, 3.0] and calls == [False, False]


def test_disable_context_runs_compiled_function_eagerly():
    backend, graphs = counting()
    f = torch.compile(lambda x: x + 1, backend=backend)
    with dynamo.disable():
        f(torch.ones(2))
    assert graphs == []
    f(torch.ones(2))
    assert len(graphs) == 1


def test_disallow_in_graph_and_allow_in_graph():
    def f(x):
        return torch.cos(torch.sin(x))
    dynamo.disallow_in_graph(torch.sin)
    try:
        e = dynamo.explain(f)(torch.ones(3))
        assert e.graph_break_count == 1
    finally:
        dynamo.allow_in_graph(torch.sin)
    e = dynamo.explain(f)(torch.ones(3))
    assert (e.graph_count, e.graph_break_count) == (1, 0)


def test_graph_break():
    def f(x):
        y = x + 1
        dynamo.graph_break()
        return y * 2
    e = dynamo.explain(f)(torch.ones(2))
    assert (e.graph_count, e.graph_break_count) == (2, 1)
    assert torch.compile(f, backend="eager")(torch.ones(2)).tolist() == [4.0, 4.0]


def test_allow_in_graph_vmap_faq():
    @torch.compile(backend="eager")
    def f(x):
        return dynamo.allow_in_graph(torch.vmap(torch.sum))(x)
    x = torch.randn(2, 3)
    np.testing.assert_allclose(f(x).numpy(), x.sum(1).numpy(), rtol=1e-6)


def test_grad_and_vmap_inside_compile_faq():
    def wrapper_fn(x):
        return torch.func.grad(lambda x: x.sin().sum())(x)
    x = torch.randn(3, 3, 3)
    e = dynamo.explain(wrapper_fn)(x)
    assert (e.graph_count, e.graph_break_count) == (1, 0)
    np.testing.assert_allclose(torch.compile(wrapper_fn, backend="eager")(x).numpy(),
                               x.cos().numpy(), rtol=1e-6)

    def my_fn(x):
        return torch.vmap(lambda x: x.sum(1))(x)
    np.testing.assert_allclose(torch.compile(my_fn)(x).numpy(), x.sum(2).numpy(), rtol=1e-5)


def test_compiled_function_under_grad_faq():
    @torch.compile(backend="eager")
    def f(x):
        return torch.sin(x).sum()

    def g(x):
        return torch.func.grad(f)(x)
    x = torch.randn(2, 3)
    np.testing.assert_allclose(g(x).numpy(), x.cos().numpy(), rtol=1e-6)
    np.testing.assert_allclose(torch.vmap(torch.func.grad(f))(x).numpy(), x.cos().numpy(),
                               rtol=1e-6)


def test_compiled_backward_through_graph():
    w = torch.randn(3, requires_grad=True)
    f = torch.compile(lambda x: (x * w).sin().sum(), backend="eager")
    x = torch.randn(3)
    f(x).backward()
    np.testing.assert_allclose(w.grad.numpy(), (x * (x * w).detach().cos()).numpy(), rtol=1e-6)


def test_compile_profiler_reports_breaks_and_recompiles():
    def my_model(x, n):
        y = x * n
        print("side")
        return y + 1
    with CompileProfiler() as prof:
        profiler_model = torch.compile(my_model, backend=prof)
        profiler_model(torch.ones(2), 2)
        profiler_model(torch.ones(2), 3)
        report = prof.report()
    assert "Graph Breaks: 2" in report and "print" in report
    assert "Recompilations:" in report and "n == 2" in report


def test_run_uses_existing_entries_only():
    backend, graphs = counting()
    f = torch.compile(lambda x: x * 2, backend=backend)
    f(torch.ones(3))
    frozen = dynamo.run(f)
    assert frozen(torch.ones(3)).tolist() == [2.0] * 3
    assert frozen(torch.ones(5)).tolist() == [2.0] * 5     # new shape: eager, no compile
    assert len(graphs) == 1


def test_recompile_reasons_in_words():
    backend, graphs = counting()

    def f(x):
        return x + 1
    cf = torch.compile(f, backend=backend)
    cf(torch.ones(3))
    cf(torch.ones(4))
    cf(torch.ones(3, dtype=torch.float64))
    cf(torch.ones(3, requires_grad=True))
    from numtorch._dynamo.eval_frame import _CACHES
    reasons = [r for c in _CACHES.values() for r in c.recompile_reasons]
    assert "x.size() == (3,)" in reasons[0]
    assert "x.dtype == torch.float32" in reasons[1]    # checked against the newest entry
    assert "x.dtype == torch.float64" in reasons[2]
    assert len(graphs) == 4
    cf(torch.ones(4))                                       # cache hit, newest first
    assert len(graphs) == 4


def test_guards_on_constants_globals_cells_and_grad_mode():
    backend, graphs = counting()
    scale = [2.0]

    def make():
        k = scale[0]

        def f(x, n):
            return x * n * k * GLOBAL_W
        return f
    global GLOBAL_W
    GLOBAL_W = 1.0
    f = torch.compile(make(), backend=backend)
    x = torch.ones(2)
    assert f(x, 3).tolist() == [6.0, 6.0]
    assert f(x, 3).tolist() == [6.0, 6.0] and len(graphs) == 1
    assert f(x, 4).tolist() == [8.0, 8.0] and len(graphs) == 2       # constant
    GLOBAL_W = 0.5
    assert f(x, 4).tolist() == [4.0, 4.0] and len(graphs) == 3       # global
    scale[0] = 3.0
    g = torch.compile(make(), backend=backend)                        # same code, new cell
    assert g(x, 4).tolist() == [6.0, 6.0] and len(graphs) == 4
    with torch.no_grad():
        f(x, 4)
    assert len(graphs) == 5                                           # grad mode


GLOBAL_W = 1.0


@pytest.mark.parametrize("backend_name", ["counting", "inductor"])
def test_parameters_of_library_modules_are_guarded(backend_name):
    # Note [Captured tensors are guarded]: nn.Linear runs natively inside the capture,
    # so its parameters are captured tensors; replacing one (or its array's dtype) must
    # recompile, a new array of the same type is read at the next call, and an in-place
    # update (what an optimizer does) is seen without recompiling.
    backend, graphs = counting()
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    cm = torch.compile(m, backend=backend if backend_name == "counting" else "inductor")
    x = torch.randn(5, 3)
    captures = []

    def check(inp=x):
        with torch.no_grad():
            got, want = cm(inp), m(inp)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
        captures.append(len(graphs))

    check()
    with torch.no_grad():
        m[2].weight.mul_(-2.0)                                   # in place: same entry
    check()
    m[2].weight.data = torch.full((2, 4), 0.5)                   # a new array, same type
    check()
    m[2].weight = torch.nn.Parameter(torch.full((2, 4), -1.0))   # a new Parameter
    check()
    m.double()                                                   # new arrays, new dtype
    check(x.double())
    if backend_name == "counting":
        assert captures == [1, 1, 1, 2, 3], captures


def test_cache_size_limit_then_eager_with_one_warning():
    backend, graphs = counting()
    f = torch.compile(lambda x, n: x + n, backend=backend)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(12):
            assert f(torch.zeros(1), n).tolist() == [float(n)]
    assert len(graphs) == dynamo.config.cache_size_limit
    limit = [x for x in w if "cache_size_limit" in str(x.message)]
    assert len(limit) == 1 and "n == " in str(limit[0].message)


def test_side_effects_once_and_in_order(capsys):
    log = []
    holder = type("Holder", (), {})()

    def f(x):
        log.append("start")
        holder.value = 1
        y = x * 2
        print("mid", len(log))
        log.append("end")
        return y

    global COUNTER
    out = torch.compile(f, backend="eager")(torch.ones(2))
    assert out.tolist() == [2.0, 2.0]
    assert log == ["start", "end"] and holder.value == 1
    assert capsys.readouterr().out == "mid 1\n"


def test_global_store():
    def f(x):
        global COUNTER
        COUNTER = COUNTER + 1
        return x + COUNTER
    global COUNTER
    COUNTER = 0
    cf = torch.compile(f, backend="eager")
    assert cf(torch.zeros(1)).tolist() == [1.0]
    assert COUNTER == 1


COUNTER = 0


def test_optimized_module_passes_through():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)
            self.drop = torch.nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(self.lin(x)).relu()
    m = Net()
    om = torch.compile(m, backend="eager")
    assert om._orig_mod is m
    assert [p is q for p, q in zip(om.parameters(), m.parameters())] == [True, True]
    assert set(om.state_dict()) == {"_orig_mod.lin.weight", "_orig_mod.lin.bias"}
    om.eval()
    assert not m.training
    x = torch.randn(2, 4)
    np.testing.assert_allclose(om(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    om(x).sum().backward()
    assert m.lin.weight.grad is not None
    m.compile(backend="eager")
    np.testing.assert_allclose(m(x).detach().numpy(), om(x).detach().numpy(), rtol=1e-6)


def test_decorator_forms_and_bad_input():
    @torch.compile
    def a(x):
        return x + 1

    @torch.compile(backend="eager", fullgraph=True)
    def b(x):
        return x + 2
    assert a(torch.zeros(1)).tolist() == [1.0] and b(torch.zeros(1)).tolist() == [2.0]
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        torch.compile(lambda x: x, backend="nope")
    with pytest.raises(TypeError, match="dynamic"):
        torch.compile(lambda x: x, dynamic="yes")
    assert torch.compile(a, disable=True) is a


def test_graph_module_shows_one_node_per_user_call():
    """Note [Ops as the user called them]: softmax is many primitives but one call; a
    tensor method is a call_method; primitives made outside a call keep their own node."""
    backend, graphs = counting()
    torch.compile(lambda x: torch.softmax(x, 0).sum() * 2, backend=backend)(torch.randn(4))
    (gm, _), = graphs
    assert len(gm._graph.nodes) > 3
    assert [(n.op, n.target) for n in gm.graph if n.op.startswith("call")] == [
        ("call_function", torch.softmax), ("call_method", "sum"), ("call_function", operator.mul)]
    assert [n.op for n in gm.graph][0] == "placeholder" and list(gm.graph)[-1].op == "output"


def test_backend_receives_graph_module_and_real_inputs(capsys):
    backend, graphs = counting()
    x = torch.randn(3)
    torch.compile(lambda x: torch.sin(x) * 2, backend=backend)(x)
    (gm, example_inputs), = graphs
    assert example_inputs[0] is x
    ops = [n.target for n in gm.graph if n.op == "call_function"]
    assert ops == [torch.sin, operator.mul]
    assert "prims.sin" in gm.code and "test_api.py" in gm.code
    gm.print_readable()
    assert "def " in capsys.readouterr().out
    assert "eager" in dynamo.list_backends()

    @dynamo.register_backend
    def my_backend(gm, example_inputs):
        return gm.forward
    assert "my_backend" in dynamo.list_backends()
    assert torch.compile(lambda x: x * 3, backend="my_backend")(torch.ones(1)).tolist() == [3.0]


def test_logs_topics(caplog):
    torch._logging.set_logs(graph_code=True, recompiles=True)
    try:
        with caplog.at_level(logging.DEBUG, logger="numtorch._dynamo"):
            f = torch.compile(lambda x: x.exp(), backend="eager")
            f(torch.ones(2))
            f(torch.ones(3))
        text = caplog.text
        assert "prims.exp" in text and "Recompiling" in text
    finally:
        torch._logging.set_logs(graph_code=False, recompiles=False)
    with pytest.raises(ValueError, match="unknown topic"):
        torch._logging.set_logs(nope=True)


def test_compile_times_and_version_check(monkeypatch):
    torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1))
    assert "capture" in dynamo.utils.compile_times()
    from numtorch._dynamo import bytecode
    monkeypatch.setattr(bytecode, "SUPPORTED", ((3, 99),))
    with pytest.raises(RuntimeError, match="supports Python 3.99; this is Python 3."):
        torch.compile(lambda x: x + 2, backend="eager")(torch.ones(1))


def test_transforms_of_an_inductor_compiled_function_equal_eager():
    # The default backend's kernels take concrete arrays; under grad/vmap and with inputs
    # that require grad the graph runs as its region (Note [Kernels see concrete inputs only]).
    import shutil
    if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
        pytest.skip("no C compiler")
    from numtorch.func import grad, vmap
    from numtorch.testing import assert_close
    f = lambda z: (z.sin() * z).sum()
    cf = torch.compile(f)
    x = torch.randn(4, 5, dtype=torch.float64)
    assert_close(cf(x), f(x))
    assert_close(vmap(grad(cf))(x), vmap(grad(f))(x))
    assert_close(grad(cf)(x[0]), x[0].cos() * x[0] + x[0].sin())
    w = x.clone().requires_grad_()
    cf(w).backward()
    assert_close(w.grad, x.cos() * x + x.sin())


def test_call_operands_decode_both_layouts_of_3_11_call():
    from numtorch._dynamo.values import NULL, call_operands
    f, obj = len, object()
    assert call_operands(NULL, f, [1]) == (f, [1])            # PUSH_NULL; LOAD_GLOBAL f
    assert call_operands(f, NULL, [1]) == (f, [1])
    assert call_operands(f, obj, [1, 2]) == (f, [obj, 1, 2])  # LOAD_METHOD: [meth, self]


@pytest.mark.parametrize("call, exc, message", [
    (lambda: torch.compile(3), TypeError, "compile: expected a .*function.*, got int"),
    (lambda: torch.compile(lambda x: x, mode="fastest"), ValueError, "unknown mode 'fastest'"),
    (lambda: torch.compile(lambda x: x, mode="default", options={}), RuntimeError,
     "Either mode or options"),
    (lambda: torch.compile(lambda x: x, options=[1]), TypeError, "options must be a dict, got list"),
    (lambda: torch.compile(lambda x: x, backend=3)(torch.ones(2)), TypeError,
     "backend must be a string or a callable, got int"),
    (lambda: dynamo.disable(3), TypeError, "disable expects a callable, got int"),
    (lambda: dynamo.register_backend(3), TypeError, "register_backend expects a callable, got int"),
    (lambda: dynamo.allow_in_graph(3), TypeError, "allow_in_graph expects a callable, got int"),
    (lambda: dynamo.disallow_in_graph("f"), TypeError, "disallow_in_graph expects a callable, got str"),
    (lambda: dynamo.run(), TypeError, "run expects a compiled function"),
])
def test_api_misuse_names_the_argument_and_what_was_expected(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


def test_inductor_config_trace_enabled_writes_the_debug_folder(monkeypatch, tmp_path):
    """The FAQ's ``torch._inductor.config.trace.*`` and ``triton.cudagraphs`` lines run:
    ``trace.enabled`` does what NUMTORCH_COMPILE_DEBUG=1 does; cudagraphs is accepted."""
    monkeypatch.delenv("NUMTORCH_COMPILE_DEBUG", raising=False)
    monkeypatch.setenv("NUMTORCH_COMPILE_DEBUG_DIR", str(tmp_path))
    torch._inductor.config.triton.cudagraphs = False
    monkeypatch.setattr(torch._inductor.config.trace, "enabled", False)
    torch.compile(lambda x: x.sin() + 1, backend="eager")(torch.ones(3))
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(torch._inductor.config.trace, "enabled", True)
    torch.compile(lambda x: x.cos() + 1, backend="eager")(torch.ones(3))
    (run_dir,) = list(tmp_path.iterdir())
    (frame,) = list(run_dir.iterdir())
    assert "prims.cos" in (frame / "graph.py").read_text()


def test_compile_debug_writes_each_stage(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("NUMTORCH_COMPILE_DEBUG", "1")
    monkeypatch.setenv("NUMTORCH_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.compile(toy_example, backend="eager")(torch.ones(4), torch.ones(4))
    (run_dir,) = list(tmp_path.iterdir())
    frames = sorted(p.name for p in run_dir.iterdir())
    assert len(frames) == 3 and frames[0].endswith("toy_example")   # the frame + 2 resumes
    first = run_dir / frames[0]
    assert "prims.abs" in (first / "graph.py").read_text()
    assert "def ___guard" in (first / "guards.py").read_text()
    assert "print" in (first / "breaks.txt").read_text()
    assert "RESUME" in (first / "bytecode.txt").read_text()
    assert "___graph(" in (first / "run.py").read_text()
