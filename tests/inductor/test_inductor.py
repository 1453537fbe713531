"""The inductor backend on graphs from make_graph: fusion (kernel counts), exactness against
eager, determinism across thread counts, the kernel cache, and the no-compiler fallback.

Skipped, not failed, where there is no C compiler (except the fallback test, which fakes
its absence).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numtorch as torch
import numtorch.nn.functional as F
from numtorch._inductor import build, compile_graph, config
from numtorch.func import make_graph
from numtorch.testing import assert_close

needs_cc = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def compiled(f, *args):
    return compile_graph(make_graph(f)(*args), list(args))


def _chain10(x):
    for k in range(10):
        x = (x * 1.5).sin() if k % 2 else x + 0.25
    return x


FUSED = {   # name: (function, input shapes, kernels)
    "softmax": (lambda x: torch.softmax(x, -1), [(8, 33)], 1),
    "log_softmax": (lambda x: torch.log_softmax(x, -1), [(8, 33)], 1),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (33,), w, b), [(8, 33), (33,), (33,)], 1),
    "chain of 10 pointwise": (_chain10, [(5, 7)], 1),
    "gelu*sigmoid+tanh": (lambda x: F.gelu(x) * torch.sigmoid(x) + x.tanh(), [(6, 9)], 1),
    # reduced dim in the middle: the outer space (3, 4) is not a prefix of (3, 5, 4), so the
    # reductions and the output are two kernels (loop reordering is not built)
    "softmax over a middle dim": (lambda x: torch.softmax(x, 1), [(3, 5, 4)], 2),
    "broadcast and transpose": (lambda x, y: (x.t() * y).exp() + 1, [(4, 3), (4,)], 1),
}


@needs_cc
@pytest.mark.parametrize("name", list(FUSED))
def test_fused_kernel_count_and_value(name):
    f, shapes, kernels = FUSED[name]
    args = [torch.randn(*s) for s in shapes]
    c = compiled(f, *args)
    assert c.kernel_count == kernels, c.source
    assert c.extern_count == 0
    assert_close(c(*args), (f(*args),))
    fresh = [torch.randn(*s) for s in shapes]          # nothing of the example is baked in
    assert_close(c(*fresh), (f(*fresh),))


@needs_cc
def test_matmul_is_an_extern_between_kernels(monkeypatch):
    monkeypatch.setattr(config.cpp, "blas_in_segments", False)   # Note [BLAS calls in segments]
    x = torch.randn(64, 300)      # too large to run in C (Note [Small products in C], gemm.py)
    c = compiled(lambda x: torch.relu(x @ x.t() + 1).sum(-1), x)
    assert c.extern_count == 1 and c.kernel_count == 2
    assert_close(c(x), ((torch.relu(x @ x.t() + 1)).sum(-1),))


@needs_cc
def test_kernels_beside_blas_stay_serial_below_their_threshold(monkeypatch):
    """Note [OpenMP and BLAS threads]: a mid-sized kernel runs parallel alone, but not in a
    graph that also runs a matmul."""
    monkeypatch.setattr(config.cpp, "parallel_threshold", 32768)
    x = torch.randn(256, 256)
    alone = compiled(lambda x: torch.softmax(x, -1), x)
    beside = compiled(lambda x: torch.softmax(x @ x, -1), x)
    assert "_part, b, " in alone.source and "_part, b, " not in beside.source
    assert_close(beside(x), (torch.softmax(x @ x, -1),))


@needs_cc
def test_ieee_specials_match_eager():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e-40, -3.0, 2.5])
    f = lambda x: (x.exp(), x.tanh(), torch.sigmoid(x), x.sign(), torch.maximum(x, x.flip(0)),
                   x.amax(), (x * 0).sum(), torch.sqrt(x), x.floor())
    c = compiled(f, x)
    for a, e in zip(c(x), f(x)):
        a, e = a.numpy(), e.numpy()
        for special in (np.isnan, np.isinf):                # NaN and inf where eager has them
            np.testing.assert_array_equal(special(a), special(e))
        np.testing.assert_array_equal(np.signbit(a[a == 0]), np.signbit(e[a == 0]))  # signed zeros
        np.testing.assert_allclose(a, e, rtol=3e-7)          # libm vs NumPy: within an ulp or two


@needs_cc
def test_output_code_has_source_lines(monkeypatch):
    monkeypatch.setattr(config.cpp, "parallel_threshold", 32768)     # the parallel form
    x = torch.randn(256, 256)
    c = compiled(lambda x: torch.softmax(x, -1), x)
    assert "_part, b, " in c.source and "test_inductor.py" in c.source   # on the pool
    assert "reduce_max" in c.source and "reduce_sum" in c.source
    # Note [Row cache]: exp(x - max) is computed once per element, in the sum loop
    assert c.source.count(" = nt_exp(") == 1 and "row0[" in c.source


@needs_cc
def test_small_kernels_open_no_parallel_region():
    """Below config.cpp.parallel_threshold a kernel is its loops: no chunks, no pool
    (Note [Kernels on the pool])."""
    x = torch.randn(4, 4)
    c = compiled(lambda x: torch.softmax(x, -1), x)
    assert "_part, b, " not in c.source and "#pragma omp simd" in c.source
    assert_close(c(x), (torch.softmax(x, -1),))


@needs_cc
def test_same_bits_at_one_and_two_threads(same_bits_at_one_and_two_threads):
    x, w = torch.randn(512, 1000), torch.randn(1000)
    f = lambda x, w: (torch.softmax(x, -1), F.layer_norm(x, (1000,), w), x.sum(), (x * w).amax(0))
    out = same_bits_at_one_and_two_threads(compiled(f, x, w), x, w)
    assert_close(out, f(x, w), rtol=1e-5, atol=1e-5)


@needs_cc
def test_inputs_of_other_dtypes_and_layouts():
    x = torch.randn(5, 6, dtype=torch.float64).t()                # non-contiguous
    i = torch.arange(30).reshape(6, 5)
    b = i > 10
    f = lambda x, i, b: (torch.where(b, x, -x) * i, (i * 3 - 1) // 1, b.logical_not())
    c = compiled(f, x, i, b)
    assert_close(c(x, i, b), f(x, i, b))


SCRIPT = textwrap.dedent("""
    import sys; sys.path.insert(0, %r)
    import numtorch as torch
    from numtorch._inductor import compile_graph
    from numtorch.func import make_graph
    x = torch.ones(4, 4)
    f = lambda x: (x * 7.125).tanh() + 2       # a source no other test compiles
    c = compile_graph(make_graph(f)(x))
    assert torch.allclose(c(x)[0], f(x)), "wrong result"
    print("ok")
""" % ROOT)


def _compile_in_processes(cache, n):
    env = dict(os.environ, NUMTORCH_CACHE_DIR=str(cache))
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(n)]
    return [p.communicate(timeout=120) for p in procs]


@needs_cc
def test_two_processes_compile_the_same_graph(tmp_path):
    outs = _compile_in_processes(tmp_path, 2)
    assert [o[0].strip() for o in outs] == ["ok", "ok"], outs
    assert len(list(tmp_path.glob("*.so"))) == 1
    assert not list(tmp_path.glob(".tmp-*"))


@needs_cc
@pytest.mark.parametrize("damage", ["truncate", "garbage", "no digest"])
def test_corrupt_cache_entry_is_rebuilt(tmp_path, damage):
    assert _compile_in_processes(tmp_path, 1)[0][0].strip() == "ok"
    (so,) = tmp_path.glob("*.so")
    size = len(so.read_bytes())
    if damage == "truncate":        # as left by a writer killed mid-write
        so.write_bytes(so.read_bytes()[:100])
    elif damage == "garbage":
        so.write_bytes(b"\0" * size)
    else:
        next(tmp_path.glob("*.sha256")).unlink()
    out = _compile_in_processes(tmp_path, 1)
    assert out[0][0].strip() == "ok", out
    assert len(so.read_bytes()) == size and so.read_bytes() != b"\0" * size


def test_without_a_compiler_warns_once_and_runs_numpy_code(monkeypatch):
    monkeypatch.setattr(build, "compiler", lambda: None)
    monkeypatch.setattr(build, "_warned", [])
    x = torch.randn(4, 5)
    with pytest.warns(RuntimeWarning, match="no working C compiler"):
        c = compiled(lambda x: torch.softmax(x, -1), x)
    assert c.kind == "numpy" and "out=" in c.python_code
    assert_close(c(x), (torch.softmax(x, -1),))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # once: the second compile is silent
        compiled(lambda x: x + 1, x)


def test_a_broken_compiler_is_found_once(monkeypatch, tmp_path):
    """A compiler that exists but fails (here /bin/false) is probed once after the first
    failed build; that graph and every later one run as NumPy code, with one warning."""
    false = shutil.which("false")
    if false is None:
        pytest.skip("no `false` program")
    monkeypatch.setenv("NUMTORCH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "compiler", lambda: false)
    monkeypatch.setattr(build, "_warned", [])
    monkeypatch.setattr(build, "_BROKEN", [])
    build.compiler_works.cache_clear()
    try:
        x = torch.randn(3, 4)
        with pytest.warns(RuntimeWarning, match="no working C compiler"):
            c = compiled(lambda x: (x * 2).exp(), x)
        assert c.kind == "numpy" and build._BROKEN
        assert_close(c(x), ((x * 2).exp(),))
        c2 = compiled(lambda x: x.sin(), x)        # no second build attempt
        assert c2.kind == "numpy" and build.compiler_works.cache_info().misses == 1
    finally:
        build.compiler_works.cache_clear()


def test_numpy_code_reuses_buffers_and_is_reentrant():
    """Note [Fused NumPy code]: a pointwise chain writes one buffer in place; the output is
    fresh on every call (never a shared buffer), also when a call is already running."""
    x = torch.randn(5, 7)
    saved, config.cpp.numpy_fallback = config.cpp.numpy_fallback, True
    try:
        c = compiled(_chain10, x)
    finally:
        config.cpp.numpy_fallback = saved
    # 15 nodes: 14 write the one shared buffer, the last a fresh output
    assert c.python_code.count("out=b0") == 14 and c.python_code.count("out=_empty") == 1, \
        c.python_code
    a, b = c(x)[0], c(x)[0]
    assert a.numpy() is not b.numpy() and not np.shares_memory(a.numpy(), b.numpy())
    assert_close(a, _chain10(x))
    assert_close(b, _chain10(x))
    # a call from inside a running call (the shared buffers are busy) gets fresh ones
    c._fn.__globals__["_lock"].acquire()
    try:
        assert_close(c(x)[0], _chain10(x))
    finally:
        c._fn.__globals__["_lock"].release()


def test_bad_graph_argument():
    with pytest.raises(TypeError, match="graph must be a numtorch Graph"):
        compile_graph(lambda x: x, [])


def test_unknown_option():
    g = make_graph(lambda x: x + 1)(torch.ones(2))
    with pytest.raises(ValueError, match="unknown inductor option 'cpp.nope'"):
        compile_graph(g, options={"cpp.nope": 1})


def _write_then_read(x):
    y = x * 2            # inlined into the kernel after the write: it reads x's memory
    x.add_(1)
    return y + x, x * 3


@pytest.mark.parametrize("numpy_code", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_a_written_input_is_read_as_the_graph_says(numpy_code, layout):
    """Note [Writes run last]: the value computed before an in-place write reads the old
    input even when a later kernel recomputes it from the input's memory (before the fix,
    contiguous inputs gave y + x == 3x + 2 instead of 3x + 1)."""
    if not numpy_code and build.compiler() is None:
        pytest.skip("no C compiler")
    base = torch.randn(4, 3)
    x = base.clone() if layout == "contiguous" else base.t().contiguous().t()
    g = make_graph(_write_then_read)(x.clone())
    c = compile_graph(g, options={"cpp.numpy_fallback": numpy_code})
    expected_x = x.clone()
    expected = _write_then_read(expected_x)
    assert_close(c(x), expected)
    assert_close(x, expected_x)             # the write reached the caller's tensor


def _sgd_state():
    gen = np.random.default_rng(0)
    shapes = [(40, 30), (50,), (3, 4, 5), ()]
    return [[torch.tensor(gen.standard_normal(s).astype(np.float32)) for s in shapes]
            for _ in range(2)] + [[torch.zeros(*s) for s in shapes]]


def _sgd_step(params, grads, bufs, lr=0.1, momentum=0.9, weight_decay=0.01):
    """SGD with momentum and weight decay, written as torch.optim.SGD updates in place."""
    for p, g, b in zip(params, grads, bufs):
        g = g + weight_decay * p
        b.mul_(momentum).add_(g)
        p.add_(b, alpha=-lr)


@pytest.mark.parametrize("numpy_code", [False, True])
def test_an_optimizer_step_over_all_parameters_is_one_kernel(numpy_code):
    """Note [Horizontal fusion]: independent updates of parameters of different shapes
    (0-d included) run in one kernel; the writes into parameters and buffers run after it."""
    if not numpy_code and build.compiler() is None:
        pytest.skip("no C compiler")
    g = make_graph(_sgd_step)(*_sgd_state())
    saved = config.cpp.parallel_threshold
    config.cpp.parallel_threshold = 100      # also the parallel form, at these sizes
    try:
        c = compile_graph(g, options={"cpp.numpy_fallback": numpy_code})
    finally:
        config.cpp.parallel_threshold = saved
    if not numpy_code:
        assert c.kernel_count == 1, c.source
        # Note [Kernels on the pool]: a table of chunks of each loop; 0-d values in one
        assert "static const int64_t nt_t[][3]" in c.source and "case 5: {" in c.source
    state, expected = _sgd_state(), _sgd_state()
    for _ in range(3):
        c(*[t for group in state for t in group])
        _sgd_step(*expected)
    for got, want in zip(state, expected):
        assert_close(got, want)


@pytest.mark.parametrize("numpy_code", [False, pytest.param(True, id="numpy_code")])
def test_captured_tensors_are_read_per_call(numpy_code):
    """Note [Captured tensors are read per call]: in-place updates and a new array of the
    same type are seen; a new dtype is an error naming the tensor, not wrong memory."""
    if not numpy_code and build.compiler() is None:
        pytest.skip("no C compiler")
    w = torch.randn(4, 3)
    wt = torch.randn(3, 4).t()                      # a non-contiguous captured tensor
    x = torch.randn(4, 3)
    f = lambda x: torch.sin(x * w) + wt             # noqa: E731
    c = compile_graph(make_graph(f)(x), options={"cpp.numpy_fallback": numpy_code})
    assert len(c.graph.consts) == 2
    assert_close(c(x)[0], f(x))
    w.mul_(2.0)
    wt.add_(1.0)
    assert_close(c(x)[0], f(x))
    w.data = torch.randn(4, 3)
    wt.data = torch.randn(4, 3)
    assert_close(c(x)[0], f(x))
    w.data = torch.randn(4, 3, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="captured tensor c0 .*float32.*float64"):
        c(x)


@needs_cc
@pytest.mark.parametrize("xc,yc", [(1, 0), (1, 1), (0, 0), (0, 1)])
def test_matrix_products_call_matmul_directly(xc, yc, monkeypatch):
    """A dot_general of two matrices run by NumPy (here: small products are not run in C,
    Note [Small products in C]) is one np.matmul with transposes (no general reshaping
    per call), with the values of the primitive's own impl."""
    monkeypatch.setattr(config.cpp, "small_products", False)
    monkeypatch.setattr(config.cpp, "blas_in_segments", False)   # Note [BLAS calls in segments]
    from numtorch._core.primitive import bind
    from numtorch._prims.contraction import dot_general
    a = torch.randn(*((5, 3) if xc == 1 else (3, 5)))
    b = torch.randn(*((3, 4) if yc == 0 else (4, 3)))

    def f(a, b):
        return torch.relu(bind(dot_general, a, b, contracting=((xc,), (yc,)), batch=((), ()))) + 1
    c = compiled(f, a, b)
    assert "_np.matmul(" in c.python_code and c.python_code.count(".T") == (xc == 0) + (yc == 1)
    assert_close(c(a, b)[0], f(a, b), rtol=0, atol=0)


@needs_cc
def test_scalar_chains_run_first_not_per_element():
    """Note [Scalar chains run first]: Adam's bias correction (pow of a 0-d step count, in
    double) is computed once in a kernel of its own, not inside the element loop."""
    def f(x, step):
        s = step.to(torch.float64)
        corr = (1 - 0.999 ** s) ** 0.5
        return x / corr + (step + 1), step + 1
    x, step = torch.randn(64, 33), torch.tensor(3.0)
    c = compiled(f, x, step)
    assert c.kernel_count == 2 and c.extern_count == 0, c.source
    first, rest = c.source.split("NT_KERNEL void kernel1(void *const *b) {")
    assert "pow(" in first and "pow(" not in rest, c.source
    np.testing.assert_array_equal(c(x, step)[0].numpy(), f(x, step)[0].numpy())
    # cheap scalar arithmetic stays inlined: one kernel
    assert compiled(lambda x, a: x * (a + 1), x, step).kernel_count == 1


@needs_cc
def test_constants_inlined_into_kernels_are_not_read_per_call():
    """Scalars a kernel holds as C literals (broadcast arrays, not contiguous) cost the
    per-call path nothing: no read, no copy."""
    x = torch.randn(10)
    c = compiled(lambda x: (x * 2 + 1).sin(), x)
    assert c.graph.consts and "_ct" not in c.python_code and "_const_changed" not in c.python_code
    assert_close(c(x)[0], (x * 2 + 1).sin())
